#!/usr/bin/env bash
# Builds kube-apiserver, etcd and kubectl from the Go module proxy, once per
# version, into a cache directory reused across runs:
#   ${WM_TESTBED_CACHE:-$HOME/.cache/workloadmap-testbed}/<k8s version>/{kube-apiserver,etcd,kubectl}
# and, with the argument gc, kube-controller-manager too (the garbage
# collector, which only the tests that need it start: testbed.sh start-gc).
# Prints the directory holding the binaries on its last line of stdout.
# The module graph is pinned by go.mod/go.sum beside this script (-mod=readonly).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
K8S_VERSION=v1.36.3
ETCD_VERSION=v3.6.8   # the etcd that k8s.io/kubernetes@v1.36.3 pins
cache="${WM_TESTBED_CACHE:-$HOME/.cache/workloadmap-testbed}/${K8S_VERSION}"
wanted=(kube-apiserver etcd kubectl)
[[ "${1:-}" == gc ]] && wanted+=(kube-controller-manager)
missing=0
for binary in "${wanted[@]}"; do [[ -x "$cache/$binary" ]] || missing=1; done
if ((missing == 0)); then
  echo "$cache"
  exit 0
fi
mkdir -p "$cache"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-buildvcs=false
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean"
done
cd "$here"
start=$(date +%s)
build() {  # build <output> <package> <ldflags>: unless built already, or not wanted
  [[ -x "$cache/$1" || " ${wanted[*]} " != *" $1 "* ]] && return 0
  echo "testbed: building $1 ($2)" >&2
  /usr/bin/time -f "testbed: $1 built in %e s, peak RSS %M KiB" \
    go build -mod=readonly -trimpath -ldflags "$3" -o "$cache/$1.tmp" "$2" >&2
  mv "$cache/$1.tmp" "$cache/$1"
}
build etcd go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
build kubectl k8s.io/kubernetes/cmd/kubectl "$ldflags"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags"
echo "testbed: built $K8S_VERSION and etcd $ETCD_VERSION in $(( $(date +%s) - start )) s" >&2
echo "$cache"
