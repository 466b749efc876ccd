#!/usr/bin/env python3
"""Whole-process latency: `docfuse search` on an existing index vs an `rg -i` raw scan.

For each question of a docfuse question file (e.g. the Rust book's 50 dev questions):
  docfuse: `docfuse search --index DIR -- "<question>"` (default output, limit 10)
  rg:      `rg -i -F -- "<first word of the question>" CORPUS` (literal, case-insensitive)
Every docfuse search answers in its own process: no running server is asked and no
resident `docfuse daemon` is started (DOCFUSE_NO_DAEMON=1; `cold_daemon.py` measures those).
Each command runs --runs times after --warmup runs, with its output read through a pipe
(not /dev/null, where ripgrep stops at the first match). All run times of one tool are
pooled: median and p95 (nearest rank) in ms, and the docfuse/rg ratios.

Uses hyperfine (`-N --output=pipe -i`, no shell) when it is on PATH, else a
time.perf_counter loop over subprocess.run. Both exit 1 on "no result"; that is fine.

Usage:
  python3 scripts/baselines/process_latency.py --docfuse target/release/docfuse \
      --index DIR --queries queries.dev.jsonl --corpus CORPUS_DIR [--runs 5] [--json out.json]
"""

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time


def percentile(sorted_vals, p):
    if not sorted_vals:
        return 0.0
    rank = math.ceil(p * len(sorted_vals))
    return sorted_vals[min(max(rank, 1), len(sorted_vals)) - 1]


def stats(times_ms):
    t = sorted(times_ms)
    return {"runs": len(t), "median_ms": percentile(t, 0.5), "p95_ms": percentile(t, 0.95),
            "min_ms": t[0] if t else 0.0}


def with_hyperfine(cmds, runs, warmup):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "hf.json")
        argv = ["hyperfine", "-N", "--output=pipe", "-i", "--style", "none",
                "--warmup", str(warmup), "--runs", str(runs), "--export-json", out]
        argv += [shlex.join(c) for c in cmds]
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        if done.returncode != 0:  # its warnings (outliers, first run slower) stay quiet
            sys.exit(f"error: hyperfine failed:\n{done.stderr}")
        with open(out, encoding="utf-8") as f:
            results = json.load(f)["results"]
    return [t * 1000 for r in results for t in r["times"]]


def with_loop(cmds, runs, warmup):
    times = []
    for c in cmds:
        for i in range(warmup + runs):
            t = time.perf_counter()
            subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if i >= warmup:
                times.append((time.perf_counter() - t) * 1000)
    return times


def main():
    os.environ["DOCFUSE_NO_DAEMON"] = "1"
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--corpus", required=True, help="folder rg scans")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per question")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs per question")
    ap.add_argument("--no-hyperfine", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()

    with open(args.queries, encoding="utf-8") as f:
        queries = [json.loads(l)["query"] for l in f if l.strip()]
    docfuse = [[args.docfuse, "search", "--index", args.index, "--", q] for q in queries]
    rg = shutil.which("rg")
    rg_cmds = [[rg, "-i", "-F", "--", q.split()[0], args.corpus] for q in queries] if rg else []

    use_hf = shutil.which("hyperfine") is not None and not args.no_hyperfine
    timer = with_hyperfine if use_hf else with_loop
    out = {"timer": "hyperfine -N --output=pipe" if use_hf else "python perf_counter loop",
           "queries": len(queries), "runs_per_query": args.runs,
           "docfuse": stats(timer(docfuse, args.runs, args.warmup))}
    if rg_cmds:
        out["rg"] = stats(timer(rg_cmds, args.runs, args.warmup))
        out["ratio_median"] = out["docfuse"]["median_ms"] / out["rg"]["median_ms"]
        out["ratio_p95"] = out["docfuse"]["p95_ms"] / out["rg"]["p95_ms"]
    else:
        print("warning: rg not found; the raw-scan baseline is skipped", file=sys.stderr)

    print(f"whole-process latency ({out['timer']}, {len(queries)} questions x {args.runs} runs)")
    for name in ("docfuse", "rg"):
        if name in out:
            s = out[name]
            print(f"  {name:<8} median {s['median_ms']:.2f} ms  p95 {s['p95_ms']:.2f} ms  "
                  f"({s['runs']} runs)")
    if "ratio_median" in out:
        print(f"  docfuse/rg: median x{out['ratio_median']:.2f}, p95 x{out['ratio_p95']:.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
