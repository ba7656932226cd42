#!/usr/bin/env bash
# Screenshots of every suite's pages (/suites per suite, /human, /runs; desktop and phone
# widths) into e2e/artifacts/screens/, for reviews: e2e/screens.mjs against the debug server.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
scripts/setup.sh test >/dev/null
[ -f dist/index.html ] || scripts/build-app.sh
cargo build -q -p server --features wasm-sandbox
ATOMWORLD_BIN="$CARGO_TARGET_DIR/debug/atomworld" ATOMWORLD_DIST="$PWD/dist" node e2e/screens.mjs
