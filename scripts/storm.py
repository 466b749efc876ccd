#!/usr/bin/env python3
"""Hostile load against a running `docfuse serve` (loopback only), for scripts/loadtest-storm.

Phases, each printed as one JSON object on stdout:

  idle    opens IDLE connections that send nothing and SLOW more that send half a request
          head, then a fresh client searches every second; counts how many of the held
          connections the server closed within HOLD seconds and whether the fresh client
          was answered while they were held.
  storm   CLIENTS clients on kept-alive connections send new hybrid questions (three
          requests in four) and reads (a handoff, a status, a passage) for SECONDS seconds
          while a refresh loop edits a document of the indexed folder and calls
          POST /v1/refresh every REFRESH seconds; counts answered (2xx), refused (503 with
          Retry-After: overloaded, or a connection the server turned away), failed (any
          other status, a reset or a timeout) and the answered requests' p50/p99 latency.

The server's resident memory (VmRSS of PID) is sampled every 100 ms: `rss_start_mb`,
`rss_peak_mb`. Standard library only.

    storm.py --addr 127.0.0.1:PORT --pid PID --doc FILE [--phase idle|storm|both]
"""

import argparse
import asyncio
import json
import os
import random
import statistics
import time

QUESTIONS = [
    "how do I publish a crate", "specify a dependency from git", "build profiles release",
    "workspace members", "cargo test arguments", "features optional dependencies",
    "environment variables set by cargo", "build script rerun-if-changed",
    "semver compatibility", "registry authentication token", "vendor dependencies offline",
    "patch a dependency", "target triple cross compile", "lock file Cargo.lock",
    "rust-version field", "cargo install binary",
]

READS = ["/v1/handoff?target=faq.md", "/v1/status", "/v1/passage?path=faq.md&start_line=1&end_line=40"]


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


async def sample_rss(pid, out, stop):
    while not stop.is_set():
        r = rss_mb(pid)
        if r is not None:
            out.append(r)
        try:
            await asyncio.wait_for(stop.wait(), 0.1)
        except asyncio.TimeoutError:
            pass


async def read_response(reader):
    """(status, headers dict, body bytes) of one HTTP/1.1 response."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    body = await reader.readexactly(n) if n else b""
    return status, headers, body


def request(method, path, host, body=b""):
    head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


async def one_search(host, port, query, timeout):
    """Status of one search on a new connection, or an error name."""
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        body = json.dumps({"query": query, "limit": 10, "mode": "lexical"}).encode()
        w.write(request("POST", "/v1/search", f"{host}:{port}", body))
        await w.drain()
        status, _, _ = await asyncio.wait_for(read_response(r), timeout)
        w.close()
        return status
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
        return type(e).__name__


async def idle_phase(a, host, port):
    held = []
    opened = 0
    for i in range(a.idle + a.slow):
        try:
            r, w = await asyncio.open_connection(host, port)
        except OSError:
            break
        opened += 1
        if i >= a.idle:
            w.write(b"POST /v1/search HTTP/1.1\r\nHost: x\r\n")
            await w.drain()
        held.append((r, w))
    t0 = time.monotonic()
    closed_at = [None] * len(held)
    probes = []

    async def watch(i, r):
        try:
            data = await r.read(4096)
            while data:
                data = await r.read(4096)
        except OSError:
            pass
        closed_at[i] = time.monotonic() - t0

    watchers = [asyncio.create_task(watch(i, r)) for i, (r, _) in enumerate(held)]
    while time.monotonic() - t0 < a.hold:
        probes.append(await one_search(host, port, "workspace members", 2.0))
        await asyncio.sleep(1.0)
    for t in watchers:
        t.cancel()
    for _, w in held:
        w.close()
    closed = [c for c in closed_at if c is not None]
    return {
        "phase": "idle",
        "held": opened,
        "closed_by_server": len(closed),
        "last_closed_s": round(max(closed), 1) if closed else None,
        "hold_s": a.hold,
        "probes": len(probes),
        "probes_answered": sum(1 for p in probes if p == 200),
        "probe_results": sorted({str(p) for p in probes}),
    }


async def client(host, port, deadline, stats, n0, timeout):
    n = n0
    conn = None
    while time.monotonic() < deadline:
        n += 1
        q = f"{random.choice(QUESTIONS)} {n0}x{n}"
        body = json.dumps({"query": q, "limit": 10, "mode": "hybrid"}).encode()
        method, path = "POST", "/v1/search"
        if n % 4 == 3:
            method, body = "GET", b""
            path = random.choice(READS)
        t = time.monotonic()
        try:
            if conn is None:
                conn = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            r, w = conn
            w.write(request(method, path, f"{host}:{port}", body))
            await w.drain()
            status, headers, _ = await asyncio.wait_for(read_response(r), timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            if conn is not None:
                conn[1].close()
            conn = None
            # a connection the server closed before answering: turned away at the cap
            if isinstance(e, (ConnectionResetError, asyncio.IncompleteReadError)):
                stats["refused"] += 1
            else:
                stats["failed"] += 1
                stats["errors"][type(e).__name__] = stats["errors"].get(type(e).__name__, 0) + 1
            await asyncio.sleep(0.2)
            continue
        ms = (time.monotonic() - t) * 1000
        if 200 <= status < 300:
            stats["answered"] += 1
            stats["lat"].append(ms)
        elif status == 503:
            stats["refused"] += 1
            await asyncio.sleep(float(headers.get("retry-after", "1")))
        else:
            stats["failed"] += 1
            stats["errors"][str(status)] = stats["errors"].get(str(status), 0) + 1
        if headers.get("connection", "").lower() == "close":
            conn[1].close()
            conn = None
    if conn is not None:
        conn[1].close()


async def refresh_loop(host, port, doc, every, deadline, out):
    n = 0
    while time.monotonic() + every < deadline:
        await asyncio.sleep(every)
        n += 1
        with open(doc, "a") as f:
            f.write(f"\nStorm edit {n}: the refresh loop appended this line.\n")
        try:
            r, w = await asyncio.open_connection(host, port)
            w.write(request("POST", "/v1/refresh", f"{host}:{port}", b""))
            await w.drain()
            status, _, _ = await asyncio.wait_for(read_response(r), 10)
            w.close()
            out.append(status)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as e:
            out.append(type(e).__name__)


async def storm_phase(a, host, port):
    stats = {"answered": 0, "refused": 0, "failed": 0, "errors": {}, "lat": []}
    deadline = time.monotonic() + a.seconds
    refreshes = []
    tasks = [asyncio.create_task(client(host, port, deadline, stats, i * 100000, a.timeout))
             for i in range(a.clients)]
    tasks.append(asyncio.create_task(
        refresh_loop(host, port, a.doc, a.refresh, deadline, refreshes)))
    await asyncio.gather(*tasks)
    lat = sorted(stats["lat"])
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [0] * 99
    return {
        "phase": "storm",
        "clients": a.clients,
        "seconds": a.seconds,
        "answered": stats["answered"],
        "refused": stats["refused"],
        "failed": stats["failed"],
        "errors": stats["errors"],
        "p50_ms": round(q[49], 1),
        "p99_ms": round(q[98], 1),
        "refreshes": [str(s) for s in refreshes],
    }


async def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--addr", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--doc", required=True, help="a document of the indexed folder to edit")
    p.add_argument("--phase", default="both", choices=["idle", "storm", "both"])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--refresh", type=float, default=5, help="seconds between refreshes")
    p.add_argument("--timeout", type=float, default=15, help="a client's wait for an answer (s)")
    p.add_argument("--idle", type=int, default=300, help="connections that send nothing")
    p.add_argument("--slow", type=int, default=100, help="connections that send half a head")
    p.add_argument("--hold", type=float, default=20, help="seconds the idle phase lasts")
    a = p.parse_args()
    host, port = a.addr.rsplit(":", 1)
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("error: loopback addresses only")
    port = int(port)
    stop = asyncio.Event()
    rss = []
    sampler = asyncio.create_task(sample_rss(a.pid, rss, stop))
    await asyncio.sleep(0.2)
    start = rss[0] if rss else None
    if a.phase in ("idle", "both"):
        out = await idle_phase(a, host, port)
        print(json.dumps(out), flush=True)
    if a.phase in ("storm", "both"):
        rss.clear()
        out = await storm_phase(a, host, port)
        stop.set()
        await sampler
        out["rss_start_mb"] = round(start, 1) if start else None
        out["rss_peak_mb"] = round(max(rss), 1) if rss else None
        print(json.dumps(out), flush=True)
    stop.set()


if __name__ == "__main__":
    asyncio.run(main())
