//! The bucket layout of a new generation (pure): which buckets of the previous
//! generation's lexical index a refresh keeps — those whose documents are all unchanged
//! and still consecutive — and which runs of documents it chunks and indexes again.
//! Ordinals stay those of a full rebuild: buckets cover the documents in (root, path)
//! order, so a chunk's ordinal is its bucket's first ordinal plus its place in it.

use crate::lexical::Bucket;
use std::ops::Range;

/// Chunks per bucket a build aims at, at least: a 1-file refresh indexes again the
/// bucket that holds the file (this many chunks in a collection of up to
/// `BUCKET_CHUNKS × TARGET_BUCKETS`); a query visits one segment per bucket.
pub const BUCKET_CHUNKS: u64 = 512;

/// Bytes of document text a bucket holds at most: one bucket is one tantivy segment,
/// written within the writer's 128 MB heap, whatever the size of its chunks.
pub const MAX_BUCKET_BYTES: u64 = 32 << 20;

/// Buckets a large collection is cut into, about: a query looks up each term in every
/// segment's dictionary, so past `BUCKET_CHUNKS × TARGET_BUCKETS` chunks buckets grow
/// instead of multiplying (4× rust-docs, 138,860 chunks: 271 segments of 512 gave a
/// warm lexical p50 of 160 ms, 68 of 2,048 gave 80 ms; `benches/RESULTS.md`).
pub const TARGET_BUCKETS: u64 = 32;

/// Chunks per bucket at most: one bucket is one tantivy segment, written within the
/// writer's 128 MB heap (16,384 chunks of rust-docs are about 12 MB of text).
pub const MAX_BUCKET_CHUNKS: u64 = 16_384;

/// Bytes of source per chunk assumed before a first build (rust-docs: 720, the Rust
/// book: 690).
const BYTES_PER_CHUNK: u64 = 700;

/// The bucket size of a build of `bytes` of source: [`TARGET_BUCKETS`] buckets of its
/// expected chunks, within [`BUCKET_CHUNKS`]..=[`MAX_BUCKET_CHUNKS`]. The expectation
/// is the previous generation's chunks per byte (`previous`: its chunks and bytes), else
/// [`BYTES_PER_CHUNK`]. Rankings never depend on it.
pub fn bucket_chunks_for(bytes: u64, previous: Option<(u64, u64)>) -> u64 {
    let per_chunk = match previous {
        Some((chunks, prev_bytes)) if chunks > 0 && prev_bytes > 0 => (prev_bytes / chunks).max(1),
        _ => BYTES_PER_CHUNK,
    };
    (bytes / per_chunk / TARGET_BUCKETS).clamp(BUCKET_CHUNKS, MAX_BUCKET_CHUNKS)
}

/// One step of a generation's layout, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Keep a previous bucket: its documents `docs` (plan positions) are unchanged.
    Keep {
        bucket: Bucket,
        /// Its first ordinal in the previous generation.
        previous_first: u64,
        docs: Range<usize>,
    },
    /// Chunk and index the documents `docs` again (cut into buckets of about
    /// [`BUCKET_CHUNKS`] chunks).
    Build { docs: Range<usize> },
}

/// What the layout knows of each planned document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocState {
    /// Its position in the previous snapshot when its content (and root) is unchanged.
    pub same_as: Option<usize>,
    /// Chunks it is expected to give (its previous count, or an estimate).
    pub estimate: u64,
}

/// The steps of a new generation of `docs` over the previous `buckets` (which cover the
/// previous snapshot's files in order). `keepable(bucket, first_ordinal)` says whether a
/// bucket's chunks can be carried over (e.g. all have vectors when vectors are wanted).
/// A run of documents to index again whose estimate is below `min_run` chunks takes in a
/// kept neighbour, so refreshes do not leave ever smaller buckets behind.
pub fn layout(
    buckets: &[Bucket],
    docs: &[DocState],
    min_run: u64,
    keepable: &dyn Fn(&Bucket, u64) -> bool,
) -> Vec<Step> {
    let mut at_prev = vec![None; buckets.iter().map(|b| b.files as usize).sum()];
    for (p, d) in docs.iter().enumerate() {
        if let Some(slot) = d.same_as.and_then(|j| at_prev.get_mut(j)) {
            *slot = Some(p);
        }
    }
    // Kept buckets by the plan position of their first document.
    let mut kept: Vec<Option<(Bucket, u64)>> = vec![None; docs.len()];
    let (mut first_file, mut first_ord) = (0usize, 0u64);
    for b in buckets {
        let files = first_file..first_file + b.files as usize;
        if let Some(start) = consecutive(&at_prev, files) {
            if keepable(b, first_ord) {
                kept[start] = Some((b.clone(), first_ord));
            }
        }
        first_file += b.files as usize;
        first_ord += b.chunks;
    }
    loop {
        let steps = steps_of(&kept, docs.len());
        match small_run_neighbour(&steps, docs, min_run) {
            Some(start) => kept[start] = None,
            None => return steps,
        }
    }
}

/// The plan position of the first of `files` when each has a same-content document and
/// they sit at consecutive plan positions.
fn consecutive(at_prev: &[Option<usize>], files: Range<usize>) -> Option<usize> {
    if files.is_empty() {
        return None;
    }
    let start = (*at_prev.get(files.start)?)?;
    files
        .enumerate()
        .all(|(k, j)| at_prev.get(j).copied().flatten() == Some(start + k))
        .then_some(start)
}

fn steps_of(kept: &[Option<(Bucket, u64)>], n: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut run_start = 0;
    let mut p = 0;
    while p < n {
        match &kept[p] {
            Some((b, first)) => {
                if run_start < p {
                    steps.push(Step::Build { docs: run_start..p });
                }
                let docs = p..p + b.files as usize;
                p = docs.end;
                run_start = p;
                steps.push(Step::Keep {
                    bucket: b.clone(),
                    previous_first: *first,
                    docs,
                });
            }
            None => p += 1,
        }
    }
    if run_start < n {
        steps.push(Step::Build { docs: run_start..n });
    }
    steps
}

/// The plan position of the kept bucket a too small run should take in (the smaller of
/// its kept neighbours), if any run is too small.
fn small_run_neighbour(steps: &[Step], docs: &[DocState], min_run: u64) -> Option<usize> {
    for (i, s) in steps.iter().enumerate() {
        let Step::Build { docs: run } = s else {
            continue;
        };
        let estimate: u64 = docs[run.clone()].iter().map(|d| d.estimate).sum();
        if estimate >= min_run {
            continue;
        }
        let neighbour = |j: Option<usize>| match j.and_then(|j| steps.get(j)) {
            Some(Step::Keep { bucket, docs, .. }) => Some((bucket.chunks, docs.start)),
            _ => None,
        };
        let before = neighbour(i.checked_sub(1));
        let after = neighbour(Some(i + 1));
        let pick = match (before, after) {
            (Some(b), Some(a)) => Some(if a.0 <= b.0 { a } else { b }),
            (b, a) => a.or(b),
        };
        if let Some((_, start)) = pick {
            return Some(start);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_with_the_collection_past_their_target_count() {
        // the Rust book (1 MB): the least size
        assert_eq!(bucket_chunks_for(1_070_000, None), BUCKET_CHUNKS);
        // 40x rust-docs (1 GB, 1.39 M chunks at 720 bytes each): 32 buckets would be
        // 43,000 chunks, over the most
        assert_eq!(
            bucket_chunks_for(1_000_000_000, Some((34_715, 25_000_000))),
            MAX_BUCKET_CHUNKS
        );
        // 4x rust-docs, measured by the previous build: 138,860 / 32
        assert_eq!(
            bucket_chunks_for(100_000_000, Some((138_860, 100_000_000))),
            4_340
        );
        // before a first build, 700 bytes a chunk
        assert_eq!(bucket_chunks_for(700 * 32 * 1_000, None), 1_000);
        // a previous build of no chunk or no bytes says nothing
        assert_eq!(bucket_chunks_for(700 * 32 * 1_000, Some((0, 5))), 1_000);
    }

    fn bucket(id: u64, files: u64, chunks: u64) -> Bucket {
        Bucket {
            id,
            files,
            chunks,
            lens: [0; crate::config::FIELDS],
            with_field: [0; crate::config::FIELDS],
            segment: None,
        }
    }

    fn same(j: usize) -> DocState {
        DocState {
            same_as: Some(j),
            estimate: 100,
        }
    }

    fn changed() -> DocState {
        DocState {
            same_as: None,
            estimate: 100,
        }
    }

    fn kinds(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Keep { bucket, docs, .. } => format!("K{}@{:?}", bucket.id, docs),
                Step::Build { docs } => format!("B{docs:?}"),
            })
            .collect()
    }

    #[test]
    fn an_edited_file_rebuilds_its_bucket_only() {
        let b = [bucket(0, 2, 200), bucket(1, 2, 200), bucket(2, 2, 200)];
        let docs = [same(0), same(1), changed(), same(3), same(4), same(5)];
        let steps = layout(&b, &docs, 50, &|_, _| true);
        assert_eq!(kinds(&steps), ["K0@0..2", "B2..4", "K2@4..6"]);
        let Step::Keep { previous_first, .. } = &steps[2] else {
            panic!("{steps:?}")
        };
        assert_eq!(*previous_first, 400);
    }

    #[test]
    fn an_inserted_file_breaks_its_bucket_and_a_removed_file_too() {
        let b = [bucket(0, 2, 200), bucket(1, 2, 200), bucket(2, 2, 200)];
        // a new file between the two files of bucket 1
        let docs = [
            same(0),
            same(1),
            same(2),
            changed(),
            same(3),
            same(4),
            same(5),
        ];
        assert_eq!(
            kinds(&layout(&b, &docs, 50, &|_, _| true)),
            ["K0@0..2", "B2..5", "K2@5..7"]
        );
        // file 3 removed
        let docs = [same(0), same(1), same(2), same(4), same(5)];
        assert_eq!(
            kinds(&layout(&b, &docs, 50, &|_, _| true)),
            ["K0@0..2", "B2..3", "K2@3..5"]
        );
    }

    #[test]
    fn a_bucket_that_cannot_be_kept_is_rebuilt() {
        let b = [bucket(0, 2, 200), bucket(1, 2, 200)];
        let docs = [same(0), same(1), same(2), same(3)];
        let steps = layout(&b, &docs, 50, &|b, _| b.id != 1);
        assert_eq!(kinds(&steps), ["K0@0..2", "B2..4"]);
    }

    #[test]
    fn a_small_run_takes_in_its_smaller_neighbour() {
        let b = [bucket(0, 2, 600), bucket(1, 1, 300)];
        let tiny = DocState {
            same_as: None,
            estimate: 5,
        };
        // a tiny new file between the buckets
        let docs = [same(0), same(1), tiny, same(2)];
        assert_eq!(
            kinds(&layout(&b, &docs, 50, &|_, _| true)),
            ["K0@0..2", "B2..4"]
        );
    }

    #[test]
    fn with_no_previous_bucket_everything_is_built() {
        let docs = [changed(), changed()];
        assert_eq!(kinds(&layout(&[], &docs, 50, &|_, _| true)), ["B0..2"]);
        assert!(layout(&[], &[], 50, &|_, _| true).is_empty());
    }
}
