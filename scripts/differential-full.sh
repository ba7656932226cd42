#!/usr/bin/env bash
# The full-size differential run against pymatgen (the everyday one is part of
# scripts/test.sh): 10,000 generated matcher pairs (identical, one or a few atoms displaced by
# 0.01-3 Å, translated, permuted, rescaled, strained, supercell against unit cell, different
# compositions, coincident atoms, triclinic and rebased cells, polymorphs) plus every pool
# structure and every upstream triple, and the CIF reader and writer over all their cases.
# Prints the agreement figures and every disagreement with its reason; exits non-zero when
# the tests' acceptance thresholds are not met. The first run spends ~3-5 min in pymatgen;
# the oracle is cached under ~/.cache/atomworld/oracle/.
#   scripts/differential-full.sh          (ATOMWORLD_MATCHER_PAIRS=N for another size)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1;34m[differential]\033[0m %s\n' "$*" >&2; }
oracle_env="$(scripts/pymatgen-oracles.sh full)"
eval "$oracle_env"
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
LOG="$TARGET_DIR/differential-full.log"

say "running the differential tests (release build) on $ATOMWORLD_MATCHER_CASES"
status=0
ATOMWORLD_MATCHER_STRICT=1 cargo test --release -p engine --test matcher_vs_pymatgen --test cif_vs_pymatgen --test formats_vs_pymatgen \
  -- --nocapture --test-threads=1 >"$LOG" 2>&1 || status=$?

python3 - "$LOG" "$ATOMWORLD_MATCHER_CASES" <<'PYEOF'
import json, re, sys

log = open(sys.argv[1], encoding="utf-8").read().splitlines()
# The case files, ':'-separated; the test numbers cases over all of them in order.
cases = [c for path in sys.argv[2].split(":") for c in json.load(open(path))["cases"]]
STOL = 0.5
print("\n=== differential run against pymatgen (full) ===")
for line in log:
    if line.startswith("not supported"):
        print(line)
    if "disagreements agree with every" in line or "where both fit:" in line:
        print(line.strip())
    for head in ("matcher vs pymatgen", "CIF oracle", "reader:", "writer:"):
        if head in line:  # stderr and stdout lines of the test binaries can interleave
            print(line[line.index(head):])

case_line = re.compile(r"^  case (\d+)(?: \[[^\]]*\])? \((.*?)\): (.*)$")
dis = [case_line.match(l) for l in log]
dis = [m for m in dis if m]
print(f"\nmatcher disagreements: {len(dis)}")
for m in dis:
    k, label, what = int(m[1]), m[2], m[3]
    c = cases[k]
    n1, n2 = len(c["s1"]["species"]), len(c["s2"]["species"])
    ref = f"pymatgen fit={c['fit']} rms={c['rms']} max_dist={c['max_dist']}"
    if label.startswith("coincident"):
        reason = ("near-tie between the two coincident atoms' assignments (not traced case by case); the "
                  "oracle clears pymatgen's reduced-structure cache before every pair, which an answer "
                  "depending on earlier pairs would otherwise explain")
    elif what.startswith("fit "):
        md = c["max_dist"]
        if md is not None and abs(md - STOL) < 1e-3:
            reason = f"on the stol boundary: pymatgen's max_dist {md:.9f} is within 1e-3 of 0.5"
        elif k in (720, 8714, 9861):
            reason = ("traced: pymatgen itself gives our verdict when its fractional coordinates go through an "
                      "adjugate inverse of the mapped lattice instead of np.linalg.inv (OpenBLAS LU): the verdict "
                      "hangs on the last bits of the LAPACK inverse")
        else:
            reason = ("the best max-distance matches differ away from the stol boundary; likely (not traced case "
                      "by case) the exact-tie effect of the RMS disagreements below: equidistant periodic images or "
                      "equal-cost assignments broken by machine-dependent rounding in pymatgen")
    else:
        nums = [float(x) for x in re.findall(r"rms (\S+) vs (\S+),", what)[0]] if "rms " in what else None
        tie = ("an exact tie that rounding breaks: two periodic images of a pair at the same distance (a site "
               "at (1/3, 2/3) of a hexagonal cell is equidistant from three lattice points), symmetric copies "
               "of the best match, or two assignments of equal cost; pymatgen breaks it by the last bits of "
               "numpy's BLAS/LAPACK results, which ours reproduce (on this machine's OpenBLAS kernels)")
        if "mapping searched: agrees" in what:
            tie += ("; with every lattice mapping searched (fold_symmetric_mappings false) ours agrees: pymatgen's "
                    "pick lies in a mapping the default search folds into a symmetric one, whose tie breaks the "
                    "other way or whose copy rounds differently")
        else:
            tie += "; NOT explained by the folding of symmetric lattice mappings"
        traced = {276: "traced: in the representative mapping the images chosen for sites at (1/3, 2/3) tie and "
                       "break one way (RMS 0.386); in a symmetric mapping the search folds into it they break the "
                       "other way, and pymatgen's best (0.303) comes from there",
                  1214: "traced: pymatgen scores 16 candidates whose RMS agree to 3e-16 (symmetric copies); "
                        "ours, one of them, is bit for bit pymatgen's value for it (0.3236020480584812); pymatgen "
                        "keeps a copy 2 ulps lower"}
        tie = (traced[k] + "; cause: " if k in traced else "") + tie
        if nums and abs(nums[0] - nums[1]) > 1e-9:
            better = "pymatgen's" if nums[0] > nums[1] else "ours"
            reason = f"the best matches differ ({better} has the smaller RMS): " + tie
        elif nums:
            reason = "same RMS, different max_dist: " + tie
        else:
            reason = "get_rms_dist presence differs"
    print(f"  case {k} ({label}; {n1} vs {n2} sites): {what}\n      {ref}\n      reason: {reason}")

other = []
if any(l.startswith("disagreements:") for l in log):
    start = next(i for i, l in enumerate(log) if l.startswith("disagreements:"))
    for l in log[start + 1:]:
        if not l.startswith("  "):
            break
        other.append(l)
print(f"\nCIF reader/writer disagreements: {len(other)}")
for l in other:
    print(l)
PYEOF
if [ "$status" -ne 0 ]; then
  say "the differential tests did not pass (log: $LOG)"
fi
exit "$status"
