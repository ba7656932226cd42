#!/usr/bin/env bash
# Runs every test of the project: formatting, lints (native and wasm32), unit and
# integration tests, wasm tests of engine/bench, and the browser (e2e) suite.
# Installs what it needs first (scripts/setup.sh test).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test

step() { printf '\n\033[1;34m[test]\033[0m %s\n' "$*"; }
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"

step "cargo fmt --check"
cargo fmt --all -- --check

step "clippy (native: engine, bench, server)"
cargo clippy --workspace --exclude app --all-targets -- -D warnings

step "clippy (wasm32: engine, bench, app)"
cargo clippy -p engine -p bench -p app --all-targets --target wasm32-unknown-unknown -- -D warnings

step "cargo test --workspace (app is wasm-only: tested in the browser)"
cargo test --workspace --exclude app

step "wasm tests of engine and bench (wasm-bindgen-test under node)"
cargo test -p engine -p bench --target wasm32-unknown-unknown

step "building the app (trunk build --release) and the server for the e2e suite"
trunk build --release
cargo build -p server
export ATOMWORLD_BIN="$TARGET_DIR/debug/atomworld"
export ATOMWORLD_DIST="$PWD/dist"

step "e2e (Playwright + Debian chromium)"
(cd e2e && npm test)
