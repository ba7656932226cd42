#!/usr/bin/env bash
# A workshop's first visits: N browsers fetch the page's wasm at once (brotli accepted)
# while one more asks /api/health. Prints the slowest wasm fetch, the bytes on the wire and
# the health answer's time, for the server as it serves (precompressed siblings, once they
# are written) and, for comparison, with the siblings moved away (compressed per request).
# A benchmark, not a test: it asserts nothing about time.
#   scripts/bench-first-visits.sh [N]        (default 100; builds the server as run.sh does, and the app)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/atomworld/ci-target}"
[ -f dist/index.html ] || scripts/build-app.sh >&2
cargo build --profile serve -p server --features wasm-sandbox >&2
DATA="$(mktemp -d)"
PORT=18$((RANDOM % 900 + 100))
"$CARGO_TARGET_DIR/serve/atomworld" serve --addr "127.0.0.1:$PORT" --data-dir "$DATA" --dist dist \
  >"$DATA/log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$DATA"' EXIT
WASM="$(cd dist && ls app-*_bg.wasm)"
for _ in $(seq 1 600); do grep -q "served precompressed\|cannot precompress" "$DATA/log" && break; sleep 0.5; done
sed 's/\x1b\[[0-9;]*m//g' "$DATA/log" | grep -o "secs=[0-9.]*" | head -1 | sed 's/^/precompressing: /' || true

burst() {
  local out="$DATA/times"
  : >"$out"
  for _ in $(seq 1 "$N"); do
    curl -s -o /dev/null -H 'Accept-Encoding: br' -w '%{time_total} %{size_download}\n' \
      "http://127.0.0.1:$PORT/$WASM" >>"$out" &
  done
  sleep 0.05
  local health
  health="$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$PORT/api/health")"
  wait $(jobs -p | grep -v "^$SERVER$") 2>/dev/null || true
  sort -n "$out" | tail -1 | awk -v n="$N" -v h="$health" -v what="$1" \
    '{printf "%-28s %d fetches: slowest %.3f s, %.2f MB each; /api/health %.3f s\n", what, n, $1, $2/1e6, h}'
}
burst "precompressed:"
mkdir -p "$DATA/siblings"
mv dist/*.br dist/*.gz "$DATA/siblings/" 2>/dev/null || true
burst "compressed per request:"
mv "$DATA/siblings/"* dist/ 2>/dev/null || true
