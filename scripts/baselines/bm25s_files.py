#!/usr/bin/env python3
"""Code-search baseline: plain BM25 (PyPI `bm25s`) over whole files.

Indexes `path + text` of every file a docfuse index holds (the unique paths of
`docfuse chunks --index DIR`, read again from --root), so both sides search the very same
files, and scores a docfuse question set whose judgments name files (`{"path", "grade"}`
without a heading) at the file level, as `docfuse eval` does for such judgments: a ranked
file is relevant when a judgment names it, each judgment is found once, MRR@10 is the mean
of 1/rank of the first relevant file within 10, recall@5 the mean share of a question's
judgments found in the top 5. Per-category means are reported too (`category` field).

Two tokenisations, both reported:
  plain      bm25s' default tokenizer, English stop words (the textbook baseline);
  code-split identifiers split at `_`, `.`, `::` and camelCase humps, as code search
             tools do (so `parseConfig` matches "parse config"), English stop words.

Usage:
  docfuse chunks --index IDX > chunks.jsonl
  python3 scripts/baselines/bm25s_files.py --root REPO --chunks chunks.jsonl \
      --queries benches/sets/maturin/queries.jsonl [--json out.json]
"""

import argparse
import json
import re
import time

import bm25s

CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def code_split(text):
    out = []
    for tok in re.findall(r"[A-Za-z0-9_]+", text):
        low = tok.lower()
        out.append(low)
        parts = [p for w in tok.split("_") for p in CAMEL.findall(w)]
        if len(parts) > 1:
            out.extend(p.lower() for p in parts)
    return " ".join(out)


def load_questions(path):
    qs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                qs.append(json.loads(line))
    return qs


def metrics(ranked, judged):
    top10 = ranked[:10]
    rr = 0.0
    for i, p in enumerate(top10):
        if p in judged:
            rr = 1.0 / (i + 1)
            break
    recall = len(set(ranked[:5]) & judged) / len(judged) if judged else 0.0
    return rr, recall


def run(name, paths, texts, qs, prep):
    t0 = time.process_time()
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([prep(t) for t in texts], stopwords="en", show_progress=False), show_progress=False)
    build_cpu = time.process_time() - t0
    rows = []
    for q in qs:
        toks = bm25s.tokenize([prep(q["query"])], stopwords="en", show_progress=False)
        k = min(100, len(paths))
        docs, _ = retriever.retrieve(toks, k=k, show_progress=False)
        ranked = [paths[int(i)] for i in docs[0]]
        judged = {r["path"] for r in q["relevant"] if r.get("grade", 1) > 0}
        rr, rec = metrics(ranked, judged)
        rows.append({"id": q["id"], "category": q.get("category", ""), "mrr10": rr, "recall5": rec})
    return {"name": name, "build_cpu_s": build_cpu, "rows": rows}


def summary(rows):
    n = len(rows) or 1
    out = {"all": (sum(r["mrr10"] for r in rows) / n, sum(r["recall5"] for r in rows) / n, len(rows))}
    for cat in sorted({r["category"] for r in rows}):
        rs = [r for r in rows if r["category"] == cat]
        out[cat] = (sum(r["mrr10"] for r in rs) / len(rs), sum(r["recall5"] for r in rs) / len(rs), len(rs))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--chunks", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--json")
    a = ap.parse_args()
    paths = []
    with open(a.chunks, encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)["path"]
            if not paths or paths[-1] != p:
                if p not in paths:
                    paths.append(p)
    texts = []
    for p in paths:
        with open(f"{a.root}/{p}", encoding="utf-8", errors="replace") as f:
            texts.append(p.replace("/", " ") + "\n" + f.read())
    qs = load_questions(a.queries)
    runs = [
        run("bm25s files, plain", paths, texts, qs, lambda t: t),
        run("bm25s files, code-split", paths, texts, qs, code_split),
    ]
    print(f"{len(paths)} files, {len(qs)} questions")
    for r in runs:
        s = summary(r["rows"])
        print(f"{r['name']}: " + "; ".join(f"{k} MRR@10 {v[0]:.3f} R@5 {v[1]:.3f} (n={v[2]})" for k, v in s.items()))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"files": len(paths), "runs": [{**r, "summary": summary(r["rows"])} for r in runs]}, f, indent=1)


if __name__ == "__main__":
    main()
