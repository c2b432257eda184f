#!/usr/bin/env bash
# The Python client (client/python) against the real workloadmapd on the
# testbed's apiserver: a fresh install of the package (its build generates the
# stubs with grpcio-tools from PyPI), ruff, its pytest suite over TCP and a
# Unix socket (plus daemons of its own for a restart and for TLS), and the
# examples.
#
#   python_test.sh TESTBED_DIR BUILD_DIR
#
# The virtualenv lives in ~/.cache/workloadmap-tools/python-client-venv (made
# again when broken) and pip's cache keeps the wheels, so only the first run
# downloads. Python: $WM_PYTHON, else python3 (3.11 or newer: tomllib).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
python="${WM_PYTHON:-python3}"
venv="$HOME/.cache/workloadmap-tools/python-client-venv"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-python-client.XXXXXX)
ns=pyclient-$RANDOM
demos=(demo demo-b demo-c)
ns_created=0
source_testbed "$testbed"

cleanup() {
  stop_daemons
  if ((ns_created)); then
    delete_demos "$ns" "${demos[@]}"
    delete_namespace "$ns"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# --- The demos (in the background: they take a few seconds each) ----------
kubectl create namespace "$ns" >/dev/null
ns_created=1
create_demos "$ns" "$work" "${demos[@]}"

# --- A fresh install of the package -----------------------------------------
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || fail "$python is older than 3.11"
if ! "$venv/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
  ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi
start=$SECONDS
pip=("$venv/bin/python" -m pip --disable-pip-version-check --quiet)
# The build runs in the venv (--no-build-isolation) with exactly the build
# requirements of pyproject.toml: an isolated build would install them into a
# new environment each time, which asks the index and takes 25 s or more.
mapfile -t build_requires < <("$venv/bin/python" -c '
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["build-system"]["requires"]))' "$repo/client/python/pyproject.toml")
"${pip[@]}" install "${build_requires[@]}" || fail "pip install ${build_requires[*]}"
# Uninstalled first, so the build hook runs every time (pip would keep an
# installed copy of the same version); the dependencies stay. pip builds in
# the source tree, and setuptools packs whatever its build/ holds: a stale
# module there would be installed too.
"${pip[@]}" uninstall --yes workloadmap 2>/dev/null || true
rm -rf "$repo/client/python/build"
"${pip[@]}" install --no-build-isolation "$repo/client/python[test,lint]" ||
  fail "pip install client/python[test,lint]"
echo "ok: pip install client/python[test,lint] ($((SECONDS - start))s)"
# The tests below import this installed copy (tests/test_generated.py checks
# its stubs), never the sources.
"$venv/bin/python" -c 'import workloadmap.v1.service_pb2_grpc as m; assert "site-packages" in m.__file__' ||
  fail "workloadmap is not installed in $venv"

(
  cd "$repo/client/python"
  "$venv/bin/ruff" format --no-cache --check --quiet . && "$venv/bin/ruff" check --no-cache --quiet .
) || fail "ruff (fix with: ruff format client/python && ruff check --fix client/python)"
echo "ok: ruff"

wait_demos

# --- The daemon, on TCP and a Unix socket -----------------------------------
port=$(free_port)
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port" \
  --listen "unix:$work/wm.sock"

# --- pytest -----------------------------------------------------------------
(
  cd "$repo/client/python"
  WM_ADDRESS="127.0.0.1:$port" WM_SOCKET="unix:$work/wm.sock" WM_TEST_NAMESPACE="$ns" \
    WM_TEST_DEMOS="$(IFS=,; echo "${demos[*]}")" WM_SEED_DIR="$repo/integration_tests/seed" \
    WM_DAEMON_BIN="$build/bin/workloadmapd" \
    "$venv/bin/python" -m pytest -p no:cacheprovider -ra --durations=5 tests
) || fail "pytest"

# --- The examples -----------------------------------------------------------
examples="$repo/client/python/examples"
out=$("$venv/bin/python" "$examples/resolve.py" --address "127.0.0.1:$port" -n "$ns" jobset/demo) ||
  fail "resolve.py: $out"
for line in '^JobSet/demo  namespace: '"$ns"'  ' '^Phase: Running$' '^leader +1 +1 +1 +4$' \
  '^worker +2 +2 +2 +8$' '^TOTAL +3 +3 +3 +12$'; do
  grep -Eq "$line" <<<"$out" || fail "resolve.py output lacks /$line/:"$'\n'"$out"
done
code=0
"$venv/bin/python" "$examples/resolve.py" --address "unix:$work/wm.sock" -n "$ns" JobSet/missing \
  >/dev/null 2>"$work/missing.err" || code=$?
((code == 3)) || fail "resolve.py of a missing JobSet exited $code, not 3"
grep -q 'NOT_FOUND' "$work/missing.err" || fail "resolve.py: $(cat "$work/missing.err")"
out=$("$venv/bin/python" "$examples/watch.py" --address "unix:$work/wm.sock" -n "$ns" --until-synced) ||
  fail "watch.py: $out"
[[ $(grep -Ec "^ADDED +JobSet/$ns/demo(-b|-c)?  Running  replicas 3/3 ready" <<<"$out") == 3 ]] ||
  fail "watch.py snapshot:"$'\n'"$out"
grep -Eq '^SYNCED +revision [0-9]+$' <<<"$(tail -n1 <<<"$out")" || fail "watch.py lacks SYNCED:"$'\n'"$out"
echo "ok: examples/resolve.py and examples/watch.py"
echo "python client tests passed"
