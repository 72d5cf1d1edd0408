#!/usr/bin/env python3
"""Reference embeddings for server/embed's tests, computed independently of the Rust code.

A from-scratch all-MiniLM-L6-v2 (sentence-transformers) in numpy: its own BERT WordPiece
tokenizer (lower-casing, accent stripping, punctuation splitting, greedy longest-match word
pieces) over the vocabulary in tokenizer.json, its own safetensors reader, a float64 BERT
forward pass (erf GELU, LayerNorm eps from config.json), mean pooling and L2 normalisation.
It shares nothing with the Rust crate but the model files, so agreement checks candle's
BERT, the tokenizers crate's configuration and the pooling together.

Usage: python3 bench/embed_reference.py [MODEL_DIR]
(default target/ci/models/all-MiniLM-L6-v2, put there by .ci/setup; needs numpy).
Prints, for each text of server/embed/tests/it/embed.rs, its first 4 components, and the
cosines of the retrieval check.
"""

import json
import math
import struct
import sys
import unicodedata

import numpy as np

MODEL = sys.argv[1] if len(sys.argv) > 1 else "target/ci/models/all-MiniLM-L6-v2"

# Texts and truncation lengths (max_tokens, counting [CLS] and [SEP]) used by the tests.
TEXTS = [
    ("query", "escape a string for use in a POSIX shell", 256),
    ("shell_doc", "Return a shell-escaped version of the string s", 256),
    ("median_doc", "Compute the median of grouped continuous data", 256),
    ("code", "def quote(s):\n    return \"'\" + s.replace(\"'\", \"'\\\"'\\\"'\") + \"'\"", 256),
    ("accents", "Naïve café résumé, Ünïcödé", 256),
    ("empty", "", 256),
    ("long_256", "the quick brown fox jumps over the lazy dog " * 40, 256),
    ("long_16", "the quick brown fox jumps over the lazy dog " * 40, 16),
]


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    dtypes = {"F32": np.float32, "I64": np.int64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        buf = data[8 + n + a : 8 + n + b]
        out[name] = np.frombuffer(buf, dtype=dtypes[t["dtype"]]).reshape(t["shape"]).astype(np.float64)
    return out


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def basic_tokens(text):
    # clean_text: drop NUL, U+FFFD and control characters; every whitespace becomes a space.
    text = "".join(
        " " if ch.isspace() else ch for ch in text if not (ord(ch) in (0, 0xFFFD) or is_control(ch))
    )
    # lowercase, then strip accents (strip_accents null + lowercase true means strip).
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
    words = []
    for word in text.split():
        cur = ""
        for ch in word:
            if is_punctuation(ch):
                if cur:
                    words.append(cur)
                    cur = ""
                words.append(ch)
            else:
                cur += ch
        if cur:
            words.append(cur)
    return words


def wordpiece(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        found = None
        while start < end:
            sub = word[start:end] if start == 0 else "##" + word[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces


def tokenize(text, vocab, max_tokens):
    pieces = [p for w in basic_tokens(text) for p in wordpiece(w, vocab)]
    pieces = ["[CLS]"] + pieces[: max_tokens - 2] + ["[SEP]"]
    return [vocab[p] for p in pieces]


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


erf = np.vectorize(math.erf)


def embed(ids, W, cfg):
    eps = cfg["layer_norm_eps"]
    heads = cfg["num_attention_heads"]
    L = len(ids)
    x = W["embeddings.word_embeddings.weight"][ids]
    x = x + W["embeddings.position_embeddings.weight"][:L]
    x = x + W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    d = x.shape[1]
    hd = d // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(name, h):
            return h @ W[p + name + ".weight"].T + W[p + name + ".bias"]

        q = lin("attention.self.query", x).reshape(L, heads, hd).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(L, heads, hd).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(L, heads, hd).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(L, d)
        a = layer_norm(
            lin("attention.output.dense", ctx) + x,
            W[p + "attention.output.LayerNorm.weight"],
            W[p + "attention.output.LayerNorm.bias"],
            eps,
        )
        h = lin("intermediate.dense", a)
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = layer_norm(lin("output.dense", h) + a, W[p + "output.LayerNorm.weight"], W[p + "output.LayerNorm.bias"], eps)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    with open(f"{MODEL}/config.json") as f:
        cfg = json.load(f)
    with open(f"{MODEL}/tokenizer.json") as f:
        vocab = json.load(f)["model"]["vocab"]
    W = load_safetensors(f"{MODEL}/model.safetensors")
    vecs = {}
    for name, text, max_tokens in TEXTS:
        ids = tokenize(text, vocab, max_tokens)
        v = embed(ids, W, cfg)
        vecs[name] = v
        print(f"{name:11} tokens {len(ids):3}  first 4: [{', '.join(f'{x:.6f}' for x in v[:4])}]")
    for other in ("shell_doc", "median_doc"):
        print(f"cos(query, {other}) = {float(vecs['query'] @ vecs[other]):.6f}")


if __name__ == "__main__":
    main()
