#!/usr/bin/env python3
"""First hybrid answer of a fresh server, side by side in one run: for each docfuse build given
(--docfuse BIN:INDEX, repeatable; each build on its own copy of the index, as each keeps its own
model cache), each round starts a server and asks one new question (query-vector cache off):

  http: `docfuse serve --addr 127.0.0.1:0`; the question is POSTed to /v1/search (mode
        hybrid) the moment the address is printed
  mcp:  `docfuse mcp`; initialize, then tools/call search_docs (mode hybrid) at once

Reported per build and interface (lower median over the rounds): `start→answer`, from
spawning the process to the answer (what a user waits for after starting a server), and
`request→answer`, from sending the question to the answer (`serve` prints its address once
the model is loaded; `mcp` answers `initialize` at once and loads the model in the
background, so its first question waits for the rest of the load). The builds take turns
round by round; the questions are the first --rounds of a docfuse question file.

Usage:
  python3 scripts/baselines/server_first_request.py --queries queries.dev.jsonl \
      --docfuse target/release/docfuse:/tmp/rb [--docfuse OLD_BIN:OLD_INDEX] [--rounds 15]
"""

import argparse
import json
import os
import re
import subprocess
import tempfile
import time
import urllib.request


def median(vals):
    v = sorted(vals)
    return v[(len(v) - 1) // 2]


def stop(p):
    """SIGTERM, then SIGKILL after 5 s: a server left to finish cleans up after itself."""
    p.terminate()
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def address(log_path, p, deadline_s=60):
    """The http://127.0.0.1:PORT the server printed to its log, waiting at most deadline_s."""
    end = time.perf_counter() + deadline_s
    while time.perf_counter() < end:
        with open(log_path) as f:
            m = re.search(r"http://127\.0\.0\.1:\d+", f.read())
        if m:
            return m.group(0)
        if p.poll() is not None:
            break
        time.sleep(0.001)
    raise SystemExit(f"error: the server printed no address; its log:\n{open(log_path).read()}")


def http_round(binary, index, question, env):
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log:
        t0 = time.perf_counter()
        p = subprocess.Popen([binary, "serve", "--index", index, "--addr", "127.0.0.1:0"],
                             env=env, stdout=subprocess.DEVNULL, stderr=log)
        try:
            addr = address(log.name, p)
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
            stop(p)


def mcp_round(binary, index, question, env):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "mcp", "--index", index], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        def send(msg):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()

        def reply(wanted):
            for line in p.stdout:
                msg = json.loads(line)
                if msg.get("id") == wanted:
                    if "error" in msg:
                        raise SystemExit(f"error: MCP request {wanted} failed: {msg['error']}")
                    return line
            raise SystemExit(f"error: the MCP server closed before answering request {wanted}")

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}})
        reply(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        t1 = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "search_docs",
                         "arguments": {"query": question, "mode": "hybrid", "limit": 5}}})
        line = reply(2)
        t2 = time.perf_counter()
        if '"hybrid"' not in line:
            raise SystemExit(f"error: the MCP answer is not hybrid: {line[:300]}")
        return (t2 - t0) * 1000, (t2 - t1) * 1000
    finally:
        p.stdin.close()
        stop(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docfuse", action="append", required=True, help="BIN:INDEX")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "DOCFUSE_LOG"}
    env["DOCFUSE_QUERY_CACHE"] = "off"
    builds = []
    for b in a.docfuse:
        binary, _, index = b.partition(":")
        if not binary or not index:
            ap.error("--docfuse takes BIN:INDEX")
        builds.append((binary, index))
    questions = [json.loads(l)["query"] for l in open(a.queries) if l.strip()][: a.rounds]
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
