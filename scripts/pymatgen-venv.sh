#!/usr/bin/env bash
# Makes (when missing) the Python venv the differential tests and the speed benchmark use,
# with pinned pymatgen, ase and pyyaml from PyPI, and the numeric stack under them (the split
# pymatgen-core, numpy, scipy: the oracles' last bits and tie-breaks depend on them), and
# prints its python's path on stdout.
#   scripts/pymatgen-venv.sh            -> ~/.cache/atomworld/venv-pmg/bin/python
# ATOMWORLD_PMG_VENV overrides the location. The venv lives outside the clone so every
# worktree and CI run shares it; a venv whose pinned versions differ is brought up to the pins.
set -euo pipefail

PYMATGEN_VERSION=2026.10.24
ASE_VERSION=3.29.0
PYYAML_VERSION=6.0.3
PYMATGEN_CORE_VERSION=2026.10.16
NUMPY_VERSION=2.4.6
SCIPY_VERSION=1.17.1
VENV="${ATOMWORLD_PMG_VENV:-$HOME/.cache/atomworld/venv-pmg}"
PY="$VENV/bin/python"

say() { printf '\033[1;34m[pymatgen-venv]\033[0m %s\n' "$*" >&2; }

installed() {
  # Prints the pinned packages' versions, or nothing when the venv is not usable.
  "$PY" - <<'PYEOF' 2>/dev/null || true
import importlib.metadata as m
print(*(m.version(p) for p in ["pymatgen", "ase", "pyyaml", "pymatgen-core", "numpy", "scipy"]))
PYEOF
}

want="$PYMATGEN_VERSION $ASE_VERSION $PYYAML_VERSION $PYMATGEN_CORE_VERSION $NUMPY_VERSION $SCIPY_VERSION"
if [ "$(installed)" != "$want" ]; then
  if [ ! -x "$PY" ]; then
    say "creating $VENV"
    if ! python3 -m venv "$VENV" >&2; then
      say "python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
      exit 1
    fi
  fi
  say "installing pymatgen==$PYMATGEN_VERSION ase==$ASE_VERSION pyyaml==$PYYAML_VERSION and its numeric stack (PyPI)"
  "$PY" -m pip install --quiet --disable-pip-version-check \
    "pymatgen==$PYMATGEN_VERSION" "ase==$ASE_VERSION" "pyyaml==$PYYAML_VERSION" \
    "pymatgen-core==$PYMATGEN_CORE_VERSION" "numpy==$NUMPY_VERSION" "scipy==$SCIPY_VERSION" >&2
  if [ "$(installed)" != "$want" ]; then
    say "the venv at $VENV does not have $want after installing; remove it and retry"
    exit 1
  fi
fi
echo "$PY"
