"""Engine-independent reference of AtomWorld (spec: /work/shared/spec/atomworld.md), in ASE
and pymatgen.

This module knows nothing about our Rust engine. It implements

* every action's reference semantics (the reference code) on an ``ase.Atoms`` in the ASE frame
  (a ∥ x, b in the xy-plane: ``cellpar_to_cell``), and
* the evaluation pipeline (the reference evaluator) with pymatgen: extraction, ``CifParser`` parsing,
  per-site-per-element composition check, ``StructureMatcher(primitive_cell=False, stol=0.5)``.

The driver (``driver.py``) runs both over a task set written by ``atomworld gen`` and stores
the results; the Rust tests ``benchmarks/tests/actions_vs_pyref.rs`` and
``benchmarks/tests/evaluator_vs_pyref.rs`` compare our implementation with them.

Where ASE and the spec disagree, this module follows the spec:

* ``ase.io.read`` wraps fractional coordinates into [0, 1) when it reads a CIF (it builds
  the structure through ``ase.spacegroup.crystal``). The spec says actions work on the raw
  in-cell positions "as read from the CIF (no wrapping on read)". ``read_input`` therefore
  takes the cell, the elements and the site order from ``ase.io.read`` but puts back the
  fractional coordinates exactly as the CIF prints them. ``read_input(..., raw=False)`` gives
  ASE's wrapped reading, so the driver can count the tasks where the difference matters.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
from ase import Atom, Atoms
from ase.io import read as ase_read
from ase.io.cif import parse_cif

# --------------------------------------------------------------------------------------------
# Reading the input
# --------------------------------------------------------------------------------------------


def _cif_number(text: str) -> float:
    """A CIF number: drop a standard uncertainty such as ``0.123(4)``."""
    return float(text.split("(")[0])


def raw_fractional(cif_text: str) -> np.ndarray:
    """The ``_atom_site_fract_x/y/z`` columns of the first data block, unwrapped."""
    block = next(iter(parse_cif(io.StringIO(cif_text))))
    cols = [block.get(f"_atom_site_fract_{k}") for k in "xyz"]
    if any(c is None for c in cols):
        raise ValueError("the CIF has no _atom_site_fract_x/y/z columns")
    return np.array(
        [[_cif_number(str(v)) for v in row] for row in zip(*cols)], dtype=float
    )


def read_input(cif_text: str, raw: bool = True) -> Atoms:
    """Read an AtomWorld input CIF with ``ase.io.read`` (ASE frame).

    With ``raw`` (the spec's reading) the fractional coordinates are the CIF's own values,
    not wrapped; see the module docstring.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        atoms = ase_read(io.StringIO(cif_text), format="cif")
    if raw:
        frac = raw_fractional(cif_text)
        if len(frac) != len(atoms):
            raise ValueError(
                f"ASE read {len(atoms)} sites, the CIF lists {len(frac)}: "
                "cannot restore raw coordinates"
            )
        wrapped = atoms.get_scaled_positions(wrap=False)
        # Same sites, same order: the raw values differ from ASE's by whole cell vectors only.
        shift = frac - wrapped
        if np.abs(shift - np.round(shift)).max() > 1e-9:
            raise ValueError("ASE reordered or moved sites: cannot restore raw coordinates")
        atoms.set_scaled_positions(frac)
    return atoms


# --------------------------------------------------------------------------------------------
# The actions (the reference's semantics)
# --------------------------------------------------------------------------------------------


def rotation_matrix(axis, angle_deg: float) -> np.ndarray:
    """Rotation by ``angle_deg`` about ``axis`` (right-hand rule), Rodrigues' formula."""
    k = np.asarray(axis, dtype=float)
    n = np.linalg.norm(k)
    if n == 0.0:
        raise ValueError("zero rotation axis")
    k = k / n
    t = np.radians(angle_deg)
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(t) * kx + (1.0 - np.cos(t)) * (kx @ kx)


def change(atoms: Atoms, index: int, element: str) -> Atoms:
    """Set the element of site ``index``; position and order kept."""
    out = atoms.copy()
    out[index].symbol = element
    return out


def remove(atoms: Atoms, index: int) -> Atoms:
    """Delete site ``index``; later sites shift down."""
    out = atoms.copy()
    del out[index]
    return out


def add(atoms: Atoms, element: str, position) -> Atoms:
    """Append a site (last index) at a Cartesian position."""
    out = atoms.copy()
    out.append(Atom(element, position))
    return out


def move(atoms: Atoms, index: int, displacement) -> Atoms:
    """p_i += d (Cartesian Å)."""
    out = atoms.copy()
    pos = out.get_positions()
    pos[index] += np.asarray(displacement, dtype=float)
    out.set_positions(pos)
    return out


def _direction(atoms: Atoms, i: int, j: int) -> np.ndarray:
    """Unit vector from raw position i to raw position j (no minimum image)."""
    pos = atoms.get_positions()
    v = pos[j] - pos[i]
    n = np.linalg.norm(v)
    if n == 0.0:
        raise ValueError(f"sites {i} and {j} coincide")
    return v / n


def move_towards(atoms: Atoms, index: int, towards: int, distance: float) -> Atoms:
    """p_i += distance · normalise(p_j − p_i), raw positions; may overshoot j."""
    d = _direction(atoms, index, towards)
    out = atoms.copy()
    pos = out.get_positions()
    pos[index] = pos[index] + d * distance
    out.set_positions(pos)
    return out


def insert_between(atoms: Atoms, element: str, i: int, j: int, distance: float) -> Atoms:
    """Append a site at p_i + distance · normalise(p_j − p_i), raw positions."""
    d = _direction(atoms, i, j)
    p = atoms.get_positions()[i] + d * distance
    return add(atoms, element, p)


def swap(atoms: Atoms, first: int, second: int) -> Atoms:
    """Exchange the element labels of two sites (coordinates stay)."""
    out = atoms.copy()
    a, b = out[first].symbol, out[second].symbol
    out[first].symbol = b
    out[second].symbol = a
    return out


def delete_below(atoms: Atoms, index: int) -> Atoms:
    """Delete sites whose Cartesian z is strictly below that of site ``index``.

    Site ``index`` and sites at the same z are always kept (whatever the prompt says about
    "Including itself").
    """
    z = atoms.get_positions()[:, 2]
    below = [k for k in range(len(atoms)) if z[k] < z[index]]
    out = atoms.copy()
    del out[below]
    return out


def neighbours(atoms: Atoms, center: int, radius: float) -> list[int]:
    """Sites whose minimum-image distance to ``center`` is < radius, centre excluded."""
    d = atoms.get_distances(center, list(range(len(atoms))), mic=True)
    return [k for k in range(len(atoms)) if k != center and d[k] < radius]


def rotate_around(atoms: Atoms, center: int, radius: float, angle: float, axis) -> Atoms:
    """Rotate the raw positions of the (minimum-image) neighbours about the raw centre."""
    r = rotation_matrix(axis, angle)
    pos = atoms.get_positions()
    c = pos[center].copy()
    for k in neighbours(atoms, center, radius):
        pos[k] = c + r @ (pos[k] - c)
    out = atoms.copy()
    out.set_positions(pos)
    return out


def super_cell(atoms: Atoms, size) -> Atoms:
    """ASE ``repeat``: image-major order, c index fastest."""
    return atoms.repeat(tuple(int(n) for n in size))


def move_all(atoms: Atoms, displacement) -> Atoms:
    """Add d to every position."""
    out = atoms.copy()
    out.set_positions(out.get_positions() + np.asarray(displacement, dtype=float))
    return out


def delete_around(atoms: Atoms, index: int, radius: float) -> Atoms:
    """Delete site ``index`` and its minimum-image neighbours within ``radius``."""
    gone = sorted(neighbours(atoms, index, radius) + [index])
    out = atoms.copy()
    del out[gone]
    return out


def move_selected(atoms: Atoms, indices, displacement) -> Atoms:
    """Displace the listed sites by one vector (a site listed twice moves twice, as the
    reference code does)."""
    out = atoms.copy()
    pos = out.get_positions()
    for k in indices:
        pos[k] += np.asarray(displacement, dtype=float)
    out.set_positions(pos)
    return out


def move_around(atoms: Atoms, index: int, radius: float, displacement) -> Atoms:
    """Displace site ``index`` and its minimum-image neighbours within ``radius``."""
    moved = neighbours(atoms, index, radius) + [index]
    return move_selected(atoms, moved, displacement)


def apply_action(atoms: Atoms, p: dict) -> Atoms:
    """Apply an action given as our generator's ``parameters`` JSON object."""
    kind = p["action"]
    if kind == "change":
        return change(atoms, p["index"], p["element"])
    if kind == "remove":
        return remove(atoms, p["index"])
    if kind == "add":
        return add(atoms, p["element"], p["position"])
    if kind == "move":
        return move(atoms, p["index"], p["displacement"])
    if kind == "move_towards":
        return move_towards(atoms, p["index"], p["towards"], p["distance"])
    if kind == "insert_between":
        return insert_between(atoms, p["element"], p["from"], p["to"], p["distance"])
    if kind == "swap":
        return swap(atoms, p["first"], p["second"])
    if kind == "delete_below":
        return delete_below(atoms, p["index"])
    if kind == "rotate_around":
        return rotate_around(atoms, p["center"], p["radius"], p["angle"], p["axis"])
    if kind == "super_cell":
        return super_cell(atoms, p["size"])
    if kind == "move_all":
        return move_all(atoms, p["displacement"])
    if kind == "delete_around":
        return delete_around(atoms, p["index"], p["radius"])
    if kind == "move_selected":
        return move_selected(atoms, p["indices"], p["displacement"])
    if kind == "move_around":
        return move_around(atoms, p["index"], p["radius"], p["displacement"])
    raise ValueError(f"unknown action {kind!r}")


# --------------------------------------------------------------------------------------------
# Evaluation (as the reference evaluator runs it, with pymatgen)
# --------------------------------------------------------------------------------------------

LABELS = (
    "Success",
    "OutputFormatError",
    "CifParsingError",
    "AtomCountMismatch",
    "StructureMismatch",
)


def extract_cif(response: str) -> str | None:
    """Text between the last ``<cif>`` and the last ``</cif>`` after it, trimmed.

    Case-sensitive; nothing else is stripped. ``str.strip()`` trims the same characters as
    Rust's ``str::trim`` for the texts we generate (ASCII whitespace).
    """
    start = response.rfind("<cif>")
    if start < 0:
        return None
    rest = response[start + len("<cif>") :]
    end = rest.rfind("</cif>")
    if end < 0:
        return None
    return rest[:end].strip()


def parse_structure(text: str):
    """``CifParser.from_str(text).parse_structures(primitive=False, check_occu=False)[0]``.

    Raises on any failure (including "no structure").
    """
    from pymatgen.io.cif import CifParser

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        structures = CifParser.from_str(text).parse_structures(
            primitive=False, check_occu=False
        )
    if not structures:
        raise ValueError("no structure")
    return structures[0]


_MATCHER = None


def matcher():
    """``StructureMatcher(primitive_cell=False, stol=0.5)`` with pymatgen's other defaults."""
    global _MATCHER
    if _MATCHER is None:
        from pymatgen.core.structure_matcher import StructureMatcher

        _MATCHER = StructureMatcher(primitive_cell=False, stol=0.5)
    return _MATCHER


def evaluate(target, response: str) -> dict:
    """Score ``response`` against a parsed target: label, rms, max_dist, detail."""
    out = {"label": None, "rms": None, "max_dist": None, "detail": ""}
    text = extract_cif(response)
    if text is None:
        out.update(label="OutputFormatError", detail="no <cif>…</cif>")
        return out
    try:
        predicted = parse_structure(text)
    except Exception as e:  # noqa: BLE001 - any failure of pymatgen's reader is the label
        out.update(label="CifParsingError", detail=f"{type(e).__name__}: {e}"[:300])
        return out
    # The reference's test: as many sites, and equal compositions.
    if len(target) != len(predicted) or target.composition != predicted.composition:
        out.update(
            label="AtomCountMismatch",
            detail=f"target {len(target)} sites {target.composition}, "
            f"predicted {len(predicted)} sites {predicted.composition}",
        )
        return out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits = matcher().fit(target, predicted)
            r = matcher().get_rms_dist(target, predicted) if fits else None
    except Exception as e:  # noqa: BLE001
        out.update(label="StructureMismatch", detail=f"matcher error {type(e).__name__}: {e}")
        return out
    if not fits:
        out.update(label="StructureMismatch", detail="no fit")
        return out
    if r is None:
        out.update(label="StructureMismatch", detail="no match")
        return out
    out.update(label="Success", rms=float(r[0]), max_dist=float(r[1]), detail="match")
    return out
