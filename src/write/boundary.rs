//! The one storage interface of the write path. A build is one pipeline over it —
//! lock → plan → chunk → diff against the store → embed (vectors the store holds are
//! never embedded again) → publish — whatever holds the index:
//!
//! - [`super::FolderStore`]: an index folder (the manifest is the commit point);
//! - `pgstore::PgStore`: PostgreSQL + pgvector (the `published` row is the commit point),
//!   with this host's writer folder as the folder the generations are staged in.
//!
//! Each store stages a generation in a folder of its own ([`IndexStore::staging`]): the
//! lexical index, the sources and the vectors are written there first, then the store
//! publishes it ([`IndexStore::publish`]).

use super::stage::Staged;
use crate::error::Result;
use std::collections::HashMap;
use std::path::Path;

/// A document of a store's published generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDoc {
    /// Its root as indexed (the root's path; a JSONL index: the file).
    pub root: String,
    /// Its path under the root, `/`-separated.
    pub path: String,
    /// sha256 of its bytes as read.
    pub sha256: String,
}

/// A chunk of a store's published generation: `(root, chunk id within its root, content
/// hash)`.
pub type StoredChunk = (String, String, String);

/// The writer lock a store gave one build (released on drop).
pub type StoreLock = Box<dyn std::any::Any>;

/// A store's published generation, as a build diffs against it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreSnapshot {
    /// The store's generation number (the folder's counter; the database's row).
    pub generation: u64,
    /// Every document it holds.
    pub documents: Vec<StoredDoc>,
}

/// What a publish did.
#[derive(Debug, Clone, PartialEq)]
pub struct Publication {
    /// The store's generation now published.
    pub generation: u64,
    /// True when the store already held this content and nothing was written.
    pub unchanged: bool,
}

/// Where an index lives: the snapshot, chunks and vectors of its published generation,
/// its writer lock, and the publish that makes a staged generation current.
pub trait IndexStore {
    /// The store for messages: a folder path, or a URL with the password redacted.
    fn shown(&self) -> String;

    /// The index folder the generations are written in (for a folder store, itself); a
    /// build plans against its published generation (carry-over of unchanged documents,
    /// lexical buckets and vectors) and decides from it what to write, so a store other
    /// than a folder keeps it at its own published generation.
    fn staging_dir(&self) -> &Path;

    /// True when the staging folder holds the store's published generation (a folder
    /// store: always); else a build reports what changed against [`IndexStore::snapshot`]
    /// and [`IndexStore::chunks`] (the staging folder's own generation only decides what
    /// to write).
    fn staging_is_published(&self) -> bool;

    /// Takes the writer lock for one build: held until the returned guard is dropped.
    /// When another writer holds it: with `wait`, calls `waiting` once and blocks; else
    /// fails.
    ///
    /// # Errors
    /// [`crate::Error::Locked`] / [`crate::Error::Database`] when busy and not waiting;
    /// the lock cannot be taken.
    fn lock(
        &mut self,
        wait: crate::generation::LockWait,
        waiting: &mut dyn FnMut(),
    ) -> Result<StoreLock>;

    /// The published generation's documents; `None` before the first publish.
    ///
    /// # Errors
    /// The store cannot be read.
    fn snapshot(&mut self) -> Result<Option<StoreSnapshot>>;

    /// The published generation's chunks as `(root, chunk id within its root, content
    /// hash)` (the id without a multi-root index's `N:` position prefix, which shifts
    /// when a root is dropped), in ordinal order; empty before the first publish.
    ///
    /// # Errors
    /// The store cannot be read.
    fn chunks(&mut self) -> Result<Vec<StoredChunk>>;

    /// The vectors the store holds for `hashes` (embedding hashes,
    /// sha256(identity, input)) of embedder `identity_key`, beyond the staging folder's
    /// published generation (which a build reuses by itself): `[dim]` f32 each,
    /// L2-normalised. A hash it does not hold is left out.
    ///
    /// # Errors
    /// The store cannot be read.
    fn vectors(&mut self, identity_key: &str, hashes: &[&str])
        -> Result<HashMap<String, Vec<f32>>>;

    /// Publishes `staged` — a generation written in the staging folder, or `None` when
    /// the build found nothing new there (a store other than the folder then publishes
    /// the staging folder's generation when it does not hold it yet: an earlier publish
    /// failed after the folder's).
    ///
    /// # Errors
    /// The publish failed: the store's published generation is the one before.
    fn publish(&mut self, staged: Option<Staged>) -> Result<Publication>;
}
