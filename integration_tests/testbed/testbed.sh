#!/usr/bin/env bash
# A real control plane for tests and the demo: etcd and kube-apiserver on
# loopback, built from the Go module proxy by build.sh (cached).
#
#   testbed.sh start DIR      generate certificates and tokens, start etcd and
#                             kube-apiserver, wait for /readyz, install the
#                             framework CRDs and the Karta CRD, wait for them to
#                             be Established. Writes DIR/env (sourceable) and
#                             DIR/kubeconfig (admin).
#   testbed.sh stop DIR       stop both by PID
#   testbed.sh kill-apiserver DIR     kill -9 kube-apiserver
#   testbed.sh start-apiserver DIR    start it again with the same flags
#   testbed.sh compact DIR    compact etcd at its current revision
#   testbed.sh start-gc DIR   start kube-controller-manager with the garbage
#                             collector alone (built on first use), for the
#                             tests that need dependents deleted with their
#                             owners; it deletes every object whose owners
#                             are gone, so it runs only while such a test does
#   testbed.sh stop-gc DIR    stop it
#
# Environment: the framework CRDs are this project's own (crds/: the names,
# scope and versions of every kind the catalog covers, with a schema that
# accepts anything) unless WM_CRDS_DIR names a directory of the frameworks'
# real CRDs; WM_TESTBED_CRDS=0 skips them (faster start); WM_TESTBED_CACHE as
# for build.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
crds_dir="${WM_CRDS_DIR:-$here/crds}"

cmd="${1:?usage: testbed.sh start|stop|kill-apiserver|start-apiserver|compact|start-gc|stop-gc DIR}"
dir="${2:?state directory}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_for() {  # wait_for SECONDS PIDFILE DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) pidfile="$2" what="$3"
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "testbed: $what: the process exited; last log lines:" >&2
      tail -n 5 "${pidfile%.pid}.log" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      echo "testbed: timed out waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
}

start_apiserver() {
  # shellcheck disable=SC1091
  source "$dir/env"
  "$WM_TESTBED_BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$dir/apiserver.crt" --tls-private-key-file="$dir/apiserver.key" \
    --client-ca-file="$dir/ca.crt" \
    --cert-dir="$dir/certs" \
    --token-auth-file="$dir/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$dir/sa.pub" --service-account-signing-key-file="$dir/sa.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --endpoint-reconciler-type=none \
    --disable-admission-plugins=ServiceAccount \
    --enable-priority-and-fairness=false \
    --watch-cache-sizes=configmaps#0 \
    --allow-privileged=true --v=1 >>"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  wait_for 120 "$dir/apiserver.pid" "kube-apiserver /readyz" \
    curl -fsS --cacert "$dir/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
    "https://127.0.0.1:$APISERVER_PORT/readyz"
}

stop_pid() {
  local file="$1"
  [[ -f "$file" ]] || return 0
  local pid
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

case "$cmd" in
  start)
    bin="$("$here/build.sh" | tail -1)"
    start=$SECONDS
    # Certificates: a CA, the serving certificate for 127.0.0.1, and a
    # client certificate for the admin (tests read both kinds of user).
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=workloadmap-test-ca" \
      -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
      -keyout "$dir/apiserver.key" -out "$dir/apiserver.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' \
      >"$dir/server.ext"
    openssl x509 -req -in "$dir/apiserver.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
      -CAcreateserial -days 3650 -extfile "$dir/server.ext" -out "$dir/apiserver.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=cert-admin" \
      -keyout "$dir/admin.key" -out "$dir/admin.csr" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' >"$dir/client.ext"
    openssl x509 -req -in "$dir/admin.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
      -CAcreateserial -days 3650 -extfile "$dir/client.ext" -out "$dir/admin.crt" 2>/dev/null
    openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
    openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
    admin_token="admin-$(openssl rand -hex 16)"
    echo "$admin_token,admin,admin-uid,\"system:masters\"" >"$dir/tokens.csv"
    cat >"$dir/env" <<EOF
WM_TESTBED_DIR=$dir
WM_TESTBED_BIN=$bin
ETCD_PORT=$(free_port)
ETCD_PEER_PORT=$(free_port)
APISERVER_PORT=$(free_port)
ADMIN_TOKEN=$admin_token
KUBECONFIG=$dir/kubeconfig
EOF
    # shellcheck disable=SC1091
    source "$dir/env"
    cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $dir/ca.crt
users:
- name: admin
  user:
    token: $admin_token
contexts:
- name: testbed
  context: {cluster: testbed, user: admin, namespace: default}
current-context: testbed
EOF
    "$bin/etcd" --name=t0 --data-dir="$dir/etcd" --unsafe-no-fsync --log-level=warn \
      --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
      --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster="t0=http://127.0.0.1:$ETCD_PEER_PORT" \
      --max-request-bytes=10485760 >>"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
    wait_for 60 "$dir/etcd.pid" "etcd /health" curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
    start_apiserver
    echo "testbed: kube-apiserver ready after $((SECONDS - start)) s" >&2
    kubectl=("$bin/kubectl" --kubeconfig "$dir/kubeconfig")
    crds=("$repo/deploy/crds/run.ai_kartas.yaml")
    crds_from="the Karta CRD only"
    if [[ "${WM_TESTBED_CRDS:-1}" != 0 ]]; then
      if [[ ! -d "$crds_dir" ]]; then
        echo "testbed: WM_CRDS_DIR=$crds_dir is not a directory" >&2
        exit 1
      fi
      while IFS= read -r f; do crds+=("$f"); done < <(find "$crds_dir" -name '*.yaml' | sort)
      crds_from="the Karta CRD and $crds_dir"
    fi
    for f in "${crds[@]}"; do
      # Server-side apply: big CRDs exceed the client-side last-applied limit.
      "${kubectl[@]}" apply --server-side --force-conflicts -f "$f" >/dev/null
    done
    "${kubectl[@]}" wait --for condition=established --timeout=120s crd --all >/dev/null
    echo "testbed: ${#crds[@]} CRD files ($crds_from) established after $((SECONDS - start)) s" >&2
    ;;
  stop)
    stop_pid "$dir/gc.pid"
    stop_pid "$dir/apiserver.pid"
    stop_pid "$dir/etcd.pid"
    ;;
  kill-apiserver)
    # shellcheck disable=SC1091
    source "$dir/env"
    kill -9 "$(cat "$dir/apiserver.pid")"
    rm -f "$dir/apiserver.pid"
    # Wait until its port is closed (the process may linger as a zombie that
    # nobody reaps; its threads release the socket as they exit).
    for _ in $(seq 200); do
      (exec 3<>"/dev/tcp/127.0.0.1/$APISERVER_PORT") 2>/dev/null || break
      sleep 0.05
    done
    ;;
  start-apiserver)
    start_apiserver
    ;;
  start-gc)
    # shellcheck disable=SC1091
    source "$dir/env"
    gc_bin="$("$here/build.sh" gc | tail -1)"
    "$gc_bin/kube-controller-manager" --kubeconfig="$dir/kubeconfig" \
      --controllers=garbagecollector --leader-elect=false --secure-port=0 \
      --concurrent-gc-syncs=5 --v=1 >"$dir/gc.log" 2>&1 &
    echo $! >"$dir/gc.pid"
    # Ready once it has synced its graph of every deletable resource.
    deadline=$((SECONDS + 120))
    until grep -qi "all resource monitors have synced" "$dir/gc.log"; do
      kill -0 "$(cat "$dir/gc.pid")" 2>/dev/null || { tail -n 5 "$dir/gc.log" >&2; exit 1; }
      ((SECONDS < deadline)) || { echo "testbed: the garbage collector did not sync" >&2; exit 1; }
      sleep 0.2
    done
    ;;
  stop-gc)
    stop_pid "$dir/gc.pid"
    ;;
  compact)
    # shellcheck disable=SC1091
    source "$dir/env"
    rev="$(curl -fsS -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/range" -d '{"key":"AA=="}' |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["revision"])')"
    curl -fsS -X POST "http://127.0.0.1:$ETCD_PORT/v3/kv/compaction" \
      -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null
    echo "$rev"
    ;;
  *)
    echo "testbed.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
