//! Composition: building an index folder from sources, opening it, searching it, and
//! checking its freshness. The one API the front ends (CLI, servers) use.
//!
//! The write path is one pipeline, each step a module that never calls back up into its
//! caller: `build` (lock, decide) → `plan` (roots, walk, read, carry over; `previous`,
//! `source`) → `generation` (chunk, index, `embedding`, publish; `carry` and `layout`: the lexical
//! buckets of the previous generation a refresh keeps). `options` holds what
//! they share; `hooks` the crash-test pause points.
//!
//! Must not import: `cli`, `server`, `retriever`. Imports ingest (`discover`, `chunk`,
//! `projection`), storage (`store`) and indexes (`lexical`, `embed`, `vector`).

mod boundary;
mod build;
mod carry;
mod docread;
mod embedding;
mod export;
mod folder;
mod freshness;
mod generation;
mod graph_view;
mod handoff;
mod hit;
mod hooks;
mod hybrid;
mod jsonl;
mod layout;
mod lock;
mod matchline;
mod open;
mod options;
mod plan;
mod prefetch;
mod previous;
mod proximity;
mod query_cache;
mod readers;
mod relations;
mod remote;
mod source;
mod status;
mod verify;

pub use boundary::{IndexStore, Publication, StoreLock, StoreSnapshot, StoredChunk, StoredDoc};
pub use build::{build, build_in};
pub use embedding::{keep_vectors, EmbedLimits, CACHE_FILE as EMBED_CACHE_FILE};
pub use export::{chunk_keys, export, ChunkKey, Exported, ExportedChunk, ExportedDoc};
pub use folder::FolderStore;
pub use freshness::{FileState, Freshness};
pub use generation::Staged;
pub use graph_view::{
    graph_summary, page_relations, BrokenLinkView, BrokenView, GraphPage, GraphSummary,
    PageRelations, RelationView,
};
pub use handoff::{
    handoff_for_entity, Caveats, Check, Handoff, HandoffEntry, HandoffEvidence, HandoffTarget, Tier,
};
pub use hit::{FusionExplain, Hit, HitExplain, Mode, SearchResponse};
pub(crate) use hooks::pause_point;
pub use hybrid::FUSION_DEPTH;
pub use layout::BUCKET_CHUNKS;
pub use lock::{
    acquire as acquire_writer_lock, holder as writer_lock_holder, WriterLock, LOCK_FILE,
};
pub use matchline::{best_line, snippet_at, MatchLine, SNIPPET_CHARS};
pub use open::{DocIndex, SearchOptions, VectorSide, DEFAULT_FUSION};
pub use options::{
    BuildHooks, BuildOptions, BuildReport, ChunkDiff, FileDiff, LockedStep, Phase, Progress,
};
pub use proximity::ProximityExplain;
pub use query_cache::{QueryCache, QUERY_CACHE_DIR};
pub use remote::{attach, RemoteAnswer, RemoteVectors};
pub use source::Source;
pub use status::{status, status_now, EmbedderInfo, Status};
pub use verify::{verify, Verification};

/// Folder of the folded-model cache inside the index folder ([`crate::embed::folded`]):
/// written by a build or refresh with an embedder, read by every session it creates.
pub const MODEL_CACHE_DIR: &str = "model-cache";

/// Default index folder, relative to the current folder.
pub const DEFAULT_INDEX_DIR: &str = ".docfuse";
