#!/usr/bin/env bash
# wmctl's kubeconfig mode against the testbed's real kube-apiserver, next to
# its daemon mode against a real workloadmapd on the same apiserver:
#  - with no daemon address configured, get, describe TYPE/NAME and gang
#    answer from the apiserver; their -o json equals the daemon's byte for
#    byte apart from "mode" (the seed JobSet's tree and GPU totals), and
#    describe prints the replicatedjob row above leader and worker;
#  - the namespace defaults to the context's (upstream issue #212);
#    --context, --kubeconfig, -A; --as and --as-group impersonate (a user
#    that may list the workloads but not the Kartas gets a warning and the
#    catalog); the cluster's Karta objects are definitions in force;
#  - --request-timeout bounds the listing; wmctl version names the mode.
#
#   kubeconfig_test.sh BUILD_DIR [TESTBED_DIR]
#
# The testbed is the one at $WM_TESTBED_DIR when that is set (scripts/test
# starts one and shares it), else TESTBED_DIR (where ctest's testbed fixture
# started its own).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?build directory}" && pwd)"
testbed="${WM_TESTBED_DIR:-${2:?testbed directory (TESTBED_DIR or WM_TESTBED_DIR)}}"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-wmctl-kube.XXXXXX)
ns=wmctl-kube-$RANDOM
karta=wmctl-kube-test-$ns
namespace_created=0
cleanup() {
  stop_daemons
  kubectl delete karta "$karta" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete clusterrole "$ns-reader" --ignore-not-found >/dev/null 2>&1 || true
  if ((namespace_created)); then
    delete_demos "$ns" demo
    delete_namespace "$ns"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
source_testbed "$testbed"
start=$SECONDS
# Nothing of the developer's: no config file, no daemon address.
export HOME="$work/home" XDG_CONFIG_HOME="$work/xdg"
mkdir -p "$HOME"
unset WM_ADDRESS WMCTL_CONFIG WMCTL_CLUSTER WMCTL_NAMESPACE WMCTL_OUTPUT
wmctl="$build/bin/wmctl"

kubectl create namespace "$ns" >/dev/null
namespace_created=1
create_demos "$ns" "$work" demo
wait_demos
pod=$(kubectl -n "$ns" get pods -o name | sed 's|pod/||' | grep '^demo-worker-1-' | head -1)
[[ -n "$pod" ]] || fail "no worker pod of the seed JobSet"

# --- Kubeconfig mode is the default without a daemon address ----------------
"$wmctl" version >"$work/version.txt"
grep -q '^mode: kubeconfig (context testbed at https://127.0.0.1:[0-9]*, namespace default; no daemon address configured)$' \
  "$work/version.txt" || { cat "$work/version.txt"; fail "wmctl version does not name kubeconfig mode"; }
for form in "get JobSet -n $ns" "describe JobSet/demo -n $ns" "gang $pod -n $ns"; do
  # shellcheck disable=SC2086
  "$wmctl" $form -o json >"$work/kube-${form%% *}.json" 2>"$work/kube-${form%% *}.err" ||
    { cat "$work/kube-${form%% *}.err"; fail "wmctl $form -o json (kubeconfig mode)"; }
  # Progress lines only (the apiserver's first lists of fresh CRDs can
  # take a second).
  ! grep -v '^wmctl: listing from context testbed (namespace [^)]*): [0-9]* of [0-9]* kinds listed, waiting for ' \
    "$work/kube-${form%% *}.err" || fail "wmctl $form printed more than progress on stderr"
done
[[ $(jq -r .mode "$work/kube-get.json") == kubeconfig ]] || fail "get -o json does not say mode kubeconfig"
[[ $(jq .count "$work/kube-get.json") == 1 ]] || fail "get lists $(jq .count "$work/kube-get.json") JobSets"
[[ $(jq .resources.gpus "$work/kube-describe.json") == 12 ]] || fail "describe: GPU total is not 12"
echo "ok: kubeconfig mode by default (get, describe, gang; GPU total 12)"

# The tree as kli prints it: the replicatedjob row above its instances.
"$wmctl" describe JobSet/demo -n "$ns" >"$work/describe.txt"
sed -n '3,8p' "$work/describe.txt" | sed -E 's/ +/ /g' >"$work/tree.txt"
cat >"$work/tree-expected.txt" <<'EOF'
`-- replicatedjob 3/3 ready gpu: 12 node-1,node-2,node-3
 |-- leader 1/1 ready gpu: 4 node-1
 | `-- demo-leader-0-0-XXXXX Running gpu: 4 node-1
 `-- worker 2/2 ready gpu: 8 node-2,node-3
 |-- demo-worker-0-0-XXXXX Running gpu: 4 node-2
 `-- demo-worker-1-0-XXXXX Running gpu: 4 node-3
EOF
sed -E 's/(demo-[a-z]+-[0-9]-0-)[a-z0-9]{5}/\1XXXXX/' "$work/tree.txt" | diff -u "$work/tree-expected.txt" - ||
  { cat "$work/describe.txt"; fail "describe's tree is not kli's"; }
echo "ok: describe prints replicatedjob above leader and worker"

# --- The same answers from workloadmapd, byte for byte apart from "mode" -------
port=$(free_port)
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port"
export WM_ADDRESS="127.0.0.1:$port"
"$wmctl" version | grep -q "^mode: daemon (workloadmapd at 127.0.0.1:$port, from \$WM_ADDRESS)$" ||
  fail "wmctl version does not name daemon mode"
for form in "get JobSet -n $ns" "describe JobSet/demo -n $ns" "gang $pod -n $ns"; do
  # shellcheck disable=SC2086
  "$wmctl" $form -o json >"$work/daemon-${form%% *}.json"
  sed 's/^  "mode": "kubeconfig"/  "mode": "daemon"/' "$work/kube-${form%% *}.json" |
    cmp -s - "$work/daemon-${form%% *}.json" || {
    diff -u "$work/kube-${form%% *}.json" "$work/daemon-${form%% *}.json" || true
    fail "wmctl $form -o json: kubeconfig mode and daemon mode differ"
  }
done
[[ $(jq -r .mode "$work/daemon-get.json") == daemon ]] || fail "get -o json does not say mode daemon"
# A kubeconfig-mode flag beats $WM_ADDRESS; with --address it is an error.
"$wmctl" get JobSet -n "$ns" --context testbed -o json | jq -e '.mode == "kubeconfig"' >/dev/null ||
  fail "--context does not select kubeconfig mode over \$WM_ADDRESS"
set +e
"$wmctl" get --address "$WM_ADDRESS" --context testbed 2>"$work/both.err"
code=$?
set -e
[[ $code == 2 ]] && grep -q -- '--address (daemon mode) and --context (kubeconfig mode)' "$work/both.err" ||
  fail "--address with --context: exit $code, $(cat "$work/both.err")"
unset WM_ADDRESS
echo "ok: -o json of get, describe and gang equal the daemon's (apart from mode)"

# --- Namespace from the context, --context, --kubeconfig, -A -------------------
cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority: "$testbed/ca.crt"}
users:
- name: admin
  user: {token: "$ADMIN_TOKEN"}
contexts:
- name: plain
  context: {cluster: testbed, user: admin}
- name: team
  context: {cluster: testbed, user: admin, namespace: "$ns"}
current-context: team
EOF
names() { jq -r '[.items[] | "\(.namespace)/\(.name)"] | join(" ")'; }
[[ $(KUBECONFIG="$work/kubeconfig" "$wmctl" get -o json | names) == "$ns/demo" ]] ||
  fail "get does not default to the context's namespace"
set +e
"$wmctl" get JobSet/demo --kubeconfig "$work/kubeconfig" --context plain 2>"$work/plain.err"
code=$?
set -e
[[ $code == 3 ]] && grep -q '^error: JobSet demo not found in namespace default$' "$work/plain.err" ||
  fail "--context plain (no namespace): exit $code, $(cat "$work/plain.err")"
[[ $("$wmctl" get --kubeconfig "$work/kubeconfig" --context plain -n "$ns" -o json | names) == "$ns/demo" ]] ||
  fail "-n does not override the context's namespace"
"$wmctl" get --kubeconfig "$work/kubeconfig" -A -o json | jq -e --arg ns "$ns" \
  '[.items[] | select(.namespace == $ns and .name == "demo")] | length == 1' >/dev/null ||
  fail "get -A does not list the seed JobSet"
"$wmctl" version --kubeconfig "$work/kubeconfig" | grep -q "namespace $ns; --kubeconfig)$" ||
  fail "wmctl version does not name the context's namespace"
echo "ok: namespace from the context, --context, --kubeconfig, -n, -A"

# --- Impersonation: a user who may read the workloads, not the Kartas -----------
kubectl create clusterrole "$ns-reader" --verb=get,list,watch \
  --resource=jobsets.jobset.x-k8s.io,jobs.batch,pods >/dev/null
kubectl -n "$ns" create rolebinding reader --clusterrole="$ns-reader" --group="$ns-readers" >/dev/null
"$wmctl" get JobSet -n "$ns" --as someone --as-group "$ns-readers" -o json \
  >"$work/as.json" 2>"$work/as.err" || { cat "$work/as.err"; fail "get --as --as-group"; }
[[ $(names <"$work/as.json") == "$ns/demo" ]] || fail "get --as --as-group does not list the JobSet"
grep -q "^warning: may not list the cluster's Karta definitions (.*): using the built-in catalog and --definitions only$" \
  "$work/as.err" || { cat "$work/as.err"; fail "no warning for the forbidden Kartas"; }
"$wmctl" describe JobSet/demo -n "$ns" --as someone --as-group "$ns-readers" -o json 2>/dev/null |
  jq -e '.resources.gpus == 12' >/dev/null || fail "describe --as --as-group"
# Without the group the user may list nothing of it.
"$wmctl" get JobSet -n "$ns" --as someone -o json >"$work/as-nobody.json" 2>"$work/as-nobody.err"
[[ $(jq .count "$work/as-nobody.json") == 0 ]] || fail "get --as someone lists workloads"
grep -q '^warning: may not list .*jobsets\.' "$work/as-nobody.err" ||
  { cat "$work/as-nobody.err"; fail "no warning for the forbidden JobSets"; }
echo "ok: --as and --as-group; forbidden Kartas and kinds are warnings"

# --- The cluster's Karta objects are definitions in force ------------------------
# Leases: a kind no catalog definition covers.
kubectl apply -f - >/dev/null <<EOF
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: $karta
spec:
  structureDefinition:
    rootComponent:
      name: lease
      kind: {group: coordination.k8s.io, version: v1, kind: Lease}
      statusDefinition:
        statusMappings:
          running:
          - byExpression: {expression: .spec.holderIdentity, expectedResult: Running}
EOF
kubectl apply -f - >/dev/null <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: settings, namespace: "$ns"}
spec: {holderIdentity: Running}
EOF
"$wmctl" get Lease/settings -n "$ns" -o json >"$work/karta.json" ||
  fail "get Lease/settings (a cluster Karta's kind)"
jq -e --arg d "$karta" '.definition == $d and .phases == ["Running"]' \
  "$work/karta.json" >/dev/null || { cat "$work/karta.json"; fail "the cluster's Karta is not in force"; }
echo "ok: the cluster's Karta objects are definitions"

# --- --request-timeout bounds the listing -----------------------------------------
set +e
"$wmctl" get -n "$ns" --request-timeout 1ms 2>"$work/timeout.err"
code=$?
set -e
[[ $code == 1 ]] && grep -q 'not everything was listed within 1ms (--request-timeout)' \
  "$work/timeout.err" || fail "--request-timeout 1ms: exit $code, $(cat "$work/timeout.err")"
echo "ok: --request-timeout"

echo "PASS: wmctl kubeconfig mode in $((SECONDS - start)) s"
