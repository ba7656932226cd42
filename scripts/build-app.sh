#!/usr/bin/env bash
# Builds the page into dist/ as shipped: Trunk in release (the wasm-release profile, then
# binaryen's wasm-opt -Oz from scripts/binaryen, which scripts/setup.sh build installs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/scripts/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"
exec trunk build --release "$@"
