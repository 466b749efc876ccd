//! Incremental lexical refresh: a refresh keeps the lexical buckets whose documents did
//! not change and indexes the others again. After a series of edits, additions,
//! deletions and renames on a copy of the Rust book, the refreshed index must rank every
//! dev question exactly as a full rebuild of the same files does (same chunks, same
//! ordinals, same scores to the bit) — whatever the bucket size.

use crate::common;
use common::*;
use docfuse::generation::Source;
use docfuse::read::{DocIndex, Mode, SearchOptions};
use docfuse::write::{build, BuildOptions, BuildReport};
use std::fs;
use std::path::Path;

fn build_at(idx: &Path, docs: &Path, bucket_chunks: u64, force: bool) -> BuildReport {
    build_in_buckets(idx, docs, bucket_chunks, force)
}

fn questions() -> Vec<String> {
    questions_of(&rust_book())
}

/// The dev questions of a corpus folder.
fn questions_of(corpus: &Path) -> Vec<String> {
    fs::read_to_string(corpus.join("queries.dev.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["query"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// `(ordinal, chunk id, score bits)` of a lexical top 10.
type Ranking = Vec<(u64, String, u32)>;
/// Chunks and the average field lengths' bits.
type Shape = (u64, Vec<u32>);

/// `(ordinal, chunk id, score bits)` of the lexical top 10 of every question, and the
/// collection shape (chunks, average field lengths as bits).
fn rankings(idx: &Path, qs: &[String]) -> (Vec<Ranking>, Shape) {
    let index = DocIndex::open(idx).unwrap_or_else(|e| panic!("open: {e}"));
    let opts = SearchOptions {
        mode: Mode::Lexical,
        ..SearchOptions::default()
    };
    let ranked = qs
        .iter()
        .map(|q| {
            index
                .search(q, &opts)
                .unwrap()
                .hits
                .into_iter()
                .take(10)
                .map(|h| (h.ord, h.chunk.id, h.score.to_bits()))
                .collect()
        })
        .collect();
    let c = &index.manifest().collection;
    let shape = (
        c.chunks,
        c.avg_field_len.iter().map(|a| a.to_bits()).collect(),
    );
    (ranked, shape)
}

fn assert_same_as_full_rebuild(refreshed: &Path, docs: &Path, qs: &[String], what: &str) {
    assert_same_as_build_of(refreshed, &[docs], qs, what);
}

/// The refreshed index at `refreshed` ranks as a full build of `roots` (one bucket).
fn assert_same_as_build_of(refreshed: &Path, roots: &[&Path], qs: &[String], what: &str) {
    let fresh = tempfile::tempdir().unwrap();
    let opts = BuildOptions {
        bucket_chunks: Some(100_000),
        ..BuildOptions::default()
    };
    let roots = Source::Roots(roots.iter().map(|r| r.to_path_buf()).collect());
    build(fresh.path(), &roots, &opts, &mut |_| {}).unwrap();
    assert_eq!(
        chunk_list(refreshed),
        chunk_list(fresh.path()),
        "{what}: chunk ids or hashes differ in ordinal order"
    );
    let (a, shape_a) = rankings(refreshed, qs);
    let (b, shape_b) = rankings(fresh.path(), qs);
    assert_eq!(shape_a, shape_b, "{what}: collection statistics differ");
    for (q, (x, y)) in qs.iter().zip(a.iter().zip(&b)) {
        assert_eq!(x, y, "{what}: `{q}` ranks differently from a full rebuild");
    }
    assert!(
        a.iter().any(|r| !r.is_empty()),
        "{what}: no question found anything"
    );
}

#[test]
fn a_series_of_refreshes_ranks_exactly_as_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    copy_tree(&rust_book(), &docs);
    let _ = fs::remove_file(docs.join("queries.dev.jsonl"));
    let idx = dir.path().join("idx");
    let qs = questions();
    // Small buckets, so that one edit leaves most of them kept.
    let first = build_at(&idx, &docs, 64, false);
    assert!(first.buckets_written > 10, "{first:?}");

    let edit = docs.join("ch08-01-vectors.md");
    let mut text = fs::read_to_string(&edit).unwrap();
    text.push_str("\n\n## Growing a vector in place\n\nReserve capacity with `Vec::with_capacity` before pushing many elements into a vector.\n");
    fs::write(&edit, text).unwrap();
    let r = build_at(&idx, &docs, 64, false);
    assert_eq!((r.files.changed, r.files.added), (1, 0), "{r:?}");
    assert!(r.buckets_kept > 10 && r.buckets_written <= 2, "edit: {r:?}");
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after an edit");

    fs::write(
        docs.join("ch08-04-vector-capacity.md"),
        "# Vector capacity\n\nA vector's capacity grows by doubling; `shrink_to_fit` releases the rest.\n",
    )
    .unwrap();
    fs::remove_file(docs.join("ch13-04-performance.md")).unwrap();
    fs::rename(
        docs.join("ch16-04-extensible-concurrency-sync-and-send.md"),
        docs.join("ch16-05-send-and-sync.md"),
    )
    .unwrap();
    let r = build_at(&idx, &docs, 64, false);
    assert_eq!((r.files.added, r.files.removed), (2, 2), "{r:?}");
    assert!(r.buckets_kept > 10, "add/delete/rename: {r:?}");
    assert_same_as_full_rebuild(
        &idx,
        &docs,
        &qs,
        "after an addition, a deletion and a rename",
    );

    // Every file of one bucket gone, then the same files back.
    let moved = dir.path().join("moved");
    fs::create_dir_all(&moved).unwrap();
    for name in [
        "ch19-01-all-the-places-for-patterns.md",
        "ch19-02-refutability.md",
        "ch19-03-pattern-syntax.md",
    ] {
        fs::rename(docs.join(name), moved.join(name)).unwrap();
    }
    build_at(&idx, &docs, 64, false);
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after deleting a run of files");
    for e in fs::read_dir(&moved).unwrap() {
        let e = e.unwrap();
        fs::rename(e.path(), docs.join(e.file_name())).unwrap();
    }
    build_at(&idx, &docs, 64, false);
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after restoring them");
}

#[test]
fn small_buckets_a_forced_build_and_a_racily_clean_edit_rank_as_a_full_rebuild() {
    let (_dir, docs, idx) = cargo_copy();
    let qs = questions_of(&cargo_book());
    let first = build_at(&idx, &docs, 32, false);
    assert!(first.buckets_written > 10, "{first:?}");
    assert_same_as_full_rebuild(&idx, &docs, &qs, "buckets of 32 chunks");
    // A file written just before a build, then changed without a change of size or
    // mtime, is read again by the next refresh (racily clean: its mtime is too close to
    // the build that read it to prove anything).
    let f = docs.join("index.md");
    let text = fs::read_to_string(&f).unwrap();
    fs::write(&f, &text).unwrap();
    let mtime = fs::metadata(&f).unwrap().modified().unwrap();
    // --force writes everything again.
    let forced = build_at(&idx, &docs, 32, true);
    assert_eq!(forced.buckets_kept, 0, "{forced:?}");
    let swapped = text.replacen("Cargo", "cARGO", 1);
    assert_ne!(swapped, text);
    write_with_mtime(&f, &swapped, mtime);
    let r = build_at(&idx, &docs, 32, false);
    assert_eq!(
        r.files.changed, 1,
        "a racily clean file was trusted on size and mtime: {r:?}"
    );
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after a racily clean edit");
}

/// The published generation's `chunks.json` (chunk id and content hash by ordinal).
fn chunk_list(idx: &Path) -> String {
    let index = DocIndex::open(idx).unwrap();
    let gen = idx.join(&index.manifest().generation_dir);
    fs::read_to_string(gen.join("chunks.json")).unwrap()
}

#[test]
fn refreshing_one_of_two_roots_never_writes_into_the_previous_generation() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("book"), dir.path().join("cargo"));
    copy_tree(&rust_book(), &a);
    copy_tree(&cargo_book(), &b);
    let idx = dir.path().join("idx");
    let opts = BuildOptions {
        bucket_chunks: Some(64),
        ..BuildOptions::default()
    };
    let both = Source::Roots(vec![a.clone(), b.clone()]);
    build(&idx, &both, &opts, &mut |_| {}).unwrap();
    let gen1 = idx.join(
        DocIndex::open(&idx)
            .unwrap()
            .manifest()
            .generation_dir
            .clone(),
    );
    let before = tree_hashes(&gen1);
    let edit = b.join("index.md");
    let mut text = fs::read_to_string(&edit).unwrap();
    text.push_str("\n\n## Offline mirrors\n\nA registry mirror serves crates without a network.\n");
    fs::write(&edit, text).unwrap();
    // only the second root is refreshed; the first is carried over
    let r = build(&idx, &Source::Roots(vec![b.clone()]), &opts, &mut |_| {}).unwrap();
    assert_eq!(r.files.changed, 1, "{r:?}");
    assert!(r.buckets_kept > 10 && r.buckets_written <= 2, "{r:?}");
    assert_eq!(
        tree_hashes(&gen1),
        before,
        "the previous generation changed"
    );
    let mut qs = questions();
    qs.push("offline registry mirror".into());
    assert_same_as_build_of(&idx, &[&a, &b], &qs, "after refreshing one root of two");
}

#[test]
fn a_jsonl_title_edit_is_a_change_and_ranks_as_a_full_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    let write = |title: &str| {
        let mut lines = String::new();
        for i in 0..40 {
            let t = if i == 7 {
                title.to_string()
            } else {
                format!("Record {i}")
            };
            lines.push_str(&serde_json::json!({"_id": format!("d{i}"), "title": t, "text": format!("Plain text number {i} about widgets.")}).to_string());
            lines.push('\n');
        }
        fs::write(&corpus, lines).unwrap();
    };
    write("Old heading");
    let idx = dir.path().join("idx");
    let opts = BuildOptions {
        bucket_chunks: Some(8),
        ..BuildOptions::default()
    };
    build(&idx, &Source::Jsonl(corpus.clone()), &opts, &mut |_| {}).unwrap();
    write("Zeppelin hangar");
    let r = build(&idx, &Source::Jsonl(corpus.clone()), &opts, &mut |_| {}).unwrap();
    assert_eq!(r.files.changed, 1, "a title-only edit must count: {r:?}");
    assert!(r.buckets_kept >= 3, "{r:?}");
    let index = DocIndex::open(&idx).unwrap();
    let hits = index
        .search(
            "zeppelin",
            &SearchOptions {
                mode: Mode::Lexical,
                ..SearchOptions::default()
            },
        )
        .unwrap()
        .hits;
    assert!(
        hits.first().is_some_and(|h| h.chunk.id.starts_with("d7")),
        "{:?}",
        hits.iter().map(|h| &h.chunk.id).collect::<Vec<_>>()
    );
    let fresh = tempfile::tempdir().unwrap();
    build(
        fresh.path(),
        &Source::Jsonl(corpus),
        &BuildOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(chunk_list(&idx), chunk_list(fresh.path()));
}

/// A copy of the Cargo book without its questions: (its temporary folder, the copy, where
/// its index goes).
fn cargo_copy() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    copy_tree(&cargo_book(), &docs);
    let _ = fs::remove_file(docs.join("queries.dev.jsonl"));
    let idx = dir.path().join("idx");
    (dir, docs, idx)
}

/// Adds a section on registry mirrors to the Cargo book copy's `index.md`.
fn add_mirror_section(docs: &Path) {
    let edit = docs.join("index.md");
    let mut text = fs::read_to_string(&edit).unwrap();
    text.push_str("\n\n## Offline mirrors\n\nA registry mirror serves crates without a network.\n");
    fs::write(&edit, text).unwrap();
}

/// The Cargo book's dev questions and one the mirror section answers.
fn mirror_questions() -> Vec<String> {
    let mut qs = questions_of(&cargo_book());
    qs.push("offline registry mirror".into());
    qs
}

/// The published generation's lexical folder.
fn lexical_dir(idx: &Path) -> std::path::PathBuf {
    let index = DocIndex::open(idx).unwrap();
    idx.join(&index.manifest().generation_dir).join("lexical")
}

/// `(segment ids tantivy lists, how many of them hold deleted documents)`.
fn tantivy_segments(lex: &Path) -> (Vec<String>, usize) {
    let meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(lex.join("meta.json")).unwrap()).unwrap();
    let segs = meta["segments"].as_array().unwrap();
    let mut ids: Vec<String> = segs
        .iter()
        .map(|s| s["segment_id"].as_str().unwrap().replace('-', ""))
        .collect();
    ids.sort();
    let with_deletes = segs.iter().filter(|s| !s["deletes"].is_null()).count();
    (ids, with_deletes)
}

/// The segment ids the bucket list records, sorted (buckets without chunks have none).
fn bucket_segments(lex: &Path) -> (Vec<String>, usize) {
    let buckets: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(lex.join("buckets.json")).unwrap()).unwrap();
    let buckets = buckets.as_array().unwrap();
    let mut ids: Vec<String> = buckets
        .iter()
        .filter_map(|b| b["segment"].as_str().map(str::to_string))
        .collect();
    ids.sort();
    let with_chunks = buckets.iter().filter(|b| b["chunks"] != 0).count();
    (ids, with_chunks)
}

/// The published lexical folder and the segments its buckets record, checking that every
/// bucket with chunks records one.
fn recorded_segments(idx: &Path) -> (std::path::PathBuf, Vec<String>) {
    let lex = lexical_dir(idx);
    let (recorded, with_chunks) = bucket_segments(&lex);
    assert_eq!(
        recorded.len(),
        with_chunks,
        "a bucket with chunks lacks its segment"
    );
    (lex, recorded)
}

#[test]
fn a_refresh_drops_the_segments_of_buckets_it_replaces() {
    let (_dir, docs, idx) = cargo_copy();
    build_at(&idx, &docs, 64, false);
    let (lex, recorded) = recorded_segments(&idx);
    assert_eq!(tantivy_segments(&lex), (recorded, 0));

    add_mirror_section(&docs);
    fs::remove_file(docs.join("faq.md")).unwrap();
    let r = build_at(&idx, &docs, 64, false);
    assert!(r.buckets_kept > 10 && r.buckets_written >= 1, "{r:?}");
    let (lex, recorded) = recorded_segments(&idx);
    // the replaced buckets' segments are gone whole: tantivy lists exactly the buckets'
    // segments, none with a deleted chunk, and their files were never linked
    assert_eq!(tantivy_segments(&lex), (recorded.clone(), 0));
    for e in fs::read_dir(&lex).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let stem = name.split('.').next().unwrap_or_default().to_string();
        if stem.len() == 32 {
            assert!(recorded.contains(&stem), "`{name}` belongs to no bucket");
        }
    }
    let qs = mirror_questions();
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after an edit and a deletion");
}

#[test]
fn an_index_whose_buckets_record_no_segment_is_refreshed_by_deletes() {
    let (_dir, docs, idx) = cargo_copy();
    build_at(&idx, &docs, 64, false);
    // what an index written before buckets recorded their segment holds: the same list
    // without the field (blanked to the same size, so the generation still checks out)
    let list = lexical_dir(&idx).join("buckets.json");
    let text = fs::read_to_string(&list).unwrap();
    let blanked = blank_members(&text, ",\"segment\":\"");
    assert!(!blanked.contains("segment") && blanked.len() == text.len());
    fs::write(&list, blanked).unwrap();

    add_mirror_section(&docs);
    let r = build_at(&idx, &docs, 64, false);
    assert!(r.buckets_kept > 10 && r.buckets_written >= 1, "{r:?}");
    let lex = lexical_dir(&idx);
    let (tantivy, with_deletes) = tantivy_segments(&lex);
    assert_eq!(with_deletes, 0, "a segment holds deleted chunks");
    let (recorded, _) = bucket_segments(&lex);
    assert_eq!(
        recorded.len() as u64,
        r.buckets_written,
        "new buckets record theirs"
    );
    assert!(recorded.iter().all(|s| tantivy.contains(s)));
    let qs = mirror_questions();
    assert_same_as_full_rebuild(&idx, &docs, &qs, "after an edit of an older index");
}

/// `text` with every `"segment":"<id>"` member that starts with `start` replaced by
/// spaces of the same length.
fn blank_members(text: &str, start: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(start) {
        out.push_str(&rest[..i]);
        let after = &rest[i + start.len()..];
        let end = after.find('"').unwrap() + 1;
        out.push_str(&" ".repeat(start.len() + end));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
