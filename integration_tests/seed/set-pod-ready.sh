#!/usr/bin/env bash
# Flips one pod's readiness as a kubelet would (Ready and ContainersReady
# conditions with a new lastTransitionTime, containerStatuses[].ready), then,
# as the Job and JobSet controllers would, recomputes status.ready of the
# pod's Job and status.replicatedJobsStatus of the Job's JobSet. For tests of
# watches on a create-demo.sh workload in the testbed.
#
#   set-pod-ready.sh [--namespace NS] [--no-propagate] POD true|false
#
#   --namespace NS    namespace (default: default)
#   --no-propagate    change only the pod (Job and JobSet status stay stale)
#
# Each object is written only when its status changes, so a repeated call is
# a no-op (no watch event). kubectl: $KUBECTL, else $WM_TESTBED_BIN/kubectl, else PATH;
# KUBECONFIG is honoured. Needs jq.
set -euo pipefail
ns=default propagate=1 args=()
while (($#)); do
  case "$1" in
    --namespace|-n) ns="${2:?--namespace needs a value}"; shift 2 ;;
    --no-propagate) propagate=0; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    -*) echo "set-pod-ready.sh: unknown option $1" >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if ((${#args[@]} != 2)) || [[ "${args[1]}" != true && "${args[1]}" != false ]]; then
  echo "usage: set-pod-ready.sh [--namespace NS] [--no-propagate] POD true|false" >&2
  exit 2
fi
pod="${args[0]}" ready="${args[1]}"
# kubectl: $KUBECTL, else the testbed's (same version as its apiserver), else PATH's.
if [[ -n "${KUBECTL:-}" ]]; then kubectl_bin="$KUBECTL"
elif [[ -n "${WM_TESTBED_BIN:-}" && -x "$WM_TESTBED_BIN/kubectl" ]]; then kubectl_bin="$WM_TESTBED_BIN/kubectl"
elif command -v kubectl >/dev/null; then kubectl_bin=kubectl
else echo "set-pod-ready.sh: no kubectl (set KUBECTL or WM_TESTBED_BIN, or put it on PATH)" >&2; exit 1
fi
k() { "$kubectl_bin" -n "$ns" "$@"; }
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
pod_json="$(k get pod "$pod" -o json)"
new_pod_status="$(jq -c --arg now "$now" --argjson r "$ready" '
  .status as $s |
  (if $r then {status: "True"} else {status: "False", reason: "ContainersNotReady",
    message: "containers with unready status: [\([.spec.containers[].name] | join(" "))]"} end) as $c |
  $s | .conditions |= map(
    if .type == "Ready" or .type == "ContainersReady" then
      if .status == $c.status then . else
        del(.reason, .message) + {lastTransitionTime: $now} + $c end
    else . end)
  | .containerStatuses |= map(.ready = $r)' <<<"$pod_json")"
write() {  # write KIND NAME OLD_JSON NEW_STATUS_JSON
  if jq -e --argjson new "$4" '.status == $new' <<<"$3" >/dev/null; then
    echo "set-pod-ready.sh: $1/$2 unchanged" >&2
    return
  fi
  # Merge patch: lists are replaced whole; keys absent from NEW are left alone
  # (this script only ever changes or adds keys).
  k patch "$1" "$2" --subresource=status --type=merge -p "$(jq -c '{status: .}' <<<"$4")" >/dev/null
  echo "set-pod-ready.sh: $1/$2 status written" >&2
}
write pod "$pod" "$pod_json" "$new_pod_status"
((propagate)) || exit 0

# --- the Job: ready = its pods that are Ready and not terminating --------
job="$(jq -r '.metadata.ownerReferences[]? | select(.controller and .kind == "Job") | .name' <<<"$pod_json")"
[[ -n "$job" ]] || { echo "set-pod-ready.sh: $pod has no controlling Job; done" >&2; exit 0; }
job_json="$(k get job "$job" -o json)"
job_uid="$(jq -r .metadata.uid <<<"$job_json")"
ready_pods="$(k get pods -l "batch.kubernetes.io/controller-uid=$job_uid" -o json | jq '
  [.items[] | select(.metadata.deletionTimestamp == null) |
   select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length')"
write job "$job" "$job_json" "$(jq -c --argjson n "$ready_pods" '.status.ready = $n | .status' <<<"$job_json")"

# --- the JobSet: replicatedJobsStatus as the JobSet controller counts ----
js="$(jq -r '.metadata.ownerReferences[]? | select(.controller and .kind == "JobSet") | .name' <<<"$job_json")"
[[ -n "$js" ]] || { echo "set-pod-ready.sh: $job has no controlling JobSet; done" >&2; exit 0; }
js_json="$(k get jobset "$js" -o json)"
jobs_json="$(k get jobs -l "jobset.sigs.k8s.io/jobset-name=$js" -o json)"
new_js_status="$(jq -c --argjson jobs "$jobs_json" '
  .metadata.uid as $uid |
  [$jobs.items[] | select(any(.metadata.ownerReferences[]?; .uid == $uid and .controller))] as $owned |
  def finished($t): any(.status.conditions[]?; .type == $t and .status == "True");
  .status.replicatedJobsStatus = [.spec.replicatedJobs[] | .name as $r |
    [$owned[] | select(.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"] == $r)] as $js |
    [$js[] | select((finished("Complete") or finished("Failed")) | not)] as $active |
    {name: $r,
     ready: ([$active[] | select((.status.succeeded // 0) + (.status.ready // 0) >=
               ([.spec.parallelism // 1, .spec.completions // (.spec.parallelism // 1)] | min))] | length),
     succeeded: ([$js[] | select(finished("Complete"))] | length),
     failed: ([$js[] | select(finished("Failed"))] | length),
     active: ([$active[] | select((.status.active // 0) > 0)] | length),
     suspended: ([$active[] | select(.spec.suspend // false)] | length)}]
  | .status' <<<"$js_json")"
write jobset "$js" "$js_json" "$new_js_status"
