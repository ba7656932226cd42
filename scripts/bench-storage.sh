#!/usr/bin/env bash
# Benchmark (figures printed, nothing asserted): AtomWorld's 2,500-task reference run
# (`atomworld run --model reference --per-group 250`) stored in SQLite and in PostgreSQL (a
# throwaway cluster from scripts/postgres.sh), each into an empty store, then its report read
# back (`atomworld report`). Then a model-bound run (a local fake model answering in 100 ms,
# 1,000 tasks at concurrency 4) started over HTTP on one `serve` instance, and on one of two
# sharing the database (the other helps with its slices): start to finished. Usage:
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

# A model-bound run over HTTP, on one instance and on two sharing the database.
python3 - "$work/fake.port" <<'PY' &
import http.server, json, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        time.sleep(0.1)
        body = json.dumps({"choices": [{"message": {"content": "<cif>nope</cif>"}}],
                           "usage": {"prompt_tokens": 10, "completion_tokens": 1}}).encode()
        self.send_response(200); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
PY
fake=$!
trap 'kill $fake 2>/dev/null; kill $(jobs -p) 2>/dev/null; scripts/postgres.sh stop; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s "$work/fake.port" ] && break; sleep 0.1; done
printf '[[models]]\nname = "fake"\nprovider = "openai-compatible"\nmodel = "f"\nbase_url = "http://127.0.0.1:%s/v1"\n[limits]\nrun_lease_secs = 3\n' \
  "$(cat "$work/fake.port")" > "$work/fake.toml"
mkdir -p "$work/dist"
serve() { # serve DB PORT: an instance on database DB at 127.0.0.1:PORT
  "$bin" serve --addr "127.0.0.1:$2" --database "$1" --config "$work/fake.toml" \
    --dist "$work/dist" --data-dir "$work/data-$2" >"$work/serve-$2.log" 2>&1 &
  for _ in $(seq 300); do curl -sf "127.0.0.1:$2/api/health" >/dev/null && return; sleep 0.1; done
  echo "instance on port $2 did not start" >&2; exit 1
}
timed_run() { # timed_run PORT SPEC: seconds from POST /api/runs of SPEC to a finished run
  python3 - "$1" "$2" <<'PY'
import json, sys, time, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
body = sys.argv[2].encode()
start = time.time()
print("    run started at " + time.strftime("%H:%M:%S", time.gmtime(start)), file=sys.stderr)
req = urllib.request.Request(base + "/api/runs", body, {"content-type": "application/json"})
run = json.load(urllib.request.urlopen(req))["run_id"]
while json.load(urllib.request.urlopen(f"{base}/api/runs/{run}"))["status"] not in ("finished", "incomplete", "stopped"):
    time.sleep(0.2)
print(f"{time.time() - start:.1f}")
PY
}
fake_spec='{"model": "fake", "per_action": 100, "seed": 11, "concurrency": 4}'
reference_spec="{\"model\": \"reference\", \"per_group\": $per_group, \"seed\": 2026, \"concurrency\": 8}"
for what in fake reference; do
  echo
  if [ "$what" = fake ]; then
    echo "Model-bound run over HTTP: 1,000 tasks, a fake model answering in 100 ms, concurrency 4"
    spec="$fake_spec"
  else
    sleep 1 # the instances above have stopped
    echo "The reference run over HTTP: $tasks tasks, concurrency 8 (CPU-bound: scoring)"
    spec="$reference_spec"
  fi
  printf '%-34s %9s\n' instances "run (s)"
  for n in 1 2; do
    psql -q "$ATOMWORLD_TEST_POSTGRES" -c "CREATE DATABASE bench_${what}_$n"
    db="${ATOMWORLD_TEST_POSTGRES%/*}/bench_${what}_$n"
    port=$((18600 + 10 * n)); [ "$what" = fake ] || port=$((port + 100))
    serve "$db" $port
    [ "$n" = 2 ] && serve "$db" $((port + 1))
    secs="$(timed_run $port "$spec")"
    shares="$(psql -qtA "$db" -c "SELECT string_agg(CASE WHEN owner LIKE '%/helper' THEN 'helper ' ELSE 'holder ' END || n, ', ') FROM (SELECT owner, COUNT(*) AS n FROM run_slices GROUP BY owner ORDER BY owner) s")"
    printf '%-34s %9s   slices: %s\n' "$n on PostgreSQL" "$secs" "$shares"
    grep -h "helping another" "$work"/serve-$((port + 1)).log 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-30 | sed 's/^/    helper joined at /' || true
    kill $(jobs -p | grep -v "^$fake$") 2>/dev/null || true
  done
done
