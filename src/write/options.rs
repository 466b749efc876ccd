//! What a build is asked to do and what it reports: options, progress, the report.

use crate::config::IndexConfig;
use crate::discover::{Skips, Warning};
use crate::embed::Embedder;
use serde::Serialize;

/// The phase a build is in, for progress reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Another process holds the writer lock; waiting for it.
    Waiting,
    /// Reading, chunking and indexing documents (units: documents).
    Indexing,
    /// Embedding chunks (units: chunks to embed).
    Embedding,
}

/// Progress of a build: `done` of `total` units of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

/// A step run under the writer lock (see [`BuildOptions::hooks`]).
pub type LockedStep<'a> = &'a (dyn Fn() -> crate::error::Result<()> + Sync);

/// Steps run while the writer lock is held.
#[derive(Clone, Copy, Default)]
pub struct BuildHooks<'a> {
    pub before: Option<LockedStep<'a>>,
    pub after: Option<LockedStep<'a>>,
}

/// How to build.
#[derive(Clone, Default)]
pub struct BuildOptions<'a> {
    /// The effective configuration (defaults with `config_overrides` applied).
    pub config: IndexConfig,
    /// The settings given explicitly, recorded so that a refresh keeps them while the
    /// others follow docfuse's defaults (`serde_json::Value::Null` for none).
    pub config_overrides: serde_json::Value,
    /// The index should have vectors even when `embedder` is None (the model could not
    /// be loaded). Vectors are wanted when this is set or an embedder is given.
    pub embeddings: bool,
    /// Embed chunks with this embedder; `None` with `embeddings` set means the model
    /// could not be loaded (`embedder_unavailable` says why): unchanged chunks keep their
    /// vectors (found by hash), the rest waits for a refresh that can load it.
    pub embedder: Option<&'a dyn Embedder>,
    /// Why no embedder could be loaded, when `embeddings` is set and `embedder` is None.
    pub embedder_unavailable: Option<&'a str>,
    /// Embed at most this many chunks in this run (the rest stays pending).
    pub max_chunks: Option<u64>,
    /// Stop embedding after this many seconds (the rest stays pending).
    pub max_seconds: Option<f64>,
    /// Write the inputs left without a vector to the index folder's embedding queue
    /// ([`crate::generation::QUEUE_FILE`]) for embedding workers (a database writer).
    pub queue_pending: bool,
    /// Write a new generation even when nothing changed; overwrite an index written by a
    /// newer docfuse.
    pub force: bool,
    /// Fail instead of waiting when another process is writing the index.
    pub no_wait: bool,
    /// Wait at most this many seconds for another writer, then fail (`None`: no limit).
    pub wait_timeout: Option<f64>,
    /// Remove the index's roots that no longer exist (and their chunks) instead of failing.
    pub drop_missing_roots: bool,
    /// Remove these roots of the index (and their chunks), whether or not they exist; a
    /// path that is not a root of the index is an error.
    pub drop_roots: Vec<std::path::PathBuf>,
    /// The roots links between roots are resolved against, when they are not the roots
    /// built (a database index's reader builds over a mirror of its writer's roots).
    pub link_roots: Option<Vec<String>>,
    /// Run while the writer lock is held: `before` ahead of reading the roots (e.g. to
    /// unpack a docs pack into one), `after` once the new generation is published (e.g.
    /// to delete the files of a dropped root). An error of `before` fails the build
    /// before anything is written; an error of `after` is returned after the publish.
    pub hooks: BuildHooks<'a>,
    /// Chunks per lexical bucket (default [`crate::write::BUCKET_CHUNKS`]): what a refresh
    /// indexes again around a changed file. Rankings never depend on it.
    pub bucket_chunks: Option<u64>,
    /// The store generation the built folder copies ([`crate::store::Manifest::store_generation`]:
    /// a database reader's cache sets the published generation it indexes).
    pub store_generation: Option<u64>,
}

impl BuildOptions<'_> {
    /// Whether the index should have vectors: an embedder is given, or `embeddings`.
    pub fn wants_vectors(&self) -> bool {
        self.embeddings || self.embedder.is_some()
    }
}

/// Files compared with the previous generation (by root, path and content sha256).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub scanned: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub removed: u64,
    /// Unchanged files whose size or mtime changed (touched, checked out again): the new
    /// values are recorded so the index reads as fresh.
    pub touched: u64,
}

/// Chunks compared with the previous generation (by id and content hash).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChunkDiff {
    pub total: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub removed: u64,
}

/// What a build did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildReport {
    /// The published generation (the previous one when nothing changed).
    pub generation: u64,
    /// True when nothing changed and nothing was written.
    pub skipped: bool,
    /// Source documents indexed (files or JSONL records).
    pub documents: u64,
    pub chunks: u64,
    pub files: FileDiff,
    pub chunk_diff: ChunkDiff,
    /// Chunks embedded in this run.
    pub embedded: u64,
    /// Chunks whose vector was reused (same embedding hash).
    pub reused: u64,
    /// Chunks without a vector yet (limits of this run, or no model).
    pub pending: u64,
    /// Why the index has no vectors although they were asked for (model not loaded).
    pub vectors_unavailable: Option<String>,
    /// Why every chunk was embedded again (the previous vectors came from another
    /// embedder), when so.
    pub embedder_changed: Option<String>,
    /// Files that could not be read: their previous text was kept.
    pub partial: Vec<String>,
    /// Entries skipped by the walk, per reason.
    pub skipped_entries: Skips,
    /// Files or records skipped or degraded, each with its reason.
    #[serde(serialize_with = "warnings_as_text")]
    pub warnings: Vec<Warning>,
    /// Wall time, ms.
    pub elapsed_ms: u64,
    /// Lexical buckets carried over from the previous generation (segment files linked).
    pub buckets_kept: u64,
    /// Lexical buckets written (chunked and indexed) by this build.
    pub buckets_written: u64,
}

fn warnings_as_text<S: serde::Serializer>(
    w: &[Warning],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|w| w.to_string()))
}
