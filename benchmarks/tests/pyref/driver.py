"""Run the Python reference (``atomworld_ref.py``) over a task set from ``atomworld gen``.

    PY=~/.cache/atomworld/venv-pmg/bin/python
    $PY benchmarks/tests/pyref/driver.py actions TASKS.jsonl OUT.jsonl
    $PY benchmarks/tests/pyref/driver.py eval TASKS.jsonl OUT.jsonl [--per-task 2]

``scripts/pyref.sh`` runs both with cached outputs; the Rust tests read them.

``actions`` writes one line per task: ``id``, ``action``, ``input_cif``, ``parameters`` (as
given), and the reference result: ``cell`` (rows a, b, c in the ASE frame), ``elements`` and
``positions`` (Cartesian Å, site order, not wrapped), plus ``ase_wrap_matters`` (true when
ASE's wrapped reading of the input would give a different result than the raw reading the
spec prescribes: see ``atomworld_ref`` module docstring).

``eval`` writes, per task, ``--per-task`` deterministic answers (the target itself, the input
unchanged, text without tags, a broken CIF, an extra atom, two atoms on one spot, a globally
shifted target, a slightly perturbed target) and pymatgen's verdict on each: ``id``,
``kind``, ``variant``, ``target_cif``, ``response``, ``label``, ``rms``, ``max_dist``,
``detail``. The answers are generated here, from a seeded RNG per task, so the file alone is
the whole test case.

The first line of each output is ``{"meta": {...}}`` (versions, seed, counts).
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import atomworld_ref as ref  # noqa: E402

KINDS = [
    "target",
    "input",
    "no_tags",
    "broken",
    "extra_atom",
    "stacked",
    "shifted",
    "perturbed",
]

PROSE = [
    "Here is the modified CIF:\n<cif>\n{}\n</cif>",
    "<cif>{}</cif>",
    "I applied the action.\n\n<cif>\n{}\n</cif>\nLet me know if you need anything else.",
    "Draft: <cif>nothing</cif>\nFinal answer:\n<cif>\n{}\n</cif>",
]


def versions() -> dict:
    return {
        "pymatgen": md.version("pymatgen"),
        "ase": md.version("ase"),
        "numpy": md.version("numpy"),
    }


def read_tasks(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def positions_differ(a, b, tol: float = 1e-6) -> bool:
    """Different length, elements, or a position more than ``tol`` Å apart (up to lattice
    translations)."""
    if len(a) != len(b) or a.get_chemical_symbols() != b.get_chemical_symbols():
        return True
    d = b.get_positions() - a.get_positions()
    f = d @ np.linalg.inv(a.cell[:])
    d = (f - np.round(f)) @ a.cell[:]
    return bool(len(d) and np.linalg.norm(d, axis=1).max() > tol)


def run_actions(tasks: list[dict], out_path: str) -> None:
    started = time.time()
    wrap_matters = 0
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"meta": {**versions(), "tasks": len(tasks)}}) + "\n")
        for t in tasks:
            atoms = ref.read_input(t["input_cif"], raw=True)
            result = ref.apply_action(atoms, t["parameters"])
            try:
                as_ase = ref.apply_action(ref.read_input(t["input_cif"], raw=False), t["parameters"])
                matters = positions_differ(result, as_ase)
            except ValueError:
                matters = True
            wrap_matters += matters
            out.write(
                json.dumps(
                    {
                        "id": t["id"],
                        "action": t["action"],
                        "input_cif": t["input_cif"],
                        "parameters": t["parameters"],
                        "cell": result.cell[:].tolist(),
                        "elements": result.get_chemical_symbols(),
                        "positions": result.get_positions().tolist(),
                        "ase_wrap_matters": matters,
                    }
                )
                + "\n"
            )
    print(
        f"actions: {len(tasks)} tasks in {time.time() - started:.1f} s; "
        f"ASE's wrapped reading would change {wrap_matters} results",
        file=sys.stderr,
    )


# --------------------------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------------------------


def cif_text(structure) -> str:
    from pymatgen.io.cif import CifWriter

    return str(CifWriter(structure))


def wrap(rng, cif: str) -> str:
    return PROSE[int(rng.integers(len(PROSE)))].format(cif)


def unit_vector(rng) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def make_response(kind: str, task: dict, target, rng) -> tuple[str, str]:
    """One answer of ``kind`` for ``task``: (variant, response text)."""
    if kind == "target":
        return "verbatim", wrap(rng, task["target_cif"])
    if kind == "input":
        return "verbatim", wrap(rng, task["input_cif"])
    if kind == "no_tags":
        variant = ["bare", "upper", "unclosed", "reversed"][int(rng.integers(4))]
        body = task["target_cif"]
        text = {
            "bare": f"The answer is:\n{body}",
            "upper": f"<CIF>\n{body}\n</CIF>",
            "unclosed": f"<cif>\n{body}\n",
            "reversed": f"</cif>\n{body}\n<cif>",
        }[variant]
        return variant, text
    if kind == "broken":
        body = task["target_cif"]
        lines = body.splitlines()
        variant = ["cell_tag", "truncated", "coordinate", "no_fract_z", "empty", "no_loop"][
            int(rng.integers(6))
        ]
        if variant == "cell_tag":
            body = body.replace("_cell_length_a", "_cell_length_q")
        elif variant == "truncated":
            body = body[: int(len(body) * rng.uniform(0.2, 0.6))]
        elif variant == "coordinate":
            rows = [k for k, line in enumerate(lines) if line.startswith("  ") and len(line.split()) == 7]
            k = rows[int(rng.integers(len(rows)))]
            parts = lines[k].split()
            parts[3 + int(rng.integers(3))] = "abc"
            lines[k] = "  " + "  ".join(parts)
            body = "\n".join(lines)
        elif variant == "no_fract_z":
            body = "\n".join(line for line in lines if line.strip() != "_atom_site_fract_z")
        elif variant == "empty":
            body = ""
        else:
            body = "\n".join(line for line in lines if line.strip() != "loop_")
        return variant, wrap(rng, body)
    try:
        s = target.copy()
    except ValueError:
        # The target holds a merged site with occupancy > 1 (an added atom on top of another):
        # pymatgen cannot copy it. Build the answer from the input instead.
        s = ref.parse_structure(task["input_cif"])
        variant, response = make_response(kind, task, s, rng)
        return f"{variant}_from_input", response
    if kind == "extra_atom":
        elements = sorted({e.symbol for e in s.composition.elements})
        variant = ["same_element", "new_element"][int(rng.integers(2))]
        el = elements[int(rng.integers(len(elements)))] if variant == "same_element" else "Xe"
        s.append(el, rng.random(3))
        return variant, wrap(rng, cif_text(s))
    if kind == "stacked":
        n = len(s)
        j = int(rng.integers(n))
        same = [k for k in range(n) if k != j and s[k].species == s[j].species]
        other = [k for k in range(n) if k != j and s[k].species != s[j].species]
        r = int(rng.integers(3))
        if r == 0 and same:
            variant, k = "moved_same_element", same[int(rng.integers(len(same)))]
        elif r == 1 and other:
            variant, k = "moved_other_element", other[int(rng.integers(len(other)))]
        else:
            variant, k = "duplicated", None
        if k is None:
            s.append(s[j].species, s[j].frac_coords)
        else:
            s.replace(k, s[k].species, coords=s[j].frac_coords)
        return variant, wrap(rng, cif_text(s))
    if kind == "shifted":
        variant = ["wrapped", "unwrapped"][int(rng.integers(2))]
        s.translate_sites(
            list(range(len(s))), rng.random(3), frac_coords=True, to_unit_cell=variant == "wrapped"
        )
        return variant, wrap(rng, cif_text(s))
    if kind == "perturbed":
        m = min(len(s), int(rng.integers(1, 4)))
        idx = rng.choice(len(s), size=m, replace=False)
        for i in idx:
            s.translate_sites(
                [int(i)], unit_vector(rng) * rng.uniform(0.05, 1.5), frac_coords=False, to_unit_cell=False
            )
        return f"{m}_sites", wrap(rng, cif_text(s))
    raise ValueError(kind)


def run_eval(tasks: list[dict], out_path: str, per_task: int) -> None:
    started = time.time()
    counts: dict[str, int] = {}
    n = 0
    with open(out_path, "w", encoding="utf-8") as out:
        out.write(
            json.dumps({"meta": {**versions(), "tasks": len(tasks), "per_task": per_task}}) + "\n"
        )
        for i, t in enumerate(tasks):
            target = ref.parse_structure(t["target_cif"])
            for r in range(per_task):
                kind = KINDS[(i + r * (len(KINDS) // 2 + 1)) % len(KINDS)]
                rng = np.random.default_rng([zlib.crc32(t["id"].encode()), r])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    variant, response = make_response(kind, t, target, rng)
                v = ref.evaluate(target, response)
                counts[v["label"]] = counts.get(v["label"], 0) + 1
                n += 1
                out.write(
                    json.dumps(
                        {
                            "id": t["id"],
                            "action": t["action"],
                            "kind": kind,
                            "variant": variant,
                            "target_cif": t["target_cif"],
                            "response": response,
                            **v,
                        }
                    )
                    + "\n"
                )
    print(
        f"eval: {n} answers in {time.time() - started:.1f} s; labels {counts}",
        file=sys.stderr,
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["actions", "eval"])
    p.add_argument("tasks")
    p.add_argument("out")
    p.add_argument("--per-task", type=int, default=2)
    a = p.parse_args()
    tasks = read_tasks(a.tasks)
    if a.mode == "actions":
        run_actions(tasks, a.out)
    else:
        run_eval(tasks, a.out, a.per_task)


if __name__ == "__main__":
    main()
