#!/usr/bin/env bash
# Builds the image of the whole service (deploy/Containerfile) and tags it
# atomworld:<commit> and atomworld:latest, for deploy/compose.yaml. Not part of the test
# command: the first build compiles everything (the tools, the page, the server, the venv).
#
# Usage: scripts/service-image.sh [--local-base]
#   --local-base   build on the debootstrap base of scripts/container-image.sh (Debian
#                  bookworm with python3, made from Debian's archive) instead of pulling
#                  debian:bookworm from a registry: for hosts that reach no image registry.
# Env:   ATOMWORLD_CONTAINER_ENGINE   podman or docker (default: whichever answers)
#        ATOMWORLD_CA_BUNDLE          the CA bundle the build's downloads trust (default: the
#                                     host's, so a TLS proxy the host trusts works; passed as
#                                     a build secret, never kept in the image)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[service-image] %s\n' "$*" >&2; }
die() { printf '[service-image] ERROR: %s\n' "$*" >&2; exit 1; }

engine="${ATOMWORLD_CONTAINER_ENGINE:-}"
if [ -z "$engine" ]; then
  for e in podman docker; do
    if command -v "$e" >/dev/null && "$e" info >/dev/null 2>&1; then engine="$e"; break; fi
  done
fi
[ -n "$engine" ] || die "no container engine answers (podman or docker; docker needs its daemon)"

args=()
ca="${ATOMWORLD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
[ -s "$ca" ] && args+=(--secret "id=ca,src=$ca")
if [ "${1:-}" = "--local-base" ]; then
  base="localhost/atomworld-sandbox-base:bookworm"
  "$engine" image inspect "$base" >/dev/null 2>&1 || scripts/container-image.sh >/dev/null
  args+=(--build-arg "BASE=$base")
fi
# crun fails on hosts with a hybrid cgroup v1; runc works (as for the sandbox's image).
if [ "$engine" = podman ] && command -v runc >/dev/null; then
  args+=(--runtime runc)
fi
commit="$(git rev-parse --short=12 HEAD)"
start=$SECONDS
say "building atomworld:$commit with $engine"
"$engine" build "${args[@]}" -f deploy/Containerfile -t "atomworld:$commit" -t atomworld:latest .
say "built atomworld:$commit in $((SECONDS - start)) s"
echo "atomworld:$commit"
