#!/usr/bin/env bash
# Builds (when missing) the Python reference outputs that benchmarks/tests/actions_vs_pyref.rs and
# benchmarks/tests/evaluator_vs_pyref.rs compare against, and prints the variables they read:
#
#   eval "$(scripts/pyref.sh)"      # then: cargo test -p benchmarks --test actions_vs_pyref ...
#
# Files live outside the repository, in ~/.cache/atomworld/oracle/ (ATOMWORLD_ORACLE_DIR),
# keyed by the pymatgen and ASE versions, the seed, the task count and a hash of the Python
# reference; a second run only prints the variables. Progress goes to stderr; stdout holds
# only `export` lines, so the output can be eval'ed. Without the pymatgen venv it prints a
# notice on stderr and nothing on stdout (the Rust tests then skip), except under CI
# (CI=true or ATOMWORLD_REQUIRE_SHARED=1), where a missing oracle is a failure.
#
# Settings (environment): ATOMWORLD_BIN (an `atomworld` binary already built; default: build
# the server in debug), ATOMWORLD_PYTHON (default ~/.cache/atomworld/venv-pmg/bin/python),
# ATOMWORLD_PYREF_SEED (default 20260601), ATOMWORLD_PYREF_PER_ACTION (default 250),
# ATOMWORLD_PYREF_PER_TASK (answers per task for the evaluator, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${ATOMWORLD_PYTHON:-$HOME/.cache/atomworld/venv-pmg/bin/python}"
SEED="${ATOMWORLD_PYREF_SEED:-20260601}"
PER_ACTION="${ATOMWORLD_PYREF_PER_ACTION:-250}"
PER_TASK="${ATOMWORLD_PYREF_PER_TASK:-2}"
DIR="${ATOMWORLD_ORACLE_DIR:-$HOME/.cache/atomworld/oracle}"

note() { printf '[pyref] %s\n' "$*" >&2; }

if ! [ -x "$PY" ] || ! "$PY" -c 'import pymatgen.core, ase' 2>/dev/null; then
  if [ "${CI:-}" = "true" ] || [ -n "${ATOMWORLD_REQUIRE_SHARED:-}" ]; then
    note "no Python with pymatgen and ASE at $PY: under CI the pyref comparisons must run"
    exit 1
  fi
  note "no Python with pymatgen and ASE at $PY: the pyref comparisons will be skipped"
  exit 0
fi

VERSIONS="$("$PY" -c 'import importlib.metadata as m; print("pmg" + m.version("pymatgen") + "-ase" + m.version("ase"))')"
HASH="$(cat benchmarks/tests/pyref/atomworld_ref.py benchmarks/tests/pyref/driver.py | sha256sum | cut -c1-10)"
mkdir -p "$DIR"
# The task set depends on our generator, not on Python: key it by a hash of the generator's
# sources (the generator, the actions it applies, the prompts and no-op check it uses, the
# structure pool), the seed and the size, so a change that yields other tasks makes a new
# set. The outputs below copy everything they use from it, so each one is a complete case.
GEN="gen-$(find benchmarks/src/atomworld data/structures -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-10)"
TASKS="$DIR/pyref-tasks-$GEN-seed$SEED-n$PER_ACTION.jsonl"
# numpy's answers depend on the OpenBLAS kernels it runs (OPENBLAS_CORETYPE, read only).
KERNEL="${OPENBLAS_CORETYPE:-native}"
ACTIONS="$DIR/pyref-actions-$GEN-$VERSIONS-$KERNEL-seed$SEED-n$PER_ACTION-$HASH.jsonl"
EVAL="$DIR/pyref-eval-$GEN-$VERSIONS-$KERNEL-seed$SEED-n$PER_ACTION-k$PER_TASK-$HASH.jsonl"

if ! [ -s "$TASKS" ] && { ! [ -s "$ACTIONS" ] || ! [ -s "$EVAL" ]; }; then
  note "generating the task set (seed $SEED, $PER_ACTION per action) with atomworld gen"
  BIN="${ATOMWORLD_BIN:-}"
  if [ -z "$BIN" ]; then
    cargo build -q -p server >&2
    TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
    BIN="$TARGET_DIR/debug/atomworld"
  fi
  "$BIN" gen --seed "$SEED" --per-action "$PER_ACTION" -o "$TASKS.part" >&2
  mv "$TASKS.part" "$TASKS"
fi
if ! [ -s "$ACTIONS" ]; then
  note "running the ASE reference of the actions -> $ACTIONS"
  "$PY" benchmarks/tests/pyref/driver.py actions "$TASKS" "$ACTIONS.part"
  mv "$ACTIONS.part" "$ACTIONS"
fi
if ! [ -s "$EVAL" ]; then
  note "running the pymatgen evaluation pipeline -> $EVAL"
  "$PY" benchmarks/tests/pyref/driver.py eval "$TASKS" "$EVAL.part" --per-task "$PER_TASK"
  mv "$EVAL.part" "$EVAL"
fi
echo "export ATOMWORLD_ACTIONS_REF='$ACTIONS'"
echo "export ATOMWORLD_EVAL_REF='$EVAL'"
