//! Composition: building an index folder from sources, opening it, searching it, and
//! checking its freshness. The one API the front ends (CLI, later servers) use.
//!
//! Must not import: `cli`. Imports ingest (`discover`, `chunk`, `projection`), storage
//! (`store`) and indexes (`lexical`).

mod build;
mod embedding;
mod hit;
mod hybrid;
mod jsonl;
mod open;
mod snippet;
mod status;

pub use build::{build, BuildOptions, BuildReport, Phase, Progress, Source};
pub use hit::{FusionExplain, Hit, HitExplain, Mode, SearchResponse};
pub use hybrid::FUSION_DEPTH;
pub use open::{DocIndex, SearchOptions, DEFAULT_FUSION};
pub use snippet::{snippet, SNIPPET_CHARS};
pub use status::{status, Status};

/// Default index folder, relative to the current folder.
pub const DEFAULT_INDEX_DIR: &str = ".docfuse";
