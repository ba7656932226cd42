#!/usr/bin/env bash
# Installs the build tools the project needs, each only when missing, from the package
# registries (crates.io, Debian, npm, PyPI). Nothing is downloaded from anywhere else.
#   scripts/setup.sh build   Rust wasm target, trunk and wasm-bindgen-cli (pinned), and
#                            binaryen's wasm-opt (npm, pinned in scripts/binaryen)
#   scripts/setup.sh test    the above plus Debian chromium/chromedriver, bubblewrap (the
#                            sandbox's bwrap backend), podman, runc and debootstrap (its
#                            container backend) and e2e npm packages
#   scripts/setup.sh test-tools  only what `test` adds to `build` (scripts/test.sh runs it in
#                            the background while the Rust tools build)
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14
WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen crate pinned in Cargo.toml

say() { printf '\033[1;34m[setup]\033[0m %s\n' "$*"; }

# The tools' own speed hardly matters (trunk orchestrates, wasm-bindgen rewrites a module in
# about 2 s), but trunk's manifest asks for fat LTO and one codegen unit: built unoptimised
# (opt-level 0, many codegen units, no LTO or debug info) they take about 3 + 1 minutes on 2
# cores instead of 15 + 5, and the page they build is byte for byte the same. Both are built
# without their default features, which are TLS stacks (ring, rustls) for downloads and
# trunk's update check: they never download here (Trunk.toml: offline), and the builds are
# about 25 crates shorter.
quick_install() {
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo install "$@"
}

ensure_build_tools() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
  fi
  if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
    say "installing trunk $TRUNK_VERSION (cargo install, several minutes the first time)"
    quick_install trunk --version "$TRUNK_VERSION" --locked --no-default-features
  fi
  if ! wasm-bindgen --version 2>/dev/null | grep -q "$WASM_BINDGEN_VERSION"; then
    say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION"
    # Not --locked: its lockfile names a crate version this registry lacks.
    quick_install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force --no-default-features
  fi
  if [ ! -x scripts/binaryen/node_modules/.bin/wasm-opt ]; then
    say "installing binaryen's wasm-opt (npm)"
    (cd scripts/binaryen && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

ensure_test_tools() {
  local missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  [ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
  [ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
  [ -x /usr/bin/podman ] || missing+=(podman)
  [ -x /usr/sbin/runc ] || [ -x /usr/bin/runc ] || missing+=(runc)
  [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
  # The storage tests run against PostgreSQL too (scripts/postgres.sh starts a cluster).
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
  fi
  # Installed again whenever package-lock.json changes (its digest is kept beside the packages).
  local lock_sum
  lock_sum="$(sha256sum e2e/package-lock.json | cut -d' ' -f1)"
  if [ "$(cat e2e/node_modules/.lock-sha256 2>/dev/null)" != "$lock_sum" ]; then
    say "installing e2e npm packages"
    (cd e2e && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" > e2e/node_modules/.lock-sha256
  fi
}

case "${1:-build}" in
  build) ensure_build_tools ;;
  test) ensure_build_tools; ensure_test_tools ;;
  test-tools) ensure_test_tools ;;
  *) echo "usage: $0 build|test|test-tools" >&2; exit 2 ;;
esac
