# shellcheck shell=bash
# Helpers shared by the shell tests (integration_tests/*/*_test.sh and
# client/wmctl/shell_test.sh). Sourced, not run, after `set -euo pipefail`:
#
#   source "$repo/integration_tests/lib.sh"
#
#   fail MESSAGE...         prints "FAIL: MESSAGE..." on stderr and exits 1.
#   free_port               prints a TCP port that is free on 127.0.0.1 now
#                           (another process may still take it before use).
#   source_testbed DIR      exports the variables of the testbed's DIR/env
#                           (KUBECONFIG, WM_TESTBED_BIN, ...) and puts the
#                           testbed's binaries (kubectl) first on PATH.
#   start_daemon LOG ARGS...
#                           starts $build/bin/workloadmapd --metrics-address off
#                           ARGS... in the background ($build: the caller's build
#                           directory), its stderr in LOG, adds its PID to the
#                           array pids, and waits for it as wait_ready does.
#   wait_ready LOG PID      waits (up to 60 s) until the workloadmapd PID logs
#                           ' INFO ready ' in LOG; prints LOG and fails if it
#                           exits first or the time runs out.
#   stop_daemons            kills every PID in pids and waits for the
#                           background processes (for the EXIT trap).
#   create_demos NS DIR NAME...
#                           starts integration_tests/seed/create-demo.sh for
#                           each seed demo NAME in namespace NS, in parallel in
#                           the background, each logging to DIR/demo-NAME.log.
#   wait_demos              waits for the demos create_demos started; prints
#                           the log of one that failed and fails.
#   delete_demos NS NAME... deletes the seed demos NAME... of namespace NS
#                           (integration_tests/seed/delete-demo.sh), in parallel;
#                           failures are ignored (for the EXIT trap).
#   make_test_ca DIR        makes DIR/ca.crt and DIR/ca.key, a CA for a day.
#   make_serving_cert DIR SERIAL
#                           makes DIR/tls.crt and DIR/tls.key, a serving
#                           certificate for 127.0.0.1 signed by DIR's CA with
#                           that serial, each renamed into place (a server that
#                           reloads them never reads half a file).
#   install_coscheduling_crd DIR
#                           applies the scheduler-plugins coscheduling PodGroup
#                           CRD (scheduling.x-k8s.io/v1alpha1) from its Go
#                           module, sigs.k8s.io/scheduler-plugins v0.34.7
#                           (commit 1e227d21f0a05ba94b9aabc35c6b8457b7150af2),
#                           downloaded through the Go module proxy from DIR,
#                           and waits until it is established.
#   delete_namespace NS     deletes namespace NS without waiting and finalizes
#                           it, as the namespace controller the testbed lacks
#                           would once it is empty; failures are ignored.

wm_lib_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pids=()
demo_names=()
demo_pids=()
demo_logs=()

fail() { echo "FAIL: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

source_testbed() {
  set -a
  # shellcheck disable=SC1091
  source "$1/env"
  set +a
  export PATH="$WM_TESTBED_BIN:$PATH"
}

start_daemon() {
  local log=$1
  shift
  "$build/bin/workloadmapd" --metrics-address off "$@" 2>"$log" &
  pids+=($!)
  wait_ready "$log" $!
}

wait_ready() {
  local log=$1 pid=$2
  for _ in $(seq 600); do
    grep -qs ' INFO ready ' "$log" && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$log"; fail "workloadmapd exited"; }
    sleep 0.1
  done
  cat "$log"
  fail "workloadmapd did not become ready"
}

stop_daemons() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

create_demos() {
  local ns=$1 dir=$2 name
  shift 2
  for name in "$@"; do
    "$wm_lib_dir/seed/create-demo.sh" --namespace "$ns" --name "$name" >"$dir/demo-$name.log" 2>&1 &
    demo_pids+=($!)
    demo_names+=("$name")
    demo_logs+=("$dir/demo-$name.log")
  done
}

wait_demos() {
  local i
  for i in "${!demo_pids[@]}"; do
    wait "${demo_pids[$i]}" || { cat "${demo_logs[$i]}"; fail "create-demo.sh --name ${demo_names[$i]}"; }
  done
  demo_names=() demo_pids=() demo_logs=()
}

delete_demos() {
  local ns=$1 name pid deleters=()
  shift
  for name in "$@"; do
    "$wm_lib_dir/seed/delete-demo.sh" --namespace "$ns" --name "$name" >/dev/null 2>&1 &
    deleters+=($!)
  done
  for pid in "${deleters[@]}"; do wait "$pid" 2>/dev/null || true; done
}

make_test_ca() {
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
    -subj "/CN=workloadmap-test-ca" -keyout "$1/ca.key" -out "$1/ca.crt" 2>/dev/null
}

make_serving_cert() {
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$1/new.key" -out "$1/new.csr" 2>/dev/null
  openssl x509 -req -in "$1/new.csr" -CA "$1/ca.crt" -CAkey "$1/ca.key" -days 1 \
    -set_serial "$2" -extfile <(echo "subjectAltName=IP:127.0.0.1") -out "$1/new.crt" 2>/dev/null
  mv "$1/new.key" "$1/tls.key"
  mv "$1/new.crt" "$1/tls.crt"
}

install_coscheduling_crd() {
  local module
  module=$(cd "$1" && GOFLAGS= go mod download -json sigs.k8s.io/scheduler-plugins@v0.34.7 | jq -r .Dir)
  kubectl apply --server-side --field-manager=workloadmap-tests \
    -f "$module/config/crd/bases/scheduling.x-k8s.io_podgroups.yaml" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s crd/podgroups.scheduling.x-k8s.io >/dev/null
}

delete_namespace() {
  kubectl delete namespace "$1" --wait=false >/dev/null 2>&1 || true
  kubectl get namespace "$1" -o json 2>/dev/null | jq '.spec.finalizers = []' |
    kubectl replace --raw "/api/v1/namespaces/$1/finalize" -f - >/dev/null 2>&1 || true
}

# karta_manifest NAME GROUP POD_TEMPLATE_PATH LABEL_KEY LABEL_VALUE: the
# smallest Karta (server/definitions/testing/karta_fixture.h's), of kind
# GROUP/v1 Widget, labelled, as YAML on stdout. The path ".spec.template |
# input" makes it one the checks refuse.
karta_manifest() {
  cat <<EOF
apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: $1
  labels: {$4: "$5"}
spec:
  structureDefinition:
    rootComponent:
      name: root
      kind: {group: $2, version: v1, kind: Widget}
      statusDefinition:
        statusMappings:
          running: [{byConditions: [{type: Running, status: "True"}]}]
      specDefinition: {podTemplateSpecPath: "$3"}
EOF
}
