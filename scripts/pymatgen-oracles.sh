#!/usr/bin/env bash
# Makes the pymatgen oracle files of the differential tests when missing and prints the
# environment that points the tests at them (shell `export` lines, for `eval`):
#   scripts/pymatgen-oracles.sh everyday   CIF cases + 1,000 generated matcher pairs
#   scripts/pymatgen-oracles.sh full       CIF cases + 10,000 generated matcher pairs
# Both matcher sets also hold every pool structure and every upstream triple, and come with
# the option-set cases (pymatgen's defaults, CIF-Gen's options, allow_subset); the CIF cases
# and both matcher sets also hold the real-world CIF corpus (data/cif-corpus). Both modes
# also make the formats oracle (POSCAR, extended XYZ, Structure JSON, neighbours, space
# groups; hashed on its own generator and the pool). The files are
# cached outside the clone, under ~/.cache/atomworld/oracle/ (ATOMWORLD_ORACLE_DIR overrides),
# named by pymatgen version, case seed and a hash of the generators and their input data, so
# a change to any of these makes a new file and an unchanged tree reuses the old one.
# ATOMWORLD_MATCHER_PAIRS overrides the number of generated pairs.
set -euo pipefail
cd "$(dirname "$0")/.."

CIF_SEED=20260101
FORMATS_SEED=20261124
MATCHER_SEED=20260517
case "${1:-everyday}" in
  everyday) PAIRS="${ATOMWORLD_MATCHER_PAIRS:-1000}" ;;
  full) PAIRS="${ATOMWORLD_MATCHER_PAIRS:-10000}" ;;
  *) echo "usage: $0 everyday|full" >&2; exit 2 ;;
esac

say() { printf '\033[1;34m[oracle]\033[0m %s\n' "$*" >&2; }

PY="$(scripts/pymatgen-venv.sh)"
PMG="$("$PY" -c 'import importlib.metadata as m; print(m.version("pymatgen"))')"
DIR="${ATOMWORLD_ORACLE_DIR:-$HOME/.cache/atomworld/oracle}"
mkdir -p "$DIR"

UPSTREAM=../shared/data/atomworld/upstream-tasks.jsonl
if [ ! -f "$UPSTREAM" ] && [ "${ATOMWORLD_REQUIRE_SHARED:-0}" = 1 ]; then
  say "ATOMWORLD_REQUIRE_SHARED=1 but $UPSTREAM (beside the clone) is missing"
  exit 1
fi
# What the cases depend on besides pymatgen and the seed: the generators and their inputs.
inputs=(engine/tests/pymatgen/cif_oracle.py engine/tests/pymatgen/matcher_cases.py
  engine/tests/pymatgen/matcher_oracle.py data/structures/minerals.jsonl)
[ -f "$UPSTREAM" ] && inputs+=("$UPSTREAM")
# The real-world CIF corpus (data/cif-corpus): its files' names and contents.
mapfile -d '' corpus < <(find data/cif-corpus -type f \( -name '*.cif' -o -name '*.mcif' \) -print0 | LC_ALL=C sort -z)
HASH="$({ cat "${inputs[@]}" "${corpus[@]}"; printf '%s\n' "${corpus[@]}"; } | sha256sum | cut -c1-10)"

# numpy's answers depend on the OpenBLAS kernels it runs: some machines here force one with
# OPENBLAS_CORETYPE (read, never changed), so the kernel is part of every oracle's name.
KERNEL="${OPENBLAS_CORETYPE:-native}"
CIF_OUT="$DIR/cif-pmg$PMG-seed$CIF_SEED-$HASH.json"
FORMATS_HASH="$(cat engine/tests/pymatgen/formats_oracle.py data/structures/minerals.jsonl | sha256sum | cut -c1-10)"
FORMATS_OUT="$DIR/formats-pmg$PMG-$KERNEL-seed$FORMATS_SEED-$FORMATS_HASH.json"
MATCHER_OUT="$DIR/matcher-pmg$PMG-$KERNEL-seed$MATCHER_SEED-n$PAIRS-$HASH.json"
# pymatgen's default options, the CIF-Gen probe's (primitive cells, supercells) and
# allow_subset, on pool pairs (matcher_cases.py; about 40 s, once).
OPTIONS_HASH="$(cat engine/tests/pymatgen/matcher_cases.py data/structures/minerals.jsonl | sha256sum | cut -c1-10)"
OPTIONS_OUT="$DIR/matcher-options-pmg$PMG-$KERNEL-seed$MATCHER_SEED-$OPTIONS_HASH.json"
JOBS="$(nproc)"

if [ ! -s "$CIF_OUT" ]; then
  say "generating the CIF reader oracle (pymatgen $PMG, seed $CIF_SEED; about 40 s, once)"
  "$PY" engine/tests/pymatgen/cif_oracle.py --seed "$CIF_SEED" --out "$CIF_OUT.part" >&2
  mv "$CIF_OUT.part" "$CIF_OUT"
fi
if [ ! -s "$FORMATS_OUT" ]; then
  say "generating the formats oracle (pymatgen $PMG, ASE, spglib; seed $FORMATS_SEED; once)"
  "$PY" engine/tests/pymatgen/formats_oracle.py --seed "$FORMATS_SEED" --out "$FORMATS_OUT.part" >&2
  mv "$FORMATS_OUT.part" "$FORMATS_OUT"
fi
if [ ! -s "$MATCHER_OUT" ]; then
  say "generating $PAIRS matcher pairs + pool + upstream (pymatgen $PMG, seed $MATCHER_SEED, $JOBS processes; once)"
  "$PY" engine/tests/pymatgen/matcher_oracle.py --pairs "$PAIRS" --seed "$MATCHER_SEED" \
    --jobs "$JOBS" --out "$MATCHER_OUT.part" >&2
  mv "$MATCHER_OUT.part" "$MATCHER_OUT"
fi
if [ ! -s "$OPTIONS_OUT" ]; then
  say "generating the matcher's option-set cases: default, cifgen, subset (pymatgen $PMG; once)"
  ATOMWORLD_MATCHER_SEED="$MATCHER_SEED" ATOMWORLD_MATCHER_SETS=default,cifgen,subset \
    "$PY" engine/tests/pymatgen/matcher_cases.py "$OPTIONS_OUT.part.json" >&2
  mv "$OPTIONS_OUT.part.json" "$OPTIONS_OUT"
fi
printf 'export ATOMWORLD_CIF_CASES=%q\n' "$CIF_OUT"
# Two case files, ':'-separated: the generated pairs and the option-set cases.
printf 'export ATOMWORLD_MATCHER_CASES=%q\n' "$MATCHER_OUT:$OPTIONS_OUT"
printf 'export ATOMWORLD_FORMATS_CASES=%q\n' "$FORMATS_OUT"
