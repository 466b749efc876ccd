#!/usr/bin/env python3
"""Peer tool beside docfuse: markdown-memory (PyPI) run offline with the local MiniLM.

What it runs: markdown-memory's own indexer and hybrid searcher, in-process, the way its
MCP server does (`MarkdownMemoryService.index_directory` then `search_page`): the Markdown
under a corpus root is cut at every heading into sections and each section into passages
(paragraph, list item, table row, code block), every passage embedded as
"heading path: passage"; a section's vector is the mean of its passages'. A question is
answered by SQLite FTS5 BM25 over the sections (stop words dropped, terms OR-ed, an
IDF-coverage "keyword gate", an identifier-lookup path) and by sqlite-vec KNN over the
section and passage vectors (a section ranked by its closest vector), 20 candidates each,
fused by reciprocal rank fusion (k = 60). Nothing of the tool is changed except the
embedder.

Installed (nothing global; PyPI only):
  pip install --target /tmp/mdmem markdown-memory==0.7.13
  which pulled fastembed 0.9.1, onnxruntime 1.32.0, tokenizers 0.23.3, numpy 2.4.6,
  sqlite-vec 0.1.9, markdown-it-py 4.3.0. Run it with Debian's /usr/bin/python3 (3.11.2):
  the pyenv 3.11.7 build's sqlite3 has no enable_load_extension, and the tool loads
  sqlite-vec as an extension (DatabaseError "Cannot load the sqlite-vec extension").
Its two embedder presets (EmbeddingGemma-300m, and bge-small through fastembed) download
from the Hugging Face hub on first use, which this machine cannot reach. The adapter below,
`MiniLMEmbedder`, implements markdown-memory's `Embedder` protocol (model_name, dimension,
weights_revision, warm_up, embed_documents, embed_query) over the provisioned
models/all-MiniLM-L6-v2 (int8 model.onnx + tokenizer.json) with onnxruntime: 256 word
pieces, mean pooling over the attention mask, L2-normalised, no prompt for queries or
passages, 384 dimensions (the tool's default vector size, bge-small's), batches of 32
sorted by length, 2 intra-op threads, spinning off, one indexing worker. Its
weights_revision is "local-minilm/<sha256 of model.onnx, 12 hex>", so the tool's
provenance checks work as with its own presets. The adapter is handed to
`MarkdownMemoryService(config, embedder=...)`, the constructor argument the tool has for it.

How results are judged: search_page(question, limit=20). The tool's per-index candidate
depth stays at its default of 20 (it is max(20, limit)), so the ranking is the one its
default limit of 5 would give, only longer. Each result is a section (or one part of a
split section) with its file and line range; it is mapped to the docfuse section of the
same file containing the result's first line (`docfuse chunks --index DIR`: path,
heading_path, start_line, end_line), i.e. to (path relative to the corpus root, last
heading). The stderr line "mapping:" counts how often that heading is the tool's own: all
of them on the Rust book and Fastify, 1,172 of 1,200 on the Cargo book, where the rest
differ only by a `{#anchor}` suffix docfuse drops from the heading. Then they are judged
by bm25s_sections' code (ranked sections deduplicated, label matched on path and last
heading; nDCG@10 linear gains, MRR@10, recall@5), as peers.py does. For
a BEIR corpus (--beir DIR) each abstract is written to <tmp>/<doc id>.md as
"# title\\n\\ntext", a result's document id is its file stem, and the qrels judge.

p50 is the median wall time of search_page per question after a 5-question warm-up (the
question's embedding included). Index time is the wall time of index_directory on a fresh
database (model load, parse, embed, write).

Usage:
  PYTHONPATH=/tmp/mdmem /usr/bin/python3 scripts/baselines/peer_markdown_memory.py \\
      --corpus ../shared/bench/corpora/rust-book --index /tmp/x-rust-book \\
      --queries ../shared/bench/corpora/rust-book/queries.dev.jsonl [--db /tmp/mm-rb.db]
  PYTHONPATH=/tmp/mdmem /usr/bin/python3 scripts/baselines/peer_markdown_memory.py \\
      --beir ../shared/bench/beir/scifact
  (env DOCFUSE_MODEL_DIR / DOCFUSE_ORT_DYLIB as for docfuse, for `docfuse chunks`)
"""

import argparse
import bisect
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bm25s_sections as bs  # noqa: E402
import peers  # noqa: E402  (the same judging as the plain baselines)

import numpy as np  # noqa: E402

MAX_TOKENS = 256
BATCH = 32
LIMIT = 20


class MiniLMEmbedder:
    """markdown-memory `Embedder` over the local int8 all-MiniLM-L6-v2 (thread-safe)."""

    def __init__(self, model_dir, threads=2):
        self._dir = Path(model_dir)
        self._threads = threads
        self._lock = threading.Lock()
        self._session = None
        self._tok = None
        h = hashlib.sha256((self._dir / "model.onnx").read_bytes()).hexdigest()
        self._revision = f"local-minilm/{h[:12]}"

    @property
    def model_name(self):
        return "sentence-transformers/all-MiniLM-L6-v2 (local int8 ONNX)"

    @property
    def dimension(self):
        return 384

    @property
    def weights_revision(self):
        return self._revision

    def warm_up(self):
        self._load()

    def _load(self):
        with self._lock:
            if self._session is None:
                import onnxruntime as ort
                from tokenizers import Tokenizer

                tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
                tok.no_padding()  # tokenizer.json pads to a fixed 128
                tok.enable_truncation(max_length=MAX_TOKENS)
                tok.enable_padding()  # to the longest of the batch
                so = ort.SessionOptions()
                so.intra_op_num_threads = self._threads
                so.inter_op_num_threads = 1
                so.add_session_config_entry("session.intra_op.allow_spinning", "0")
                self._session = ort.InferenceSession(
                    str(self._dir / "model.onnx"), so, providers=["CPUExecutionProvider"])
                self._tok = tok
            return self._session, self._tok

    def _embed(self, texts):
        if not texts:
            return []
        session, tok = self._load()
        out = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(order), BATCH):
            idx = order[s:s + BATCH]
            enc = tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            h = session.run(None, {"input_ids": ids, "attention_mask": mask,
                                   "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[:, :, None].astype(np.float32)
            v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
            for i, row in zip(idx, v.tolist()):
                out[i] = [float(x) for x in row]
        return out

    def embed_documents(self, texts):
        return self._embed(list(texts))

    def embed_query(self, text):
        return self._embed([text])[0]


def docfuse_sections(docfuse, index):
    out = subprocess.run([docfuse, "chunks", "--index", index], check=True,
                         capture_output=True, text=True).stdout
    by_path = {}
    for line in out.splitlines():
        if line.strip():
            c = json.loads(line)
            by_path.setdefault(c["path"], []).append(c)
    for cs in by_path.values():
        cs.sort(key=lambda c: c["start_line"])
    return by_path


def map_result(r, root, by_path, stats):
    """(path, heading_path) of the docfuse section holding the result's first line."""
    rel = os.path.relpath(r.file_path, root)
    cs = by_path.get(rel)
    if not cs:
        stats["no_file"] += 1
        return {"path": rel, "heading_path": [r.heading_title]}
    starts = [c["start_line"] for c in cs]
    i = bisect.bisect_right(starts, r.start_line) - 1
    if i >= 0 and cs[i]["end_line"] >= r.start_line:
        c = cs[i]
    else:  # the line sits in a gap between docfuse chunks: take the next one in range
        j = i + 1
        c = cs[j] if j < len(cs) and cs[j]["start_line"] <= r.end_line else cs[max(i, 0)]
        stats["gap"] += 1
    last = bs.norm_heading(c["heading_path"][-1]) if c["heading_path"] else ""
    if last == bs.norm_heading(r.heading_title):
        stats["same_heading"] += 1
    stats["mapped"] += 1
    return {"path": rel, "heading_path": c["heading_path"]}


def write_beir(beir, dest):
    n = 0
    with open(os.path.join(beir, "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            if line.strip():
                d = json.loads(line)
                title = " ".join(d.get("title", "").split()) or d["_id"]
                with open(os.path.join(dest, d["_id"] + ".md"), "w", encoding="utf-8") as o:
                    o.write(f"# {title}\n\n{d['text']}\n")
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", help="Markdown root (paths relative to it, as the labels)")
    ap.add_argument("--index", help="docfuse index of the same corpus (for section mapping)")
    ap.add_argument("--queries")
    ap.add_argument("--beir", help="BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
    ap.add_argument("--db", help="markdown-memory database (default: a fresh temp file)")
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--model-dir", default=os.environ.get("DOCFUSE_MODEL_DIR")
                    or "models/all-MiniLM-L6-v2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="write per-question rankings here")
    a = ap.parse_args()

    import markdown_memory
    from markdown_memory.config import ServerConfig
    from markdown_memory.server import MarkdownMemoryService

    tmp = tempfile.mkdtemp(prefix="peer-mm-")
    qrels = None
    if a.beir:
        root = os.path.join(tmp, "docs")
        os.mkdir(root)
        ndocs = write_beir(a.beir, root)
        qrels = {}
        for line in open(os.path.join(a.beir, "qrels", "test.tsv")).read().splitlines()[1:]:
            qid, doc, g = line.split("\t")
            qrels.setdefault(qid, {})[doc] = int(g)
        questions = [{"id": q["_id"], "query": q["text"]}
                     for q in bs.read_jsonl(os.path.join(a.beir, "queries.jsonl"))
                     if q["_id"] in qrels]
        by_path = None
        what = f"{ndocs} abstracts"
    else:
        root = a.corpus
        questions = bs.read_jsonl(a.queries)
        by_path = docfuse_sections(a.docfuse, a.index)
        what = f"{sum(map(len, by_path.values()))} docfuse sections for mapping"
    root = str(Path(root).resolve())
    db = Path(a.db) if a.db else Path(tmp) / "index.db"
    fresh = not db.exists()
    cfg = ServerConfig(db_path=db, docs_dir=Path(root), embedder="minilm-local",
                       index_workers=1, auto_index=False, gitignore=False)
    svc = MarkdownMemoryService(cfg, embedder=MiniLMEmbedder(a.model_dir, a.threads))
    t = time.perf_counter()
    report = svc.index_directory(root)
    index_s = time.perf_counter() - t
    print(f"markdown-memory {markdown_memory.__version__}"
          f" on {root}: {what}; index_directory {'(fresh)' if fresh else '(reused db)'} "
          f"{index_s:.1f} s: {report.summary()}", file=sys.stderr)

    for q in questions[:5]:  # warm-up
        svc.search_page(q["query"], LIMIT)
    stats = {"mapped": 0, "gap": 0, "no_file": 0, "same_heading": 0}
    nd, mrr, r5, lat, dump = [], [], [], [], []
    for q in questions:
        t = time.perf_counter()
        page = svc.search_page(q["query"], LIMIT)
        lat.append((time.perf_counter() - t) * 1000)
        if qrels is not None:
            ranked = [{"path": Path(r.file_path).stem, "heading_path": []} for r in page.results]
            judg = [(d, None, g) for d, g in qrels.get(q["id"], {}).items() if g > 0]
            g = peers.gains(ranked, judg, True)
        else:
            ranked = [map_result(r, root, by_path, stats) for r in page.results]
            judg = [(r["path"], bs.norm_heading(r["heading"]), int(r.get("grade", 1)))
                    for r in q["relevant"] if int(r.get("grade", 1)) > 0]
            g = bs.gains(ranked, judg)
        nd.append(peers.ndcg10(g, judg))
        mrr.append(bs.mrr_at(g, 10))
        r5.append(bs.recall_at(g, len(judg), 5))
        dump.append({"id": q["id"], "keyword_match": page.keyword_match,
                     "ranked": [[c["path"], c["heading_path"][-1] if c["heading_path"] else ""]
                                for c in ranked], "gains": g})
    svc.close()
    if qrels is None:
        print(f"mapping: {stats['mapped']} results, {stats['same_heading']} with the same last "
              f"heading in both tools, {stats['gap']} first lines outside any docfuse chunk, "
              f"{stats['no_file']} in files docfuse did not index", file=sys.stderr)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(dump, f, indent=1)
    m = statistics.mean
    print("| method | nDCG@10 | MRR@10 | recall@5 | p50 ms | index s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| markdown-memory 0.7.13 + MiniLM | {m(nd):.4f} | {m(mrr):.4f} | {m(r5):.3f} | "
          f"{statistics.median(lat):.1f} | {index_s:.1f} |")
    print(f"{len(questions)} questions", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)  # the Markdown written for --beir, a temp db


if __name__ == "__main__":
    main()
