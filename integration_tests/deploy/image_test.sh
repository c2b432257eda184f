#!/usr/bin/env bash
# The container image end to end, without a Docker engine: builds
# deploy/Dockerfile with Debian's podman from the tracked files (git
# archive: the context holds no build trees), then runs the image's own
# workloadmapd and wmctl, from the image's root filesystem and as its user
# 65532, against the testbed's real apiserver: the daemon gets ready and
# serves health, and wmctl in the image describes the seed JobSet as the
# daemon resolves it (3/3 ready, 12 GPUs).
#
# Not in scripts/test: it needs root (podman, chroot), installs podman and
# debootstrap, and takes about 6 minutes on 2 cores the first time (the
# image's packages and its build). Run it after changing the Dockerfile,
# the install step or the runtime libraries:
#
#   integration_tests/deploy/image_test.sh TESTBED_DIR
#
# Where these machines differ from a developer's: no registry but Debian's
# archive, so the base images debian:bookworm and debian:bookworm-slim are
# made here with debootstrap (minbase, from deb.debian.org) when podman has
# none; RUN steps use chroot isolation (crun cannot create containers under
# this machine's hybrid cgroups), and the image is run by chroot into its
# mounted root filesystem for the same reason (crun may not set rlimits
# here). Nothing of the Dockerfile is changed for it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
testbed="${1:?testbed directory}"
# shellcheck source=../lib.sh
source "$repo/integration_tests/lib.sh"
source_testbed "$testbed"
[[ $(id -u) == 0 ]] || fail "image_test.sh needs root (podman, chroot)"
work=$(mktemp -d /tmp/wm-image.XXXXXX)
image=localhost/workloadmapd:image-test
container=
cleanup() {
  stop_daemons
  if [[ -n $container ]]; then
    podman umount "$container" >/dev/null 2>&1 || true
    podman rm "$container" >/dev/null 2>&1 || true
  fi
  delete_demos default demo
  rm -rf "$work"
}
trap cleanup EXIT

for tool in podman debootstrap; do
  command -v "$tool" >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman debootstrap >/dev/null
done
if ! podman image exists docker.io/library/debian:bookworm; then
  echo "image_test: making debian:bookworm with debootstrap (no registry here)"
  debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
    { tail -n 20 "$work/debootstrap.log"; fail "debootstrap failed"; }
  rm -f "$work"/rootfs/var/cache/apt/archives/*.deb
  tar -C "$work/rootfs" -c . | podman import - docker.io/library/debian:bookworm >/dev/null
  rm -rf "$work/rootfs"
fi
podman image exists docker.io/library/debian:bookworm-slim ||
  podman tag docker.io/library/debian:bookworm docker.io/library/debian:bookworm-slim

echo "image_test: building $image from deploy/Dockerfile"
mkdir "$work/context"
git -C "$repo" archive HEAD | tar -x -C "$work/context"
start=$SECONDS
podman build --isolation chroot --network host -f deploy/Dockerfile -t "$image" "$work/context" \
  >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; fail "the image did not build"; }
echo "ok: the image built in $((SECONDS - start)) s ($(podman image inspect "$image" --format '{{.Size}}') bytes)"
[[ $(podman image inspect "$image" --format '{{.Config.User}}') == 65532:65532 ]] ||
  fail "the image does not run as 65532:65532"

# The image's root filesystem, writable, with the testbed's kubeconfig in it.
container=$(podman create "$image")
root=$(podman mount "$container")
mkdir -p "$root/tmp/kube"
cp "$testbed/ca.crt" "$root/tmp/kube/ca.crt"
sed "s|$testbed/ca.crt|/tmp/kube/ca.crt|" "$testbed/kubeconfig" >"$root/tmp/kube/config"
chmod -R a+rX "$root/tmp/kube"
in_image() { chroot --userspec=65532:65532 "$root" "$@"; }

in_image /usr/local/bin/wmctl version | grep -q "^wmctl " || fail "the image's wmctl does not run"
"$repo/integration_tests/seed/create-demo.sh" >/dev/null
port=$(free_port)
metrics_port=$(free_port)
# chroot itself, not in_image: $! must be the daemon's pid (chroot execs it).
chroot --userspec=65532:65532 "$root" /usr/local/bin/workloadmapd --kubeconfig /tmp/kube/config \
  --listen "127.0.0.1:$port" --metrics-address "127.0.0.1:$metrics_port" >"$work/daemon.log" 2>&1 &
pids+=($!)
for _ in $(seq 150); do
  curl -fs "127.0.0.1:$metrics_port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fs "127.0.0.1:$metrics_port/readyz" >/dev/null || { cat "$work/daemon.log"; fail "the image's daemon is not ready"; }
grep -q "jq engine started engine=native" "$work/daemon.log" || fail "the image's daemon did not start its engine"
echo "ok: the image's workloadmapd, as user 65532 with the image's libraries, is ready against the apiserver"

tree=$(in_image /usr/local/bin/wmctl describe jobset/demo --address "127.0.0.1:$port")
grep -Eq -- '-- replicatedjob +3/3 ready +gpu: 12' <<<"$tree" || { echo "$tree"; fail "the image's wmctl: unexpected tree"; }
echo "ok: the image's wmctl describes the seed JobSet through it (3/3 ready, 12 GPUs)"
echo "image tests passed"
