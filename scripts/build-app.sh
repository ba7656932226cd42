#!/usr/bin/env bash
# Builds the page into dist/ as shipped: Trunk in release (the wasm-release profile, then
# binaryen's wasm-opt -Oz from scripts/binaryen, which scripts/setup.sh build installs).
# Trunk re-runs wasm-bindgen and wasm-opt (about 40 s) even when nothing changed, so a build
# into the default dist/ whose inputs (the crates the page is made of, its assets, the lock
# file, the tools' versions) hash as before is skipped; options (another --dist, …) always
# build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/scripts/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"

inputs() {
  {
    trunk --version
    wasm-bindgen --version
    find app viewer first-view engine benchmarks wire llm-protocol data public -type f \
      -not -path '*/node_modules/*' -print0 | sort -z | xargs -0 sha256sum
    sha256sum index.html Trunk.toml Cargo.toml Cargo.lock scripts/build-app.sh scripts/build-first-view.sh \
      scripts/binaryen/package-lock.json
  } | sha256sum | cut -d' ' -f1
}

if [ $# -gt 0 ]; then
  exec trunk build --release "$@"
fi
stamp=dist/.inputs-sha256
want="$(inputs)"
if [ -f dist/index.html ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "[build-app] dist/ is up to date (its inputs are unchanged)"
  exit 0
fi
trunk build --release
echo "$want" > "$stamp"
