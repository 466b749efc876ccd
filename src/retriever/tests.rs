//! The retriever API on real indexes (the cargo book and the sample docs, lexical only):
//! hybrid with a toy retriever, reranking, filters before the top-k cut, formatting
//! under a budget, and use outside a tokio runtime.

use super::*;
use crate::generation::Source;
use crate::write::{build, BuildOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

fn cargo_book() -> PathBuf {
    let shared = std::env::var_os("DOCFUSE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    shared.join("bench/corpora/cargo-book")
}

fn sample_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-docs")
}

/// A lexical-only index of `root` in a temp dir, opened as a retriever.
fn indexed(root: &Path) -> (tempfile::TempDir, DocfuseRetriever) {
    let tmp = tempfile::tempdir().unwrap();
    let opts = BuildOptions::default();
    build(
        tmp.path(),
        &Source::Roots(vec![root.to_path_buf()]),
        &opts,
        &mut |_| {},
    )
    .unwrap();
    let r = DocfuseRetriever::open(tmp.path()).unwrap();
    (tmp, r)
}

/// Awaits a retrieval on a single-threaded runtime; panics with the error.
fn run<T>(f: impl std::future::Future<Output = Result<T, RetrieveError>>) -> T {
    match rt().block_on(f) {
        Ok(v) => v,
        Err(e) => panic!("retrieval failed: {e}"),
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn lexical(limit: usize) -> RetrieveOptions {
    RetrieveOptions {
        limit,
        mode: Mode::Lexical,
        ..RetrieveOptions::default()
    }
}

/// A toy retriever: fixed documents, in order, whatever the query; counts the limits
/// it was asked for.
struct Fixed {
    docs: Vec<RetrievedDocument>,
    asked: AtomicUsize,
}

impl Fixed {
    fn new(items: &[(&str, &str)]) -> Self {
        let docs = items
            .iter()
            .enumerate()
            .map(|(i, (id, path))| {
                let mut d = RetrievedDocument::new(
                    *id,
                    format!("toy {id}"),
                    format!("{path}:1-1"),
                    10.0 - i as f32,
                );
                d.metadata.path = path.to_string();
                d
            })
            .collect();
        Fixed {
            docs,
            asked: AtomicUsize::new(0),
        }
    }
}

impl Retriever for Fixed {
    fn retrieve<'a>(
        &'a self,
        _query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        self.asked.store(options.limit, Ordering::SeqCst);
        let out = self.docs.iter().take(options.limit).cloned().collect();
        Box::pin(async move { Ok(out) })
    }
    fn name(&self) -> &str {
        "toy"
    }
}

#[test]
fn docfuse_documents_carry_content_source_and_metadata() {
    let (_tmp, r) = indexed(&sample_docs());
    let docs = run(r.retrieve("run tasks one after another", &RetrieveOptions::default()));
    let d = &docs[0];
    assert_eq!(
        d.id,
        "guide/parallel.md#running-tasks-in-parallel/limiting-concurrency"
    );
    assert_eq!(d.source, "guide/parallel.md:5-8");
    assert!(
        d.content.starts_with(
            "Running tasks in parallel › Limiting concurrency\n\n## Limiting concurrency\n"
        ),
        "{}",
        d.content
    );
    let m = &d.metadata;
    assert_eq!(
        (m.kind.as_str(), m.path.as_str(), m.start_line, m.end_line),
        ("section", "guide/parallel.md", 5, 8)
    );
    let file = std::fs::read_to_string(sample_docs().join("guide/parallel.md")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    let passage = lines[m.start_line as usize - 1..m.end_line as usize].join("\n");
    assert_eq!(
        m.evidence.chunk_sha256,
        crate::hashing::sha256_hex(passage.as_bytes()),
        "sha256 of the passage's lines"
    );
    assert_eq!(
        m.evidence.file_sha256,
        crate::hashing::sha256_hex(file.as_bytes()),
        "the file's sha256 at index time"
    );
    assert_eq!(
        (m.evidence.start_line, m.evidence.end_line),
        (m.start_line, m.end_line)
    );
    assert_eq!(m.relative_score, 1.0);
    assert!(docs
        .iter()
        .all(|d| (0.0..=1.0).contains(&d.metadata.relative_score)));
    assert!(docs.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(m.mode, Some(Mode::Lexical));
    assert!(
        m.degraded.as_deref().unwrap().contains("without vectors"),
        "auto fell back, and says why"
    );
    assert!(m.explain.is_none());
    assert!(!m.matched_terms.is_empty());
    let explained = run(r.retrieve(
        "run tasks one after another",
        &RetrieveOptions {
            explain: true,
            ..lexical(2)
        },
    ));
    assert!(
        explained[0]
            .metadata
            .explain
            .as_ref()
            .unwrap()
            .lexical
            .terms
            .len()
            >= 3
    );
    assert_eq!(explained[0].id, d.id, "explaining never changes the order");
}

#[test]
fn filters_apply_before_the_top_k_cut() {
    let (_tmp, r) = indexed(&cargo_book());
    let q = "build the package";
    let unfiltered = run(r.retrieve(q, &lexical(8)));
    let in_commands = unfiltered
        .iter()
        .filter(|d| d.metadata.path.starts_with("commands/"))
        .count();
    assert!(
        in_commands < 8,
        "the unfiltered top 8 is mixed ({in_commands} in commands/)"
    );
    let mut opts = lexical(8);
    opts.filters.path_prefix = Some("commands/".into());
    let filtered = run(r.retrieve(q, &opts));
    assert_eq!(filtered.len(), 8, "still `limit` results");
    assert!(filtered
        .iter()
        .all(|d| d.metadata.path.starts_with("commands/")));
    assert_eq!(
        filtered[0].metadata.relative_score, 1.0,
        "confidence relative to the best that passed"
    );
    // the filtered list is the unfiltered ranking restricted to the prefix
    let deep = run(r.retrieve(
        q,
        &RetrieveOptions {
            floor: Some(0.0),
            ..lexical(100)
        },
    ));
    let expected: Vec<&str> = deep
        .iter()
        .filter(|d| d.metadata.path.starts_with("commands/"))
        .take(8)
        .map(|d| d.id.as_str())
        .collect();
    let got: Vec<&str> = filtered.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(got, expected);
    // globs and excludes
    opts.filters = PathFilters {
        path_prefix: None,
        globs: vec!["commands/cargo-*.md".into()],
        exclude: vec!["commands/cargo-build.md".into()],
        kinds: Vec::new(),
    };
    let globbed = run(r.retrieve(q, &opts));
    assert_eq!(globbed.len(), 8);
    assert!(globbed
        .iter()
        .all(|d| d.metadata.path.starts_with("commands/cargo-")
            && d.metadata.path != "commands/cargo-build.md"));
    // a filter nothing passes gives nothing, not an error
    opts.filters = PathFilters {
        path_prefix: Some("nowhere/".into()),
        ..PathFilters::default()
    };
    assert!(run(r.retrieve(q, &opts)).is_empty());
}

#[test]
fn hybrid_of_docfuse_and_a_toy_retriever_fuses_and_deduplicates() {
    let (_tmp, r) = indexed(&sample_docs());
    let q = "run tasks one after another";
    let docfuse_docs = run(r.retrieve(q, &lexical(5)));
    let shared_id = docfuse_docs[1].id.clone();
    let toy = Fixed::new(&[
        (shared_id.as_str(), "guide/parallel.md"),
        ("toy#only", "toy/only.md"),
    ]);
    let hybrid = HybridRetriever::new(Combination::Rrf { k: 60.0 })
        .with(r.clone(), 1.0)
        .with(toy, 1.0);
    let fused = run(hybrid.retrieve(q, &lexical(5)));
    assert_eq!(fused.len(), 5);
    let ids: Vec<&str> = fused.iter().map(|d| d.id.as_str()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "no duplicates: {ids:?}");
    // found by both (docfuse rank 2, toy rank 1): first, with both parts
    assert_eq!(fused[0].id, shared_id);
    assert!((fused[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-6);
    let parts: Vec<(&str, u32)> = fused[0]
        .metadata
        .fusion
        .iter()
        .map(|p| (p.retriever.as_str(), p.rank))
        .collect();
    assert_eq!(parts, [("docfuse", 2), ("toy", 1)]);
    assert_eq!(
        fused[0].metadata.kind, "section",
        "metadata of the first member that had it"
    );
    assert_eq!(fused[0].metadata.relative_score, 1.0);
    // then docfuse's rank 1 (1/61), the toy's rank 2 (1/62), docfuse's rank 3 (1/63)
    assert_eq!(fused[1].id, docfuse_docs[0].id);
    assert_eq!(fused[2].id, "toy#only");
    assert_eq!(fused[2].source, "toy/only.md:1-1");
    assert_eq!(fused[3].id, docfuse_docs[2].id);
    // normalised scores: same members, other combination, still deduplicated
    let toy = Fixed::new(&[(shared_id.as_str(), "guide/parallel.md")]);
    let hybrid = create_hybrid_retriever(
        vec![
            (
                std::sync::Arc::new(r.clone()) as std::sync::Arc<dyn Retriever>,
                0.5,
            ),
            (std::sync::Arc::new(toy), 0.5),
        ],
        Combination::NormalizedScores,
    );
    let fused = run(hybrid.retrieve(q, &lexical(3)));
    assert_eq!(
        fused[0].id, shared_id,
        "top of the toy list and high on docfuse's"
    );
    assert!(fused.iter().filter(|d| d.id == shared_id).count() == 1);
    // filters hold for members that ignore them
    let toy = Fixed::new(&[("toy#only", "toy/only.md")]);
    let hybrid = HybridRetriever::new(Combination::Rrf { k: 60.0 })
        .with(r, 1.0)
        .with(toy, 1.0);
    let mut opts = lexical(5);
    opts.filters.path_prefix = Some("guide/".into());
    let fused = run(hybrid.retrieve(q, &opts));
    assert!(!fused.is_empty() && fused.iter().all(|d| d.metadata.path.starts_with("guide/")));
}

#[test]
fn reranked_retriever_rescores_the_top_candidates() {
    let (_tmp, r) = indexed(&sample_docs());
    let q = "install plugins configuration";
    let first = run(r.retrieve(
        q,
        &RetrieveOptions {
            floor: Some(0.0),
            ..lexical(10)
        },
    ));
    assert!(first.len() >= 4);
    let toy = Fixed::new(&[("a", "a.md"), ("b", "b.md"), ("c", "c.md"), ("d", "d.md")]);
    let counting = std::sync::Arc::new(toy);
    let reranked = create_reranked_retriever(
        counting.clone(),
        std::sync::Arc::new(FnReranker(
            |_: &str, d: &RetrievedDocument| {
                if d.id == "c" {
                    5.0
                } else {
                    -d.score
                }
            },
        )),
        4,
    );
    let out = run(reranked.retrieve(q, &lexical(2)));
    assert_eq!(
        counting.asked.load(Ordering::SeqCst),
        4,
        "asks the inner retriever for `candidates`"
    );
    let ids: Vec<&str> = out.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["c", "d"]);
    assert_eq!(
        out[0].metadata.first_stage,
        Some(FirstStage {
            rank: 3,
            score: 8.0
        })
    );
    assert_eq!(out[0].score, 5.0);

    // a reranker that reverses the first stage: the last candidates come first
    let reranked = RerankedRetriever::new(
        r,
        FnReranker(|_: &str, d: &RetrievedDocument| -d.score),
        first.len(),
    );
    let opts = RetrieveOptions {
        floor: Some(0.0),
        ..lexical(3)
    };
    let out = run(reranked.retrieve(q, &opts));
    assert_eq!(out.len(), 3);
    let n = first.len();
    for (k, d) in out.iter().enumerate() {
        assert_eq!(d.score, -first[n - 1 - k].score);
        let fs = d.metadata.first_stage.unwrap();
        assert_eq!(
            first[fs.rank as usize - 1].id,
            d.id,
            "first-stage rank recorded"
        );
        assert_eq!(fs.score, first[fs.rank as usize - 1].score);
    }
}

#[test]
fn a_reranker_returning_the_wrong_count_is_a_component_error() {
    let toy = Fixed::new(&[("a", "a.md"), ("b", "b.md")]);
    struct Short;
    impl Reranker for Short {
        fn rerank<'a>(
            &'a self,
            _: &'a str,
            _: &'a [RetrievedDocument],
        ) -> BoxFuture<'a, Result<Vec<f32>, RetrieveError>> {
            Box::pin(async { Ok(vec![1.0]) })
        }
    }
    let e = rt()
        .block_on(RerankedRetriever::new(toy, Short, 5).retrieve("q", &RetrieveOptions::default()))
        .unwrap_err();
    assert_eq!(e.code(), "internal");
    assert!(e.to_string().contains("1 scores for 2 documents"), "{e}");
}

#[test]
fn formatted_documents_cite_path_lines_within_the_budget() {
    let (_tmp, r) = indexed(&cargo_book());
    let docs = run(r.retrieve("specifying dependencies from git", &lexical(10)));
    assert_eq!(docs.len(), 10);
    for budget in [0, 50, 200, 1000, 100_000] {
        let out = format_retrieved_documents(&docs, budget);
        assert!(
            estimate_tokens(&out) <= budget,
            "{} tokens > {budget}",
            estimate_tokens(&out)
        );
        if budget >= 200 {
            assert!(
                out.starts_with(&format!("[1] {}\n", docs[0].source)),
                "{out}"
            );
        }
    }
    let all = format_retrieved_documents(&docs, 100_000);
    for (i, d) in docs.iter().enumerate() {
        assert!(all.contains(&format!(
            "[{}] {}\n{}",
            i + 1,
            d.source,
            d.content.trim_end()
        )));
    }
    let some = format_retrieved_documents(&docs, 300);
    assert!(some.ends_with("[…]") || !some.contains(&format!("[{}]", docs.len())));
}

/// Polls a future to completion on this thread, with no async runtime at all.
fn block_on_without_runtime<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

#[test]
fn works_outside_a_tokio_runtime_and_under_concurrency() {
    let (_tmp, r) = indexed(&sample_docs());
    let docs = block_on_without_runtime(r.retrieve("install from source", &lexical(3))).unwrap();
    assert_eq!(docs[0].metadata.path, "guide/install.md");
    // 16 concurrent searches on a single-threaded runtime, 1 at a time on the pool
    let one = DocfuseRetriever::with_concurrency(
        std::sync::Arc::new(crate::read::DocIndex::open(r.index().dir()).unwrap()),
        1,
    );
    let queries = ["install", "plugins", "parallel jobs", "configuration file"];
    let results = rt().block_on(async {
        let opts = lexical(3);
        futures::future::join_all((0..16).map(|i| one.retrieve(queries[i % 4], &opts))).await
    });
    for (i, res) in results.into_iter().enumerate() {
        let expected = block_on_without_runtime(r.retrieve(queries[i % 4], &lexical(3))).unwrap();
        assert_eq!(res.unwrap(), expected);
    }
}

/// The error of a search that must be refused at once (not queued): fails after 5 s.
async fn refused_at_once<T: std::fmt::Debug>(
    search: impl std::future::Future<Output = Result<T, RetrieveError>>,
) -> RetrieveError {
    tokio::time::timeout(std::time::Duration::from_secs(5), search)
        .await
        .expect("refused at once, not queued")
        .unwrap_err()
}

#[test]
fn a_full_wait_queue_refuses_a_search_at_once_and_the_queued_one_still_answers() {
    use futures::FutureExt;
    let (_tmp, r) = indexed(&sample_docs());
    let one = DocfuseRetriever::with_concurrency(
        std::sync::Arc::new(crate::read::DocIndex::open(r.index().dir()).unwrap()),
        1,
    )
    .with_max_queued(1);
    rt().block_on(async {
        let opts = lexical(3);
        let busy = one.hold_all_permits().await;
        let mut queued = Box::pin(one.retrieve("install", &opts));
        assert!((&mut queued).now_or_never().is_none(), "waits for a permit");
        let refused = refused_at_once(one.retrieve("plugins", &opts)).await;
        assert_eq!(refused.code(), "overloaded");
        assert!(
            matches!(
                refused,
                RetrieveError::Overloaded {
                    queued: 1,
                    retry_after_s: 1
                }
            ),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("retry in 1 s"), "{refused}");
        drop(busy);
        let docs = queued.await.unwrap();
        assert_eq!(docs[0].metadata.path, "guide/install.md");
        // the queue places were given back (the refused one never took one): with every
        // permit held again, one search queues and the next is refused
        let busy = one.hold_all_permits().await;
        let mut again = Box::pin(one.retrieve("install", &opts));
        assert!((&mut again).now_or_never().is_none(), "queues again");
        let refused = refused_at_once(one.retrieve("plugins", &opts)).await;
        assert!(
            matches!(refused, RetrieveError::Overloaded { queued: 1, .. }),
            "{refused:?}"
        );
        // a queued search whose caller gives up leaves its place
        drop(again);
        let mut third = Box::pin(one.retrieve("install", &opts));
        assert!((&mut third).now_or_never().is_none(), "the place was free");
        drop(busy);
        assert!(third.await.is_ok());
        // the default (a library user's) has no bound
        let unbounded = DocfuseRetriever::with_concurrency(one.index(), 1);
        let busy = unbounded.hold_all_permits().await;
        let mut waiting: Vec<_> = (0..100)
            .map(|_| Box::pin(unbounded.retrieve("plugins", &opts)))
            .collect();
        for w in &mut waiting {
            assert!(w.now_or_never().is_none());
        }
        drop(busy);
        for w in waiting {
            assert!(w.await.is_ok());
        }
    });
}

#[test]
fn reads_wait_in_a_bounded_lane_of_their_own() {
    use futures::FutureExt;
    let (_tmp, r) = indexed(&sample_docs());
    let one = DocfuseRetriever::with_concurrency(
        std::sync::Arc::new(crate::read::DocIndex::open(r.index().dir()).unwrap()),
        1,
    )
    .with_max_queued(1);
    let request = PassageRequest {
        path: Some("guide/install.md".into()),
        ..PassageRequest::default()
    };
    rt().block_on(async {
        // searches busy: a read does not wait behind them
        let searching = one.hold_all_permits().await;
        assert!(one.read_passage(&request).await.is_ok());
        drop(searching);
        // reads busy: one read queues, the next is refused at once, as are a status
        // check and a handoff; a search still queues in its own lane
        let reading = one.hold_all_read_permits().await;
        let mut queued = Box::pin(one.read_passage(&request));
        assert!(
            (&mut queued).now_or_never().is_none(),
            "waits for a read permit"
        );
        for refused in [
            refused_at_once(one.read_passage(&request)).await,
            refused_at_once(one.status()).await,
            refused_at_once(one.handoff("guide/install.md", false)).await,
        ] {
            assert_eq!(refused.code(), "overloaded", "{refused:?}");
        }
        let searching = one.hold_all_permits().await;
        let opts = lexical(3);
        let mut search = Box::pin(one.retrieve("install", &opts));
        assert!(
            (&mut search).now_or_never().is_none(),
            "a search has a place of its own"
        );
        drop(searching);
        assert!(search.await.is_ok());
        drop(reading);
        let passage = queued.await.unwrap();
        assert_eq!(passage.path, "guide/install.md");
    });
}

/// A toy embedder for the lane tests: 8 values from the text's sha256, and a log of the
/// texts it embedded.
struct Hashing {
    identity: crate::embed::EmbedderIdentity,
    seen: std::sync::Mutex<Vec<String>>,
}

impl Hashing {
    fn new() -> Self {
        Hashing {
            identity: crate::embed::EmbedderIdentity {
                model: "hashing".into(),
                model_sha256: "0".repeat(64),
                tokenizer_sha256: String::new(),
                pooling: "none".into(),
                normalized: true,
                max_length: 1 << 20,
                dim: 8,
                input_template: crate::embed::INPUT_TEMPLATE_VERSION,
            },
            seen: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn times_seen(&self, text: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|t| *t == text)
            .count()
    }
}

impl crate::embed::Embedder for Hashing {
    fn identity(&self) -> &crate::embed::EmbedderIdentity {
        &self.identity
    }
    fn dim(&self) -> usize {
        8
    }
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len() * 8);
        for t in texts {
            self.seen.lock().unwrap().push(t.to_string());
            let h = crate::hashing::sha256_hex(t.as_bytes());
            let v: Vec<f32> = (0..8)
                .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap_or(0) as f32 + 1.0)
                .collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            out.extend(v.iter().map(|x| x / n));
        }
        Ok(out)
    }
}

/// The sample docs indexed with a [`Hashing`] embedder, opened with it.
fn hashed_index() -> (
    tempfile::TempDir,
    std::sync::Arc<Hashing>,
    crate::read::DocIndex,
) {
    let tmp = tempfile::tempdir().unwrap();
    let e = std::sync::Arc::new(Hashing::new());
    let opts = BuildOptions {
        embedder: Some(e.as_ref()),
        ..BuildOptions::default()
    };
    let src = Source::Roots(vec![sample_docs()]);
    build(tmp.path(), &src, &opts, &mut |_| {}).unwrap();
    let index = crate::read::DocIndex::open(tmp.path())
        .unwrap()
        .with_embedder(e.clone());
    (tmp, e, index)
}

/// A hybrid search embeds its query holding an embedding permit, not a search permit:
/// with every search permit busy the query is embedded all the same (and the search then
/// waits), with every embedding permit busy a lexical search still answers, and the
/// search takes the vector made for it instead of embedding the query again.
#[test]
fn a_query_is_embedded_without_holding_a_search_permit() {
    use futures::FutureExt;
    let (_tmp, e, index) = hashed_index();
    let one = DocfuseRetriever::with_concurrency(std::sync::Arc::new(index), 1);
    let hybrid = RetrieveOptions {
        mode: Mode::Hybrid,
        ..lexical(3)
    };
    let query = "installing the plugin loader";
    rt().block_on(async {
        // search permits busy: the query is embedded, the search waits
        let searching = one.hold_all_permits().await;
        let task = tokio::spawn({
            let (one, hybrid) = (one.clone(), hybrid.clone());
            async move { one.search(query, &hybrid).await }
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while e.times_seen(query) == 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(
            e.times_seen(query),
            1,
            "embedded while the search permits are held"
        );
        assert!(!task.is_finished(), "the search waits for its permit");
        drop(searching);
        let r = task.await.unwrap().unwrap();
        assert_eq!((r.mode, r.degraded.as_deref()), (Mode::Hybrid, None));
        assert_eq!(e.times_seen(query), 1, "embedded once");

        // embedding permits busy: a lexical search answers, a hybrid one waits
        let embedding = one.hold_all_embed_permits().await;
        let mut waiting = Box::pin(one.search("plugins of the loader", &hybrid));
        assert!((&mut waiting).now_or_never().is_none());
        let r = one.search("install", &lexical(3)).await.unwrap();
        assert_eq!(r.documents[0].metadata.path, "guide/install.md");
        drop(embedding);
        assert_eq!(waiting.await.unwrap().mode, Mode::Hybrid);
    });
}

/// A search handed a vector made ahead of it takes that vector instead of embedding, only
/// for the text and the embedder identity it was made for.
#[test]
fn a_prepared_vector_is_taken_only_for_its_own_text_and_embedder() {
    let (tmp, e, index) = hashed_index();
    // the vector of chunk 3, as stored: a vector search with it finds chunk 3 first
    let bytes = std::fs::read(tmp.path().join("gen-000001/vectors.f32")).unwrap();
    let row: Vec<f32> = bytes[3 * 32..4 * 32]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let mut prepared = crate::read::PreparedQuery {
        query: "configuring plugins".into(),
        identity_key: crate::embed::Embedder::identity(e.as_ref()).key(),
        vector: row,
    };
    let vector = crate::read::SearchOptions {
        mode: Mode::Vector,
        ..crate::read::SearchOptions::default()
    };
    let r = index
        .search_prepared("configuring plugins", &vector, Some(&prepared))
        .unwrap();
    assert_eq!(r.hits.first().map(|h| h.ord), Some(3));
    assert_eq!(
        e.times_seen("configuring plugins"),
        0,
        "taken, not embedded"
    );
    // another text, or another embedder's vector: embedded as without it
    let r = index
        .search_prepared("installing the loader", &vector, Some(&prepared))
        .unwrap();
    assert_eq!(e.times_seen("installing the loader"), 1);
    assert_ne!(r.hits.first().map(|h| h.ord), Some(3));
    prepared.identity_key = "another".into();
    index
        .search_prepared("configuring plugins", &vector, Some(&prepared))
        .unwrap();
    assert_eq!(e.times_seen("configuring plugins"), 1);
    // made by the index itself: the very vector the search would embed
    let made = index
        .prepare_query("limiting concurrency")
        .unwrap()
        .unwrap();
    assert_eq!(
        made.vector,
        crate::embed::Embedder::embed(e.as_ref(), &["limiting concurrency"]).unwrap()
    );
}

/// A file rewritten while passages are read (an editor saving, a cache sync): every
/// answer is the indexed text — read from the disk while the bytes there are the indexed
/// ones, from the index's copy (`stale`) otherwise — never the new text, a part of it or
/// an error for a file that is empty for a moment.
#[test]
fn a_passage_read_while_its_file_is_rewritten_is_the_indexed_text() {
    let docs = tempfile::tempdir().unwrap();
    let page = docs.path().join("page.md");
    let indexed_text = "# Page\n\nThe indexed words, version A.";
    std::fs::write(&page, format!("{indexed_text}\n")).unwrap();
    let (_tmp, r) = indexed(docs.path());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (page, stop) = (page.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let version = if n.is_multiple_of(2) { 'B' } else { 'A' };
                // truncate, then write: the file is empty or partial for a moment
                std::fs::write(
                    &page,
                    format!("# Page\n\nThe indexed words, version {version}.\n"),
                )
                .unwrap();
                n += 1;
            }
            n
        })
    };
    let request = PassageRequest {
        path: Some("page.md".into()),
        start_line: Some(1),
        end_line: Some(3),
        ..PassageRequest::default()
    };
    let (mut fresh, mut stale) = (0, 0);
    let started = std::time::Instant::now();
    let rt = rt();
    while started.elapsed() < std::time::Duration::from_millis(1500) {
        let p = rt.block_on(r.read_passage(&request)).unwrap_or_else(|e| {
            stop.store(true, Ordering::SeqCst);
            panic!("a read failed while the file was rewritten: {e}")
        });
        assert_eq!(p.text, indexed_text, "stale {}", p.stale);
        if p.stale {
            stale += 1;
        } else {
            fresh += 1;
        }
    }
    stop.store(true, Ordering::SeqCst);
    let writes = writer.join().unwrap();
    assert!(
        writes > 100 && stale > 0,
        "{writes} writes, {fresh} fresh, {stale} stale"
    );
}
