"""Reference cases for the engine's StructureMatcher port.

Run with the pymatgen venv:

    ~/.cache/atomworld/venv-pmg/bin/python engine/tests/pymatgen/matcher_cases.py [OUT.json]

It builds ~300 deterministic (seeded) structure pairs from data/structures/minerals.jsonl,
runs pymatgen's StructureMatcher(primitive_cell=False, stol=0.5) `fit` and `get_rms_dist` on
each, and writes the pairs and verdicts as JSON (default:
~/.cache/atomworld/matcher_cases.json). Point the Rust test at it with
ATOMWORLD_MATCHER_CASES=<path> cargo test -p engine --test matcher_vs_pymatgen. Set
ATOMWORLD_MATCHER_SEED to draw a different (still deterministic) case set.

Every float is stored twice: as a JSON number for reading and as its IEEE-754 bit pattern
(an unsigned integer) so that the Rust side reads exactly the bits pymatgen used.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from pymatgen.core import Lattice, Structure
from pymatgen.core.structure_matcher import StructureMatcher
from pymatgen.io.cif import CifParser

SEED = 20260517
REPO = Path(__file__).resolve().parents[3]
POOL = REPO / "data" / "structures" / "minerals.jsonl"
DEFAULT_OUT = Path.home() / ".cache" / "atomworld" / "matcher_cases.json"

# Unimodular integer matrices used to re-express a cell in a skewed basis.
UNIMODULAR = [
    [[1, 1, 0], [0, 1, 0], [0, 0, 1]],
    [[1, 0, 0], [1, 1, 0], [0, 1, 1]],
    [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
    [[1, 0, 1], [0, 1, 0], [0, 0, 1]],
    [[1, -1, 0], [0, 1, 1], [0, 0, 1]],
    [[2, 1, 0], [1, 1, 0], [0, 0, 1]],
    [[1, 0, 0], [0, 0, 1], [0, -1, 0]],
    [[1, 2, 1], [0, 1, 1], [0, 0, 1]],
]

SUBSTITUTES = ["K", "Rb", "Ba", "Pb", "F", "Br", "Ge", "Ni"]


def bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def plain(s: Structure) -> dict:
    matrix = [[float(v) for v in row] for row in s.lattice.matrix]
    frac = [[float(v) for v in row] for row in s.frac_coords]
    return {
        "matrix": matrix,
        "matrix_bits": [[bits(v) for v in row] for row in matrix],
        "species": [site.specie.symbol for site in s],
        "frac": frac,
        "frac_bits": [[bits(v) for v in row] for row in frac],
    }


def element_only(s: Structure) -> Structure:
    """The structure with plain elements (no oxidation states, no labels or properties)."""
    return Structure(
        Lattice(s.lattice.matrix.copy()),
        [site.specie.symbol for site in s],
        s.frac_coords.copy(),
    )


def load_pool() -> list[tuple[str, Structure]]:
    out = []
    with POOL.open() as fh:
        for line in fh:
            rec = json.loads(line)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                s = CifParser.from_str(rec["cif"]).parse_structures(primitive=False)[0]
            out.append((rec["mineral"], element_only(s)))
    return out


def displaced(s: Structure, rng, n_atoms: int, lo: float, hi: float) -> Structure:
    t = s.copy()
    idx = rng.choice(len(t), size=min(n_atoms, len(t)), replace=False)
    cart = t.cart_coords.copy()
    for i in idx:
        v = rng.normal(size=3)
        v /= np.linalg.norm(v)
        cart[i] += v * rng.uniform(lo, hi)
    frac = t.lattice.get_fractional_coords(cart)
    return Structure(t.lattice, [x.specie.symbol for x in t], frac)


def translated(s: Structure, rng) -> Structure:
    shift = rng.uniform(-1.5, 1.5, size=3)
    return Structure(s.lattice, [x.specie.symbol for x in s], s.frac_coords + shift)


def permuted(s: Structure, rng) -> Structure:
    order = rng.permutation(len(s))
    return Structure(s.lattice, [s[i].specie.symbol for i in order], s.frac_coords[order])


def rescaled(s: Structure, factor: float) -> Structure:
    return Structure(Lattice(s.lattice.matrix * factor), [x.specie.symbol for x in s], s.frac_coords)


def strained(s: Structure, rng, amount: float) -> Structure:
    """A general (triclinic) strain of the cell; fractional coordinates kept."""
    eps = rng.uniform(-amount, amount, size=(3, 3))
    m = s.lattice.matrix @ (np.eye(3) + eps)
    return Structure(Lattice(m), [x.specie.symbol for x in s], s.frac_coords)


def rebased(s: Structure, mat) -> Structure:
    """The same crystal in the basis `mat · lattice` (unimodular), wrapped into [0, 1)."""
    mat = np.array(mat, dtype=float)
    new = Lattice(mat @ s.lattice.matrix)
    frac = s.frac_coords @ np.linalg.inv(mat)
    frac -= np.floor(frac)
    return Structure(new, [x.specie.symbol for x in s], frac)


def substituted(s: Structure, rng) -> Structure:
    i = int(rng.integers(len(s)))
    species = [x.specie.symbol for x in s]
    choices = [e for e in SUBSTITUTES if e != species[i]]
    species[i] = choices[int(rng.integers(len(choices)))]
    return Structure(s.lattice, species, s.frac_coords)


def removed(s: Structure, rng) -> Structure:
    i = int(rng.integers(len(s)))
    keep = [j for j in range(len(s)) if j != i]
    return Structure(s.lattice, [s[j].specie.symbol for j in keep], s.frac_coords[keep])


def build_pairs(pool, rng) -> list[tuple[str, str, Structure, Structure]]:
    pairs = []
    n = len(pool)

    def pick(max_sites: int = 64):
        while True:
            name, s = pool[int(rng.integers(n))]
            if len(s) <= max_sites:
                return name, s

    for _ in range(25):
        name, s = pick()
        pairs.append(("identical", name, s, s.copy()))
    for _ in range(90):
        name, s = pick()
        k = int(rng.integers(1, 4))
        hi = float(rng.choice([0.05, 0.3, 1.0, 3.0]))
        pairs.append((f"displaced{k}<{hi}", name, s, displaced(s, rng, k, 0.01, hi)))
    for _ in range(25):
        name, s = pick()
        pairs.append(("translated", name, s, translated(s, rng)))
    for _ in range(25):
        name, s = pick()
        t = permuted(displaced(s, rng, 2, 0.01, 0.5), rng)
        pairs.append(("permuted", name, s, t))
    for _ in range(25):
        name, s = pick()
        f = float(rng.uniform(0.8, 1.25))
        pairs.append(("rescaled", name, s, rescaled(s, f)))
    for _ in range(15):
        name, s = pick()
        pairs.append(("strained", name, s, strained(s, rng, float(rng.choice([0.02, 0.08, 0.2])))))
    for _ in range(15):
        name, s = pick()
        if len(s) < 2:
            continue
        pairs.append(("substituted", name, s, substituted(s, rng)))
    for _ in range(8):
        name, s = pick()
        if len(s) < 2:
            continue
        pairs.append(("removed", name, s, removed(s, rng)))
    for _ in range(40):
        # Triclinic: a generally strained cell, compared with a rebased, displaced copy.
        name, s = pick(40)
        tri = strained(s, rng, 0.05)
        m = UNIMODULAR[int(rng.integers(len(UNIMODULAR)))]
        t = rebased(displaced(tri, rng, int(rng.integers(1, 3)), 0.01, 0.8), m)
        pairs.append(("triclinic", name, tri, permuted(t, rng)))
    for _ in range(20):
        name, s = pick(40)
        m = UNIMODULAR[int(rng.integers(len(UNIMODULAR)))]
        t = rebased(translated(displaced(s, rng, 2, 0.01, 0.4), rng), m)
        pairs.append(("rebased", name, s, rescaled(t, float(rng.uniform(0.9, 1.1)))))
    # Different structures with the same composition (polymorphs in the pool).
    by_formula: dict[str, list[tuple[str, Structure]]] = {}
    for name, s in pool:
        by_formula.setdefault(s.composition.reduced_formula, []).append((name, s))
    poly = 0
    for items in by_formula.values():
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                (na, a), (nb, b) = items[i], items[j]
                if len(a) == len(b) and len(a) <= 40 and poly < 15:
                    pairs.append(("polymorph", f"{na} | {nb}", a, b))
                    poly += 1
    return pairs


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    seed = int(os.environ.get("ATOMWORLD_MATCHER_SEED", SEED))
    rng = np.random.default_rng(seed)
    pool = load_pool()
    pairs = build_pairs(pool, rng)
    sm = StructureMatcher(primitive_cell=False, stol=0.5)
    cases = []
    t0 = time.time()
    for kind, name, s1, s2 in pairs:
        fit = bool(sm.fit(s1, s2))
        rms = sm.get_rms_dist(s1, s2)
        cases.append(
            {
                "kind": kind,
                "mineral": name,
                "s1": plain(s1),
                "s2": plain(s2),
                "fit": fit,
                "rms": None if rms is None else float(rms[0]),
                "max_dist": None if rms is None else float(rms[1]),
            }
        )
    elapsed = time.time() - t0
    import pymatgen.core

    doc = {
        "generator": "engine/tests/pymatgen/matcher_cases.py",
        "seed": seed,
        "pymatgen": pymatgen.core.__version__,
        "matcher": "StructureMatcher(primitive_cell=False, stol=0.5)",
        "pymatgen_seconds": elapsed,
        "cases": cases,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, out)
    n_fit = sum(c["fit"] for c in cases)
    print(f"{len(cases)} cases ({n_fit} fit) written to {out}; pymatgen took {elapsed:.1f}s")


if __name__ == "__main__":
    main()
