//! `--index postgres://…` against a real PostgreSQL with pgvector: index → search (same
//! results as a folder index of the same roots) → edit/add/delete → refresh (only the
//! changed chunks embedded) → a second host's reader and writer; the writer lock; errors
//! that never show the password.
//!
//! Needs a server: `DOCFUSE_TEST_DATABASE_URL` (as `scripts/test` sets from `scripts/pg
//! up`); without it the tests say so and pass, unless `DOCFUSE_REQUIRE_PG` is set.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

fn database() -> Option<String> {
    match std::env::var("DOCFUSE_TEST_DATABASE_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("DOCFUSE_REQUIRE_PG").is_none(),
                "DOCFUSE_REQUIRE_PG is set but DOCFUSE_TEST_DATABASE_URL is not"
            );
            eprintln!("skipped: no DOCFUSE_TEST_DATABASE_URL (start one with `scripts/pg up`)");
            None
        }
    }
}

/// The test database URL with a schema of its own.
fn with_schema(url: &str, name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={name}_{}_{nanos}", std::process::id())
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

/// A lexical search's results through `--index url` with the cache `cache`.
fn lexical(cwd: &Path, cache: &Path, url: &str, q: &str) -> Vec<(String, u64, String)> {
    results(&run(
        cwd,
        cache,
        &["search", "--index", url, "--json", "--mode", "lexical", q],
    ))
}

#[test]
fn index_search_refresh_and_a_second_host_on_postgres() {
    let Some(url) = database() else {
        return;
    };
    let url = with_schema(&url, "life");
    let t = tempfile::tempdir().unwrap();
    let docs = t.path().join("docs");
    copy_tree(&sample_docs(), &docs);
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

    // Another host: its reader syncs to generation 2 without a restart of anything.
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
    assert!(stderr(&o).contains("kept generation 3"), "{}", stderr(&o));
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
        drop(c);
        Ok(o)
    })
    .unwrap();
    assert_eq!(held.status.code(), Some(2), "{}", stderr(&held));
    assert!(
        stderr(&held).contains("another docfuse is writing"),
        "{}",
        stderr(&held)
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
