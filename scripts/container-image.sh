#!/usr/bin/env bash
# Builds the image of the sandbox's `container` backend, once: nothing is done when an image
# tagged with the current content hash exists already.
#
#   1. the base, localhost/atomworld-sandbox-base:bookworm (made once): a minimal Debian
#      bookworm rootfs with python3 (3.11) from debootstrap, trimmed, imported into the engine;
#   2. localhost/atomworld-sandbox:<hash> from sandbox/container/Containerfile: a venv with
#      the pinned MatTools stack (sandbox/python/mattools-requirements.txt, from PyPI) and the
#      worker (sandbox/python/bwrap_worker.py, with its launcher.py). <hash> is the first 16
#      hex digits of the sha256 of those four files concatenated, which the backend looks for.
# No image registry is used (none is reachable here): Debian's archive and PyPI only.
#
# Usage: scripts/container-image.sh        prints the image's name on stdout when done
# Env:   ATOMWORLD_CONTAINER_ENGINE   podman (default) or docker
#        ATOMWORLD_DEBIAN_MIRROR      default http://deb.debian.org/debian
#        ATOMWORLD_CA_BUNDLE          the CA bundle pip trusts while building (default: the
#                                     host's /etc/ssl/certs/ca-certificates.crt, so a TLS proxy
#                                     the host trusts works; passed as a build secret, not kept)
# Needs root (debootstrap) the first time; about 5 minutes and 1.5 GB of disk.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[container-image] %s\n' "$*" >&2; }
die() { printf '[container-image] ERROR: %s\n' "$*" >&2; exit 1; }

ENGINE="${ATOMWORLD_CONTAINER_ENGINE:-podman}"
MIRROR="${ATOMWORLD_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CA="${ATOMWORLD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
FILES=(sandbox/container/Containerfile sandbox/python/mattools-requirements.txt
       sandbox/python/bwrap_worker.py sandbox/python/launcher.py)
HASH="$(cat "${FILES[@]}" | sha256sum | cut -c1-16)"
REPO="localhost/atomworld-sandbox"
IMAGE="$REPO:$HASH"
BASE="localhost/atomworld-sandbox-base:bookworm"

command -v "$ENGINE" >/dev/null || die "no $ENGINE (apt-get install podman runc)"
"$ENGINE" info >/dev/null 2>&1 \
  || die "$ENGINE does not answer ($ENGINE info failed: is its daemon running?)"
build_args=()
# crun fails on this machine kind's hybrid cgroup v1; runc works (measured on this machine kind).
if [[ "$ENGINE" == podman ]] && command -v runc >/dev/null; then
  build_args+=(--runtime runc)
fi

if "$ENGINE" image inspect "$IMAGE" >/dev/null 2>&1; then
  say "already built: $IMAGE"
  echo "$IMAGE"
  exit 0
fi
start=$SECONDS

if ! "$ENGINE" image inspect "$BASE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || die "no debootstrap (apt-get install debootstrap)"
  [[ "$(id -u)" -eq 0 ]] || die "debootstrap needs root to make the base rootfs"
  root="$(mktemp -d "${TMPDIR:-/var/tmp}/atomworld-rootfs.XXXXXX")"
  trap 'rm -rf "$root"' EXIT
  say "making the base rootfs (debootstrap bookworm minbase + python3 from $MIRROR)"
  debootstrap --variant=minbase --include=python3,python3-venv bookworm "$root" "$MIRROR" \
    >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; rm -f "$root.log"; die "debootstrap failed"; }
  rm -f "$root.log"
  rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc \
    "$root"/usr/share/man "$root"/usr/share/info "$root"/usr/share/locale
  tar -C "$root" --numeric-owner -c . | "$ENGINE" import - "$BASE" >/dev/null
  rm -rf "$root"
  trap - EXIT
  say "base imported as $BASE"
fi

[[ -r "$CA" ]] || die "no CA bundle at $CA (set ATOMWORLD_CA_BUNDLE)"
ctx="$(mktemp -d "${TMPDIR:-/var/tmp}/atomworld-image.XXXXXX")"
trap 'rm -rf "$ctx"' EXIT
cp "${FILES[@]}" "$ctx/"
say "building $IMAGE (the pinned stack from PyPI, about 1.2 GB)"
"$ENGINE" build "${build_args[@]}" --network host --secret "id=ca,src=$CA" --label "atomworld.sandbox.hash=$HASH" \
  -t "$IMAGE" -f "$ctx/Containerfile" "$ctx" >&2 || die "$ENGINE build failed"
# Older builds of this image only take disk.
for old in $("$ENGINE" images --format '{{.Repository}}:{{.Tag}}' | grep "^$REPO:" || true); do
  [[ "$old" == "$IMAGE" ]] || "$ENGINE" rmi "$old" >/dev/null 2>&1 || true
done
size="$("$ENGINE" image inspect --format '{{.Size}}' "$IMAGE")"
say "built $IMAGE in $((SECONDS - start)) s, $((size / 1000000)) MB"
echo "$IMAGE"
