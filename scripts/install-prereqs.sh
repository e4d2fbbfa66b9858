#!/usr/bin/env bash
# Installs what building harvey needs on Debian / Raspberry Pi OS: cmake and clang +
# libclang (llama.cpp's build and its bindings), python3 with pip (model fetching),
# and pdftotext from poppler-utils (`/read doc.pdf` and its test).
# Idempotent: installs only what is missing. Uses sudo when not root.
# Extra Debian packages given as arguments are installed with them (callers pass only
# what they found missing, e.g. scripts/cross-build.sh's cross compilers).
set -euo pipefail

need=("$@")
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v clang >/dev/null 2>&1 || need+=(clang)
# bindgen needs libclang.so; the -dev package provides the unversioned name.
if ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libclang\.so '; then
    need+=(libclang-dev)
fi
command -v c++ >/dev/null 2>&1 || need+=(g++)
command -v python3 >/dev/null 2>&1 || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
# scripts/fetch-embedder.sh converts the embedding model in a throwaway virtualenv.
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
# `/read`, `/attach` and `/context pin` read PDFs through pdftotext.
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)

if ((${#need[@]})); then
    echo "installing: ${need[*]}"
    sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found. Install Rust (rustup, stable >= 1.85) and run this again." >&2
    exit 1
fi
