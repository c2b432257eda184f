#!/usr/bin/env bash
# Creates the seed JobSet workload (jobset.yaml beside this script) in a real
# cluster, together with what the JobSet controller, the Job controller, the
# scheduler and the kubelet would have made of it once running: the headless
# Service, one Job per replicated-Job replica, their pods (bound to fake nodes
# node-1, node-2, ...), and the status of every object. Meant for the testbed
# (integration_tests/testbed/testbed.sh), where none of those controllers
# run, so nothing here changes by itself afterwards.
#
#   create-demo.sh [--namespace NS] [--name NAME] [--replace] [--pods-not-ready]
#                  [--no-webhook-defaults] [--scheduler-name NAME]
#
#   --namespace NS     namespace (default: default); must exist
#   --name NAME        JobSet name (default: demo); Jobs are NAME-<role>-<i>,
#                      pods NAME-<role>-<i>-<completion index>-<5 chars>
#   --replace          delete an existing workload of that name first
#                      (delete-demo.sh); without it, an existing JobSet is an
#                      error
#   --pods-not-ready   pods Running but not Ready (containers started, not
#                      ready); Job status ready 0, JobSet ready 0 per role.
#                      Flip pods later with set-pod-ready.sh.
#   --no-webhook-defaults
#                      create the JobSet exactly as in jobset.yaml; by default
#                      it gets what the JobSet mutating webhook adds on create
#                      (successPolicy All, startupPolicy AnyOrder,
#                      completionMode Indexed, network.enableDNSHostnames and
#                      publishNotReadyAddresses true)
#   --scheduler-name NAME
#                      the pod templates' (and so the pods') schedulerName
#
# kubectl: $KUBECTL, else $WM_TESTBED_BIN/kubectl, else PATH; KUBECONFIG is honoured
# (source the testbed's DIR/env). Needs jq.
#
# What matches the real controllers (JobSet v0.12 / main, whose CRD the
# testbed installs; Kubernetes 1.36):
#  - Jobs: JobSet labels and the same keys as annotations (jobset-name,
#    jobset-uid, replicatedjob-name, replicatedjob-replicas, global-replicas,
#    job-index, job-global-index, job-key = sha1("<ns>/<job>"),
#    restart-attempt, group-name, group-replicas, job-group-index), the
#    same on the pod template, subdomain = NAME when DNS hostnames are on,
#    suspend false, controller ownerReference to the JobSet. The apiserver
#    generates the selector and the controller-uid / job-name template labels.
#  - Pods: generateName <job>-<index>-, the template's labels and annotations
#    plus batch.kubernetes.io/job-completion-index (label and annotation) and
#    jobset.sigs.k8s.io/priority (the JobSet pod webhook's label),
#    hostname <job>-<index>, JOB_COMPLETION_INDEX env, the
#    batch.kubernetes.io/job-tracking finalizer, controller ownerReference to
#    the Job, nodeName; status as a kubelet reports a running container.
#  - Job status: active, ready, terminating 0, startTime,
#    uncountedTerminatedPods. JobSet status: restarts 0, replicatedJobsStatus
#    per role, no conditions (a running, never-suspended AnyOrder JobSet has
#    none).
# Because the pods are bound to a node and carry the job-tracking finalizer,
# a plain `kubectl delete pod` leaves them Terminating (no kubelet, no Job
# controller): delete-demo.sh removes the finalizer and force-deletes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

usage() { sed -n '10,32p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
ns=default name=demo replace=0 ready=true webhook=1 scheduler=""
while (($#)); do
  case "$1" in
    --namespace|-n) ns="${2:?--namespace needs a value}"; shift 2 ;;
    --name) name="${2:?--name needs a value}"; shift 2 ;;
    --replace) replace=1; shift ;;
    --pods-not-ready) ready=false; shift ;;
    --no-webhook-defaults) webhook=0; shift ;;
    --scheduler-name) scheduler="${2:?--scheduler-name needs a value}"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "create-demo.sh: unknown argument $1" >&2; usage ;;
  esac
done

# kubectl: $KUBECTL, else the testbed's (same version as its apiserver), else PATH's.
if [[ -n "${KUBECTL:-}" ]]; then kubectl_bin="$KUBECTL"
elif [[ -n "${WM_TESTBED_BIN:-}" && -x "$WM_TESTBED_BIN/kubectl" ]]; then kubectl_bin="$WM_TESTBED_BIN/kubectl"
elif command -v kubectl >/dev/null; then kubectl_bin=kubectl
else echo "create-demo.sh: no kubectl (set KUBECTL or WM_TESTBED_BIN, or put it on PATH)" >&2; exit 1
fi
command -v jq >/dev/null || { echo "create-demo.sh: needs jq" >&2; exit 1; }
k() { "$kubectl_bin" -n "$ns" "$@"; }

if ((replace)); then
  "$here/delete-demo.sh" --namespace "$ns" --name "$name"
fi

hex() { openssl rand -hex "$1" 2>/dev/null || head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# --- JobSet --------------------------------------------------------------
# (YAML to JSON, offline; no -n: jobset.yaml names its own namespace.)
manifest="$("$kubectl_bin" create --dry-run=client --validate=false -o json -f "$here/jobset.yaml" |
  jq --arg ns "$ns" --arg name "$name" --argjson webhook "$webhook" --arg scheduler "$scheduler" '
    .metadata.name = $name | .metadata.namespace = $ns |
    if $scheduler != "" then
      .spec.replicatedJobs |= map(.template.spec.template.spec.schedulerName = $scheduler)
    else . end |
    if $webhook == 1 then
      .spec.successPolicy //= {operator: "All"} |
      .spec.startupPolicy //= {startupPolicyOrder: "AnyOrder"} |
      .spec.network //= {} |
      .spec.network.enableDNSHostnames //= true |
      .spec.network.publishNotReadyAddresses //= true |
      .spec.replicatedJobs |= map(
        .template.spec.completionMode //= "Indexed" |
        .template.spec.template.spec.restartPolicy //= "OnFailure")
    else . end')"
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
if ! js="$(k create -o json -f - <<<"$manifest" 2>"$errors")"; then
  echo "create-demo.sh: creating JobSet $ns/$name failed: $(cat "$errors")" >&2
  grep -q AlreadyExists "$errors" && echo "create-demo.sh: use --replace, or delete-demo.sh first" >&2
  exit 1
fi
js_uid="$(jq -r .metadata.uid <<<"$js")"
owner_js="$(jq -c '[{apiVersion, kind, name: .metadata.name, uid: .metadata.uid,
  controller: true, blockOwnerDeletion: true}]' <<<"$js")"
dns="$(jq -r '.spec.network.enableDNSHostnames // false' <<<"$js")"
subdomain="$(jq -r --arg n "$name" '.spec.network.subdomain // $n' <<<"$js")"
created=("jobset/$name (uid $js_uid)")

# --- headless Service (the JobSet controller creates it for DNS hostnames)
if [[ "$dns" == true ]]; then
  jq -n --arg ns "$ns" --arg svc "$subdomain" --arg js "$name" --argjson owner "$owner_js" \
    --argjson pna "$(jq '.spec.network.publishNotReadyAddresses // true' <<<"$js")" '{
      apiVersion: "v1", kind: "Service",
      metadata: {name: $svc, namespace: $ns, ownerReferences: $owner},
      spec: {clusterIP: "None", selector: {"jobset.sigs.k8s.io/jobset-name": $js},
             publishNotReadyAddresses: $pna}}' | k create -f - >/dev/null
  created+=("service/$subdomain (headless)")
fi

# --- Jobs and pods -------------------------------------------------------
node=0
roles_status='[]'
mapfile -t roles < <(jq -r '.spec.replicatedJobs[].name' <<<"$js")
for role in "${roles[@]}"; do
  rjob="$(jq -c --arg r "$role" '.spec.replicatedJobs[] | select(.name == $r)' <<<"$js")"
  replicas="$(jq '.replicas // 1' <<<"$rjob")"
  # Pods per Job: parallelism capped by completions (both default to 1).
  pods_per_job="$(jq '[.template.spec.parallelism // 1, .template.spec.completions // (.template.spec.parallelism // 1)] | min' <<<"$rjob")"
  indexed="$(jq -r '(.template.spec.completionMode // "NonIndexed") == "Indexed"' <<<"$rjob")"
  ready_jobs=0
  for ((i = 0; i < replicas; i++)); do
    job="$name-$role-$i"
    jobset_labels="$(jq -n --argjson js "$js" --arg r "$role" --argjson i "$i" \
      --arg key "$(printf '%s' "$ns/$job" | sha1sum | cut -d' ' -f1)" '
      $js.spec.replicatedJobs as $rjobs |
      ($rjobs[] | select(.name == $r)) as $rj |
      ($rj.groupName // "default") as $g |
      ([$rjobs[] | select((.groupName // "default") == $g)]) as $grjobs |
      # Index of this Job among all Jobs (of its group), in spec order.
      def index_in(l): ([l[] | .name] | index($r)) as $k |
        ([l[0:$k][] | .replicas // 1] | add // 0) + $i;
      {
        "jobset.sigs.k8s.io/jobset-name": $js.metadata.name,
        "jobset.sigs.k8s.io/jobset-uid": $js.metadata.uid,
        "jobset.sigs.k8s.io/replicatedjob-name": $r,
        "jobset.sigs.k8s.io/restart-attempt": "\($js.status.restarts // 0)",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "\($rj.replicas // 1)",
        "jobset.sigs.k8s.io/global-replicas": "\([$rjobs[] | .replicas // 1] | add)",
        "jobset.sigs.k8s.io/job-index": "\($i)",
        "jobset.sigs.k8s.io/job-key": $key,
        "jobset.sigs.k8s.io/job-global-index": "\(index_in($rjobs))",
        "jobset.sigs.k8s.io/group-name": $g,
        "jobset.sigs.k8s.io/group-replicas": "\([$grjobs[] | .replicas // 1] | add)",
        "jobset.sigs.k8s.io/job-group-index": "\(index_in($grjobs))"}')"
    job_obj="$(jq -n --argjson r "$rjob" --arg ns "$ns" --arg job "$job" --argjson l "$jobset_labels" \
      --argjson owner "$owner_js" --arg dns "$dns" --arg sub "$subdomain" '{
        apiVersion: "batch/v1", kind: "Job",
        metadata: {name: $job, namespace: $ns,
          labels: (($r.template.metadata.labels // {}) + $l),
          annotations: (($r.template.metadata.annotations // {}) + $l),
          ownerReferences: $owner},
        spec: ($r.template.spec + {suspend: false}
          | .template.metadata.labels = ((.template.metadata.labels // {}) + $l)
          | .template.metadata.annotations = ((.template.metadata.annotations // {}) + $l)
          | if $dns == "true" then .template.spec.subdomain = $sub else . end)}' |
      k create -o json -f -)"
    job_uid="$(jq -r .metadata.uid <<<"$job_obj")"
    owner_job="$(jq -c '[{apiVersion, kind, name: .metadata.name, uid: .metadata.uid,
      controller: true, blockOwnerDeletion: true}]' <<<"$job_obj")"
    pods=()
    for ((ci = 0; ci < pods_per_job; ci++)); do
      node=$((node + 1))
      pod="$(jq -n --argjson j "$job_obj" --arg ci "$ci" --arg node "node-$node" \
        --argjson owner "$owner_job" --arg indexed "$indexed" '
        # + the priority label the JobSet pod webhook adds (the Priority
        # admission plugin sets spec.priority 0 without a priorityClassName).
        (($j.spec.template.metadata.labels // {}) +
         {"jobset.sigs.k8s.io/priority": "\($j.spec.template.spec.priority // 0)"}) as $l |
        ($j.spec.template.metadata.annotations // {}) as $a |
        {apiVersion: "v1", kind: "Pod",
         metadata: {namespace: $j.metadata.namespace,
           finalizers: ["batch.kubernetes.io/job-tracking"],
           ownerReferences: $owner},
         spec: ($j.spec.template.spec + {nodeName: $node})}
        | if $indexed == "true" then
            .metadata.generateName = "\($j.metadata.name)-\($ci)-"
            | .metadata.labels = ($l + {"batch.kubernetes.io/job-completion-index": $ci})
            | .metadata.annotations = ($a + {"batch.kubernetes.io/job-completion-index": $ci})
            | .spec.hostname = "\($j.metadata.name)-\($ci)"
            | .spec.containers |= map(.env = ((.env // []) + [{name: "JOB_COMPLETION_INDEX",
                valueFrom: {fieldRef: {fieldPath: "metadata.annotations['\''batch.kubernetes.io/job-completion-index'\'']"}}}]))
          else
            .metadata.generateName = "\($j.metadata.name)-"
            | .metadata.labels = $l | .metadata.annotations = $a
          end' | k create -o json -f -)"
      pod_name="$(jq -r .metadata.name <<<"$pod")"
      # Kubelet: started it at creation, reports it running now.
      status="$(jq -n --argjson p "$pod" --arg now "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg ready "$ready" \
        --arg hostip "10.0.1.$node" --arg podip "10.244.$node.10" --arg cid "$(hex 32)" '
        ($ready == "true") as $r |
        (if $r then {status: "True"} else {status: "False", reason: "ContainersNotReady",
          message: "containers with unready status: [\([$p.spec.containers[].name] | join(" "))]"} end) as $rc |
        $p.metadata.generation as $g |
        {status: {
          observedGeneration: $g,
          phase: "Running",
          conditions: [
            {type: "PodReadyToStartContainers", status: "True"},
            {type: "Initialized", status: "True"},
            ({type: "Ready"} + $rc),
            ({type: "ContainersReady"} + $rc),
            {type: "PodScheduled", status: "True"}]
            | map({type, observedGeneration: $g, lastProbeTime: null, lastTransitionTime: $now} + .),
          hostIP: $hostip, hostIPs: [{ip: $hostip}],
          podIP: $podip, podIPs: [{ip: $podip}],
          startTime: $p.metadata.creationTimestamp,
          containerStatuses: [$p.spec.containers | to_entries[] | {
            name: .value.name, image: .value.image,
            imageID: "\(.value.image | sub(":[^:/]*$"; ""))@sha256:\("0" * 64)",
            containerID: "containerd://\($cid[0:62])\(.key)\(.key)",
            ready: $r, started: true, restartCount: 0,
            state: {running: {startedAt: $now}}, lastState: {}}]}}')"
      k patch pod "$pod_name" --subresource=status --type=merge -p "$status" >/dev/null
      pods+=("$pod_name@node-$node")
    done
    ready_pods=$([[ "$ready" == true ]] && echo "$pods_per_job" || echo 0)
    # Job controller: startTime when it first synced the Job (its creation).
    k patch job "$job" --subresource=status --type=merge -p "$(jq -n --argjson a "$pods_per_job" \
      --argjson r "$ready_pods" --arg start "$(jq -r .metadata.creationTimestamp <<<"$job_obj")" '
      {status: {active: $a, ready: $r, terminating: 0, startTime: $start,
        uncountedTerminatedPods: {}}}')" >/dev/null
    ((ready_pods >= pods_per_job)) && ready_jobs=$((ready_jobs + 1))
    created+=("job/$job (uid $job_uid, active $pods_per_job, ready $ready_pods): pods ${pods[*]}")
  done
  roles_status="$(jq -c --arg r "$role" --argjson reps "$replicas" --argjson rd "$ready_jobs" \
    '. + [{name: $r, ready: $rd, succeeded: 0, failed: 0, active: $reps, suspended: 0}]' <<<"$roles_status")"
done

k patch jobset "$name" --subresource=status --type=merge -p "$(jq -n --argjson s "$roles_status" \
  '{status: {restarts: 0, restartsCountTowardsMax: 0, replicatedJobsStatus: $s}}')" >/dev/null
created+=("jobset status: $(jq -r 'map("\(.name) ready \(.ready)/active \(.active)") | join(", ")' <<<"$roles_status")")

echo "create-demo.sh: created in namespace $ns (pods Ready: $ready):"
printf '  %s\n' "${created[@]}"
