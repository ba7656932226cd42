"""Reference cases for the engine's StructureMatcher port.

Run with the pymatgen venv:

    ~/.cache/atomworld/venv-pmg/bin/python engine/tests/pymatgen/matcher_cases.py [OUT.json]

It builds deterministic (seeded) structure pairs from data/structures/minerals.jsonl, runs
pymatgen's StructureMatcher `fit` and `get_rms_dist` on each under several option sets, and
writes the pairs and verdicts as JSON (default: ~/.cache/atomworld/matcher_cases.json):

- "atomworld": StructureMatcher(primitive_cell=False, stol=0.5) on ~300 general pairs;
- "default": StructureMatcher() (primitive_cell=True, ltol 0.2, stol 0.3, angle_tol 5) on the
  same pairs plus conventional-vs-primitive and supercell pairs of pool minerals;
- "cifgen": StructureMatcher(primitive_cell=True, attempt_supercell=True, stol=0.5) (the
  CIF-Gen probe) on the same pairs;
- "subset": StructureMatcher(primitive_cell=False, attempt_supercell=True, allow_subset=True,
  stol=0.5) on pairs where atoms were removed or cells repeated.

Each case names its option set in "options"; the sets are listed in "option_sets". pymatgen's
reduced-structure cache is cleared before every case so that no case depends on another. Point the Rust test at it with
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
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

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


def species_entry(site):
    """An ordered site's symbol; for any other site (mixed, or one element with occupancy
    other than 1) or a site with oxidation states, its species in pymatgen's order as
    [symbol, amount bit pattern] pairs, [symbol, amount bit pattern, oxidation state] for a
    species with one."""
    oxidised = any(getattr(sp, "oxi_state", None) is not None for sp in site.species)
    if site.is_ordered and not oxidised:
        return site.specie.symbol
    out = []
    for sp, amount in site.species.items():
        entry = [sp.symbol, bits(amount)]
        if getattr(sp, "oxi_state", None) is not None:
            entry.append(float(sp.oxi_state))
        out.append(entry)
    return out


def plain(s: Structure) -> dict:
    matrix = [[float(v) for v in row] for row in s.lattice.matrix]
    frac = [[float(v) for v in row] for row in s.frac_coords]
    return {
        "matrix": matrix,
        "matrix_bits": [[bits(v) for v in row] for row in matrix],
        "species": [species_entry(site) for site in s],
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


def supercell(s: Structure, mat) -> Structure:
    """The supercell `mat · lattice` (integer matrix) with every image of every site."""
    t = s.copy()
    t.make_supercell(mat)
    return Structure(t.lattice, [x.specie.symbol for x in t], t.frac_coords)


SUPERCELLS = [
    [[2, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[1, 0, 0], [0, 2, 0], [0, 0, 2]],
    [[1, 1, 0], [-1, 1, 0], [0, 0, 1]],
    [[3, 0, 0], [0, 1, 0], [0, 0, 1]],
    [[1, 0, 0], [0, 1, 1], [0, -1, 1]],
    [[2, 0, 0], [0, 2, 0], [0, 0, 2]],
]


def build_primitive_pairs(pool, rng) -> list[tuple[str, str, Structure, Structure]]:
    """Pairs that exercise primitive reduction and supercell matching."""
    pairs = []
    n = len(pool)

    def pick(max_sites: int):
        while True:
            name, s = pool[int(rng.integers(n))]
            if len(s) <= max_sites:
                return name, s

    # Conventional standard cells of pool minerals (the pool holds primitive cells) against
    # the pool's cells, where the two differ.
    with_larger = []
    for name, s in pool:
        if len(s) > 24:
            continue
        c = element_only(SpacegroupAnalyzer(s).get_conventional_standard_structure())
        if len(c) > len(s):
            with_larger.append((name, c, s))
    for name, c, p in with_larger[:30]:
        pairs.append(("conv_prim", name, c, p))
    for _ in range(20):
        name, c, p = with_larger[int(rng.integers(len(with_larger)))]
        m = UNIMODULAR[int(rng.integers(len(UNIMODULAR)))]
        t = rebased(translated(displaced(p, rng, 1, 0.01, 0.3), rng), m)
        pairs.append(("prim_conv", name, permuted(t, rng), c))
    # Supercells against unit cells, both ways round, clean and with displaced atoms (a
    # displaced supercell is no longer a supercell, so only attempt_supercell matches it).
    for _ in range(30):
        name, s = pick(16)
        m = SUPERCELLS[int(rng.integers(len(SUPERCELLS)))]
        sc = supercell(s, m)
        pairs.append(("supercell", name, s, permuted(translated(sc, rng), rng)))
    for _ in range(40):
        name, s = pick(12)
        m = SUPERCELLS[int(rng.integers(len(SUPERCELLS) - 1))]
        hi = float(rng.choice([0.3, 0.6, 1.2]))
        sc = displaced(supercell(s, m), rng, int(rng.integers(1, 3)), 0.3, hi)
        if rng.random() < 0.5:
            pairs.append(("supercell_displaced", name, s, sc))
        else:
            pairs.append(("supercell_displaced_rev", name, sc, s))
    for _ in range(15):
        name, s = pick(12)
        m = SUPERCELLS[int(rng.integers(len(SUPERCELLS) - 1))]
        sc = strained(supercell(s, m), rng, float(rng.choice([0.02, 0.1])))
        pairs.append(("supercell_strained", name, s, sc))
    for _ in range(10):
        name, s = pick(12)
        m = SUPERCELLS[int(rng.integers(len(SUPERCELLS) - 1))]
        sc = supercell(s, m)
        if len(sc) < 2:
            continue
        pairs.append(("supercell_substituted", name, substituted(sc, rng), s))
    return pairs


def build_subset_pairs(pool, rng) -> list[tuple[str, str, Structure, Structure]]:
    """Pairs for allow_subset: atoms removed, possibly from a supercell."""
    pairs = []
    n = len(pool)

    def pick(max_sites: int):
        while True:
            name, s = pool[int(rng.integers(n))]
            if 2 <= len(s) <= max_sites:
                return name, s

    for _ in range(30):
        name, s = pick(24)
        t = removed(displaced(s, rng, 1, 0.01, 0.4), rng)
        if rng.random() < 0.5:
            pairs.append(("subset_removed", name, s, permuted(t, rng)))
        else:
            pairs.append(("subset_removed_rev", name, permuted(t, rng), s))
    for _ in range(15):
        name, s = pick(12)
        m = SUPERCELLS[int(rng.integers(len(SUPERCELLS) - 1))]
        sc = removed(supercell(s, m), rng)
        pairs.append(("subset_supercell_removed", name, s, sc))
    for _ in range(10):
        name, s = pick(24)
        pairs.append(("subset_identical", name, s, translated(s, rng)))
    return pairs


OPTION_SETS = {
    "atomworld": dict(primitive_cell=False, stol=0.5),
    "default": dict(),
    "cifgen": dict(primitive_cell=True, attempt_supercell=True, stol=0.5),
    "subset": dict(primitive_cell=False, attempt_supercell=True, allow_subset=True, stol=0.5),
}


def resolved(kwargs: dict) -> dict:
    sm = StructureMatcher(**kwargs)
    return {
        "ltol": sm.ltol,
        "stol": sm.stol,
        "angle_tol": sm.angle_tol,
        "primitive_cell": sm._primitive_cell,
        "scale": sm._scale,
        "attempt_supercell": sm._supercell,
        "allow_subset": sm._subset,
    }


def run(options: str, pairs) -> list[dict]:
    sm = StructureMatcher(**OPTION_SETS[options])
    cases = []
    for kind, name, s1, s2 in pairs:
        StructureMatcher._get_reduced_istructure.cache_clear()
        case = {"options": options, "kind": kind, "mineral": name, "s1": plain(s1), "s2": plain(s2)}
        try:
            case["fit"] = bool(sm.fit(s1, s2))
            rms = sm.get_rms_dist(s1, s2)
        except Exception as e:  # noqa: BLE001 - the reference's own failures are data too
            case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
            continue
        case["rms"] = None if rms is None else float(rms[0])
        case["max_dist"] = None if rms is None else float(rms[1])
        cases.append(case)
    return cases


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    seed = int(os.environ.get("ATOMWORLD_MATCHER_SEED", SEED))
    only = os.environ.get("ATOMWORLD_MATCHER_SETS")
    sets = only.split(",") if only else list(OPTION_SETS)
    rng = np.random.default_rng(seed)
    pool = load_pool()
    pairs = build_pairs(pool, rng)
    prim_pairs = build_primitive_pairs(pool, np.random.default_rng(seed + 1))
    subset_pairs = build_subset_pairs(pool, np.random.default_rng(seed + 2))
    per_set = {
        "atomworld": pairs,
        "default": pairs + prim_pairs,
        "cifgen": pairs + prim_pairs,
        "subset": subset_pairs + [p for p in pairs if p[0] in ("removed", "identical")] + prim_pairs[-25:],
    }
    cases = []
    timings = {}
    for name in sets:
        t0 = time.time()
        cases += run(name, per_set[name])
        timings[name] = time.time() - t0
        print(f"{name}: {len(per_set[name])} pairs in {timings[name]:.1f}s", flush=True)
    import pymatgen.core

    doc = {
        "generator": "engine/tests/pymatgen/matcher_cases.py",
        "seed": seed,
        "pymatgen": pymatgen.core.__version__,
        "option_sets": {name: resolved(OPTION_SETS[name]) for name in sets},
        "pymatgen_seconds": timings,
        "cases": cases,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, out)
    n_fit = sum(bool(c.get("fit")) for c in cases)
    print(f"{len(cases)} cases ({n_fit} fit) written to {out}")


if __name__ == "__main__":
    main()
