"""Records AlchemyBench's judge messages as the reference writes them.

From the public repository HeegyuKim/AlchemyBench (MIT; run, never copied): the system
message is its `experiment/prompts/judge.txt`, and the user message its `USER_PROMPT` of
`experiment/judge.py` (read from the source with `ast`, so its API clients need not be
installed), formatted as `RecipeJudge.build_prompt` formats it, for each of our own demo
recipes (benchmarks/data/alchemy_demo.jsonl) with two predictions. Writes
benchmarks/tests/cases/alchemy/reference_judge.jsonl, which benchmarks/tests/alchemy.rs compares with ours.

    python3 benchmarks/tests/alchemy_ref/record_judge.py --reference /path/to/AlchemyBench \\
        --commit <its commit> -o benchmarks/tests/cases/alchemy/reference_judge.jsonl
"""

import argparse
import ast
import json
from pathlib import Path

PREDICTIONS = [
    "## Materials\n- BaCO3, 99 %: 19.7 g\n\n## Synthesis Procedure\n1. Mill 4 h.",
    "",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    ref = Path(args.reference) / "experiment"
    system = (ref / "prompts" / "judge.txt").read_text(encoding="utf-8")
    tree = ast.parse((ref / "judge.py").read_text(encoding="utf-8"))
    user_prompt = next(
        n.value.value for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "USER_PROMPT"
    )
    repo = Path(__file__).resolve().parents[3]
    recipes = [json.loads(l) for l in (repo / "benchmarks/data/alchemy_demo.jsonl").read_text(encoding="utf-8").splitlines() if l.strip()]
    out = [{"reference": "HeegyuKim/AlchemyBench experiment/prompts/judge.txt, experiment/judge.py",
            "commit": args.commit}]
    for recipe in recipes:
        for prediction in PREDICTIONS:
            item = {"contribution": recipe["contribution"], "recipe": recipe["recipe"],
                    "prediction": prediction}
            out.append({"id": recipe["id"], "prediction": prediction, "system": system,
                        "user": user_prompt.format(objective=item["contribution"],
                                                   prediction=item["prediction"],
                                                   gt_recipe=item["recipe"])})
    with open(args.output, "w", encoding="utf-8") as f:
        for line in out:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
