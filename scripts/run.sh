#!/usr/bin/env bash
# Build the app and the server in release mode and start the playground.
#   scripts/run.sh [--addr 127.0.0.1:8080] [--data-dir data/local]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "[run] building the app (trunk build --release)"
trunk build --release
echo "[run] building the server"
cargo build --release -p server
exec cargo run --quiet --release -p server -- serve --dist dist "$@"
