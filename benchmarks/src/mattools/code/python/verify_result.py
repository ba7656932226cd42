# Stage 2 of a MatTools tool-usage task (runs inside the sandbox, apart from the model's
# code): rebuild the returned dict from result.json and call the task's own verification
# function (verify.py) on it; print its answer after the marker line. NAME is replaced by the
# task's name (a checked identifier).
import json
import sys

_TASK = "NAME"


class Opaque:
    """A value the model returned that JSON cannot carry: equal only to itself."""

    def __init__(self, text, kind):
        self.text, self.kind = text, kind

    def __repr__(self):
        return self.text


def _aw_decode(x):
    if isinstance(x, list):
        return [_aw_decode(v) for v in x]
    if not isinstance(x, dict):
        return x
    if "$ndarray" in x:
        import numpy as np

        data = _aw_decode(x["$ndarray"])
        try:
            dtype = x.get("dtype")
            if "shape" in x:
                # Structured: the dtype is its field list, the records come flat.
                import ast

                rows = np.array(data, dtype=np.dtype(ast.literal_eval(dtype)))
                return rows.reshape(x["shape"])
            return np.array(data, dtype=dtype)
        except Exception:
            return np.array(data, dtype=object)
    if "$tuple" in x:
        return tuple(_aw_decode(v) for v in x["$tuple"])
    if "$set" in x:
        items = [_aw_decode(v) for v in x["$set"]]
        return frozenset(items) if x.get("frozen") else set(items)
    if "$dict" in x:
        return {_aw_decode(k): _aw_decode(v) for k, v in x["$dict"]}
    if "$float" in x:
        return float(x["$float"])
    if "$complex" in x:
        re, im = (_aw_decode(v) for v in x["$complex"])
        return complex(re, im)
    if "$element" in x:
        from pymatgen.core import Element

        return Element(x["$element"])
    if "$species" in x:
        from pymatgen.core import Species

        return Species.from_str(x["$species"])
    if "$repr" in x:
        return Opaque(x["$repr"], x.get("type", "?"))
    return {k: _aw_decode(v) for k, v in x.items()}


with open("result.json", encoding="utf-8") as _f:
    _props = _aw_decode(json.load(_f))
with open("verify.py", encoding="utf-8") as _f:
    _src = _f.read()
_ns = {"__name__": "verification"}
exec(compile(_src, "verify.py", "exec"), _ns)
_out = _ns[_TASK](_props)
sys.stdout.write("\n\x1eAWVERIFY " + json.dumps(_out, default=repr) + "\n")
