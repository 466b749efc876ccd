#!/usr/bin/env python3
"""Plain BM25 baseline (PyPI `bm25s`) over the very sections docfuse produced.

Reads the chunks of a docfuse index (`docfuse chunks --index DIR` JSON Lines), indexes
`file stem + heading path + text` of each chunk with bm25s, and scores the docfuse
question set (e.g. the Rust book's queries.dev.jsonl) exactly as `docfuse eval` does:
ranked chunks are deduplicated to their section (path + heading path; several chunks of
one section count once), a section is relevant when it comes from the judged path and its
heading path ends with the judged heading (backticks removed, white space collapsed),
each judgment is found at most once, and MRR@10 / recall@5 are means over the questions.

Variants (all reported; the first is the default setting):
  stopwords=en  stemmer=none   (bm25s' English stop words, no stemming)
  stopwords=none stemmer=none
  stopwords=en  stemmer=snowball-english (PyStemmer)
  stopwords=none stemmer=snowball-english
Each variant also runs on "merged sections": the chunks of one section concatenated
into one document before indexing (instead of deduplicating at scoring time); skip
those rows with --no-merge-sections.

Latency: each question is tokenized and retrieved on its own (k = 100 chunks, as deep as
`docfuse eval`), after one warm-up pass; median and p95 (nearest rank, as docfuse) of
the per-question wall times in ms of one pass, the median of --passes passes.
Build time: tokenize + index, median of --repeat builds.

Usage:
  python3 scripts/baselines/bm25s_sections.py --chunks chunks.jsonl \
      --queries ../shared/bench/corpora/rust-book/queries.dev.jsonl [--json out.json]
  (or --index DIR [--docfuse target/release/docfuse] to read the chunks itself)
Installs `bm25s` (and `PyStemmer` for the stemmed rows) with pip when missing.
"""

import argparse
import importlib
import json
import math
import os
import statistics
import subprocess
import sys
import time

DEPTH = 100  # chunks retrieved per question, as docfuse eval's EVAL_DEPTH


def ensure(module, package):
    try:
        return importlib.import_module(module)
    except ImportError:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", package],
            check=True,
        )
        importlib.invalidate_caches()
        return importlib.import_module(module)


def norm_heading(s):
    return " ".join(s.replace("`", "").split())


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_chunks(args):
    if args.chunks:
        return read_jsonl(args.chunks)
    out = subprocess.run(
        [args.docfuse, "chunks", "--index", args.index],
        check=True, capture_output=True, text=True,
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def stem_of(path):
    base = os.path.basename(path)
    return os.path.splitext(base)[0]


def unit_key(chunk):
    return chunk["path"] + "#" + "\x1f".join(chunk["heading_path"])


def doc_text(path, heading_path, text):
    return " ".join([stem_of(path), " ".join(heading_path), text])


def merge_sections(chunks):
    """One document per section: the chunks of a unit, in order, text concatenated."""
    order, by_key = [], {}
    for c in chunks:
        k = unit_key(c)
        if k not in by_key:
            by_key[k] = dict(c)
            order.append(k)
        else:
            by_key[k]["text"] += "\n\n" + c["text"]
    return [by_key[k] for k in order]


def gains(ranked, judgments):
    """docfuse's eval::judge::gains: dedupe units, each judgment found at most once."""
    seen, found, out = set(), [False] * len(judgments), []
    for c in ranked:
        k = unit_key(c)
        if k in seen:
            continue
        seen.add(k)
        last = norm_heading(c["heading_path"][-1]) if c["heading_path"] else None
        g = 0
        for j, (path, heading, grade) in enumerate(judgments):
            if not found[j] and c["path"] == path and last == heading:
                found[j] = True
                g = grade
                break
        out.append(g)
    return out


def mrr_at(g, k):
    for i, x in enumerate(g[:k]):
        if x > 0:
            return 1.0 / (i + 1)
    return 0.0


def recall_at(g, relevant, k):
    return sum(1 for x in g[:k] if x > 0) / relevant if relevant else 0.0


def percentile(sorted_vals, p):
    """Nearest-rank percentile, as docfuse's eval::run::percentile."""
    if not sorted_vals:
        return 0.0
    rank = math.ceil(p * len(sorted_vals))
    return sorted_vals[min(max(rank, 1), len(sorted_vals)) - 1]


def run_variant(bm25s, docs, questions, stopwords, stemmer_name, repeat, passes, label):
    stemmer = None
    if stemmer_name != "none":
        Stemmer = ensure("Stemmer", "PyStemmer")
        stemmer = Stemmer.Stemmer("english")
    texts = [doc_text(d["path"], d["heading_path"], d["text"]) for d in docs]
    sw = stopwords if stopwords != "none" else None

    build_ms = []
    for _ in range(repeat):
        t = time.perf_counter()
        tok = bm25s.tokenization.Tokenizer(stopwords=sw, stemmer=stemmer)
        corpus_ids = tok.tokenize(texts, update_vocab=True, show_progress=False,
                                  return_as="ids")
        retriever = bm25s.BM25()  # defaults: method=lucene, k1=1.5, b=0.75
        retriever.index((corpus_ids, tok.get_vocab_dict()), show_progress=False)
        build_ms.append((time.perf_counter() - t) * 1000)

    k = min(DEPTH, len(docs))

    def search(q):
        qids = tok.tokenize([q], update_vocab=False, show_progress=False,
                            return_as="ids")
        if not qids[0]:
            return []
        idx, scores = retriever.retrieve(qids, k=k, show_progress=False, n_threads=0)
        # documents with no query term (score 0) fill up k; they are not hits
        return [docs[i] for i, s in zip(idx[0], scores[0]) if s > 0]

    for q in questions:  # warm-up pass
        search(q["query"])
    medians, p95s = [], []
    for _ in range(passes):  # timed passes; each gives a median and a p95
        lat = []
        for q in questions:
            t = time.perf_counter()
            search(q["query"])
            lat.append((time.perf_counter() - t) * 1000)
        lat.sort()
        medians.append(percentile(lat, 0.5))
        p95s.append(percentile(lat, 0.95))
    mrr, r5 = [], []
    per_query = []
    for q in questions:
        ranked = search(q["query"])
        judg = [(r["path"], norm_heading(r["heading"]), int(r.get("grade", 1)))
                for r in q["relevant"] if int(r.get("grade", 1)) > 0]
        g = gains(ranked, judg)
        mrr.append(mrr_at(g, 10))
        r5.append(recall_at(g, len(judg), 5))
        per_query.append({"id": q["id"], "kind": q.get("kind"),
                          "mrr10": mrr[-1], "recall5": r5[-1]})
    n = max(len(questions), 1)
    return {
        "variant": label,
        "stopwords": stopwords,
        "stemmer": stemmer_name,
        "documents": len(docs),
        "queries": len(questions),
        "mrr10": sum(mrr) / n,
        "recall5": sum(r5) / n,
        "build_ms_median": statistics.median(build_ms),
        "latency_ms_median": statistics.median(medians),
        "latency_ms_p95": statistics.median(p95s),
        "per_query": per_query,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--chunks", help="JSON Lines from `docfuse chunks`")
    src.add_argument("--index", help="docfuse index folder (runs `docfuse chunks`)")
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--queries", required=True, help="docfuse question JSONL")
    ap.add_argument("--repeat", type=int, default=3, help="index builds to time")
    ap.add_argument("--passes", type=int, default=3,
                    help="timed passes over the questions (median of their median / p95)")
    ap.add_argument("--only-default", action="store_true",
                    help="run only stopwords=en, stemmer=none")
    ap.add_argument("--no-merge-sections", action="store_true",
                    help="skip the merged-sections row")
    ap.add_argument("--json", help="write the rows (with per-query results) here")
    args = ap.parse_args()

    bm25s = ensure("bm25s", "bm25s")
    chunks = load_chunks(args)
    questions = read_jsonl(args.queries)

    variants = [("en", "none"), ("none", "none"),
                ("en", "snowball-english"), ("none", "snowball-english")]
    if args.only_default:
        variants = variants[:1]
    rows = []
    for sw, st in variants:
        label = f"chunks, stopwords={sw}, stemmer={st}"
        rows.append(run_variant(bm25s, chunks, questions, sw, st, args.repeat, args.passes, label))
    if not args.no_merge_sections:
        sections = merge_sections(chunks)
        for sw, st in variants:
            label = f"merged sections, stopwords={sw}, stemmer={st}"
            rows.append(run_variant(bm25s, sections, questions, sw, st, args.repeat, args.passes, label))

    print(f"bm25s {getattr(bm25s, '__version__', '?')} (lucene, k1=1.5, b=0.75) on "
          f"{len(chunks)} docfuse chunks, {len(questions)} questions; "
          f"indexed text = file stem + heading path + text")
    print(f"{'variant':<58} {'docs':>5} {'MRR@10':>7} {'R@5':>6} {'build ms':>9} "
          f"{'p50 ms':>7} {'p95 ms':>7}")
    for r in rows:
        print(f"{r['variant']:<58} {r['documents']:>5} {r['mrr10']:>7.4f} "
              f"{r['recall5']:>6.3f} {r['build_ms_median']:>9.1f} "
              f"{r['latency_ms_median']:>7.2f} {r['latency_ms_p95']:>7.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"bm25s_version": getattr(bm25s, "__version__", None),
                       "chunks": len(chunks), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
