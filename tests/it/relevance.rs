//! Ranking on the real corpora in `../shared/bench/corpora`: the dev-set floors, explain
//! never changing the order, determinism, identifier queries, ranked snapshots.

use crate::common;
use common::*;
use docfuse::config::IndexConfig;
use docfuse::eval::{evaluate, read_docfuse};
use docfuse::generation::Source;
use docfuse::read::{DocIndex, Mode, SearchOptions};
use docfuse::write::{build, BuildOptions};
use std::sync::OnceLock;

struct Built {
    _dir: tempfile::TempDir,
    index: DocIndex,
}

fn index_of(root: std::path::PathBuf) -> Built {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idx");
    build(
        &path,
        &Source::Roots(vec![root]),
        &BuildOptions {
            config: IndexConfig::default(),
            ..Default::default()
        },
        &mut |_| {},
    )
    .unwrap();
    Built {
        index: DocIndex::open(&path).unwrap(),
        _dir: dir,
    }
}

fn rust_book_index() -> &'static DocIndex {
    static B: OnceLock<Built> = OnceLock::new();
    &B.get_or_init(|| index_of(rust_book())).index
}

fn dev_questions() -> Vec<docfuse::eval::Question> {
    read_docfuse(&rust_book().join("queries.dev.jsonl")).unwrap()
}

/// Lexical-mode options: these indexes have no vectors, and the floors are lexical.
fn lexical() -> SearchOptions {
    SearchOptions {
        mode: Mode::Lexical,
        ..SearchOptions::default()
    }
}

fn floors(set: &str) -> (f64, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/floors.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let f = &v[set];
    (f["recall5"].as_f64().unwrap(), f["mrr10"].as_f64().unwrap())
}

#[test]
fn rust_book_dev_set_meets_the_recorded_floors() {
    let questions = dev_questions();
    assert_eq!(questions.len(), 50);
    meets_floors(rust_book_index(), &questions, "rust_book_dev_lexical");
}

#[test]
fn cargo_book_dev_set_meets_the_recorded_floors() {
    let root = cargo_book();
    let questions = read_docfuse(&root.join("queries.dev.jsonl")).unwrap();
    assert_eq!(questions.len(), 60);
    let built = index_of(root);
    meets_floors(&built.index, &questions, "cargo_book_dev_lexical");
}

fn meets_floors(index: &DocIndex, questions: &[docfuse::eval::Question], set: &str) {
    let r = evaluate(index, questions, "lexical", &lexical()).unwrap();
    let (min_r5, min_mrr) = floors(set);
    eprintln!(
        "{set}: recall@5 {:.4} MRR@10 {:.4} nDCG@10 {:.4}",
        r.metrics.recall5, r.metrics.mrr10, r.metrics.ndcg10
    );
    assert!(
        r.metrics.recall5 >= min_r5,
        "recall@5 {} < floor {min_r5}",
        r.metrics.recall5
    );
    assert!(
        r.metrics.mrr10 >= min_mrr,
        "MRR@10 {} < floor {min_mrr}",
        r.metrics.mrr10
    );
}

fn ranking(index: &DocIndex, q: &str, explain: bool) -> Vec<(String, f32)> {
    let opts = SearchOptions {
        limit: 20,
        explain,
        ..lexical()
    };
    index
        .search(q, &opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.chunk.id, h.score))
        .collect()
}

#[test]
fn explain_never_changes_the_ranking_on_any_dev_query() {
    let index = rust_book_index();
    for q in dev_questions() {
        assert_eq!(
            ranking(index, &q.query, false),
            ranking(index, &q.query, true),
            "{}",
            q.query
        );
    }
}

#[test]
fn same_input_same_ranking_across_builds() {
    let other = index_of(rust_book());
    for q in dev_questions().iter().take(20) {
        assert_eq!(
            ranking(rust_book_index(), &q.query, false),
            ranking(&other.index, &q.query, false)
        );
    }
}

/// `(chunk id, score bits, matched terms)` of the first `k` lexical hits of `q`, scoring
/// every posting or not.
fn first_k(index: &DocIndex, q: &str, k: usize, exhaustive: bool) -> Vec<(String, u32, usize)> {
    let mut opts = SearchOptions {
        limit: k,
        ..lexical()
    };
    opts.params.exhaustive = exhaustive;
    let r = index.search(q, &opts).unwrap();
    r.hits
        .into_iter()
        .map(|h| (h.chunk.id, h.score.to_bits(), h.matched_terms.len()))
        .collect()
}

/// The same first k (chunks, scores to the bit, order, matched terms) and missing words
/// with and without score bounds, on every dev question of both books, on one index of
/// many small buckets (segments) too, and on queries of other shapes.
#[test]
fn the_top_k_found_with_score_bounds_is_the_exhaustive_top_k() {
    let cargo = cargo_book();
    let cargo_questions = read_docfuse(&cargo.join("queries.dev.jsonl")).unwrap();
    let cargo_index = index_of(cargo);
    let small_buckets = {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idx");
        let opts = BuildOptions {
            bucket_chunks: Some(37),
            ..Default::default()
        };
        build(&path, &Source::Roots(vec![rust_book()]), &opts, &mut |_| {}).unwrap();
        Built {
            index: DocIndex::open(&path).unwrap(),
            _dir: dir,
        }
    };
    let shapes = [
        "what is the",
        "zxqv florbnik",
        "Rc::strong_count",
        "fencesentinel_last_line_of_code",
        "how do I",
        "\"cargo build\" release",
        "HashMap entry or_insert",
        "ch15-04-rc.md",
        "Traits",
    ];
    // a section a box interrupts: its chunk after the box is still the section's
    let boxed = {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        let text = "# Channels\n\nIntro about queues.\n\n{% hint %}\n## Early access\nRolling out.\n{% endhint %}\n\nBackpressure applies to queues.\n";
        std::fs::write(docs.join("c.md"), text).unwrap();
        std::fs::write(
            docs.join("d.md"),
            "# Other\n\nQueues elsewhere, no pressure.\n",
        )
        .unwrap();
        let path = dir.path().join("idx");
        build(
            &path,
            &Source::Roots(vec![docs]),
            &BuildOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        Built {
            index: DocIndex::open(&path).unwrap(),
            _dir: dir,
        }
    };
    let boxed_hits = first_k(&boxed.index, "backpressure", 10, false);
    assert!(
        boxed_hits.iter().any(|h| h.0 == "c.md#channels~2"),
        "{boxed_hits:?}"
    );
    let sets: [(&DocIndex, Vec<String>); 4] = [
        (
            rust_book_index(),
            dev_questions()
                .into_iter()
                .map(|q| q.query)
                .chain(shapes.map(String::from))
                .collect(),
        ),
        (
            &small_buckets.index,
            dev_questions().into_iter().map(|q| q.query).collect(),
        ),
        (
            &cargo_index.index,
            cargo_questions.into_iter().map(|q| q.query).collect(),
        ),
        (
            &boxed.index,
            [
                "backpressure",
                "queues",
                "early access",
                "backpressure queues",
                "pressure",
            ]
            .map(String::from)
            .to_vec(),
        ),
    ];
    let mut compared = 0;
    for (index, queries) in sets {
        for q in &queries {
            for k in [1, 3, 10, 100] {
                let exact = first_k(index, q, k, true);
                assert_eq!(first_k(index, q, k, false), exact, "`{q}`, k {k}");
                compared += exact.len();
            }
            let missing = |exhaustive: bool| {
                let mut opts = lexical();
                opts.params.exhaustive = exhaustive;
                index.search(q, &opts).unwrap().missing_words
            };
            assert_eq!(missing(false), missing(true), "`{q}`");
        }
    }
    assert!(compared > 10_000, "{compared} hits compared");
}

fn top(index: &DocIndex, q: &str) -> (String, Vec<String>) {
    let hits = index.search(q, &lexical()).unwrap().hits;
    let h = hits.first().unwrap_or_else(|| panic!("no hit for {q}"));
    (h.chunk.path.clone(), h.chunk.heading_path.clone())
}

#[test]
fn identifiers_are_findable_whole_and_split() {
    let index = rust_book_index();
    // Both of the first two sections show `Rc::strong_count` in code; the judged one is second.
    let hits = index.search("Rc::strong_count", &lexical()).unwrap().hits;
    let paths: Vec<&str> = hits.iter().take(2).map(|h| h.chunk.path.as_str()).collect();
    assert!(paths.contains(&"ch15-04-rc.md"), "{paths:?}");
    assert!(hits[0].chunk.text.contains("Rc::strong_count"));
    assert_eq!(top(index, "or_insert").0, "ch08-03-hash-maps.md");
    assert_eq!(top(index, "--test-threads").0, "ch11-02-running-tests.md");
    // `HashMap` is split into `hash` and `map`: the section about hash maps ranks first.
    assert_eq!(top(index, "hash map").0, "ch08-03-hash-maps.md");
    // prefix: `iter` (4 letters) matches `iterators`, `iterator`
    let hits = index.search("closur", &lexical()).unwrap().hits;
    assert!(
        hits.iter().any(|h| h.chunk.path.starts_with("ch13-01")),
        "prefix closur → closures"
    );
}

#[test]
fn cargo_book_answers_its_own_questions() {
    let built = index_of(cargo_book());
    let (path, _) = top(&built.index, "cargo publish --dry-run");
    assert!(path.contains("publish"), "{path}");
    let (path, heads) = top(&built.index, "[workspace] members");
    assert!(path.contains("workspace"), "{path} {heads:?}");
}

#[test]
fn ranked_snapshot_of_dev_queries() {
    let index = rust_book_index();
    let mut out = String::new();
    for q in dev_questions().iter().take(8) {
        out.push_str(&format!("# {}\n", q.query));
        let opts = SearchOptions {
            limit: 5,
            ..lexical()
        };
        for (i, h) in index
            .search(&q.query, &opts)
            .unwrap()
            .hits
            .iter()
            .enumerate()
        {
            out.push_str(&format!("{} · {} · {:.2}\n", i + 1, h.chunk.id, h.score));
        }
    }
    insta::assert_snapshot!(out);
}
