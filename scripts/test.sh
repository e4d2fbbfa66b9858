#!/usr/bin/env bash
# README command 2: install what is missing, fetch the models (the default and the second test
# family, Gemma 3 270M), then check formatting,
# lints and run every test (unit + integration against the real model).
# Everything runs in release mode so llama.cpp is compiled once and shared with
# `scripts/start.sh`.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install-prereqs.sh"
"$root/scripts/fetch-models.sh" --test
"$root/scripts/fetch-embedder.sh"
cd "$root"
cargo fmt --check
cargo build --release --locked
cargo clippy --release --locked --all-targets -- -D warnings
cargo test --release --locked
