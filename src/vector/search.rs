//! Vector search over a generation's vectors: exact, or HNSW when the generation has a graph.

use super::exact::{dot, top_k};
use super::store::VectorSet;
use crate::error::{Error, Result};
use std::path::Path;

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
                        let bytes = std::fs::read(f)
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
