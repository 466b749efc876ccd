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

/// The vectors of a generation, ready to search.
pub struct VectorSearch {
    pub set: VectorSet,
    #[cfg(feature = "embeddings")]
    ann: Option<super::hnsw::HnswIndex>,
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
            Ok(VectorSearch { set, ann })
        }
        #[cfg(not(feature = "embeddings"))]
        {
            if set.meta.hnsw_sha256.is_some() {
                return Err(Error::corrupt(dir, "the index has an HNSW graph and this docfuse was built without the `embeddings` feature"));
            }
            Ok(VectorSearch { set })
        }
    }

    /// The `k` rows nearest to `query` as `(row, cosine)`, best first: exact by default,
    /// HNSW (`ef_search` candidates) when the generation has a graph.
    pub fn top(&self, query: &[f32], k: usize, ef_search: usize) -> Vec<(u32, f32)> {
        #[cfg(feature = "embeddings")]
        if let Some(ann) = &self.ann {
            return ann.search(query, k, ef_search);
        }
        let _ = ef_search;
        top_k(&self.set.cosines(query), k)
    }

    /// [`VectorSearch::top`] and the statistics of the query's cosines over the
    /// collection (every vector when searching exactly; an even sample of at most
    /// [`STATS_SAMPLE`] vectors under HNSW).
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
            return (ann.search(query, k, ef_search), stats);
        }
        let _ = ef_search;
        let cosines = self.set.cosines(query);
        let stats = CosineStats::of(
            cosines
                .iter()
                .enumerate()
                .filter(|(i, _)| self.set.has_vector(*i))
                .map(|(_, c)| *c),
        );
        (top_k(&cosines, k), stats)
    }

    /// Cosine of `query` with row `row` (0 for a row without a vector or out of range).
    pub fn cosine(&self, row: usize, query: &[f32]) -> f32 {
        let r = self.set.row(row);
        if r.is_empty() {
            return 0.0;
        }
        dot(r, query)
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
