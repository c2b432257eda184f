#!/usr/bin/env bash
# The real wmctl binary from real shells, against real workloadmapd
# processes serving a snapshot: the generated completion scripts (bash -n;
# bash's completion function run with COMP_WORDS set, asserting COMPREPLY),
# then TLS and mutual TLS with openssl-made certificates, from flags and
# from a config file; eval reading a pipe. Needs no cluster; ctest runs it
# as wmctl_shell_test.
#
#   shell_test.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(cd "${1:?build directory}" && pwd)"
wmctl="$build/bin/wmctl"
# shellcheck source=../../integration_tests/lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wmctl-shell-test.XXXXXX)
cleanup() {
  stop_daemons
  rm -rf "$work"
}
trap cleanup EXIT
# Only what the test sets: no developer config file or daemon address.
unset WM_ADDRESS WMCTL_CONFIG WMCTL_CLUSTER WMCTL_NAMESPACE WMCTL_OUTPUT
export XDG_CONFIG_HOME="$work/xdg"

mkdir -p "$work/manifests"
cp "$repo/integration_tests/seed/cluster-state.yaml" "$here/testdata/snapshot/trainer.yaml" \
  "$work/manifests/"
port=$(free_port)
start_daemon "$work/plain.log" --shutdown-grace 0s --snapshot "$work/manifests" \
  --listen "127.0.0.1:$port" --definitions "$here/testdata/definitions"

# --- The scripts parse ---------------------------------------------------------
for shell in bash zsh fish; do
  "$wmctl" completion "$shell" >"$work/completion.$shell"
  [[ -s $work/completion.$shell ]] || fail "wmctl completion $shell printed nothing"
done
bash -n "$work/completion.bash" || fail "bash -n on the bash completion script"
# zsh and fish are not in CI's packages; checked where they are installed.
if command -v zsh >/dev/null; then zsh -n "$work/completion.zsh" || fail "zsh -n"; fi
if command -v fish >/dev/null; then fish --no-execute "$work/completion.fish" || fail "fish -n"; fi
echo "ok: completion scripts parse"

# --- bash completion, as bash calls it --------------------------------------------
# complete_line LINE WORD...: runs _wmctl as bash does for LINE with the
# cursor at its end, given bash's own split of it (COMP_WORDS: WORD...,
# split at COMP_WORDBREAKS too), and prints COMPREPLY one per line, sorted.
complete_line() {
  local line=$1
  shift
  bash -c '
    source "$1"
    COMP_LINE=$2
    COMP_POINT=${#COMP_LINE}
    shift 2
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    _wmctl
    printf "%s\n" "${COMPREPLY[@]}"
  ' _ "$work/completion.bash" "$line" "$@" | sed '/^$/d' | sort
}
expect_completion() {  # expect_completion EXPECTED LINE WORD...
  local expected=$1
  shift
  local got
  got=$(complete_line "$@" | paste -sd ' ' -)
  [[ $got == "$expected" ]] || fail "completing '$1': expected '$expected', got '$got'"
}
export WM_ADDRESS="127.0.0.1:$port"
w=$wmctl
expect_completion "definitions describe" "$w de" "$w" de
expect_completion "Job JobSet" "$w get Job" "$w" get Job
expect_completion "JobSet/demo" "$w describe JobSet/" "$w" describe JobSet/
expect_completion "tune" "$w describe -n ml-team trainers " "$w" describe -n ml-team trainers ""
expect_completion "default ml-team" "$w get -n " "$w" get -n ""
expect_completion "--all-namespaces --all-types" "$w get --all-" "$w" get --all-
expect_completion "Running,Failed" "$w get --phase Running,F" "$w" get --phase Running,F
expect_completion "example-com-sweep-v1 example-com-trainer-v1" "$w definitions example" "$w" definitions example
# bash splits --flag=value and HOST:PORT at = and :, and replaces only the
# last piece: the candidates must be that piece's.
expect_completion "json" "$w get --output=js" "$w" get --output = js
expect_completion "=json =table =wide =yaml" "$w get --output=" "$w" get --output =
expect_completion "JobSet/demo" "$w --address=127.0.0.1:$port describe JobSet/d" \
  "$w" --address = 127.0.0.1 : "$port" describe JobSet/d
# File names where a file goes.
touch "$work/my-definition.yaml"
expect_completion "$work/my-definition.yaml" "$w validate $work/my-" "$w" validate "$work/my-"
expect_completion "$work/my-definition.yaml" "$w describe -f $work/my-d" \
  "$w" describe -f "$work/my-d"
expect_completion "$work/my-definition.yaml" "$w eval . -f $work/my-d" \
  "$w" eval . -f "$work/my-d"
expect_completion "libjq native" "$w eval . --engine " "$w" eval . --engine ""
# No daemon, no candidates (and no error on the terminal).
dead=$(free_port)
got=$(WM_ADDRESS="127.0.0.1:$dead" complete_line "$w get Job" "$w" get Job 2>&1)
[[ -z $got ]] || fail "completion without a daemon printed: $got"
echo "ok: bash completion against the daemon"

# --- eval from a pipe ------------------------------------------------------------------
got=$(printf '{"a": [1, "x"]}' | "$wmctl" eval -r '.a[]' -f -)
[[ $got == $'1\nx' ]] || fail "wmctl eval -r '.a[]' -f - printed '$got'"
status=0
got=$("$wmctl" eval '[range(3)]' 2>&1) || status=$?
[[ $status == 1 && $got == "error: range function is not allowed" ]] ||
  fail "wmctl eval '[range(3)]': exit $status, '$got'"
echo "ok: eval"

# --- TLS and mutual TLS --------------------------------------------------------------
mkdir -p "$work/pki"
(
  cd "$work/pki"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 \
    -subj /CN=wmctl-test-ca 2>/dev/null
  for name in server client; do
    openssl req -newkey rsa:2048 -nodes -keyout $name.key -out $name.csr -subj /CN=$name 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >$name.ext
    openssl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out $name.crt \
      -days 1 -extfile $name.ext 2>/dev/null
  done
)
pki=$work/pki
expect_get() {  # expect_get CODE ARGS...: wmctl get -o json ARGS..., exit CODE
  local code=$1
  shift
  local out status=0
  out=$("$wmctl" get -o json "$@" 2>&1) || status=$?
  [[ $status == "$code" ]] || fail "wmctl get $*: exit $status, expected $code: $out"
  if [[ $code == 0 ]]; then
    jq -e '.items[0].name == "demo"' <<<"$out" >/dev/null || fail "wmctl get $*: $out"
  fi
}

port=$(free_port)
start_daemon "$work/tls.log" --shutdown-grace 0s --snapshot "$work/manifests" \
  --listen "127.0.0.1:$port" --tls-cert "$pki/server.crt" --tls-key "$pki/server.key"
export WM_ADDRESS="127.0.0.1:$port"
expect_get 0 --tls-ca "$pki/ca.crt"
expect_get 0 --tls-ca "$pki/ca.crt" --tls-server-name localhost
expect_get 1 --tls-ca "$pki/ca.crt" --tls-server-name wrong.example  # not in the certificate
expect_get 1 --tls                   # the test CA is not among the system's roots
expect_get 1                         # plaintext to a TLS port
expect_get 2 --tls-ca "$pki/missing.crt"
echo "ok: TLS"

port=$(free_port)
start_daemon "$work/mtls.log" --shutdown-grace 0s --snapshot "$work/manifests" \
  --listen "127.0.0.1:$port" --tls-cert "$pki/server.crt" --tls-key "$pki/server.key" \
  --tls-client-ca "$pki/ca.crt" --tls-require-client-cert
export WM_ADDRESS="127.0.0.1:$port"
expect_get 1 --tls-ca "$pki/ca.crt"  # no client certificate
expect_get 0 --tls-ca "$pki/ca.crt" --tls-cert "$pki/client.crt" --tls-key "$pki/client.key"
# The same from the config file, with paths relative to it.
mkdir -p "$XDG_CONFIG_HOME/wmctl"
cp "$pki/ca.crt" "$pki/client.crt" "$pki/client.key" "$XDG_CONFIG_HOME/wmctl/"
cat >"$XDG_CONFIG_HOME/wmctl/config.yaml" <<EOF
address: 127.0.0.1:$port
tls:
  ca: ca.crt
  cert: client.crt
  key: client.key
EOF
unset WM_ADDRESS
expect_get 0
# Completion reads the same settings.
[[ $(complete_line "$w get Job" "$w" get Job | paste -sd ' ' -) == "Job JobSet" ]] ||
  fail "completion through mutual TLS from the config file"
echo "ok: mutual TLS, from flags and from the config file"
echo "wmctl shell tests passed"
