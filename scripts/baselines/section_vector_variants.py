#!/usr/bin/env python3
"""Would a second vector per section, or a page-level prior, help the vector side?
A simulation over an index's own chunk vectors (`DIR/gen-*/vectors.f32`, rows in the order
`docfuse chunks` lists the chunks), vector mode only, section level (a section's score is
its best chunk's cosine, as docfuse groups results):

  base        the section's best chunk cosine
  mix L       base + L x cosine with an embedding of the section's title and heading path
  max         max(base, heading cosine)
  page max F  base + F x the best section score of its page (page mean F: their mean)

Prints MRR@10 and the share of questions with no relevant section in the top 10. A label
matches a section by path and last heading (as `docfuse eval` does). The questions and the
headings are embedded with Python onnxruntime and docfuse's model (truncation 256, mean
pooling, L2-normalised), as docfuse embeds them.

  docfuse chunks --index DIR > chunks.jsonl
  PYTHONPATH=DIR python3 section_vector_variants.py chunks.jsonl DIR QUERIES.jsonl MODEL_DIR

Needs onnxruntime==1.31.1, tokenizers and numpy (pip install --target DIR ...).
"""
import glob
import json
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def embedder(model):
    tok = Tokenizer.from_file(model + "/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(model + "/model.onnx", so, providers=["CPUExecutionProvider"])

    def emb(text):
        ids = np.array([tok.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)}
        v = s.run(None, feed)[0][0].mean(0)
        return v / np.linalg.norm(v)

    return emb


def heading_text(c):
    """Title (unless only the file stem) and heading path, as the embedding template."""
    stem = c["path"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
    title = c["title"] if c["title"] != stem else ""
    path = " › ".join(c["heading_path"])
    text = title if path == title else (title + "\n" + path).strip()
    return text or c["path"]


def main():
    chunks = [json.loads(l) for l in open(sys.argv[1])]
    gen = sorted(glob.glob(sys.argv[2] + "/gen-*/vectors.f32"))[-1]
    V = np.fromfile(gen, dtype=np.float32).reshape(len(chunks), -1)
    questions = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
    emb = embedder(sys.argv[4])
    secs = {}
    for i, c in enumerate(chunks):
        secs.setdefault((c["path"], tuple(c["heading_path"])), []).append(i)
    keys = list(secs)
    H = np.stack([emb(heading_text(chunks[secs[k][0]])) for k in keys])
    Q = np.stack([emb(q["query"]) for q in questions])
    CS = Q @ V.T
    base = np.stack([CS[:, secs[k]].max(1) for k in keys]).T
    HS = Q @ H.T
    pages = {}
    for j, k in enumerate(keys):
        pages.setdefault(k[0], []).append(j)
    page_of = np.array([list(pages).index(k[0]) for k in keys])

    def relevant(q, k):
        return any(k[0] == r["path"] and k[1] and k[1][-1] == r["heading"] for r in q["relevant"])

    def report(label, scores):
        rr, none = 0.0, 0
        for qi, q in enumerate(questions):
            top = np.argsort(-scores[qi], kind="stable")[:10]
            first = next((r for r, j in enumerate(top) if relevant(q, keys[j])), None)
            rr += 0 if first is None else 1 / (first + 1)
            none += first is None
        print(f"{label:14} MRR@10 {rr / len(questions):.4f}  none@10 {none / len(questions):.3f}")

    report("base", base)
    for lam in (0.1, 0.2, 0.3, 0.5, 1.0):
        report(f"mix {lam}", base + lam * HS)
    report("max", np.maximum(base, HS))
    for name, agg in (("max", np.max), ("mean", np.mean)):
        P = np.stack([agg(base[:, pages[p]], axis=1) for p in pages]).T
        for f in (0.1, 0.2, 0.3, 0.5):
            report(f"page {name} {f}", base + f * P[:, page_of])


if __name__ == "__main__":
    main()
