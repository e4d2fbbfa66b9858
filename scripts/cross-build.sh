#!/usr/bin/env bash
# Cross-builds harvey for the Raspberry Pi 500+ (aarch64, Cortex-A76: NEON, dotprod, fp16)
# on Debian without Docker, then (with --check) verifies the result:
#   scripts/cross-build.sh            # build target/cross/aarch64-unknown-linux-gnu/release/harvey
#   scripts/cross-build.sh --check    # build, then scripts/cross-check.sh
# Installs gcc/g++-aarch64-linux-gnu (and qemu-user for the check) when missing and adds
# the Rust target. Uses its own target directory (CARGO_TARGET_DIR, default target/cross)
# so it never waits for or disturbs the native build.
#
# Why the compiler wrappers: llama-cpp-sys-2 0.1.161 pins GGML_CPU_ARM_ARCH=armv8-a for
# aarch64 Linux unless RUSTFLAGS carries -C target-cpu=native (impossible in a cross build)
# and turns -C target-cpu=cortex-a76 into -march=cortex-a76, which GCC rejects. The
# wrappers in scripts/cross/ append -march=armv8.2-a+dotprod+fp16 -mtune=cortex-a76 after
# every other flag; GCC takes the last -march. Rust code itself gets no target-cpu (it is
# not where the time goes) — only the repository's target-cpu=native is replaced.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=aarch64-unknown-linux-gnu
check=false
[[ ${1:-} == --check ]] && check=true

need=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu)
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need+=(g++-aarch64-linux-gnu)
$check && { command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user); }
# install-prereqs.sh installs these together with what the native build needs.
"$root/scripts/install-prereqs.sh" ${need[@]+"${need[@]}"}
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target"

sysroot=/usr/aarch64-linux-gnu
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/cross}
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
# Replaces build.rustflags (target-cpu=native) from .cargo/config.toml for this target.
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+neon"
export CC_aarch64_unknown_linux_gnu=$root/scripts/cross/aarch64-a76-gcc
export CXX_aarch64_unknown_linux_gnu=$root/scripts/cross/aarch64-a76-g++
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export BINDGEN_EXTRA_CLANG_ARGS_aarch64_unknown_linux_gnu="--sysroot=$sysroot -I$sysroot/include"
export QEMU_LD_PREFIX=$sysroot

cd "$root"
echo "cross-building harvey for $target (Cortex-A76 kernels; llama.cpp takes several minutes) …"
started=$(date +%s)
cargo build --release --locked --target "$target" --bin harvey
echo "built $CARGO_TARGET_DIR/$target/release/harvey in $(($(date +%s) - started)) s"
if $check; then
    exec "$root/scripts/cross-check.sh"
fi
