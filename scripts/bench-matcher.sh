#!/usr/bin/env bash
# Speed benchmark of the AtomWorld evaluation path, end to end on the same 1,000
# (target, prediction) CIF pairs: parse both CIFs (pymatgen-compatible reader), compare
# compositions, StructureMatcher(primitive_cell=False, stol=0.5) fit and get_rms_dist.
#   (a) pymatgen (engine-bench/pymatgen_bench.py, the pinned venv),
#   (b) our native release build (bench-matcher),
#   (c) our wasm build under node (engine-bench as a wasm-bindgen cdylib), built as the page's
#       matching worker ships: the wasm-worker profile, then binaryen's wasm-opt -O3,
#   (d) the npm package matterviz-wasm (ferrox), driven the same way from node.
# Prints the seconds per pass of each, the speed-ups over pymatgen and how many verdicts
# agree with pymatgen's. A benchmark, not a test: it asserts nothing about time.
#   scripts/bench-matcher.sh [--pairs N] [--repeat N] [--pymatgen-repeat N]
set -euo pipefail
cd "$(dirname "$0")/.."

PAIRS=1000
REPEAT=5
PMG_REPEAT=1
SEED=20260601
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) PAIRS="$2"; shift 2 ;;
    --repeat) REPEAT="$2"; shift 2 ;;
    --pymatgen-repeat) PMG_REPEAT="$2"; shift 2 ;;
    *) echo "usage: $0 [--pairs N] [--repeat N] [--pymatgen-repeat N]" >&2; exit 2 ;;
  esac
done

say() { printf '\n\033[1;34m[bench]\033[0m %s\n' "$*" >&2; }
scripts/setup.sh build >&2
PY="$(scripts/pymatgen-venv.sh)"
PMG="$("$PY" -c 'import importlib.metadata as m; print(m.version("pymatgen"))')"
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
CACHE="${ATOMWORLD_ORACLE_DIR:-$HOME/.cache/atomworld/oracle}"
mkdir -p "$CACHE"
HASH="$(cat engine-bench/pymatgen_bench.py engine/tests/pymatgen/matcher_cases.py data/structures/minerals.jsonl \
  $(ls ../shared/data/atomworld/upstream-tasks.jsonl 2>/dev/null) | sha256sum | cut -c1-10)"
PAIRS_FILE="$CACHE/bench-pairs-pmg$PMG-seed$SEED-n$PAIRS-$HASH.json"
OUT="$TARGET_DIR/bench-matcher"
mkdir -p "$OUT"

if [ ! -s "$PAIRS_FILE" ]; then
  say "writing $PAIRS pairs (pymatgen $PMG, seed $SEED) to $PAIRS_FILE"
  "$PY" engine-bench/pymatgen_bench.py pairs --count "$PAIRS" --seed "$SEED" --out "$PAIRS_FILE.part"
  mv "$PAIRS_FILE.part" "$PAIRS_FILE"
fi

say "building the native bench (release)"
cargo build --release -p engine-bench --bin bench-matcher >&2
say "building the wasm bench as the page's worker (wasm-worker profile, wasm-opt -O3) and binding it for node"
scripts/build-engine-bench-wasm.sh nodejs "$OUT/pkg"
if [ ! -d engine-bench/node/node_modules/matterviz-wasm ]; then
  say "installing matterviz-wasm (npm ci; its matterviz peer dependency is not needed)"
  (cd engine-bench/node && npm ci --no-audit --no-fund --legacy-peer-deps --loglevel=error) >&2
fi

say "timing pymatgen ($PMG_REPEAT pass(es) of $PAIRS pairs; about a minute per pass)"
"$PY" engine-bench/pymatgen_bench.py time "$PAIRS_FILE" --repeat "$PMG_REPEAT" \
  --verdicts "$OUT/verdicts-pymatgen.jsonl" > "$OUT/results.jsonl"
say "timing native ($REPEAT passes)"
"$TARGET_DIR/release/bench-matcher" "$PAIRS_FILE" --repeat "$REPEAT" \
  --verdicts "$OUT/verdicts-native.jsonl" >> "$OUT/results.jsonl"
say "timing wasm under node $(node --version) and matterviz-wasm ($REPEAT passes)"
node engine-bench/node/bench.mjs "$PAIRS_FILE" --ours "$OUT/pkg" --repeat "$REPEAT" \
  --out-dir "$OUT" >> "$OUT/results.jsonl"

python3 - "$OUT" <<'PYEOF'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
by = {r["impl"]: r for r in rows}
ref = by["pymatgen"]
want = [json.loads(l) for l in (out / "verdicts-pymatgen.jsonl").read_text().splitlines() if l.strip()]

def agreement(name):
    path = out / f"verdicts-{name}.jsonl"
    if not path.exists():
        return ""
    got = [json.loads(l) for l in path.read_text().splitlines() if l.strip()]
    same_verdict = sum(g["verdict"] == w["verdict"] for g, w in zip(got, want))
    both = [(g, w) for g, w in zip(got, want) if g["verdict"] == w["verdict"] == "Success"]
    drms = max((abs(g["rms"] - w["rms"]) for g, w in both), default=0.0)
    return f"verdicts agree {same_verdict}/{len(want)}, max |Δrms| {drms:.1e}"

pairs = ref["pairs"]
print(f"\nmatcher benchmark: {pairs} (target, prediction) CIF pairs, end to end "
      "(parse both, composition, fit, get_rms_dist)")
print(f"{'implementation':<16}{'s/pass (best)':>14}{'ms/pair':>10}{'× pymatgen':>12}   agreement with pymatgen")
base = ref["best_seconds"]
for name in ["pymatgen", "native", "wasm", "matterviz-wasm"]:
    r = by.get(name)
    if r is None:
        continue
    if "skipped" in r:
        print(f"{name:<16}  skipped: {r['skipped']}")
        continue
    s = r["best_seconds"]
    print(f"{name:<16}{s:>14.4f}{1000 * s / pairs:>10.3f}{base / s:>12.1f}   "
          + ("(reference)" if name == "pymatgen" else agreement(name)))
PYEOF
