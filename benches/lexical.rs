//! Criterion benchmarks of the lexical engine on the Rust book (shared benchmark data).
//!
//! Group `rust_book`:
//! - `build`: a full index build of the book into a fresh folder (10 samples, flat);
//! - `query/all`: the 50 dev questions, one after another, on a warm open index
//!   (throughput: 50 queries per iteration), with `SearchOptions::default()` (limit 10);
//! - `query/<kind>`: the same for each question kind (keyword, semantic, howto, concept).
//!
//! The corpus is read from `$DOCFUSE_SHARED/bench/corpora/rust-book` (default `../shared`
//! beside the repository). Run with `cargo bench --bench lexical`; `cargo test --release
//! --all-targets` runs each benchmark once as a smoke test. Whole-process timings and the
//! comparison with baselines are in `scripts/bench` (results in `benches/RESULTS.md`).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use docfuse::config::IndexConfig;
use docfuse::eval::read_docfuse;
use docfuse::generation::Source;
use docfuse::read::{DocIndex, Mode, SearchOptions};
use docfuse::write::{build, BuildOptions};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Rust book in the shared benchmark data; panics with a hint when it is absent.
fn rust_book() -> PathBuf {
    let shared = std::env::var_os("DOCFUSE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let book = shared.join("bench/corpora/rust-book");
    assert!(
        book.join("queries.dev.jsonl").is_file(),
        "benchmark corpus not found at `{}`: set DOCFUSE_SHARED to the folder that holds \
         bench/corpora/rust-book (default: ../shared beside the repository)",
        book.display()
    );
    book
}

/// The kind (`keyword`, `semantic`, `howto`, `concept`) of each dev question, by id.
fn kinds(queries: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(queries).expect("read queries.dev.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("queries.dev.jsonl line");
            let s = |k: &str| v[k].as_str().unwrap_or("other").to_string();
            (s("id"), s("kind"))
        })
        .collect()
}

fn build_index(dir: &Path, book: &Path) {
    build(
        dir,
        &Source::Roots(vec![book.to_path_buf()]),
        &BuildOptions {
            config: IndexConfig::default(),
            ..Default::default()
        },
        &mut |_| {},
    )
    .expect("index build of the Rust book");
}

fn rust_book_benches(c: &mut Criterion) {
    let book = rust_book();
    let queries = book.join("queries.dev.jsonl");
    let questions = read_docfuse(&queries).expect("read the dev questions");
    let kind_of = kinds(&queries);

    let mut g = c.benchmark_group("rust_book");

    // Index build: each iteration builds into a fresh, empty folder (setup not timed).
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("build", |b| {
        b.iter_batched(
            || tempfile::tempdir().expect("temp dir"),
            |tmp| {
                build_index(&tmp.path().join("idx"), &book);
                tmp // dropped (removed) outside the timed part
            },
            BatchSize::PerIteration,
        )
    });

    // Warm query latency on one open index.
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("idx");
    build_index(&dir, &book);
    let index = DocIndex::open(&dir).expect("open the built index");
    let opts = SearchOptions {
        mode: Mode::Lexical,
        ..SearchOptions::default()
    };
    for q in &questions {
        index.search(&q.query, &opts).expect("search"); // warm the page cache
    }

    g.sample_size(20)
        .sampling_mode(SamplingMode::Auto)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(questions.len() as u64));
    g.bench_function("query/all", |b| {
        b.iter(|| {
            for q in &questions {
                black_box(index.search(black_box(&q.query), &opts).expect("search"));
            }
        })
    });

    let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for q in &questions {
        let kind = kind_of.get(&q.id).map_or("other", String::as_str);
        by_kind.entry(kind).or_default().push(&q.query);
    }
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    for (kind, qs) in &by_kind {
        g.throughput(Throughput::Elements(qs.len() as u64));
        g.bench_function(format!("query/{kind}"), |b| {
            b.iter(|| {
                for q in qs {
                    black_box(index.search(black_box(q), &opts).expect("search"));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, rust_book_benches);
criterion_main!(benches);
