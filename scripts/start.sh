#!/usr/bin/env bash
# README command 1: install what is missing, fetch the default model (Qwen2.5-Coder-1.5B-
# Instruct, 1.1 GB, once), build in release mode and start harvey with the current
# directory as the workspace. HARVEY_START_MODEL=smollm2 (98 MB, fast, weak) or
# qwen-small (0.5B, 491 MB) fetches and starts that one instead.
# Extra arguments go to harvey (e.g. scripts/start.sh --model other.gguf).
set -euo pipefail

workspace=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/install-prereqs.sh"
case ${HARVEY_START_MODEL:-qwen} in
qwen) "$root/scripts/fetch-models.sh" --qwen ;;
qwen-small)
    "$root/scripts/fetch-models.sh" --qwen-small
    export HARVEY_MODEL=$root/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
    ;;
smollm2)
    "$root/scripts/fetch-models.sh"
    export HARVEY_MODEL=$root/models/SmolLM2-135M-Instruct.Q4_1.gguf
    ;;
*)
    echo "error: HARVEY_START_MODEL must be qwen, qwen-small or smollm2" >&2
    exit 2
    ;;
esac
"$root/scripts/fetch-embedder.sh"
cd "$root"
echo "building harvey (release; the first build compiles llama.cpp and takes several minutes) …"
cargo build --release --locked
# Where cargo put it: CARGO_TARGET_DIR (relative to the repository) when it is set.
target=$(cd "${CARGO_TARGET_DIR:-target}" && pwd)
exec "$target/release/harvey" --workdir "$workspace" "$@"
