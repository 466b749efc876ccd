//! The lexical writer's buckets: a refresh leaves the segments of the buckets it does
//! not keep out of the index without a delete or a commit.

use super::buckets::read_buckets;
use super::writer::LexicalWriter;
use crate::chunk::{chunk_document, ChunkerConfig, SourceDoc, SourceKind};
use crate::projection::project;
use std::collections::HashSet;
use std::path::Path;

/// Writes one bucket per text (each one document), and one bucket without chunks.
fn write_index(dir: &Path, texts: &[&str]) {
    let mut w = LexicalWriter::create(dir).unwrap();
    for (i, text) in texts.iter().enumerate() {
        let doc = SourceDoc {
            rel_path: format!("d{i}.md"),
            text: text.to_string(),
            kind: SourceKind::Markdown,
            title_hint: None,
        };
        for chunk in chunk_document(&doc, &ChunkerConfig::default()) {
            w.add(&project(chunk, 0)).unwrap();
        }
        w.file_done();
        w.close_bucket().unwrap();
    }
    w.file_done(); // a document without chunks: a bucket of its own, no segment
    w.close_bucket().unwrap();
    w.finish().unwrap();
}

/// `(segment ids in tantivy's list, opstamp)` of the index in `dir`.
fn meta(dir: &Path) -> (HashSet<String>, u64) {
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("meta.json")).unwrap()).unwrap();
    let ids = m["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["segment_id"].as_str().unwrap().replace('-', ""))
        .collect();
    (ids, m["opstamp"].as_u64().unwrap())
}

#[test]
fn an_update_leaves_out_the_segments_it_does_not_keep_without_a_commit() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_index(
        a.path(),
        &[
            "# Alpha\n\nAlpha text about caching.\n",
            "# Beta\n\nBeta text about sessions.\n",
            "# Gamma\n\nGamma text about audits.\n",
        ],
    );
    let buckets = read_buckets(a.path()).unwrap();
    assert_eq!(buckets.len(), 4);
    let seg = |i: usize| buckets[i].segment.clone();
    assert!(
        (0..3).all(|i| seg(i).is_some()) && seg(3).is_none(),
        "{buckets:?}"
    );
    let (before, opstamp) = meta(a.path());
    assert_eq!(before, (0..3).filter_map(seg).collect());

    // keep the first and last documents' buckets; drop the second and the empty one
    let keep: HashSet<u64> = [buckets[0].id, buckets[2].id].into();
    let mut w = LexicalWriter::update(b.path(), a.path(), &keep).unwrap();
    let dropped = seg(1).unwrap();
    assert_eq!(
        meta(b.path()).0,
        [seg(0), seg(2)].into_iter().flatten().collect()
    );
    for e in std::fs::read_dir(b.path()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with(&dropped),
            "`{name}` of a dropped segment was linked"
        );
    }
    w.keep(buckets[0].id).unwrap();
    w.keep(buckets[2].id).unwrap();
    let stats = w.finish().unwrap();
    assert_eq!(stats.chunks, buckets[0].chunks + buckets[2].chunks);
    // no delete and no commit: tantivy's list is the one written at the start
    let (after, after_opstamp) = meta(b.path());
    assert_eq!(after, [seg(0), seg(2)].into_iter().flatten().collect());
    assert_eq!(after_opstamp, opstamp);
    // the previous index is untouched
    assert_eq!(meta(a.path()), (before, opstamp));
}

#[test]
fn a_damaged_segment_id_never_names_another_file() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_index(a.path(), &["# One\n\nOne.\n", "# Two\n\nTwo.\n"]);
    let mut buckets = read_buckets(a.path()).unwrap();
    buckets[1].segment = Some("meta".into());
    super::buckets::write_buckets(a.path(), &buckets).unwrap();
    let keep: HashSet<u64> = [buckets[0].id].into();
    // the bucket is deleted by its term instead: meta.json is still copied
    let mut w = LexicalWriter::update(b.path(), a.path(), &keep).unwrap();
    w.keep(buckets[0].id).unwrap();
    let stats = w.finish().unwrap();
    assert_eq!(stats.chunks, buckets[0].chunks);
    // its segment went with its last chunk; the kept one stays
    let kept = buckets[0].segment.clone().unwrap();
    assert_eq!(meta(b.path()).0, [kept].into());
}
