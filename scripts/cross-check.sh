#!/usr/bin/env bash
# Verifies the aarch64 cross build made by scripts/cross-build.sh:
#  1. llama.cpp's CMake cache shows dotprod and fp16 vector arithmetic enabled (and no
#     i8mm/SVE, which the Cortex-A76 lacks);
#  2. the binary contains dot-product (sdot/udot) and fp16 vector instructions;
#  3. under qemu-aarch64 -cpu cortex-a76 it prints --version and answers a short
#     `harvey run` prompt with the default model — the same text as the native build
#     (greedy sampling), when one is there.
# Emulated speed means nothing; only the answers count.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=aarch64-unknown-linux-gnu
dir=${CARGO_TARGET_DIR:-$root/target/cross}
bin=$dir/$target/release/harvey
sysroot=/usr/aarch64-linux-gnu
fail() { echo "cross-check FAILED: $*" >&2; exit 1; }

[[ -x $bin ]] || fail "$bin is missing: run scripts/cross-build.sh first"
command -v qemu-aarch64 >/dev/null 2>&1 || fail "qemu-aarch64 is missing (Debian: apt install qemu-user)"

cache=$(ls -t "$dir/$target"/release/build/llama-cpp-sys-2-*/out/build/CMakeCache.txt 2>/dev/null | head -1)
[[ -n $cache ]] || fail "no CMakeCache.txt of llama-cpp-sys-2 under $dir/$target/release/build"
echo "CMake cache: $cache"
grep -E '^HAVE_(DOTPROD|FP16_VECTOR_ARITHMETIC|MATMUL_INT8|SVE|SME|FMA):' "$cache" | sed 's/^/  /'
grep -q '^HAVE_DOTPROD:INTERNAL=1$' "$cache" || fail "HAVE_DOTPROD is not 1: the dotprod kernels are not built"
grep -q '^HAVE_FP16_VECTOR_ARITHMETIC:INTERNAL=1$' "$cache" || fail "HAVE_FP16_VECTOR_ARITHMETIC is not 1"
if grep -q '^HAVE_MATMUL_INT8:INTERNAL=1$' "$cache"; then fail "i8mm is enabled, but a Cortex-A76 has none (SIGILL on the Pi)"; fi
if grep -q '^HAVE_SVE:INTERNAL=1$' "$cache"; then fail "SVE is enabled, but a Cortex-A76 has none"; fi

objdump=aarch64-linux-gnu-objdump
disasm=$(mktemp)
trap 'rm -f "$disasm"' EXIT
"$objdump" -d --no-show-raw-insn "$bin" > "$disasm"
dot=$(grep -cE '\s(sdot|udot)\s' "$disasm" || true)
fp16=$(grep -cE '\s(fmla|fmul|fadd)\s+v[0-9]+\.8h' "$disasm" || true)
echo "instructions: $dot sdot/udot, $fp16 fp16 vector (fmla/fmul/fadd .8h)"
((dot > 100)) || fail "only $dot dot-product instructions in the binary"
((fp16 > 10)) || fail "only $fp16 fp16 vector instructions in the binary"

run() { qemu-aarch64 -cpu cortex-a76 -L "$sysroot" "$bin" "$@"; }
version=$(run --version) || fail "the binary does not start under qemu-aarch64 -cpu cortex-a76"
echo "qemu: $version"

"$root/scripts/fetch-models.sh" >/dev/null
ws=$(mktemp -d)
trap 'rm -f "$disasm"; rm -rf "$ws"' EXIT
mkdir -p "$ws/agents"
cat > "$ws/agents/harvey.yaml" <<'YAML'
engine:
  n_ctx: 512
sampling:
  temperature: 0
memory:
  enabled: false
tools:
  enabled: false
YAML
model=$root/models/SmolLM2-135M-Instruct.Q4_1.gguf
prompt="What is the capital of France? Answer in one word."
started=$(date +%s)
reply=$(run run -w "$ws" -m "$model" --max-tokens 8 "$prompt") || fail "harvey run failed under qemu"
echo "qemu reply ($(($(date +%s) - started)) s): $reply"
[[ -n ${reply//[[:space:]]/} ]] || fail "empty reply under qemu"
native=$root/target/release/harvey
if [[ -x $native ]]; then
    want=$("$native" run -w "$ws" -m "$model" --max-tokens 8 "$prompt")
    echo "native reply: $want"
    [[ $reply == "$want" ]] || fail "the aarch64 reply differs from the native one"
fi
echo "cross-check passed"
