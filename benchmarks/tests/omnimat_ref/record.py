"""Records the OmniMatBench reference CAL scorer's verdicts on generated cases.

Our own generator writes gold answers (decimals, signed, scientific notation in several
spellings, fractions, mixed fractions, text) and predictions derived from them (the same
value written otherwise, rounded, off by a few or many per cent, wrapped in LaTeX, \\boxed,
JSON lists and <answer>, slots missing or extra, empty, huge). The reference's own scorer
(`scripts/cal/eval_cal_results.py` of the public repository wanhaoliu/OmniMatBench, MIT;
its `score_item` with the defaults of its command line, rel_tol 0.1 and zero_tol 1e-12)
scores each; a case on which it raises is recorded as a crash. Only inputs and verdicts are
written (benchmarks/tests/cases/omnimat_cal/reference_recorded.jsonl), which
benchmarks/tests/omnimat_cal.rs compares with ours.

    python3 benchmarks/tests/omnimat_ref/record.py --reference /path/to/OmniMatBench \\
        --commit <its commit> -o benchmarks/tests/cases/omnimat_cal/reference_recorded.jsonl
"""

import argparse
import json
import random
import sys
from pathlib import Path


def gold_value(rng):
    """A gold slot and, when numeric, its value as a float."""
    kind = rng.choice(["dec", "dec", "dec", "neg", "int", "sci_times", "sci_x", "sci_e", "frac",
                       "slash", "mixed", "text", "small"])
    d = rng.randint(0, 4)
    mag = 10 ** rng.randint(-2, 4)
    v = rng.uniform(0.1, 9.99) * mag
    if kind in ("dec", "small"):
        if kind == "small":
            v = rng.uniform(0.0001, 0.01)
            d = 4
        return f"{v:.{d}f}", float(f"{v:.{d}f}")
    if kind == "neg":
        return f"-{v:.{d}f}", -float(f"{v:.{d}f}")
    if kind == "int":
        n = rng.randint(0, 5000)
        return str(n), float(n)
    a, b = round(rng.uniform(1, 9.9), rng.randint(0, 2)), rng.randint(-15, 15)
    if kind == "sci_times":
        return f"{a} \\times 10^{{{b}}}", a * 10.0 ** b
    if kind == "sci_x":
        return f"{a} × 10^{b}", a * 10.0 ** b
    if kind == "sci_e":
        return f"{a}e{b}", a * 10.0 ** b
    p, q = rng.randint(1, 9), rng.randint(2, 12)
    if kind == "frac":
        return f"\\frac{{{p}}}{{{q}}}", p / q
    if kind == "slash":
        return f"{p}/{q}", p / q
    if kind == "mixed":
        n = rng.randint(1, 5)
        return f"{n}\\frac{{{p}}}{{{q}}}", n + p / q
    return rng.choice(["Fe_{2}O_{3}", "BCC", "\\mathrm{FCC}", "n-type", "Al2O3", "(111)"]), None


def spell(rng, gold, value):
    """The gold slot written by a model: itself, or its value in another spelling."""
    if value is None:
        return rng.choice([gold, gold.lower(), f"\\text{{{gold}}}", f"${gold}$", "none"])
    f = rng.uniform(0.5, 1.5) if rng.random() < 0.3 else rng.choice(
        [1.0, 1.0, 1.0, 1.0004, 0.9996, 1.03, 0.97, 1.08, 0.92, 1.2])
    x = value * f
    style = rng.choice(["plain", "plain", "more", "fewer", "sci_e", "times", "cdot", "boxed",
                        "dollar", "unit", "comma", "minus", "mathrm", "gold"])
    if style == "gold":
        return gold
    if style == "more":
        return f"{x:.6f}"
    if style == "fewer":
        return f"{x:.1f}"
    if style == "sci_e":
        return f"{x:.3e}"
    if style in ("times", "cdot"):
        if x == 0:
            return "0"
        import math
        e = int(math.floor(math.log10(abs(x))))
        m = x / 10 ** e
        op = "\\times" if style == "times" else "\\cdot"
        return f"{m:.3f} {op} 10^{{{e}}}"
    if style == "boxed":
        return f"\\boxed{{{x:.4g}}}"
    if style == "dollar":
        return f"${x:.4g}$"
    if style == "unit":
        return f"{x:.4g} eV"
    if style == "comma":
        return f"{x:,.2f}"
    if style == "minus":
        return f"−{abs(x):.3g}" if x < 0 else f"{x:.3g}"
    if style == "mathrm":
        return f"\\mathrm{{{x:.4g}}}"
    return f"{x:.4g}"


def prediction(rng, golds, values):
    """A whole prediction string for the gold slots."""
    slots = [spell(rng, g, v) for g, v in zip(golds, values)]
    shape = rng.choice(["json", "json", "answer", "answer", "boxed_one", "text", "missing",
                        "extra", "empty", "nested", "numbers", "think", "huge"])
    if shape == "missing" and len(slots) > 1:
        slots = slots[:-1]
    if shape == "extra":
        slots = slots + [rng.choice(["", "1.0", "x"])]
    if shape == "boxed_one":
        return f"The result is \\boxed{{{slots[0]}}}."
    if shape == "text":
        return " ".join(slots)
    if shape == "empty":
        return rng.choice(["", "   ", "<answer></answer>", "[]", "null"])
    if shape == "nested":
        return json.dumps([slots[:1], slots[1:]], ensure_ascii=False)
    if shape == "numbers":
        out = []
        for s in slots:
            try:
                out.append(float(s))
            except ValueError:
                out.append(s)
        return json.dumps(out)
    if shape == "huge":
        return json.dumps(["1e400"] * len(slots)) if rng.random() < 0.5 else "[1e400]"
    body = json.dumps(slots, ensure_ascii=False)
    if shape == "answer":
        return f"<answer>{body}</answer>"
    if shape == "think":
        return f"<think>Work: \\boxed{{{slots[0]}}} maybe.</think>\n<answer>{body}</answer>"
    return body


def cases(seed, n):
    rng = random.Random(seed)
    for i in range(n):
        k = rng.choice([1, 1, 2, 2, 3])
        golds, values = zip(*(gold_value(rng) for _ in range(k)))
        gold = list(golds)
        if k == 3 and rng.random() < 0.3:
            gold = [gold[:2], gold[2:]]
        yield {"case": i, "gold": gold, "prediction": prediction(rng, golds, values)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="a checkout of wanhaoliu/OmniMatBench")
    ap.add_argument("--commit", required=True, help="its commit, recorded in the output")
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("-n", type=int, default=3000)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(args.reference) / "scripts" / "cal"))
    import eval_cal_results as ref  # the reference's scorer, run as it is

    out = [{"reference": "wanhaoliu/OmniMatBench scripts/cal/eval_cal_results.py",
            "commit": args.commit, "seed": args.seed, "rel_tol": 0.1, "zero_tol": 1e-12}]
    for case in cases(args.seed, args.n):
        lookup = {"x": ref.flatten_answer(case["gold"])}
        try:
            s = ref.score_item({"id": "x", "llm_answer": case["prediction"]}, lookup,
                               rel_tol=0.1, zero_tol=1e-12)
            case["ref"] = {"pred": s["pred_answer"], "exact": s["slot_scores_exact"],
                           "threshold": s["slot_scores_threshold"],
                           "item_exact": s["score_exact"], "item_threshold": s["score_threshold"]}
        except Exception as e:  # the reference crashes on some inputs: recorded as such
            case["ref"] = {"crash": type(e).__name__}
        out.append(case)
    with open(args.output, "w", encoding="utf-8") as f:
        for line in out:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    crashes = sum(1 for c in out[1:] if "crash" in c["ref"])
    print(f"{len(out) - 1} cases, {crashes} reference crashes -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
