#!/usr/bin/env bash
# Makes the webhook's certificate for the self-signed variant: a CA (kept
# only as ca.crt; its key is deleted) and a serving certificate for the
# webhook Service in NAMESPACE, both valid for 365 days, written beside
# this script as ca.crt, tls.crt and tls.key.
#   make-certificate.sh NAMESPACE [OUT_DIR]
set -euo pipefail
ns="${1:?namespace of the daemon (the namespace of the overlay, e.g. workloadmap)}"
out="${2:-$(cd "$(dirname "$0")" && pwd)}"
service="workloadmapd-webhook.$ns.svc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
  -subj "/CN=workloadmapd-webhook-ca" -keyout "$tmp/ca.key" -out "$tmp/ca.crt" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$service" \
  -keyout "$tmp/tls.key" -out "$tmp/tls.csr" 2>/dev/null
openssl x509 -req -in "$tmp/tls.csr" -CA "$tmp/ca.crt" -CAkey "$tmp/ca.key" -CAcreateserial \
  -days 365 -out "$tmp/tls.crt" \
  -extfile <(printf 'subjectAltName=DNS:%s,DNS:%s.cluster.local\nextendedKeyUsage=serverAuth\n' \
    "$service" "$service") 2>/dev/null
cp "$tmp/ca.crt" "$tmp/tls.crt" "$tmp/tls.key" "$out/"
chmod 600 "$out/tls.key"
echo "wrote $out/ca.crt, tls.crt and tls.key for $service"
