"""Records the OmniMatBench reference's QA judge prompts and its reading of judge replies.

The reference's own functions (`scripts/qa/eval_precision.py` and `eval_recall.py` of the
public repository wanhaoliu/OmniMatBench, MIT) are run, never copied: `build_prompt` on our
own demo QA items (benchmarks/data/omnimat_demo.json) with generated model answers, and on
generated judge replies the steps of its `evaluate_item` after the call: `extract_json_object`,
the key check, `split_nonempty_lines` and the rounded precision, or `compute_weighted_score`.
Only inputs and outputs are written, to benchmarks/tests/cases/omnimat_qa/reference_recorded.jsonl,
which benchmarks/tests/omnimat_qa.rs compares with ours.

    python3 benchmarks/tests/omnimat_ref/record_qa.py --reference /path/to/OmniMatBench \\
        --commit <its commit> -o benchmarks/tests/cases/omnimat_qa/reference_recorded.jsonl
"""

import argparse
import json
import random
import sys
import types
from pathlib import Path

ANSWERS = [
    "Chromium forms a passive film of $\\mathrm{Cr_2O_3}$.",
    "",
    "Line one.\nLine two with \\alpha and \\\\ double.",
    "An answer with \"quotes\", {braces} and a trailing newline\n",
]


def precision_reply(rng):
    units = lambda: [rng.choice(["claim A", "  value 2.5 eV ", "", "x"]) for _ in range(rng.randint(0, 4))]
    tp, fp = units(), units()
    form = rng.choice(["str", "str", "list", "mixed"])
    as_field = lambda u: u if form == "list" else "\n".join(u)
    obj = {"tp_string": as_field(tp), "fp_string": as_field(fp) if form != "mixed" else fp}
    if rng.random() < 0.1:
        obj.pop(rng.choice(["tp_string", "fp_string"]))
    text = json.dumps(obj, ensure_ascii=False)
    wrap = rng.choice(["plain", "fence", "fence_json", "prose", "prose_fence", "broken", "list"])
    if wrap == "fence":
        return f"```\n{text}\n```"
    if wrap == "fence_json":
        return f"```JSON\n{text}\n```"
    if wrap == "prose":
        return f"Here is my judgement: {text} Hope this helps."
    if wrap == "prose_fence":
        return f"Sure.\n```json\n{text}\n```"
    if wrap == "broken":
        return text[:-1]
    if wrap == "list":
        return json.dumps([obj])
    return text


def recall_reply(rng, n):
    k = rng.choice([n, n, n, n - 1, n + 1]) if n > 0 else rng.choice([0, 1])
    q = [rng.choice([0.0, 0.1, 0.5, 1.0, 1, "0.5", None, "x", True]) for _ in range(max(k, 0))]
    met = [rng.choice([0, 1]) for _ in range(max(k, 0))]
    obj = {"met": met, "quality_score": q, "reasoning": "because"}
    if rng.random() < 0.1:
        obj.pop(rng.choice(["met", "quality_score"]))
    text = json.dumps(obj)
    return rng.choice([text, f"```json\n{text}\n```", f"Result: {text}"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("-n", type=int, default=600)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    # The modules import requests and tqdm at the top; only pure functions are called here.
    for name in ("requests", "tqdm"):
        sys.modules.setdefault(name, types.SimpleNamespace(tqdm=None, post=None))
    sys.path.insert(0, str(Path(args.reference) / "scripts" / "qa"))
    import eval_precision as prec
    import eval_recall as rec

    repo = Path(__file__).resolve().parents[3]
    items = json.loads((repo / "benchmarks/data/omnimat_demo.json").read_text(encoding="utf-8"))["qa"]
    rng = random.Random(args.seed)
    out = [{"reference": "wanhaoliu/OmniMatBench scripts/qa/eval_precision.py, eval_recall.py",
            "commit": args.commit, "seed": args.seed}]
    for item in items:
        for answer in ANSWERS:
            row = dict(item, gt_answer=item.get("answer", ""), llm_answer=answer)
            out.append({"kind": "prompts", "item": item["id"], "answer": answer,
                        "precision": prec.build_prompt(row), "recall": rec.build_prompt(row)})
    for i in range(args.n):
        reply = precision_reply(rng)
        try:
            data = prec.extract_json_object(reply)
            if "tp_string" not in data or "fp_string" not in data:
                raise ValueError("missing")
            tp = prec.split_nonempty_lines(data.get("tp_string", ""))
            fp = prec.split_nonempty_lines(data.get("fp_string", ""))
            d = len(tp) + len(fp)
            result = {"tp": tp, "fp": fp, "precision": round(len(tp) / d, 3) if d else 0.0}
        except Exception as e:
            result = {"failed": type(e).__name__}
        out.append({"kind": "precision", "reply": reply, "ref": result})
    for i in range(args.n):
        item = rng.choice(items)
        reply = recall_reply(rng, len(item.get("key_points", [])))
        try:
            data = rec.extract_json_object(reply)
            if "met" not in data or "quality_score" not in data:
                raise ValueError("missing")
            result = {"recall": rec.compute_weighted_score(item, data.get("quality_score", []))}
        except Exception as e:
            result = {"failed": type(e).__name__}
        out.append({"kind": "recall", "item": item["id"], "reply": reply, "ref": result})
    with open(args.output, "w", encoding="utf-8") as f:
        for line in out:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"{len(out) - 1} records -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
