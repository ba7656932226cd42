"""pymatgen side of the matcher speed benchmark (scripts/bench-matcher.sh runs it).

    python pymatgen_bench.py pairs --out PAIRS.json [--count 1000] [--seed 20260601]
    python pymatgen_bench.py time PAIRS.json [--repeat 1] [--verdicts OUT.jsonl]

`pairs` writes (target, prediction) CIF text pairs like the ones the AtomWorld evaluator
sees: targets written by pymatgen's CifWriter from the mineral pool and the upstream triples
(../shared beside the clone, when present), predictions that are copies, small and large
displacements, permutations, translations, strains, symmetrized rewrites, substitutions,
removed atoms, supercells, the upstream inputs and broken texts. Pair i is drawn from a
generator seeded with (seed, i).

`time` evaluates every pair the way the AtomWorld evaluator does (the reference evaluator's steps: parse
both with CifParser(...).parse_structures(primitive=False, check_occu=False), compare
compositions, StructureMatcher(primitive_cell=False, stol=0.5).fit, then get_rms_dist on a
fit), prints one JSON line with the seconds per pass and writes the verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from pymatgen.core.structure_matcher import StructureMatcher
from pymatgen.io.cif import CifParser, CifWriter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "engine" / "tests" / "pymatgen"))
import matcher_cases as mc  # noqa: E402  (structure edits shared with the differential tests)

UPSTREAM = REPO.parent / "shared" / "data" / "atomworld" / "upstream-tasks.jsonl"

KINDS = [
    "copy", "displaced_small", "displaced_large", "permuted", "translated", "strained",
    "symmetrized", "substituted", "removed", "supercell", "upstream", "broken", "rescaled",
    "displaced_small",
]


def cif(s) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return str(CifWriter(s))


def parse(text: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]


def make_pairs(count: int, seed: int) -> list[dict]:
    pool = mc.load_pool()
    upstream = []
    if UPSTREAM.exists():
        with UPSTREAM.open() as fh:
            upstream = [json.loads(line) for line in fh]
    elif os.environ.get("ATOMWORLD_REQUIRE_SHARED") == "1":
        raise SystemExit(f"ATOMWORLD_REQUIRE_SHARED=1 but {UPSTREAM} is missing")
    pairs = []
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        kind = KINDS[i % len(KINDS)]
        if kind == "upstream" and not upstream:
            kind = "copy"
        if kind == "upstream":
            rec = upstream[int(rng.integers(len(upstream)))]
            if rng.random() < 0.5:
                pairs.append({"kind": kind, "target": rec["target_cif"], "prediction": rec["input_cif"]})
            else:
                pairs.append({"kind": kind, "target": rec["target_cif"], "prediction": rec["target_cif"]})
            continue
        name, s = pool[int(rng.integers(len(pool)))]
        while len(s) > 48:
            name, s = pool[int(rng.integers(len(pool)))]
        target = cif(s)
        if kind == "copy":
            pred = target
        elif kind == "displaced_small":
            pred = cif(mc.displaced(s, rng, int(rng.integers(1, 3)), 0.01, 0.4))
        elif kind == "displaced_large":
            pred = cif(mc.displaced(s, rng, int(rng.integers(1, 4)), 0.5, 3.0))
        elif kind == "permuted":
            pred = cif(mc.permuted(mc.displaced(s, rng, 1, 0.01, 0.3), rng))
        elif kind == "translated":
            pred = cif(mc.translated(s, rng))
        elif kind == "strained":
            pred = cif(mc.strained(s, rng, float(rng.choice([0.02, 0.1]))))
        elif kind == "rescaled":
            pred = cif(mc.rescaled(s, float(rng.uniform(0.9, 1.1))))
        elif kind == "symmetrized":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    pred = str(CifWriter(s, symprec=0.1))
                except Exception:  # noqa: BLE001 - fall back to the plain text
                    pred = target
        elif kind == "substituted":
            pred = cif(mc.substituted(s, rng)) if len(s) > 1 else target
        elif kind == "removed":
            pred = cif(mc.removed(s, rng)) if len(s) > 1 else target
        elif kind == "supercell":
            t = s.copy()
            t.make_supercell([1, 1, 2])
            pred = cif(t)
        else:  # broken
            cut = int(rng.integers(len(target) // 3, len(target)))
            pred = target[:cut] if rng.random() < 0.5 else target.replace("_cell_length_a", "_cell_length_q")
        pairs.append({"kind": kind, "target": target, "prediction": pred})
    return pairs


def evaluate(sm: StructureMatcher, target: str, prediction: str) -> dict:
    try:
        t = parse(target)
        p = parse(prediction)
    except Exception:  # noqa: BLE001 - any parse failure is a CifParsingError
        return {"verdict": "CifParsingError"}
    if t.composition != p.composition:
        return {"verdict": "AtomCountMismatch"}
    if not sm.fit(t, p):
        return {"verdict": "StructureMismatch"}
    rms = sm.get_rms_dist(t, p)
    if rms is None:
        return {"verdict": "StructureMismatch"}
    return {"verdict": "Success", "rms": float(rms[0]), "max_dist": float(rms[1])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pairs")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--seed", type=int, default=20260601)
    t = sub.add_parser("time")
    t.add_argument("pairs", type=Path)
    t.add_argument("--repeat", type=int, default=1)
    t.add_argument("--verdicts", type=Path)
    args = ap.parse_args()

    if args.cmd == "pairs":
        pairs = make_pairs(args.count, args.seed)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"seed": args.seed, "pairs": pairs}))
        print(f"{len(pairs)} pairs -> {args.out}", file=sys.stderr)
        return 0

    pairs = json.loads(args.pairs.read_text())["pairs"]
    sm = StructureMatcher(primitive_cell=False, stol=0.5)
    verdicts = [evaluate(sm, x["target"], x["prediction"]) for x in pairs[:20]]  # warm-up
    times = []
    for _ in range(max(1, args.repeat)):
        start = time.perf_counter()
        verdicts = [evaluate(sm, x["target"], x["prediction"]) for x in pairs]
        times.append(time.perf_counter() - start)
    if args.verdicts:
        args.verdicts.write_text("".join(json.dumps(v) + "\n" for v in verdicts))
    times.sort()
    print(json.dumps({"impl": "pymatgen", "pairs": len(pairs), "passes": len(times),
                      "best_seconds": times[0], "median_seconds": times[len(times) // 2]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
