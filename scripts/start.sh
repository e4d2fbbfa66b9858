#!/usr/bin/env bash
# README command 1: install what is missing, fetch the default model, build in release
# mode and start harvey with the current directory as the workspace.
# Extra arguments go to harvey (e.g. scripts/start.sh --model other.gguf).
set -euo pipefail

workspace=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install-prereqs.sh"
"$root/scripts/fetch-models.sh"
"$root/scripts/fetch-embedder.sh"
cd "$root"
echo "building harvey (release; the first build compiles llama.cpp and takes several minutes) …"
cargo build --release --locked
# Where cargo put it: CARGO_TARGET_DIR (relative to the repository) when it is set.
target=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
exec "$target/release/harvey" --workdir "$workspace" "$@"
