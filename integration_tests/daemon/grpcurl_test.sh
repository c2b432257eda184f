#!/usr/bin/env bash
# grpcurl (built with `go install` from the Go module proxy) against the real
# workloadmapd: services listed and ResolveWorkload called through server
# reflection, without proto files, against the testbed's apiserver; then
# TLS and mutual TLS on a snapshot daemon: files refused at start, and a
# renewed certificate served without a restart.
#
#   grpcurl_test.sh TESTBED_DIR BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
grpcurl=$("$repo/scripts/build-grpcurl")
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-grpcurl.XXXXXX)
cleanup() {
  stop_daemons
  rm -rf "$work"
}
trap cleanup EXIT
source_testbed "$testbed"

# --- Reflection against the real apiserver ---------------------------------
ns=grpcurl-$RANDOM
kubectl create namespace "$ns" >/dev/null
"$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" >/dev/null
port=$(free_port)
start_daemon "$work/plain.log" --kubeconfig "$KUBECONFIG" --listen "127.0.0.1:$port"

services=$("$grpcurl" -plaintext "127.0.0.1:$port" list)
for service in workloadmap.v1.WorkloadMap grpc.health.v1.Health grpc.reflection.v1alpha.ServerReflection; do
  grep -qx "$service" <<<"$services" || fail "grpcurl list lacks $service: $services"
done
"$grpcurl" -plaintext "127.0.0.1:$port" describe workloadmap.v1.WorkloadMap.ResolveWorkload |
  grep -q 'rpc ResolveWorkload' || fail "describe through reflection"
health=$("$grpcurl" -plaintext -d '{"service": "workloadmap.v1.WorkloadMap"}' "127.0.0.1:$port" \
  grpc.health.v1.Health/Check)
jq -e '.status == "SERVING"' <<<"$health" >/dev/null || fail "health: $health"
resolved=$("$grpcurl" -plaintext -d "{\"ref\": {\"namespace\": \"$ns\", \"resource\": \"jobsets\", \"name\": \"demo\"}}" \
  "127.0.0.1:$port" workloadmap.v1.WorkloadMap/ResolveWorkload)
jq -e '.workload.resources.quantities["nvidia.com/gpu"] == "12"' <<<"$resolved" >/dev/null ||
  fail "ResolveWorkload: $resolved"
jq -e '.workload.status.matched_statuses == ["Running"]' <<<"$resolved" >/dev/null ||
  fail "ResolveWorkload status: $resolved"
# A NOT_FOUND comes back as grpcurl's error with the code.
if out=$("$grpcurl" -plaintext -d "{\"ref\": {\"namespace\": \"$ns\", \"kind\": \"JobSet\", \"name\": \"nope\"}}" \
  "127.0.0.1:$port" workloadmap.v1.WorkloadMap/ResolveWorkload 2>&1); then
  fail "resolving a missing JobSet succeeded: $out"
fi
grep -q 'NotFound' <<<"$out" || fail "expected NotFound: $out"
"$repo/integration_tests/seed/delete-demo.sh" --namespace "$ns" >/dev/null
echo "ok: reflection, health and ResolveWorkload through grpcurl"

# --- TLS and mutual TLS ------------------------------------------------------
mkdir -p "$work/pki" "$work/manifests"
cp "$repo/integration_tests/seed/cluster-state.yaml" "$work/manifests/"
cd "$work/pki"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 -subj /CN=wm-test-ca 2>/dev/null
for name in server renewed client; do
  openssl req -newkey rsa:2048 -nodes -keyout $name.key -out $name.csr -subj /CN=$name 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >$name.ext
  openssl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $name.crt -days 1 \
    -extfile $name.ext 2>/dev/null
done
cd - >/dev/null

port=$(free_port)
start_daemon "$work/tls.log" --snapshot "$work/manifests" --listen "127.0.0.1:$port" \
  --tls-cert "$work/pki/server.crt" --tls-key "$work/pki/server.key"
"$grpcurl" -cacert "$work/pki/ca.crt" "127.0.0.1:$port" list | grep -q workloadmap.v1.WorkloadMap ||
  fail "TLS call"
if "$grpcurl" -plaintext "127.0.0.1:$port" list >/dev/null 2>&1; then fail "plaintext accepted on a TLS port"; fi
echo "ok: TLS"

port=$(free_port)
start_daemon "$work/mtls.log" --snapshot "$work/manifests" --listen "127.0.0.1:$port" \
  --tls-cert "$work/pki/server.crt" --tls-key "$work/pki/server.key" \
  --tls-client-ca "$work/pki/ca.crt" --tls-require-client-cert
if "$grpcurl" -cacert "$work/pki/ca.crt" "127.0.0.1:$port" list >/dev/null 2>&1; then
  fail "mTLS accepted a client without a certificate"
fi
"$grpcurl" -cacert "$work/pki/ca.crt" -cert "$work/pki/client.crt" -key "$work/pki/client.key" \
  -d '{"ref": {"kind": "JobSet", "name": "demo"}}' "127.0.0.1:$port" \
  workloadmap.v1.WorkloadMap/ResolveWorkload | jq -e '.workload.ref.name == "demo"' >/dev/null ||
  fail "mTLS call with a client certificate"
echo "ok: mutual TLS"

# Files that do not load stop the daemon at start, naming the flag.
refused() {
  local want=$1
  shift
  if "$build/bin/workloadmapd" --metrics-address off --snapshot "$work/manifests" \
    --listen "127.0.0.1:$(free_port)" "$@" 2>"$work/refused.log"; then
    fail "workloadmapd started with $*"
  fi
  grep -qF -- "$want" "$work/refused.log" || { cat "$work/refused.log"; fail "no '$want' in the error"; }
}
pki=$work/pki
refused "--tls-key $pki/missing.key: No such file or directory" \
  --tls-cert "$pki/server.crt" --tls-key "$pki/missing.key"
refused "does not load" --tls-cert "$pki/server.crt" --tls-key "$pki/client.key"
refused "--tls-client-ca $pki/server.csr: holds no PEM certificate" \
  --tls-cert "$pki/server.crt" --tls-key "$pki/server.key" --tls-client-ca "$pki/server.csr"
echo "ok: TLS files that do not load are refused at start"

# A renewed certificate (a Secret volume swaps its files at once) is served
# to new connections without a restart, and calls go on.
mkdir "$work/live"
cp "$pki/server.crt" "$work/live/tls.crt"
cp "$pki/server.key" "$work/live/tls.key"
port=$(free_port)
start_daemon "$work/renew.log" --snapshot "$work/manifests" --listen "127.0.0.1:$port" \
  --tls-cert "$work/live/tls.crt" --tls-key "$work/live/tls.key"
served() {
  openssl s_client -connect "127.0.0.1:$port" -CAfile "$pki/ca.crt" </dev/null 2>/dev/null |
    openssl x509 -noout -subject
}
[[ $(served) == "subject=CN = server" ]] || fail "served before the renewal: $(served)"
cp "$pki/renewed.crt" "$work/live/tls.crt.new"
cp "$pki/renewed.key" "$work/live/tls.key.new"
mv "$work/live/tls.key.new" "$work/live/tls.key"
mv "$work/live/tls.crt.new" "$work/live/tls.crt"
for _ in $(seq 100); do
  [[ $(served) == "subject=CN = renewed" ]] && break
  sleep 0.1
done
[[ $(served) == "subject=CN = renewed" ]] || fail "the renewed certificate is not served: $(served)"
"$grpcurl" -cacert "$pki/ca.crt" -d '{"ref": {"kind": "JobSet", "name": "demo"}}' "127.0.0.1:$port" \
  workloadmap.v1.WorkloadMap/ResolveWorkload | jq -e '.workload.ref.name == "demo"' >/dev/null ||
  fail "a call after the renewal"
echo "ok: a renewed certificate is served without a restart"
echo "grpcurl tests passed"
