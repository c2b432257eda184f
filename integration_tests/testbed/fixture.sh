#!/usr/bin/env bash
# The testbed as a ctest fixture (FIXTURES_SETUP / FIXTURES_CLEANUP
# "testbed"), for the tests registered with ctest that need a real
# kube-apiserver. They read its directory from $WM_TESTBED_DIR, else DIR.
#
#   fixture.sh setup DIR     a running testbed at $WM_TESTBED_DIR (scripts/test
#                            starts one) is shared as it is; else one is
#                            started in DIR (a stale one there stopped first)
#   fixture.sh cleanup DIR   stops the testbed of DIR if setup started it
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:?usage: fixture.sh setup|cleanup DIR}"
dir="${2:?testbed directory}"

running() {  # running DIR: its apiserver answers /readyz
  [[ -f "$1/env" ]] || return 1
  # shellcheck disable=SC1091
  (source "$1/env" && curl -fsS --max-time 5 --cacert "$1/ca.crt" \
    -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$APISERVER_PORT/readyz") >/dev/null 2>&1
}

case "$cmd" in
  setup)
    if [[ -n "${WM_TESTBED_DIR:-}" ]]; then
      running "$WM_TESTBED_DIR" || { echo "fixture: no testbed answers at \$WM_TESTBED_DIR=$WM_TESTBED_DIR" >&2; exit 1; }
      echo "fixture: sharing the testbed at $WM_TESTBED_DIR"
      exit 0
    fi
    "$here/testbed.sh" stop "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
    "$here/testbed.sh" start "$dir"
    touch "$dir/started-by-fixture"
    ;;
  cleanup)
    [[ -z "${WM_TESTBED_DIR:-}" && -f "$dir/started-by-fixture" ]] || exit 0
    "$here/testbed.sh" stop "$dir"
    ;;
  *)
    echo "fixture.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
