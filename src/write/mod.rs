//! The write pipeline: building and refreshing an index over one storage interface
//! ([`IndexStore`]), whatever holds the index (a folder, PostgreSQL).
//!
//! Each file imports only files after it in this order (a test checks it): `build` (lock,
//! decide) → `folder` (the folder store) → `boundary` (the store interface) → `stage`
//! (chunk, index, embed, publish) → `carry` (the lexical buckets of the previous
//! generation a refresh keeps) → `embedding` → `plan` (roots, walk, read, carry over) →
//! `prefetch` (the previous chunk list and links, read beside the walk) → `layout` →
//! `options` (what they share) → `hooks` (the crash-test pause points).
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
pub use plan::root_key;
pub use stage::Staged;
