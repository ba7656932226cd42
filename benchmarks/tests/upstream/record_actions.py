"""Record what the AtomWorld reference code (theAfish/AtomWorldBench) makes of four actions
that have no recorded upstream tasks: move_all, delete_around, move_selected, move_around.

    PY=~/.cache/atomworld/venv-pmg/bin/python   # numpy and ase (3.29.0, as pinned)
    $PY benchmarks/tests/upstream/record_actions.py UPSTREAM_ACTIONS_PY OUT.jsonl

UPSTREAM_ACTIONS_PY is the reference's own action module (``src/atomworld/actions.py`` of
AtomWorldBench at the commit written into the output), kept outside this repository: it is
imported by path and run, never copied. Inputs are minerals of our pool
(``data/structures/minerals.jsonl``, named by line and mineral), read as the reference reads them
(``ase.io.read``); parameters are drawn from a fixed seed. Each output line holds the task
(``pool_line``, ``mineral``, ``parameters`` in our action format) and the reference's result: ``cell``,
``elements`` and ``positions`` (Cartesian Å, in site order, as its action left them), and
its own prompt (``upstream_prompt``). The first line is ``{"meta": ...}``.

``benchmarks/tests/actions_vs_pyref.rs`` applies our engine to the same tasks and compares.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import io
import json
import sys
from pathlib import Path

import numpy as np
from ase.io import read

PER_ACTION = 30
SEED = 20261202
ROOT = Path(__file__).resolve().parents[3]
POOL = ROOT / "data" / "structures" / "minerals.jsonl"


def load_upstream(path: str):
    spec = importlib.util.spec_from_file_location("atomworld_upstream_actions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pool() -> list[dict]:
    with open(POOL, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    # Small enough that a radius of a few Å leaves some sites (and the file small). A
    # mineral is named by its line (prototype labels repeat).
    return [dict(m, line=k) for k, m in enumerate(lines) if 4 <= m["n_sites"] <= 40]


def vector(rng) -> list[float]:
    return [float(x) for x in np.round(rng.normal(scale=2.0, size=3), 3)]


def radius(rng, atoms, index) -> float:
    """Between the nearest and the farthest other site, so the action is neither empty nor
    everything (minimum image, as the reference measures)."""
    d = atoms.get_distances(index, range(len(atoms)), mic=True)
    others = d[d > 1e-9]
    lo, hi = max(1.0, 1.01 * others.min()), min(4.0, 0.99 * others.max())
    if hi <= lo:
        hi = lo + 0.5
    r = float(np.round(rng.uniform(lo, hi), 3))
    # Never within 1e-6 Å of a distance: a tie would test rounding, not the rule.
    while np.any(np.abs(d - r) < 1e-6):
        r = float(np.round(r + 0.001, 3))
    return r


def task(up, kind: str, atoms, rng):
    n = len(atoms)
    if kind == "move_all":
        d = vector(rng)
        return {"action": kind, "displacement": d}, up.MoveAllAction(atoms, d_pos=np.array(d))
    if kind == "delete_around":
        i = int(rng.integers(0, n))
        r = radius(rng, atoms, i)
        return {"action": kind, "index": i, "radius": r}, up.DeleteAroundAtomAction(atoms, index=i, radius=r)
    if kind == "move_selected":
        count = int(rng.integers(1, n + 1))
        idx = [int(i) for i in rng.choice(n, size=count, replace=False)]
        d = vector(rng)
        return (
            {"action": kind, "indices": idx, "displacement": d},
            up.MoveSelectedAtomsAction(atoms, indices=idx, d_pos=np.array(d)),
        )
    if kind == "move_around":
        i = int(rng.integers(0, n))
        r = radius(rng, atoms, i)
        d = vector(rng)
        return (
            {"action": kind, "index": i, "radius": r, "displacement": d},
            up.MoveAroundAtomAction(atoms, index=i, radius=r, d_pos=np.array(d)),
        )
    raise KeyError(kind)


def main() -> None:
    upstream_path, out_path = sys.argv[1], sys.argv[2]
    up = load_upstream(upstream_path)
    minerals = pool()
    rng = np.random.default_rng(SEED)
    kinds = ["move_all", "delete_around", "move_selected", "move_around"]
    with open(out_path, "w", encoding="utf-8") as out:
        meta = {
            "upstream": "theAfish/AtomWorldBench src/atomworld/actions.py @ b321896879e5a4a2328f598390b08202e53bfcff",
            "ase": md.version("ase"),
            "numpy": md.version("numpy"),
            "seed": SEED,
            "per_action": PER_ACTION,
        }
        out.write(json.dumps({"meta": meta}) + "\n")
        # Besides PER_ACTION drawn tasks each, three move_selected tasks that list a site
        # twice (the reference moves it twice).
        plan = [(kind, k, False) for kind in kinds for k in range(PER_ACTION)]
        plan += [("move_selected", PER_ACTION + k, True) for k in range(3)]
        for kind, k, repeated in plan:
            mineral = minerals[int(rng.integers(0, len(minerals)))]
            atoms = read(io.StringIO(mineral["cif"]), format="cif")
            if repeated:
                i, j = (int(x) for x in rng.choice(len(atoms), size=2, replace=False))
                d = vector(rng)
                parameters = {"action": kind, "indices": [i, j, i], "displacement": d}
                action = up.MoveSelectedAtomsAction(atoms, indices=[i, j, i], d_pos=np.array(d))
            else:
                parameters, action = task(up, kind, atoms, rng)
            prompt = str(action)
            result = action.execute()
            out.write(
                json.dumps(
                    {
                        "id": f"{kind}-{k:02}",
                        "action": kind,
                        "pool_line": mineral["line"],
                        "mineral": mineral["mineral"],
                        "parameters": parameters,
                        "cell": result.cell[:].tolist(),
                        "elements": result.get_chemical_symbols(),
                        "positions": result.get_positions().tolist(),
                        "upstream_prompt": prompt,
                    }
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
