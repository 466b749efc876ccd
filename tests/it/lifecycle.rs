//! The index lifecycle, one test per failure kind on a small synthetic input: reads are
//! verified, freshness is honest and clears, nothing is lost silently, versions are
//! told apart, special files and odd trees survive, a read-only index answers, and the
//! model's identity is its own. Permission tests run the binary as `nobody` when the
//! suite runs as root (root reads everything).

use crate::common;
use common::*;
use docfuse::read::{status, DocIndex};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

/// A small docs tree: `guide/parallel.md` (the sample docs' page) and two more pages.
fn docs(at: &Path) -> PathBuf {
    let root = at.join("docs");
    copy_tree(&sample_docs(), &root);
    root
}

fn run_ok(cwd: &Path, args: &[&str]) -> String {
    let o = docfuse(cwd, args);
    assert_eq!(o.status.code(), Some(0), "{args:?}\n{}", stderr(&o));
    stdout(&o)
}

fn json_of(cwd: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&run_ok(cwd, args)).unwrap_or(Value::Null)
}

fn lexical_index(cwd: &Path, root: &Path) {
    run_ok(
        cwd,
        &[
            "index",
            "--index",
            "idx",
            "--no-embeddings",
            root.to_str().unwrap(),
        ],
    );
}

const PARALLEL_ID: &str = "guide/parallel.md#running-tasks-in-parallel/limiting-concurrency";

#[test]
fn a_changed_or_deleted_file_is_served_as_indexed_and_marked_on_every_interface() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let page = root.join("guide/parallel.md");
    let original = fs::read_to_string(&page).unwrap();
    fs::write(&page, format!("new 1\nnew 2\nnew 3\nnew 4\n{original}")).unwrap();

    // the library / HTTP / MCP read path: the indexed lines, never the new ones
    let r = docfuse::retriever::DocfuseRetriever::open(&t.path().join("idx")).unwrap();
    let req = docfuse::retriever::PassageRequest {
        id: Some(PARALLEL_ID.into()),
        ..Default::default()
    };
    let p = r.read_passage_blocking(&req).unwrap();
    assert!(p.stale, "{p:?}");
    assert!(p.stale_reason.as_deref().unwrap().contains("changed"));
    assert!(p.text.starts_with("## Limiting concurrency"), "{}", p.text);
    assert!(!p.text.contains("new 1"));
    assert_eq!((p.start_line, p.end_line), (5, 8));
    // a line range of the changed file: the indexed lines too
    let req = docfuse::retriever::PassageRequest {
        path: Some("guide/parallel.md".into()),
        start_line: Some(1),
        end_line: Some(2),
        ..Default::default()
    };
    let p = r.read_passage_blocking(&req).unwrap();
    assert!(p.stale && !p.text.contains("new 1"), "{p:?}");

    // CLI: text marks the result, JSON carries the reason per result and the envelope
    let text = run_ok(t.path(), &["search", "--index", "idx", "limit", "jobs"]);
    let first = text.lines().next().unwrap();
    assert!(first.contains("file changed since indexing"), "{text}");
    let v = json_of(
        t.path(),
        &["search", "--index", "idx", "--json", "limit jobs"],
    );
    assert_eq!(v["stale"], true);
    assert_eq!(
        v["results"][0]["stale_reason"],
        "file changed since indexing"
    );

    fs::remove_file(&page).unwrap();
    let text = run_ok(t.path(), &["search", "--index", "idx", "limit", "jobs"]);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("file deleted since indexing"),
        "{text}"
    );
    let r = docfuse::retriever::DocfuseRetriever::open(&t.path().join("idx")).unwrap();
    let req = docfuse::retriever::PassageRequest {
        id: Some(PARALLEL_ID.into()),
        ..Default::default()
    };
    let p = r.read_passage_blocking(&req).unwrap();
    assert!(
        p.stale_reason.as_deref().unwrap().contains("deleted"),
        "{p:?}"
    );
    assert!(p.text.starts_with("## Limiting concurrency"));
    // an unchanged file is read from disk, not stale
    let req = docfuse::retriever::PassageRequest {
        path: Some("guide/install.md".into()),
        ..Default::default()
    };
    let p = r.read_passage_blocking(&req).unwrap();
    assert!(!p.stale && p.stale_reason.is_none(), "{p:?}");
}

#[test]
fn touching_files_never_makes_stale_that_refresh_cannot_clear() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    // touch (new mtime) and rewrite with the same bytes (as `git checkout` does)
    let page = root.join("guide/parallel.md");
    let bytes = fs::read(&page).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::write(&page, &bytes).unwrap();
    let agree = |label: &str| {
        let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
        let e = json_of(t.path(), &["search", "--index", "idx", "--json", "tasks"]);
        assert_eq!(s["fresh"], true, "{label}: {s}");
        assert_eq!(e["stale"], false, "{label}: status and the envelope agree");
        s
    };
    let s = agree("touched");
    assert_eq!(s["touched"], 1);
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["skipped"], false, "the new mtime is recorded: {r}");
    assert_eq!(r["files"]["touched"], 1);
    assert_eq!(r["chunk_diff"]["unchanged"], r["chunks"]);
    let s = agree("refreshed");
    assert_eq!(s["touched"], 0);
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["skipped"], true, "{r}");
    run_ok(t.path(), &["verify", "--index", "idx"]);
}

#[test]
fn an_empty_root_and_a_root_emptied_later_are_valid_empty_indexes() {
    let t = tempfile::tempdir().unwrap();
    fs::create_dir(t.path().join("empty")).unwrap();
    run_ok(
        t.path(),
        &["index", "--index", "e", "--no-embeddings", "empty"],
    );
    let o = docfuse(t.path(), &["search", "--index", "e", "anything"]);
    assert_eq!(o.status.code(), Some(1));
    let root = t.path().join("one");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("a.md"), "# Alpha\n\nunique-alpha-word\n").unwrap();
    lexical_index(t.path(), &root);
    fs::remove_file(root.join("a.md")).unwrap();
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(
        (r["chunks"].as_u64(), r["files"]["removed"].as_u64()),
        (Some(0), Some(1))
    );
    let o = docfuse(t.path(), &["search", "--index", "idx", "unique-alpha-word"]);
    assert_eq!(o.status.code(), Some(1), "the deleted content is gone");
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], true, "{s}");
}

#[test]
fn an_unreadable_file_keeps_its_last_text_and_an_unlistable_root_publishes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    fs::create_dir_all(root.join("private")).unwrap();
    fs::write(root.join("private/notes.md"), "# Notes\n\nzanzibar-notes\n").unwrap();
    give_to_user(t.path());
    let idx = t.path().join("idx");
    let run = |args: &[&str]| docfuse_as_user(t.path(), args);
    let o = run(&[
        "index",
        "--index",
        "idx",
        "--no-embeddings",
        root.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gen_before = DocIndex::open(&idx).unwrap().manifest().generation;

    // a file and a folder that cannot be read: their chunks stay, named as partial
    chmod(&root.join("guide/parallel.md"), 0o000);
    chmod(&root.join("private"), 0o000);
    let o = run(&["refresh", "--index", "idx", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "published, in part: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("parallel.md") && err.contains("last indexed text"),
        "{err}"
    );
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["files"]["removed"], 0, "{r}");
    assert_eq!(r["partial"].as_array().unwrap().len(), 2, "{r}");
    let o = run(&["search", "--index", "idx", "--json", "zanzibar-notes"]);
    assert_eq!(o.status.code(), Some(0), "kept: {}", stderr(&o));
    let o = run(&["status", "--index", "idx", "--json"]);
    let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(s["fresh"], false, "{s}");
    assert!(s["reasons"].to_string().contains("partial"), "{s}");
    assert_eq!(s["partial"].as_array().unwrap().len(), 2);

    // the root itself cannot be listed: nothing is published
    chmod(&root.join("private"), 0o755);
    chmod(&root.join("guide/parallel.md"), 0o644);
    let o = run(&["refresh", "--index", "idx"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gen_ok = DocIndex::open(&idx).unwrap().manifest().generation;
    assert!(gen_ok > gen_before);
    chmod(&root, 0o000);
    let o = run(&["refresh", "--index", "idx"]);
    chmod(&root, 0o755);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot read root"), "{}", stderr(&o));
    assert_eq!(DocIndex::open(&idx).unwrap().manifest().generation, gen_ok);
}

#[test]
fn tags_and_aliases_edits_count_as_changed_chunks() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("d");
    fs::create_dir(&root).unwrap();
    let page =
        |tags: &str| format!("---\ntitle: Setup\ntags: [{tags}]\n---\n# Setup\n\nInstall it.\n");
    fs::write(root.join("a.md"), page("install")).unwrap();
    lexical_index(t.path(), &root);
    fs::write(root.join("a.md"), page("install, quickstart")).unwrap();
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["files"]["changed"], 1, "{r}");
    assert_eq!(r["chunk_diff"]["changed"], 1, "{r}");
    let v = json_of(
        t.path(),
        &["search", "--index", "idx", "--json", "quickstart"],
    );
    assert_eq!(v["results"][0]["path"], "a.md");
}

#[test]
fn a_truncated_vector_file_is_damage_that_status_verify_and_refresh_see() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    run_ok(
        t.path(),
        &["index", "--index", "idx", root.to_str().unwrap()],
    );
    let idx = t.path().join("idx");
    let gen = DocIndex::open(&idx).unwrap().generation_dir();
    let vectors = gen.join("vectors.f32");
    let len = fs::metadata(&vectors).unwrap().len();
    let f = fs::OpenOptions::new().write(true).open(&vectors).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], false, "{s}");
    assert!(s["reasons"].to_string().contains("damaged"), "{s}");
    let o = docfuse(t.path(), &["verify", "--index", "idx"]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o) + &stderr(&o);
    assert!(out.contains("vectors.f32"), "{out}");
    assert!(
        out.contains("--index idx") && !out.contains("gen-0"),
        "the hint names the index folder: {out}"
    );
    // lexical search still answers, and says why vectors are out
    let o = docfuse(t.path(), &["search", "--index", "idx", "tasks"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("damaged"), "{}", stderr(&o));
    // refresh rebuilds the damaged generation
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["skipped"], false, "{r}");
    run_ok(t.path(), &["verify", "--index", "idx"]);
}

#[test]
fn a_model_that_failed_to_load_is_recorded_and_the_next_refresh_fills_the_vectors() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    let broken = [("DOCFUSE_ORT_DYLIB", "/nonexistent/libonnxruntime.so")];
    let o = docfuse_env(
        t.path(),
        &["index", "--index", "idx", root.to_str().unwrap()],
        &broken,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], false, "{s}");
    assert!(
        s["vectors_missing"].as_str().unwrap().contains("not found"),
        "{s}"
    );
    // still broken: nothing to re-read, still missing, and neither says "fresh"
    let o = docfuse_env(t.path(), &["refresh", "--index", "idx"], &broken);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = stdout(&o);
    assert!(
        !line.contains("fresh") && line.contains("without a vector"),
        "{line}"
    );
    let o = docfuse_env(t.path(), &["status", "--index", "idx"], &broken);
    let text = stdout(&o);
    assert!(text.starts_with("stale"), "{text}");
    assert!(
        text.contains("vector search: unavailable") && text.contains("searches are lexical"),
        "{text}"
    );
    assert!(text.contains("hint: install the model"), "{text}");
    // fixed, not yet refreshed: every front end's status says the model is there now
    // (not the reason recorded at the last refresh) and that a refresh embeds them
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], false, "{s}");
    let reasons = s["reasons"].to_string();
    assert!(reasons.contains("installed now"), "{reasons}");
    assert!(s["model_unavailable"].is_null(), "{s}");
    let dir = t.path().join("idx");
    let served = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let r = docfuse::retriever::DocfuseRetriever::open(&dir).unwrap();
        r.status().await.unwrap()
    });
    assert_eq!(
        served.status.reasons,
        s["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    );
    assert!(!served.vectors.usable);
    // the refresh embeds every chunk
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["embedded"], r["chunks"], "{r}");
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], true, "{s}");
    assert!(s["vectors_missing"].is_null());
    let text = stdout(&docfuse(t.path(), &["status", "--index", "idx"]));
    assert!(
        text.contains("vector search: usable (all-MiniLM-L6-v2, 384 dims)"),
        "{text}"
    );
}

#[test]
fn changed_defaults_read_as_configuration_changed() {
    use docfuse::config::IndexConfig;
    use docfuse::generation::Source;
    use docfuse::write::{build, BuildOptions};
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    let idx = t.path().join("idx");
    // An index built under other defaults (no explicit settings recorded).
    let mut config = IndexConfig::default();
    config.bm25f.k1 = 1.5;
    let opts = BuildOptions {
        config,
        ..Default::default()
    };
    build(&idx, &Source::Roots(vec![root]), &opts, &mut |_| {}).unwrap();
    let s = status(&DocIndex::open(&idx).unwrap()).unwrap();
    assert!(s.config_changed && !s.fresh, "{:?}", s.reasons);
    // `refresh` adopts the current defaults
    run_ok(t.path(), &["refresh", "--index", "idx"]);
    let s = status(&DocIndex::open(&idx).unwrap()).unwrap();
    assert!(!s.config_changed && s.fresh, "{:?}", s.reasons);
    assert_eq!(
        DocIndex::open(&idx).unwrap().manifest().config.bm25f.k1,
        1.2
    );
    // explicit settings are kept by refresh
    run_ok(
        t.path(),
        &["index", "--index", "idx", "--k1", "1.7", "docs"],
    );
    run_ok(t.path(), &["refresh", "--index", "idx", "--force"]);
    let m = DocIndex::open(&idx).unwrap().manifest().clone();
    assert_eq!(m.config.bm25f.k1, 1.7);
}

/// Rewrites the manifest of `idx` with `edit` applied and a valid seal.
fn reseal(idx: &Path, edit: impl Fn(&mut Value)) {
    let path = idx.join("manifest.json");
    let mut v: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    edit(&mut v);
    let mut m: docfuse::store::Manifest = serde_json::from_value(v).unwrap();
    fs::write(&path, m.sealed_json()).unwrap();
}

#[test]
fn older_indexes_are_rebuilt_and_newer_ones_refused_untouched() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    reseal(&idx, |v| {
        v["chunker_version"] = (docfuse::chunk::CHUNKER_VERSION - 1).into()
    });
    let o = docfuse(t.path(), &["search", "--index", "idx", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("older docfuse") && err.contains("chunker") && err.contains("docfuse refresh"),
        "{err}"
    );
    let o = docfuse(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("older docfuse") || stdout(&o).contains("older docfuse"),
        "{}",
        stderr(&o)
    );
    run_ok(t.path(), &["search", "--index", "idx", "tasks"]);

    reseal(&idx, |v| {
        v["schema_version"] = (docfuse::store::SCHEMA_VERSION + 1).into()
    });
    let before = fs::read(idx.join("manifest.json")).unwrap();
    for args in [
        vec!["search", "--index", "idx", "tasks"],
        vec!["status", "--index", "idx"],
        vec!["refresh", "--index", "idx"],
        vec!["index", "--index", "idx", "--no-embeddings", "docs"],
    ] {
        let o = docfuse(t.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("upgrade docfuse"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("Tantivy"), "no raw tantivy error");
    }
    assert_eq!(
        fs::read(idx.join("manifest.json")).unwrap(),
        before,
        "never overwritten"
    );
    run_ok(
        t.path(),
        &[
            "index",
            "--index",
            "idx",
            "--no-embeddings",
            "--force",
            "docs",
        ],
    );
    run_ok(t.path(), &["search", "--index", "idx", "tasks"]);
}

#[test]
fn a_damaged_lexical_file_gives_the_rebuild_hint_not_a_raw_tantivy_error() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let gen = DocIndex::open(&t.path().join("idx"))
        .unwrap()
        .generation_dir();
    let meta = gen.join("lexical/meta.json");
    let len = fs::metadata(&meta).unwrap().len() as usize;
    fs::write(&meta, "x".repeat(len)).unwrap();
    let o = docfuse(t.path(), &["search", "--index", "idx", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unusable")
            && err.contains("hint: rebuild it with `docfuse refresh --force --index idx`"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn an_index_another_user_may_not_read_says_so_instead_of_calling_it_damaged() {
    if !is_root() {
        return; // the same user can read its own index: nothing to refuse
    }
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    chmod(t.path(), 0o755);
    // the folder as written: tantivy keeps some of its files private (0600)
    let o = docfuse_as_user(t.path(), &["search", "--index", "idx", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("not readable by you"), "{err}");
    assert!(!err.contains("refresh --force"), "{err}");
    // the manifest itself private
    chmod(&t.path().join("idx/manifest.json"), 0o600);
    let err = stderr(&docfuse_as_user(t.path(), &["status", "--index", "idx"]));
    assert!(err.contains("not readable by you"), "{err}");
}

/// Runs `docfuse args` in `cwd`, killing it after 30 s: `None` when it had to be killed.
fn within_30s(cwd: &Path, args: &[&str]) -> Option<std::process::ExitStatus> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(args)
        .current_dir(cwd)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_an_index_file_is_refused_never_waited_on() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    let gen = DocIndex::open(&idx).unwrap().generation_dir();
    let rel = |p: &Path| p.strip_prefix(&idx).unwrap().to_path_buf();
    let segment = fs::read_dir(gen.join("lexical"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "term"))
        .unwrap();
    let targets = [
        PathBuf::from("manifest.json"),
        rel(&gen.join("files.json")),
        rel(&gen.join("pagerank.json")),
        rel(&gen.join("lexical/meta.json")),
        rel(&gen.join("lexical/buckets.json")),
        rel(&segment),
    ];
    for target in targets {
        let path = idx.join(&target);
        let saved = t.path().join("saved");
        fs::rename(&path, &saved).unwrap();
        mkfifo(&path);
        for args in [
            &["search", "--index", "idx", "tasks"][..],
            &["status", "--index", "idx"],
            &["verify", "--index", "idx"],
        ] {
            let status = within_30s(t.path(), args);
            assert!(status.is_some(), "{args:?} hung on a FIFO at {target:?}");
        }
        fs::remove_file(&path).unwrap();
        fs::rename(&saved, &path).unwrap();
    }
    run_ok(t.path(), &["search", "--index", "idx", "tasks"]);
}

#[cfg(unix)]
#[test]
fn fifos_devices_and_linked_folders_never_hang_or_double_count() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    mkfifo(&root.join("guide/.ignore"));
    mkfifo(&root.join("notes.md"));
    std::os::unix::fs::symlink("/dev/zero", root.join("zero.md")).unwrap();
    std::os::unix::fs::symlink(root.join("guide"), root.join("docs-link")).unwrap();
    fs::create_dir_all(root.join("node_modules/pkg")).unwrap();
    fs::write(
        root.join("node_modules/pkg/README.md"),
        "# Dep\n\ntasks tasks\n",
    )
    .unwrap();
    fs::create_dir_all(root.join(".drafts")).unwrap();
    fs::write(
        root.join(".drafts/wip.md"),
        "# Draft\n\nhidden-draft-word\n",
    )
    .unwrap();
    let start = std::time::Instant::now();
    let o = docfuse(
        t.path(),
        &[
            "index",
            "--index",
            "idx",
            "--no-embeddings",
            "--json",
            root.to_str().unwrap(),
        ],
    );
    assert!(start.elapsed().as_secs() < 30, "the scan finishes");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    for name in ["guide/.ignore", "notes.md", "zero.md", "docs-link"] {
        assert!(err.contains(name), "{name} is named: {err}");
    }
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["documents"], 6, "each file once: {r}");
    let skipped = &r["skipped_entries"];
    assert_eq!(skipped["dependency_folder"], 1, "{r}");
    assert_eq!(skipped["special_file"], 2, "{r}");
    assert_eq!(skipped["duplicate"], 1, "{r}");
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["skipped"]["dependency_folder"], 1, "{s}");
    assert_eq!(s["fresh"], true, "{s}");
    // --hidden and --no-ignore include them, and are recorded for refreshes
    run_ok(
        t.path(),
        &[
            "index",
            "--index",
            "all",
            "--no-embeddings",
            "--hidden",
            "--no-ignore",
            root.to_str().unwrap(),
        ],
    );
    for word in ["hidden-draft-word", "dep"] {
        let v = json_of(t.path(), &["search", "--index", "all", "--json", word]);
        assert!(!v["results"].as_array().unwrap().is_empty(), "{word}");
    }
    let s = json_of(t.path(), &["status", "--index", "all", "--json"]);
    assert_eq!(s["fresh"], true, "the walk options are recorded: {s}");
}

#[cfg(unix)]
#[test]
fn odd_names_are_skipped_by_name_and_utf16_is_decoded() {
    use std::os::unix::ffi::OsStrExt;
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("d");
    fs::create_dir(&root).unwrap();
    for name in [&b"bad\xffname.md"[..], &b"bad\xfename.md"[..]] {
        fs::write(root.join(std::ffi::OsStr::from_bytes(name)), "# Bad\n\nx\n").unwrap();
    }
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "# Wide page\n\nthe quokka-word lives here\n".encode_utf16() {
        utf16.extend(u.to_le_bytes());
    }
    fs::write(root.join("wide.md"), utf16).unwrap();
    let o = docfuse(
        t.path(),
        &["index", "--index", "idx", "--no-embeddings", "--json", "d"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).matches("not valid UTF-8").count(),
        2,
        "{}",
        stderr(&o)
    );
    let v = json_of(
        t.path(),
        &["search", "--index", "idx", "--json", "quokka-word"],
    );
    assert_eq!(v["results"][0]["path"], "wide.md");
    let id = v["results"][0]["id"].as_str().unwrap().to_string();
    let r = docfuse::retriever::DocfuseRetriever::open(&t.path().join("idx")).unwrap();
    let p = r
        .read_passage_blocking(&docfuse::retriever::PassageRequest {
            id: Some(id),
            ..Default::default()
        })
        .unwrap();
    assert!(p.text.contains("quokka-word") && !p.stale, "{p:?}");
    let s = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(s["fresh"], true, "{s}");
}

#[test]
fn a_read_only_index_answers_and_refresh_changes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    give_to_user(t.path());
    chmod_tree(&idx, 0o555, 0o444);
    let as_user = |args: &[&str]| docfuse_as_user(t.path(), args);
    let o = as_user(&["search", "--index", "idx", "--json", "tasks"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = as_user(&["status", "--index", "idx"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = as_user(&["verify", "--index", "idx"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    fs::write(root.join("new.md"), "# New\n\ntext\n").unwrap();
    let o = as_user(&["refresh", "--index", "idx"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("read-only") && stderr(&o).contains("nothing was changed"),
        "{}",
        stderr(&o)
    );
    // serve answers too
    let mut child = user_command(
        t.path(),
        &["serve", "--index", "idx", "--addr", "127.0.0.1:0"],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = served_addr(&mut err);
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(r#"{"query": "tasks"}"#));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 200, "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
    // mcp answers over stdio too (initialize, then end of input)
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let out = run_as_user_with_stdin(t.path(), &["mcp", "--index", "idx"], &format!("{init}\n"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("docfuse"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    chmod_tree(&idx, 0o755, 0o644);
}

#[test]
fn a_model_of_another_dimension_is_refused_by_name_and_leaves_nothing_half_written() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let other = t.path().join("other-model");
    copy_tree(&model, &other);
    let config = fs::read_to_string(other.join("config.json")).unwrap();
    fs::write(
        other.join("config.json"),
        config.replace("\"hidden_size\": 384", "\"hidden_size\": 768"),
    )
    .unwrap();
    let env = [("DOCFUSE_MODEL_DIR", other.to_str().unwrap())];
    // a fresh index: refused, naming both dimensions; no folder or cache left behind
    let o = docfuse_env(
        t.path(),
        &["index", "--index", "idx", root.to_str().unwrap()],
        &env,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("384") && err.contains("768"), "{err}");
    let left: Vec<String> = fs::read_dir(t.path().join("idx"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gen-") || n.starts_with("embed-cache"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // an existing index: the refresh fails the same way and the index is as it was
    run_ok(
        t.path(),
        &["index", "--index", "idx", root.to_str().unwrap()],
    );
    fs::write(root.join("extra.md"), "# Extra\n\nmore text\n").unwrap();
    let o = docfuse_env(t.path(), &["refresh", "--index", "idx"], &env);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let index = DocIndex::open(&t.path().join("idx")).unwrap();
    assert_eq!(index.manifest().generation, 1);
    assert_eq!(index.manifest().vectors.as_ref().unwrap().dim, 384);
    assert!(!t.path().join("idx/gen-000002").exists());
}

#[test]
fn a_running_retriever_follows_refreshes_and_keeps_reading_passages() {
    use docfuse::retriever::{DocfuseRetriever, PassageRequest, RetrieveOptions};
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let r = DocfuseRetriever::open(&t.path().join("idx")).unwrap();
    let first = r
        .search_blocking("limiting concurrency", &RetrieveOptions::default())
        .unwrap();
    assert_eq!(first.generation, 1);
    let id = first.documents[0].id.clone();
    // four refreshes, each adding a page: the first generations are deleted on the way
    for n in 1..=4 {
        fs::write(
            root.join(format!("new{n}.md")),
            format!("# Zebrafinch {n}\n\nThe zebrafinch page number {n}.\n"),
        )
        .unwrap();
        run_ok(t.path(), &["refresh", "--index", "idx"]);
        let got = r
            .search_blocking("zebrafinch", &RetrieveOptions::default())
            .unwrap();
        assert_eq!(got.generation, 1 + n, "served generation after refresh {n}");
        assert_eq!(got.documents.len(), n as usize, "{:?}", got.documents);
    }
    assert!(
        !t.path().join("idx/gen-000001").exists(),
        "generation 1 is gone"
    );
    let p = r
        .read_passage_blocking(&PassageRequest {
            id: Some(id),
            ..Default::default()
        })
        .unwrap();
    assert!(p.text.contains("--jobs"), "{}", p.text);
    assert_eq!(p.generation, 5);
    assert!(!p.stale);
}

#[test]
fn a_generation_with_a_live_reader_is_not_deleted_by_refreshes() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    let held = DocIndex::open(&idx).unwrap();
    for n in 1..=3 {
        fs::write(
            root.join(format!("r{n}.md")),
            format!("# Page {n}\n\nText {n}.\n"),
        )
        .unwrap();
        run_ok(t.path(), &["refresh", "--index", "idx"]);
    }
    assert!(
        idx.join("gen-000001").is_dir(),
        "a reader still answers from it"
    );
    assert!(
        !idx.join("gen-000002").exists(),
        "nobody reads generation 2"
    );
    let hits = held
        .search(
            "limiting concurrency",
            &docfuse::read::SearchOptions::default(),
        )
        .unwrap();
    assert!(!hits.hits.is_empty(), "the held generation still answers");
    drop(held);
    fs::write(root.join("r4.md"), "# Page 4\n\nText 4.\n").unwrap();
    run_ok(t.path(), &["refresh", "--index", "idx"]);
    assert!(
        !idx.join("gen-000001").exists(),
        "released, then cleaned up"
    );
}

#[test]
fn refresh_and_search_refresh_meet_a_first_build_still_running() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    let mut first = Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["index", "--index", "idx", "--no-embeddings"])
        .arg(&root)
        .current_dir(t.path())
        .env("DOCFUSE_TEST_PAUSE_AFTER", "before-publish")
        .env("DOCFUSE_TEST_PAUSE_MS", "6000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(first.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("paused after") {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the first build ended early"
        );
    }
    // not a bare "no docfuse index": a first build is running, for every reader
    for args in [
        &["search", "--index", "idx", "limiting concurrency"][..],
        &["status", "--index", "idx"][..],
    ] {
        let o = docfuse(t.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("yet: a first build is running (pid ")
                && stderr(&o).contains("`docfuse search --refresh` wait"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // not "no docfuse index": another docfuse is writing it
    let o = docfuse(t.path(), &["refresh", "--index", "idx", "--no-wait"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("another docfuse is writing"),
        "{}",
        stderr(&o)
    );
    // waiting, then answering from the finished build
    let o = docfuse(
        t.path(),
        &[
            "search",
            "--index",
            "idx",
            "--refresh",
            "limiting concurrency",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("waiting for another docfuse"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("guide/parallel.md"), "{}", stdout(&o));
    assert!(first.wait().unwrap().success());
}

#[test]
fn serve_and_mcp_with_watch_refresh_in_process_and_answer_with_an_edit() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--watch",
            "--debounce-ms",
            "100",
            "--index",
        ])
        .arg(&idx)
        .env_remove("DOCFUSE_LOG")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = served_addr(&mut err);
    // keep reading the server's stderr so that it never blocks on a full pipe
    let log = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut rest);
        rest
    });
    let mut mcp = McpClient::start(&idx, &["--watch", "--debounce-ms", "100"]);
    let search = r#"{"query": "quokka", "limit": 3, "mode": "lexical"}"#;
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(search));
    assert_eq!(code, 200, "{v}");
    assert!(v["results"].as_array().unwrap().is_empty(), "{v}");
    let generation = v["generation"].as_u64().unwrap();
    fs::write(
        root.join("quokka.md"),
        "# Quokka care\n\nQuokkas need shade and fresh water.\n",
    )
    .unwrap();
    eventually("HTTP answers with the new page", || {
        let (_, v) = exchange(&addr, "POST", "/v1/search", Some(search));
        v["results"][0]["path"] == "quokka.md" && v["generation"].as_u64() > Some(generation)
    });
    eventually("MCP answers with the new page", || {
        let (r, _) = mcp.call(
            "search_docs",
            serde_json::json!({"query": "quokka", "limit": 3, "mode": "lexical"}),
        );
        r["structuredContent"]["results"][0]["path"] == "quokka.md"
    });
    // The root removed and created again (a docs generator wiping its output): the
    // watch follows the new folder.
    fs::remove_dir_all(&root).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    copy_tree(&sample_docs(), &root);
    fs::write(
        root.join("wombat.md"),
        "# Wombat burrows\n\nWombats dig long burrows.\n",
    )
    .unwrap();
    let wombat = r#"{"query": "wombat", "limit": 3, "mode": "lexical"}"#;
    eventually("HTTP answers after the root was replaced", || {
        let (_, v) = exchange(&addr, "POST", "/v1/search", Some(wombat));
        v["results"][0]["path"] == "wombat.md"
    });
    fs::write(
        root.join("wombat.md"),
        "# Wombat burrows\n\nWombats dig long tunnels.\n",
    )
    .unwrap();
    let tunnels = r#"{"query": "wombat tunnels", "limit": 3, "mode": "lexical"}"#;
    eventually("and edits after that", || {
        let (_, v) = exchange(&addr, "POST", "/v1/search", Some(tunnels));
        v["results"][0]["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("tunnels"))
    });
    drop(mcp);
    assert!(std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status()
        .unwrap()
        .success());
    assert!(child.wait().unwrap().success());
    // Its stderr stayed readable to the end (the refresh summaries go there).
    let _ = log.join().unwrap();
}

#[test]
fn an_edit_that_keeps_size_and_mtime_is_stale_for_status_too() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let f = root.join("guide/install.md");
    let text = fs::read_to_string(&f).unwrap();
    let mtime = fs::metadata(&f).unwrap().modified().unwrap();
    let swapped = text.replacen("install", "INSTALL", 1);
    assert!(swapped != text && swapped.len() == text.len());
    write_with_mtime(&f, &swapped, mtime);
    let v = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(v["fresh"], false, "{v}");
    assert!(v["changed"].to_string().contains("install.md"), "{v}");
    let r = json_of(t.path(), &["refresh", "--index", "idx", "--json"]);
    assert_eq!(r["files"]["changed"], 1, "{r}");
    let v = json_of(t.path(), &["status", "--index", "idx", "--json"]);
    assert_eq!(v["fresh"], true, "{v}");
}

#[test]
fn a_running_retriever_follows_an_index_removed_and_built_again_at_the_same_generation() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("a"), t.path().join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    fs::write(a.join("one.md"), "# Alpha\n\nAardvarks live here.\n").unwrap();
    fs::write(b.join("two.md"), "# Beta\n\nBadgers live here.\n").unwrap();
    lexical_index(t.path(), &a);
    let idx = t.path().join("idx");
    let served = docfuse::retriever::DocfuseRetriever::open(&idx).unwrap();
    assert_eq!(served.index().manifest().generation, 1);
    fs::remove_dir_all(&idx).unwrap();
    lexical_index(t.path(), &b);
    let now = served.index();
    assert_eq!(now.manifest().generation, 1, "the same generation number");
    let opts = docfuse::read::SearchOptions {
        mode: docfuse::read::Mode::Lexical,
        ..Default::default()
    };
    let hits = now.search("badgers", &opts).unwrap().hits;
    assert_eq!(hits.first().map(|h| h.chunk.path.as_str()), Some("two.md"));
}

#[test]
fn an_index_of_a_newer_format_is_refused_and_force_rebuilds_it_from_its_roots() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let manifest = t.path().join("idx/manifest.json");
    let mut m: Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
    m["schema_version"] = (m["schema_version"].as_u64().unwrap() + 1).into();
    fs::write(&manifest, m.to_string()).unwrap();
    for args in [
        &["refresh", "--index", "idx"][..],
        &["search", "--index", "idx", "install"][..],
        &["status", "--index", "idx"][..],
    ] {
        let o = docfuse(t.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains("newer docfuse"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?}: nothing called fresh");
    }
    let o = docfuse(t.path(), &["refresh", "--index", "idx", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rebuilt from its roots"),
        "{}",
        stderr(&o)
    );
    let hits = run_ok(t.path(), &["search", "--index", "idx", "install"]);
    assert!(hits.contains("guide/install.md"), "{hits}");
}

#[test]
fn a_second_writer_waits_at_most_its_wait_timeout() {
    let t = tempfile::tempdir().unwrap();
    let root = docs(t.path());
    lexical_index(t.path(), &root);
    let idx = t.path().join("idx");
    let held = docfuse::generation::acquire_writer_lock(&idx, false, &mut |_| {}).unwrap();
    let started = std::time::Instant::now();
    let o = docfuse(
        t.path(),
        &["refresh", "--index", "idx", "--wait-timeout", "0.5"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(started.elapsed() >= std::time::Duration::from_millis(500));
    let err = stderr(&o);
    assert!(err.contains("still writing after 0.5 s"), "{err}");
    let o = docfuse(
        t.path(),
        &["refresh", "--index", "idx", "--wait-timeout", "soon"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a number of seconds"),
        "{}",
        stderr(&o)
    );
    drop(held);
    let o = docfuse(
        t.path(),
        &["refresh", "--index", "idx", "--wait-timeout", "5"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
