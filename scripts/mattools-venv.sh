#!/usr/bin/env bash
# Builds the pinned CPython 3.11 venv that the sandbox's `bwrap` backend runs MatTools' code
# tasks in (pins: sandbox/python/mattools-requirements.txt, from the reference's lock file).
# Everything comes from the package index; nothing is downloaded when the venv already holds
# exactly these pins (a stamp file records the requirements' sha256).
#
# Usage: scripts/mattools-venv.sh [DIR]   (default: $ATOMWORLD_MATTOOLS_VENV or
#                                          ~/.cache/atomworld/venv-mattools)
# Prints the venv directory on stdout when done. About 1 GB; 2-5 minutes the first time.
set -euo pipefail
cd "$(dirname "$0")/.."
REQ="sandbox/python/mattools-requirements.txt"
DIR="${1:-${ATOMWORLD_MATTOOLS_VENV:-$HOME/.cache/atomworld/venv-mattools}}"
say() { printf '[mattools-venv] %s\n' "$*" >&2; }
die() { printf '[mattools-venv] ERROR: %s\n' "$*" >&2; exit 1; }

want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ -f "$DIR/.atomworld-stamp" && "$(cat "$DIR/.atomworld-stamp")" == "$want" \
      && -x "$DIR/bin/python" ]]; then
  say "already built in $DIR"
  echo "$DIR"
  exit 0
fi

PY="${PYTHON311:-python3.11}"
command -v "$PY" >/dev/null || die "CPython 3.11 is needed (set PYTHON311=/path/to/python3.11)"
ver="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
[[ "$ver" == "3.11" ]] || die "$PY is Python $ver; MatTools' environment pins 3.11"

rm -rf "$DIR.tmp"
say "creating the venv (Python $("$PY" -c 'import platform; print(platform.python_version())'))"
# --copies: the sandbox binds the venv read-only; symlinks into a pyenv prefix would need that
# prefix bound too (the backend binds the base prefix as well, but copies keep it self-contained).
"$PY" -m venv --copies "$DIR.tmp"
"$DIR.tmp/bin/python" -m pip install --quiet --upgrade "pip<25"
say "installing the pinned stack (about 1 GB)"
"$DIR.tmp/bin/python" -m pip install --quiet --only-binary=:all: -r "$REQ" \
  || die "pip install failed"
"$DIR.tmp/bin/python" -m pip check >&2 || die "pip check found conflicts"
# Check the venv moves: a venv records its own path in bin/ scripts, which we never run;
# `python -m` works from anywhere.
rm -rf "$DIR"
mv "$DIR.tmp" "$DIR"
echo "$want" > "$DIR/.atomworld-stamp"
"$DIR/bin/python" -c 'import pymatgen.core, pymatgen.analysis.defects.generators' \
  || die "the venv does not import pymatgen"
say "built in $DIR"
echo "$DIR"
