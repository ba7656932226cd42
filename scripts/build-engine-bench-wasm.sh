#!/usr/bin/env bash
# Builds engine-bench's wasm as the page's matching worker ships it (the wasm-worker profile,
# then binaryen's wasm-opt -O3) and binds it with wasm-bindgen for the benchmarks' hosts:
#   scripts/build-engine-bench-wasm.sh nodejs|web OUT_DIR
# (nodejs: scripts/bench-matcher.sh; web: scripts/bench-worker-browser.sh). The bound
# package is written to OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: $0 nodejs|web OUT_DIR" >&2; exit 2; }
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
cargo build --profile wasm-worker -p engine-bench --lib --target wasm32-unknown-unknown >&2
wasm-bindgen --target "$1" --out-dir "$2" \
  "$TARGET_DIR/wasm32-unknown-unknown/wasm-worker/engine_bench.wasm"
scripts/binaryen/node_modules/.bin/wasm-opt -O3 "$2/engine_bench_bg.wasm" -o "$2/engine_bench_bg.wasm"
