//! `--index postgres://…` against a real PostgreSQL with pgvector: index → search (same
//! results as a folder index of the same roots) → edit/add/delete → refresh (only the
//! changed chunks embedded) → a second host's reader and writer; the writer lock; errors
//! that never show the password.
//!
//! Needs a server: `DOCFUSE_TEST_DATABASE_URL` (as `scripts/test` sets from `scripts/pg
//! up`); without it the tests say so and pass, unless `DOCFUSE_REQUIRE_PG` is set.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The test database with a schema of its own (`name_…`), a temporary folder and a copy
/// of the sample docs in it (`docs/`); `None` without a test database.
fn fixture(name: &str) -> Option<(String, tempfile::TempDir, std::path::PathBuf)> {
    let url = with_schema(&database()?, name);
    let t = tempfile::tempdir().unwrap();
    let docs = t.path().join("docs");
    copy_tree(&sample_docs(), &docs);
    Some((url, t, docs))
}

fn run(cwd: &Path, cache: &Path, args: &[&str]) -> std::process::Output {
    docfuse_env(cwd, args, &[("DOCFUSE_PG_CACHE", cache.to_str().unwrap())])
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}\n{}", stdout(o), stderr(o));
}

/// (path, line, score to 4 decimals) of a search's results.
fn results(o: &std::process::Output) -> Vec<(String, u64, String)> {
    ok(o);
    let v: Value = serde_json::from_str(&stdout(o)).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["start_line"].as_u64().unwrap_or(0),
                format!("{:.4}", r["score"].as_f64().unwrap()),
            )
        })
        .collect()
}

/// `index --no-embeddings` of `docs` into `url` from `cwd` with the cache `cache`.
fn index_lexically(cwd: &Path, cache: &Path, url: &str, docs: &Path) -> std::process::Output {
    run(
        cwd,
        cache,
        &[
            "index",
            "--no-embeddings",
            "--index",
            url,
            docs.to_str().unwrap(),
        ],
    )
}

/// A lexical search through `--index url` with the cache `cache` (JSON output).
fn lexical_search(cwd: &Path, cache: &Path, url: &str, q: &str) -> std::process::Output {
    run(
        cwd,
        cache,
        &["search", "--index", url, "--json", "--mode", "lexical", q],
    )
}

/// A lexical search's results through `--index url` with the cache `cache`.
fn lexical(cwd: &Path, cache: &Path, url: &str, q: &str) -> Vec<(String, u64, String)> {
    results(&lexical_search(cwd, cache, url, q))
}

#[test]
fn index_search_refresh_and_a_second_host_on_postgres() {
    let Some((url, t, docs)) = fixture("life") else {
        return;
    };
    let host_a = t.path().join("host-a");
    let host_b = t.path().join("host-b");
    let folder = t.path().join("folder");

    let o = run(
        t.path(),
        &host_a,
        &["index", "--index", &url, docs.to_str().unwrap()],
    );
    ok(&o);
    assert!(
        stderr(&o).contains("published generation 1"),
        "{}",
        stderr(&o)
    );
    ok(&run(
        t.path(),
        &host_a,
        &[
            "index",
            "--index",
            folder.to_str().unwrap(),
            docs.to_str().unwrap(),
        ],
    ));

    // The same ranking as a folder index of the same roots, lexical and hybrid.
    for mode in ["lexical", "hybrid"] {
        for q in ["define a task", "plugin init", "hangs forever"] {
            let db = results(&run(
                t.path(),
                &host_a,
                &["search", "--index", &url, "--json", "--mode", mode, q],
            ));
            let dir = results(&run(
                t.path(),
                &host_a,
                &[
                    "search",
                    "--index",
                    folder.to_str().unwrap(),
                    "--json",
                    "--mode",
                    mode,
                    q,
                ],
            ));
            assert!(!db.is_empty(), "{q}");
            assert_eq!(db, dir, "{mode} {q}");
        }
    }
    // The reader's copy is lexical: the vectors stay in the database, searched there.
    assert!(
        !files_named(&host_a, "vectors.f32").is_empty(),
        "the writer folder holds its vectors"
    );
    let reader_vectors: Vec<_> = files_named(&host_a, "vectors.f32")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("/reader/"))
        .collect();
    assert!(reader_vectors.is_empty(), "{reader_vectors:?}");
    let o = run(
        t.path(),
        &host_a,
        &["search", "--index", &url, "--json", "define a task"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert!(v["degraded"].is_null(), "{v}");

    // Edit one file, add one, delete one: only their chunks are embedded.
    let cfg = docs.join("guide/configuration.md");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        format!("{text}\n## Quokka budgets\n\nA quokka budget caps each task.\n"),
    )
    .unwrap();
    std::fs::write(
        docs.join("zebra.md"),
        "# Zebra mode\n\nZebra mode stripes the output.\n",
    )
    .unwrap();
    std::fs::remove_file(docs.join("troubleshooting.md")).unwrap();
    let o = run(t.path(), &host_a, &["refresh", "--index", &url, "--json"]);
    ok(&o);
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let c = &r["chunk_diff"];
    let changed = c["added"].as_u64().unwrap() + c["changed"].as_u64().unwrap();
    assert!(changed >= 2, "{r}");
    assert_eq!(r["embedded"].as_u64().unwrap(), changed, "{r}");
    let err = stderr(&o);
    assert!(
        err.contains("published generation 2") && err.contains("documents +2 -1"),
        "{err}"
    );

    // Another host: its reader syncs to generation 2 without a restart of anything, and
    // its hybrid ranking is the folder index's after the same edits.
    ok(&run(
        t.path(),
        &host_a,
        &["refresh", "--index", folder.to_str().unwrap()],
    ));
    for q in ["quokka budget per task", "zebra stripes", "define a task"] {
        let hybrid = |index: &str| {
            results(&run(
                t.path(),
                &host_b,
                &["search", "--index", index, "--json", "--mode", "hybrid", q],
            ))
        };
        assert_eq!(hybrid(&url), hybrid(folder.to_str().unwrap()), "{q}");
    }
    let zebra = lexical(t.path(), &host_b, &url, "zebra stripes");
    assert_eq!(zebra[0].0, "zebra.md");
    let quokka = lexical(t.path(), &host_b, &url, "quokka budget");
    assert_eq!(quokka[0].0, "guide/configuration.md");
    let o = run(
        t.path(),
        &host_b,
        &[
            "search",
            "--index",
            &url,
            "--json",
            "--mode",
            "lexical",
            "hangs forever",
        ],
    );
    assert!(
        o.status.code() == Some(1) || !stdout(&o).contains("troubleshooting.md"),
        "{}",
        stdout(&o)
    );

    // Its writer starts from the database: every vector is taken from it, none embedded.
    std::fs::write(
        docs.join("zebra.md"),
        "# Zebra mode\n\nZebra mode stripes the output twice.\n",
    )
    .unwrap();
    let o = run(t.path(), &host_b, &["refresh", "--index", &url]);
    ok(&o);
    let err = stderr(&o);
    assert!(err.contains("published generation 3"), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("published generation 3"))
        .unwrap();
    assert!(line.ends_with(", 1 embedded"), "{line}");

    // Host A's reader follows; its writer is behind and catches up before writing.
    let again = lexical(t.path(), &host_a, &url, "stripes twice");
    assert_eq!(again[0].0, "zebra.md");
    let o = run(t.path(), &host_a, &["refresh", "--index", &url]);
    ok(&o);
    assert!(
        stderr(&o).contains("nothing new: generation 3"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn writer_lock_and_clear_errors() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "lock");
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    let docs = sample_docs();

    // A reader before any index: a clear error, exit 2.
    let o = run(t.path(), &cache, &["search", "--index", &url, "task"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no docfuse index"), "{}", stderr(&o));

    // Another writer holds the lock: --no-wait fails at once and says so.
    let loc = docfuse::pgstore::PgLocation::parse(&url).unwrap();
    let held = docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        docfuse::pgstore::lock_writer(&c, &loc, true).await?;
        let o = run(
            t.path(),
            &cache,
            &[
                "index",
                "--no-wait",
                "--no-embeddings",
                "--index",
                &url,
                docs.to_str().unwrap(),
            ],
        );
        // --wait-timeout waits that long, then fails and says how long it waited
        let started = std::time::Instant::now();
        let timed = run(
            t.path(),
            &cache,
            &[
                "index",
                "--wait-timeout",
                "0.6",
                "--no-embeddings",
                "--index",
                &url,
                docs.to_str().unwrap(),
            ],
        );
        let waited = started.elapsed();
        drop(c);
        Ok((o, timed, waited))
    })
    .unwrap();
    let (held, timed, waited) = held;
    assert_eq!(held.status.code(), Some(2), "{}", stderr(&held));
    assert!(
        stderr(&held).contains("another docfuse is writing"),
        "{}",
        stderr(&held)
    );
    assert_eq!(timed.status.code(), Some(2), "{}", stderr(&timed));
    assert!(
        stderr(&timed).contains("still writing after 0.6 s"),
        "{}",
        stderr(&timed)
    );
    assert!(
        waited >= std::time::Duration::from_millis(600),
        "{waited:?}"
    );
    ok(&run(
        t.path(),
        &cache,
        &[
            "index",
            "--no-wait",
            "--no-embeddings",
            "--index",
            &url,
            docs.to_str().unwrap(),
        ],
    ));

    // A server that is not there: the error names the URL without its password.
    let o = run(
        t.path(),
        &cache,
        &[
            "status",
            "--index",
            "postgres://ann:sekret@127.0.0.1:1/docs",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("cannot connect to `postgres://ann:***@127.0.0.1:1/docs`"),
        "{err}"
    );
    assert!(!err.contains("sekret"), "{err}");
}

/// A `docfuse serve` on a database index with its own cache, killed when dropped.
struct Server {
    child: std::process::Child,
    addr: String,
}

impl Server {
    fn start(url: &str, cache: &Path) -> Server {
        Server::polling(url, cache, 200)
    }

    /// A server whose follower checks the database every `poll_ms`.
    fn polling(url: &str, cache: &Path, poll_ms: u64) -> Server {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
            .args(["serve", "--addr", "127.0.0.1:0", "--index", url])
            .env("DOCFUSE_PG_CACHE", cache)
            .env("DOCFUSE_PG_POLL_MS", poll_ms.to_string())
            .env_remove("DOCFUSE_LOG")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let addr = served_addr(&mut err);
        std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
        Server { child, addr }
    }

    fn top(&self, q: &str) -> String {
        let body = format!(r#"{{"query": "{q}", "limit": 3, "mode": "lexical"}}"#);
        let (_, v) = exchange(&self.addr, "POST", "/v1/search", Some(&body));
        v["results"][0]["path"].as_str().unwrap_or("").to_string()
    }
}

impl Server {
    /// The results of a vector-mode search for `q` (at most 50).
    fn vector_hits(&self, q: &str) -> usize {
        let body = format!(r#"{{"query": "{q}", "limit": 50, "mode": "vector"}}"#);
        let (_, v) = exchange(&self.addr, "POST", "/v1/search", Some(&body));
        v["results"].as_array().map_or(0, |r| r.len())
    }

    fn status(&self) -> Value {
        exchange(&self.addr, "GET", "/v1/status", None).1
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_follows_a_publish_that_only_fills_in_vectors() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "fill");
    let t = tempfile::tempdir().unwrap();
    let writer = t.path().join("writer");
    let docs = sample_docs();
    // two chunks embedded, the others left pending
    ok(&run(
        t.path(),
        &writer,
        &[
            "index",
            "--max-chunks",
            "2",
            "--index",
            &url,
            docs.to_str().unwrap(),
        ],
    ));
    let server = Server::start(&url, &t.path().join("host"));
    let v = server.status();
    assert_eq!(v["vectors"]["embedded"], 2, "{v}");
    assert!(v["vectors"]["pending"].as_u64().unwrap() > 0, "{v}");
    assert!(
        v["vectors"]["store"]
            .as_str()
            .unwrap()
            .contains("PostgreSQL"),
        "{v}"
    );
    let before = server.vector_hits("task");
    assert!(before <= 2, "{before}");
    // the text is unchanged: the cache's folder index is not rebuilt, yet the server
    // searches the filled-in vectors
    let o = run(t.path(), &writer, &["refresh", "--index", &url]);
    ok(&o);
    assert!(
        stderr(&o).contains("published generation 2"),
        "{}",
        stderr(&o)
    );
    eventually("the server searches the new vectors", || {
        server.vector_hits("task") > before
    });
    let v = server.status();
    assert_eq!(v["vectors"]["pending"], 0, "{v}");
    // the database's generation, though the cache's folder index was not rebuilt
    assert_eq!(v["generation"], 2, "{v}");
}

/// The database generation a writer's `refresh`/`index` says it published.
fn published_generation(o: &std::process::Output) -> u64 {
    ok(o);
    let err = stderr(o);
    let at = err.find("published generation ").expect(&err) + "published generation ".len();
    err[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|g| g.parse().ok())
        .expect(&err)
}

/// Issue 42: while the database publishes new text, a server's answers (search with
/// content, passages) carry the generation whose text they give — also when another
/// process of the host syncs the shared cache ahead of the server's own follower.
#[test]
fn answers_name_the_generation_whose_text_they_give_while_publishes_go_on() {
    let Some((url, t, docs)) = fixture("gens") else {
        return;
    };
    let page = |k: u64| format!("# Quokka\n\nThe quokka note says version {k}.\n");
    std::fs::write(docs.join("quokka.md"), page(0)).unwrap();
    let writer = t.path().join("writer");
    let host = t.path().join("host");
    let first = published_generation(&index_lexically(t.path(), &writer, &url, &docs));
    let mut version_of = std::collections::HashMap::from([(first, 0u64)]);
    // a slow follower: the host's cache moves ahead of it (a CLI search syncs it)
    let server = Server::polling(&url, &host, 1500);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients = quokka_clients(&server.addr, &stop);
    for k in 1..=5 {
        std::fs::write(docs.join("quokka.md"), page(k)).unwrap();
        let g = published_generation(&run(t.path(), &writer, &["refresh", "--index", &url]));
        version_of.insert(g, k);
        let o = lexical_search(t.path(), &host, &url, "quokka note");
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["generation"], g, "{v}");
        assert!(
            v["results"][0]["snippet"]
                .as_str()
                .unwrap()
                .contains(&format!("version {k}")),
            "{v}"
        );
        std::thread::sleep(std::time::Duration::from_millis(700));
    }
    std::thread::sleep(std::time::Duration::from_millis(1600));
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_answers_match_their_generation(clients, &version_of);
    // `verify` names the database's generation, not the copy folder's own count
    let last = version_of.keys().max().unwrap();
    let o = run(t.path(), &host, &["verify", "--index", &url]);
    ok(&o);
    assert!(
        stdout(&o).starts_with(&format!("ok: this host's copy of generation {last} (`")),
        "{}",
        stdout(&o)
    );
    let o = run(t.path(), &host, &["verify", "--json", "--index", &url]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["generation"], *last, "{v}");
}

#[test]
fn a_writer_whose_connection_drops_mid_publish_publishes_nothing() {
    let Some((url, t, docs)) = fixture("drop") else {
        return;
    };
    let writer = t.path().join("writer");
    let index = |extra: &[(&str, &str)]| {
        docfuse_env(
            t.path(),
            &["refresh", "--no-embeddings", "--index", &url],
            &[&[("DOCFUSE_PG_CACHE", writer.to_str().unwrap())], extra].concat(),
        )
    };
    ok(&index_lexically(t.path(), &writer, &url, &docs));
    // the writer pauses with its publish written, not committed; its connection (which
    // holds the writer lock and the transaction) is terminated by the server meanwhile
    let failed_refresh = || {
        let killer = {
            let url = url.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(1500));
                // this test's writer only: the holder of this schema's writer lock
                let schema = url.rsplit("schema=").next().unwrap().to_string();
                let key = docfuse::pgstore::lock_key(&schema);
                sql(
                    &url,
                    &format!(
                        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'
                         AND granted AND ((classid::bigint << 32) | objid::bigint) = {key}"
                    ),
                );
            })
        };
        let o = index(&[
            ("DOCFUSE_TEST_PAUSE_AFTER", "db-before-commit"),
            ("DOCFUSE_TEST_PAUSE_MS", "4000"),
        ]);
        killer.join().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("cannot commit the publish"), "{err}");
        assert!(!err.contains("published generation"), "{err}");
    };
    let found = |q: &str| {
        let o = run(
            t.path(),
            &t.path().join("reader"),
            &["search", "--index", &url, "--json", "--mode", "lexical", q],
        );
        (o.status.code(), stdout(&o))
    };
    let refresh_json = || {
        let o = docfuse_env(
            t.path(),
            &["refresh", "--no-embeddings", "--json", "--index", &url],
            &[("DOCFUSE_PG_CACHE", writer.to_str().unwrap())],
        );
        ok(&o);
        let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
        (r, stderr(&o))
    };
    std::fs::write(docs.join("wombat.md"), "# Wombat burrows\n\nWombats dig.\n").unwrap();
    failed_refresh();
    let (code, out) = found("wombats dig");
    assert_eq!(code, Some(1), "nothing published: {out}");
    // the next refresh completes. This host's folder took the file before the database
    // failed, and is read again from the roots; diffed against the database (the
    // store), the file is new, and so are its chunks
    let (r, err) = refresh_json();
    assert!(err.contains("published generation 2"), "{err}");
    assert_eq!(r["files"]["added"], 1, "{r}");
    assert_eq!(r["chunk_diff"]["added"], 1, "{r}");
    assert_eq!(r["chunk_diff"]["removed"], 0, "{r}");
    assert_eq!(r["skipped"], false, "{r}");
    // the generation reported is the database's
    assert_eq!(r["generation"], 2, "{r}");
    assert_eq!(
        lexical(t.path(), &t.path().join("reader"), &url, "wombats dig")[0].0,
        "wombat.md"
    );
    // a file goes away again after a failed publish that took it: the database never
    // had it, and must not now
    std::fs::write(docs.join("koala.md"), "# Koala naps\n\nKoalas sleep.\n").unwrap();
    failed_refresh();
    std::fs::remove_file(docs.join("koala.md")).unwrap();
    let (r, err) = refresh_json();
    assert!(err.contains("nothing new: generation 2"), "{err}");
    assert_eq!(
        (r["skipped"].as_bool(), r["files"]["removed"].as_u64()),
        (Some(true), Some(0)),
        "{r}"
    );
    let (code, out) = found("koalas sleep");
    assert_eq!(code, Some(1), "{out}");
}

#[test]
fn two_servers_follow_a_publish_and_a_killed_writer_publishes_nothing() {
    let Some((url, t, docs)) = fixture("serve") else {
        return;
    };
    let writer = t.path().join("writer");
    ok(&index_lexically(t.path(), &writer, &url, &docs));
    let a = Server::start(&url, &t.path().join("host-a"));
    let b = Server::start(&url, &t.path().join("host-b"));
    assert_eq!(a.top("quokka"), "");

    // A writer killed after writing its publish, before the commit: nothing changes.
    std::fs::write(
        docs.join("quokka.md"),
        "# Quokka care\n\nQuokkas need shade.\n",
    )
    .unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["refresh", "--index", &url])
        .env("DOCFUSE_PG_CACHE", &writer)
        .env("DOCFUSE_TEST_PAUSE_AFTER", "db-before-commit")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _stderr = wait_paused(&mut child, "db-before-commit");
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(a.top("quokka"), "", "a killed writer published");
    let o = run(
        t.path(),
        &t.path().join("host-c"),
        &[
            "search", "--index", &url, "--json", "--mode", "lexical", "quokka",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));

    // The next refresh completes, and both servers answer with it without a restart.
    let o = run(t.path(), &writer, &["refresh", "--index", &url]);
    ok(&o);
    assert!(
        stderr(&o).contains("published generation 2"),
        "{}",
        stderr(&o)
    );
    eventually("server A follows", || a.top("quokka") == "quokka.md");
    eventually("server B follows", || b.top("quokka") == "quokka.md");
}

#[test]
fn a_database_url_is_never_opened_as_a_folder() {
    // the library opens a URL as a database (here: nothing listens, and this host has no
    // copy), never as a folder, and never shows the password
    let e = match docfuse::retriever::DocfuseRetriever::open(Path::new(
        "postgres://ann:sekret@127.0.0.1:1/docs",
    )) {
        Ok(_) => panic!("opened a database nobody serves"),
        Err(e) => e.to_string(),
    };
    assert!(
        e.contains("cannot connect to `postgres://ann:") && !e.contains("sekret"),
        "{e}"
    );
    // the commands that take folders only refuse it, without the password
    let t = tempfile::tempdir().unwrap();
    let o = docfuse(
        t.path(),
        &[
            "ingest",
            "--nats",
            "nats://127.0.0.1:1",
            "--index",
            "postgres://ann:sekret@127.0.0.1:1/docs",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!stderr(&o).contains("sekret"), "{}", stderr(&o));
    assert!(
        !t.path().join("postgres:").exists(),
        "a folder named after the URL was made"
    );
}

#[test]
fn epochs_pending_vectors_binary_bytes_and_a_writer_without_model() {
    let Some(base_url) = database() else {
        return;
    };
    let url = with_schema(&base_url, "epoch");
    let schema = url.rsplit("schema=").next().unwrap().to_string();
    let t = tempfile::tempdir().unwrap();
    let host = t.path().join("host");
    let a = t.path().join("a");
    let b = t.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(a.join("alpha.md"), "# Alpha\n\nAardvarks live in alpha.\n").unwrap();
    // a NUL byte past the binary sniffing window: PostgreSQL text would refuse it
    let mut bytes = b"# Beta\n\nBadgers live in beta.\n\n".to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 9000));
    bytes.extend(b"\n\nA nul \0 here.\n");
    std::fs::write(b.join("beta.md"), &bytes).unwrap();

    ok(&run(
        t.path(),
        &host,
        &["index", "--index", &url, a.to_str().unwrap()],
    ));
    assert_eq!(lexical(t.path(), &host, &url, "aardvarks")[0].0, "alpha.md");

    // The schema dropped and made again: this host's caches of generation 1 are not
    // taken for the new generation 1.
    sql(&url, &format!("DROP SCHEMA \"{schema}\" CASCADE"));
    ok(&run(
        t.path(),
        &host,
        &[
            "index",
            "--max-chunks",
            "1",
            "--index",
            &url,
            b.to_str().unwrap(),
        ],
    ));
    assert_eq!(lexical(t.path(), &host, &url, "badgers")[0].0, "beta.md");
    let o = lexical_search(t.path(), &host, &url, "aardvarks");
    assert_eq!(
        o.status.code(),
        Some(1),
        "the old epoch's text: {}",
        stdout(&o)
    );
    // chunks left pending by --max-chunks: readers answer (lexically), never embed
    let o = run(
        t.path(),
        &host,
        &["search", "--index", &url, "--json", "badgers"],
    );
    ok(&o);

    // A writer host without the model refuses to publish over the database's vectors.
    let bare = t.path().join("bare");
    let o = docfuse_env(
        t.path(),
        &["refresh", "--index", &url],
        &[
            ("DOCFUSE_PG_CACHE", bare.to_str().unwrap()),
            ("DOCFUSE_MODEL_DIR", "/nonexistent"),
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no model to keep them"),
        "{}",
        stderr(&o)
    );

    // search --refresh does not apply to a database
    let o = run(
        t.path(),
        &host,
        &["search", "--refresh", "--index", &url, "badgers"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does not apply to a PostgreSQL index"),
        "{}",
        stderr(&o)
    );
}

/// A TCP relay to `to` on a loopback port; `stop` closes it for good (new connections
/// are refused), as a database that went away.
struct Relay {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Relay {
    fn start(to: String) -> Relay {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = std::net::TcpStream::connect(&to) else {
                    continue;
                };
                for (mut a, mut b) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut a, &mut b);
                        let _ = b.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Relay { port, stop }
    }

    fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_reader_answers_from_its_copy_while_the_database_is_away() {
    let Some(url) = database() else {
        return;
    };
    // postgres://USER@HOST:PORT/DB → the same through a relay
    let (head, tail) = url.split_once('@').unwrap();
    let (hostport, db) = tail.split_once('/').unwrap();
    let relay = Relay::start(hostport.to_string());
    let url = with_schema(&format!("{head}@127.0.0.1:{}/{db}", relay.port), "away");
    let t = tempfile::tempdir().unwrap();
    let host = t.path().join("host");
    ok(&run(
        t.path(),
        &host,
        &["index", "--index", &url, sample_docs().to_str().unwrap()],
    ));
    assert!(!lexical(t.path(), &host, &url, "define a task").is_empty());
    relay.stop();
    // the vectors are in the database: a hybrid search answers lexically, saying why
    let o = run(
        t.path(),
        &host,
        &["search", "--index", &url, "--json", "define a task"],
    );
    ok(&o);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mode"], "lexical", "{v}");
    let why = v["degraded"].as_str().unwrap_or_default();
    assert!(why.contains("cannot be searched now"), "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
    let o = run(
        t.path(),
        &host,
        &[
            "search",
            "--index",
            &url,
            "--mode",
            "hybrid",
            "define a task",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot be searched now"),
        "{}",
        stderr(&o)
    );
    // status says the vector side is down and why, apart from staleness (nothing
    // changed on disk), and its search JSON is not stale either
    let o = run(t.path(), &host, &["status", "--index", &url, "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["vectors_usable"], false, "{v}");
    let why = v["vector_search_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("cannot connect"), "{v}");
    assert_eq!(v["fresh"], true, "{v}");
    let o = run(
        t.path(),
        &host,
        &["search", "--index", &url, "--json", "define a task"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["stale"], false, "{v}");
    let o = run(
        t.path(),
        &host,
        &[
            "search",
            "--index",
            &url,
            "--json",
            "--mode",
            "lexical",
            "define a task",
        ],
    );
    assert!(!results(&o).is_empty());
    assert!(
        stderr(&o).contains("answering from this host's copy of generation 1"),
        "{}",
        stderr(&o)
    );
    // a host without a copy gets the error
    let o = run(
        t.path(),
        &t.path().join("other"),
        &["search", "--index", &url, "task"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot connect"), "{}", stderr(&o));
}

#[test]
fn a_locked_table_is_a_bounded_wait_and_the_copy_answers() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "stall");
    let schema = url.rsplit("schema=").next().unwrap().to_string();
    let t = tempfile::tempdir().unwrap();
    let host = t.path().join("host");
    let docs = sample_docs();
    ok(&run(
        t.path(),
        &host,
        &[
            "index",
            "--no-embeddings",
            "--index",
            &url,
            docs.to_str().unwrap(),
        ],
    ));
    assert!(!lexical(t.path(), &host, &url, "define a task").is_empty());
    let loc = docfuse::pgstore::PgLocation::parse(&url).unwrap();
    let o = docfuse::pgstore::block_on(async {
        let mut c = docfuse::pgstore::connect(&loc).await?;
        let db = |e: tokio_postgres::Error| docfuse::Error::Database(e.to_string());
        let tx = c.transaction().await.map_err(db)?;
        tx.batch_execute(&format!(
            "LOCK TABLE \"{schema}\".published IN ACCESS EXCLUSIVE MODE"
        ))
        .await
        .map_err(db)?;
        let started = std::time::Instant::now();
        let o = docfuse_env(
            t.path(),
            &[
                "search",
                "--index",
                &url,
                "--json",
                "--mode",
                "lexical",
                "define a task",
            ],
            &[
                ("DOCFUSE_PG_CACHE", host.to_str().unwrap()),
                ("DOCFUSE_PG_READ_TIMEOUT_SECS", "2"),
            ],
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        drop(tx);
        Ok(o)
    })
    .unwrap();
    assert!(!results(&o).is_empty());
    let err = stderr(&o);
    assert!(
        err.contains("no answer to a read within 2 s") && err.contains("this host's copy"),
        "{err}"
    );
}

/// (root, path) → the row version (`xmin`) of every document row of `url`'s schema.
fn row_versions(url: &str) -> std::collections::BTreeMap<(String, String), String> {
    let loc = docfuse::pgstore::PgLocation::parse(url).unwrap();
    docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        let rows = c
            .query(
                &format!(
                    "SELECT root, path, xmin::text FROM \"{}\".documents",
                    loc.schema
                ),
                &[],
            )
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))?;
        Ok(rows
            .iter()
            .map(|r| ((r.get(0), r.get(1)), r.get(2)))
            .collect())
    })
    .unwrap()
}

#[test]
fn refreshing_or_dropping_root_a_never_touches_root_b() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "roots");
    let t = tempfile::tempdir().unwrap();
    let host = t.path().join("host");
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    copy_tree(&sample_docs(), &a);
    copy_tree(&sample_docs(), &b);
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    ok(&run(
        t.path(),
        &host,
        &["index", "--no-embeddings", "--index", &url, a_s, b_s],
    ));
    let before = row_versions(&url);
    let b_root = b.canonicalize().unwrap().to_str().unwrap().to_string();
    let of_b = |m: &std::collections::BTreeMap<(String, String), String>| {
        m.iter()
            .filter(|((r, _), _)| *r == b_root)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert!(!of_b(&before).is_empty());

    let cfg = a.join("guide/configuration.md");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}\nA new line in root A.\n")).unwrap();
    for args in [
        vec!["refresh", "--index", &url],
        vec!["refresh", "--index", &url, a_s],
    ] {
        ok(&run(t.path(), &host, &args));
        let after = row_versions(&url);
        assert_eq!(
            of_b(&after),
            of_b(&before),
            "{args:?} rewrote rows of root B"
        );
        std::fs::write(&cfg, format!("{text}\nAnother line in root A.\n")).unwrap();
    }
    let after = row_versions(&url);
    let a_root = a.canonicalize().unwrap().to_str().unwrap().to_string();
    let key = (a_root.clone(), "guide/configuration.md".to_string());
    assert_ne!(
        after[&key], before[&key],
        "the edited document of root A was not rewritten"
    );

    // another host, whose copy is behind and where root A does not exist, drops it:
    // one publish, and the report counts A's documents and chunks removed, B's
    // unchanged (the ids of B lose their root position prefix but are the same chunks)
    let moved = t.path().join("a-elsewhere");
    std::fs::rename(&a, &moved).unwrap();
    let o = run(
        t.path(),
        &t.path().join("other-host"),
        &["refresh", "--index", &url, "--drop-root", a_s, "--json"],
    );
    ok(&o);
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let docs_of_b = of_b(&before).len() as u64;
    assert_eq!(r["files"]["removed"], docs_of_b, "{r}");
    assert_eq!(r["files"]["unchanged"], docs_of_b, "{r}");
    assert_eq!(r["chunk_diff"]["added"], 0, "{r}");
    assert_eq!(r["chunk_diff"]["changed"], 0, "{r}");
    let total = r["chunk_diff"]["total"].as_u64().unwrap();
    assert_eq!(r["chunk_diff"]["unchanged"], total, "{r}");
    assert!(r["chunk_diff"]["removed"].as_u64().unwrap() >= total, "{r}");
    assert_eq!(r["skipped"], false, "{r}");
    assert_eq!(r["generation"], 4, "{r}");
    let dropped = row_versions(&url);
    assert!(dropped.keys().all(|(r, _)| *r != a_root));
    assert_eq!(of_b(&dropped), of_b(&before));
}

#[test]
fn refreshing_a_database_without_an_index_names_the_database() {
    let Some((url, t, _docs)) = fixture("empty") else {
        return;
    };
    let o = run(t.path(), &t.path().join("w"), &["refresh", "--index", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("no docfuse index in `{url}`"))
            && err.contains(&format!("docfuse index --index {url} <ROOT>")),
        "{err}"
    );
    assert!(!err.contains("writer/index"), "{err}");
}

#[test]
fn a_writer_behind_the_database_reports_against_it_within_its_limits() {
    let Some((url, t, docs)) = fixture("behind") else {
        return;
    };
    let (host_a, host_b) = (t.path().join("a"), t.path().join("b"));
    ok(&run(
        t.path(),
        &host_a,
        &["index", "--index", &url, docs.to_str().unwrap()],
    ));
    let cfg = docs.join("guide/configuration.md");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{text}\nWombats prefer a quiet burrow.\n")).unwrap();
    // host B has no copy: it reads the roots again, takes every unchanged vector from the
    // database, and embeds nothing past its limit
    let refresh = |extra: &[&str]| {
        let o = run(
            t.path(),
            &host_b,
            &[&["refresh", "--index", &url, "--json"], extra].concat(),
        );
        ok(&o);
        let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
        (r, stderr(&o))
    };
    let (r, err) = refresh(&["--max-chunks", "0"]);
    assert_eq!(r["files"]["changed"], 1, "{r}");
    assert_eq!(
        r["files"]["unchanged"],
        r["files"]["scanned"].as_u64().unwrap() - 1,
        "{r}"
    );
    assert_eq!(r["chunk_diff"]["changed"], 1, "{r}");
    assert_eq!(
        (r["embedded"].as_u64(), r["pending"].as_u64()),
        (Some(0), Some(1)),
        "{r}"
    );
    assert_eq!(
        (r["skipped"].as_bool(), r["generation"].as_u64()),
        (Some(false), Some(2)),
        "{r}"
    );
    let total = r["chunks"].as_u64().unwrap();
    assert!(
        err.contains(&format!(
            "{} vector(s) taken from the database, 0 embedded",
            total - 1
        )),
        "{err}"
    );
    assert_eq!(err.matches("published generation").count(), 1, "{err}");
    // its next refresh embeds the one left
    let (r, _) = refresh(&[]);
    assert_eq!(r["files"]["changed"], 0, "{r}");
    assert_eq!(
        (r["embedded"].as_u64(), r["pending"].as_u64()),
        (Some(1), Some(0)),
        "{r}"
    );
    assert_eq!(r["generation"], 3, "{r}");
    // and host A, behind now, finds nothing new and embeds nothing
    let o = run(t.path(), &host_a, &["refresh", "--index", &url, "--json"]);
    ok(&o);
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (r["skipped"].as_bool(), r["embedded"].as_u64()),
        (Some(true), Some(0)),
        "{r}"
    );
    assert_eq!(r["chunk_diff"]["unchanged"], total, "{r}");
    assert!(
        stderr(&o).contains("nothing new: generation 3"),
        "{}",
        stderr(&o)
    );
}

/// Runs `statements` on the database of `url`.
fn sql(url: &str, statements: &str) {
    let loc = docfuse::pgstore::PgLocation::parse(url).unwrap();
    docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        c.batch_execute(statements)
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))
    })
    .unwrap();
}

/// Every file named `name` under `dir`.
fn files_named(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_named(&p, name));
        } else if p.file_name().is_some_and(|n| n == name) {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_version_1_schema_is_migrated_and_its_moments_published_by_the_next_refresh() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "v1");
    let schema = url.rsplit("schema=").next().unwrap().to_string();
    let t = tempfile::tempdir().unwrap();
    let host = t.path().join("host");
    let docs = sample_docs();
    ok(&run(
        t.path(),
        &host,
        &["index", "--index", &url, docs.to_str().unwrap()],
    ));
    // back to what the first schema version held: no moments, version 1 recorded
    sql(
        &url,
        &format!(
            "ALTER TABLE \"{schema}\".published DROP COLUMN moments;
             DROP TABLE \"{schema}\".embed_queue;
             DROP INDEX \"{schema}\".chunks_tail_hashes;
             ALTER TABLE \"{schema}\".chunks DROP COLUMN tail_hashes;
             DELETE FROM \"{schema}\".schema_migrations WHERE version >= 2;"
        ),
    );
    let fresh_host = t.path().join("fresh-host");
    let o = run(t.path(), &fresh_host, &["search", "--index", &url, "task"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("version 1, older than this docfuse's 4"),
        "{}",
        stderr(&o)
    );
    // the writer migrates and, with nothing else new, publishes the moments
    let o = run(t.path(), &host, &["refresh", "--index", &url]);
    ok(&o);
    assert!(
        stderr(&o).contains("published generation 2"),
        "{}",
        stderr(&o)
    );
    let o = run(
        t.path(),
        &fresh_host,
        &[
            "search",
            "--index",
            &url,
            "--json",
            "--mode",
            "hybrid",
            "define a task",
        ],
    );
    ok(&o);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    // a second refresh has nothing new
    let o = run(t.path(), &host, &["refresh", "--index", &url]);
    assert!(
        stderr(&o).contains("nothing new: generation 2"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_library_opens_a_database_url_and_follows_its_publishes() {
    use docfuse::read::Mode;
    use docfuse::retriever::{DocfuseRetriever, RetrieveOptions};
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "lib");
    let t = tempfile::tempdir().unwrap();
    let (writer, host, docs) = (t.path().join("w"), t.path().join("h"), t.path().join("d"));
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("a.md"),
        "# Zebras\n\nZebras graze on the plains.\n",
    )
    .unwrap();
    std::fs::write(docs.join("b.md"), "# Owls\n\nOwls hunt at night.\n").unwrap();
    let index = ["index", "--no-embeddings", "--index", &url];
    ok(&run(
        t.path(),
        &writer,
        &[&index[..], &[docs.to_str().unwrap()]].concat(),
    ));
    // this process is a reader of its own (the other tests run their readers as
    // subprocesses with their own cache folders)
    std::env::set_var("DOCFUSE_PG_CACHE", &host);
    std::env::set_var("DOCFUSE_PG_POLL_MS", "200");
    let r = DocfuseRetriever::open(Path::new(&url)).unwrap();
    let opts = RetrieveOptions {
        mode: Mode::Lexical,
        ..Default::default()
    };
    let top = |q: &str| -> Vec<String> {
        r.search_blocking(q, &opts)
            .unwrap()
            .documents
            .iter()
            .map(|d| d.source.clone())
            .collect()
    };
    assert_eq!(top("zebras graze"), ["a.md:1-3"]);
    assert!(top("quokkas").is_empty());
    // a second open in this process shares the store and the follower
    let again = DocfuseRetriever::open(Path::new(&url)).unwrap();
    std::fs::write(
        docs.join("b.md"),
        "# Owls\n\nOwls hunt at night.\n\nQuokkas do not.\n",
    )
    .unwrap();
    ok(&run(
        t.path(),
        &writer,
        &["refresh", "--no-embeddings", "--index", &url],
    ));
    eventually("the library's retriever serves the refresh", || {
        top("quokkas") == ["b.md:1-5"]
    });
    let seen = again.search_blocking("quokkas", &opts).unwrap();
    assert_eq!(seen.documents.len(), 1);
    assert_eq!(seen.documents[0].source, "b.md:1-5");
}

/// A reader's copy written by an older docfuse (here: the folder format before section
/// fields) is rebuilt on the next sync, though the database did not change: before, the
/// copy counted as current and every search failed with "written by an older docfuse",
/// naming a cache folder the user never made.
#[test]
fn a_reader_copy_an_older_docfuse_wrote_is_rebuilt() {
    let Some((url, t, docs)) = fixture("oldcopy") else {
        return;
    };
    let cache = t.path().join("cache");
    ok(&run(
        t.path(),
        &cache,
        &[
            "index",
            "--no-embeddings",
            "--index",
            &url,
            docs.to_str().unwrap(),
        ],
    ));
    let before = lexical(t.path(), &cache, &url, "limit parallel jobs");
    assert!(!before.is_empty());
    let manifest = files_named(&cache, "manifest.json")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("/reader/"))
        .expect("the reader's copy");
    let older = docfuse::store::SCHEMA_VERSION - 1;
    let reseal = |version: u32| {
        let mut v: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
        v["schema_version"] = version.into();
        let mut m: docfuse::store::Manifest = serde_json::from_value(v).unwrap();
        std::fs::write(&manifest, m.sealed_json()).unwrap();
    };
    reseal(older);
    assert_eq!(
        lexical(t.path(), &cache, &url, "limit parallel jobs"),
        before
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    assert_eq!(v["schema_version"], docfuse::store::SCHEMA_VERSION, "{v}");
}

/// Issue 42 item 1: `POST /v1/refresh` of a server on a database index writes to the
/// database (this host as its writer): the job publishes the edit, and the server (and
/// every other reader) follows it.
#[test]
fn a_database_servers_refresh_job_publishes_into_the_database() {
    let Some((url, t, docs)) = fixture("jobs") else {
        return;
    };
    let writer = t.path().join("writer");
    ok(&index_lexically(t.path(), &writer, &url, &docs));
    let server = Server::start(&url, &t.path().join("host"));
    assert_eq!(server.top("quokka"), "");
    std::fs::write(
        docs.join("quokka.md"),
        "# Quokka care\n\nQuokkas need shade.\n",
    )
    .unwrap();
    let (code, v) = exchange(&server.addr, "POST", "/v1/refresh", Some(""));
    assert_eq!(code, 202, "{v}");
    let job = v["job"].as_u64().unwrap();
    let mut done = Value::Null;
    eventually("the refresh job ends", || {
        done = exchange(&server.addr, "GET", &format!("/v1/refresh/{job}"), None).1;
        done["status"] == "done" || done["status"] == "failed"
    });
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["report"]["generation"], 2, "{done}");
    assert!(
        done["report"]["index"]
            .as_str()
            .unwrap()
            .starts_with("postgres://"),
        "{done}"
    );
    eventually("the server follows its own job's publish", || {
        server.top("quokka") == "quokka.md"
    });
    assert_eq!(server.status()["generation"], 2);
    // another host's reader sees it: it is in the database, not only in this host's folder
    assert_eq!(
        lexical(t.path(), &t.path().join("other"), &url, "quokka")[0].0,
        "quokka.md"
    );
}

/// Issue 40, kind 3, on the database store: a long chunk's tail windows are published
/// with it (their hashes on its row, their vectors by hash) and searched there, with the
/// same answers as the folder store.
#[test]
fn a_long_chunks_tail_windows_are_searched_in_the_database_as_in_a_folder() {
    let Some((url, t, docs)) = fixture("tails") else {
        return;
    };
    std::fs::write(docs.join("settings.md"), long_settings_list()).unwrap();
    let host = t.path().join("host");
    let folder = t.path().join("folder");
    for index in [url.as_str(), folder.to_str().unwrap()] {
        ok(&run(
            t.path(),
            &host,
            &["index", "--index", index, docs.to_str().unwrap()],
        ));
    }
    for mode in ["vector", "hybrid"] {
        for q in ["where is the pet food stored", "define a task"] {
            let search = |index: &str| {
                results(&run(
                    t.path(),
                    &host,
                    &["search", "--index", index, "--json", "--mode", mode, q],
                ))
            };
            let db = search(&url);
            assert_eq!(db, search(folder.to_str().unwrap()), "{mode} {q}");
            if q.contains("pet") {
                assert_eq!(db[0].0, "settings.md", "{mode} {q}: {db:?}");
            }
        }
    }
    let schema = url.rsplit("schema=").next().unwrap().to_string();
    let loc = docfuse::pgstore::PgLocation::parse(&url).unwrap();
    let (rows, windows): (i64, i64) = docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        let r = c
            .query_one(
                &format!(
                    "SELECT count(*), coalesce(sum(cardinality(tail_hashes)), 0)::bigint
                     FROM \"{schema}\".chunks WHERE tail_hashes IS NOT NULL"
                ),
                &[],
            )
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))?;
        Ok::<_, docfuse::Error>((r.get(0), r.get(1)))
    })
    .unwrap();
    assert_eq!(rows, 1, "one chunk is long");
    assert!(windows >= 2, "{windows} tail windows");
}

/// One number from the test database.
fn sql_count(url: &str, query: &str) -> i64 {
    let loc = docfuse::pgstore::PgLocation::parse(url).unwrap();
    docfuse::pgstore::block_on(async {
        let c = docfuse::pgstore::connect(&loc).await?;
        let r = c
            .query_one(query, &[])
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))?;
        Ok::<_, docfuse::Error>(r.get::<_, i64>(0))
    })
    .unwrap()
}

/// A running `embed-worker` of `url`.
fn worker(t: &Path, url: &str, args: &[&str], env: &[(&str, &str)]) -> std::process::Child {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"));
    c.args(["embed-worker", "--index", url])
        .args(args)
        .current_dir(t)
        .env("DOCFUSE_PG_CACHE", t.join("worker-cache"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

/// Issue 42, item 2: a writer that embeds nothing (`--max-chunks 0`) publishes the
/// lexical index at once and queues every input (tail windows too); a worker killed
/// with a batch embedded but not written loses only that batch; two workers at once
/// embed every input exactly once; the writer's next refresh publishes their vectors
/// without embedding anything, and vector search answers as from a folder index.
#[test]
fn embedding_workers_fill_in_what_the_writer_queued() {
    let Some((url, t, docs)) = fixture("workers") else {
        return;
    };
    std::fs::write(docs.join("settings.md"), long_settings_list()).unwrap();
    let schema = url.rsplit("schema=").next().unwrap().to_string();
    let table = |name: &str| format!("\"{schema}\".{name}");
    let host = t.path().join("host");
    let d = docs.to_str().unwrap();
    ok(&run(
        t.path(),
        &host,
        &["index", "--index", &url, "--max-chunks", "0", d],
    ));
    let chunks = sql_count(&url, &format!("SELECT count(*) FROM {}", table("chunks")));
    let queued = sql_count(
        &url,
        &format!("SELECT count(*) FROM {}", table("embed_queue")),
    );
    assert!(
        queued >= chunks + 2,
        "every input and the list's tail windows: {queued} of {chunks} chunks"
    );
    assert_eq!(
        sql_count(&url, &format!("SELECT count(*) FROM {}", table("vectors"))),
        0
    );
    let o = run(
        t.path(),
        &t.path().join("reader"),
        &["status", "--index", &url, "--json"],
    );
    ok(&o);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["embedding_queue"]["waiting"], queued, "{v}");
    let o = run(
        t.path(),
        &t.path().join("reader"),
        &["status", "--index", &url],
    );
    assert!(
        stdout(&o).contains("hint: run `docfuse embed-worker --index"),
        "{}",
        stdout(&o)
    );
    for poll in ["NaN", "-1", "inf"] {
        let o = run(
            t.path(),
            &host,
            &["embed-worker", "--index", &url, "--poll", poll],
        );
        assert_eq!(o.status.code(), Some(2), "{poll}");
        assert!(stderr(&o).contains("0.1 to 3600"), "{}", stderr(&o));
    }
    let hits = results(&run(
        t.path(),
        &host,
        &[
            "search", "--index", &url, "--json", "--mode", "lexical", "task",
        ],
    ));
    assert!(!hits.is_empty(), "the lexical index is published at once");

    // killed after embedding its first batch, before writing it: nothing written
    let mut killed = worker(
        t.path(),
        &url,
        &["--batch", "3", "--once"],
        &[("DOCFUSE_TEST_PAUSE_AFTER", "worker-embedded")],
    );
    let _stderr = wait_paused(&mut killed, "worker-embedded");
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(
        sql_count(&url, &format!("SELECT count(*) FROM {}", table("vectors"))),
        0
    );

    // a worker holding a claim while the writer embeds some inputs itself and
    // publishes: the publish neither waits for it nor fails, and the worker's batch is
    // written after (an input both embedded is written once)
    let mut held = worker(
        t.path(),
        &url,
        &["--batch", "3", "--once", "--json"],
        &[
            ("DOCFUSE_TEST_PAUSE_AFTER", "worker-embedded"),
            ("DOCFUSE_TEST_PAUSE_MS", "8000"),
        ],
    );
    let _stderr = wait_paused(&mut held, "worker-embedded");
    ok(&run(
        t.path(),
        &host,
        &["refresh", "--index", &url, "--max-chunks", "4"],
    ));
    assert!(
        held.try_wait().unwrap().is_none(),
        "the publish waited for the worker"
    );
    let o = held.wait_with_output().unwrap();
    ok(&o);

    // then workers at once until nothing waits: no input written twice
    let mut total = serde_json::from_str::<Value>(stdout(&o).lines().last().unwrap()).unwrap()
        ["total"]
        .as_i64()
        .unwrap();
    for _ in 0..3 {
        let pair = [
            worker(
                t.path(),
                &url,
                &["--batch", "2", "--once", "--threads", "1", "--json"],
                &[],
            ),
            worker(
                t.path(),
                &url,
                &["--batch", "2", "--once", "--threads", "1", "--json"],
                &[],
            ),
        ];
        for w in pair {
            let o = w.wait_with_output().unwrap();
            ok(&o);
            let last: Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
            assert_eq!(last["done"], true, "{last}");
            total += last["total"].as_i64().unwrap();
        }
        let o = run(
            t.path(),
            &t.path().join("reader"),
            &["status", "--index", &url, "--json"],
        );
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        if v["embedding_queue"]["waiting"] == 0 {
            break;
        }
    }
    assert!(
        total > 0 && total <= queued,
        "{total} written by workers, {queued} queued"
    );
    let waiting = format!(
        "SELECT count(*) FROM {} q WHERE NOT EXISTS (SELECT 1 FROM {} v WHERE v.embed_hash = q.embed_hash)",
        table("embed_queue"),
        table("vectors")
    );
    assert_eq!(sql_count(&url, &waiting), 0);

    // the writer publishes them, embedding nothing itself; the queue empties
    let o = run(t.path(), &host, &["refresh", "--index", &url, "--json"]);
    ok(&o);
    let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["embedded"], 0, "{report}");
    assert_eq!(
        (report["reused"].as_i64(), report["pending"].as_i64()),
        (Some(chunks), Some(0)),
        "{report}"
    );
    assert_eq!(
        sql_count(
            &url,
            &format!("SELECT count(*) FROM {}", table("embed_queue"))
        ),
        0
    );
    let folder = t.path().join("folder");
    ok(&run(
        t.path(),
        &host,
        &["index", "--index", folder.to_str().unwrap(), d],
    ));
    for q in ["where is the pet food stored", "define a task"] {
        let search = |index: &str| {
            results(&run(
                t.path(),
                &host,
                &["search", "--index", index, "--json", "--mode", "vector", q],
            ))
        };
        let db = search(&url);
        assert_eq!(db, search(folder.to_str().unwrap()), "{q}");
    }
}
