//! What a new generation can carry over from the published one: its lexical buckets
//! (segment files linked, not rebuilt), the `(id, hash)` of their chunks and their
//! vectors' embedding hashes. Carrying is all or nothing per bucket and only under the
//! same settings, versions and roots, so a refreshed index equals a full rebuild.

use super::layout::{layout, DocState, Step};
use super::options::BuildOptions;
use super::plan::Plan;
use crate::generation::{root_names, Previous};
use crate::lexical::{read_buckets, Bucket};
use crate::store::SourceSpec;
use crate::vector::VectorSet;

/// The previous generation's parts a new one may carry over.
pub(super) struct Carry<'a> {
    pub previous: &'a Previous,
    pub buckets: Vec<Bucket>,
    /// `(chunk id, content hash)` by previous ordinal.
    pub chunks: &'a [(String, String)],
    /// The previous vectors when the new generation wants vectors (else `None`).
    vectors: Option<&'a VectorSet>,
    wants_vectors: bool,
    /// The previous documents' links in its snapshot order, read when a bucket is kept
    /// (`None`: not read, or unreadable — kept documents are then read again).
    pub links: Option<Vec<crate::graph::DocLinks>>,
}

impl<'a> Carry<'a> {
    /// What can be carried from `previous` into a generation of `plan`, or `None` when
    /// nothing can (a forced rebuild, other settings or roots, an unreadable part, or
    /// vectors wanted from another embedder).
    pub fn of(
        previous: Option<&'a Previous>,
        plan: &Plan,
        chunks: &'a [(String, String)],
        vectors: Option<&'a VectorSet>,
        opts: &BuildOptions,
    ) -> Option<Carry<'a>> {
        let prev = previous?;
        let m = &prev.manifest;
        let same_shape = !opts.force
            && m.config_hash == opts.config.hash()
            && multi_root(&m.source) == multi_root(&plan.spec)
            && std::mem::discriminant(&m.source) == std::mem::discriminant(&plan.spec);
        if !same_shape {
            tracing::debug!(
                "forced, or other settings or roots than the previous build: full build"
            );
            return None;
        }
        let buckets = match read_buckets(&prev.gen_dir.join("lexical")) {
            Ok(b) => b,
            Err(e) => {
                tracing::debug!("{e}: full build");
                return None;
            }
        };
        let n = m.collection.chunks as usize;
        let covered: u64 = buckets.iter().map(|b| b.files).sum();
        let bucket_chunks: u64 = buckets.iter().map(|b| b.chunks).sum();
        if chunks.len() != n
            || bucket_chunks != n as u64
            || covered != prev.snapshot.files.len() as u64
        {
            tracing::debug!("the previous buckets do not cover its chunks and files: full build");
            return None;
        }
        let wants_vectors = opts.wants_vectors();
        if wants_vectors {
            let v = vectors?;
            let key = opts.embedder.map(|e| e.identity().key());
            let same_embedder = key.is_none_or(|k| k == v.meta.identity_key);
            if !same_embedder || v.len() != n {
                tracing::debug!("vectors of another embedder or shape: full build");
                return None;
            }
        }
        Some(Carry {
            previous: prev,
            buckets,
            chunks,
            vectors: vectors.filter(|_| wants_vectors),
            wants_vectors,
            links: None,
        })
    }

    /// The steps of the new generation: kept buckets and runs to index again.
    pub fn steps(&self, plan: &Plan, bucket_chunks: u64) -> Vec<Step> {
        let names = root_names(&plan.spec);
        let prev = self.previous;
        let per_chunk = prev.manifest.collection.chunks.max(1);
        let bytes: u64 = prev.snapshot.files.iter().map(|f| f.size).sum();
        let bytes_per_chunk = (bytes / per_chunk).max(1);
        let states: Vec<DocState> = plan
            .docs
            .iter()
            .map(|d| {
                let root = names.get(d.entry.root).map_or("", String::as_str);
                let at = prev.position(root, &d.entry.rel_path);
                let old = at.map(|j| &prev.snapshot.files[j]);
                let same =
                    old.is_some_and(|o| o.sha256 == d.entry.sha256 && o.root == d.entry.root);
                DocState {
                    same_as: at.filter(|_| same),
                    estimate: old.map_or(d.entry.size / bytes_per_chunk + 1, |o| o.chunks as u64),
                }
            })
            .collect();
        // a quarter of the least bucket at most: a large collection's buckets are big,
        // and a small run taking in a neighbour would index that much again
        let min_run = (bucket_chunks / 4).min(super::layout::BUCKET_CHUNKS / 4);
        layout(&self.buckets, &states, min_run, &|b, first| {
            self.keepable(b, first)
        })
    }

    /// True when every chunk of bucket `b` (first ordinal `first`) can be carried: with
    /// vectors wanted, each has one, with its tail windows cut by today's rule.
    fn keepable(&self, b: &Bucket, first: u64) -> bool {
        if !self.wants_vectors {
            return true;
        }
        let Some(v) = self.vectors else {
            return false;
        };
        v.meta.window_rule == crate::vector::WINDOW_RULE
            && (first..first + b.chunks).all(|o| v.has_vector(o as usize))
    }

    /// The embedding hash of the previous chunk with ordinal `ord` ("" when unknown).
    pub fn vector_hash(&self, ord: u64) -> String {
        self.vectors
            .and_then(|v| v.meta.hashes.get(ord as usize).cloned())
            .unwrap_or_default()
    }
}

/// The steps of a generation built from nothing: every document indexed.
pub(super) fn build_all(docs: usize) -> Vec<Step> {
    if docs == 0 {
        return Vec::new();
    }
    vec![Step::Build { docs: 0..docs }]
}

fn multi_root(spec: &SourceSpec) -> bool {
    matches!(spec, SourceSpec::Roots { roots } if roots.len() > 1)
}
