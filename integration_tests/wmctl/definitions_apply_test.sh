#!/usr/bin/env bash
# Publishing the catalog as Karta objects, against the testbed's real
# apiserver:
#  1. wmctl definitions apply creates one Karta per catalog definition, with
#     our label and the run.ai/karta-* labels KAI Scheduler's fallback looks
#     Kartas up by; applied again, nothing changes (same resourceVersions);
#  2. a field a user changed survives the next apply (the Karta is "kept",
#     the conflict named);
#  3. --prune deletes a catalog Karta we no longer ship, but not one whose
#     spec someone else changed;
#  4. workloadmapd --leader-elect --publish-catalog publishes the catalog
#     when it leads, and its Karta operator makes the published Kartas Ready.
# Catalog Kartas override the catalog for every kind in a cluster, so this
# test deletes them when it ends (and runs alone, from scripts/test).
#
#   definitions_apply_test.sh TESTBED_DIR BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
source_testbed "$testbed"
export KUBECONFIG="$WM_TESTBED_DIR/kubeconfig"
work=$(mktemp -d /tmp/wm-apply.XXXXXX)
ns=apply-$RANDOM
selector=workloadmap.run.ai/catalog=true

cleanup() {
  stop_daemons
  kubectl delete karta -l "$selector" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete karta "$ns-users" --ignore-not-found >/dev/null 2>&1 || true
  delete_namespace "$ns"
  rm -rf "$work"
}
trap cleanup EXIT
kubectl delete karta -l "$selector" --ignore-not-found >/dev/null

wmctl() { "$build/bin/wmctl" "$@"; }
shipped=$(wmctl definitions --offline -o json | jq .count)
versions() { kubectl get kartas -l "$selector" -o json | jq -S '[.items[] | {(.metadata.name): .metadata.resourceVersion}] | add'; }

# --- 1. apply, and apply again -----------------------------------------------
wmctl definitions apply >"$work/first.out" 2>"$work/first.err" || { cat "$work/first.err"; fail "the first apply failed"; }
[[ "$(grep -c ' created$' "$work/first.out")" == "$shipped" ]] ||
  fail "expected $shipped Kartas created: $(cat "$work/first.out")"
[[ "$(kubectl get kartas -l "$selector" --no-headers | wc -l)" == "$shipped" ]] ||
  fail "not every catalog Karta carries $selector"
jobsets=$(kubectl get kartas --no-headers -o name \
  -l run.ai/karta-group=jobset.x-k8s.io,run.ai/karta-version=v1alpha2,run.ai/karta-kind=JobSet)
[[ "$(wc -l <<<"$jobsets")" == 1 && -n "$jobsets" ]] ||
  fail "KAI's lookup by the run.ai/karta-* labels does not find exactly one JobSet Karta: $jobsets"
versions >"$work/versions-1.json"
wmctl definitions apply >"$work/second.out" 2>&1 || fail "the second apply failed"
[[ "$(grep -c ' unchanged$' "$work/second.out")" == "$shipped" ]] ||
  fail "the second apply changed something: $(grep -v ' unchanged$' "$work/second.out")"
versions >"$work/versions-2.json"
cmp -s "$work/versions-1.json" "$work/versions-2.json" || fail "the second apply wrote Kartas"
echo "ok: wmctl definitions apply creates the $shipped catalog Kartas with their labels, and a second apply changes nothing"

# --- 2. a user's change survives ---------------------------------------------
kubectl patch karta apps-deployment-v1 --type merge --field-manager=platform-team \
  -p '{"spec":{"structureDefinition":{"rootComponent":{"scaleDefinition":{"replicasPath":".spec.replicas // 2"}}}}}' \
  >/dev/null
wmctl definitions apply >"$work/third.out" 2>"$work/third.err" || fail "apply failed after a user's change"
grep -q '^karta.run.ai/apps-deployment-v1 kept$' "$work/third.out" ||
  fail "the changed Karta was not kept: $(grep apps-deployment-v1 "$work/third.out")"
grep -q 'apps-deployment-v1 kept as it is: .*platform-team' "$work/third.err" ||
  fail "the warning does not name who changed it: $(cat "$work/third.err")"
[[ "$(kubectl get karta apps-deployment-v1 -o jsonpath='{.spec.structureDefinition.rootComponent.scaleDefinition.replicasPath}')" == ".spec.replicas // 2" ]] ||
  fail "the user's change did not survive the apply"
[[ "$(grep -c ' unchanged$' "$work/third.out")" == "$((shipped - 1))" ]] || fail "the others were not left unchanged"
echo "ok: a field a user changed survives the apply (kept, and the manager named)"

# --- 3. --prune ---------------------------------------------------------------
stale() {  # stale NAME: a catalog-labelled Karta for a kind we do not ship
  karta_manifest "$1" apply-test.run.ai .spec.template workloadmap.run.ai/catalog true
}
stale "$ns-stale" | kubectl apply --server-side --field-manager=workloadmap-catalog -f - >/dev/null
stale "$ns-users" | kubectl create -f - >/dev/null
wmctl definitions apply --prune >"$work/prune.out" 2>"$work/prune.err" || fail "apply --prune failed"
grep -q "^karta.run.ai/$ns-stale pruned$" "$work/prune.out" || fail "the stale Karta was not pruned"
kubectl get karta "$ns-stale" >/dev/null 2>&1 && fail "the pruned Karta still exists"
grep -q "^karta.run.ai/$ns-users kept$" "$work/prune.out" || fail "a Karta whose spec a user wrote was not kept"
kubectl get karta "$ns-users" >/dev/null || fail "a user's Karta was deleted"
echo "ok: --prune deletes a catalog Karta no longer shipped, not one whose spec someone else wrote"

# --- 4. the daemon publishes on the leader -------------------------------------
kubectl delete karta -l "$selector" >/dev/null
kubectl create namespace "$ns" >/dev/null
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$(free_port)" \
  --leader-elect --leader-election-namespace "$ns" --publish-catalog
for _ in $(seq 150); do
  grep -q 'catalog publication' "$work/daemon.log" && break
  sleep 0.2
done
grep -q "catalog publication.*created.$shipped" "$work/daemon.log" ||
  { tail -5 "$work/daemon.log"; fail "the leader did not publish the $shipped Kartas"; }
ready() {
  kubectl get karta jobset-x-k8s-io-jobset-v1alpha2 -o json 2>/dev/null |
    jq -r '.status.conditions // [] | map(select(.type == "Ready"))[0].status // ""'
}
for _ in $(seq 100); do
  [[ "$(ready)" == True ]] && break
  sleep 0.2
done
[[ "$(ready)" == True ]] || fail "the published JobSet Karta did not become Ready: $(kubectl get karta -o name | head -3)"
echo "ok: workloadmapd --publish-catalog publishes the catalog when it leads, and its operator makes the Kartas Ready"
echo "definitions apply tests passed"
