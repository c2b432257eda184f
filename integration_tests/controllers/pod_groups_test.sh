#!/usr/bin/env bash
# The PodGroup role end to end, on the testbed's real apiserver with the
# schedulers' real PodGroup CRDs: KAI Scheduler's and Volcano's from
# WM_CRDS_DIR (which the testbed installs), the scheduler-plugins
# coscheduling one from its Go module through the Go module proxy
# (install_coscheduling_crd in lib.sh names the version and commit). The
# garbage collector is the real one (kube-controller-manager with only that
# controller, started for this test: testbed.sh start-gc).
#
# One leader-elected daemon writes the PodGroups of three seed JobSets, one
# per scheduler name; for each:
#  1. the PodGroup appears with the name, minMember, subgroups, topology,
#     queue and owner reference that GetGangInstructions answers (field by
#     field), and every pod carries the scheduler's membership marks;
#  2. nothing is written again while nothing changes, nor by a new leader
#     (the resourceVersions stay);
#  3. scaled up, the PodGroup follows;
#  4. deleted, the workload's PodGroup goes (its owner reference, the
#     garbage collector);
#  5. with the daemon's mutating webhook for pods (called by the apiserver
#     over HTTPS), a new workload's pods are created in their group: the
#     marks come with the create, and the daemon never patches them.
# And for KAI, with an MPIJob (kubeflow.org/v2beta1, from our catalog's case;
# mpi-operator's CRD from WM_CRDS_DIR), whose gang counts subgroups:
#  6. an older KAI's PodGroup CRD (without minSubGroup, as a KAI from early
#     2026 serves it) replaces the served one: the running daemon reads the
#     new schema and writes minMember instead of minSubGroup, to the
#     PodGroup it wrote before and to a new workload's; with the real CRD
#     back, minSubGroup again. The CRD is restored at the end (and on exit).
#
#   pod_groups_test.sh TESTBED_DIR BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
grpcurl=$("$repo/scripts/build-grpcurl")
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
source_testbed "$testbed"
work=$(mktemp -d /tmp/wm-pod-groups.XXXXXX)
ns=pod-groups-$RANDOM

cleanup() {
  stop_daemons
  kubectl delete mutatingwebhookconfiguration "$ns" --ignore-not-found >/dev/null 2>&1 || true
  delete_demos "$ns" kai-demo volcano-demo cosched-demo kai-late volcano-late cosched-late kai-skip
  ((kai_crd_changed == 0)) || restore_kai_crd ||
    echo "pod_groups_test: could not restore the KAI PodGroup CRD (saved in $work/kai-crd.json)" >&2
  delete_mpijobs
  "$repo/integration_tests/testbed/testbed.sh" stop-gc "$testbed" || true
  delete_namespace "$ns"
  rm -rf "$work"
}
trap cleanup EXIT
# Part 6 changes the testbed's KAI PodGroup CRD: cleanup puts it back.
kai_crd_changed=0
kai_crd=podgroups.scheduling.run.ai
restore_kai_crd() {  # the served KAI CRD's spec as saved in $work/kai-crd.json
  jq '[{op: "replace", path: "/spec", value: .spec}]' "$work/kai-crd.json" >"$work/kai-crd-patch.json" &&
    kubectl patch crd "$kai_crd" --type=json --patch-file "$work/kai-crd-patch.json" >/dev/null &&
    kubectl wait --for=condition=Established --timeout=60s "crd/$kai_crd" >/dev/null &&
    kai_crd_changed=0
}
mpijobs=() mpi_pod_groups=()
delete_mpijobs() {  # the MPIJobs of part 6, their Jobs, pods and PodGroups
  local name
  for name in "${mpijobs[@]}"; do
    kubectl -n "$ns" delete --wait=false --ignore-not-found "mpijobs.kubeflow.org/$name" "jobs/$name-launcher" \
      >/dev/null 2>&1 || true
    kubectl -n "$ns" delete pods --wait=false -l "training.kubeflow.org/job-name=$name" >/dev/null 2>&1 || true
  done
  for name in "${mpi_pod_groups[@]}"; do
    kubectl -n "$ns" delete --wait=false --ignore-not-found "$kai_crd/$name" >/dev/null 2>&1 || true
  done
}

# --- the schedulers' CRDs -----------------------------------------------------
schedulers=()
need_crd() {  # need_crd NAME SCHEDULER WHAT: the CRD is served, else skip (fail in CI)
  if kubectl get crd "$1" >/dev/null 2>&1; then
    schedulers+=("$2")
  elif [[ "${CI:-}" == true ]]; then
    fail "the testbed does not serve $1 ($3): WM_CRDS_DIR must hold it in CI"
  else
    echo "SKIPPED pod_groups_test $2: the testbed does not serve $1 ($3; set WM_CRDS_DIR)"
  fi
}
need_crd podgroups.scheduling.run.ai kai "KAI Scheduler's PodGroup CRD"
need_crd podgroups.scheduling.volcano.sh volcano "Volcano's PodGroup CRD"
install_coscheduling_crd "$work"
schedulers+=(cosched)

declare -A scheduler_name=([kai]=kai-scheduler [volcano]=volcano [cosched]=scheduler-plugins-scheduler)
declare -A resource=([kai]=podgroups.scheduling.run.ai [volcano]=podgroups.scheduling.volcano.sh
  [cosched]=podgroups.scheduling.x-k8s.io)

"$repo/integration_tests/testbed/testbed.sh" start-gc "$testbed"
kubectl create namespace "$ns" >/dev/null
for s in "${schedulers[@]}"; do
  "$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" --name "$s-demo" \
    --scheduler-name "${scheduler_name[$s]}" >/dev/null
done
# Our JobSet definition has no topology: KAI's is then the top owner's
# annotations'. And a JobSet that tells KAI's pod-grouper to skip it.
kubectl -n "$ns" annotate jobset kai-demo kai.scheduler/topology=rack-topology \
  kai.scheduler/topology-required-placement=rack >/dev/null
"$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" --name kai-skip \
  --scheduler-name kai-scheduler >/dev/null
kubectl -n "$ns" annotate jobset kai-skip kai.scheduler/skip-podgrouper=true >/dev/null

# The webhook's CA and serving certificate for 127.0.0.1.
make_test_ca "$work"
make_serving_cert "$work" 7

port=$(free_port)
hook_port=$(free_port)
daemon_args=(--kubeconfig "$KUBECONFIG" --namespace "$ns" --listen "127.0.0.1:$port"
  --webhook-address "127.0.0.1:$hook_port" --webhook-tls-cert "$work/tls.crt"
  --webhook-tls-key "$work/tls.key"
  --leader-elect --leader-election-namespace "$ns" --leader-election-lease-duration 4s
  --leader-election-renew-deadline 3s --leader-election-retry-period 500ms --no-karta-operator
  --kai-pod-groups kai-scheduler --kai-pod-groups-for-native-kinds --volcano-pod-groups volcano
  --coscheduling-pod-groups scheduler-plugins-scheduler)
start_daemon "$work/daemon-1.log" "${daemon_args[@]}"

gang() {  # gang NAME: GetGangInstructions of the JobSet NAME
  "$grpcurl" -plaintext -d "{\"workload\": {\"namespace\": \"$ns\", \"kind\": \"JobSet\", \"name\": \"$1\"}}" \
    "127.0.0.1:$port" workloadmap.v1.WorkloadMap/GetGangInstructions
}
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds (at the end, its
# last say shown).
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { tail -n 20 "$work"/daemon-*.log; "$@" || true; fail "timed out: $what"; }
    sleep 0.3
  done
}
pod_group() { kubectl -n "$ns" get "${resource[$1]}" "$2" -o json; }

# The PodGroup's counts against the gang's, as each scheduler spells them.
check_pod_group() {  # check_pod_group SCHEDULER JOBSET
  local s=$1 js=$2 answer group pg expected uid
  answer=$(gang "$js")
  group=$(jq -c '.gang.pod_groups[0]' <<<"$answer")
  pg=$(pod_group "$s" "$(jq -r .name <<<"$group")")
  uid=$(kubectl -n "$ns" get jobset "$js" -o jsonpath='{.metadata.uid}')
  jq -e --arg uid "$uid" --arg js "$js" \
    '.metadata.ownerReferences == [{apiVersion: "jobset.x-k8s.io/v1alpha2", kind: "JobSet", name: $js, uid: $uid}]' \
    <<<"$pg" >/dev/null || fail "$s PodGroup's owner reference: $(jq -c .metadata.ownerReferences <<<"$pg")"
  case $s in
    kai)
      expected=$(jq -c '{
        minMember: .min_member, minSubGroup: .min_sub_group, queue: .queue,
        subGroups: [(.sub_groups // [])[] | {name, parent, minMember: .min_member, minSubGroup: .min_sub_group}],
        topology: (.topology.topology // null),
        required: (.topology.required_topology_level // null)}' <<<"$group")
      actual=$(jq -c '.spec | {
        minMember, minSubGroup, queue,
        subGroups: [(.subGroups // [])[] | {name, parent, minMember, minSubGroup}],
        topology: (.topologyConstraint.topology // null),
        required: (.topologyConstraint.requiredTopologyLevel // null)}' <<<"$pg")
      jq -e --arg js "$js" --arg uid "$uid" '.metadata.annotations["kai.scheduler/top-owner-metadata"] ==
        "name: \($js)\nuid: \($uid)\ngroup: jobset.x-k8s.io\nversion: v1alpha2\nkind: JobSet\n"' \
        <<<"$pg" >/dev/null || fail "kai top-owner-metadata: $(jq -c .metadata.annotations <<<"$pg")"
      jq -e '.spec.priorityClassName == "train"' <<<"$pg" >/dev/null || fail "kai priority class"
      ;;
    volcano | cosched)
      expected=$(jq -c '{minMember: .min_member}' <<<"$group")
      actual=$(jq -c '{minMember: .spec.minMember}' <<<"$pg")
      ;;
  esac
  [[ "$actual" == "$expected" ]] || fail "$s PodGroup $actual, GetGangInstructions $expected"
  # Every pod of the gang in its group, as the scheduler reads it.
  while IFS=$'\t' read -r pod group_name sub_group; do
    marks=$(kubectl -n "$ns" get pod "$pod" -o json)
    case $s in
      kai) jq -e --arg g "$group_name" --arg sg "$sub_group" '.metadata.annotations["pod-group-name"] == $g and
             ($sg == "" or .metadata.labels["kai.scheduler/subgroup-name"] == $sg)' <<<"$marks" >/dev/null ;;
      volcano) jq -e --arg g "$group_name" '.metadata.annotations["scheduling.k8s.io/group-name"] == $g' <<<"$marks" >/dev/null ;;
      cosched) jq -e --arg g "$group_name" '.metadata.labels["scheduling.x-k8s.io/pod-group"] == $g' <<<"$marks" >/dev/null ;;
    esac || fail "$s pod $pod is not in $group_name/$sub_group: $(jq -c '.metadata | {labels, annotations}' <<<"$marks")"
  done < <(jq -r '.gang.assignments[] | [.pod, .pod_group, (.sub_group // "")] | @tsv' <<<"$answer")
  [[ $(jq '.gang.assignments | length' <<<"$answer") -ge 3 ]] || fail "$s: the gang has no pods: $answer"
}
pod_group_name() { gang "$1" | jq -r '.gang.pod_groups[0].name'; }
# daemon_writes JOBSET: how many of the JobSet's pods the daemon has written.
daemon_writes() {
  kubectl -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$1" -o json --show-managed-fields |
    jq '[.items[] | select(any(.metadata.managedFields[]; .manager == "workloadmapd"))] | length'
}
members_marked() {  # members_marked SCHEDULER JOBSET: the PodGroup exists and every pod is in it
  pod_group "$1" "$(pod_group_name "$2")" >/dev/null && (check_pod_group "$1" "$2" 2>/dev/null)
}

# --- 1. the PodGroups, as GetGangInstructions says ----------------------------
for s in "${schedulers[@]}"; do
  wait_for 60 "the $s PodGroup and its pods" members_marked "$s" "$s-demo"
  check_pod_group "$s" "$s-demo"
  [[ "$(daemon_writes "$s-demo")" == 3 ]] || fail "$s-demo: the daemon did not write the 3 pods' marks"
  echo "ok: $s PodGroup $(pod_group_name "$s-demo") matches GetGangInstructions; its pods are in it"
done

if [[ " ${schedulers[*]} " == *" kai "* ]]; then
  pod_group kai "$(pod_group_name kai-demo)" |
    jq -e '.spec.topologyConstraint == {topology: "rack-topology", requiredTopologyLevel: "rack"}' >/dev/null ||
    fail "the KAI PodGroup lacks the top owner's topology"
  # Looked at with the others (the daemon had them all at its start).
  ! kubectl -n "$ns" get podgroups.scheduling.run.ai "$(pod_group_name kai-skip)" >/dev/null 2>&1 ||
    fail "a PodGroup was written for a JobSet annotated kai.scheduler/skip-podgrouper"
  [[ "$(daemon_writes kai-skip)" == 0 ]] || fail "pods of a skipped JobSet were written"
  echo "ok: KAI's topology from the top owner's annotations; kai.scheduler/skip-podgrouper honoured"
fi

# --- 2. no write while nothing changes, nor by a new leader -------------------
versions() {
  for s in "${schedulers[@]}"; do
    pod_group "$s" "$(pod_group_name "$s-demo")" | jq -r .metadata.resourceVersion
    kubectl -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$s-demo" -o json |
      jq -r '.items[] | .metadata.resourceVersion'
  done
}
before=$(versions)
sleep 3
[[ "$(versions)" == "$before" ]] || fail "PodGroups or pods were written while nothing changed"
stop_daemons
pids=()
start_daemon "$work/daemon-2.log" "${daemon_args[@]}"
wait_for 30 "the second daemon leads" grep -q "started leading" "$work/daemon-2.log"
sleep 3
if [[ "$(versions)" != "$before" ]]; then
  diff <(echo "$before") <(versions) >&2 || true
  for s in "${schedulers[@]}"; do
    kubectl -n "$ns" get "${resource[$s]}" "$(pod_group_name "$s-demo")" -o json --show-managed-fields |
      jq -c '{spec, managedFields: [.metadata.managedFields[] | {manager, operation, time}]}' >&2
    kubectl -n "$ns" get pods -l "jobset.sigs.k8s.io/jobset-name=$s-demo" -o json --show-managed-fields |
      jq -c '.items[] | {name: .metadata.name, resourceVersion: .metadata.resourceVersion,
        managedFields: [.metadata.managedFields[] | {manager, operation, subresource, time}]}' >&2
  done
  tail -30 "$work/daemon-2.log" >&2
  fail "a new leader rewrote PodGroups or pods"
fi
echo "ok: no write while nothing changed, nor by a new leader"

# --- 3. scaled, the PodGroup follows --------------------------------------------
for s in "${schedulers[@]}"; do
  kubectl -n "$ns" patch jobset "$s-demo" --type=json \
    -p '[{"op": "replace", "path": "/spec/replicatedJobs/1/replicas", "value": 3}]' >/dev/null
done
for s in "${schedulers[@]}"; do
  min_is_four() { [[ $(pod_group "$1" "$(pod_group_name "$1-demo")" | jq .spec.minMember) == 4 ]]; }
  wait_for 30 "the $s PodGroup follows the scale" min_is_four "$s"
  check_pod_group "$s" "$s-demo"
done
echo "ok: scaled to 4 pods, each PodGroup's minMember follows"

# --- 4. deleted, the PodGroup goes ----------------------------------------------
for s in "${schedulers[@]}"; do
  name=$(pod_group_name "$s-demo")
  "$repo/integration_tests/seed/delete-demo.sh" --namespace "$ns" --name "$s-demo" >/dev/null
  gone() { ! kubectl -n "$ns" get "${resource[$1]}" "$2" >/dev/null 2>&1; }
  wait_for 60 "the garbage collector deletes the $s PodGroup" gone "$s" "$name"
done
echo "ok: each workload deleted, its PodGroup went with it"

# --- 5. the mutating webhook: pods created in their group ---------------------
kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $ns
webhooks:
  - name: pods.workloadmap.run.ai
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 5
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: $ns}
    matchConditions:
      - name: gang-scheduled
        expression: object.spec.schedulerName in ['kai-scheduler', 'volcano', 'scheduler-plugins-scheduler']
    rules:
      - apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
        operations: [CREATE]
    clientConfig:
      url: https://127.0.0.1:$hook_port/mutate-pod
      caBundle: $(base64 -w0 <"$work/ca.crt")
EOF
for s in "${schedulers[@]}"; do
  "$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" --name "$s-late" \
    --scheduler-name "${scheduler_name[$s]}" >/dev/null
done
for s in "${schedulers[@]}"; do
  wait_for 60 "the $s PodGroup of $s-late and its pods" members_marked "$s" "$s-late"
  check_pod_group "$s" "$s-late"
  # The marks came with the create (the webhook): no write of the daemon's.
  [[ "$(daemon_writes "$s-late")" == 0 ]] ||
    fail "$s-late: pods patched after their creation: $(daemon_writes "$s-late")"
done
echo "ok: with the mutating webhook, pods are created in their PodGroup"

# --- 6. an older KAI's PodGroup CRD: minMember, not minSubGroup ---------------
mpijob_case="$repo/catalog/cases/kubeflow-org-mpijob-v2beta1/gang-worker-pod.yaml"
if [[ " ${schedulers[*]} " != *" kai "* ]]; then
  :  # said above
elif ! kubectl get crd mpijobs.kubeflow.org >/dev/null 2>&1; then
  [[ "${CI:-}" != true ]] || fail "the testbed does not serve mpijobs.kubeflow.org: WM_CRDS_DIR must hold it in CI"
  echo "SKIPPED pod_groups_test part 6: the testbed does not serve mpijobs.kubeflow.org (set WM_CRDS_DIR)"
else
  # The case as JSON: kubectl converts it, headed as an object (nothing is
  # created).
  mpi_case=$({ printf 'apiVersion: v1\nkind: ConfigMap\n'; cat "$mpijob_case"; } |
    kubectl create --dry-run=client --validate=false -o json -f -)
  # create_mpijob NAME: the case's MPIJob, renamed, with what mpi-operator
  # makes of it (the launcher Job, its pod, the worker pods; pods as the
  # controllers create them, not yet scheduled), in order, each owner's
  # real uid in its children's owner references; schedulerName
  # kai-scheduler. A Job's pod gets the labels the apiserver gave the
  # Job's template (controller-uid, job-name).
  create_mpijob() {
    local uids='{}' labels='{}' object created
    mpijobs+=("$1")
    while read -r object; do
      created=$(jq -c --argjson uids "$uids" --argjson labels "$labels" '
        .metadata.ownerReferences[]? |= (.uid = $uids[.kind + "/" + .name]) |
        if .kind == "Pod" then
          .metadata.labels += ($labels[.metadata.ownerReferences[0] | .kind + "/" + .name] // {})
        else . end' <<<"$object" | kubectl -n "$ns" create -o json -f -)
      uids=$(jq -c --argjson c "$created" '.[$c.kind + "/" + $c.metadata.name] = $c.metadata.uid' <<<"$uids")
      labels=$(jq -c --argjson c "$created" '.[$c.kind + "/" + $c.metadata.name] = $c.spec.template.metadata.labels' \
        <<<"$labels")
    done < <(jq -c --arg from "$(jq -r .object.metadata.name <<<"$mpi_case")" --arg name "$1" --arg ns "$ns" '
      [.object, .children[], .pods[]][] |
      walk(if type == "string" then sub("^\($from)(?=-|$)"; $name) else . end) |
      .metadata.namespace = $ns |
      del(.metadata.uid, .metadata.generation, .metadata.creationTimestamp, .status, .spec.nodeName) |
      if .kind == "Pod" then .spec.schedulerName = "kai-scheduler"
      elif .kind == "MPIJob" then .spec.mpiReplicaSpecs[].template.spec.schedulerName = "kai-scheduler"
      else .spec.template.spec.schedulerName = "kai-scheduler" end' <<<"$mpi_case")
  }
  mpijob_pod_group_name() {
    "$grpcurl" -plaintext -d "{\"workload\": {\"namespace\": \"$ns\", \"group\": \"kubeflow.org\",
      \"version\": \"v2beta1\", \"kind\": \"MPIJob\", \"name\": \"$1\"}}" \
      "127.0.0.1:$port" workloadmap.v1.WorkloadMap/GetGangInstructions | jq -er '.gang.pod_groups[0].name'
  }
  # The counts the case expects (our MPIJob definition: minSubGroup 2 of
  # the subgroups launcher, minMember 1, and worker, minMember 2).
  expected_sub_groups=$(jq -c '[.expect.podGroup.subGroups[] | {name, minMember, minSubGroup: null}]' <<<"$mpi_case")
  min_sub_group=$(jq -e '.expect.podGroup.minSubGroup' <<<"$mpi_case")
  # What DesiredPodGroup writes instead of minSubGroup N: the N smallest
  # needs of the subgroups added up (GangNeeds::OfChildren sorts them and
  # adds the first N), here launcher 1 + worker 2 = 3: the launcher and
  # every worker, as KAI counted them before minSubGroup. The subgroups
  # count pods (minMember) with either CRD.
  min_member=3
  # kai_counts MPIJOB FORM: its KAI PodGroup counts subgroups (FORM
  # minSubGroup: minSubGroup as expected, no minMember) or pods (FORM
  # minMember: minMember 3, no minSubGroup), its subgroups as expected;
  # it is the MPIJob's; and every pod is in it (pod-group-name) and in its
  # role's subgroup (kai.scheduler/subgroup-name).
  kai_counts() {
    local group uid pg
    group=$(mpijob_pod_group_name "$1") || return 1
    uid=$(kubectl -n "$ns" get mpijobs.kubeflow.org "$1" -o jsonpath='{.metadata.uid}') || return 1
    pg=$(kubectl -n "$ns" get "$kai_crd" "$group" -o json) || return 1
    jq -e --arg form "$2" --argjson msg "$min_sub_group" --argjson mm "$min_member" \
      --argjson sub_groups "$expected_sub_groups" --arg job "$1" --arg uid "$uid" '
      .metadata.ownerReferences == [{apiVersion: "kubeflow.org/v2beta1", kind: "MPIJob", name: $job, uid: $uid}] and
      (if $form == "minSubGroup" then .spec.minSubGroup == $msg and (.spec | has("minMember") | not)
       else .spec.minMember == $mm and (.spec | has("minSubGroup") | not) end) and
      [.spec.subGroups[] | {name, minMember, minSubGroup}] == $sub_groups' <<<"$pg" >/dev/null || {
      echo "$1's PodGroup, not $2: $(jq -c '{owners: .metadata.ownerReferences, spec}' <<<"$pg")" >&2
      return 1
    }
    kubectl -n "$ns" get pods -l "training.kubeflow.org/job-name=$1" -o json |
      jq -e --arg g "$group" '(.items | length) == 3 and all(.items[].metadata;
        .annotations["pod-group-name"] == $g and
        .labels["kai.scheduler/subgroup-name"] == .labels["training.kubeflow.org/job-role"])' >/dev/null || {
      echo "$1's pods are not in $group: $(kubectl -n "$ns" get pods -l "training.kubeflow.org/job-name=$1" \
        -o json | jq -c '[.items[].metadata | {name, labels, annotations}]')" >&2
      return 1
    }
    [[ " ${mpi_pod_groups[*]} " == *" $group "* ]] || mpi_pod_groups+=("$group")
  }

  # With the served (current) CRD: minSubGroup.
  create_mpijob kai-mpi
  wait_for 60 "kai-mpi's KAI PodGroup with minSubGroup" kai_counts kai-mpi minSubGroup

  # An older KAI's CRD: the same without minSubGroup, in every version, in
  # the spec and in its subgroups.
  kubectl get crd "$kai_crd" -o json >"$work/kai-crd.json"
  jq '[{op: "replace", path: "/spec", value: (.spec | del(
    .versions[].schema.openAPIV3Schema.properties.spec.properties.minSubGroup,
    .versions[].schema.openAPIV3Schema.properties.spec.properties.subGroups.items.properties.minSubGroup))}]' \
    "$work/kai-crd.json" >"$work/older-kai-crd-patch.json"
  kai_crd_changed=1
  kubectl patch crd "$kai_crd" --type=json --patch-file "$work/older-kai-crd-patch.json" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s "crd/$kai_crd" >/dev/null
  kubectl get crd "$kai_crd" -o json | jq -e '[.spec.versions[].schema.openAPIV3Schema.properties.spec.properties |
    has("minSubGroup"), (.subGroups.items.properties | has("minSubGroup"))] | any | not' >/dev/null ||
    fail "the KAI CRD still has minSubGroup"
  # The daemon that runs learns it (the CRD's change, a discovery): the
  # PodGroup it wrote goes to minMember, and a new MPIJob's has it.
  wait_for 30 "kai-mpi's KAI PodGroup rewritten for the older CRD" kai_counts kai-mpi minMember
  create_mpijob kai-mpi-older
  wait_for 60 "kai-mpi-older's KAI PodGroup with minMember" kai_counts kai-mpi-older minMember
  echo "ok: with an older KAI's PodGroup CRD, minMember $min_member instead of minSubGroup $min_sub_group"

  # The real CRD back: minSubGroup again, for both.
  restore_kai_crd || fail "could not restore the KAI PodGroup CRD"
  [[ $(kubectl get crd "$kai_crd" -o json | jq -S .spec) == "$(jq -S .spec "$work/kai-crd.json")" ]] ||
    fail "the KAI PodGroup CRD restored differs from the one served before"
  for job in kai-mpi kai-mpi-older; do
    wait_for 30 "$job's KAI PodGroup back to minSubGroup" kai_counts "$job" minSubGroup
  done
  echo "ok: with the real KAI PodGroup CRD back, minSubGroup $min_sub_group again"
fi
echo "pod group tests passed (${schedulers[*]})"
