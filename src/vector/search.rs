//! Vector search over a generation's vectors: exact, or HNSW when the generation has a graph.

use super::exact::{dot, top_k};
use super::store::VectorSet;
use crate::error::{Error, Result};
use std::path::Path;

/// Most vectors the cosine statistics read under HNSW.
pub const STATS_SAMPLE: usize = 8192;

/// Mean and standard deviation of one query's cosines over a collection: where its
/// noise lies (most chunks are unrelated to any one query).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct CosineStats {
    pub mean: f32,
    pub std: f32,
    /// Vectors the statistics were taken over.
    pub n: usize,
}

impl CosineStats {
    /// The statistics of `cosines`.
    pub fn of(cosines: impl Iterator<Item = f32>) -> Self {
        let (mut n, mut sum, mut sq) = (0usize, 0f64, 0f64);
        for c in cosines.filter(|c| c.is_finite()) {
            n += 1;
            sum += c as f64;
            sq += (c as f64) * (c as f64);
        }
        if n == 0 {
            return CosineStats::default();
        }
        let mean = sum / n as f64;
        let var = (sq / n as f64 - mean * mean).max(0.0);
        CosineStats {
            mean: mean as f32,
            std: var.sqrt() as f32,
            n,
        }
    }
}

/// The vectors of a generation, ready to search. Rows are chunks' first rows and tail
/// rows ([`VectorSet`]); results are chunks, each at the cosine of its nearest row.
pub struct VectorSearch {
    pub set: VectorSet,
    /// [`VectorSet::tail_starts`].
    tail_starts: Vec<u32>,
    #[cfg(feature = "embeddings")]
    ann: Option<super::hnsw::HnswIndex>,
}

/// Rows `(row, cosine)` best first → chunks `(ordinal, cosine)` best first, each chunk at
/// its best row, at most `k`.
#[cfg(feature = "embeddings")]
fn chunks_of_rows(set: &VectorSet, rows: Vec<(u32, f32)>, k: usize) -> Vec<(u32, f32)> {
    let mut seen = std::collections::HashSet::new();
    rows.into_iter()
        .map(|(r, c)| (set.owner(r as usize) as u32, c))
        .filter(|(o, _)| seen.insert(*o))
        .take(k)
        .collect()
}

impl VectorSearch {
    /// Reads the vectors of the generation in `dir` and, when it has one, its HNSW graph
    /// (after checking the graph files against their recorded sha256).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a file is missing, altered or unreadable.
    pub fn open(dir: &Path) -> Result<VectorSearch> {
        let set = VectorSet::read(dir)?;
        #[cfg(feature = "embeddings")]
        {
            let ann = match &set.meta.hnsw_sha256 {
                Some(recorded) => {
                    let files = super::hnsw::hnsw_files(dir);
                    for (f, want) in files.iter().zip(recorded) {
                        let bytes = crate::fsio::read_regular(f)
                            .map_err(|e| Error::corrupt(dir, format!("HNSW graph: {e}")))?;
                        if &crate::hashing::sha256_hex(&bytes) != want {
                            return Err(Error::corrupt(
                                dir,
                                "HNSW graph does not match its recorded sha256",
                            ));
                        }
                    }
                    Some(super::hnsw::HnswIndex::load(dir)?)
                }
                None => None,
            };
            let tail_starts = set.tail_starts();
            Ok(VectorSearch {
                set,
                tail_starts,
                ann,
            })
        }
        #[cfg(not(feature = "embeddings"))]
        {
            if set.meta.hnsw_sha256.is_some() {
                return Err(Error::corrupt(dir, "the index has an HNSW graph and this docfuse was built without the `embeddings` feature"));
            }
            let tail_starts = set.tail_starts();
            Ok(VectorSearch { set, tail_starts })
        }
    }

    /// The `k` chunks nearest to `query` as `(ordinal, cosine)`, best first: exact by
    /// default, HNSW (`ef_search` candidates) when the generation has a graph.
    pub fn top(&self, query: &[f32], k: usize, ef_search: usize) -> Vec<(u32, f32)> {
        #[cfg(feature = "embeddings")]
        if let Some(ann) = &self.ann {
            return self.ann_top(ann, query, k, ef_search);
        }
        let _ = ef_search;
        top_k(&self.set.cosines(query), k)
    }

    /// [`VectorSearch::top`] and the statistics of the query's cosines over the
    /// collection's chunks, each by its first row (the moments a database store keeps
    /// count the same rows): every chunk when searching exactly, an even sample of at
    /// most [`STATS_SAMPLE`] under HNSW.
    pub fn top_with_stats(
        &self,
        query: &[f32],
        k: usize,
        ef_search: usize,
    ) -> (Vec<(u32, f32)>, CosineStats) {
        #[cfg(feature = "embeddings")]
        if let Some(ann) = &self.ann {
            let n = self.set.len();
            let stride = n.div_ceil(STATS_SAMPLE).max(1);
            let sample = (0..n).step_by(stride).filter(|&i| self.set.has_vector(i));
            let stats = CosineStats::of(sample.map(|i| dot(self.set.row(i), query)));
            return (self.ann_top(ann, query, k, ef_search), stats);
        }
        let _ = ef_search;
        let mut cosines = self.set.first_row_cosines(query);
        let held = cosines
            .iter()
            .enumerate()
            .filter(|(i, _)| self.set.has_vector(*i));
        let stats = CosineStats::of(held.map(|(_, c)| *c));
        self.set.raise_by_tails(&mut cosines, query);
        (top_k(&cosines, k), stats)
    }

    /// The `k` chunks nearest to `query` through the HNSW graph over rows: a chunk's
    /// tail rows can fill several of the nearest places, so rows are asked for until `k`
    /// distinct chunks are found (doubling, at most every row).
    #[cfg(feature = "embeddings")]
    fn ann_top(
        &self,
        ann: &super::hnsw::HnswIndex,
        query: &[f32],
        k: usize,
        ef_search: usize,
    ) -> Vec<(u32, f32)> {
        if self.set.meta.tails.is_empty() {
            return ann.search(query, k, ef_search);
        }
        let rows = self.set.rows();
        let mut want = k.saturating_mul(2);
        loop {
            let found = ann.search(query, want, ef_search.max(want));
            let full = found.len() >= want;
            let top = chunks_of_rows(&self.set, found, k);
            if top.len() >= k || !full || want >= rows {
                return top;
            }
            want = want.saturating_mul(2).min(rows);
        }
    }

    /// Cosine of `query` with chunk `ord`: the largest over its first row and its tail
    /// rows (0 for a chunk without a vector or out of range).
    pub fn cosine(&self, ord: usize, query: &[f32]) -> f32 {
        let r = self.set.row(ord);
        if r.is_empty() || ord >= self.set.len() {
            return 0.0;
        }
        let n = self.set.len();
        let (a, b) = match (self.tail_starts.get(ord), self.tail_starts.get(ord + 1)) {
            (Some(&a), Some(&b)) => (a as usize, b as usize),
            _ => (0, 0),
        };
        (a..b).fold(dot(r, query), |best, j| {
            best.max(dot(self.set.row(n + j), query))
        })
    }

    /// True when searches go through an HNSW graph.
    pub fn is_approximate(&self) -> bool {
        #[cfg(feature = "embeddings")]
        {
            self.ann.is_some()
        }
        #[cfg(not(feature = "embeddings"))]
        {
            false
        }
    }
}
