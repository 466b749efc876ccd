#!/usr/bin/env python3
"""The many-host deployment on one machine, under load (issue 42 item 5), for scripts/bench-fleet.

One PostgreSQL index; `docfuse ingest` from a JetStream nats-server, leaving embedding to two
`docfuse embed-worker`s (one thread each); the Cargo book split into six docs packs, one per
service, served over HTTP on loopback and registered over NATS; two `docfuse serve` processes
of the database. Then CLIENTS clients (half on each server, kept-alive connections) search for
SECONDS seconds (default mode, hybrid: the dev questions of the Cargo book, and one request in
four for a page whose text says its revision), while the service holding that page is
re-registered every REREGISTER seconds with the page at the next revision.

Checks, for every answer holding the revision page: its text is the one its `generation`
published (a generation published by the register of revision N, or by a later vectors
publish before revision N+1, says N), and its `evidence.chunk_sha256` is the one hash every
answer of that revision gives (and no other revision's); every register published has its
outcome from the ingester, matched by the pack version it names (0 lost events). Prints one
JSON object.

    fleet.py --bin target/release/docfuse --db URL --nats-server PATH --corpus DIR --work DIR
"""

import argparse
import asyncio
import http.server
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

REVISION_PAGE = "fleet.md"
REVISION_QUERY = "fleet page revision counter"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def say(*a):
    print("fleet:", *a, file=sys.stderr, flush=True)


class Nats:
    """A JetStream nats-server on a loopback port; publishes with the client protocol."""

    def __init__(self, binary, store):
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "-js", "-sd", store, "-a", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("error: nats-server did not start")

    def url(self):
        return f"nats://127.0.0.1:{self.port}"

    def publish(self, subject, payload):
        data = json.dumps(payload)
        with socket.create_connection(("127.0.0.1", self.port), 5) as s:
            s.recv(4096)  # INFO
            s.sendall(f'CONNECT {{"verbose":false}}\r\nPUB {subject} {len(data)}\r\n{data}\r\nPING\r\n'.encode())
            got = b""
            while b"PONG" not in got:
                chunk = s.recv(4096)
                if not chunk:
                    raise SystemExit(f"error: nats-server closed the connection: {got!r}")
                got += chunk


def serve_folder(folder):
    """Serves `folder` over HTTP on loopback, side by side; returns the base URL."""
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=folder, **k)
    http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


class Fleet:
    def __init__(self, a):
        self.a = a
        self.procs = []
        self.outcomes = []  # the ingester's JSON lines
        self.lock = threading.Lock()

    def start(self, name, args, env=None):
        e = dict(os.environ, DOCFUSE_PG_CACHE=os.path.join(self.a.work, name), **(env or {}))
        e.pop("DOCFUSE_LOG", None)
        log = open(os.path.join(self.a.work, name + ".log"), "w")
        p = subprocess.Popen([self.a.bin] + args, env=e, stdout=subprocess.PIPE, stderr=log, text=True)
        self.procs.append(p)
        return p

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    def docfuse(self, name, args):
        e = dict(os.environ, DOCFUSE_PG_CACHE=os.path.join(self.a.work, name))
        r = subprocess.run([self.a.bin] + args, env=e, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"error: docfuse {' '.join(args)}: {r.stderr}")
        return r.stdout

    # --- packs -----------------------------------------------------------------------------

    def make_packs(self):
        """One pack per top folder of the Cargo book, and `cargo-root` for its root pages
        (with the revision page). Returns {code: register message}."""
        src, www = os.path.join(self.a.work, "src"), os.path.join(self.a.work, "www")
        os.makedirs(www, exist_ok=True)
        corpus = self.a.corpus
        groups = {f"cargo-{d}": [d] for d in sorted(os.listdir(corpus))
                  if os.path.isdir(os.path.join(corpus, d))}
        groups["cargo-root"] = [f for f in ("index.md", "faq.md", "SUMMARY.md", "CHANGELOG.md")
                                if os.path.exists(os.path.join(corpus, f))]
        base = serve_folder(www)
        registers = {}
        for code, parts in groups.items():
            d = os.path.join(src, code)
            os.makedirs(d, exist_ok=True)
            for part in parts:
                subprocess.run(["cp", "-r", os.path.join(corpus, part), d], check=True)
            registers[code] = {"code": code, "capabilities": ["docs_pack"],
                               "docs_pack_url": f"{base}/{code}.tar.gz"}
        self.root_dir = os.path.join(src, "cargo-root")
        self.www = www
        self.base = base
        for code in groups:
            if code == "cargo-root":
                self.write_revision(0)
            self.pack(code, "1")
        return registers

    def write_revision(self, n):
        with open(os.path.join(self.root_dir, REVISION_PAGE), "w") as f:
            f.write(f"# Fleet page\n\nThe fleet page revision counter says revision {n}.\n")

    def pack(self, code, version, name=None):
        """Writes the pack of `code` at `version` as www/NAME.tar.gz (default: CODE)."""
        tmp = os.path.join(self.www, f".{code}.tmp.tar.gz")
        self.docfuse("packer", ["pack", os.path.join(self.a.work, "src", code), "--repo", code,
                                "--version", version, "-o", tmp])
        os.replace(tmp, os.path.join(self.www, f"{name or code}.tar.gz"))

    # --- the ingester's outcomes -----------------------------------------------------------

    def read_outcomes(self, proc):
        def run():
            for line in proc.stdout:
                try:
                    v = json.loads(line)
                except ValueError:
                    continue
                with self.lock:
                    self.outcomes.append(v)
        threading.Thread(target=run, daemon=True).start()

    def handled(self, subject, code=None):
        with self.lock:
            return [o for o in self.outcomes
                    if o.get("subject") == subject and (code is None or o.get("code") == code)]

    def wait_for(self, what, cond, timeout, fatal=True):
        deadline = time.time() + timeout
        while not cond():
            if time.time() > deadline:
                if not fatal:
                    say(f"{what}: not within {timeout} s")
                    return False
                raise SystemExit(f"error: {what}: not within {timeout} s (see {self.a.work}/*.log)")
            time.sleep(0.5)
        return True


# --- load ------------------------------------------------------------------------------------

async def request(reader, writer, host, body):
    data = json.dumps(body).encode()
    writer.write(b"POST /v1/search HTTP/1.1\r\nHost: " + host.encode() +
                 b"\r\nContent-Type: application/json\r\nContent-Length: " +
                 str(len(data)).encode() + b"\r\n\r\n" + data)
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    payload = await reader.readexactly(length)
    return status, payload


async def client(addr, questions, until, seen, stats):
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    i = random.randrange(len(questions))
    while time.time() < until:
        i += 1
        revision = i % 4 == 0
        q = REVISION_QUERY if revision else questions[i % len(questions)]
        body = {"query": q, "limit": 5, "include_content": True}
        t = time.perf_counter()
        try:
            status, payload = await asyncio.wait_for(request(reader, writer, addr, body), 30)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError):
            stats["failed"] += 1
            writer.close()
            reader, writer = await asyncio.open_connection(host, int(port))
            continue
        ms = (time.perf_counter() - t) * 1000
        if status != 200:
            stats["failed" if status != 503 else "refused"] += 1
            continue
        stats["latencies"].append(ms)
        v = json.loads(payload)
        g = v.get("generation")
        for r in v.get("results", []):
            if not r.get("path", "").endswith(REVISION_PAGE):
                continue
            text = r.get("content") or ""
            try:
                n = int(text.split("revision counter says revision ", 1)[1].split(".")[0])
            except (IndexError, ValueError):
                n = None  # not a text any revision had: counted as mixed
            seen.append((g, n, r.get("evidence", {}).get("chunk_sha256")))
    writer.close()


async def load(addrs, questions, seconds, clients):
    until = time.time() + seconds
    seen, stats = [], {"latencies": [], "failed": 0, "refused": 0}
    tasks = [client(addrs[k % len(addrs)], questions, until, seen, stats) for k in range(clients)]
    await asyncio.gather(*tasks)
    return seen, stats


def mixed_answers(seen, revision_of):
    """Answers (generation, revision, evidence hash) whose text is not the revision their
    generation published, or whose hash is not the one most answers of that revision
    give, or is given for another revision too."""
    by_revision = {}
    for _, n, sha in seen:
        by_revision.setdefault(n, {}).setdefault(sha, 0)
        by_revision[n][sha] += 1
    usual = {n: max(c, key=c.get) for n, c in by_revision.items()}
    owners = {}
    for n, sha in usual.items():
        owners.setdefault(sha, set()).add(n)
    return sum(1 for g, n, sha in seen
               if n is None or revision_of(g) != n or sha != usual[n] or len(owners[sha]) > 1)


def reregister(fleet, nats, register, seconds, every, published):
    """Publishes the next revision N of `cargo-root` (pack version N + 1, at a URL of its
    own) every `every` seconds for `seconds`."""
    end = time.time() + seconds
    n = 0
    while time.time() + every <= end + 0.01:
        time.sleep(every)
        n += 1
        fleet.write_revision(n)
        fleet.pack("cargo-root", str(n + 1), f"cargo-root-{n}")
        message = dict(register, docs_pack_url=f"{fleet.base}/cargo-root-{n}.tar.gz")
        nats.publish("service.register", message)
        published.append(n)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--db", required=True)
    p.add_argument("--nats-server", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--reregister", type=float, default=5.0)
    a = p.parse_args()
    fleet = Fleet(a)
    index = a.db + ("&" if "?" in a.db else "?") + f"schema=fleet_{int(time.time())}"
    nats = Nats(a.nats_server, os.path.join(a.work, "js"))
    try:
        registers = fleet.make_packs()
        t0 = time.time()
        ingester = fleet.start("ingester", ["ingest", "--nats", nats.url(), "--index", index, "--json",
                                            "--allow-pack-host", "127.0.0.1", "--max-chunks", "0"])
        fleet.read_outcomes(ingester)
        time.sleep(1)
        for w in ("worker-1", "worker-2"):
            fleet.start(w, ["embed-worker", "--index", index, "--threads", "1", "--poll", "0.5"])
        fleet.wait_for("the ingester's JetStream consumer",
                       lambda: "durable consumer" in open(os.path.join(a.work, "ingester.log")).read(), 60)
        for r in registers.values():
            nats.publish("service.register", r)
        fleet.wait_for("six packs ingested", lambda: len(fleet.handled("service.register")) >= len(registers), 600)
        lexical_s = time.time() - t0
        say(f"{len(registers)} packs published lexically in {lexical_s:.1f} s; embedding…")
        fleet.wait_for("every vector published",
                       lambda: any(o.get("report", {}).get("pending") == 0 for o in fleet.handled("vectors")), 1800)
        ready_s = time.time() - t0
        chunks = fleet.handled("vectors")[-1]["report"]["chunks"]
        say(f"vectors published after {ready_s:.1f} s ({chunks} chunks); starting two servers")
        addrs = []
        for s in ("server-a", "server-b"):
            fleet.start(s, ["serve", "--index", index, "--addr", "127.0.0.1:0"])
            log = os.path.join(a.work, s + ".log")
            fleet.wait_for(f"{s} listening", lambda: "http://127.0.0.1:" in open(log).read(), 120)
            addrs.append(open(log).read().split("http://", 1)[1].split()[0].rstrip("/"))
        questions = [json.loads(l)["query"] for l in open(os.path.join(a.corpus, "queries.dev.jsonl"))]
        published = []
        before = len(fleet.handled("service.register", "cargo-root"))
        pub = threading.Thread(target=reregister, args=(fleet, nats, registers["cargo-root"], a.seconds,
                                                        a.reregister, published))
        pub.start()
        cpu0 = os.times()
        seen, stats = asyncio.run(load(addrs, questions, a.seconds, a.clients))
        pub.join()
        cpu1 = os.times()
        # each re-register's outcome, by the pack version it names (revision N is version
        # N + 1); an event with none within 120 s is lost
        def outcome_of():
            return {int(o["version"]) - 1: o for o in fleet.handled("service.register", "cargo-root")
                    if o.get("version", "").isdigit()}
        fleet.wait_for("every re-register handled",
                       lambda: all(n in outcome_of() for n in published), 120, fatal=False)
        outcomes = outcome_of()
        regs = [outcomes[n] for n in published if n in outcomes]
        # the revision each generation holds: a register publishes revision N at its
        # generation; later publishes (vectors) keep it until the next register's
        starts = sorted([(0, 0)] + [(outcomes[n]["report"]["generation"], n) for n in published
                                     if n in outcomes and outcomes[n].get("ok") and "report" in outcomes[n]])
        def revision_of(g):
            return [n for start, n in starts if start <= g][-1]
        first = min(o["report"]["generation"] for o in regs if "report" in o) if regs else None
        # answers given before the first re-register's generation hold revision 0
        mixed = mixed_answers(seen, revision_of)
        lat = sorted(stats["latencies"])
        out = {
            "servers": 2, "workers": 2, "clients": a.clients, "seconds": a.seconds,
            "packs": len(registers), "chunks": chunks,
            "lexical_ready_s": round(lexical_s, 1), "vectors_ready_s": round(ready_s, 1),
            "requests": len(lat), "req_per_s": round(len(lat) / a.seconds, 1),
            "p50_ms": round(statistics.median(lat), 1) if lat else None,
            "p99_ms": round(lat[math.ceil(len(lat) * 0.99) - 1], 1) if lat else None,
            "failed": stats["failed"], "refused": stats["refused"],
            "revision_answers": len(seen),
            "generations_seen": len({g for g, _, _ in seen}),
            "revisions_seen": len({n for _, n, _ in seen}),
            "mixed_generation_answers": mixed,
            "registers_published": len(published),
            "registers_handled": len(regs),
            "registers_failed": sum(1 for o in regs if not o.get("ok")),
            "lost_events": sum(1 for n in published if n not in outcomes),
            "first_reregister_generation": first,
            "client_cpu_s": round((cpu1.user + cpu1.system) - (cpu0.user + cpu0.system), 1),
        }
        print(json.dumps(out))
        ok = (out["mixed_generation_answers"] == 0 and out["lost_events"] == 0
              and out["failed"] == 0 and out["registers_failed"] == 0)
        return 0 if ok else 1
    finally:
        fleet.stop()
        nats.proc.terminate()


if __name__ == "__main__":
    sys.exit(main())
