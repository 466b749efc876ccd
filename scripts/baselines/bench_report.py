#!/usr/bin/env python3
"""Assembles the Markdown report of `scripts/bench` from the JSON files it left in its
work folder, prints it and writes it to --out (benches/RESULTS.md).

Files read from --work: rb-build-*.json (`docfuse index --json`), rb-build-wall.txt
(whole-process ms, one per line), rb-eval-*.json (`docfuse eval --json`), rb-bm25s.json
(bm25s_sections.py), rb-process.json (process_latency.py), sf-build.json, sf-eval.json,
sf-crosscheck.json (crosscheck_trec_eval.py), meta.json (machine, versions, command).
"""

import argparse
import glob
import json
import os
import statistics


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def ms(x):
    return f"{x:.2f} ms" if x < 10 else f"{x:.1f} ms" if x < 100 else f"{x:.0f} ms"


def ratio(a, b):
    return f"x{a / b:.2f}" if b else "n/a"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    w = lambda name: os.path.join(args.work, name)  # noqa: E731

    meta = load(w("meta.json"))
    builds = [load(p) for p in sorted(glob.glob(w("rb-build-*.json")))]
    build_ms = statistics.median(b["elapsed_ms"] for b in builds)
    with open(w("rb-build-wall.txt"), encoding="utf-8") as f:
        build_wall = statistics.median(float(l) for l in f if l.strip())
    evals = [load(p)["reports"][0] for p in sorted(glob.glob(w("rb-eval-*.json")))]
    ev = evals[0]
    lat_med = statistics.median(e["latency_ms_median"] for e in evals)
    lat_p95 = statistics.median(e["latency_ms_p95"] for e in evals)
    bm = load(w("rb-bm25s.json"))
    base = bm["rows"][0]  # chunks, stopwords=en, stemmer=none (the default setting)
    proc = load(w("rb-process.json"))
    sf_build = load(w("sf-build.json"))
    sf = load(w("sf-eval.json"))["reports"][0]
    cc = load(w("sf-crosscheck.json"))

    L = []
    L.append("# Benchmark results")
    L.append("")
    L.append(f"Written by `scripts/bench` on {meta['date']} (commit `{meta['commit']}`"
             f"{', work tree with uncommitted changes' if meta['dirty'] else ''}); "
             f"the whole script took {meta['elapsed_s']:.0f} s.")
    L.append("")
    L.append(f"- Command: `{meta['command']}` (shared data: `{meta['shared']}`)")
    L.append(f"- Machine: {meta['nproc']} cores, {meta['cpu']}; load average at start "
             f"{meta['load']}")
    L.append(f"- Tools: {meta['rustc']}; Python {meta['python']}; bm25s "
             f"{bm.get('bm25s_version')}; {meta['pytrec_eval']}; {meta['timer']}")
    L.append("")
    L.append(f"## Rust book ({builds[-1]['documents']} files, {builds[-1]['chunks']} chunks)")
    L.append("")
    L.append("| measure | docfuse | baseline | baseline value | docfuse / baseline |")
    L.append("| --- | ---: | --- | ---: | ---: |")
    L.append(f"| index build, in process (median of {len(builds)}) | {ms(build_ms)} | "
             f"bm25s tokenize + index of the same chunks (median of 3) | "
             f"{ms(base['build_ms_median'])} | {ratio(build_ms, base['build_ms_median'])} |")
    L.append(f"| index build, whole `docfuse index` process (median of {len(builds)}) | "
             f"{ms(build_wall)} | | | |")
    L.append(f"| warm query latency, in process, median | {ms(lat_med)} | bm25s (tokenize + "
             f"retrieve k=100) | {ms(base['latency_ms_median'])} | "
             f"{ratio(lat_med, base['latency_ms_median'])} |")
    L.append(f"| warm query latency, in process, p95 | {ms(lat_p95)} | bm25s | "
             f"{ms(base['latency_ms_p95'])} | {ratio(lat_p95, base['latency_ms_p95'])} |")
    d, r = proc["docfuse"], proc.get("rg")
    for key, label in (("median_ms", "median"), ("p95_ms", "p95")):
        target = " (target < 10 ms: " + ("met" if d[key] < 10 else "**missed**") + ")" \
            if key == "median_ms" else ""
        if r:
            L.append(f"| whole-process `docfuse search`, {label}{target} | {ms(d[key])} | "
                     f"`rg -i -F` first word over the corpus | {ms(r[key])} | "
                     f"{ratio(d[key], r[key])} |")
        else:
            L.append(f"| whole-process `docfuse search`, {label}{target} | {ms(d[key])} | "
                     f"rg (not available) | | |")
    m = ev["metrics"]
    L.append(f"| MRR@10 (dev, {ev['queries']} questions) | {m['mrr10']:.4f} | bm25s | "
             f"{base['mrr10']:.4f} | {m['mrr10'] - base['mrr10']:+.4f} |")
    L.append(f"| recall@5 | {m['recall5']:.4f} | bm25s | {base['recall5']:.4f} | "
             f"{m['recall5'] - base['recall5']:+.4f} |")
    L.append("")
    L.append(f"Quality rows show differences (docfuse − bm25s), not ratios. In-process "
             f"latency of docfuse is `docfuse eval --json` (`latency_ms_median` / "
             f"`latency_ms_p95`, 50 searches of depth 100), the median over {len(evals)} "
             f"eval runs; bm25s is timed the same way in Python (median over 3 passes). "
             f"docfuse's build reads the files, chunks them and writes a tantivy index to "
             f"disk; bm25s only tokenizes and indexes the already-cut chunk texts in "
             f"memory. Whole-process times: {proc['queries']} dev questions x "
             f"{proc['runs_per_query']} runs each ({d['runs']} runs pooled, "
             f"{proc['timer']}, output read through a pipe).")
    L.append("")
    L.append("### bm25s variants over the same sections (`scripts/baselines/bm25s_sections.py`)")
    L.append("")
    L.append("Indexed text: file stem + heading path + chunk text; bm25s defaults "
             "(method lucene, k1 1.5, b 0.75). \"chunks\": docfuse's chunks indexed as they "
             "are, several chunks of one section counted once when scoring (as `docfuse "
             "eval`); \"merged sections\": the chunks of each section concatenated into "
             "one document first.")
    L.append("")
    L.append("| variant | documents | MRR@10 | recall@5 | build | query p50 | query p95 |")
    L.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in bm["rows"]:
        L.append(f"| {row['variant']} | {row['documents']} | {row['mrr10']:.4f} | "
                 f"{row['recall5']:.4f} | {ms(row['build_ms_median'])} | "
                 f"{ms(row['latency_ms_median'])} | {ms(row['latency_ms_p95'])} |")
    L.append(f"| **docfuse** (BM25F) | {builds[-1]['chunks']} | {m['mrr10']:.4f} | "
             f"{m['recall5']:.4f} | {ms(build_ms)} | {ms(lat_med)} | {ms(lat_p95)} |")
    L.append("")
    L.append(f"## SciFact (BEIR test, {sf['queries']} queries, {sf_build['documents']} "
             f"documents)")
    L.append("")
    L.append("| metric | docfuse eval | pytrec_eval on docfuse's run | abs. difference |")
    L.append("| --- | ---: | ---: | ---: |")
    names = {"ndcg10": "nDCG@10", "recall5": "recall@5", "recall100": "recall@100"}
    for row in cc["rows"]:
        L.append(f"| {names[row['metric']]} | {row['docfuse']:.4f} | "
                 f"{row['pytrec_eval']:.4f} | {row['abs_diff']:.1e} |")
    L.append("")
    L.append(f"docfuse SciFact index build {ms(sf_build['elapsed_ms'])} in process; warm "
             f"query latency median {ms(sf['latency_ms_median'])}, p95 "
             f"{ms(sf['latency_ms_p95'])}. Tied adjacent scores in the run's top 10s: "
             f"{cc['tied_adjacent_top10']}; judged queries missing from the run: "
             f"{cc['missing_from_run']}.")
    L.append("")
    L.append("Criterion micro-benchmarks (index build, warm query latency per question kind): "
             "`cargo bench --bench lexical`.")
    text = "\n".join(L) + "\n"
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
