//! The lexical index: projected fields stored in `tantivy`, ranked by our own BM25F.
//!
//! tantivy holds the postings (per-field term frequencies), field norms, the term
//! dictionaries (for prefix expansion) and the stored chunks; docfuse reads the postings
//! itself to compute true BM25F (one saturation over weighted, length-normalised field
//! frequencies; Robertson & Zaragoza, 2009), which tantivy's per-field BM25 cannot express.
//! Must not import: `store`, `engine`, `cli` (indexes sit below composition).

mod accs;
mod bm25f;
mod buckets;
mod explain;
mod reader;
mod readonly;
mod schema;
mod search;
mod units;
mod writer;
#[cfg(test)]
mod writer_tests;

pub use bm25f::{idf, length_norm, saturate};
pub use buckets::{read_buckets, Bucket, BUCKETS_FILE};
pub use explain::{Explain, FieldExplain, TermExplain};
pub use reader::{LexicalIndex, PagePriors};
pub use search::{Hit, LexicalQuery, LexicalRun, Scored};
pub use writer::{BuildStats, LexicalWriter, Prepared};
