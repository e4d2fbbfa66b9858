#!/usr/bin/env bash
# Builds llama.cpp's own `llama-bench` into target/llama-bench/bin/, as the reference that
# `harvey bench` measures harvey's prefill and decode against.
#
# Fair comparison: the same llama.cpp sources harvey links (the llama-cpp-sys-2 crate in
# cargo's registry, found through `cargo metadata`) and the same ggml options harvey's build
# used (the GGML_* entries, compilers, C/C++ flags and build type of harvey's own CMakeCache,
# so the same SIMD flags, OpenMP and no AMX; see .cargo/config.toml).
#
# The crate ships llama.cpp without the llama-bench sources (tools/llama-bench/ holds only its
# README, and tools/CMakeLists.txt names tool directories the crate leaves out, so
# LLAMA_BUILD_TOOLS=ON cannot configure). So this builds llama.cpp with LLAMA_BUILD_COMMON=ON
# through a small wrapper project that adds llama-bench the way tools/llama-bench/CMakeLists.txt
# does. Its two source files come from, in order:
#   1. the crate itself, if a later version ships them;
#   2. LLAMA_BENCH_SRC=/dir holding llama-bench.cpp (and main.cpp where that version has one),
#      e.g. tools/llama-bench of a llama.cpp checkout at the commit the crate pins;
#   3. GitHub: the llama.cpp commit the crate's release pins (its .cargo_vcs_info.json names the
#      llama-cpp-rs commit; that commit's llama.cpp submodule names the llama.cpp commit);
#   4. PyPI, for machines that reach only the package registries: the source distribution of
#      llama-cpp-python $PYPI_VERSION (sha256-checked), which vendors a llama.cpp of nearly the
#      same API (its llama.h differs from the crate's 0.1.161 in 8 lines; llama-bench builds
#      against the crate's library unchanged). Only llama-bench's two files are taken from it.
#
# Idempotent: skips the build when the binary exists and the sources and options are the same.
# Never touches target/release/build/: that would make cargo rebuild llama.cpp for harvey.
# Usage: scripts/build-llama-bench.sh   (takes ~8 min on 2 cores the first time)
set -euo pipefail

die() {
    echo "error: $*" >&2
    exit 1
}

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

command -v cmake >/dev/null 2>&1 || die "cmake not found: run scripts/install-prereqs.sh"
command -v cargo >/dev/null 2>&1 || die "cargo not found: run scripts/install-prereqs.sh"
command -v python3 >/dev/null 2>&1 || die "python3 not found: run scripts/install-prereqs.sh"

# --- where harvey's llama.cpp comes from --------------------------------------------------
mapfile -t meta < <(
    cargo metadata --format-version 1 --locked | python3 -c '
import json, sys
meta = json.load(sys.stdin)
pkg = [p for p in meta["packages"] if p["name"] == "llama-cpp-sys-2"]
if pkg:
    print(pkg[0]["manifest_path"], pkg[0]["version"], meta["target_directory"], sep="\n")
'
)
((${#meta[@]} == 3)) || die "cargo metadata did not name the llama-cpp-sys-2 crate"
sys_manifest=${meta[0]} sys_version=${meta[1]} target_dir=${meta[2]}
sys_dir=$(dirname "$sys_manifest")
llama_src="$sys_dir/llama.cpp"
[[ -f "$llama_src/CMakeLists.txt" ]] || die "no llama.cpp sources in $sys_dir"

# --- the options harvey's build used ------------------------------------------------------
# The newest cache whose source directory is this crate's llama.cpp (older crate versions
# may leave caches of their own beside it).
cache=$( (ls -t "$target_dir"/release/build/llama-cpp-sys-2-*/out/build/CMakeCache.txt 2>/dev/null || true) |
    while IFS= read -r c; do
        if grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$llama_src" "$c"; then
            echo "$c"
        fi
    done | head -n 1)
[[ -n "$cache" ]] || die "harvey's llama.cpp build (llama-cpp-sys-2 $sys_version) was not found under
$target_dir/release/build/: run \`cargo build --release --locked\` first."

cmake_args=()
while IFS= read -r line; do
    cmake_args+=("-D$line")
done < <(grep -E '^(GGML_[A-Za-z0-9_]+|CMAKE_C_FLAGS|CMAKE_CXX_FLAGS|CMAKE_BUILD_TYPE|CMAKE_C_COMPILER|CMAKE_CXX_COMPILER):[A-Z]+=' "$cache" |
    grep -v ':INTERNAL=')
cmake_args+=(
    -DBUILD_SHARED_LIBS=OFF
    -DLLAMA_BUILD_COMMON=ON
    -DLLAMA_BUILD_TOOLS=OFF
    -DLLAMA_BUILD_TESTS=OFF
    -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_SERVER=OFF
    -DLLAMA_BUILD_APP=OFF
    -DLLAMA_CURL=OFF
)

# --- llama-bench's own sources ------------------------------------------------------------
out="$target_dir/llama-bench"
mkdir -p "$out"

fetch_bench_sources() {
    local dest=$1 vcs_sha repo llama_commit
    command -v curl >/dev/null 2>&1 || return 1
    vcs_sha=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["git"]["sha1"])' \
        "$sys_dir/.cargo_vcs_info.json") || return 1
    repo=$(sed -n 's|^repository = "https://github.com/\(.*\)"|\1|p' "$sys_dir/Cargo.toml")
    [[ -n "$repo" ]] || return 1
    llama_commit=$(curl -fsSL --connect-timeout 15 "https://api.github.com/repos/$repo/contents/llama-cpp-sys-2/llama.cpp?ref=$vcs_sha" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["sha"])' 2>/dev/null) || return 1
    echo "llama-bench sources: llama.cpp $llama_commit (pinned by $repo $vcs_sha)"
    mkdir -p "$dest"
    curl -fsSL --connect-timeout 15 -o "$dest/llama-bench.cpp" \
        "https://raw.githubusercontent.com/ggml-org/llama.cpp/$llama_commit/tools/llama-bench/llama-bench.cpp" ||
        return 1
    # Newer llama.cpp keeps main() apart from the benchmark; older versions have none.
    curl -fsSL --connect-timeout 15 -o "$dest/main.cpp" \
        "https://raw.githubusercontent.com/ggml-org/llama.cpp/$llama_commit/tools/llama-bench/main.cpp" ||
        rm -f "$dest/main.cpp"
    echo "$llama_commit" >"$dest/COMMIT"
}

# llama-cpp-python's source distribution on PyPI: its vendored llama.cpp holds llama-bench.
PYPI_PACKAGE=llama-cpp-python
PYPI_VERSION=0.3.36
PYPI_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

fetch_bench_sources_pypi() {
    local dest=$1 tmp sdist top
    python3 -m pip --version >/dev/null 2>&1 || return 1
    tmp=$(mktemp -d)
    echo "llama-bench sources: $PYPI_PACKAGE $PYPI_VERSION from PyPI (about 75 MB) …"
    # pip only downloads here (no install); it reads the package's metadata on the way.
    python3 -m pip download --quiet --no-deps --no-binary :all: -d "$tmp" \
        "$PYPI_PACKAGE==$PYPI_VERSION" >"$tmp/pip.log" 2>&1 || true
    sdist=$(ls "$tmp"/*.tar.gz 2>/dev/null | head -n 1)
    if [[ -z "$sdist" ]]; then
        echo "pip could not download $PYPI_PACKAGE $PYPI_VERSION:" >&2
        tail -n 5 "$tmp/pip.log" >&2
        rm -rf "$tmp"
        return 1
    fi
    if [[ "$(sha256sum "$sdist" | cut -d' ' -f1)" != "$PYPI_SHA256" ]]; then
        echo "error: $sdist does not have the sha256 this script pins ($PYPI_SHA256)" >&2
        rm -rf "$tmp"
        return 1
    fi
    top=$(tar -tzf "$sdist" | head -n 1 | cut -d/ -f1)
    tar -xzf "$sdist" -C "$tmp" --wildcards "$top/vendor/llama.cpp/tools/llama-bench/*.cpp" || {
        rm -rf "$tmp"
        return 1
    }
    mkdir -p "$dest"
    cp "$tmp/$top/vendor/llama.cpp/tools/llama-bench/"*.cpp "$dest/"
    echo "$PYPI_PACKAGE $PYPI_VERSION (PyPI sdist, vendor/llama.cpp)" >"$dest/COMMIT"
    rm -rf "$tmp"
}

if [[ -f "$llama_src/tools/llama-bench/llama-bench.cpp" ]]; then
    bench_src="$llama_src/tools/llama-bench"
elif [[ -n "${LLAMA_BENCH_SRC:-}" ]]; then
    bench_src=$(cd "$LLAMA_BENCH_SRC" && pwd)
    [[ -f "$bench_src/llama-bench.cpp" ]] || die "no llama-bench.cpp in LLAMA_BENCH_SRC=$LLAMA_BENCH_SRC"
else
    bench_src="$out/src"
    if [[ ! -f "$bench_src/llama-bench.cpp" ]]; then
        fetch_bench_sources "$bench_src" || fetch_bench_sources_pypi "$bench_src" ||
            die "llama-cpp-sys-2 $sys_version ships no llama-bench sources and they could not be
downloaded (neither from GitHub nor as $PYPI_PACKAGE $PYPI_VERSION from PyPI). Set LLAMA_BENCH_SRC
to the tools/llama-bench directory of a llama.cpp checkout at the commit the crate pins, and run
this again."
    fi
fi

# --- skip when nothing changed ------------------------------------------------------------
binary="$out/bin/llama-bench"
stamp="$out/stamp"
want=$(
    echo "llama-cpp-sys-2 $sys_version $llama_src"
    printf '%s\n' "${cmake_args[@]}"
    cat "$bench_src"/*.cpp | sha256sum
)
if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "llama-bench is up to date: $binary"
    exit 0
fi

# --- the wrapper project and the build ----------------------------------------------------
wrapper="$out/cmake"
mkdir -p "$wrapper"
cat >"$wrapper/CMakeLists.txt" <<EOF
# Written by scripts/build-llama-bench.sh; rewritten on each build.
cmake_minimum_required(VERSION 3.14)
project(harvey-llama-bench C CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "$out/bin")
add_subdirectory("$llama_src" llama.cpp)
find_package(Threads REQUIRED)
file(GLOB bench_sources "$bench_src/*.cpp")
add_executable(llama-bench \${bench_sources})
target_link_libraries(llama-bench PRIVATE llama-common llama \${CMAKE_THREAD_LIBS_INIT})
target_compile_features(llama-bench PRIVATE cxx_std_17)
EOF

echo "building llama-bench from $llama_src"
echo "  with the options of $cache"
# The ceiling keeps ggml's git queries from describing harvey's repository as llama.cpp's.
GIT_CEILING_DIRECTORIES="$out" cmake -S "$wrapper" -B "$out/build" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
    die "cmake could not configure llama-bench; see $out/configure.log"
cmake --build "$out/build" --target llama-bench -j "$(nproc)" >"$out/build.log" 2>&1 ||
    die "llama-bench did not build; see $out/build.log"
[[ -x "$binary" ]] || die "the build finished but $binary is missing; see $out/build.log"
echo "$want" >"$stamp"
echo "llama-bench: $binary"
