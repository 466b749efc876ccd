//! A refresh killed with SIGKILL at each step of writing a generation leaves the published
//! index whole: it opens, answers the dev questions exactly as before, and the next
//! refresh finishes the work (reusing the vectors an interrupted run already paid for).
//!
//! Uses the test hook `DOCFUSE_TEST_PAUSE_AFTER=<step>` (the child prints
//! "docfuse: paused after `<step>`" on stderr and sleeps), and the real MiniLM on five
//! chapters of the Rust book, so the embedding steps do real work quickly.
#![cfg(feature = "embeddings")]

use crate::common;
use common::*;
use docfuse::read::{status, DocIndex, Mode, SearchOptions};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FILES: [&str; 5] = [
    "ch15-00-smart-pointers.md",
    "ch15-03-drop.md",
    "ch15-04-rc.md",
    "ch15-05-interior-mutability.md",
    "ch15-06-reference-cycles.md",
];

/// The Rust-book dev questions (the index holds five chapters; every question still gets
/// a deterministic ranking, which is what must not move).
fn dev_queries() -> Vec<String> {
    std::fs::read_to_string(rust_book().join("queries.dev.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["query"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Ranked chunk ids (lexical, top 10) of every query; opening must succeed.
fn rankings(idx: &Path, queries: &[String]) -> Vec<Vec<String>> {
    let index = DocIndex::open(idx).unwrap_or_else(|e| panic!("the index does not open: {e}"));
    let opts = SearchOptions {
        mode: Mode::Lexical,
        ..SearchOptions::default()
    };
    queries
        .iter()
        .map(|q| {
            index
                .search(q, &opts)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.chunk.id)
                .collect()
        })
        .collect()
}

fn generation(idx: &Path) -> u64 {
    DocIndex::open(idx).unwrap().manifest().generation
}

/// Runs `docfuse refresh --index idx` with the pause hook at `step`, waits for the pause
/// line on stderr, and kills the process with SIGKILL. Returns the stderr seen.
fn refresh_killed_at(cwd: &Path, idx: &Path, step: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["refresh", "--index", idx.to_str().unwrap(), "--json"])
        .current_dir(cwd)
        .env_remove("DOCFUSE_LOG")
        .env("DOCFUSE_TEST_PAUSE_AFTER", step)
        .env("DOCFUSE_TEST_PAUSE_MS", "120000")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let needle = format!("paused after `{step}`");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                let hit = line.contains(&needle);
                seen.push(line);
                if hit {
                    break;
                }
            }
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().unwrap();
                panic!(
                    "`{step}`: no pause line (exit {status:?}); stderr:\n{}",
                    seen.join("\n")
                );
            }
        }
    }
    child.kill().unwrap(); // SIGKILL on Unix
    let status = child.wait().unwrap();
    assert!(!status.success(), "{step}: the child was not killed");
    seen.join("\n")
}

/// Makes every file under `dir` writable (the shared corpora are read-only, and copies
/// keep the mode; root does not care, other users do).
fn make_writable(dir: &Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            make_writable(&e.path());
        } else {
            let mut perm = e.metadata().unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perm.set_readonly(false);
            std::fs::set_permissions(e.path(), perm).unwrap();
        }
    }
}

fn refresh_json(cwd: &Path, idx: &Path) -> Value {
    let o = docfuse(
        cwd,
        &["refresh", "--index", idx.to_str().unwrap(), "--json"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "refresh after a kill failed: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` in {v}"))
}

fn found(idx: &Path, word: &str) -> Vec<String> {
    let index = DocIndex::open(idx).unwrap();
    let opts = SearchOptions {
        mode: Mode::Lexical,
        ..SearchOptions::default()
    };
    index
        .search(word, &opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.chunk.path)
        .collect()
}

#[test]
fn a_refresh_killed_at_any_step_leaves_the_index_as_it_was_and_the_next_one_finishes() {
    let d = tempfile::tempdir().unwrap();
    let (cwd, docs, idx) = (d.path(), d.path().join("docs"), d.path().join("idx"));
    std::fs::create_dir_all(&docs).unwrap();
    for f in FILES {
        std::fs::copy(rust_book().join(f), docs.join(f)).unwrap();
    }
    make_writable(&docs);
    let o = docfuse(
        cwd,
        &[
            "index",
            "--index",
            idx.to_str().unwrap(),
            "--json",
            docs.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        first["vectors"], true,
        "run `bash scripts/provision-models`: {first}"
    );
    let queries = dev_queries();

    // Each round: an edit that forces real work, a refresh killed at `step`, checks.
    // `published` comes last: the kill there leaves the embedding cache behind.
    let steps = [
        "lexical",
        "embed-group",
        "vectors",
        "before-publish",
        "published",
    ];
    for (round, step) in steps.iter().enumerate() {
        let word = format!("crashword{round}");
        if *step == "embed-group" {
            // A new page of 20 sections: more than one group of 16 to embed.
            let mut page = format!("# Crash page\n\nAbout {word}.\n");
            for i in 0..20 {
                page.push_str(&format!(
                    "\n## Topic {i}\n\nTopic number {i} of the crash page, on subject {}.\n",
                    i * 7919
                ));
            }
            std::fs::write(docs.join("crash-page.md"), page).unwrap();
        } else {
            let p = docs.join("ch15-04-rc.md");
            let text = std::fs::read_to_string(&p).unwrap();
            let edited = text.replacen(
                "reference counts changing",
                &format!("reference counts changing ({word})"),
                1,
            );
            assert_ne!(edited, text);
            std::fs::write(&p, edited).unwrap();
        }
        let gen_before = generation(&idx);
        let before = rankings(&idx, &queries);
        let t = Instant::now();
        let seen = refresh_killed_at(cwd, &idx, step);
        eprintln!("{step}: killed after {:?}", t.elapsed());

        // The index opens and its status is computed.
        let index =
            DocIndex::open(&idx).unwrap_or_else(|e| panic!("{step}: {e}\nchild stderr:\n{seen}"));
        let s = status(&index).unwrap_or_else(|e| panic!("{step}: status: {e}"));
        drop(index);
        let after_kill = rankings(&idx, &queries);
        if *step == "published" {
            // The new manifest was in place: the refresh is committed, only the clean-up
            // of old generations was lost.
            assert_eq!(generation(&idx), gen_before + 1, "{step}");
            assert!(s.fresh, "{step}: {:?}", s.reasons);
            assert!(
                found(&idx, &word).iter().any(|p| p == "ch15-04-rc.md"),
                "{step}: edit not committed"
            );
        } else {
            assert_eq!(generation(&idx), gen_before, "{step}: generation moved");
            assert!(!s.fresh, "{step}: the edit should still be pending");
            for (q, (a, b)) in queries.iter().zip(before.iter().zip(&after_kill)) {
                assert_eq!(a, b, "{step}: ranking of `{q}` changed after the kill");
            }
            assert!(
                found(&idx, &word).is_empty(),
                "{step}: a killed refresh published its edit"
            );
        }

        // The next refresh finishes normally and includes the edit.
        let r = refresh_json(cwd, &idx);
        let needed = r["chunk_diff"]["added"].as_u64().unwrap()
            + r["chunk_diff"]["changed"].as_u64().unwrap();
        eprintln!("{step}: next refresh {r}");
        match *step {
            "published" => assert_eq!(r["skipped"], true, "{r}"),
            "lexical" => assert_eq!(n(&r, "embedded"), needed, "{r}"),
            // 16 vectors were flushed to the cache before the kill: not embedded again.
            "embed-group" => {
                assert!(needed > 16, "{r}");
                assert_eq!(n(&r, "embedded"), needed - 16, "{r}");
            }
            // Every vector was in the cache.
            _ => assert_eq!(n(&r, "embedded"), 0, "{r}"),
        }
        if *step != "published" {
            // the killed run's folder was removed when this writer took the lock, so its
            // number is used again
            assert_eq!(n(&r, "generation"), gen_before + 1, "{r}");
            assert_eq!(
                (n(&r, "reused") + n(&r, "embedded"), n(&r, "pending")),
                (n(&r, "chunks"), 0),
                "{r}"
            );
        }
        let hit = if *step == "embed-group" {
            "crash-page.md"
        } else {
            "ch15-04-rc.md"
        };
        assert!(
            found(&idx, &word).iter().any(|p| p == hit),
            "{step}: edit missing after the refresh"
        );
        let index = DocIndex::open(&idx).unwrap();
        assert!(index.vector_side().is_ok(), "{step}: vectors unusable");
        let s = status(&index).unwrap();
        assert!(s.fresh && s.vectors_usable, "{step}: {:?}", s.reasons);
    }
}

/// Copies `files` of the Rust book into `docs`, indexes them (with MiniLM unless
/// `lexical`) and returns the index folder.
fn small_index(cwd: &Path, files: &[&str], lexical: bool) -> std::path::PathBuf {
    let (docs, idx) = (cwd.join("docs"), cwd.join("idx"));
    std::fs::create_dir_all(&docs).unwrap();
    for f in files {
        std::fs::copy(rust_book().join(f), docs.join(f)).unwrap();
    }
    make_writable(&docs);
    let mut args = vec![
        "index",
        "--index",
        idx.to_str().unwrap(),
        docs.to_str().unwrap(),
    ];
    if lexical {
        args.push("--no-embeddings");
    }
    let o = docfuse(cwd, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    idx
}

/// generation.rs keeps "the current and the previous" generation so that a reader that
/// read the previous manifest moments ago can still open it. After a crashed refresh has
/// left a half-written folder, the clean-up must still keep the generation that was
/// published before, not the half-written one.
#[test]
fn the_previously_published_generation_survives_the_clean_up_after_a_crashed_refresh() {
    let d = tempfile::tempdir().unwrap();
    let cwd = d.path();
    let idx = small_index(cwd, &FILES, true);
    let rc = cwd.join("docs/ch15-04-rc.md");
    let edit = |w: &str| {
        let t = std::fs::read_to_string(&rc).unwrap();
        std::fs::write(
            &rc,
            t.replacen(
                "reference counts changing",
                &format!("reference counts changing {w}"),
                1,
            ),
        )
        .unwrap();
    };
    edit("first");
    refresh_killed_at(cwd, &idx, "lexical"); // leaves a half-written gen-000002
    assert!(idx.join("gen-000002").is_dir());
    let marker = idx.join("gen-000002/crashed-build-marker");
    std::fs::write(&marker, "left by the killed refresh").unwrap();
    // the crashed folder is removed when the next writer takes the lock, and its
    // number used again
    let r = refresh_json(cwd, &idx);
    assert_eq!(n(&r, "generation"), 2);
    let mut dirs: Vec<String> = std::fs::read_dir(&idx)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-"))
        .collect();
    dirs.sort();
    assert!(
        idx.join("gen-000001").is_dir(),
        "the generation published before the refresh was removed, the crashed one kept: {dirs:?}"
    );
    assert!(
        !marker.exists(),
        "the crashed folder's files survived: {dirs:?}"
    );
}

/// The embedding cache is append-only; a kill inside a write leaves a torn record. The
/// next run appends after it, so every later record is read shifted by the torn length:
/// the torn record's hash gets bytes of the next record as vector. No published vector
/// may be anything but unit length.
#[test]
fn a_torn_record_in_the_embedding_cache_never_becomes_a_published_vector() {
    let d = tempfile::tempdir().unwrap();
    let cwd = d.path();
    let idx = small_index(cwd, &FILES[..2], false);
    let mut page = String::from("# Torn page\n\nIntro of the torn page.\n");
    for i in 0..40 {
        page.push_str(&format!(
            "\n## Topic {i}\n\nTopic number {i} of the torn page, on subject {}.\n",
            i * 7919
        ));
    }
    std::fs::write(cwd.join("docs/torn.md"), page).unwrap();

    refresh_killed_at(cwd, &idx, "embed-group");
    let cache = idx.join("embed-cache.bin");
    let len = std::fs::metadata(&cache).unwrap().len();
    let record = 64 + 384 * 4;
    assert_eq!(len, 16 * record, "one group of 16 records flushed");
    // As if the kill had come in the middle of writing the 16th record.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cache)
        .unwrap()
        .set_len(len - 100)
        .unwrap();
    refresh_killed_at(cwd, &idx, "embed-group");
    let r = refresh_json(cwd, &idx);
    assert_eq!(n(&r, "pending"), 0);

    let index = DocIndex::open(&idx).unwrap();
    let set =
        docfuse::vector::VectorSet::read(&idx.join(&index.manifest().generation_dir)).unwrap();
    let bad: Vec<(usize, f32)> = (0..set.len())
        .map(|i| (i, set.row(i).iter().map(|x| x * x).sum::<f32>().sqrt()))
        .filter(|(_, norm)| (norm - 1.0).abs() > 1e-3)
        .collect();
    assert!(
        bad.is_empty(),
        "published vectors that are not unit length (row, norm): {bad:?}; refresh: {r}"
    );
}

/// 50 refreshes killed with SIGKILL at random moments (not at named steps): after every
/// kill the index opens, answers, and verifies; the next refresh completes. Each round
/// edits a few pages (and adds one) so the refresh re-chunks, re-indexes and embeds. The
/// kill moments are spread over a whole refresh's duration, measured first.
#[test]
fn fifty_refreshes_killed_at_random_moments_leave_no_unreadable_index() {
    let d = tempfile::tempdir().unwrap();
    let cwd = d.path();
    let idx = small_index(cwd, &FILES, false);
    let docs = cwd.join("docs");
    let edit = |round: usize| {
        for (k, f) in FILES
            .iter()
            .enumerate()
            .filter(|(k, _)| (k + round).is_multiple_of(2))
        {
            let p = docs.join(f);
            let mut t = std::fs::read_to_string(&p).unwrap();
            t.push_str(&format!(
                "\n## Round {round} note {k}\n\nkillword{round} in page {k}.\n"
            ));
            std::fs::write(&p, t).unwrap();
        }
        let mut page = format!("# Round page {round}\n");
        for i in 0..20 {
            page.push_str(&format!(
                "\n## Part {i}\n\nPart {i} of round {round}: {}.\n",
                i * 31 + round
            ));
        }
        std::fs::write(docs.join(format!("round-{round}.md")), page).unwrap();
    };
    // How long an uninterrupted refresh of one round's edits takes.
    // The length of one refresh: the shortest of three (a first run pays cold caches,
    // which would put most kill moments after the end of a typical run).
    let full = (0..3)
        .map(|i| {
            edit(1000 + i);
            let t = Instant::now();
            refresh_json(cwd, &idx);
            t.elapsed().as_millis() as u64
        })
        .min()
        .unwrap_or(0)
        .max(50);
    // A deterministic spread of kill moments over [0, 1.2 × full).
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut unreadable = 0;
    let mut killed_mid_run = 0;
    for round in 0..50 {
        edit(round);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = x % (full * 6 / 5);
        let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
            .args(["refresh", "--index", idx.to_str().unwrap()])
            .current_dir(cwd)
            .env_remove("DOCFUSE_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        let _ = child.kill();
        child.wait().unwrap();
        let ok = DocIndex::open(&idx)
            .and_then(|i| {
                i.search("reference counting", &SearchOptions::default())?;
                Ok(())
            })
            .is_ok()
            && docfuse::read::verify(&idx).is_ok_and(|v| v.damaged.is_empty());
        if !ok {
            unreadable += 1;
        }
        if round % 10 == 9 {
            let r = refresh_json(cwd, &idx);
            assert_eq!(n(&r, "pending"), 0, "{r}");
        }
    }
    eprintln!(
        "random kills: 50 ({killed_mid_run} while the refresh was running, moments over 0..{} ms); unreadable indexes afterwards: {unreadable}",
        full * 6 / 5
    );
    assert_eq!(unreadable, 0);
    assert!(
        killed_mid_run >= 25,
        "most kills land mid-refresh ({killed_mid_run})"
    );
    let r = refresh_json(cwd, &idx);
    let found = found(&idx, "killword49");
    assert!(!found.is_empty(), "the last edit is indexed: {r}");
}

#[test]
fn a_refresh_killed_between_bucket_commits_leaves_the_previous_generation_byte_identical() {
    let d = tempfile::tempdir().unwrap();
    let (cwd, docs, idx) = (d.path(), d.path().join("docs"), d.path().join("idx"));
    copy_tree(&rust_book(), &docs);
    make_writable(&docs);
    let small = [("DOCFUSE_TEST_BUCKET_CHUNKS", "48")];
    let idx_s = idx.to_str().unwrap();
    let o = docfuse_env(
        cwd,
        &[
            "index",
            "--no-embeddings",
            "--index",
            idx_s,
            docs.to_str().unwrap(),
        ],
        &small,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gen1 = idx.join(
        DocIndex::open(&idx)
            .unwrap()
            .manifest()
            .generation_dir
            .clone(),
    );
    let before = tree_hashes(&gen1);
    let queries = dev_queries();
    let ranked = rankings(&idx, &queries);
    // two edits far apart: two runs to index again (each one new bucket: the killed refresh
    // uses the default size for new buckets), the kill comes after the first commit
    for (f, word) in [
        ("ch03-02-data-types.md", "bucketword1"),
        ("ch17-04-streams.md", "bucketword2"),
    ] {
        let mut text = std::fs::read_to_string(docs.join(f)).unwrap();
        text.push_str(&format!("\n\nA paragraph about {word}.\n"));
        std::fs::write(docs.join(f), text).unwrap();
    }
    let seen = refresh_killed_at(cwd, &idx, "bucket");
    assert_eq!(
        tree_hashes(&gen1),
        before,
        "the published generation changed; child:\n{seen}"
    );
    assert_eq!(
        rankings(&idx, &queries),
        ranked,
        "answers changed after the kill"
    );
    let v = docfuse(cwd, &["verify", "--index", idx_s]);
    assert_eq!(v.status.code(), Some(0), "{}", stderr(&v));
    let r = docfuse_env(cwd, &["refresh", "--index", idx_s, "--json"], &small);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let r: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert!(r["buckets_kept"].as_u64() > Some(10), "{r}");
    assert_eq!(found(&idx, "bucketword2"), ["ch17-04-streams.md"]);
}
