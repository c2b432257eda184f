#!/usr/bin/env bash
# The deployment of workloadmapd (deploy/) against the testbed's real
# kube-apiserver, which authorizes with RBAC:
#  1. every overlay (and each with the patch-permission component) builds
#     with kubectl's kustomize and passes a server-side dry-run apply, with
#     no Pod Security "restricted" warning;
#  2. the base's ServiceAccount, ClusterRole and ClusterRoleBinding applied
#     for real; workloadmapd run with a token of that ServiceAccount syncs
#     every kind the catalog needs (Secrets excepted, forbidden on purpose)
#     and resolves the seed JobSet (12 GPUs): the RBAC is enough;
#  3. an applied MutatePodSpecs gets PERMISSION_DENIED: the RBAC is read-only;
#  4. with the patch-permission component's RBAC, the same call is applied;
#  4b. the access-control component grants the least it needs, and with it
#     the daemon authenticates callers with TokenReview and applies a
#     caller's mutation as the caller (impersonation, shown in managedFields);
#  5. the catalog's kinds and the ClusterRoles match both ways (nothing
#     missing, nothing extra), and only read verbs (resp. patch) are granted;
#  4f. the grpc-tls component: TLS files from a Secret cert-manager renews,
#     readiness from /readyz (the kubelet's gRPC probe speaks no TLS);
#  6. every shared library the shipped binaries load comes from a package the
#     Dockerfile's runtime stage installs (or the base image has), and the
#     build stage's copied sources configure with CMake. (No Docker engine
#     here: the image itself is not built.)
#
#   deploy_test.sh TESTBED_DIR BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="$(cd "${1:?testbed directory}" && pwd)"
build="$(cd "${2:?build directory}" && pwd)"
grpcurl=$("$repo/scripts/build-grpcurl")
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-deploy.XXXXXX)
source_testbed "$testbed"

ns="deploy-test-$$-$RANDOM"
suffix="-$ns"
sa="workloadmapd$suffix"
daemon_pid=""
leader_pid=""
cleanup() {
  local status=$?
  for pid in $daemon_pid $leader_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if kubectl get namespace "$ns" >/dev/null 2>&1; then
    delete_demos "$ns" demo gang
    kubectl delete serviceaccount -n "$ns" -l "wm-deploy-test=$ns" --ignore-not-found >/dev/null || true
    delete_namespace "$ns"
  fi
  kubectl delete clusterrolebinding,clusterrole,karta -l "wm-deploy-test=$ns" --ignore-not-found \
    >/dev/null || true
  kubectl delete karta -l workloadmap.run.ai/catalog=true --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# Objects of a kustomize output, as a JSON array.
to_json() { kubectl create --dry-run=client -o json -f - | jq -s .; }
# start_sa_leader LOG ARGS...: workloadmapd as the ServiceAccount (its
# token), campaigning for this test's Lease with short timings, ARGS added;
# its PID in leader_pid, ready when this returns.
start_sa_leader() {
  local log=$1
  shift
  POD_NAME=deploy-test "$build/bin/workloadmapd" --kubeconfig "$work/sa.kubeconfig" \
    --listen "127.0.0.1:$(free_port)" --leader-elect \
    --leader-election-namespace "$ns" --leader-election-lease "workloadmapd$suffix" \
    --leader-election-retry-period=300ms --leader-election-renew-deadline=2s \
    --leader-election-lease-duration=3s "$@" 2>"$log" &
  leader_pid=$!
  wait_ready "$log" "$leader_pid"
}
# retarget NAME RESOURCE [COMPONENT...]: kustomize output of deploy/RESOURCE
# (plus the components; empty ones skipped) moved into the test namespace,
# cluster-scoped names suffixed and everything labelled for cleanup, so
# parallel runs and the real deployment never meet. deploy/ is the
# repository's, or $deploy_root (a copy holding generated certificates).
retarget() {
  local dir="$work/kustomize-$1" resource=$2 rel c components=()
  shift 2
  for c in "$@"; do
    if [[ -n $c ]]; then components+=("$c"); fi
  done
  mkdir -p "$dir"
  rel=$(realpath --relative-to="$dir" "${deploy_root:-$repo/deploy}")
  {
    echo "apiVersion: kustomize.config.k8s.io/v1beta1"
    echo "kind: Kustomization"
    echo "namespace: $ns"
    echo "nameSuffix: $suffix"
    echo "labels: [{pairs: {wm-deploy-test: $ns}}]"
    echo "resources: [$rel/$resource]"
    if ((${#components[@]})); then
      c=$(printf "$rel/%s, " "${components[@]}")
      echo "components: [${c%, }]"
    fi
  } >"$dir/kustomization.yaml"
  kubectl kustomize "$dir"
}

# --- 1. Overlays: build, and server-side dry-run apply ----------------------
kubectl create namespace "$ns" >/dev/null
# Pod Security warnings for the restricted level on the Deployments' pod
# templates (enforcement applies to pods, which a dry-run never creates).
kubectl label namespace "$ns" pod-security.kubernetes.io/warn=restricted >/dev/null
for overlay in standalone sidecar; do
  kubectl kustomize "$repo/deploy/overlays/$overlay" >"$work/$overlay.yaml" ||
    fail "kubectl kustomize deploy/overlays/$overlay"
  for component in "" patch-permission access-control leader-election karta-operator \
    catalog-publisher pod-groups; do
    # access-control and leader-election patch the standalone Deployment's
    # container.
    [[ "$overlay/$component" == sidecar/access-control ]] && continue
    [[ "$overlay/$component" == sidecar/leader-election ]] && continue
    [[ "$overlay/$component" == sidecar/catalog-publisher ]] && continue
    what="$overlay${component:++$component}"
    retarget "$what" "overlays/$overlay" "${component:+overlays/$component}" >"$work/$what.retargeted.yaml"
    if ! kubectl apply --server-side --dry-run=server --field-manager=deploy-test \
      -f "$work/$what.retargeted.yaml" >"$work/$what.out" 2>"$work/$what.err"; then
      cat "$work/$what.err" >&2
      fail "server-side dry-run of $what"
    fi
    if grep -i 'warning' "$work/$what.err" >&2; then fail "$what: warnings from the apiserver"; fi
  done
done
# What the overlays are: namespaces, the sidecar's shape.
to_json <"$work/standalone.yaml" >"$work/standalone.json"
to_json <"$work/sidecar.yaml" >"$work/sidecar.json"
jq -e 'map(select(.metadata.namespace != null) | .metadata.namespace) | unique == ["workloadmap"]' \
  "$work/standalone.json" >/dev/null || fail "standalone: not all in namespace workloadmap"
jq -e '[.[] | select(.kind == "Deployment" or .kind == "Service") | .kind] | sort == ["Deployment", "Service"]' \
  "$work/standalone.json" >/dev/null || fail "standalone: expected one Deployment and one Service"
jq -e '
  [.[] | select(.kind == "Service")] == [] and
  (.[] | select(.kind == "Deployment") | .spec.template.spec) as $pod |
  ($pod.initContainers[] | select(.name == "workloadmapd")) as $wm |
  $wm.restartPolicy == "Always" and
  ($wm.args | index("--listen=unix:/run/workloadmap/workloadmapd.sock") != null) and
  ($wm.startupProbe.grpc.service == "workloadmap.v1.WorkloadMap") and
  ([$pod.containers[].volumeMounts[]? | select(.mountPath == "/run/workloadmap")] | length) == 1 and
  ([$pod.volumes[] | select(.emptyDir != null)] | length) == 1' \
  "$work/sidecar.json" >/dev/null || fail "sidecar: not a native sidecar sharing /run/workloadmap"
echo "ok: overlays build and pass a server-side dry-run (standalone and sidecar, each with patch-permission and karta-operator; standalone with access-control and with leader-election)"
# (The seed's pods are not restricted; no warnings for them.)
kubectl label namespace "$ns" pod-security.kubernetes.io/warn- >/dev/null

# --- 2. The base RBAC is enough ----------------------------------------------
retarget base base | to_json >"$work/base.json"
jq '.[] | select(.kind == "ServiceAccount" or .kind == "ClusterRole" or .kind == "ClusterRoleBinding")' \
  "$work/base.json" | kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
token=$(kubectl create token "$sa" -n "$ns" --duration=1h)
server=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')
cat >"$work/sa.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster: {server: "$server", certificate-authority: "$ca"}
users:
- name: $sa
  user: {token: "$token"}
contexts:
- name: sa
  context: {cluster: testbed, user: $sa, namespace: $ns}
current-context: sa
EOF
as_sa() { kubectl --kubeconfig "$work/sa.kubeconfig" "$@"; }
who=$(as_sa auth whoami -o jsonpath='{.status.userInfo.username}')
[[ "$who" == "system:serviceaccount:$ns:$sa" ]] || fail "token authenticates as '$who'"
[[ $(as_sa auth can-i watch customresourcedefinitions.apiextensions.k8s.io 2>/dev/null) == yes ]] ||
  fail "the ServiceAccount cannot watch CRDs"
for verb_resource in "list secrets" "create pods" "patch jobsets.jobset.x-k8s.io" "delete pods"; do
  # shellcheck disable=SC2086  # verb and resource
  if [[ $(as_sa auth can-i $verb_resource 2>/dev/null) != no ]]; then
    fail "the base ServiceAccount may $verb_resource"
  fi
done

"$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" >/dev/null
port=$(free_port)
metrics_port=$(free_port)
"$build/bin/workloadmapd" --kubeconfig "$work/sa.kubeconfig" --listen "127.0.0.1:$port" \
  --metrics-address "127.0.0.1:$metrics_port" 2>"$work/daemon.log" &
daemon_pid=$!
wait_ready "$work/daemon.log" "$daemon_pid"
curl -fsS "http://127.0.0.1:$metrics_port/debug/cache" | jq '.[keys[0]]' >"$work/cache.json"
# Every kind the testbed serves is listed and watched; Secrets are refused.
jq -e 'to_entries | map(select(.value.served)) |
  all(if .key == "v1/Secret" then .value.state == "Forbidden" else .value.state == "Synced" end)' \
  "$work/cache.json" >/dev/null || {
  jq -c 'to_entries[] | select(.value.served) | [.key, .value.state, .value.message]' "$work/cache.json" >&2
  fail "with the base ClusterRole, not every served kind synced (or Secrets did)"
}
resolve() {
  "$grpcurl" -plaintext -d "{\"ref\": {\"namespace\": \"$ns\", \"kind\": \"JobSet\", \"name\": \"demo\"}}" \
    "127.0.0.1:$port" workloadmap.v1.WorkloadMap/ResolveWorkload
}
resolved=$(resolve)
jq -e '.workload.resources.quantities["nvidia.com/gpu"] == "12" and
  .workload.status.matched_statuses == ["Running"]' <<<"$resolved" >/dev/null ||
  fail "ResolveWorkload with the ServiceAccount's token: $resolved"
echo "ok: workloadmapd with the base ServiceAccount's token syncs every served kind but Secrets and resolves jobset/demo (12 GPUs)"

# --- 3. ... and read-only -----------------------------------------------------
mutate() {  # mutate APPLY
  "$grpcurl" -plaintext -d "{\"ref\": {\"namespace\": \"$ns\", \"kind\": \"JobSet\", \"name\": \"demo\"},
    \"changes\": [{\"scheduler_name\": \"kai-scheduler\"}], \"apply\": $1}" \
    "127.0.0.1:$port" workloadmap.v1.WorkloadMap/MutatePodSpecs
}
scheduler_names() {
  kubectl get jobset demo -n "$ns" \
    -o jsonpath='{.spec.replicatedJobs[*].template.spec.template.spec.schedulerName}'
}
dry=$(mutate false)
jq -e '.applied != true' <<<"$dry" >/dev/null || fail "dry run applied: $dry"
if out=$(mutate true 2>&1); then fail "applied MutatePodSpecs succeeded with the read-only RBAC: $out"; fi
grep -q 'Code: PermissionDenied' <<<"$out" || fail "expected PermissionDenied: $out"
[[ -z "$(scheduler_names)" ]] || fail "the JobSet changed although the patch was refused"
echo "ok: an applied MutatePodSpecs is PERMISSION_DENIED with the base RBAC (a dry run works)"

# --- 4. The patch-permission component --------------------------------------
retarget patch base overlays/patch-permission | to_json >"$work/patch.json"
jq '.[] | select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
  (.metadata.name | startswith("workloadmapd-patch")))' "$work/patch.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
# The authorizer's RBAC cache follows the apiserver's watch: allow a moment.
applied=""
for _ in $(seq 50); do
  if applied=$(mutate true 2>&1); then break; fi
  grep -q 'Code: PermissionDenied' <<<"$applied" || fail "applied MutatePodSpecs: $applied"
  sleep 0.1
done
jq -e '.applied == true' <<<"$applied" >/dev/null 2>&1 || fail "not applied with patch permission: $applied"
[[ "$(scheduler_names)" == "kai-scheduler kai-scheduler" ]] ||
  fail "the JobSet's pod templates after the applied mutation: '$(scheduler_names)'"
echo "ok: with the patch-permission RBAC the mutation is applied to the JobSet"

# --- 4b. The access-control component ----------------------------------------
retarget access base overlays/access-control | to_json >"$work/access.json"
jq -e '
  ([.[] | select(.kind == "ClusterRole" and (.metadata.name | startswith("workloadmapd-access-control")))
    | .rules] == [[
    {apiGroups: ["authentication.k8s.io"], resources: ["tokenreviews"], verbs: ["create"]},
    {apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"]},
    {apiGroups: [""], resources: ["users", "groups", "serviceaccounts"], verbs: ["impersonate"]},
    {apiGroups: ["authentication.k8s.io"], resources: ["uids"], verbs: ["impersonate"]}]]) and
  (.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args |
    index("--authentication=kubernetes") != null and index("--token-audiences=workloadmap") != null)' \
  "$work/access.json" >/dev/null ||
  fail "access-control: not exactly the least rules, or the Deployment is not switched to --authentication=kubernetes"
jq '.[] | select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
  (.metadata.name | startswith("workloadmapd-access-control")))' "$work/access.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
# Callers, not the daemon, need patch now.
kubectl delete clusterrolebinding "workloadmapd-patch$suffix" >/dev/null
kill "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
"$build/bin/workloadmapd" --kubeconfig "$work/sa.kubeconfig" --listen "127.0.0.1:$port" \
  --authentication=kubernetes --token-audiences=workloadmap 2>"$work/daemon-access.log" &
daemon_pid=$!
wait_ready "$work/daemon-access.log" "$daemon_pid"
# A caller that may get and patch the JobSet, and a reader that may only get it.
for caller in caller:get,patch reader:get; do
  name=${caller%%:*}
  kubectl create serviceaccount "$name" -n "$ns" >/dev/null
  kubectl create role "$name" -n "$ns" --verb="${caller#*:}" --resource=jobsets.jobset.x-k8s.io >/dev/null
  kubectl create rolebinding "$name" -n "$ns" --role="$name" --serviceaccount="$ns:$name" >/dev/null
done
caller_token=$(kubectl create token caller -n "$ns" --audience=workloadmap --duration=10m)
reader_token=$(kubectl create token reader -n "$ns" --audience=workloadmap --duration=10m)
mutate_as() {  # mutate_as TOKEN SCHEDULER
  "$grpcurl" -plaintext ${1:+-H "authorization: Bearer $1"} \
    -d "{\"ref\": {\"namespace\": \"$ns\", \"kind\": \"JobSet\", \"name\": \"demo\"},
    \"changes\": [{\"scheduler_name\": \"$2\"}], \"apply\": true}" \
    "127.0.0.1:$port" workloadmap.v1.WorkloadMap/MutatePodSpecs
}
if out=$(mutate_as "" volcano 2>&1); then fail "a call without a token was served: $out"; fi
grep -q 'Code: Unauthenticated' <<<"$out" || fail "expected Unauthenticated without a token: $out"
# RBAC's cache follows the new Role and binding: allow a moment.
for _ in $(seq 50); do
  if applied=$(mutate_as "$caller_token" volcano 2>&1); then break; fi
  sleep 0.1
done
jq -e '.applied == true' <<<"$applied" >/dev/null 2>&1 ||
  fail "the caller's mutation (TokenReview, SubjectAccessReview, impersonated patch): $applied"
# The reader may read the JobSet (the daemon lets the call through) but not
# patch it: the apiserver itself refuses the patch made as the reader.
for _ in $(seq 50); do
  if out=$(mutate_as "$reader_token" other 2>&1); then fail "the reader's mutation was applied: $out"; fi
  grep -q 'may not get' <<<"$out" || break  # (RBAC's cache, as above)
  sleep 0.1
done
grep -q 'Code: PermissionDenied' <<<"$out" && grep -q 'the apiserver refused the patch' <<<"$out" ||
  fail "expected the apiserver's refusal of the reader's patch: $out"
[[ "$(scheduler_names)" == "volcano volcano" ]] || fail "the JobSet after the caller's mutation: '$(scheduler_names)'"
manager="workloadmap:system:serviceaccount:$ns:caller"
kubectl get jobset demo -n "$ns" -o json --show-managed-fields |
  jq -e --arg m "$manager" '[.metadata.managedFields[].manager] | index($m) != null' >/dev/null ||
  fail "managedFields do not name $manager"
grep -q '"stage":"apply"\|stage=apply' "$work/daemon-access.log" || fail "no audit line for the apply"
echo "ok: with access-control, callers are authenticated and a caller's mutation is applied as the caller ($manager)"

# --- 4c. The leader-election component ----------------------------------------
retarget leader overlays/standalone overlays/leader-election | to_json >"$work/leader.json"
jq -e '
  ([.[] | select(.kind == "Role" and (.metadata.name | startswith("workloadmapd-leader-election")))
    | .rules] == [[{apiGroups: ["coordination.k8s.io"], resources: ["leases"],
                    verbs: ["get", "create", "update"]}]]) and
  (.[] | select(.kind == "Deployment") | .spec.replicas == 2 and
    (.spec.template.spec.containers[0].args | index("--leader-elect") != null) and
    (.spec.template.spec.containers[0].env[] | select(.name == "POD_NAME") |
      .valueFrom.fieldRef.fieldPath == "metadata.name"))' "$work/leader.json" >/dev/null ||
  fail "leader-election: not exactly the Lease rule, or the Deployment lacks 2 replicas, --leader-elect or POD_NAME"
leader_metrics=$(free_port)
start_sa_leader "$work/daemon-leader.log" --metrics-address "127.0.0.1:$leader_metrics"
leading() { curl -s "http://127.0.0.1:$leader_metrics/debug/leader" | jq -r '.leading'; }
# With the base RBAC alone the Lease is refused: the replica serves, and
# does not lead.
sleep 1
[[ "$(leading)" == false ]] || fail "led without the leader-election Role"
jq '.[] | select((.kind == "Role" or .kind == "RoleBinding") and
  (.metadata.name | startswith("workloadmapd-leader-election")))' "$work/leader.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
for _ in $(seq 100); do
  [[ "$(leading)" == true ]] && break
  sleep 0.1
done
[[ "$(leading)" == true ]] || { cat "$work/daemon-leader.log" >&2; fail "no lead with the leader-election Role"; }
holder=$(kubectl get lease "workloadmapd$suffix" -n "$ns" -o jsonpath='{.spec.holderIdentity}')
[[ "$holder" == deploy-test-* ]] || fail "the Lease's holder is '$holder', not the POD_NAME-based identity"
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
[[ -z "$(kubectl get lease "workloadmapd$suffix" -n "$ns" -o jsonpath='{.spec.holderIdentity}')" ]] ||
  fail "the Lease was not given up on SIGTERM"
echo "ok: with the leader-election Role the ServiceAccount's replica takes the Lease (refused without it) and gives it up on SIGTERM"

# --- 4d. The karta-operator component -----------------------------------------
retarget karta overlays/standalone overlays/karta-operator | to_json >"$work/karta.json"
jq -e '
  [.[] | select(.kind == "ClusterRole" and (.metadata.name | startswith("workloadmapd-karta-operator")))
    | .rules] == [[{apiGroups: ["run.ai"], resources: ["kartas"], verbs: ["patch"]},
                   {apiGroups: ["run.ai"], resources: ["kartas/status"], verbs: ["patch"]},
                   {apiGroups: [""], resources: ["events"], verbs: ["create"]}]]' \
  "$work/karta.json" >/dev/null || fail "karta-operator: not exactly patch on kartas and kartas/status, create on events"
# A Karta of a kind no test serves, with an expression the checks refuse.
karta="deploy-test$suffix"
karta_manifest "$karta" deploy-test.run.ai ".spec.template | input" wm-deploy-test "$ns" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
karta_metrics=$(free_port)
start_sa_leader "$work/daemon-karta.log" --metrics-address "127.0.0.1:$karta_metrics"
for _ in $(seq 100); do
  [[ "$(curl -s "http://127.0.0.1:$karta_metrics/debug/leader" | jq -r '.leading')" == true ]] && break
  sleep 0.1
done
karta_failures() {
  curl -s "http://127.0.0.1:$karta_metrics/metrics" |
    awk '/^workloadmap_karta_operator_failures_total/ {s += $2} END {print s + 0}'
}
# With the leader-election Role alone, the leader's Karta writes are refused.
for _ in $(seq 100); do
  (($(karta_failures) > 0)) && break
  sleep 0.1
done
(($(karta_failures) > 0)) || fail "the Karta operator's writes were not refused without its ClusterRole"
[[ "$(kubectl get karta "$karta" -o json | jq -r '.status.conditions // [] | length')" == 0 ]] ||
  fail "the Karta got conditions without the karta-operator ClusterRole"
grep -q 'karta operator.*HTTP 403' "$work/daemon-karta.log" || fail "the refused write is not in the log"
jq '.[] | select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
  (.metadata.name | startswith("workloadmapd-karta-operator")))' "$work/karta.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
validated() {
  kubectl get karta "$karta" -o json |
    jq -r '.status.conditions // [] | map(select(.type == "Validated"))[0].status // ""'
}
# The refused Karta is retried with backoff (at most 60 s); the daemon looks
# at every Karta again when it starts leading: a restart is quicker.
for _ in $(seq 300); do
  [[ "$(validated)" == False ]] && break
  sleep 0.2
done
[[ "$(validated)" == False ]] || { cat "$work/daemon-karta.log" >&2; fail "no Validated=False with the karta-operator ClusterRole"; }
kubectl get karta "$karta" -o json | jq -e '
  .metadata.labels["run.ai/karta-kind"] == "Widget" and
  (.status.conditions | map(select(.type == "Validated"))[0].message | contains("podTemplateSpecPath"))' \
  >/dev/null || fail "the Karta lacks its labels or the finding's field path"
events=0
for _ in $(seq 50); do
  events=$(kubectl get events -n default -o json \
    --field-selector "involvedObject.kind=Karta,involvedObject.name=$karta" | jq '.items | length')
  ((events > 0)) && break
  sleep 0.2
done
[[ "$events" == 1 ]] || fail "expected one Warning event for the finding, got $events"
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
kubectl delete karta "$karta" >/dev/null
echo "ok: with the karta-operator ClusterRole the leader labels the Karta, writes Validated=False with the field path and one event (refused without it)"

# --- 4e. The admission-webhook components -------------------------------------
# Self-signed: the certificate made by its script (into a copy of deploy/:
# the files are per cluster and never in the repository), then a
# server-side dry run. No RBAC: the apiserver calls the daemon.
cp -r "$repo/deploy" "$work/deploy-webhook"
"$work/deploy-webhook/overlays/admission-webhook/self-signed/make-certificate.sh" "$ns" >/dev/null
for variant in self-signed cert-manager; do
  deploy_root="$work/deploy-webhook" retarget "webhook-$variant" overlays/standalone \
    overlays/admission-webhook/pods "overlays/admission-webhook/$variant" >"$work/webhook-$variant.yaml" ||
    fail "kubectl kustomize with admission-webhook/$variant"
  # (Not to_json: the testbed serves no cert-manager kinds.)
  python3 -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))' \
    <"$work/webhook-$variant.yaml" >"$work/webhook-$variant.json"
  jq -e '
    (.[] | select(.kind == "ValidatingWebhookConfiguration") | .webhooks[0] |
      .failurePolicy == "Fail" and .sideEffects == "None" and .timeoutSeconds == 5 and
      .admissionReviewVersions == ["v1"] and .clientConfig.service.path == "/validate-karta" and
      .rules == [{apiGroups: ["run.ai"], apiVersions: ["v1alpha1"], resources: ["kartas"],
                  operations: ["CREATE", "UPDATE"], scope: "Cluster"}]) and
    (.[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0] |
      .failurePolicy == "Fail" and .sideEffects == "None" and .timeoutSeconds == 5 and
      .reinvocationPolicy == "Never" and .clientConfig.service.path == "/mutate-pod" and
      (.matchConditions[0].expression | contains("object.spec.schedulerName")) and
      .rules == [{apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], operations: ["CREATE"],
                  scope: "Namespaced"}]) and
    (.[] | select(.kind == "Deployment") | .spec.template.spec |
      (.containers[0].args | index("--webhook-address=0.0.0.0:9443") != null) and
      (.volumes[] | select(.name == "webhook-tls") | .secret.secretName | startswith("workloadmapd-webhook-tls"))) and
    ([.[] | select(.kind == "Service" and (.metadata.name | startswith("workloadmapd-webhook")))] | length == 1) and
    ([.[] | select(.kind | test("Role"))] | map(.metadata.name) | all(startswith("workloadmapd-webhook") | not))' \
    "$work/webhook-$variant.json" >/dev/null || fail "admission-webhook/$variant: not the webhook described in its comments"
done
# Each caBundle is the CA the serving certificate was made with.
for kind in ValidatingWebhookConfiguration MutatingWebhookConfiguration; do
  jq -r --arg kind "$kind" '.[] | select(.kind == $kind) | .webhooks[0].clientConfig.caBundle' \
    "$work/webhook-self-signed.json" | base64 -d >"$work/webhook-ca.crt"
  openssl verify -CAfile "$work/webhook-ca.crt" \
    "$work/deploy-webhook/overlays/admission-webhook/self-signed/tls.crt" >/dev/null ||
    fail "self-signed: the $kind's caBundle does not verify the serving certificate"
done
# The webhook configuration is cluster-scoped: only the dry run, never
# applied (it would send every Karta write to a daemon that is not there).
if ! kubectl apply --server-side --dry-run=server --field-manager=deploy-test \
  -f "$work/webhook-self-signed.yaml" >"$work/webhook.out" 2>"$work/webhook.err"; then
  cat "$work/webhook.err" >&2
  fail "server-side dry-run of admission-webhook/self-signed"
fi
jq -e '[.[] | select(.kind == "Certificate") | .spec.dnsNames[]?] == ["workloadmapd-webhook.workloadmap.svc"] and
  ([.[] | select(.kind | endswith("WebhookConfiguration")) | .metadata.annotations["cert-manager.io/inject-ca-from"]] ==
    ["workloadmap/workloadmapd-webhook", "workloadmap/workloadmapd-webhook"])' "$work/webhook-cert-manager.json" >/dev/null ||
  fail "cert-manager: no Certificate for the webhook Service or no CA injection"
echo "ok: the admission-webhook components build (self-signed and cert-manager, with the pods webhook), the self-signed one passes a server-side dry run with caBundles that verify its certificate"

# --- 4f. The grpc-tls component -----------------------------------------------
# Beside the webhook's (both mount a Secret: their volumes merge), then a
# server-side dry run of all but cert-manager's kinds, which the testbed
# does not serve, the cluster-scoped webhook configurations, and the
# Namespace (this test's own, whose demo pods its Pod Security labels would
# warn about).
deploy_root="$work/deploy-webhook" retarget grpc-tls overlays/standalone overlays/grpc-tls \
  overlays/admission-webhook/cert-manager >"$work/grpc-tls.yaml" ||
  fail "kubectl kustomize with grpc-tls and admission-webhook/cert-manager"
python3 -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))' \
  <"$work/grpc-tls.yaml" >"$work/grpc-tls.json"
jq -e '
  (.[] | select(.kind == "Deployment") | .spec.template.spec |
    (.containers[0].args | index("--tls-cert=/etc/workloadmap/grpc/tls.crt") != null and
      index("--tls-key=/etc/workloadmap/grpc/tls.key") != null and
      index("--tls-client-ca=/etc/workloadmap/grpc/ca.crt") != null and
      index("--webhook-address=0.0.0.0:9443") != null) and
    ([.containers[0].volumeMounts[] | .mountPath] | sort == ["/etc/workloadmap/grpc", "/etc/workloadmap/webhook"]) and
    ([.volumes[] | .secret.secretName | sub("-deploy-test.*"; "")] | sort ==
      ["workloadmapd-grpc-tls", "workloadmapd-webhook-tls"]) and
    (.containers[0].readinessProbe | .grpc == null and .httpGet == {path: "/readyz", port: "metrics"} and
      .failureThreshold == 2)) and
  ([.[] | select(.kind == "Certificate" and (.spec.secretName | startswith("workloadmapd-grpc-tls"))) |
    .spec.dnsNames] == [["workloadmapd.workloadmap.svc", "workloadmapd.workloadmap.svc.cluster.local"]])' \
  "$work/grpc-tls.json" >/dev/null || fail "grpc-tls: not the TLS described in its comments"
python3 -c 'import sys, yaml; yaml.safe_dump_all([d for d in yaml.safe_load_all(sys.stdin)
  if d and not d["apiVersion"].startswith("cert-manager.io/")
  and not d["kind"].endswith("WebhookConfiguration") and d["kind"] != "Namespace"], sys.stdout)' \
  <"$work/grpc-tls.yaml" >"$work/grpc-tls.dry-run.yaml"
if ! kubectl apply --server-side --dry-run=server --field-manager=deploy-test \
  -f "$work/grpc-tls.dry-run.yaml" >"$work/grpc-tls.out" 2>"$work/grpc-tls.err"; then
  cat "$work/grpc-tls.err" >&2
  fail "server-side dry-run of grpc-tls"
fi
if grep -i 'warning' "$work/grpc-tls.err" >&2; then fail "grpc-tls: warnings from the apiserver"; fi
echo "ok: the grpc-tls component builds beside the webhook's (both Secrets mounted, readiness over HTTP) and passes a server-side dry run"

# --- 4f. The catalog-publisher component --------------------------------------
retarget publisher overlays/standalone overlays/catalog-publisher | to_json >"$work/publisher.json"
jq -e '
  ([.[] | select(.kind == "ClusterRole" and (.metadata.name | startswith("workloadmapd-catalog-publisher")))
    | .rules] == [[{apiGroups: ["run.ai"], resources: ["kartas"], verbs: ["get", "create", "patch"]}]]) and
  (.[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args | index("--publish-catalog") != null)' \
  "$work/publisher.json" >/dev/null || fail "catalog-publisher: not exactly get, create and patch on kartas, or no --publish-catalog"
publisher() {  # publisher LOG: the ServiceAccount's leader, publishing
  start_sa_leader "$1" --metrics-address off --publish-catalog
  for _ in $(seq 100); do
    grep -q 'catalog publication' "$1" && return 0
    sleep 0.1
  done
  cat "$1" >&2
  fail "the leader did not try to publish the catalog"
}
publisher "$work/daemon-publish-refused.log"
grep -q 'catalog karta.*HTTP 403' "$work/daemon-publish-refused.log" ||
  fail "publishing was not refused without the catalog-publisher ClusterRole"
[[ "$(kubectl get kartas -l workloadmap.run.ai/catalog=true --no-headers 2>/dev/null | wc -l)" == 0 ]] ||
  fail "Kartas were published without the ClusterRole"
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
jq '.[] | select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
  (.metadata.name | startswith("workloadmapd-catalog-publisher")))' "$work/publisher.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
sleep 1  # the authorizer's RBAC cache follows the apiserver's watch
publisher "$work/daemon-publish.log"
shipped=$("$build/bin/wmctl" definitions --offline -o json | jq .count)
grep -q "catalog publication.*created.$shipped" "$work/daemon-publish.log" ||
  { grep 'catalog' "$work/daemon-publish.log" >&2; fail "the leader did not publish the $shipped catalog Kartas with the ClusterRole"; }
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
kubectl delete karta -l workloadmap.run.ai/catalog=true >/dev/null
echo "ok: with the catalog-publisher ClusterRole the leader publishes the $shipped catalog Kartas (refused without it)"

# --- 4g. The pod-groups component -----------------------------------------------
retarget groups overlays/standalone overlays/pod-groups | to_json >"$work/groups.json"
jq -e '
  [.[] | select(.kind == "ClusterRole" and (.metadata.name | startswith("workloadmapd-pod-groups")))
    | .rules] == [[{apiGroups: ["scheduling.run.ai", "scheduling.volcano.sh", "scheduling.x-k8s.io"],
                    resources: ["podgroups"], verbs: ["get", "list", "watch", "create", "patch"]},
                   {apiGroups: [""], resources: ["pods"], verbs: ["patch"]},
                   {apiGroups: ["scheduling.k8s.io"], resources: ["priorityclasses"], verbs: ["get"]}]]' \
  "$work/groups.json" >/dev/null ||
  fail "pod-groups: not exactly get, list, watch, create and patch on podgroups, patch on pods, get on priorityclasses"
install_coscheduling_crd "$work"
"$repo/integration_tests/seed/create-demo.sh" --namespace "$ns" --name gang \
  --scheduler-name deploy-test-scheduler >/dev/null
groups_metrics=$(free_port)
grouper() {  # grouper LOG: the ServiceAccount's leader, writing coscheduling PodGroups
  start_sa_leader "$1" --metrics-address "127.0.0.1:$groups_metrics" --no-karta-operator \
    --coscheduling-pod-groups deploy-test-scheduler
}
group_failures() {
  curl -s "http://127.0.0.1:$groups_metrics/metrics" |
    awk '/^workloadmap_pod_group_failures_total/ {s += $2} END {print s + 0}'
}
grouper "$work/daemon-groups-refused.log"
for _ in $(seq 100); do
  (($(group_failures) > 0)) && break
  sleep 0.1
done
(($(group_failures) > 0)) || fail "the PodGroup role's writes were not refused without its ClusterRole"
grep -q 'pod groups.*cannot be written' "$work/daemon-groups-refused.log" ||
  fail "the refused PodGroup role is not in the log"
[[ "$(kubectl get podgroups.scheduling.x-k8s.io -n "$ns" --no-headers 2>/dev/null | wc -l)" == 0 ]] ||
  fail "a PodGroup was written without the pod-groups ClusterRole"
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
jq '.[] | select((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and
  (.metadata.name | startswith("workloadmapd-pod-groups")))' "$work/groups.json" |
  kubectl apply --server-side --field-manager=deploy-test -f - >/dev/null
sleep 1  # the authorizer's RBAC cache follows the apiserver's watch
grouper "$work/daemon-groups.log"
labelled() {
  [[ "$(kubectl get pods -n "$ns" -l "jobset.sigs.k8s.io/jobset-name=gang,scheduling.x-k8s.io/pod-group" \
    --no-headers | wc -l)" == 3 ]]
}
for _ in $(seq 150); do
  labelled && break
  sleep 0.2
done
labelled || { cat "$work/daemon-groups.log" >&2; fail "no pod put into its PodGroup with the pod-groups ClusterRole"; }
[[ "$(kubectl get podgroups.scheduling.x-k8s.io -n "$ns" -o jsonpath='{.items[0].spec.minMember}')" == 3 ]] ||
  fail "no coscheduling PodGroup of 3 with the pod-groups ClusterRole"
kill "$leader_pid"
wait "$leader_pid" 2>/dev/null || true
echo "ok: with the pod-groups ClusterRole the leader writes the coscheduling PodGroup and labels the pods (refused without it)"

# --- 5. Catalog kinds vs the ClusterRoles, both ways --------------------------
"$build/bin/wmctl" definitions --offline -o json >"$work/definitions.json"
jq -s '
  .[0] as $defs | .[1] as $cache | .[2] as $base | .[3] as $patch |
  def gvk_key: if .group == "" then "\(.version)/\(.kind)" else "\(.group)/\(.version)/\(.kind)" end;
  # The resource name: from the apiserver discovery the daemon did, else (the
  # testbed lacks that CRD) the kind lowercased with a plural ending.
  def names: ($cache[gvk_key].resource // "") as $r |
    if $r != "" then [$r | split(".")[0]]
    else (.kind | ascii_downcase) as $k |
      [$k + "s", $k + "es", ($k | sub("y$"; "ies"))] end;
  def granted($role; $verbs): [$role.rules[] | select(.verbs as $v | $verbs | all(. as $x | $v | index($x)))
    | .apiGroups[] as $g | .resources[] | {group: $g, resource: .}];
  def role($objects; $name): $objects[] | select(.kind == "ClusterRole" and (.metadata.name | startswith($name)));
  # Each needed kind must be granted; each grant must serve a needed kind.
  def compare($needed; $granted; $what):
    ([$needed[] | . as $k | select([$granted[] | select(.group == $k.group and
        (.resource as $r | $k | names | index($r)))] == []) | "\($what): \(gvk_key) not granted"]) +
    ([$granted[] | . as $g | select([$needed[] | select(.group == $g.group and
        (names | index($g.resource)))] == []) | "\($what): \($g.group)/\($g.resource) granted but unused"]);
  [$defs.items[].spec.structureDefinition |
    .rootComponent.kind, (.childComponents // [])[].kind, (.additionalChildKinds // [])[]
    | select(. != null) | {group, version, kind}] as $catalog_kinds |
  ($catalog_kinds + [
    {group: "", version: "v1", kind: "Pod"},
    {group: "run.ai", version: "v1alpha1", kind: "Karta"},
    {group: "apiextensions.k8s.io", version: "v1", kind: "CustomResourceDefinition"}]
   | map(select(gvk_key != "v1/Secret")) | unique) as $read_kinds |
  ([$defs.items[].spec.structureDefinition.rootComponent.kind | {group, version, kind}] | unique) as $roots |
  role($base; "workloadmapd") as $reader | role($patch; "workloadmapd-patch") as $writer |
  compare($read_kinds; granted($reader; ["get", "list", "watch"]); "base ClusterRole") +
  compare($roots; granted($writer; ["patch"]); "patch ClusterRole") +
  [$reader.rules[] | select((.verbs - ["get", "list", "watch"]) != [] or (.apiGroups + .resources | index("*")))
    | "base ClusterRole: rule beyond get/list/watch: \(.)"] +
  [$writer.rules[] | select(.verbs != ["patch"] or (.apiGroups + .resources | index("*")))
    | "patch ClusterRole: rule beyond patch: \(.)"] +
  [granted($reader; ["get"])[] | select(.group == "" and .resource == "secrets") | "base ClusterRole grants Secrets"]
' "$work/definitions.json" "$work/cache.json" "$work/base.json" "$work/patch.json" >"$work/coverage.json"
if ! jq -e '. == []' "$work/coverage.json" >/dev/null; then
  jq -r '.[]' "$work/coverage.json" >&2
  fail "the ClusterRoles do not match the catalog"
fi
unserved=$(jq -r '[to_entries[] | select(.value.served | not) | .key] | join(" ")' "$work/cache.json")
echo "ok: ClusterRoles match the catalog's $(jq '.count' "$work/definitions.json") definitions both ways" \
  "(plurals by name for kinds the testbed does not serve: $unserved)"

# --- 6. The image: runtime packages and the build stage's sources ------------
dockerfile="$repo/deploy/Dockerfile"
# A stage's lines, continuation lines joined.
stage() { awk -v s="$1" '$1 == "FROM" { on = ($NF == s); next } on' "$dockerfile" |
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta'; }
runtime_packages=$(stage runtime | grep -E '^RUN .*apt-get install' | sed -E 's/.*apt-get install//; s/&&.*//' |
  tr -s ' \t' '\n' | grep -v -e '^-' -e '^$' | sort -u)
[[ -n "$runtime_packages" ]] || fail "no apt-get install in the Dockerfile's runtime stage"
# debian:bookworm-slim has these (debuerreotype's bookworm/slim/rootfs.manifest).
base_image_packages=$'libc6\nlibgcc-s1\nlibstdc++6'
# What apt installs: the listed packages and their dependencies (first
# alternative), read from this bookworm machine's package database.
closure=$runtime_packages
queue=$runtime_packages
while [[ -n "$queue" ]]; do
  next=""
  for p in $queue; do
    deps=$(dpkg-query -W -f='${Depends}, ${Pre-Depends}\n' "$p" 2>/dev/null) ||
      fail "Dockerfile runtime package $p is not a known bookworm package here"
    for d in $(tr ',' '\n' <<<"$deps" | sed -E 's/\|.*//; s/\(.*\)//; s/:any//; s/[[:space:]]//g' | grep .); do
      grep -qx -- "$d" <<<"$closure" || { closure+=$'\n'"$d"; next+=" $d"; }
    done
  done
  queue=$next
done
# Each library the binaries load, with its package: one ldd per binary and
# one dpkg -S for all (dpkg -S is slow); usr-merged paths are tried both ways.
declare -A needed_by=() loaded_by=() owner=()
for binary in workloadmapd wm-jq-worker wmctl; do
  ldd_out=$(ldd "$build/bin/$binary")
  while read -r soname; do
    lib=$(awk -v s="$soname" '$1 == s {print $3}' <<<"$ldd_out")
    [[ "$lib" == /* ]] || fail "$binary: ldd does not resolve $soname"
    needed_by[$lib]+=" $binary"
  done < <(readelf -d "$build/bin/$binary" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
  while read -r lib; do loaded_by[$lib]+=" $binary"; done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3}' <<<"$ldd_out")
done
candidates=()
for lib in "${!loaded_by[@]}"; do
  candidates+=("$lib" "$(readlink -f "$lib")" "${lib/#\/lib\//\/usr\/lib\/}" "${lib/#\/usr\/lib\//\/lib\/}")
done
while IFS= read -r line; do
  owner[${line#*: }]=${line%%[:,]*}
done < <(dpkg -S "${candidates[@]}" 2>/dev/null || true)
package_of() {
  local lib=$1 path
  for path in "$lib" "$(readlink -f "$lib")" "${lib/#\/lib\//\/usr\/lib\/}" "${lib/#\/usr\/lib\//\/lib\/}"; do
    if [[ -n "${owner[$path]:-}" ]]; then echo "${owner[$path]}"; return; fi
  done
  fail "no package owns $lib"
}
# What a binary links directly must be named in the Dockerfile; everything
# it loads must come with those packages.
for lib in "${!needed_by[@]}"; do
  pkg=$(package_of "$lib")
  grep -qx -- "$pkg" <<<"$runtime_packages"$'\n'"$base_image_packages" ||
    fail "${needed_by[$lib]# } link(s) $lib from $pkg, which the Dockerfile's runtime stage does not install"
done
for lib in "${!loaded_by[@]}"; do
  pkg=$(package_of "$lib")
  grep -qx -- "$pkg" <<<"$closure"$'\n'"$base_image_packages" ||
    fail "${loaded_by[$lib]# } load(s) $lib from $pkg, which the runtime stage's packages do not pull in"
done
runtime=$(stage runtime)
# The image holds what `cmake --install` installs (the layout package_test
# runs from), not copies of the build tree's programs.
grep -qE '^RUN .*cmake --build /build --target dist +&& +DESTDIR=/stage cmake --install /build --prefix /usr/local( |$)' \
  <<<"$(stage build)" || fail "the build stage must build target dist and cmake --install it into /stage"
grep -qx 'COPY --from=build /stage/usr/local/ /usr/local/' <<<"$runtime" ||
  fail "the runtime stage must copy the installed /usr/local"
grep -qx 'USER 65532:65532' <<<"$runtime" || fail "the runtime stage must run as 65532"
grep -qx 'ENTRYPOINT \["/usr/local/bin/workloadmapd"\]' <<<"$runtime" || fail "ENTRYPOINT"
# The build stage: its COPY lines recreated in a scratch context, then its
# CMake configure step run on it; a source directory missing from the COPY
# lines fails here instead of in someone's docker build.
context="$work/image-context"
mkdir -p "$context"
while read -r _ args; do
  read -ra words <<<"$args"
  dest="$context${words[-1]}"
  if [[ "$dest" == */ ]]; then mkdir -p "$dest"; else mkdir -p "$(dirname "$dest")"; fi
  for src in "${words[@]:0:${#words[@]}-1}"; do cp -a "$repo/$src" "$dest"; done
done < <(stage build | grep -E '^COPY ')
configure=$(stage build | grep -oE 'cmake -S \. -B /build [^&]*') ||
  fail "the build stage's configure step is not 'cmake -S . -B /build ...'"
read -ra configure_flags <<<"${configure#cmake -S . -B /build }"
(cd "$context/src" && cmake -S . -B "$context/build" "${configure_flags[@]}" >"$work/configure.log" 2>&1) || {
  tail -n 20 "$work/configure.log" >&2
  fail "the Dockerfile's build stage does not configure with its copied sources"
}
targets=$(cmake --build "$context/build" --target help)
for target in workloadmapd wm-jq-worker wmctl dist; do
  grep -q "^$target:" <<<"$targets" || fail "the build stage has no target $target"
done
echo "ok: the Dockerfile's runtime packages provide every library of workloadmapd, wm-jq-worker and wmctl; its build stage configures"
echo "deploy tests passed"
