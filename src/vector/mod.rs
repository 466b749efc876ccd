//! Vector storage and search: L2-normalised f32 vectors, one row per chunk ordinal,
//! persisted in a generation folder; exact (brute-force dot product) search.
//!
//! Owns: the on-disk vector format, cosine search. Must not import: `lexical`, `embed`
//! internals (it stores an identity, it does not compute vectors), `engine`, `cli`.

mod exact;
mod store;

pub use exact::{dot, top_k};
pub use store::{VectorMeta, VectorSet, VECTORS_BIN, VECTORS_META};
