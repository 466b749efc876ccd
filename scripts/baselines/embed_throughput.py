#!/usr/bin/env python3
"""Embedding throughput of Python onnxruntime on the same model file, tokenizer, texts and
batches (one text per call, truncation 256, mean pooling over the attention mask, L2
normalisation) as docfuse, for scripts/bench-embed.

  python3 embed_throughput.py TEXTS.jsonl MODEL_DIR  ->  {"texts", "tokens", "seconds", "chunks_per_s", "tokens_per_s"}

Needs onnxruntime==1.31.1, tokenizers and numpy on the path (scripts/bench-embed installs
them into a temporary folder).
"""
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    texts = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    model_dir = sys.argv[2]
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(256)
    tok.no_padding()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count() or 1
    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), opts, providers=["CPUExecutionProvider"])

    def embed(text):
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out = sess.run(None, feeds)[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.maximum(m.sum(1), 1.0)
        return v / np.linalg.norm(v, axis=1, keepdims=True), len(enc.ids)

    embed(texts[0])  # warm-up
    t = time.perf_counter()
    tokens = sum(embed(x)[1] for x in texts)
    s = time.perf_counter() - t
    print(json.dumps({"texts": len(texts), "tokens": tokens, "seconds": s,
                      "chunks_per_s": len(texts) / s, "tokens_per_s": tokens / s}))


if __name__ == "__main__":
    main()
