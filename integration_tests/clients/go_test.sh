#!/usr/bin/env bash
# The Go client (client/go) against the real workloadmapd on the testbed's
# apiserver: the committed generated code is current, go vet and gofmt are
# clean, the unit tests and the integration tests pass (dial over TCP and
# the Unix socket, resolve, paged list, watch with resume, restart and slow
# consumer, gang, errors), and the resolve example prints the seed JobSet.
#
#   go_test.sh TESTBED_DIR BUILD_DIR
#
# Go modules come from the Go module proxy into the module cache (GOMODCACHE,
# default ~/go/pkg/mod) and builds are cached (GOCACHE), so a second run
# downloads and compiles nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-go-client.XXXXXX)
ns=go-client-$RANDOM
jobsets=(demo demo-b demo-c)
namespace_created=0
cleanup() {
  stop_daemons
  if ((namespace_created)); then
    delete_demos "$ns" "${jobsets[@]}"
    delete_namespace "$ns"
  fi
  rm -rf "$work"
}
trap cleanup EXIT
source_testbed "$testbed"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
[[ -x "$go" ]] || { echo "go_test.sh: no go toolchain (set GO=)" >&2; exit 1; }
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false"
start=$SECONDS

# --- Static checks -----------------------------------------------------------
"$repo/scripts/gen-go-client" --check
cd "$repo/client/go"
unformatted=$("$(dirname "$go")/gofmt" -l .)
[[ -z "$unformatted" ]] || fail "gofmt would change: $unformatted"
"$go" vet ./...
echo "ok: generated code current, gofmt and go vet clean"

# --- The seed JobSets and the daemon ----------------------------------------
kubectl create namespace "$ns" >/dev/null
namespace_created=1
create_demos "$ns" "$work" "${jobsets[@]}"
wait_demos
port=$(free_port)
socket="$work/wm.sock"
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port" \
  --listen "unix:$socket"

# --- go test: unit tests, and the integration tests against the daemon --------
# -v shows each test; a skipped integration test means the environment
# below is incomplete, which fails the run.
set +e
WM_ADDRESS="127.0.0.1:$port" WM_SOCKET="unix:$socket" WM_TEST_NAMESPACE="$ns" \
  WM_TEST_JOBSETS="$(IFS=,; echo "${jobsets[*]}")" WM_SEED_DIR="$repo/integration_tests/seed" \
  WM_DAEMON="$build/bin/workloadmapd" \
  "$go" test -count=1 -v ./... >"$work/go-test.log" 2>&1
code=$?
set -e
((code == 0)) || { cat "$work/go-test.log"; fail "go test"; }
grep -E -- '^(--- |ok |PASS)' "$work/go-test.log"
if grep -E -- '--- SKIP' "$work/go-test.log" >/dev/null; then
  fail "integration tests skipped: the environment above is incomplete"
fi

# --- The example ------------------------------------------------------------
"$go" build -o "$work/resolve" ./examples/resolve
for address in "127.0.0.1:$port" "unix:$socket"; do
  out=$("$work/resolve" --address "$address" -n "$ns" jobset/demo) || fail "resolve example over $address"
  grep -q '^JobSet/demo .*namespace: '"$ns" <<<"$out" || fail "resolve example header: $out"
  grep -Eq '^status: Running .*GPUs: 12$' <<<"$out" || fail "resolve example status: $out"
  grep -Eq '^leader +1 +1 +1 +4$' <<<"$out" || fail "resolve example leader row: $out"
  grep -Eq '^worker +2 +2 +2 +8$' <<<"$out" || fail "resolve example worker row: $out"
done
echo "$out"
set +e
"$work/resolve" --address "127.0.0.1:$port" -n "$ns" jobset/no-such-jobset 2>"$work/notfound.err"
code=$?
set -e
if ((code != 3)) || ! grep -q NotFound "$work/notfound.err"; then
  fail "resolve of a missing JobSet: exit $code, $(cat "$work/notfound.err")"
fi
echo "ok: resolve example over TCP and the Unix socket"
echo "go client tests passed in $((SECONDS - start)) s"
