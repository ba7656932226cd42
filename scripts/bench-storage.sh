#!/usr/bin/env bash
# Benchmark (figures printed, nothing asserted): AtomWorld's 2,500-task reference run
# (`atomworld run --model reference --per-group 250`) stored in SQLite and in PostgreSQL (a
# throwaway cluster from scripts/postgres.sh), each into an empty store, then its report read
# back (`atomworld report`). One instance: a run executes on one instance at a time. Usage:
#   scripts/bench-storage.sh [--profile serve|release|dev] [--per-group N]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=dev per_group=250
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile="$2"; shift 2 ;;
    --per-group) per_group="$2"; shift 2 ;;
    *) echo "usage: $0 [--profile serve|release|dev] [--per-group N]" >&2; exit 2 ;;
  esac
done
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomworld/ci-target}"
cargo build -q -p server --profile "$profile"
dir="$([ "$profile" = dev ] && echo debug || echo "$profile")"
bin="$CARGO_TARGET_DIR/$dir/atomworld"
work="$(mktemp -d)"
trap 'scripts/postgres.sh stop; rm -rf "$work"' EXIT
eval "$(scripts/postgres.sh start)"
psql -q "$ATOMWORLD_TEST_POSTGRES" -c "CREATE DATABASE bench"
pg="${ATOMWORLD_TEST_POSTGRES%/*}/bench"

# Seconds one command took (wall clock).
timed() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}

run() {
  "$bin" run --model reference --per-group "$per_group" --seed 2026 --concurrency 8 \
    --summary-json "$work/summary.json" "$@"
}
tasks=$((per_group * 10))
echo "AtomWorld reference run, $tasks tasks, concurrency 8, $(nproc) cores, profile $profile"
printf '%-10s %9s %12s\n' store "run (s)" "report (s)"
for store in sqlite postgres; do
  if [ "$store" = sqlite ]; then args=(--data-dir "$work/sqlite"); else args=(--database "$pg"); fi
  first="$(timed run "${args[@]}")"
  id="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$work/summary.json")"
  report="$(timed "$bin" report "$id" "${args[@]}")"
  printf '%-10s %9s %12s\n' "$store" "$first" "$report"
done
