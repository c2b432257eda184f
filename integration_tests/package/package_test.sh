#!/usr/bin/env bash
# The Debian package of a build tree, as a user gets it: cpack builds it in a
# scratch directory (cmake/Package.cmake), dpkg-deb checks its control fields
# and file list and unpacks it into a scratch root, and the programs run from
# that root with an empty environment:
#  - wmctl version, wmctl validate --offline on a catalog file of the root,
#    wmctl describe -f on the seed JobSet with its Jobs and pods: each
#    offline command evaluates with libjq, so the installed wmctl finds the
#    installed wm-jq-worker (and fails without it);
#  - the installed workloadmapd serving the seed over a snapshot with the
#    libjq engine, asked by the installed wmctl;
#  - the bash completion script defines the completion of wmctl.
# The build tree is only read (cpack's install step writes its
# install_manifest.txt there, as every `cmake --install` does). ctest runs
# it as package_test.
#
#   package_test.sh BUILD_DIR VERSION
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build_dir="$(cd "${1:?build directory}" && pwd)"
version=${2:?project version}
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
work=$(mktemp -d /tmp/wm-package-test.XXXXXX)
trap 'stop_daemons; rm -rf "$work"' EXIT
# Nothing from the developer's environment: no WM_JQ_WORKER, no daemon
# setting, no wmctl config.
for variable in $(compgen -e | grep -E '^WM'); do unset "$variable"; done

# --- The package --------------------------------------------------------------
cpack --config "$build_dir/CPackConfig.cmake" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"
  fail "cpack"
}
deb="$work/out/workloadmap_${version}_$(dpkg --print-architecture).deb"
[[ -f "$deb" ]] || { ls "$work/out"; fail "cpack made no $(basename "$deb")"; }
field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == workloadmap && $(field Version) == "$version" ]] ||
  fail "package $(field Package) $(field Version), expected workloadmap $version"
[[ -n $(field Maintainer) ]] || fail "no Maintainer"
# What the three programs link, found by dpkg-shlibdeps (or listed).
depends=$(field Depends)
for package in libjq1 libgrpc++1.51 libyaml-cpp0.7 libstdc++6; do
  grep -qE "(^|, )${package//+/\\+}( |,|$)" <<<"$depends" || fail "Depends lacks $package: $depends"
done
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' | sort >"$work/files"
for path in usr/bin/workloadmapd usr/bin/wmctl usr/libexec/workloadmap/wm-jq-worker \
  usr/share/bash-completion/completions/wmctl usr/share/zsh/vendor-completions/_wmctl \
  usr/share/fish/vendor_completions.d/wmctl.fish usr/share/workloadmap/crds/run.ai_kartas.yaml; do
  grep -qx "$path" "$work/files" || fail "the package has no /$path"
done
diff <(cd "$repo/catalog" && ls -- *.yaml) \
  <(sed -n 's|^usr/share/workloadmap/catalog/||p' "$work/files" | grep .) ||
  fail "the package's catalog differs from catalog/*.yaml"
echo "ok: $(basename "$deb"): control fields, programs, catalog, CRD, completions"

root="$work/root"
dpkg-deb -x "$deb" "$root"
# The programs run with only PATH and a scratch HOME (no config file).
run() { (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work/home" "$@"); }
wmctl="$root/usr/bin/wmctl"

# --- wmctl offline ------------------------------------------------------------
out=$(run "$wmctl" version)
# The version, then the mode that would answer (no kubeconfig in HOME).
[[ "$out" == "wmctl $version"$'\n'"mode: kubeconfig (no daemon address configured), but no usable kubeconfig: "* ]] ||
  fail "wmctl version printed '$out'"
definition="$root/usr/share/workloadmap/catalog/jobset-x-k8s-io-jobset-v1alpha2.yaml"
out=$(run "$wmctl" validate --offline "$definition") || fail "validate --offline: $out"
[[ "$out" == "OK: $definition is a valid Karta definition (GVK: jobset.x-k8s.io/v1alpha2, Kind=JobSet)" ]] ||
  fail "validate --offline printed: $out"
seed="$repo/integration_tests/seed/cluster-state.yaml"
out=$(run "$wmctl" describe -f "$seed") || fail "describe -f: $out"
grep -q '^JobSet/demo .* definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog)' <<<"$out" &&
  grep -qE '^`-- replicatedjob +3/3 ready +gpu: 12 ' <<<"$out" &&
  grep -qE '^    `-- worker +2/2 ready +gpu: 8 ' <<<"$out" &&
  grep -qE '^TOTAL +3 +12 ' <<<"$out" || fail "describe -f printed: $out"
# describe -f evaluates in-process (the native engine, the daemon's
# default); the libjq engine's worker found is the installed one.
out=$(run "$wmctl" eval --engine libjq '1 + 1') || fail "eval --engine libjq: $out"
[[ "$out" == "2" ]] || fail "eval --engine libjq printed: $out"
mkdir "$work/aside"
mv "$root/usr/libexec/workloadmap/wm-jq-worker" "$work/aside/"
out=$(run "$wmctl" describe -f "$seed" 2>&1) || fail "describe -f without the worker: $out"
grep -qE '^TOTAL +3 +12 ' <<<"$out" || fail "describe -f without the worker printed: $out"
if out=$(run "$wmctl" eval --engine libjq '1 + 1' 2>&1); then
  fail "eval --engine libjq without the worker: $out"
fi
grep -q 'jq worker binary not found' <<<"$out" || fail "eval --engine libjq without the worker: $out"
mv "$work/aside/wm-jq-worker" "$root/usr/libexec/workloadmap/"
echo "ok: the installed wmctl: version, validate --offline, describe -f, eval with the installed worker"

# --- workloadmapd and wmctl ---------------------------------------------------
mkdir "$work/snapshot"
cp "$seed" "$work/snapshot/"
port=$(free_port)
# start_daemon runs $build/bin/workloadmapd: the installed one.
build="$root/usr"
start_daemon "$work/daemon.log" --snapshot "$work/snapshot" --jq-engine libjq \
  --listen "127.0.0.1:$port" --shutdown-grace 0s
out=$(run "$wmctl" get jobsets -n default --address "127.0.0.1:$port") || fail "wmctl get: $out"
grep -qE '^demo +JobSet +Running +leader 1/1, worker 2/2 +12 ' <<<"$out" || fail "wmctl get jobsets printed: $out"
echo "ok: the installed workloadmapd serves the seed JobSet with the libjq engine"

# --- Completion ---------------------------------------------------------------
run bash -c 'source "$1" && complete -p wmctl' _ "$root/usr/share/bash-completion/completions/wmctl" |
  grep -q -- '-F _wmctl wmctl' || fail "the installed bash completion does not complete wmctl"
echo "ok: the installed bash completion"
echo "package tests passed"
