//! Vector storage and search: L2-normalised f32 vectors, one row per chunk ordinal,
//! persisted in a generation folder; exact (brute-force dot product) search, and HNSW
//! (feature `embeddings`) above a measured collection size.
//!
//! Owns: the on-disk vector format, cosine search. Must not import: `lexical`, `embed`
//! internals (it stores an identity, it does not compute vectors), `generation`, `write`, `read`, `cli`.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! vector files, exact cosine search (and HNSW above a size), cosine statistics of a query
//! over the collection (mean, sd: the fusion's noise floor); `moments.rs`: the first two
//! moments of a collection (μ, the upper triangle of M = (1/n) Σ v vᵀ), from which a
//! query's cosine mean and sd are exact without the vectors (a store that searches them
//! elsewhere)

mod exact;
#[cfg(feature = "embeddings")]
mod hnsw;
mod moments;
mod search;
mod store;

pub use exact::{dot, top_k};
#[cfg(feature = "embeddings")]
pub use hnsw::{hnsw_files, CosineDistance, HnswIndex, EF_SEARCH, HNSW_BASENAME, HNSW_MIN_VECTORS};
pub use moments::Moments;
pub use search::{CosineStats, VectorSearch, STATS_SAMPLE};
pub use store::{VectorMeta, VectorSet, VECTORS_BIN, VECTORS_META, WINDOW_RULE};
