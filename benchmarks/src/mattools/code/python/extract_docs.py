# Documentation of the pinned stack for the MatTools agents' retrieval (runs inside the
# sandbox): the public modules, classes, functions and methods of the packages the tasks use,
# with their signatures and (cut) docstrings, printed as one JSON line after the marker.
# With SOURCE_CHARS set above this file (the model-written documentation's run), each class,
# function, method and property also carries its source code, cut to that many characters.
import importlib
import inspect
import json
import pkgutil
import sys
import warnings

warnings.filterwarnings("ignore")
ROOTS = [
    "pymatgen.core",
    "pymatgen.io.vasp",
    "pymatgen.analysis.defects",
    "pymatgen.analysis.structure_matcher",
    "pymatgen.analysis.phase_diagram",
    "pymatgen.analysis.local_env",
    "pymatgen.symmetry",
    "pymatgen.electronic_structure",
    "pymatgen.entries",
    "pymatgen.transformations.standard_transformations",
]
DOC_CHARS = 700
SOURCE_CHARS = globals().get("SOURCE_CHARS", 0)


def modules():
    seen = []
    for root in ROOTS:
        try:
            mod = importlib.import_module(root)
        except Exception:
            continue
        seen.append(mod)
        path = getattr(mod, "__path__", None)
        if path is None:
            continue
        for info in pkgutil.walk_packages(path, root + "."):
            if any(part.startswith("_") or part in ("tests", "test") for part in info.name.split(".")):
                continue
            try:
                seen.append(importlib.import_module(info.name))
            except Exception:
                continue
    return seen


def doc(obj):
    text = inspect.getdoc(obj) or ""
    return text[:DOC_CHARS]


def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""


entries = []
names = set()


def source(obj):
    try:
        return inspect.getsource(obj)[:SOURCE_CHARS]
    except (OSError, TypeError):
        return ""


def add(name, kind, obj):
    if name in names:
        return
    names.add(name)
    entry = {"name": name, "kind": kind, "signature": signature(obj) if kind != "module" else "", "doc": doc(obj)}
    if SOURCE_CHARS and kind != "module":
        entry["source"] = source(obj)
    entries.append(entry)


for mod in modules():
    add(mod.__name__, "module", mod)
    for attr, obj in vars(mod).items():
        if attr.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
            continue
        if inspect.isclass(obj):
            add(f"{mod.__name__}.{attr}", "class", obj)
            for m, member in vars(obj).items():
                if m.startswith("_") and m != "__init__":
                    continue
                func = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if inspect.isfunction(func):
                    add(f"{mod.__name__}.{attr}.{m}", "method", func)
                elif isinstance(member, property):
                    add(f"{mod.__name__}.{attr}.{m}", "property", member.fget or member)
        elif inspect.isfunction(obj):
            add(f"{mod.__name__}.{attr}", "function", obj)

sys.stdout.write("\n\x1eAWDOCS " + json.dumps(entries) + "\n")
