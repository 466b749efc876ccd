//! Composition: building an index folder from sources, opening it, searching it, and
//! checking its freshness. The one API the front ends (CLI, later servers) use.
//!
//! Must not import: `cli`. Imports ingest (`discover`, `chunk`, `projection`), storage
//! (`store`) and indexes (`lexical`).

mod build;
mod embedding;
mod generation;
mod hit;
mod hybrid;
mod jsonl;
mod lock;
mod open;
mod snippet;
mod source;
mod status;

pub use build::{build, BuildOptions, BuildReport, ChunkDiff, FileDiff, Phase, Progress};
pub use embedding::EmbedLimits;
pub use hit::{FusionExplain, Hit, HitExplain, Mode, SearchResponse};
pub use hybrid::FUSION_DEPTH;
pub use lock::LOCK_FILE;
pub use open::{DocIndex, SearchOptions, DEFAULT_FUSION};
pub use snippet::{snippet, SNIPPET_CHARS};
pub use source::Source;
pub use status::{quick_stale, status, EmbedderInfo, Status};

/// Default index folder, relative to the current folder.
pub const DEFAULT_INDEX_DIR: &str = ".docfuse";
