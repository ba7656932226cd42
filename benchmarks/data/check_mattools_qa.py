"""Check our MatTools QA questions (benchmarks/data/mattools_qa.json) against the pinned pymatgen.

Run with the MatTools interpreter (pymatgen 2024.8.9):

    ~/.cache/atomworld/venv-mattools/bin/python benchmarks/data/check_mattools_qa.py

Every question with a "check" field is verified: the check is a Python expression, or a
snippet that sets `result`, run in a fresh namespace holding PRELUDE's names. Its value must be
the correct letter ("A" to "D"), or a value whose text (the string itself, or str() of
anything else) is exactly the correct choice's text and no other choice's. Questions without a
check are listed. Exit status 1 if any check fails or the pinned version differs.
"""

import importlib.metadata
import json
import pathlib
import sys
import traceback
import warnings

PINNED = "2024.8.9"
LETTERS = ("A", "B", "C", "D")

PRELUDE = '''
import warnings
warnings.filterwarnings("ignore")
from pymatgen.core import Composition, Element, Lattice, Molecule, Species, Structure

def nacl():
    """The conventional rock-salt cell (8 sites, a = 5.64 Angstrom) the questions call `s`."""
    return Structure.from_spacegroup(
        "Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]
    )
'''


def run_check(source, base):
    """The value of a check: an expression's value, or `result` after a snippet."""
    namespace = dict(base)
    try:
        code = compile(source, "<check>", "eval")
    except SyntaxError:
        exec(compile(source, "<check>", "exec"), namespace)
        if "result" not in namespace:
            raise RuntimeError("the snippet sets no `result`") from None
        return namespace["result"]
    return eval(code, namespace)


def verdict(value, question):
    """None if `value` confirms the question's correct answer, otherwise why not."""
    correct = question["correct_answer"]
    choices = question["choices"]
    if isinstance(value, str) and value in LETTERS:
        return None if value == correct else f"check says {value}, the file says {correct}"
    text = value if isinstance(value, str) else str(value)
    matching = [letter for letter in LETTERS if choices[letter] == text]
    if matching == [correct]:
        return None
    if not matching:
        return f"check gives {text!r}, which is no choice's text (correct: {choices[correct]!r})"
    return f"check gives {text!r}, matching choices {matching} (the file says {correct})"


def main():
    version = importlib.metadata.version("pymatgen")
    if version != PINNED:
        print(f"pymatgen {version} is not the pinned {PINNED}", file=sys.stderr)
        return 1
    path = pathlib.Path(__file__).with_name("mattools_qa.json")
    bundle = json.loads(path.read_text(encoding="utf-8"))
    base = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(PRELUDE, base)
    checked, failures, unchecked = 0, [], []
    for file, sources in bundle.items():
        for index, entry in enumerate(sources):
            for question in entry["questions"]:
                where = f"{file}/{index}/{question['question_id']}"
                source = question.get("check")
                if source is None:
                    unchecked.append(where)
                    continue
                checked += 1
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        why = verdict(run_check(source, base), question)
                except Exception:  # noqa: BLE001 - a failing check is reported, not raised
                    why = "the check raised:\n" + traceback.format_exc(limit=3)
                if why is not None:
                    failures.append(f"{where}: {why}")
    for line in failures:
        print("FAIL", line)
    if unchecked:
        print(f"{len(unchecked)} questions without a check: {', '.join(unchecked)}")
    print(f"{checked - len(failures)}/{checked} checks pass (pymatgen {version})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
