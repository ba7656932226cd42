#!/usr/bin/env bash
# Fuzzes the engine's structure readers with cargo-fuzz (libFuzzer + AddressSanitizer).
#   scripts/fuzz.sh                       every target, 10 minutes each, one after another
#   scripts/fuzz.sh read_cif 60           one target for 60 seconds
#   scripts/fuzz.sh --list                the targets
# Targets (fuzz/fuzz_targets/): read_cif (the file-order reader), parse_cif_like_pymatgen
# (the evaluator's pymatgen-compatible reader), read_structure_formats (POSCAR, extended XYZ
# and pymatgen JSON; the first byte picks the reader). Each must never panic on any input.
# cargo-fuzz needs nightly compiler flags: this uses the stable toolchain with
# RUSTC_BOOTSTRAP=1 (set ATOMWORLD_FUZZ_TOOLCHAIN=nightly to use a nightly toolchain).
# The corpus starts from every CIF of data/structures/minerals.jsonl (and the upstream triples
# when ../shared is there) and grows in fuzz/corpus/<target>/; crashes land in
# fuzz/artifacts/<target>/ (both ignored by git). Reproduce one with
#   RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/crash-…
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(read_cif parse_cif_like_pymatgen read_structure_formats)
if [ "${1:-}" = "--list" ]; then printf '%s\n' "${TARGETS[@]}"; exit 0; fi
if [ $# -ge 1 ]; then TARGETS=("$1"); fi
SECONDS_EACH="${2:-600}"

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "[fuzz] installing cargo-fuzz (cargo install)" >&2
  cargo install cargo-fuzz --locked
fi
toolchain=()
if [ -n "${ATOMWORLD_FUZZ_TOOLCHAIN:-}" ]; then
  toolchain=("+$ATOMWORLD_FUZZ_TOOLCHAIN")
else
  export RUSTC_BOOTSTRAP=1
fi
# A target directory of its own: fuzz builds use sanitizer flags that would invalidate
# the main build's cache.
export CARGO_TARGET_DIR="${ATOMWORLD_FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}/fuzz}"

for t in "${TARGETS[@]}"; do
  corpus="fuzz/corpus/$t"
  if [ ! -d "$corpus" ]; then
    mkdir -p "$corpus"
    python3 - "$corpus" "$t" <<'PYEOF'
import hashlib, json, sys
from pathlib import Path
out = Path(sys.argv[1])
texts = [json.loads(l)["cif"] for l in open("data/structures/minerals.jsonl")]
up = Path("../shared/data/atomworld/upstream-tasks.jsonl")
if up.exists():
    for l in up.open():
        d = json.loads(l)
        texts += [d["input_cif"], d["target_cif"]]
if sys.argv[2] == "read_structure_formats":
    # Seeds for the POSCAR (0), XYZ (1) and JSON (2) readers: the engine's own test files.
    poscar = "NaCl\n1.0\n5.64 0 0\n0 5.64 0\n0 0 5.64\nNa Cl\n1 1\nSelective dynamics\nDirect\n0 0 0 T T F\n0.5 0.5 0.5 F F F\n"
    poscar4 = "x\n-27\n1 0 0\n0 1 0\n0 0 1\n2\nCartesian\n0 0 0 Fe\n.5 .5 .5 Fe\n"
    xyz = '2\nLattice="5.64 0.0 0.0 0.0 5.64 0.0 0.0 0.0 5.64" Properties=species:S:1:pos:R:3 pbc="T T T"\nNa 0 0 0\nCl 2.82 2.82 2.82\n'
    js = json.dumps({"@module": "pymatgen.core.structure", "@class": "Structure", "charge": 0,
                     "lattice": {"matrix": [[3, 0, 0], [0, 3, 0], [0, 0, 3]], "pbc": [True] * 3},
                     "properties": {}, "sites": [{"species": [{"element": "Fe", "occu": 1}],
                     "abc": [0, 0, 0], "properties": {}, "label": "Fe"}]})
    texts = ["\0" + poscar, "\0" + poscar4, "\1" + xyz, "\2" + js]
for t in texts:
    b = t.encode()
    (out / hashlib.sha1(b).hexdigest()).write_bytes(b)
print(f"[fuzz] seeded {out} with {len(texts)} CIFs", file=sys.stderr)
PYEOF
  fi
  echo "[fuzz] $t for ${SECONDS_EACH}s" >&2
  cargo "${toolchain[@]}" fuzz run --fuzz-dir fuzz "$t" "$corpus" -- \
    -max_total_time="$SECONDS_EACH" -max_len=65536 -print_final_stats=1
done
