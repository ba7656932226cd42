#!/usr/bin/env bash
# Times the evaluator where the page runs it: the evaluate bench's 2,500 (target, answer)
# pairs, evaluated in a module worker of Debian's chromium (headless) by the engine-bench
# wasm, built as the page's matching worker ships (the wasm-worker profile, then binaryen's
# wasm-opt -O3). Prints the best and median of five passes after a warm-up pass. A benchmark,
# not a test: it asserts nothing about time.
#   scripts/bench-worker-browser.sh [--passes N]
set -euo pipefail
cd "$(dirname "$0")/.."

PASSES=5
while [ $# -gt 0 ]; do
  case "$1" in
    --passes) PASSES="$2"; shift 2 ;;
    *) echo "usage: $0 [--passes N]" >&2; exit 2 ;;
  esac
done

say() { printf '\n\033[1;34m[bench]\033[0m %s\n' "$*" >&2; }
scripts/setup.sh build >&2
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
OUT="$TARGET_DIR/bench-worker-browser"
mkdir -p "$OUT"

# Written afresh each run (a few seconds): pairs kept from an earlier checkout could come
# from another generator or perturbation than the evaluate bench's.
say "writing the evaluate bench's pairs (cargo bench -p benchmarks --bench evaluate)"
ATOMWORLD_BENCH_PAIRS="$OUT/pairs.json.part" cargo bench -q -p benchmarks --bench evaluate >&2
mv "$OUT/pairs.json.part" "$OUT/pairs.json"
say "building the wasm bench as the page's worker (wasm-worker profile, wasm-opt -O3)"
scripts/build-engine-bench-wasm.sh web "$OUT/pkg"
if [ ! -d e2e/node_modules/playwright-core ]; then
  say "installing the e2e tests' node packages (playwright-core drives chromium)"
  (cd e2e && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
say "timing $PASSES passes in a chromium module worker ($(chromium --version 2>/dev/null | head -1))"
node engine-bench/browser/bench.mjs "$OUT" "$PASSES"
