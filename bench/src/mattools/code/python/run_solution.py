# Stage 1 of a MatTools tool-usage task (runs inside the sandbox): load the model's code
# (solution.py) as a script, call its function, and print the returned value as tagged JSON
# after the marker line. NAME is replaced by the function's name (a checked identifier).
import json
import math
import sys

_FN = "NAME"


def _aw_encode(x, depth=0):
    """Tagged JSON: tuples, sets, dicts with any keys, arrays and pymatgen species survive.

    numpy scalars become Python scalars, as the reference's repr/eval round trip made them
    under numpy 1.26 (its repr of np.float64(1.5) is "1.5").
    """
    if depth > 60:
        return {"$repr": "<nested too deeply>", "type": "?"}
    if x is None or isinstance(x, (bool, str)):
        return x
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return {"$ndarray": _aw_encode(x.tolist(), depth + 1), "dtype": str(x.dtype)}
    if np is not None and isinstance(x, np.generic):
        return _aw_encode(x.item(), depth + 1)
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return float(x) if math.isfinite(x) else {"$float": repr(float(x))}
    if isinstance(x, complex):
        return {"$complex": [_aw_encode(x.real), _aw_encode(x.imag)]}
    if isinstance(x, tuple):
        return {"$tuple": [_aw_encode(v, depth + 1) for v in x]}
    if isinstance(x, (set, frozenset)):
        return {"$set": [_aw_encode(v, depth + 1) for v in x], "frozen": isinstance(x, frozenset)}
    if isinstance(x, list):
        return [_aw_encode(v, depth + 1) for v in x]
    if isinstance(x, dict):
        return {"$dict": [[_aw_encode(k, depth + 1), _aw_encode(v, depth + 1)] for k, v in x.items()]}
    kind = type(x)
    if kind.__module__.startswith("pymatgen") and kind.__name__ in ("Element", "Species"):
        return {"$" + kind.__name__.lower(): str(x)}
    return {"$repr": repr(x)[:2000], "type": kind.__module__ + "." + kind.__qualname__}


with open("solution.py", encoding="utf-8") as _f:
    _src = _f.read()
_ns = {"__name__": "__main__", "__file__": "solution.py", "__builtins__": __builtins__}
exec(compile(_src, "solution.py", "exec"), _ns)
_fn = _ns.get(_FN)
if not callable(_fn):
    raise NameError(f"the code defines no function named {_FN!r}")
_result = _fn()
try:
    sys.stdout.flush()
except Exception:
    pass
sys.__stdout__.write("\n\x1eAWRESULT " + json.dumps(_aw_encode(_result), allow_nan=False) + "\n")
sys.__stdout__.flush()
