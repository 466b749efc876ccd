#!/usr/bin/env python3
"""Whole-process `docfuse search` latency on an index with vectors, side by side in one run:

  unfolded: hybrid, the question never asked, without the folded-model cache
            (DOCFUSE_MODEL_CACHE=off, query-vector cache off): the ONNX session is made
            from the original int8 model, folding its weights — the baseline
  first:    hybrid, the question never asked (query-vector cache off): the session is made
            from the index's folded-model cache and the question embedded
  repeated: hybrid, the same question asked again (its vector read from the cache)
  lexical:  `--mode lexical` on the same index (no model at all)
  previous: with --compare BIN:INDEX, `first` run by another docfuse build (e.g. the last
            release) on its own copy of the index (each build keeps its own model cache)

For each question of a docfuse question file, each variant runs --runs times (after one
warm-up run that also fills the cache), the variants taking turns question by question; median and p95 (nearest rank) over all runs in ms,
the median CPU time (user + system, from wait4), the largest peak RSS of a measured run
(each process's own), each variant's speed-up over `unfolded` and its CPU time as a
multiple of `lexical`'s.

Usage:
  python3 scripts/baselines/cold_query_cache.py --docfuse target/release/docfuse \
      --index DIR --queries queries.dev.jsonl [--runs 3] [--limit-questions 50] \
      [--compare OLD_DOCFUSE:OLD_INDEX]
"""

import argparse
import json
import math
import os
import subprocess
import time


def percentile(vals, p):
    v = sorted(vals)
    return v[min(max(math.ceil(p * len(v)), 1), len(v)) - 1]


def run(cmd, env):
    """Wall time in ms, CPU time (user + system) in ms and peak RSS in MB of one process
    (its own rusage, via wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):  # 1: no results, still a timed answer
        raise SystemExit(f"error: `{' '.join(cmd)}` exited with {p.returncode}")
    cpu = (usage.ru_utime + usage.ru_stime) * 1000.0
    return (time.perf_counter() - t0) * 1000.0, cpu, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--limit-questions", type=int, default=50)
    ap.add_argument("--compare", help="BIN:INDEX: also time `first` with another docfuse build")
    a = ap.parse_args()
    questions = [json.loads(l)["query"] for l in open(a.queries) if l.strip()]
    questions = questions[: a.limit_questions]
    base = {k: v for k, v in os.environ.items() if k not in ("DOCFUSE_MODEL_CACHE", "DOCFUSE_QUERY_CACHE")}
    # every search answers in its own process: no server asked, no resident started
    base["DOCFUSE_NO_DAEMON"] = "1"
    compare = None
    if a.compare:
        binary, _, index = a.compare.partition(":")
        if not binary or not index:
            ap.error("--compare takes BIN:INDEX")
        compare = (binary, index)
    # the folded model is kept once per user (before: in each index folder)
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for binary, index in [(a.docfuse, a.index)] + ([compare] if compare else []):
        folders = [os.path.join(cache_home, "docfuse", "model-cache"), os.path.join(index, "model-cache")]
        if not any(os.path.isdir(f) and os.listdir(f) for f in folders):
            raise SystemExit(f"error: no folded model for {index} (in {folders[0]})\nhint: run `{binary} refresh --index {index}` once")
    off = dict(base, DOCFUSE_QUERY_CACHE="off")
    variants = {
        "lexical": (a.docfuse, a.index, ["--mode", "lexical"], base),
        "repeated": (a.docfuse, a.index, [], base),
        "first": (a.docfuse, a.index, [], off),
        "unfolded": (a.docfuse, a.index, [], dict(off, DOCFUSE_MODEL_CACHE="off")),
    }
    if compare:
        variants["previous"] = (*compare, [], off)
    times = {k: [] for k in variants}
    cpus = {k: [] for k in variants}
    rss = {k: 0.0 for k in variants}
    for q in questions:  # variants interleaved question by question
        for name, (binary, index, flags, env) in variants.items():
            cmd = [binary, "search", "--index", index, *flags, "--", q]
            run(cmd, env)  # warm-up (and fills the cache for "repeated")
            for _ in range(a.runs):
                ms, cpu, mb = run(cmd, env)
                times[name].append(ms)
                cpus[name].append(cpu)
                rss[name] = max(rss[name], mb)
    base_ms = percentile(times["unfolded"], 0.5)
    lex_cpu = percentile(cpus["lexical"], 0.5)
    print(f"{'variant':<9} {'runs':>5} {'median_ms':>10} {'p95_ms':>8} {'cpu_ms':>7} {'peak_rss_mb':>12} {'vs unfolded':>11} {'cpu vs lexical':>14}")
    for name in variants:
        med = percentile(times[name], 0.5)
        cpu = percentile(cpus[name], 0.5)
        print(
            f"{name:<9} {len(times[name]):>5} {med:>10.1f} {percentile(times[name], 0.95):>8.1f} "
            f"{cpu:>7.1f} {rss[name]:>12.0f} {base_ms / med:>10.2f}x {cpu / lex_cpu:>13.1f}x"
        )


if __name__ == "__main__":
    main()
