#!/usr/bin/env python3
"""One-off `docfuse search` processes with and without a running `docfuse serve` of the
same index, side by side in one run (issue 41: a cold hybrid search against a cold
lexical one).

Starts `docfuse serve --index INDEX` (its search socket in a private XDG_RUNTIME_DIR),
asks it one hybrid search (it makes its model session then; not measured), then runs
--runs rounds; each round runs, in turn, a new question (never asked: the
query-vector cache is off) as

  hybrid via server     `search --mode hybrid`   (answered by the server)
  hybrid in-process     `search --mode hybrid --no-daemon`
  lexical in-process    `search --mode lexical --no-daemon`   (the baseline)
  lexical via server    `search --mode lexical`

and reports per variant the median wall time, the median CPU time of the search process
(user + system, from wait4), its peak RSS, and for the variants answered by the server
the server's CPU time per search (from /proc/PID/stat, over those searches) and the sum.
Ratios are against `lexical in-process`.

Usage:
  python3 scripts/baselines/cold_daemon.py --docfuse target/release/docfuse --index DIR [--runs 20]
"""

import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time

WORDS = (
    "borrow lifetime struct trait closure iterator module crate error thread channel "
    "macro pattern vector string"
).split()


def proc_cpu(pid):
    """CPU seconds (user + system) of process `pid` so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docfuse", default="target/release/docfuse")
    ap.add_argument("--index", required=True)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    runtime = tempfile.mkdtemp()
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, DOCFUSE_QUERY_CACHE="off")
    env.pop("DOCFUSE_NO_DAEMON", None)
    server = subprocess.Popen(
        [a.docfuse, "serve", "--index", a.index, "--addr", "127.0.0.1:0"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        folder = os.path.join(runtime, "docfuse")
        for _ in range(300):
            if os.path.isdir(folder) and any(f.endswith(".sock") for f in os.listdir(folder)):
                break
            time.sleep(0.05)
        else:
            raise SystemExit("error: the server made no search socket in 15 s")
        variants = {
            "hybrid via server": ["--mode", "hybrid"],
            "hybrid in-process": ["--mode", "hybrid", "--no-daemon"],
            "lexical in-process": ["--mode", "lexical", "--no-daemon"],
            "lexical via server": ["--mode", "lexical"],
        }
        # the server makes its model session on its first hybrid search: not measured
        subprocess.run(
            [a.docfuse, "search", "--index", a.index, "--mode", "hybrid", "--", "warm up"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        runs = {k: [] for k in variants}
        served = {k: 0.0 for k in variants}
        for _ in range(a.runs):
            for name, flags in variants.items():
                q = " ".join(random.sample(WORDS, 3)) + f" q{random.randrange(10**9)}"
                before = proc_cpu(server.pid)
                t0 = time.perf_counter()
                p = subprocess.Popen(
                    [a.docfuse, "search", "--index", a.index, *flags, "--", q],
                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                served[name] += proc_cpu(server.pid) - before
                if os.waitstatus_to_exitcode(status) not in (0, 1):
                    raise SystemExit(f"error: search {flags} exited {status}")
                runs[name].append((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
    finally:
        server.terminate()
        server.wait()
    med = lambda xs: statistics.median(xs) * 1000
    base_wall = med(r[0] for r in runs["lexical in-process"])
    base_cpu = med(r[1] for r in runs["lexical in-process"])
    print("| variant | runs | median wall | median CPU (search) | server CPU per search | CPU total | peak RSS | wall vs lexical | CPU vs lexical |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in runs.items():
        wall, cpu = med(x[0] for x in r), med(x[1] for x in r)
        srv = served[name] / len(r) * 1000
        rss = statistics.median(x[2] for x in r)
        print(
            f"| {name} | {len(r)} | {wall:.1f} ms | {cpu:.1f} ms | {srv:.1f} ms | {cpu + srv:.1f} ms "
            f"| {rss:.0f} MB | {wall / base_wall:.2f}x | {(cpu + srv) / base_cpu:.2f}x |"
        )


if __name__ == "__main__":
    main()
