#!/usr/bin/env bash
# Workload metrics end to end: workloadmapd against the testbed's real
# apiserver, its /metrics scraped and parsed by prometheus_client's text
# parser (from PyPI): the seed demo's series, their removal when the demo is
# deleted, the series limit with its dropped counter, and the Grafana
# dashboard's queries against what the daemon exports.
#
#   metrics_test.sh TESTBED_DIR BUILD_DIR
#
# The virtualenv lives in ~/.cache/workloadmap-tools/metrics-venv (made
# again when broken); pip's cache keeps the wheel.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
venv="$HOME/.cache/workloadmap-tools/metrics-venv"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-metrics.XXXXXX)
ns=metrics-$RANDOM
ns_created=0
source_testbed "$testbed"

cleanup() {
  stop_daemons
  if ((ns_created)); then
    delete_demos "$ns" demo
    delete_namespace "$ns"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

kubectl create namespace "$ns" >/dev/null
ns_created=1
create_demos "$ns" "$work" demo

if ! "$venv/bin/python" -c 'import prometheus_client' 2>/dev/null; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  # Pinned: the parser is the reference the test holds our text to.
  "$venv/bin/python" -m pip --disable-pip-version-check --quiet install prometheus-client==0.26.0 ||
    fail "pip install prometheus-client"
fi
wait_demos

check() {  # check PORT MODE: retried for up to 30 s (the cache follows the apiserver)
  local port=$1 mode=$2
  for _ in $(seq 60); do
    if "$venv/bin/python" "$here/check_metrics.py" "http://127.0.0.1:$port/metrics" "$ns" "$mode" \
      2>"$work/check.err"; then
      echo "ok: $mode"
      return 0
    fi
    sleep 0.5
  done
  cat "$work/check.err" >&2
  fail "workload metrics: $mode"
}

port=$(free_port)
start_daemon "$work/daemon.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$(free_port)" \
  --metrics-address "127.0.0.1:$port"
check "$port" present
# The Grafana dashboard in deploy/ uses only series this daemon exports.
"$venv/bin/python" "$here/check_dashboard.py" "$repo/deploy/grafana/workloadmap-dashboard.json" \
  "http://127.0.0.1:$port/metrics" || fail "check_dashboard.py: deploy/grafana/workloadmap-dashboard.json"

limited_port=$(free_port)
start_daemon "$work/limited.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$(free_port)" \
  --metrics-address "127.0.0.1:$limited_port" --workload-metrics-max-series 5
check "$limited_port" limited

delete_demos "$ns" demo
check "$port" absent
echo "workload metrics tests passed"
