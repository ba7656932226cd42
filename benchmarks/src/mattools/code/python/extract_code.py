# Source code of the pinned pymatgen stack cut into chunks, for the MatTools agents' code
# retrieval (runs inside the sandbox): every .py file of the installed pymatgen package
# (a namespace package; pymatgen-analysis-defects installs into it), tests left out, in path order, each file cut
# on its own into windows of CHUNK characters that overlap by OVERLAP (the paper's sizes),
# printed as one JSON line after the marker.
import json
import os
import sys

import pymatgen

CHUNK = 1000
OVERLAP = 50
entries = []
for base in sorted(pymatgen.__path__):
    root = os.path.dirname(base)
    for directory, subdirs, files in os.walk(base):
        subdirs[:] = sorted(d for d in subdirs if d not in ("tests", "test", "__pycache__"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
            rel = os.path.relpath(path, root)
            start = 0
            while start < len(text):
                piece = text[start:start + CHUNK]
                entries.append({"name": f"{rel}:{start}", "kind": "code", "signature": "", "doc": piece})
                if start + CHUNK >= len(text):
                    break
                start += CHUNK - OVERLAP

sys.stdout.write("\n\x1eAWCODE " + json.dumps(entries) + "\n")
