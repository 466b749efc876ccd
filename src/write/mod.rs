//! The write pipeline: building and refreshing an index over one storage interface
//! ([`IndexStore`]), whatever holds the index (a folder, PostgreSQL).
//!
//! Each step is a module that never calls back up into its caller: `build` (lock,
//! decide) → `plan` (roots, walk, read, carry over; `prefetch` reads the previous chunk
//! list and links beside the walk) → `stage` (chunk, index, `embedding`, publish; `carry`
//! and `layout`: the lexical buckets of the previous generation a refresh keeps) →
//! `folder` (the folder store) → `boundary` (the store interface). `options` holds what
//! they share; `hooks` the crash-test pause points.
//!
//! Must not import: `read`, `views`, `retriever`, `cli`, `server`, `pgstore`. Imports
//! `generation` (the files of a generation), ingest (`discover`, `chunk`, `projection`),
//! storage (`store`) and indexes (`lexical`, `embed`, `vector`, `graph`).

mod boundary;
mod build;
mod carry;
mod embedding;
mod folder;
mod hooks;
mod layout;
mod options;
mod plan;
mod prefetch;
mod stage;

pub use boundary::{IndexStore, Publication, StoreLock, StoreSnapshot, StoredChunk, StoredDoc};
pub use build::{build, build_in};
pub use embedding::{keep_vectors, EmbedLimits, CACHE_FILE as EMBED_CACHE_FILE};
pub use folder::FolderStore;
pub(crate) use hooks::pause_point;
pub use layout::BUCKET_CHUNKS;
pub use options::{
    BuildHooks, BuildOptions, BuildReport, ChunkDiff, FileDiff, LockedStep, Phase, Progress,
};
pub use stage::Staged;
