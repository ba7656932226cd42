"""Differential-test oracle: what pymatgen and ASE write for structures (POSCAR, extended
XYZ, Structure JSON), which neighbours pymatgen finds and which space group spglib assigns.

Run with the pymatgen venv's python:

    ~/.cache/atomworld/venv-pmg/bin/python engine/tests/pymatgen/formats_oracle.py \
        --out formats-oracle.json [--seed 20261124]

Cases: every structure of data/structures/minerals.jsonl as pymatgen parses it, a 2x1x1
supercell of each, seeded random triclinic cells with random elements (some with a
left-handed lattice, which the POSCAR writer negates) and some with partial occupancies
(JSON only). For each case the JSON records the lattice matrix, species, fractional
coordinates and labels (the structure, exactly as floats), then:
- "poscar": str(Poscar(structure)) (pymatgen's POSCAR writer; skipped for partial occupancy),
- "xyz": ase.io.write(format="extxyz") of AseAtomsAdaptor.get_atoms(structure),
- "json": structure.as_dict(),
- "neighbours": structure.get_neighbors(structure[0], r) as (index, image, distance) for
  r = 4 Å (for cells of at most 60 sites),
- "space_group": SpacegroupAnalyzer(structure, symprec=0.01).get_space_group_number()
  (spglib), or null where spglib fails.

Besides the cases, "lll" holds pymatgen's LLL reduction (`Lattice.lll_matrix`,
`lll_mapping`) and `Lattice.angles` of every case's lattice and of seeded lattices where
the reduction meets exact ties (rhombohedral and hexagonal cells, rotated, and averages of
two such cells as StructureMatcher builds them), all as IEEE bit patterns: the engine must
reproduce them bit for bit, since a tie at u = 1/2 decides which basis comes out. With them
go `Lattice.inv_matrix` (np.linalg.inv) of each of these lattices and, in "inverses",
np.linalg.inv of 6,000 seeded matrices (uniform, small-integer with pivot ties and singular
ones, and mixed scales), and in "dots" np.dot of 600 seeded vector pairs of 1 to 120 terms,
also as bit patterns.

engine/tests/formats_vs_pymatgen.rs reads the file named by ATOMWORLD_FORMATS_CASES.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import warnings
from pathlib import Path

import numpy as np
from ase.io import write as ase_write
from pymatgen.core import Element, Lattice, Structure
from pymatgen.core.operations import SymmOp
from pymatgen.io.ase import AseAtomsAdaptor
from pymatgen.io.cif import CifParser
from pymatgen.io.vasp import Poscar
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

ROOT = Path(__file__).resolve().parents[3]
MINERALS = ROOT / "data" / "structures" / "minerals.jsonl"
RADIUS = 4.0


def pool() -> list[tuple[str, Structure]]:
    out = []
    for n, line in enumerate(MINERALS.open()):
        d = json.loads(line)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = CifParser.from_str(d["cif"]).parse_structures(primitive=False)[0]
        out.append((f"pool-{n}", s))
    return out


def random_structures(rng: random.Random, count: int) -> list[tuple[str, Structure]]:
    elements = [e.symbol for e in Element if e.Z <= 118]
    out = []
    for n in range(count):
        while True:
            a, b, c = (rng.uniform(2.5, 9.0) for _ in range(3))
            al, be, ga = (rng.uniform(60.0, 120.0) for _ in range(3))
            try:
                lat = Lattice.from_parameters(a, b, c, al, be, ga)
            except Exception:  # noqa: BLE001 - impossible angles: draw again
                continue
            if lat.volume > 1.0:
                break
        matrix = lat.matrix
        if n % 4 == 3:
            matrix = -matrix  # left-handed
        sites = rng.randint(1, 12)
        species = [rng.choice(elements) for _ in range(sites)]
        coords = [[rng.uniform(-0.2, 1.2) for _ in range(3)] for _ in range(sites)]
        out.append((f"random-{n}", Structure(Lattice(matrix), species, coords)))
    return out


def partial(rng: random.Random, count: int) -> list[tuple[str, Structure]]:
    out = []
    for n in range(count):
        lat = Lattice.cubic(rng.uniform(3.0, 6.0))
        species = [{"Fe": round(rng.uniform(0.1, 1.0), 3)}, "O"]
        out.append((f"partial-{n}", Structure(lat, species, [[0, 0, 0], [0.5, 0.5, 0.5]])))
    return out


def describe(case_id: str, s: Structure) -> dict:
    ordered = s.is_ordered
    case = {
        "id": case_id,
        "matrix": s.lattice.matrix.tolist(),
        "species": [[(sp.symbol, occ) for sp, occ in site.species.items()] for site in s],
        "frac": s.frac_coords.tolist(),
        "labels": [site.label for site in s],
        "json": s.as_dict(),
        "poscar": None,
        "xyz": None,
        "neighbours": None,
        "space_group": None,
    }
    if ordered:
        case["poscar"] = str(Poscar(s))
        buf = io.StringIO()
        ase_write(buf, AseAtomsAdaptor.get_atoms(s), format="extxyz")
        case["xyz"] = buf.getvalue()
        if len(s) <= 60:
            case["neighbours"] = [
                (int(nb.index), [int(x) for x in nb.image], float(nb.nn_distance))
                for nb in s.get_neighbors(s[0], RADIUS)
            ]
        try:
            case["space_group"] = SpacegroupAnalyzer(s, symprec=0.01).get_space_group_number()
        except Exception:  # noqa: BLE001 - spglib failure: nothing to compare
            case["space_group"] = None
    return case


def bits(values) -> list[int]:
    """IEEE-754 bit patterns of a float array, flattened."""
    return [int(b) for b in np.asarray(values, dtype=np.float64).ravel().view(np.uint64)]


def tie_prone_lattices(rng: random.Random, count: int) -> list[Lattice]:
    """Rhombohedral and hexagonal cells (rotated, so their entries carry rounding), and the
    average of two slightly strained copies, as StructureMatcher's average lattices are."""
    out = []
    for n in range(count):
        a = rng.uniform(2.5, 9.0)
        if n % 2 == 0:
            alpha = rng.choice([rng.uniform(45.0, 115.0), 60.0, 90.0, 109.4712206])
            lat = Lattice.from_parameters(a, a, a, alpha, alpha, alpha)
        else:
            lat = Lattice.from_parameters(a, a, rng.uniform(2.0, 40.0), 90, 90, 120)
        if n % 3 == 1:
            axis = np.array([rng.gauss(0, 1) for _ in range(3)])
            op = SymmOp.from_axis_angle_and_translation(axis, rng.uniform(0, 360))
            lat = Lattice(op.apply_rotation_only(lat.matrix))
        if n % 5 == 2:
            other = Lattice(lat.matrix * (1 + rng.uniform(-1e-3, 1e-3)))
            params = (np.array(lat.parameters) + np.array(other.parameters)) / 2
            lat = Lattice.from_parameters(*params)
        out.append(lat)
    return out


def lll_record(lat: Lattice) -> dict:
    return {
        "matrix": bits(lat.matrix),
        "lll": bits(lat.lll_matrix),
        "mapping": np.asarray(lat.lll_mapping).astype(int).tolist(),
        "angles": bits(lat.angles),
        "inv": bits(lat.inv_matrix),
    }


def inverse_records(rng: random.Random, count: int) -> list[dict]:
    """np.linalg.inv of seeded 3x3 matrices: uniform entries, small integers (pivot ties and
    singular ones, recorded as null), and entries of wildly different scales."""
    out = []
    for n in range(count):
        kind = n % 3
        if kind == 0:
            m = [[rng.uniform(-5, 5) for _ in range(3)] for _ in range(3)]
        elif kind == 1:
            m = [[float(rng.randint(-2, 2)) for _ in range(3)] for _ in range(3)]
        else:
            m = [[rng.uniform(-1, 1) * 10.0 ** rng.randint(-8, 7) for _ in range(3)] for _ in range(3)]
        try:
            inv = bits(np.linalg.inv(np.array(m)))
        except np.linalg.LinAlgError:
            inv = None
        out.append({"matrix": bits(m), "inv": inv})
    return out


def dot_records(rng: random.Random, count: int) -> list[dict]:
    """np.dot of seeded vector pairs of lengths 1 to 120 (OpenBLAS's ddot changes its order
    at 16 and 32 terms), as bit patterns: what np.linalg.norm, pymatgen's RMS, is built on."""
    out = []
    for n in range(count):
        size = 1 + n % 120
        x = [rng.uniform(-1, 1) for _ in range(size)]
        y = x if n % 2 == 0 else [rng.uniform(-1, 1) for _ in range(size)]
        out.append({"x": bits(x), "y": bits(y), "dot": bits([np.dot(np.array(x), np.array(y))])[0]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=20261124)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    structures = pool()
    structures += [(f"{i}-x2", s * (2, 1, 1)) for i, s in structures]
    structures += random_structures(rng, 200)
    structures += partial(rng, 10)
    cases = [describe(i, s) for i, s in structures]
    lattices = [s.lattice for _, s in structures] + tie_prone_lattices(rng, 3000)
    lll = [lll_record(lat) for lat in lattices]
    inverses = inverse_records(rng, 6000)
    dots = dot_records(rng, 600)
    Path(args.out).write_text(
        json.dumps(
            {
                "seed": args.seed,
                "radius": RADIUS,
                "cases": cases,
                "lll": lll,
                "inverses": inverses,
                "dots": dots,
            }
        )
    )
    print(f"[formats] {len(cases)} cases")


if __name__ == "__main__":
    main()
