#!/usr/bin/env bash
# The web page as a person uses it: Debian's headless Chromium, driven by
# Selenium through Debian's chromedriver, against workloadmapd on the
# testbed's real apiserver with --authentication=kubernetes and the seed
# JobSet in a namespace of its own (web_test.py beside this script does the
# checks):
#  1. a viewer (a ServiceAccount whose Role may get/list/watch JobSets in the
#     namespace) pastes its token into the sign-in box: the table shows demo
#     with 12 GPUs and phase Running; its workload page shows the leader and
#     worker rows with their pods and nodes; a worker pod made not ready
#     through the apiserver changes the row, and the workload page, without
#     a reload; the definitions page lists the catalog;
#  2. a ServiceAccount without any RBAC sees no workload (page and API), a
#     call without a token gets 401 with the JSON error body;
#  3. the page behind a reverse proxy that strips a path prefix (/wm/) works
#     (it uses relative URLs only).
# Screenshots (web-workloads.png, web-workload.png, web-not-ready.png,
# web-denied.png, web-prefix.png), each browser's console log
# (web-console-*.log) and, when a check fails, web-failure.png, .html and
# -console.log go to $WM_TEST_ARTIFACTS_DIR, else BUILD_DIR/test-artifacts/web.
#
#   web_test.sh TESTBED_DIR BUILD_DIR
#
# Needs Debian's chromium and chromium-driver (scripts/install-deps installs
# them). Selenium comes from PyPI into ~/.cache/workloadmap-tools/web-venv
# (made again when broken; pip's cache keeps the wheels); Selenium Manager is
# never asked for a browser or a driver (SE_OFFLINE, explicit paths).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
venv="$HOME/.cache/workloadmap-tools/web-venv"
# Pinned. (4.52.0 and 4.53.0 need certifi>=2026.10.23, which PyPI does not
# serve yet as of 2026-12-04.)
selenium_version=4.51.0
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"

export WM_CHROMIUM=/usr/bin/chromium WM_CHROMEDRIVER=/usr/bin/chromedriver
for tool in "$WM_CHROMIUM" "$WM_CHROMEDRIVER"; do
  [[ -x "$tool" ]] || fail "$tool is missing: install Debian's browser and its driver" \
    "(apt-get install chromium chromium-driver; scripts/install-deps does)"
done
export SE_OFFLINE=true
# The page under test is the one built into the binary, never files on disk.
unset WM_WEB_ASSETS_DIR
export WM_TEST_ARTIFACTS_DIR="${WM_TEST_ARTIFACTS_DIR:-$build/test-artifacts/web}"
mkdir -p "$WM_TEST_ARTIFACTS_DIR"
rm -f "$WM_TEST_ARTIFACTS_DIR"/web-*.png "$WM_TEST_ARTIFACTS_DIR"/web-*.log "$WM_TEST_ARTIFACTS_DIR"/web-*.html

work=$(mktemp -d /tmp/wm-web.XXXXXX)
ns=web-$$-$RANDOM
ns_created=0
source_testbed "$testbed"

cleanup() {
  local status=$?
  stop_daemons
  if ((status != 0)) && [[ -f "$work/daemon.log" ]]; then
    echo "--- workloadmapd's log (last 40 lines, audit lines first):" >&2
    grep ' INFO audit ' "$work/daemon.log" | tail -n 20 >&2 || true
    tail -n 40 "$work/daemon.log" >&2 || true
  fi
  if ((ns_created)); then
    delete_demos "$ns" demo
    # No namespace controller in the testbed: delete what is in it first.
    kubectl delete rolebindings,roles,serviceaccounts --all -n "$ns" --ignore-not-found \
      >/dev/null 2>&1 || true
    delete_namespace "$ns"
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
ns_created=1
create_demos "$ns" "$work" demo
# The viewer may read JobSets in the namespace (get: the workload page, list
# and watch: the table and its event stream); nobody has no RBAC at all.
kubectl create serviceaccount viewer -n "$ns" >/dev/null
kubectl create serviceaccount nobody -n "$ns" >/dev/null
kubectl create role viewer -n "$ns" --verb=get,list,watch --resource=jobsets.jobset.x-k8s.io >/dev/null
kubectl create rolebinding viewer -n "$ns" --role=viewer --serviceaccount="$ns:viewer" >/dev/null

if ! "$venv/bin/python" -c "import selenium, sys; sys.exit(selenium.__version__ != '$selenium_version')" \
  2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip --disable-pip-version-check --quiet install "selenium==$selenium_version" ||
    fail "pip install selenium==$selenium_version"
fi
wait_demos

# The apiserver's RBAC authorizer follows its own watch: wait until it knows
# the binding, so the daemon's first SubjectAccessReview (whose denial it
# would remember for 30 s) is answered with it.
can_list() {  # can_list SERVICEACCOUNT: yes or no
  kubectl auth can-i list jobsets.jobset.x-k8s.io -n "$ns" --as="system:serviceaccount:$ns:$1" 2>/dev/null ||
    true
}
for _ in $(seq 100); do
  [[ $(can_list viewer) == yes ]] && break
  sleep 0.1
done
[[ $(can_list viewer) == yes ]] || fail "the viewer's RoleBinding did not take effect"
[[ $(can_list nobody) == no ]] || fail "nobody may list JobSets in $ns"

# Tokens for the daemon's audience only (and one for the apiserver's, which
# the daemon must refuse).
export WM_VIEWER_TOKEN WM_NOBODY_TOKEN WM_APISERVER_TOKEN
WM_VIEWER_TOKEN=$(kubectl create token viewer -n "$ns" --audience=workloadmap --duration=30m)
WM_NOBODY_TOKEN=$(kubectl create token nobody -n "$ns" --audience=workloadmap --duration=30m)
WM_APISERVER_TOKEN=$(kubectl create token viewer -n "$ns" --duration=30m)

# The page embedded in the binary (WM_WEB_ASSETS_DIR was unset above).
port=$(free_port)
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$(free_port)" \
  --metrics-address "127.0.0.1:$port" --authentication=kubernetes --token-audiences=workloadmap

worker_pod=$(kubectl get pods -n "$ns" -l jobset.sigs.k8s.io/replicatedjob-name=worker \
  -o jsonpath='{.items[0].metadata.name}')
[[ -n "$worker_pod" ]] || fail "no worker pod of the seed demo in $ns"
WM_WEB_URL="http://127.0.0.1:$port/" WM_WEB_NAMESPACE="$ns" WM_WORKER_POD="$worker_pod" \
  WM_SET_POD_READY="$repo/integration_tests/seed/set-pod-ready.sh" \
  "$venv/bin/python" "$here/web_test.py" || fail "web page checks (screenshots in $WM_TEST_ARTIFACTS_DIR)"
echo "web tests passed (screenshots in $WM_TEST_ARTIFACTS_DIR)"
