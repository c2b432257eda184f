#!/usr/bin/env bash
# The Karta admission webhook end to end: the testbed's real apiserver calls
# workloadmapd's webhook over HTTPS (a CA and a serving certificate made
# here with openssl), and kubectl sees what a user would:
#  1. an invalid Karta is refused, the message naming the field paths;
#  2. a valid one is created; an update that leaves the spec alone is
#     allowed even for an object the checks would refuse now;
#  3. a renewed certificate is served without a restart (the serial the
#     apiserver's TLS client sees changes) and the apiserver keeps calling;
#  4. a body that is not an AdmissionReview is answered 400, and the daemon
#     goes on serving.
# The webhook configuration selects only this test's Kartas (objectSelector),
# so other tests never depend on this daemon.
#
#   webhook_test.sh TESTBED_DIR BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
build="$(cd "${2:?build directory}" && pwd)"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
source_testbed "$testbed"
work=$(mktemp -d /tmp/wm-webhook.XXXXXX)
id="webhook-$RANDOM"
webhook="$id.workloadmap.run.ai"

cleanup() {
  kubectl delete validatingwebhookconfiguration "$id" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete karta -l "wm-webhook-test=$id" --ignore-not-found >/dev/null 2>&1 || true
  stop_daemons
  rm -rf "$work"
}
trap cleanup EXIT

# --- certificates: a CA, and a serving certificate for 127.0.0.1 -------------
make_test_ca "$work"
make_serving_cert "$work" 1001
served_serial() {
  openssl s_client -connect "127.0.0.1:$port" -CAfile "$work/ca.crt" </dev/null 2>/dev/null |
    openssl x509 -noout -serial
}

port=$(free_port)
start_daemon "$work/daemon.log" --kubeconfig "$WM_TESTBED_DIR/kubeconfig" \
  --listen "127.0.0.1:$(free_port)" --webhook-address "127.0.0.1:$port" \
  --webhook-tls-cert "$work/tls.crt" --webhook-tls-key "$work/tls.key"
[[ "$(served_serial)" == "serial=03E9" ]] || fail "the webhook does not serve the certificate made for it"

kubectl apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $id
webhooks:
  - name: $webhook
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 5
    objectSelector:
      matchLabels: {wm-webhook-test: $id}
    rules:
      - apiGroups: [run.ai]
        apiVersions: [v1alpha1]
        resources: [kartas]
        operations: [CREATE, UPDATE]
    clientConfig:
      url: https://127.0.0.1:$port/validate-karta
      caBundle: $(base64 -w0 <"$work/ca.crt")
EOF

karta() {  # karta NAME TEMPLATE_PATH: a Karta of this test on stdout
  karta_manifest "$1" webhook-test.run.ai "$2" wm-webhook-test "$id"
}

# --- 1. an invalid Karta is refused with its field paths ---------------------
# The apiserver loads a new webhook configuration within a moment: until it
# does, the invalid Karta may be created (and is deleted, and tried again).
refused=""
for _ in $(seq 100); do
  if out=$(karta "$id-broken" ".spec.template | input" | kubectl apply -f - 2>&1); then
    kubectl delete karta "$id-broken" >/dev/null
    sleep 0.1
    continue
  fi
  refused=$out
  break
done
[[ -n "$refused" ]] || fail "the invalid Karta was never refused"
grep -q "admission webhook \"$webhook\" denied the request" <<<"$refused" ||
  fail "not refused by the webhook: $refused"
grep -q 'spec.structureDefinition.rootComponent.specDefinition.podTemplateSpecPath' <<<"$refused" ||
  fail "the refusal does not name the field path: $refused"
echo "ok: an invalid Karta is refused by the webhook with its field path"

# --- 2. a valid one passes; a spec-preserving update of any object passes ----
karta "$id-valid" ".spec.template" | kubectl apply -f - >/dev/null ||
  fail "a valid Karta was refused"
kubectl label karta "$id-valid" team=a >/dev/null || fail "a label update was refused"
kubectl get karta "$id-valid" >/dev/null
echo "ok: a valid Karta is created and a label update is allowed"

# --- 3. a renewed certificate is served without a restart --------------------
make_serving_cert "$work" 1002
for _ in $(seq 50); do
  [[ "$(served_serial)" == "serial=03EA" ]] && break
  sleep 0.1
done
[[ "$(served_serial)" == "serial=03EA" ]] || fail "the renewed certificate is not served: $(served_serial)"
karta "$id-broken" ".spec.template | input" | kubectl apply -f - >/dev/null 2>&1 &&
  fail "after the renewal an invalid Karta was accepted"
karta "$id-valid2" ".spec.template" | kubectl apply -f - >/dev/null ||
  fail "after the renewal a valid Karta was refused"
echo "ok: a renewed certificate is served without a restart, and the apiserver keeps calling"

# --- 4. garbage is answered 400 and the daemon serves on ---------------------
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.crt" \
  -H 'Content-Type: application/json' -d '{"kind":"NotAReview"}' \
  "https://127.0.0.1:$port/validate-karta")
[[ "$code" == 400 ]] || fail "a body that is not an AdmissionReview got HTTP $code"
karta "$id-broken" ".spec.template | input" | kubectl apply -f - >/dev/null 2>&1 &&
  fail "an invalid Karta was accepted after a bad request"
echo "ok: a body that is not an AdmissionReview is answered 400 and the webhook serves on"
echo "webhook tests passed"
