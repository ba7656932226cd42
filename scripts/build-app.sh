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

# The files the page is built from: in a git checkout, those git would commit (tracked or
# new, not ignored), so what the server writes at run time (its database under data/local)
# or npm installs never counts as a change; elsewhere every file but those.
page_sources() {
  local dirs=(app viewer first-view matcher-worker engine benchmarks wire llm-protocol data public)
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard -- "${dirs[@]}" |
      while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done
  else
    find "${dirs[@]}" -type f -not -path '*/node_modules/*' -not -path 'data/local/*' -print0
  fi
}

inputs() {
  {
    trunk --version
    wasm-bindgen --version
    page_sources | sort -z | xargs -0 sha256sum
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
