#!/usr/bin/env python3
"""Cross-check docfuse's own metrics with pytrec_eval (trec_eval's code).

Input: a TREC run written by `docfuse eval --run FILE` (`qid Q0 docid rank score tag`),
BEIR qrels (`query-id<TAB>corpus-id<TAB>score`, header optional), and the JSON report of
the same evaluation (`docfuse eval --json > FILE`). Computes nDCG@10, recall@5 and
recall@100 with pytrec_eval (PyPI `pytrec-eval-terrier`, installed with pip if missing)
and prints them beside docfuse's numbers with the absolute differences.

Means are taken over every query with at least one positive judgment, as docfuse does;
a judged query absent from the run counts 0 (pytrec_eval itself only reports the queries
that are in the run). trec_eval orders a query's documents by score, breaking ties by
document id, not by the rank column; so the run is scored twice: as written ("scores")
and with scores replaced by the run's own rank order ("ranks"), which isolates the effect
of tied scores.

Usage:
  python3 scripts/baselines/crosscheck_trec_eval.py --run run.txt \
      --qrels ../shared/bench/beir/scifact/qrels/test.tsv --docfuse-json eval.json [--json out.json]
"""

import argparse
import importlib
import json
import subprocess
import sys
from collections import defaultdict

MEASURES = [("ndcg10", "ndcg_cut_10", "nDCG@10"),
            ("recall5", "recall_5", "recall@5"),
            ("recall100", "recall_100", "recall@100")]


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


def read_qrels(path):
    qrels = defaultdict(dict)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            cols = line.strip().split("\t") if "\t" in line else line.split()
            if not cols or not cols[0]:
                continue
            if n == 1 and cols[0] == "query-id":
                continue
            if len(cols) == 4:  # TREC: qid iter docid rel
                cols = [cols[0], cols[2], cols[3]]
            qid, doc, rel = cols[0], cols[1], int(cols[2])
            qrels[qid][doc] = rel
    return dict(qrels)


def read_run(path, tag=None):
    """{tag: {qid: [(rank, docid, score)]}} in file order."""
    runs = defaultdict(lambda: defaultdict(list))
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if len(cols) != 6:
                continue
            qid, _q0, doc, rank, score, t = cols
            runs[t][qid].append((int(rank), doc, float(score)))
    if not runs:
        sys.exit(f"error: no run line in `{path}`")
    if tag is None:
        tag = next(iter(runs))
    if tag not in runs:
        sys.exit(f"error: tag `{tag}` not in `{path}` (tags: {', '.join(runs)})")
    return tag, runs[tag]


def evaluate(pytrec_eval, qrels, run):
    judged = [q for q, docs in qrels.items() if any(r > 0 for r in docs.values())]
    ev = pytrec_eval.RelevanceEvaluator(
        {q: qrels[q] for q in judged}, {"ndcg_cut.10", "recall.5,100"})
    per_q = ev.evaluate({q: run[q] for q in judged if q in run})
    means = {}
    for key, name, _ in MEASURES:
        means[key] = sum(per_q.get(q, {}).get(name, 0.0) for q in judged) / max(len(judged), 1)
    return means, len(judged), sum(1 for q in judged if q not in run)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="TREC run from `docfuse eval --run`")
    ap.add_argument("--qrels", required=True, help="BEIR qrels TSV")
    ap.add_argument("--docfuse-json", required=True, help="`docfuse eval --json` output")
    ap.add_argument("--tag", help="run tag (= report mode) to check; default the first")
    ap.add_argument("--json", help="write the numbers here")
    args = ap.parse_args()

    pytrec_eval = ensure("pytrec_eval", "pytrec-eval-terrier")
    qrels = read_qrels(args.qrels)
    tag, lines = read_run(args.run, args.tag)

    as_written = {q: {doc: score for _r, doc, score in rows} for q, rows in lines.items()}
    by_rank = {q: {doc: float(len(rows) - i) for i, (_r, doc, _s) in
                   enumerate(sorted(rows))} for q, rows in lines.items()}
    ties10 = sum(1 for rows in lines.values()
                 for a, b in zip(sorted(rows)[:10], sorted(rows)[1:10]) if a[2] == b[2])

    with open(args.docfuse_json, encoding="utf-8") as f:
        report = json.load(f)
    reports = report["reports"]
    mine = next((r for r in reports if r["mode"].replace(" ", "_") == tag), reports[0])

    m_scores, judged, missing = evaluate(pytrec_eval, qrels, as_written)
    m_ranks, _, _ = evaluate(pytrec_eval, qrels, by_rank)

    print(f"run `{args.run}` (tag {tag}): {len(lines)} queries; {judged} judged in qrels, "
          f"{missing} of them absent from the run (count 0); "
          f"{ties10} tied adjacent scores in the top 10s")
    print(f"{'metric':<11} {'docfuse':>9} {'pytrec_eval':>12} {'|diff|':>9} "
          f"{'pytrec (ranks)':>15} {'|diff|':>9}")
    rows = []
    for key, _name, label in MEASURES:
        d = mine["metrics"][key]
        a, b = m_scores[key], m_ranks[key]
        print(f"{label:<11} {d:>9.4f} {a:>12.4f} {abs(d - a):>9.2e} {b:>15.4f} {abs(d - b):>9.2e}")
        rows.append({"metric": key, "docfuse": d, "pytrec_eval": a,
                     "abs_diff": abs(d - a), "pytrec_eval_rank_order": b,
                     "abs_diff_rank_order": abs(d - b)})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"tag": tag, "judged_queries": judged, "missing_from_run": missing,
                       "tied_adjacent_top10": ties10, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
