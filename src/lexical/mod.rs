//! The lexical index: projected fields stored in `tantivy`, ranked by our own BM25F.
//!
//! tantivy holds the postings (per-field term frequencies), field norms, the term
//! dictionaries (for prefix expansion) and the stored chunks; docfuse reads the postings
//! itself to compute true BM25F (one saturation over weighted, length-normalised field
//! frequencies; Robertson & Zaragoza, 2009), which tantivy's per-field BM25 cannot express.
//! Must not import: `store`, `generation`, `write`, `read`, `cli` (indexes sit below composition).
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! tantivy schema and writer; a query's candidates in flat arrays (`accs.rs`: a per-segment
//! document-to-slot table, one list of matched postings with their frequencies, summed per
//! candidate when read — no hashing or allocation per posting); buckets (`buckets.rs`, `writer.rs`: runs of consecutive
//! documents, one segment each, never merged; a refresh links the segments of unchanged
//! buckets and leaves the others' segments out of tantivy's segment list before its writer
//! opens (each bucket records its segment's id in `buckets.json`; a bucket of an index
//! written before that, or with a damaged id, is deleted by its bucket term), so no segment
//! holds a deleted chunk and a refresh makes no commit but its new buckets'; a chunk's
//! ordinal is its bucket's first ordinal plus its place in it; a `section` fast field holds
//! the place of the first piece of the chunk's section in its bucket — buckets close only
//! between documents, so a section never spans two); our own BM25F over its postings;
//! section and page evidence (`units.rs`: each chunk's section and the sections' summed
//! field lengths, from fast fields and field norms once per opened index; the pages from
//! the first chunk of each file, which the engine gives from its snapshot; a candidate's
//! section or page scored as one document from the candidates' frequencies); named score
//! parts; explain; a lock-free read-only directory (`readonly.rs`) so an index on a read-
//! only disk opens; a search's first k results found with score bounds (`topk.rs`,
//! MaxScore at the level of sections), ranked with whole-index document frequencies
//! counted from the postings' document ids and remembered (`dfs.rs`); a lone CJK character
//! of a query looked up as the indexed bigrams that hold it (`cjk.rs`)

mod accs;
pub(crate) mod bm25f;
mod buckets;
mod cjk;
mod dfs;
mod explain;
mod lists;
mod reader;
mod readonly;
mod roles;
mod schema;
mod search;
mod topk;
mod units;
mod writer;
#[cfg(test)]
mod writer_tests;

pub use bm25f::{idf, length_norm, saturate};
pub use buckets::{read_buckets, Bucket, BUCKETS_FILE};
pub use explain::{Explain, FieldExplain, TermExplain};
pub use reader::{LexicalIndex, PagePriors};
pub use roles::changelog_prior_for;
pub use search::{Hit, LexicalQuery, LexicalRun, Scored};
pub use writer::{BuildStats, LexicalWriter, Prepared};
