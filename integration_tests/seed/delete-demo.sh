#!/usr/bin/env bash
# Deletes what create-demo.sh created: the pods, the Jobs, the headless
# Service and the JobSet. No garbage collector or kubelet runs in the testbed,
# so each kind is deleted explicitly: pods first lose their
# batch.kubernetes.io/job-tracking finalizer and are force-deleted (they are
# bound to a node, so a graceful delete would wait for a kubelet forever).
# Waits until all are gone. Deleting nothing is not an error.
#
#   delete-demo.sh [--namespace NS] [--name NAME]     (defaults: default, demo)
#
# kubectl: $KUBECTL, else $WM_TESTBED_BIN/kubectl, else PATH; KUBECONFIG is honoured.
set -euo pipefail
ns=default name=demo
while (($#)); do
  case "$1" in
    --namespace|-n) ns="${2:?--namespace needs a value}"; shift 2 ;;
    --name) name="${2:?--name needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) echo "delete-demo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
# kubectl: $KUBECTL, else the testbed's (same version as its apiserver), else PATH's.
if [[ -n "${KUBECTL:-}" ]]; then kubectl_bin="$KUBECTL"
elif [[ -n "${WM_TESTBED_BIN:-}" && -x "$WM_TESTBED_BIN/kubectl" ]]; then kubectl_bin="$WM_TESTBED_BIN/kubectl"
elif command -v kubectl >/dev/null; then kubectl_bin=kubectl
else echo "delete-demo.sh: no kubectl (set KUBECTL or WM_TESTBED_BIN, or put it on PATH)" >&2; exit 1
fi
k() { "$kubectl_bin" -n "$ns" "$@"; }
sel="jobset.sigs.k8s.io/jobset-name=$name"

# (Listed by command substitution, not <(...), so that a failing kubectl
# stops the script instead of reading as "nothing to delete".)
list="$(k get pods -l "$sel" -o name)"
mapfile -t pods < <(printf '%s' "$list" | grep .)
for p in "${pods[@]}"; do
  k patch "$p" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
done
if ((${#pods[@]})); then
  # (kubectl warns about immediate deletion on stderr: keep that quiet.)
  if ! out="$(k delete "${pods[@]}" --force --grace-period=0 --ignore-not-found --wait=true 2>&1)"; then
    echo "$out" >&2
    exit 1
  fi
fi
list="$(k get jobs -l "$sel" -o name)"
mapfile -t jobs < <(printf '%s' "$list" | grep .)
if ((${#jobs[@]})); then
  # Background propagation (kubectl's default) deletes the Job at once; the
  # pods are already gone.
  k delete "${jobs[@]}" --ignore-not-found --wait=true >/dev/null
fi
svc=0
owner="$(k get service "$name" --ignore-not-found \
  -o jsonpath='{.metadata.ownerReferences[?(@.kind=="JobSet")].name}')"
if [[ "$owner" == "$name" ]]; then
  k delete service "$name" --ignore-not-found --wait=true >/dev/null
  svc=1
fi
js=0
if [[ -n "$(k get jobset "$name" --ignore-not-found -o name)" ]]; then
  k delete jobset "$name" --ignore-not-found --wait=true >/dev/null
  js=1
fi
echo "delete-demo.sh: deleted in namespace $ns: ${#pods[@]} pods, ${#jobs[@]} jobs, $svc service, $js jobset ($name)" >&2
