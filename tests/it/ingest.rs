//! `docfuse ingest` against a real NATS server (Debian's `nats-server`, started here on a
//! loopback port and restarted mid-run) and a fake service serving its docs pack over
//! HTTP: register → its pages and OpenAPI operations are searchable; the same pack again
//! → nothing embedded; one page changed → only that page's chunks embedded; bad messages
//! skipped; the server restarted → ingestion resumes; unregister → its documents gone,
//! the other repository untouched.
//!
//! Needs `nats-server` (`NATS_SERVER`, else on PATH or in /usr/sbin); without it the test
//! says so and passes, unless `DOCFUSE_REQUIRE_NATS` is set (as `scripts/test` does).

use crate::common;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn nats_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
}

/// A nats-server on a loopback port, killed when dropped.
struct Nats {
    bin: PathBuf,
    port: u16,
    child: Child,
    /// Extra arguments (JetStream and its store folder).
    extra: Vec<String>,
}

impl Nats {
    fn start(bin: &Path) -> Nats {
        Nats::start_with(bin, Vec::new())
    }

    /// A nats-server with JetStream, storing in `store` (kept across restarts).
    fn start_jetstream(bin: &Path, store: &Path) -> Nats {
        let store = store.to_str().unwrap().to_string();
        Nats::start_with(bin, vec!["-js".into(), "-sd".into(), store])
    }

    fn start_with(bin: &Path, extra: Vec<String>) -> Nats {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Self::spawn(bin, port, &extra);
        Nats {
            bin: bin.to_path_buf(),
            port,
            child,
            extra,
        }
    }

    fn spawn(bin: &Path, port: u16, extra: &[String]) -> Child {
        let child = Command::new(bin)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{}`: {e}", bin.display()));
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        child
    }

    fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(300));
        self.child = Self::spawn(&self.bin, self.port, &self.extra);
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Publishes `payload` on `subject` (NATS client protocol; PING/PONG makes sure the
    /// server has it before returning).
    fn publish(&self, subject: &str, payload: &str) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf).unwrap(); // INFO
        let msg = format!(
            "CONNECT {{\"verbose\":false}}\r\nPUB {subject} {}\r\n{payload}\r\nPING\r\n",
            payload.len()
        );
        s.write_all(msg.as_bytes()).unwrap();
        let mut got = String::new();
        while !got.contains("PONG") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "nats-server closed the connection: {got}");
            got.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docfuse ingest --json`: its outcome lines, its stderr lines.
struct Ingest {
    child: Child,
    events: Receiver<Value>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Ingest {
    fn start(dir: &Path, nats: &Nats, index: &str) -> Ingest {
        Ingest::start_with(dir, nats, index, &[])
    }

    /// [`Ingest::start`] with `env` set.
    fn start_with(dir: &Path, nats: &Nats, index: &str, env: &[(&str, &Path)]) -> Ingest {
        Ingest::start_args(dir, nats, index, env, &[])
    }

    fn start_args(
        dir: &Path,
        nats: &Nats,
        index: &str,
        env: &[(&str, &Path)],
        args: &[&str],
    ) -> Ingest {
        let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
            .args(["ingest", "--index", index, "--json", "--nats", &nats.url()])
            .args(["--allow-pack-host", "127.0.0.1"])
            .args(args)
            .envs(env.iter().copied())
            .current_dir(dir)
            .env_remove("DOCFUSE_LOG")
            .env_remove("DOCFUSE_MODEL_CACHE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, events) = channel();
        let out = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                let _ = tx.send(v);
            }
        });
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        let err = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let ingest = Ingest { child, events, log };
        ingest.wait_log("ingesting into", 1);
        ingest
    }

    /// Waits until `n` stderr lines contain `text`.
    fn wait_log(&self, text: &str, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let log = self.log.lock().unwrap();
            if log.iter().filter(|l| l.contains(text)).count() >= n {
                return;
            }
            assert!(Instant::now() < deadline, "no `{text}` ×{n} in {log:#?}");
            drop(log);
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn next(&self) -> Value {
        let log = self.log.clone();
        self.events
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no event handled; stderr: {:#?}", log.lock().unwrap()))
    }

    /// No outcome beyond those read (once the process has ended and its stdout is read).
    fn none_pending(&self) {
        let extra = self.events.recv_timeout(Duration::from_secs(5));
        assert!(extra.is_err(), "{extra:?}");
    }
}

impl Drop for Ingest {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const SPEC: &str = r#"{"openapi": "3.0.3",
 "info": {"title": "Scheduler API", "version": "1.0"},
 "paths": {
  "/tasks": {
   "get": {"summary": "List scheduled tasks", "operationId": "listTasks", "tags": ["tasks"],
           "responses": {"200": {"description": "Every scheduled task with its next run"}}},
   "post": {"summary": "Create a task", "operationId": "createTask", "tags": ["tasks"],
            "responses": {"201": {"description": "Created"}}}},
  "/tasks/{id}/runs": {
   "get": {"summary": "Past runs of one task", "operationId": "listRuns",
           "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
           "responses": {"200": {"description": "The runs, newest first"}}}}}}
"#;

fn service_docs(dir: &Path) {
    std::fs::create_dir_all(dir.join("guide")).unwrap();
    std::fs::write(dir.join("openapi.json"), SPEC).unwrap();
    std::fs::write(
        dir.join("guide/retries.md"),
        "# Retries\n\nA failed run is retried three times with exponential backoff.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("guide/calendars.md"),
        "# Calendars\n\nA cron expression or a calendar decides when a task runs.\n",
    )
    .unwrap();
}

/// `docfuse pack svc` as bytes (version `v`).
fn pack_bytes(dir: &Path, v: &str) -> Vec<u8> {
    let o = docfuse(
        dir,
        &[
            "pack",
            "svc",
            "-o",
            "svc.tar.gz",
            "--repo",
            "scheduler",
            "--version",
            v,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read(dir.join("svc.tar.gz")).unwrap()
}

fn search(dir: &Path, query: &str) -> Vec<Value> {
    let o = docfuse(
        dir,
        &["search", "--index", "idx", "--json", "-n", "5", query],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {} {}", stdout(&o), stderr(&o));
    });
    v["results"].as_array().cloned().unwrap_or_default()
}

/// The chunks of the index whose path ends with `suffix`.
fn chunks_of(dir: &Path, suffix: &str) -> usize {
    let o = docfuse(dir, &["chunks", "--index", "idx"]);
    stdout(&o)
        .lines()
        .filter(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["path"].as_str().unwrap().ends_with(suffix)
        })
        .count()
}

#[track_caller]
fn ok_report(e: &Value, subject: &str) -> Value {
    assert_eq!(e["ok"], true, "{e:#}");
    assert_eq!(e["subject"], subject, "{e:#}");
    assert_eq!(e["code"], "scheduler", "{e:#}");
    e["report"].clone()
}

/// The nats-server binary, or `None` (the test is skipped) unless it is required.
fn required_nats_server() -> Option<PathBuf> {
    let bin = nats_server();
    if bin.is_none() {
        assert!(
            std::env::var_os("DOCFUSE_REQUIRE_NATS").is_none(),
            "DOCFUSE_REQUIRE_NATS is set but no nats-server was found"
        );
        eprintln!("skipped: no nats-server (apt-get install nats-server)");
    }
    bin
}

#[test]
fn services_register_change_leave_and_survive_a_nats_restart() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    // another repository, indexed from a folder, with vectors
    std::fs::create_dir_all(p.join("own")).unwrap();
    std::fs::write(
        p.join("own/deploy.md"),
        "# Deployments\n\nRoll out a release with blue-green deployments.\n",
    )
    .unwrap();
    let o = docfuse(p, &["index", "--index", "idx", "own"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    service_docs(&p.join("svc"));
    let served = Arc::new(Mutex::new(pack_bytes(p, "1")));
    let url = format!("{}/api/v1/system/docs/pack", serve_bytes(served.clone()));
    let register = format!(
        r#"{{"code": "scheduler", "capabilities": ["http", "docs_pack"], "docs_pack_url": "{url}"}}"#
    );

    let mut nats = Nats::start(&bin);
    let ingest = Ingest::start(p, &nats, "idx");

    // registers: its pages and operations are searchable
    nats.publish("service.register", &register);
    let first = ok_report(&ingest.next(), "service.register");
    assert!(first["embedded"].as_u64().unwrap() >= 5, "{first:#}");
    let hits = search(p, "list scheduled tasks");
    assert_eq!(
        hits[0]["heading_path"],
        serde_json::json!(["Scheduler API", "tasks", "GET /tasks"]),
        "{hits:#?}"
    );
    for op in ["listTasks", "createTask", "listRuns"] {
        let hits = search(p, op);
        assert!(
            hits[0]["path"].as_str().unwrap().ends_with("openapi.json"),
            "{op}: {hits:#?}"
        );
    }

    // the same pack again: fetched and compared, nothing embedded
    nats.publish("service.register", &register);
    let again = ok_report(&ingest.next(), "service.register");
    assert_eq!(again["embedded"], 0, "{again:#}");
    assert_eq!(again["skipped"], true, "{again:#}");

    // one page changed: only its chunks embedded
    std::fs::write(
        p.join("svc/guide/retries.md"),
        "# Retries\n\nA failed run is retried five times, then the task is paused.\n",
    )
    .unwrap();
    *served.lock().unwrap() = pack_bytes(p, "2");
    nats.publish("service.register", &register);
    let changed = ok_report(&ingest.next(), "service.register");
    let page_chunks = chunks_of(p, "guide/retries.md");
    assert!(page_chunks >= 1);
    assert_eq!(
        changed["embedded"].as_u64(),
        Some(page_chunks as u64),
        "{changed:#}"
    );
    assert_eq!(changed["files"]["changed"], 1, "{changed:#}");

    // bad messages are reported and skipped
    let corrupt = serve_bytes(Arc::new(Mutex::new(b"\x1f\x8bnot a pack".to_vec())));
    let bad = [
        ("service.register", "{not json".to_string(), "is not {"),
        ("service.register", r#"{"code": "../x"}"#.into(), "not a repository code"),
        ("service.unregister", r#"{"code": "billing"}"#.into(), "unknown repository"),
        (
            "service.register",
            r#"{"code": "billing", "capabilities": ["docs_pack"], "docs_pack_url": "http://127.0.0.1:1/pack"}"#.into(),
            "cannot fetch",
        ),
        (
            "service.register",
            r#"{"code": "billing", "capabilities": ["docs_pack"], "docs_pack_url": "http://localhost:1/pack"}"#.into(),
            "refused by the pack URL policy: `localhost` is a loopback address",
        ),
        (
            "service.register",
            format!(r#"{{"code": "billing", "capabilities": ["docs_pack"], "docs_pack_url": "{corrupt}/p"}}"#),
            "pack",
        ),
        (
            "service.register",
            format!(r#"{{"code": "billing", "capabilities": ["docs_pack"], "docs_pack_url": "{url}"}}"#),
            "is the repository `scheduler`, not `billing`",
        ),
    ];
    for (subject, payload, want) in &bad {
        nats.publish(subject, payload);
        let e = ingest.next();
        assert_eq!(e["ok"], false, "{payload}: {e:#}");
        assert_eq!(e["subject"], *subject);
        let why = e["error"].as_str().unwrap();
        assert!(why.contains(want), "{payload}: {why}");
    }
    assert!(!p.join("idx/packs/billing").exists());

    // the NATS server restarts: the subscription comes back
    nats.restart();
    ingest.wait_log("connected to NATS", 2);
    // one outcome per gateway.online (one known pack): publish until one comes back, then
    // read the outcome of every other one published
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut published = 0;
    let online = loop {
        nats.publish("gateway.online", "");
        published += 1;
        if let Ok(e) = ingest.events.recv_timeout(Duration::from_secs(2)) {
            break e;
        }
        assert!(Instant::now() < deadline, "no event after the restart");
    };
    // every known pack pulled again: unchanged
    assert_eq!(ok_report(&online, "gateway.online")["embedded"], 0);
    for _ in 1..published {
        let e = ingest.events.recv_timeout(Duration::from_secs(30));
        if let Ok(e) = e {
            assert_eq!(ok_report(&e, "gateway.online")["embedded"], 0);
        }
    }

    // unregisters: none of its documents are returned, the other repository stays
    nats.publish("service.unregister", r#"{"code": "scheduler"}"#);
    let gone = ok_report(&ingest.next(), "service.unregister");
    assert_eq!(gone["files"]["removed"], 3, "{gone:#}");
    for q in ["list scheduled tasks", "listTasks", "retried"] {
        let hits = search(p, q);
        assert!(
            hits.iter()
                .all(|h| h["path"].as_str().unwrap().ends_with("deploy.md")),
            "{q}: {hits:#?}"
        );
    }
    assert_eq!(
        search(p, "blue-green deployments")[0]["path"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next(),
        Some("deploy.md")
    );
    assert!(!p.join("idx/packs/scheduler").exists());
    let sources = std::fs::read_to_string(p.join("idx/packs/.sources.json")).unwrap();
    assert!(!sources.contains("scheduler"), "{sources}");
    // SIGTERM stops it cleanly
    let killed = Command::new("kill")
        .arg(ingest.child.id().to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let mut ingest = ingest;
    let status = ingest.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    ingest.none_pending();
}

#[test]
fn a_pack_that_cannot_be_indexed_is_neither_unpacked_nor_recorded() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    // an index of a JSONL corpus, and an index of folders one of which has gone
    std::fs::write(
        p.join("corpus.jsonl"),
        "{\"_id\": \"d1\", \"title\": \"Cron\", \"text\": \"cron expressions\"}\n",
    )
    .unwrap();
    let o = docfuse(
        p,
        &[
            "index",
            "--no-embeddings",
            "--index",
            "jidx",
            "--jsonl",
            "corpus.jsonl",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for d in ["own", "gone"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
        std::fs::write(p.join(d).join("a.md"), "# A\n\nA page.\n").unwrap();
    }
    let o = docfuse(
        p,
        &["index", "--no-embeddings", "--index", "midx", "own", "gone"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::remove_dir_all(p.join("gone")).unwrap();
    service_docs(&p.join("svc"));
    let url = format!(
        "{}/pack",
        serve_bytes(Arc::new(Mutex::new(pack_bytes(p, "1"))))
    );
    let register = format!(
        r#"{{"code": "scheduler", "capabilities": ["docs_pack"], "docs_pack_url": "{url}"}}"#
    );
    let nats = Nats::start(&bin);
    for (index, why) in [("jidx", "JSONL corpus"), ("midx", "is missing")] {
        let ingest = Ingest::start(p, &nats, index);
        nats.publish("service.register", &register);
        let e = ingest.next();
        assert_eq!(e["ok"], false, "{index}: {e:#}");
        assert!(e["error"].as_str().unwrap().contains(why), "{index}: {e:#}");
        assert!(!p.join(index).join("packs/scheduler").exists(), "{index}");
        assert!(
            !p.join(index).join("packs/.sources.json").exists(),
            "{index}"
        );
        // nothing known to pull again, nothing to unregister
        nats.publish("gateway.online", "");
        nats.publish("service.unregister", r#"{"code": "scheduler"}"#);
        let e = ingest.next();
        assert_eq!(e["subject"], "service.unregister", "{index}: {e:#}");
        assert!(
            e["error"].as_str().unwrap().contains("unknown repository"),
            "{e:#}"
        );
    }
}

/// Issue 42 item 1: `ingest --index postgres://…` — a registered pack is published into
/// the database (with vectors) and every reader finds it; the same pack again publishes
/// nothing and embeds nothing; unregistering drops that repository's documents only.
#[test]
fn ingest_publishes_packs_into_a_postgresql_index() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let Some(db) = database() else {
        return;
    };
    let url = with_schema(&db, "ingest");
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (writer, ingester, reader) = (p.join("writer"), p.join("ingester"), p.join("reader"));
    // another repository, indexed from a folder by another writer
    std::fs::create_dir_all(p.join("own")).unwrap();
    std::fs::write(
        p.join("own/deploy.md"),
        "# Deployments\n\nRoll out a release with blue-green deployments.\n",
    )
    .unwrap();
    let cache = |c: &Path| [("DOCFUSE_PG_CACHE", c.to_str().unwrap().to_string())];
    let with = |c: &Path, args: &[&str]| {
        let env = cache(c);
        docfuse_env(p, args, &[(env[0].0, env[0].1.as_str())])
    };
    let o = with(&writer, &["index", "--index", &url, "own"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_served, register) = scheduler_pack(p);
    let nats = Nats::start(&bin);
    let ingest = Ingest::start_with(p, &nats, &url, &[("DOCFUSE_PG_CACHE", &ingester)]);
    ingest.wait_log("ingesting into `postgres://", 1);
    let top = |q: &str| -> Vec<String> {
        let o = with(
            &reader,
            &["search", "--index", &url, "--json", "-n", "5", q],
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        v["results"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| r["path"].as_str().unwrap_or("").to_string())
            .collect()
    };

    nats.publish("service.register", &register);
    let first = ok_report(&ingest.next(), "service.register");
    assert!(first["embedded"].as_u64().unwrap() >= 5, "{first:#}");
    assert!(
        first["index"].as_str().unwrap().starts_with("postgres://"),
        "{first:#}"
    );
    ingest.wait_log("published generation 2", 1);
    assert!(top("list scheduled tasks")[0].ends_with("openapi.json"));
    assert!(top("blue-green deployments")[0].ends_with("deploy.md"));

    // the same pack again: nothing embedded, nothing published
    nats.publish("service.register", &register);
    let again = ok_report(&ingest.next(), "service.register");
    assert_eq!(again["embedded"], 0, "{again:#}");
    assert_eq!(again["skipped"], true, "{again:#}");

    // unregistered: its documents are gone from the database, the other root stays
    nats.publish("service.unregister", r#"{"code": "scheduler"}"#);
    let gone = ok_report(&ingest.next(), "service.unregister");
    assert_eq!(gone["files"]["removed"], 3, "{gone:#}");
    for q in ["list scheduled tasks", "retried"] {
        let paths = top(q);
        assert!(
            paths.iter().all(|h| h.ends_with("deploy.md")),
            "{q}: {paths:?}"
        );
    }
    assert!(top("blue-green deployments")[0].ends_with("deploy.md"));
    let v: Value =
        serde_json::from_slice(&with(&reader, &["status", "--index", &url, "--json"]).stdout)
            .unwrap();
    assert_eq!(v["documents"], 1, "{v:#}");
}

/// Issue 42 item 4: with JetStream on the server, an event published while the ingester
/// is stopped is handled when it starts again (a durable consumer, acknowledged events),
/// and ingestion goes on across a NATS restart.
#[test]
fn with_jetstream_no_event_is_lost_while_the_ingester_is_down() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    service_docs(&p.join("svc"));
    let served = Arc::new(Mutex::new(pack_bytes(p, "1")));
    let url = format!("{}/api/v1/system/docs/pack", serve_bytes(served.clone()));
    let register = format!(
        r#"{{"code": "scheduler", "capabilities": ["docs_pack"], "docs_pack_url": "{url}"}}"#
    );
    let mut nats = Nats::start_jetstream(&bin, &p.join("js"));
    let ingest = Ingest::start(p, &nats, "idx");
    ingest.wait_log("JetStream durable consumer", 1);
    // the start's pull (nothing known yet) reports nothing; the register is handled
    nats.publish("service.register", &register);
    let first = ok_report(&ingest.next(), "service.register");
    assert!(first["files"]["added"].as_u64().unwrap() >= 3, "{first:#}");
    // stopped (SIGTERM: the event's acknowledgement is on the server before it exits)
    let mut ingest = ingest;
    let term = Command::new("kill")
        .arg(ingest.child.id().to_string())
        .status()
        .unwrap();
    assert!(term.success());
    assert!(ingest.child.wait().unwrap().success());

    // published while no ingester runs: kept in the stream
    nats.publish("service.unregister", r#"{"code": "scheduler"}"#);
    let ingest = Ingest::start(p, &nats, "idx");
    // the start pulls the known pack (unchanged), then the waiting unregister is handled
    let pulled = ok_report(&ingest.next(), "gateway.online (start)");
    assert_eq!(pulled["embedded"], 0, "{pulled:#}");
    let gone = ok_report(&ingest.next(), "service.unregister");
    assert_eq!(gone["files"]["removed"], 3, "{gone:#}");
    assert!(search(p, "list scheduled tasks").is_empty());

    // the NATS server restarts (its store kept): the consumer resumes
    nats.restart();
    ingest.wait_log("connected to NATS", 2);
    // async-nats pulls again within its retry interval (up to ~35 s) after a failed pull
    let deadline = Instant::now() + Duration::from_secs(90);
    let back = loop {
        nats.publish("service.register", &register);
        if let Ok(e) = ingest.events.recv_timeout(Duration::from_secs(3)) {
            break e;
        }
        assert!(Instant::now() < deadline, "no event after the restart");
    };
    let again = ok_report(&back, "service.register");
    assert!(again["files"]["added"].as_u64().unwrap() >= 3, "{again:#}");
    assert!(search(p, "list scheduled tasks")[0]["path"]
        .as_str()
        .unwrap()
        .ends_with("openapi.json"));
}

/// The scheduler service's docs pack (version 1) served over HTTP: the bytes served
/// (swap them for another version) and its `service.register` message.
fn scheduler_pack(p: &Path) -> (Arc<Mutex<Vec<u8>>>, String) {
    service_docs(&p.join("svc"));
    let served = Arc::new(Mutex::new(pack_bytes(p, "1")));
    let pack_url = format!("{}/api/v1/system/docs/pack", serve_bytes(served.clone()));
    let register = format!(
        r#"{{"code": "scheduler", "capabilities": ["http", "docs_pack"], "docs_pack_url": "{pack_url}"}}"#
    );
    (served, register)
}

/// Issue 42, item 2, with ingestion: an ingester that leaves embedding to workers
/// (`--max-chunks 0`) publishes a pack's lexical index at once, then — within its next
/// check — the vectors an embedding worker made, embedding none itself.
#[test]
fn an_ingester_publishes_what_embedding_workers_make() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let Some(db) = database() else {
        return;
    };
    let url = with_schema(&db, "ingestw");
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (ingester, reader, worker) = (p.join("ingester"), p.join("reader"), p.join("worker"));
    let (_served, register) = scheduler_pack(p);
    let nats = Nats::start(&bin);
    let ingest = Ingest::start_args(
        p,
        &nats,
        &url,
        &[("DOCFUSE_PG_CACHE", &ingester)],
        &["--max-chunks", "0"],
    );
    ingest.wait_log("ingesting into `postgres://", 1);
    let top = |mode: &str| -> Vec<String> {
        let o = docfuse_env(
            p,
            &[
                "search",
                "--index",
                &url,
                "--json",
                "--mode",
                mode,
                "list scheduled tasks",
            ],
            &[("DOCFUSE_PG_CACHE", reader.to_str().unwrap())],
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        v["results"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| r["path"].as_str().unwrap_or("").to_string())
            .collect()
    };
    nats.publish("service.register", &register);
    let first = ok_report(&ingest.next(), "service.register");
    assert_eq!(first["embedded"], 0, "{first:#}");
    assert!(first["pending"].as_u64().unwrap() >= 5, "{first:#}");
    assert!(
        top("lexical")[0].ends_with("openapi.json"),
        "lexical at once"
    );

    let o = docfuse_env(
        p,
        &[
            "embed-worker",
            "--index",
            &url,
            "--once",
            "--json",
            "--batch",
            "1024",
        ],
        &[("DOCFUSE_PG_CACHE", worker.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let done: Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert!(done["total"].as_u64().unwrap() >= 5, "{done}");
    assert_eq!(done["waiting"], 0, "{done}");

    let published = ingest.next();
    assert_eq!(
        (&published["ok"], &published["subject"]),
        (&json!(true), &json!("vectors")),
        "{published:#}"
    );
    assert_eq!(published["report"]["embedded"], 0, "{published:#}");
    assert_eq!(published["report"]["pending"], 0, "{published:#}");
    assert!(
        top("vector")[0].ends_with("openapi.json"),
        "{:?}",
        top("vector")
    );
}

/// The ledger service's docs pack, version `v`, whose one page says `text`.
fn ledger_pack(p: &Path, v: &str, text: &str) -> Vec<u8> {
    let dir = p.join("ledger");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("balances.md"), format!("# Balances\n\n{text}\n")).unwrap();
    let out = format!("ledger-{v}.tar.gz");
    let args = [
        "pack",
        "ledger",
        "-o",
        &out,
        "--repo",
        "ledger",
        "--version",
        v,
    ];
    let o = docfuse(p, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::read(p.join(out)).unwrap()
}

/// The `service.register` messages of the ledger service's version 1 ("quarterly"),
/// served `slow`ly, and version 2 ("monthly"), served at once.
fn ledger_registers(p: &Path, slow: Duration) -> (String, String) {
    let v1 = ledger_pack(p, "1", "The ledger keeps quarterly balances.");
    let v2 = ledger_pack(p, "2", "The ledger keeps monthly balances.");
    let register = |base: String| {
        format!(
            r#"{{"code": "ledger", "capabilities": ["docs_pack"], "docs_pack_url": "{base}/pack"}}"#
        )
    };
    (
        register(serve_bytes_after(Arc::new(Mutex::new(v1)), slow)),
        register(serve_bytes(Arc::new(Mutex::new(v2)))),
    )
}

/// [`ledger_registers`] (version 1 served 3 s late) and a JetStream nats-server.
fn ledger_on_jetstream(bin: &Path, p: &Path) -> (String, String, Nats) {
    let (slow_v1, v2) = ledger_registers(p, Duration::from_secs(3));
    (slow_v1, v2, Nats::start_jetstream(bin, &p.join("js")))
}

/// The index `idx` holds the ledger's version 2, and nothing of version 1.
#[track_caller]
fn holds_ledger_version_2(p: &Path) {
    let top = search(p, "monthly balances");
    assert!(
        top[0]["path"].as_str().unwrap().ends_with("balances.md"),
        "{top:#?}"
    );
    let args = ["search", "--index", "idx", "--mode", "lexical", "quarterly"];
    let o = docfuse(p, &args);
    assert_eq!(o.status.code(), Some(1), "version 1: {}", stdout(&o));
}

/// Issue 42 item 4: packs are fetched side by side, so a slow pack URL holds up only its
/// own service (the old ingester handled events one at a time, in arrival order), and
/// one service's events are applied in the order they were published, whichever fetch
/// ends first.
#[test]
fn a_slow_pack_holds_up_only_its_own_service_whose_events_stay_in_order() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (_served, scheduler) = scheduler_pack(p);
    let (slow_v1, v2) = ledger_registers(p, Duration::from_secs(4));
    let nats = Nats::start_jetstream(&bin, &p.join("js"));
    let ingest = Ingest::start(p, &nats, "idx");
    ingest.wait_log("JetStream durable consumer", 1);
    nats.publish("service.register", &slow_v1);
    nats.publish("service.register", &scheduler);
    nats.publish("service.register", &v2);
    let handled: Vec<Value> = (0..3).map(|_| ingest.next()).collect();
    let codes: Vec<&str> = handled
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["scheduler", "ledger", "ledger"], "{handled:#?}");
    assert!(handled.iter().all(|e| e["ok"] == true), "{handled:#?}");
    // the slow version 1 first, then version 2 over it
    let files = |e: &Value, what: &str| e["report"]["files"][what].clone();
    assert_eq!(files(&handled[1], "added"), 1, "{:#}", handled[1]);
    assert_eq!(files(&handled[2], "changed"), 1, "{:#}", handled[2]);
    holds_ledger_version_2(p);
}

/// Issue 42 item 4: an event delivered again after a crash is not applied over a newer
/// event of its service. The killed ingester held ledger version 1 (its pack slow to
/// come); version 2, published after, is applied by the next ingester at once; version 1
/// comes back once its ack wait is over and is skipped, by its stream sequence.
#[test]
fn an_event_delivered_again_after_a_crash_is_not_applied_over_a_newer_one() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (slow_v1, v2, nats) = ledger_on_jetstream(&bin, p);
    let wait = [("DOCFUSE_INGEST_ACK_WAIT_S", Path::new("6"))];
    let mut first = Ingest::start_with(p, &nats, "idx", &wait);
    first.wait_log("JetStream durable consumer", 1);
    nats.publish("service.register", &slow_v1);
    std::thread::sleep(Duration::from_millis(800));
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    nats.publish("service.register", &v2);
    let second = Ingest::start_with(p, &nats, "idx", &wait);
    let applied = ok_code(&second.next(), "ledger");
    assert_eq!(applied["report"]["files"]["added"], 1, "{applied:#}");
    let skipped = ok_code(&second.next(), "ledger");
    assert!(
        skipped["note"]
            .as_str()
            .unwrap()
            .contains("older than the event"),
        "{skipped:#}"
    );
    holds_ledger_version_2(p);
}

#[track_caller]
fn ok_code(e: &Value, code: &str) -> Value {
    assert_eq!(
        (&e["ok"], &e["code"]),
        (&json!(true), &json!(code)),
        "{e:#}"
    );
    e.clone()
}

/// The durable consumer an older docfuse made (one event in hand) is updated in place to
/// hold [`IN_HAND`]-many, keeping its position: an event published while no ingester ran
/// is still handled.
#[test]
fn a_consumer_of_one_event_at_a_time_is_updated_in_place() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (_served, register) = scheduler_pack(p);
    let nats = Nats::start_jetstream(&bin, &p.join("js"));
    let ingest = Ingest::start(p, &nats, "idx");
    ingest.wait_log("JetStream durable consumer", 1);
    let name = {
        let log = ingest.log.lock().unwrap();
        let line = log.iter().find(|l| l.contains("durable consumer")).unwrap();
        line.split('`')
            .find(|w| w.starts_with("docfuse-ingest-"))
            .unwrap()
            .to_string()
    };
    drop(ingest);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pending = |set: Option<i64>| -> i64 {
        rt.block_on(async {
            let client = async_nats::connect(nats.url()).await.unwrap();
            let js = async_nats::jetstream::new(client);
            let stream = js.get_stream("DOCFUSE_REGISTRY").await.unwrap();
            let c: async_nats::jetstream::consumer::PullConsumer =
                stream.get_consumer(&name).await.unwrap();
            let mut config = c.cached_info().config.clone();
            if let Some(n) = set {
                config.max_ack_pending = n;
                let updated = stream.create_consumer(config).await.unwrap();
                return updated.cached_info().config.max_ack_pending;
            }
            config.max_ack_pending
        })
    };
    assert_eq!(pending(None), 256);
    assert_eq!(pending(Some(1)), 1, "as an older docfuse made it");
    nats.publish("service.register", &register);
    let ingest = Ingest::start(p, &nats, "idx");
    ok_report(&ingest.next(), "service.register");
    assert_eq!(pending(None), 256);
}

/// SIGTERM to `ingest`; it exits at once (0) whatever fetch is under way.
fn terminate(ingest: &mut Ingest) {
    let t = Instant::now();
    let term = Command::new("kill")
        .arg(ingest.child.id().to_string())
        .status()
        .unwrap();
    assert!(term.success());
    assert!(ingest.child.wait().unwrap().success());
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
}

/// Issue 42 item 4: a stop hands every event in hand back — with JetStream they are
/// delivered to the next start, each service's in order; with plain subscriptions they
/// cannot be, and are counted as lost.
#[test]
fn a_stop_hands_back_the_events_in_hand_or_counts_them_lost() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let (slow_v1, v2, nats) = ledger_on_jetstream(&bin, p);
    let mut first = Ingest::start(p, &nats, "idx");
    first.wait_log("JetStream durable consumer", 1);
    nats.publish("service.register", &slow_v1);
    nats.publish("service.register", &v2);
    std::thread::sleep(Duration::from_millis(800));
    terminate(&mut first);
    let second = Ingest::start(p, &nats, "idx");
    let versions: Vec<Value> = (0..2)
        .map(|_| ok_code(&second.next(), "ledger")["version"].clone())
        .collect();
    assert_eq!(versions, [json!("1"), json!("2")]);
    holds_ledger_version_2(p);

    let plain = Nats::start(&bin);
    let mut third = Ingest::start(p, &plain, "idx2");
    nats_ready(&third);
    plain.publish("service.register", &slow_v1);
    plain.publish("service.register", &v2);
    std::thread::sleep(Duration::from_millis(800));
    terminate(&mut third);
    let lost = third.next();
    assert_eq!(
        (&lost["lost"], &lost["lost_total"]),
        (&json!(2), &json!(2)),
        "{lost}"
    );
    third.wait_log("cannot be handed back", 1);
}

/// Waits for the plain subscriptions' banner.
fn nats_ready(ingest: &Ingest) {
    ingest.wait_log("plain subscriptions", 1);
}

/// `docfuse ingest ARGS` that must end within 20 s (a refused start); its output.
fn ingest_refused(p: &Path, args: &[&str], cache: &Path) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .arg("ingest")
        .args(args)
        .current_dir(p)
        .env("DOCFUSE_PG_CACHE", cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("a second ingester of one index was not refused");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// One ingester per index (two would share the durable consumer, each taking some of a
/// service's events): a second `ingest` of the same folder, however spelled, or of the
/// same database from another host's cache, is refused at once, saying why.
#[test]
fn a_second_ingester_of_one_index_is_refused() {
    let Some(bin) = required_nats_server() else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    let nats = Nats::start_jetstream(&bin, &p.join("js"));
    let first = Ingest::start(p, &nats, "idx");
    first.wait_log("JetStream durable consumer", 1);
    let spelled = p.join("idx/.");
    let args = ["--index", spelled.to_str().unwrap(), "--nats", &nats.url()];
    let o = ingest_refused(p, &args, &p.join("cache"));
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("another `docfuse ingest`"),
        "{}",
        stderr(&o)
    );

    let Some(db) = database() else {
        return;
    };
    let url = with_schema(&db, "ingestlock");
    let on_db = Ingest::start_with(p, &nats, &url, &[("DOCFUSE_PG_CACHE", &p.join("host-a"))]);
    on_db.wait_log("JetStream durable consumer", 1);
    let o = ingest_refused(
        p,
        &["--index", &url, "--nats", &nats.url()],
        &p.join("host-b"),
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("another `docfuse ingest`"),
        "{}",
        stderr(&o)
    );
}
