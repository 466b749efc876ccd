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
  hybrid, resident      `search --mode hybrid` with no server at the start: the first
                        search answers by itself and starts a resident `docfuse daemon`
                        (DOCFUSE_DAEMON_IDLE, its own XDG_RUNTIME_DIR), which answers the
                        later rounds; its CPU, the model load included, is the server CPU

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
import re
import signal
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
    resident_pid = None
    started_cpu = 0.0
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, DOCFUSE_QUERY_CACHE="off",
               DOCFUSE_DAEMON_IDLE="0")
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
        variants["hybrid, resident"] = ["--mode", "hybrid"]
        # the resident's own socket folder and settings; DOCFUSE_LOG names its pid
        env_resident = dict(env, XDG_RUNTIME_DIR=tempfile.mkdtemp(),
                            DOCFUSE_DAEMON_IDLE="600", DOCFUSE_LOG="docfuse=debug")
        runs = {k: [] for k in variants}
        served = {k: 0.0 for k in variants}
        for _ in range(a.runs):
            for name, flags in variants.items():
                q = " ".join(random.sample(WORDS, 3)) + f" q{random.randrange(10**9)}"
                resident = name == "hybrid, resident"
                holder = resident_pid if resident and resident_pid else server.pid
                before = proc_cpu(holder) if not resident or resident_pid else 0.0
                t0 = time.perf_counter()
                p = subprocess.Popen(
                    [a.docfuse, "search", "--index", a.index, *flags, "--", q],
                    env=env_resident if resident else env, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE if resident else subprocess.DEVNULL,
                )
                err = p.stderr.read().decode() if resident else ""
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                if resident and not resident_pid:
                    m = re.search(r"started a resident docfuse \(pid (\d+)\)", err)
                    if not m:
                        raise SystemExit(f"error: the first search started no resident:\n{err}")
                    resident_pid = int(m.group(1))
                    time.sleep(1.0)  # its model load counts below, not in the next search
                    started_cpu = proc_cpu(resident_pid)
                    served[name] += started_cpu
                elif not resident or resident_pid:
                    served[name] += proc_cpu(holder) - before
                if os.waitstatus_to_exitcode(status) not in (0, 1):
                    raise SystemExit(f"error: search {flags} exited {status}")
                runs[name].append((wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024))
    finally:
        server.terminate()
        server.wait()
        if resident_pid:
            os.kill(resident_pid, signal.SIGTERM)
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
    first = runs["hybrid, resident"][0]
    print(
        f"\nhybrid, resident: the first search (which starts it) {first[0] * 1000:.1f} ms wall, "
        f"{first[1] * 1000:.1f} ms CPU; the resident's start (model loaded) "
        f"{started_cpu * 1000:.0f} ms CPU, {started_cpu * 1000 / a.runs:.1f} ms per search over {a.runs}"
    )


if __name__ == "__main__":
    main()
