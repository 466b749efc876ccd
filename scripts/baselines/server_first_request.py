#!/usr/bin/env python3
"""First hybrid answer of a fresh server, side by side in one run: for each docfuse build given
(--docfuse BIN:INDEX, repeatable; each build on its own copy of the index, as each keeps its own
model cache), each round starts a server and asks one new question (query-vector cache off):

  http: `docfuse serve --addr 127.0.0.1:0`; the question is POSTed to /v1/search (mode
        hybrid) the moment the address is printed
  mcp:  `docfuse mcp`; initialize, then tools/call search_docs (mode hybrid) at once

Reported per build and interface (median over the rounds, nearest rank): `start→answer`, from
spawning the process to the answer (what a user waits for after starting a server), and
`request→answer`, from sending the question to the answer (the server loads the model in the
background from its start, so an early question waits for it). The builds take turns round by
round; the questions are the first --rounds of a docfuse question file.

Usage:
  python3 scripts/baselines/server_first_request.py --queries queries.dev.jsonl \
      --docfuse target/release/docfuse:/tmp/rb [--docfuse OLD_BIN:OLD_INDEX] [--rounds 15]
"""

import argparse
import json
import os
import re
import subprocess
import time
import urllib.request


def median(vals):
    v = sorted(vals)
    return v[(len(v) - 1) // 2]


def http_round(binary, index, question, env):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "serve", "--index", index, "--addr", "127.0.0.1:0"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        addr = None
        for line in p.stderr:
            m = re.search(r"http://127\.0\.0\.1:\d+", line)
            if m:
                addr = m.group(0)
                break
        if addr is None:
            raise SystemExit(f"error: `{binary} serve` printed no address")
        body = json.dumps({"query": question, "mode": "hybrid", "limit": 5}).encode()
        req = urllib.request.Request(addr + "/v1/search", data=body,
                                     headers={"Content-Type": "application/json"})
        t1 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=30) as r:
            answer = json.loads(r.read())
        t2 = time.perf_counter()
        if answer.get("mode") != "hybrid":
            raise SystemExit(f"error: the answer is not hybrid: {answer.get('mode')}")
        return (t2 - t0) * 1000, (t2 - t1) * 1000
    finally:
        p.kill()
        p.wait()


def mcp_round(binary, index, question, env):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "mcp", "--index", index], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        def send(msg):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}})
        p.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        t1 = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "search_docs",
                         "arguments": {"query": question, "mode": "hybrid", "limit": 5}}})
        line = p.stdout.readline()
        t2 = time.perf_counter()
        if '"hybrid"' not in line:
            raise SystemExit(f"error: the MCP answer is not hybrid: {line[:300]}")
        return (t2 - t0) * 1000, (t2 - t1) * 1000
    finally:
        p.kill()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docfuse", action="append", required=True, help="BIN:INDEX")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    questions = [json.loads(l)["query"] for l in open(a.queries) if l.strip()][: a.rounds]
    env = dict(os.environ, DOCFUSE_QUERY_CACHE="off")
    builds = [tuple(b.split(":", 1)) for b in a.docfuse]
    res = {(b, i): {"http": [], "mcp": []} for b, i in builds}
    for q in questions:
        for b, i in builds:
            res[(b, i)]["http"].append(http_round(b, i, q, env))
            res[(b, i)]["mcp"].append(mcp_round(b, i, q, env))
    print(f"{'build':<40} {'interface':<9} {'rounds':>6} {'start_to_answer_ms':>19} {'request_to_answer_ms':>21}")
    for (b, i), per in res.items():
        for iface, runs in per.items():
            print(f"{b:<40} {iface:<9} {len(runs):>6} {median([r[0] for r in runs]):>19.1f} "
                  f"{median([r[1] for r in runs]):>21.1f}")


if __name__ == "__main__":
    main()
