//! Embeddings end to end: vector reuse by hash, identity changes, degraded answers, and
//! hybrid beating both arms on the Rust-book dev set. Needs the provisioned model
//! (`bash scripts/provision-models`).
#![cfg(feature = "embeddings")]

use crate::common;
use common::*;
use docfuse::config::IndexConfig;
use docfuse::embed::{load_default_embedder, Embedder};
use docfuse::eval::{evaluate, read_docfuse};
use docfuse::generation::Source;
use docfuse::read::{DocIndex, Mode, SearchOptions};
use docfuse::write::{build, BuildOptions, BuildReport};
use std::path::Path;
use std::sync::{Arc, OnceLock};

fn minilm() -> Arc<dyn Embedder> {
    static E: OnceLock<Arc<dyn Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        Arc::from(
            load_default_embedder()
                .unwrap_or_else(|e| panic!("{e}\n(run `bash scripts/provision-models`)")),
        )
    })
    .clone()
}

fn renamed() -> Renamed {
    let mut id = minilm().identity().clone();
    id.model_sha256 = "0".repeat(64);
    Renamed(minilm(), id)
}

fn index_with(dir: &Path, root: &Path, e: &dyn Embedder) -> BuildReport {
    let opts = BuildOptions {
        config: IndexConfig::default(),
        embedder: Some(e),
        ..Default::default()
    };
    build(
        dir,
        &Source::Roots(vec![root.to_path_buf()]),
        &opts,
        &mut |_| {},
    )
    .unwrap()
}

fn open(dir: &Path, e: Arc<dyn Embedder>) -> DocIndex {
    DocIndex::open(dir).unwrap().with_embedder(e)
}

fn opts(mode: Mode) -> SearchOptions {
    SearchOptions {
        mode,
        ..SearchOptions::default()
    }
}

#[test]
fn unchanged_corpus_embeds_nothing_and_an_edit_embeds_only_its_section() {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    copy_tree(&sample_docs(), &docs);
    let idx = d.path().join("idx");
    let first = index_with(&idx, &docs, minilm().as_ref());
    assert_eq!((first.embedded, first.reused), (first.chunks, 0));

    let again = index_with(&idx, &docs, minilm().as_ref());
    assert_eq!((again.embedded, again.reused), (0, first.chunks));

    let path = docs.join("guide/parallel.md");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("exit code is 130", "exit code is 131")).unwrap();
    let edited = index_with(&idx, &docs, minilm().as_ref());
    assert_eq!((edited.embedded, edited.reused), (1, first.chunks - 1));

    // reverted: the generation before, which the folder store keeps, still holds the
    // old text's vector (IndexStore::vectors), so nothing is embedded
    std::fs::write(&path, &text).unwrap();
    let reverted = index_with(&idx, &docs, minilm().as_ref());
    assert_eq!(reverted.files.changed, 1);
    assert_eq!((reverted.embedded, reverted.reused), (0, first.chunks));
    let hits = |dir: &Path| -> Vec<(u64, String)> {
        open(dir, minilm())
            .search("exit code 130", &opts(Mode::Vector))
            .unwrap()
            .hits
            .iter()
            .map(|h| (h.ord, format!("{:.6}", h.score)))
            .collect()
    };
    let fresh = d.path().join("fresh");
    index_with(&fresh, &docs, minilm().as_ref());
    assert_eq!(hits(&idx), hits(&fresh));
}

#[test]
fn another_identity_re_embeds_everything_and_is_never_mixed() {
    let d = tempfile::tempdir().unwrap();
    let idx = d.path().join("idx");
    let first = index_with(&idx, &sample_docs(), minilm().as_ref());
    let other = renamed();
    let second = index_with(&idx, &sample_docs(), &other);
    assert_eq!((second.embedded, second.reused), (first.chunks, 0));

    // The index now holds vectors of `other`: the real MiniLM must not query them.
    let index = open(&idx, minilm());
    let r = index
        .search("cancel running tasks", &opts(Mode::Auto))
        .unwrap();
    assert_eq!(r.mode, Mode::Lexical);
    assert!(
        r.degraded.as_deref().unwrap().contains("another embedder"),
        "{:?}",
        r.degraded
    );
    assert!(!r.hits.is_empty());
    let err = index
        .search("cancel running tasks", &opts(Mode::Hybrid))
        .unwrap_err();
    assert!(
        err.to_string().contains("vector search unavailable"),
        "{err}"
    );
}

#[test]
fn a_paraphrase_with_no_word_in_common_is_found_by_hybrid_only() {
    let d = tempfile::tempdir().unwrap();
    let idx = d.path().join("idx");
    index_with(&idx, &sample_docs(), minilm().as_ref());
    let index = open(&idx, minilm());
    let query = "abort via keyboard shortcut";
    let answer = "guide/parallel.md#running-tasks-in-parallel/cancelling";
    let chunk = index
        .lexical()
        .all_chunks()
        .unwrap()
        .into_iter()
        .find(|c| c.id == answer)
        .unwrap();
    let answer_terms = docfuse::analysis::query_terms(&format!(
        "{} {} {}",
        chunk.title,
        chunk.heading_path.join(" "),
        chunk.text
    ));
    let shared: Vec<String> = docfuse::analysis::query_terms(query)
        .into_iter()
        .filter(|t| answer_terms.contains(t))
        .collect();
    assert!(shared.is_empty(), "the paraphrase shares {shared:?}");

    let ids = |mode| -> Vec<String> {
        let o = SearchOptions {
            limit: 3,
            ..opts(mode)
        };
        index
            .search(query, &o)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.chunk.id)
            .collect()
    };
    assert!(!ids(Mode::Lexical).contains(&answer.to_string()));
    assert!(
        ids(Mode::Hybrid).contains(&answer.to_string()),
        "{:?}",
        ids(Mode::Hybrid)
    );
}

#[test]
fn hybrid_beats_both_arms_on_the_rust_book_dev_set() {
    let d = tempfile::tempdir().unwrap();
    let idx = d.path().join("idx");
    index_with(&idx, &rust_book(), minilm().as_ref());
    let index = open(&idx, minilm());
    let qs = read_docfuse(&rust_book().join("queries.dev.jsonl")).unwrap();
    let m = |mode: Mode| {
        evaluate(&index, &qs, mode.name(), &opts(mode))
            .unwrap()
            .metrics
    };
    let (lex, vec, hyb) = (m(Mode::Lexical), m(Mode::Vector), m(Mode::Hybrid));
    eprintln!(
        "MRR@10 lexical {:.4} vector {:.4} hybrid {:.4}",
        lex.mrr10, vec.mrr10, hyb.mrr10
    );
    eprintln!(
        "R@5    lexical {:.4} vector {:.4} hybrid {:.4}",
        lex.recall5, vec.recall5, hyb.recall5
    );
    assert!(hyb.mrr10 > lex.mrr10 && hyb.mrr10 > vec.mrr10);
    assert!(hyb.recall5 > lex.recall5 && hyb.recall5 > vec.recall5);
    // auto mode answers with hybrid when the vectors are usable
    assert_eq!(
        index
            .search("Rc::strong_count", &opts(Mode::Auto))
            .unwrap()
            .mode,
        Mode::Hybrid
    );
    // an exact symbol stays on top in hybrid mode
    let top = &index
        .search("Rc::strong_count", &opts(Mode::Hybrid))
        .unwrap()
        .hits[0];
    assert_eq!(top.chunk.path, "ch15-04-rc.md");
}

#[test]
fn cli_answers_hybrid_then_lexically_with_a_reason_when_the_model_is_gone() {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let o = docfuse(d.path(), &["index", docs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // every chunk is embedded on the first build: "into N chunks … N embedded"
    let out = stdout(&o);
    let chunks = out
        .split(" chunks")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .unwrap_or("?");
    assert!(out.contains(&format!("{chunks} embedded")), "{out}");

    let o = docfuse(
        d.path(),
        &[
            "search",
            "--json",
            "--explain",
            "run tasks one after another",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mode"], "hybrid");
    assert_eq!(v["degraded"], serde_json::Value::Null);
    let f = &v["results"][0]["explain"]["fusion"];
    assert!(
        f["cosine"].as_f64().unwrap() > 0.0 && f["vector_rank"].as_u64().is_some(),
        "{f}"
    );
    assert!(
        f["lexical_rank"].as_u64().is_some() && f["lexical_part"].as_f64().unwrap() > 0.0,
        "{f}"
    );

    // (the cache off: a question asked before would be answered from its cached vector)
    let gone = [
        ("DOCFUSE_MODEL_DIR", "/nonexistent/model"),
        ("DOCFUSE_QUERY_CACHE", "off"),
    ];
    let o = docfuse_env(
        d.path(),
        &["search", "--json", "run tasks one after another"],
        &gone,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("answering lexically") && stderr(&o).contains("hint:"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mode"], "lexical");
    assert!(v["degraded"].as_str().unwrap().contains("not found"), "{v}");
    assert_eq!(v["results"][0]["path"], "guide/parallel.md");

    let o = docfuse_env(d.path(), &["search", "--mode", "hybrid", "tasks"], &gone);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("vector search unavailable"),
        "{}",
        stderr(&o)
    );
    // a DOCFUSE_MODEL_DIR that is not the model's folder says what it should be
    assert!(
        stderr(&o).contains("DOCFUSE_MODEL_DIR is the folder holding model.onnx"),
        "{}",
        stderr(&o)
    );
    // the models/ folder provision-models fills is accepted as DOCFUSE_MODEL_DIR (its
    // model and its ONNX Runtime)
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let o = docfuse_env(
        d.path(),
        &[
            "search",
            "--mode",
            "hybrid",
            "--json",
            "run tasks one after another",
        ],
        &[
            ("DOCFUSE_MODEL_DIR", models.to_str().unwrap()),
            ("DOCFUSE_QUERY_CACHE", "off"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["mode"].as_str(), v["degraded"].as_str()),
        (Some("hybrid"), None),
        "{v}"
    );
}

#[test]
fn an_hnsw_index_gives_the_exact_answers_on_a_small_collection() {
    let d = tempfile::tempdir().unwrap();
    let (exact, approx) = (d.path().join("exact"), d.path().join("hnsw"));
    index_with(&exact, &sample_docs(), minilm().as_ref());
    let e = minilm();
    let hnsw_opts = BuildOptions {
        config: IndexConfig {
            hnsw_min_vectors: 1,
            ..IndexConfig::default()
        },
        embedder: Some(e.as_ref()),
        ..Default::default()
    };
    build(
        &approx,
        &Source::Roots(vec![sample_docs()]),
        &hnsw_opts,
        &mut |_| {},
    )
    .unwrap();
    let gen = approx.join("gen-000001");
    assert!(gen.join("hnsw.hnsw.graph").is_file() && gen.join("hnsw.hnsw.data").is_file());
    let (a, b) = (open(&exact, minilm()), open(&approx, minilm()));
    for q in [
        "stop running tasks",
        "install from source",
        "plugin symbols",
        "colours",
    ] {
        let ids = |i: &DocIndex| -> Vec<String> {
            i.search(q, &opts_limit(Mode::Vector, 5))
                .unwrap()
                .hits
                .into_iter()
                .map(|h| h.chunk.id)
                .collect()
        };
        assert_eq!(ids(&a), ids(&b), "{q}");
    }
    // a damaged graph is refused with the rebuild hint, and auto falls back to lexical
    std::fs::write(gen.join("hnsw.hnsw.graph"), b"garbage").unwrap();
    let c = open(&approx, minilm());
    let r = c.search("stop running tasks", &opts(Mode::Auto)).unwrap();
    assert_eq!(r.mode, Mode::Lexical);
    let why = r.degraded.unwrap();
    assert!(
        why.contains("damaged") && why.contains("docfuse verify"),
        "{why}"
    );
}

fn opts_limit(mode: Mode, limit: usize) -> SearchOptions {
    SearchOptions {
        limit,
        ..opts(mode)
    }
}

#[test]
fn a_chunk_pending_embedding_is_still_found_first_by_hybrid_search() {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    copy_tree(&sample_docs(), &docs);
    let idx = d.path().join("idx");
    index_with(&idx, &docs, minilm().as_ref());
    std::fs::write(
        docs.join("walrus.md"),
        "# Walrus mode\n\nWalruses lounge on ice floes.\n",
    )
    .unwrap();
    let e = minilm();
    let build_opts = BuildOptions {
        embedder: Some(e.as_ref()),
        max_chunks: Some(0),
        ..Default::default()
    };
    let r = build(
        &idx,
        &Source::Roots(vec![docs.clone()]),
        &build_opts,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.pending, 1);
    let index = open(&idx, minilm());
    let resp = index.search("walruses", &opts(Mode::Hybrid)).unwrap();
    assert_eq!(resp.hits[0].chunk.path, "walrus.md");
}

/// `docfuse search --json --explain QUERY` in `dir` with debug logs and `env`: its JSON and
/// whether its log has `marker`.
fn ask_logged(dir: &Path, query: &str, env: &[(&str, &str)], marker: &str) -> (String, bool) {
    let mut env = env.to_vec();
    env.push(("DOCFUSE_LOG", "docfuse=debug"));
    let o = docfuse_env(dir, &["search", "--json", "--explain", query], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (stdout(&o), stderr(&o).contains(marker))
}

#[test]
fn searches_make_their_session_from_the_folded_model_the_build_wrote_with_the_same_answers() {
    let d = tempfile::tempdir().unwrap();
    // the cache is one per user: this test's own user cache folder, as it damages it
    let home = tempfile::tempdir().unwrap();
    let xdg = home.path().to_str().unwrap();
    let docfuse = |dir: &Path, args: &[&str]| docfuse_env(dir, args, &[("XDG_CACHE_HOME", xdg)]);
    let docs = sample_docs();
    // an index built before the cache moved to the user's folder holds its own copy:
    // the next build removes it
    let legacy = d.path().join(".docfuse").join("model-cache");
    std::fs::create_dir_all(legacy.join("0".repeat(64))).unwrap();
    let o = docfuse(d.path(), &["index", docs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!legacy.exists(), "the index's own copy is removed");
    let cache = home.path().join("docfuse").join("model-cache");
    let folders: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "one folded model: {folders:?}");
    let ask = |env: &[(&str, &str)]| {
        let mut env = env.to_vec();
        env.push(("DOCFUSE_QUERY_CACHE", "off"));
        env.push(("XDG_CACHE_HOME", xdg));
        let q = "run tasks one after another";
        ask_logged(d.path(), q, &env, "session from the folded model")
    };
    let (folded, used) = ask(&[]);
    assert!(used, "the session comes from the folded model");
    assert!(folded.contains("\"mode\": \"hybrid\"") || folded.contains("\"mode\":\"hybrid\""));
    let (original, used) = ask(&[("DOCFUSE_MODEL_CACHE", "off")]);
    assert!(!used);
    assert_eq!(folded, original, "same scores, cosines and ranks");
    let o = docfuse(d.path(), &["verify"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(!stderr(&o).contains("folded-model cache"), "{}", stderr(&o));
    // a second index of the same model uses the same copy: nothing more is written
    let e = tempfile::tempdir().unwrap();
    let o = docfuse(e.path(), &["index", docs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1);
    assert!(!e.path().join(".docfuse").join("model-cache").exists());
    let env = [("DOCFUSE_QUERY_CACHE", "off"), ("XDG_CACHE_HOME", xdg)];
    let (second, used) = ask_logged(
        e.path(),
        "run tasks one after another",
        &env,
        "session from the folded model",
    );
    assert!(
        used,
        "the second index's session comes from the user's copy"
    );
    assert_eq!(second, folded);
    // weights cut short: verify warns (the index itself is whole), a search does not use
    // it and removes it, the original answers the same; the next refresh writes it again
    let weights = folders[0].join(docfuse::embed::folded::WEIGHTS);
    let len = std::fs::metadata(&weights).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&weights)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let o = docfuse(d.path(), &["verify"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("folded-model cache"), "{}", stderr(&o));
    let (damaged, used) = ask(&[]);
    assert!(!used);
    assert_eq!(damaged, original);
    assert!(!folders[0].exists(), "the search removed it");
    let o = docfuse(d.path(), &["refresh"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(ask(&[]).1, "refresh wrote it again");
    // a byte changed with the mtime kept (a copy that keeps times): a plain refresh trusts
    // the mtime, verify names the damage and `refresh --force` checks in full and rewrites
    let weights = folders[0].join(docfuse::embed::folded::WEIGHTS);
    let mtime = std::fs::metadata(&weights).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&weights).unwrap();
    let mid = bytes.len() / 3;
    bytes[mid] ^= 0x01;
    std::fs::write(&weights, &bytes).unwrap();
    drop(bytes);
    let f = std::fs::File::options().write(true).open(&weights).unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    let o = docfuse(d.path(), &["verify"]);
    assert!(stderr(&o).contains("refresh --force"), "{}", stderr(&o));
    let o = docfuse(d.path(), &["refresh", "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = docfuse(d.path(), &["verify"]);
    assert!(!stderr(&o).contains("folded-model cache"), "{}", stderr(&o));
    assert!(ask(&[]).1, "refresh --force wrote it again");
}

#[test]
fn a_question_asked_again_is_answered_from_the_query_vector_cache_with_the_same_result() {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let o = docfuse(d.path(), &["index", docs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ask = |env: &[(&str, &str)]| {
        let q = "run tasks one after another";
        ask_logged(d.path(), q, env, "query vector from the cache")
    };
    let (first, hit) = ask(&[]);
    assert!(!hit);
    assert!(first.contains("\"mode\": \"hybrid\"") || first.contains("\"mode\":\"hybrid\""));
    let cache = d.path().join(".docfuse").join("query-vectors");
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1);
    // asked again: from the cache, the very same answer (scores, cosines, ranks)
    let (again, hit) = ask(&[]);
    assert!(hit);
    assert_eq!(again, first);
    // a hit needs no session, but the installed model must be the index's, as for any
    // question: with the model files gone the cached question answers lexically with the
    // reason, as a new one does (the CLI, HTTP and MCP agree)
    let gone = d.path().join("no-model");
    let gone = gone.to_str().unwrap();
    for q in ["run tasks one after another", "a question not asked before"] {
        let o = docfuse_env(
            d.path(),
            &["search", "--json", q],
            &[("DOCFUSE_MODEL_DIR", gone)],
        );
        assert!(
            stdout(&o).contains("\"mode\": \"lexical\""),
            "{}",
            stdout(&o)
        );
        assert!(
            stdout(&o).contains("model.onnx` not found"),
            "{}",
            stdout(&o)
        );
    }
    // a damaged entry is not used: embedded again, same answer, entry rewritten
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    let n = bytes.len();
    bytes[n - 2] ^= 0x01;
    std::fs::write(&entries[0], &bytes).unwrap();
    let (repaired, hit) = ask(&[]);
    assert!(!hit);
    assert_eq!(repaired, first);
    assert!(ask(&[]).1);
    // turned off: not read
    let (off, hit) = ask(&[("DOCFUSE_QUERY_CACHE", "off")]);
    assert!(!hit);
    assert_eq!(off, first);
}

#[test]
fn text_answers_mark_results_that_hold_none_of_the_query_words() {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let o = docfuse(d.path(), &["index", docs.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mark = "[no query word: semantic neighbour]";
    // no word of the question is in the docs: every result is marked, and said to be so
    let o = docfuse(d.path(), &["search", "abort ongoing work"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let heads: Vec<String> = stdout(&o)
        .lines()
        .filter(|l| !l.starts_with("    "))
        .map(str::to_string)
        .collect();
    assert!(!heads.is_empty());
    assert!(heads.iter().all(|l| l.ends_with(mark)), "{heads:?}");
    assert!(
        stderr(&o).contains("No passage contains `abort`, `ongoing`, `work`")
            && stderr(&o).contains("may not cover"),
        "{}",
        stderr(&o)
    );
    // programs are told in a field
    let o = docfuse(d.path(), &["search", "--json", "abort ongoing work"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["semantic_neighbours_only"], true, "{v}");
    // a word found only as the start of longer words (`runnin` → `running`) is a lexical
    // match by prefix: answered, and not called neighbours
    let o = docfuse(d.path(), &["search", "--json", "runnin"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("semantic_neighbours_only").is_none(), "{v}");
    // made-up words: their nearest passages are no nearer than noise, so there is no
    // answer (exit 1), in every mode that uses vectors
    for mode in ["hybrid", "vector"] {
        let o = docfuse(
            d.path(),
            &["search", "--json", "--mode", mode, "zxqv florbnik"],
        );
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", stdout(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["results"], serde_json::json!([]), "{mode}: {v}");
        assert!(v.get("semantic_neighbours_only").is_none(), "{v}");
        assert_eq!(v["missing_words"], serde_json::json!(["zxqv", "florbnik"]));
    }
    // the words are there: the top result is not marked, and nothing is said
    let o = docfuse(d.path(), &["search", "cancel running tasks"]);
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(!first.contains(mark), "{first}");
    assert!(!stderr(&o).contains("No passage"), "{}", stderr(&o));
    // vector mode marks as the MCP tools do
    let o = docfuse(
        d.path(),
        &["search", "--mode", "vector", "abort ongoing work"],
    );
    assert!(stderr(&o).contains("may not cover"), "{}", stderr(&o));
    // lexical mode marks no result that holds a word of the question, with either mark
    let o = docfuse(
        d.path(),
        &["search", "--mode", "lexical", "cancel running tasks"],
    );
    let first = stdout(&o).lines().next().unwrap_or_default().to_string();
    assert!(
        !first.contains(mark) && !first.contains("[only common words match]"),
        "{first}"
    );
}

#[test]
fn embedding_leaves_no_onnx_runtime_telemetry_behind() {
    // ONNX Runtime 1.31 keeps a device id and a usage-event database under the user's
    // cache folder (and tries to send it) unless telemetry is off.
    let d = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let cache = home.path().join(".cache");
    // the binary must turn it off itself: the caller's ORT_DISABLE_TELEMETRY (scripts/test
    // sets it for in-process tests) is removed
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
            .args(args)
            .current_dir(d.path())
            .env_remove("ORT_DISABLE_TELEMETRY")
            .env("DOCFUSE_DAEMON_IDLE", "0")
            .env("HOME", h)
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    let o = run(&["index", sample_docs().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["search", "--mode", "hybrid", "parallel jobs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // docfuse's own cache folder (file stamps, `stamp`) is the only thing written
    let own = cache.join("docfuse");
    let left: Vec<_> = walk(home.path())
        .into_iter()
        .filter(|p| !p.starts_with(&own) && *p != cache)
        .collect();
    assert!(left.is_empty(), "written under HOME: {left:?}");
    assert!(own.join("stamps").is_dir(), "the model's stamp is kept");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push(e.path());
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

#[test]
fn hybrid_adds_the_proximity_part_to_a_page_linked_from_the_strongest_hit() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("docs");
    for (path, text) in [
        (
            "a.md",
            "# Alpha\n\nThe zebra crossing rules. See [Beta](b.md#setup).\n",
        ),
        (
            "b.md",
            "# Beta\n\nIntro words.\n\n## Setup\n\nInstall the thing.\n",
        ),
        ("c.md", "# Other\n\nUnrelated words.\n"),
    ] {
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(path), text).unwrap();
    }
    let idx = d.path().join("idx");
    index_with(&idx, &root, minilm().as_ref());
    let index = open(&idx, minilm());
    let mut o = opts(Mode::Hybrid);
    o.explain = true;
    let find = |hits: &[docfuse::read::Hit], path: &str| {
        hits.iter()
            .find(|h| h.chunk.path == path && h.chunk.heading_path.last() != Some(&"Beta".into()))
            .cloned()
    };
    let before = index.search("zebra", &o).unwrap().hits;
    let a = find(&before, "a.md").expect("the lexical hit");
    let pa = a.explain.unwrap().proximity.unwrap();
    assert_eq!((pa.proximity, pa.reach), (0.0, 0.0), "no other strong hit");
    if let Some(b) = find(&before, "b.md") {
        let p = b.explain.unwrap().proximity.unwrap();
        assert_eq!(p.proximity, 0.0, "weight 0 by default");
        assert_eq!(
            p.anchor.as_deref(),
            Some("a.md"),
            "but the reach is explained"
        );
    }
    o.params.prox_gain = 0.5;
    let after = index.search("zebra", &o).unwrap().hits;
    let b = find(&after, "b.md").expect("surfaced or raised by its link from a.md");
    let x = b.explain.clone().unwrap();
    let (f, p) = (x.fusion.unwrap(), x.proximity.unwrap());
    assert!(p.proximity > 0.0 && p.reach > 0.0, "{p:?}");
    assert_eq!(p.via[0].section.as_deref(), Some("b.md#beta/setup"));
    let sum = f.lexical_part + f.vector_part + f.exact_bonus + f.canonicality_bonus + p.proximity;
    assert!((b.score - sum).abs() < 1e-5, "{} = {f:?} + {p:?}", b.score);
    if let Some(c) = find(&after, "c.md") {
        assert_eq!(
            c.explain.unwrap().proximity.unwrap().proximity,
            0.0,
            "c.md is unrelated"
        );
    }
}

#[test]
fn vectors_kept_in_the_resumable_cache_are_not_embedded_again_after_a_rebuild() {
    // what a database writer does with its folder before reading the roots again
    let d = tempfile::tempdir().unwrap();
    let idx = d.path().join("idx");
    let first = index_with(&idx, &sample_docs(), minilm().as_ref());
    assert_eq!(docfuse::write::keep_vectors(&idx).unwrap(), first.chunks);
    for e in std::fs::read_dir(&idx).unwrap().flatten() {
        if e.file_name() != docfuse::write::EMBED_CACHE_FILE {
            let p = e.path();
            match p.is_dir() {
                true => std::fs::remove_dir_all(&p).unwrap(),
                false => std::fs::remove_file(&p).unwrap(),
            }
        }
    }
    let again = index_with(&idx, &sample_docs(), minilm().as_ref());
    assert_eq!((again.embedded, again.reused), (0, first.chunks));
    // the cache is gone with the publish
    assert!(!idx.join(docfuse::write::EMBED_CACHE_FILE).exists());
}

/// The dynamic-int8 variant of the model (`scripts/provision-models --dynamic-int8`, see
/// `models/README.md`): an index refreshed under it re-embeds every chunk (a new embedder
/// identity, named in `status`), each chunk's vector stays within cosine 0.97 of the
/// default model's, hybrid search answers with it, and the default model then refuses
/// those vectors with the reason. `scripts/test` provisions the variant;
/// `DOCFUSE_REQUIRE_DQ=1` makes its absence a failure.
#[test]
fn the_dynamic_int8_variant_is_a_new_identity_with_close_vectors() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    let dq = models.join("all-MiniLM-L6-v2-dq");
    if !dq.join("model.onnx").is_file() {
        assert!(
            std::env::var_os("DOCFUSE_REQUIRE_DQ").is_none(),
            "run `bash scripts/provision-models --dynamic-int8`"
        );
        eprintln!("skipped: models/all-MiniLM-L6-v2-dq is not provisioned");
        return;
    }
    let default = models.join("all-MiniLM-L6-v2");
    let (dq, default) = (dq.to_str().unwrap(), default.to_str().unwrap());
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let with = |model: &str, args: &[&str]| {
        let env = [("DOCFUSE_MODEL_DIR", model), ("DOCFUSE_QUERY_CACHE", "off")];
        docfuse_env(d.path(), args, &env)
    };
    for (model, idx) in [(default, "a"), (dq, "b")] {
        let o = with(model, &["index", "--index", idx, docs.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let vectors = |idx: &str| -> Vec<f32> {
        let bytes = std::fs::read(d.path().join(idx).join("gen-000001/vectors.f32")).unwrap();
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect()
    };
    let (a, b) = (vectors("a"), vectors("b"));
    assert!(
        a.len() == b.len() && a.len() >= 384 * 10,
        "{} {}",
        a.len(),
        b.len()
    );
    let cosines: Vec<f32> = a
        .chunks(384)
        .zip(b.chunks(384))
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum())
        .collect();
    let lowest = cosines.iter().cloned().fold(1.0, f32::min);
    assert!(lowest > 0.97 && lowest < 0.99999, "{cosines:?}");

    // the default index refreshed under the variant: every chunk embedded again
    let o = with(dq, &["refresh", "--index", "a"]);
    let chunks = cosines.len();
    // and it says why
    assert!(
        stdout(&o).contains(&format!(
            "{chunks} embedded, 0 reused (the embedder changed: all-MiniLM-L6-v2 → all-MiniLM-L6-v2-dq)"
        )),
        "{}",
        stdout(&o)
    );
    let o = with(dq, &["status", "--index", "a", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["embedder"]["model"], "all-MiniLM-L6-v2-dq", "{v}");
    assert_eq!(
        v["vector_search_unavailable"],
        serde_json::Value::Null,
        "{v}"
    );
    // under the default model, status names the reason in JSON as in text
    let o = with(default, &["status", "--index", "a", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = v["vector_search_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("another embedder"), "{v}");
    assert_eq!(v["vectors_usable"], false, "{v}");
    let ask = [
        "search",
        "--index",
        "a",
        "--json",
        "run tasks one after another",
    ];
    let v: serde_json::Value = serde_json::from_slice(&with(dq, &ask).stdout).unwrap();
    assert_eq!(
        (v["mode"].as_str(), v["degraded"].as_str()),
        (Some("hybrid"), None)
    );
    assert_eq!(v["results"][0]["path"], "guide/parallel.md", "{v}");
    // the default model does not mix its query vectors with the variant's
    let v: serde_json::Value = serde_json::from_slice(&with(default, &ask).stdout).unwrap();
    assert_eq!(v["mode"], "lexical");
    assert!(
        v["degraded"].as_str().unwrap().contains("another embedder"),
        "{v}"
    );
}

/// `index --no-embeddings` on an index with vectors builds it lexical-only: it says so,
/// with the two ways out, and `--max-chunks 0` keeps the vectors instead.
#[test]
fn a_lexical_only_build_of_an_index_with_vectors_says_vector_search_is_off() {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let docs = docs.to_str().unwrap();
    let o = docfuse(d.path(), &["index", docs]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let kept = d.path().join("kept");
    copy_tree(&d.path().join(".docfuse"), &kept);
    let o = docfuse(d.path(), &["index", "--json", "--no-embeddings", docs]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["vectors"], false, "{v}");
    let warning = v["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("vector search is off"), "{v}");
    assert!(warning.contains("--max-chunks 0"), "{v}");
    let o = docfuse(
        d.path(),
        &[
            "index",
            "--json",
            "--max-chunks",
            "0",
            "--index",
            "kept",
            docs,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["vectors"], true, "{v}");
    assert!(v["warnings"].as_array().is_none_or(|w| w.is_empty()), "{v}");
    // a library path given that does not exist is named as given, not as searched for
    let o = docfuse_env(
        d.path(),
        &["search", "--json", "--index", "kept", "run tasks"],
        &[
            ("DOCFUSE_ORT_DYLIB", "/nonexistent/libonnxruntime.so"),
            ("DOCFUSE_QUERY_CACHE", "off"),
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = v["degraded"].as_str().unwrap_or_default();
    assert!(
        why.contains("`/nonexistent/libonnxruntime.so` not found"),
        "{v}"
    );
    assert!(!why.contains("looked in"), "{v}");
}
