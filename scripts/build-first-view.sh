#!/usr/bin/env bash
# Trunk hook (Trunk.toml, after the app's build): the first view's module (the first-view
# crate with its `start` feature) for wasm32, bound for the browser by wasm-bindgen into
# $TRUNK_STAGING_DIR/first-view/, and in release built with the page's wasm-release profile
# and shrunk by binaryen's wasm-opt -Oz, as Trunk does for the app.
set -euo pipefail
cd "$TRUNK_SOURCE_DIR"
target_dir="${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')}"
if [ "$TRUNK_PROFILE" = release ]; then
  profile=wasm-release
else
  profile=dev
fi
cargo build --target wasm32-unknown-unknown -p first-view --lib \
  --features start --profile "$profile"
out_dir="$profile"
[ "$profile" = dev ] && out_dir=debug
out="$TRUNK_STAGING_DIR/first-view"
wasm-bindgen --target web --no-typescript --out-dir "$out" \
  "$target_dir/wasm32-unknown-unknown/$out_dir/first_view.wasm"
if [ "$TRUNK_PROFILE" = release ]; then
  wasm-opt -Oz "$out/first_view_bg.wasm" -o "$out/first_view_bg.wasm.opt"
  mv "$out/first_view_bg.wasm.opt" "$out/first_view_bg.wasm"
fi
