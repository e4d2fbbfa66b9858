#!/usr/bin/env python3
"""Prints the metadata and tensors of an embedder GGUF (as made by convert_embedder.py) and
checks them against what llama.cpp's `bert` loader reads (src/llama-model.cpp load_hparams,
src/models/bert.cpp load_arch_tensors, src/llama-vocab.cpp for tokenizer.ggml.*), so that a
mismatch shows here rather than as a load failure or silently wrong vectors in harvey.

    check_embedder_gguf.py [--quiet] MODEL.gguf

Needs the gguf package (scripts/fetch-embedder.sh pins it). Exits 1 on any mismatch.
Shapes are printed in GGUF order (ne0, ne1, …), the order llama.cpp's create_tensor uses.
"""

import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, PoolingType, TokenType


def value(field):
    """A metadata field as a Python value (arrays as lists)."""
    kind = field.types[0]
    if kind == GGUFValueType.ARRAY:
        sub = field.types[-1]
        parts = [field.parts[i] for i in field.data]
        if sub == GGUFValueType.STRING:
            return [bytes(p).decode("utf-8") for p in parts]
        return [p.tolist()[0] for p in parts]
    part = field.parts[field.data[0]]
    if kind == GGUFValueType.STRING:
        return bytes(part).decode("utf-8")
    v = part.tolist()[0]
    return bool(v) if kind == GGUFValueType.BOOL else v


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--quiet"]
    quiet = "--quiet" in sys.argv[1:]
    if len(args) != 1:
        raise SystemExit(__doc__)
    reader = GGUFReader(args[0])
    meta = {name: value(f) for name, f in reader.fields.items() if not name.startswith("GGUF.")}
    errors: list[str] = []

    def need(cond: bool, msg: str) -> None:
        if not cond:
            errors.append(msg)

    print("metadata:")
    for name, v in meta.items():
        if isinstance(v, list):
            head = ", ".join(repr(x) for x in v[:6])
            print(f"  {name} = [{head}, …] ({len(v)} items)")
        else:
            print(f"  {name} = {v!r}")

    arch = meta.get("general.architecture")
    need(arch == "bert", f"general.architecture is {arch!r}, expected 'bert'")
    a = "bert."
    required = ["context_length", "embedding_length", "feed_forward_length", "block_count",
                "attention.head_count", "attention.layer_norm_epsilon"]
    for k in required:
        need(a + k in meta, f"missing {a + k} (llama.cpp requires it)")
    need(meta.get(a + "attention.causal") is False, "bert.attention.causal must be false")
    need(meta.get(a + "pooling_type") == int(PoolingType.MEAN), "bert.pooling_type must be MEAN (1)")
    need(meta.get("tokenizer.ggml.model") == "bert", "tokenizer.ggml.model must be 'bert' (WPM)")
    # llama.cpp's WPM tokenizer always adds [CLS] … [SEP]; these only have to agree with it.
    for k, v in [("add_bos_token", True), ("add_eos_token", False), ("add_sep_token", True)]:
        got = meta.get("tokenizer.ggml." + k, v)
        need(got is v, f"tokenizer.ggml.{k} = {got!r}, llama.cpp's bert default is {v}")
    need(meta.get("tokenizer.ggml.normalizer.lowercase", True) is True,
         "tokenizer.ggml.normalizer.lowercase is false, but the model is uncased")
    need(meta.get("tokenizer.ggml.token_type_count", 0) > 0,
         "tokenizer.ggml.token_type_count missing: the bert loader refuses the model without it")

    tokens = meta.get("tokenizer.ggml.tokens", [])
    types = meta.get("tokenizer.ggml.token_type", [])
    need(len(tokens) == len(types), "token list and token types differ in length")
    for key, text in [("bos", "[CLS]"), ("seperator", "[SEP]"), ("unknown", "[UNK]"),
                      ("padding", "[PAD]"), ("mask", "[MASK]"), ("cls", "[CLS]")]:
        tid = meta.get(f"tokenizer.ggml.{key}_token_id")
        if tid is None:
            # llama.cpp has defaults for the others (101/102/100/0/103) and never reads cls.
            if key != "cls":
                errors.append(f"missing tokenizer.ggml.{key}_token_id")
            continue
        ok = 0 <= tid < len(tokens) and tokens[tid] == text and types[tid] == int(TokenType.CONTROL)
        need(ok, f"tokenizer.ggml.{key}_token_id = {tid} is not the control token {text}")
    if not quiet:
        print("special tokens:", {t: i for i, t in enumerate(tokens) if types[i] != int(TokenType.NORMAL)})
        print("some tokens:", [tokens[i] for i in (1996, 2129, 16635, 2063, 1029)])

    n_embd = meta.get(a + "embedding_length")
    n_ff = meta.get(a + "feed_forward_length")
    n_layer = meta.get(a + "block_count", 0)
    n_ctx = meta.get(a + "context_length")
    n_types = meta.get("tokenizer.ggml.token_type_count")
    n_vocab = len(tokens)
    want = {
        "token_embd.weight": (n_embd, n_vocab),
        "token_types.weight": (n_embd, n_types),
        "position_embd.weight": (n_embd, n_ctx),
        "token_embd_norm.weight": (n_embd,),
        "token_embd_norm.bias": (n_embd,),
    }
    for i in range(n_layer):
        b = f"blk.{i}."
        for t in ("attn_q", "attn_k", "attn_v", "attn_output"):
            want[b + t + ".weight"] = (n_embd, n_embd)
            want[b + t + ".bias"] = (n_embd,)
        for t in ("attn_output_norm", "layer_output_norm"):
            want[b + t + ".weight"] = (n_embd,)
            want[b + t + ".bias"] = (n_embd,)
        want[b + "ffn_up.weight"] = (n_embd, n_ff)
        want[b + "ffn_up.bias"] = (n_ff,)
        want[b + "ffn_down.weight"] = (n_ff, n_embd)
        want[b + "ffn_down.bias"] = (n_embd,)

    print(f"tensors ({len(reader.tensors)}):")
    seen = set()
    total = 0
    for t in reader.tensors:
        shape = tuple(int(x) for x in t.shape)
        kind = GGMLQuantizationType(t.tensor_type).name
        total += int(t.n_bytes)
        seen.add(t.name)
        if not quiet or not t.name.startswith("blk.") or t.name.startswith("blk.0."):
            print(f"  {t.name:<32} {kind:<4} {shape}")
        if t.name not in want:
            errors.append(f"unexpected tensor {t.name} (llama.cpp would refuse: wrong tensor count)")
            continue
        need(shape == want[t.name], f"{t.name}: shape {shape}, loader wants {want[t.name]}")
        # 1-D tensors and the embeddings that are added to f32 activations stay f32.
        f32 = len(shape) == 1 or t.name.startswith(("token_types", "position_embd"))
        need(kind == ("F32" if f32 else "F16"), f"{t.name}: stored as {kind}")
        data = np.asarray(t.data)
        need(bool(np.isfinite(data.astype(np.float32)).all()), f"{t.name}: not all finite")
    if quiet:
        print(f"  … ({n_layer} blocks of 16 tensors, only blk.0 shown)")
    for name in sorted(set(want) - seen):
        errors.append(f"missing tensor {name}")
    print(f"tensor data: {total / 1e6:.1f} MB")

    if errors:
        print("MISMATCHES:")
        for e in errors:
            print("  " + e)
        return 1
    print("ok: metadata and tensors match what llama.cpp's bert loader reads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
