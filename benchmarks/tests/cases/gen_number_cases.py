"""Reference layouts of numbers in prompts, from numpy and Python themselves.

Writes number_cases.jsonl: numpy `str(np.array(v))` for float64 vectors and Python
`str(float)` for scalars, over magnitudes that exercise every layout rule (padding, trimming,
scientific switch). Regenerate with the project venv:
    ~/.cache/atomworld/venv-pmg/bin/python benchmarks/tests/cases/gen_number_cases.py
"""
import json
import random

import numpy as np

rng = random.Random(20261122)
out = open(__file__.replace("gen_number_cases.py", "number_cases.jsonl"), "w")
scales = [1e-9, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 2, 10, 100, 1e4, 1e7, 1e8, 1e12]
for n in range(1500):
    kind = n % 5
    if kind == 0:
        v = [rng.gauss(0, 2) for _ in range(3)]
    elif kind == 1:
        v = [round(rng.gauss(0, 2), rng.randint(0, 9)) for _ in range(3)]
    elif kind == 2:
        v = [rng.choice([-1, 1]) * rng.random() * rng.choice(scales) for _ in range(3)]
    elif kind == 3:
        v = [float(rng.choice([0, 1, -1, 0.5, 2])) for _ in range(3)]
    else:
        v = [rng.uniform(0, 12) for _ in range(3)]
    out.write(json.dumps({"vector": [repr(x) for x in v], "numpy": str(np.array(v))}) + "\n")
for n in range(500):
    x = rng.choice([-1, 1]) * rng.random() * rng.choice(scales + [1e15, 1e16, 1e17])
    if n % 3 == 0:
        x = round(x, rng.randint(0, 6))
    out.write(json.dumps({"scalar": repr(x), "python": str(x)}) + "\n")
