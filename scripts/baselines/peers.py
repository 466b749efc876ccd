#!/usr/bin/env python3
"""Plain baselines beside docfuse on one collection, in one run: BM25 (PyPI `bm25s`),
MiniLM dense retrieval and their reciprocal rank fusion, scored exactly as `docfuse
eval` scores (nDCG@10 with linear gains, MRR@10, recall@5; ranked chunks deduplicated to
their section; `bm25s_sections.py` holds the judging code).

  bm25s        bm25s 0.3 defaults (Lucene BM25, k1 1.5, b 0.75, English stop words) over
               each chunk's `file stem + heading path + text`
  MiniLM       cosine of the question's all-MiniLM-L6-v2 vector (Python onnxruntime,
               the provisioned int8 model, mean pooling, 256 word pieces) with each
               chunk's vector as the docfuse index stores it (MiniLM of title, heading
               path and text): dense retrieval over the same chunks, without BM25F,
               fusion or priors
  RRF          reciprocal rank fusion of the two lists, k = 60 (Cormack et al., 2009)

Each ranks 100 chunks. p50 is the median per-question time of one pass after a warm-up
(the query's embedding included for MiniLM and RRF). For a BEIR corpus (--qrels), a
chunk's path is its document id and the qrels judge documents.

Usage:
  PYTHONPATH=DIR python3 scripts/baselines/peers.py --index DIR --queries Q.jsonl \
      [--qrels test.tsv] [--docfuse target/release/docfuse] [--model-dir models/all-MiniLM-L6-v2]
Needs numpy, onnxruntime 1.31.1, tokenizers and bm25s (pip).
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bm25s_sections as bs  # noqa: E402

import numpy as np  # noqa: E402


def embedder(model_dir):
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(os.path.join(model_dir, "model.onnx"), so,
                             providers=["CPUExecutionProvider"])

    def embed(text):
        ids = tok.encode(text).ids
        if len(ids) > 256:
            ids = ids[:255] + [ids[-1]]
        x = np.array([ids], dtype=np.int64)
        out = s.run(None, {"input_ids": x, "attention_mask": np.ones_like(x),
                           "token_type_ids": np.zeros_like(x)})[0][0].mean(0)
        return out / np.linalg.norm(out)

    return embed


def judgments(q, qrels):
    if qrels is not None:
        return [(doc, None, g) for doc, g in qrels.get(q["id"], {}).items() if g > 0]
    return [(r["path"], bs.norm_heading(r["heading"]), int(r.get("grade", 1)))
            for r in q["relevant"] if int(r.get("grade", 1)) > 0]


def gains(ranked, judg, beir):
    if not beir:
        return bs.gains(ranked, judg)
    seen, out = set(), []
    grade = {d: g for d, _, g in judg}
    for c in ranked:
        if c["path"] in seen:
            continue
        seen.add(c["path"])
        out.append(grade.get(c["path"], 0))
    return out


def ndcg10(g, judg):
    dcg = lambda xs: sum(x / np.log2(i + 2) for i, x in enumerate(xs[:10]))
    ideal = dcg(sorted((j[2] for j in judg), reverse=True))
    return dcg(g) / ideal if ideal else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--qrels")
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--model-dir", default="models/all-MiniLM-L6-v2")
    a = ap.parse_args()
    bm25s = bs.ensure("bm25s", "bm25s")
    out = subprocess.run([a.docfuse, "chunks", "--index", a.index], check=True,
                         capture_output=True, text=True).stdout
    chunks = [json.loads(l) for l in out.splitlines() if l.strip()]
    gen = sorted(glob.glob(os.path.join(a.index, "gen-*", "vectors.f32")))[-1]
    V = np.fromfile(gen, dtype=np.float32).reshape(len(chunks), -1)
    qrels = None
    questions = bs.read_jsonl(a.queries)
    if a.qrels:
        qrels = {}
        for line in open(a.qrels).read().splitlines()[1:]:
            qid, doc, g = line.split("\t")
            qrels.setdefault(qid, {})[doc] = int(g)
        questions = [{"id": q["_id"], "query": q["text"]} for q in questions
                     if q["_id"] in qrels]
    texts = [bs.doc_text(c["path"], c["heading_path"], c["text"]) for c in chunks]
    t0 = time.perf_counter()
    tok = bm25s.tokenization.Tokenizer(stopwords="en")
    ids = tok.tokenize(texts, update_vocab=True, show_progress=False, return_as="ids")
    bm = bm25s.BM25()
    bm.index((ids, tok.get_vocab_dict()), show_progress=False)
    build_ms = (time.perf_counter() - t0) * 1000
    embed = embedder(a.model_dir)
    k = min(100, len(chunks))

    def lexical(q):
        qids = tok.tokenize([q], update_vocab=False, show_progress=False, return_as="ids")
        if not qids[0]:
            return []
        idx, sc = bm.retrieve(qids, k=k, show_progress=False, n_threads=0)
        return [int(i) for i, s in zip(idx[0], sc[0]) if s > 0]

    def dense(q):
        cos = V @ embed(q)
        return [int(i) for i in np.argsort(-cos, kind="stable")[:k]]

    def rrf(q):
        score = {}
        for lst in (lexical(q), dense(q)):
            for r, i in enumerate(lst):
                score[i] = score.get(i, 0.0) + 1.0 / (60 + r + 1)
        return sorted(score, key=lambda i: (-score[i], i))[:k]

    for q in questions[:5]:  # warm-up
        rrf(q["query"])
    print(f"{len(questions)} questions, {len(chunks)} chunks ({a.index}); bm25s index "
          f"built in {build_ms:.0f} ms", file=sys.stderr)
    print("| method | nDCG@10 | MRR@10 | recall@5 | p50 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, fn in (("bm25s", lexical), ("MiniLM", dense), ("RRF(bm25s, MiniLM)", rrf)):
        nd, mrr, r5, lat = [], [], [], []
        for q in questions:
            t = time.perf_counter()
            ranked = [chunks[i] for i in fn(q["query"])]
            lat.append((time.perf_counter() - t) * 1000)
            judg = judgments(q, qrels)
            g = gains(ranked, judg, qrels is not None)
            nd.append(ndcg10(g, judg))
            mrr.append(bs.mrr_at(g, 10))
            r5.append(bs.recall_at(g, len(judg), 5))
        m = statistics.mean
        print(f"| {name} | {m(nd):.4f} | {m(mrr):.4f} | {m(r5):.3f} | {statistics.median(lat):.1f} |")


if __name__ == "__main__":
    main()
