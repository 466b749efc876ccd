//! The docfuse index as a [`Retriever`]: searches run on a blocking thread pool, bounded by
//! a semaphore (one search per core by default), and so do reads (passages, documents,
//! handoffs, status: [`READS_PER_CORE`] per core, a lane of their own so they never wait
//! behind searches); the others wait, as many as
//! [`DocfuseRetriever::with_max_queued`] allows in each lane (unbounded unless set;
//! `docfuse serve` sets [`DEFAULT_MAX_QUEUED`]), and one more is refused at once
//! with [`RetrieveError::Overloaded`]. So threads and memory are bounded by these
//! settings, not by the number of clients. The search itself is
//! [`super::search`]. A retriever follows its index: each request first checks the
//! manifest (one `stat`) and, when a refresh has published another generation, opens it;
//! a request in flight finishes on the generation it started on.

use super::inner::Inner;
pub use super::inner::Retrieval;
use super::passage::{self, Passage, PassageRequest};
use super::{BoxFuture, RetrieveError, RetrieveOptions, RetrievedDocument, Retriever};
use crate::read::{status_now, DocIndex, Status};
use crate::store::SourceSpec;
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::Semaphore;

/// Searches that may wait for a permit at once in `docfuse serve` (its `--max-queued`
/// default); one more is refused as overloaded.
pub const DEFAULT_MAX_QUEUED: usize = 64;

/// Reads (passage, document, handoff, status) that may run at once per core: they are
/// mostly I/O, so more than one per core keeps the disk busy; each holds a blocking
/// thread and its buffers while it runs.
pub const READS_PER_CORE: usize = 2;

/// The docfuse index behind the [`Retriever`] API. Cheap to clone (shared state).
///
/// The embedding model, once loaded, stays loaded for the life of the value; the index
/// is reopened when a refresh publishes a new generation (see the module doc).
#[derive(Clone)]
pub struct DocfuseRetriever {
    current: Arc<Current>,
}

/// The generation served now, and the manifest file's identity when it was opened.
struct Current {
    inner: RwLock<Arc<Inner>>,
    stamp: Mutex<Option<ManifestStamp>>,
    permits: Arc<Semaphore>,
    /// Reads running at once (see [`READS_PER_CORE`]).
    read_permits: Arc<Semaphore>,
    /// Query embeddings running at once, ahead of their searches (one per search permit).
    embed_permits: Arc<Semaphore>,
    /// Searches waiting for a permit now, reads waiting (each lane has its own places,
    /// so a flood of one never refuses the other), and how many may wait in each
    /// (shared by every clone).
    queued: AtomicUsize,
    reads_queued: AtomicUsize,
    embeds_queued: AtomicUsize,
    /// The last vector health seen, answered while every read permit is busy.
    last_health: Mutex<Option<Result<(), String>>>,
    max_queued: AtomicUsize,
}

/// Size, mtime and inode of `manifest.json`: a publish replaces the file, so any change
/// of these means "look again".
type ManifestStamp = (u64, std::time::SystemTime, u64);

fn manifest_stamp(dir: &Path) -> Option<ManifestStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(dir.join(crate::store::MANIFEST_FILE)).ok()?;
    Some((m.len(), m.modified().ok()?, m.ino()))
}

/// Freshness, counts and the vector side of an index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexStatus {
    /// `fresh`, `generation`, `documents`, `chunks`, `added`, `changed`, `removed`,
    /// `config_changed`, `reasons`.
    #[serde(flatten)]
    pub status: Status,
    /// The index folder.
    pub index_dir: String,
    /// Absolute root folders (empty for a JSONL source).
    pub roots: Vec<String>,
    pub vectors: VectorsReport,
    /// How many files each list of `status` held before [`IndexStatus::capped`] cut it
    /// (`added`, `changed`, `removed`, `unreadable`, `partial`, `read_in_part`); empty when not cut.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub list_counts: std::collections::BTreeMap<&'static str, usize>,
}

/// Most entries of each file list in a status response (the counts stay whole).
pub const STATUS_LIST_CAP: usize = 50;

impl IndexStatus {
    /// This status with each file list cut to `n` entries (their full lengths in
    /// `list_counts`), so a status of a large, very stale index stays small.
    pub fn capped(mut self, n: usize) -> Self {
        let s = &mut self.status;
        for (name, list) in [
            ("added", &mut s.added),
            ("changed", &mut s.changed),
            ("removed", &mut s.removed),
            ("unreadable", &mut s.unreadable),
            ("partial", &mut s.partial),
            ("read_in_part", &mut s.read_in_part),
        ] {
            if list.len() > n {
                self.list_counts.insert(name, list.len());
                list.truncate(n);
            }
        }
        self
    }
}

/// The vector side: what the index holds and whether queries can use it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VectorsReport {
    /// The index has vectors.
    pub present: bool,
    /// The embedder that made them (e.g. `all-MiniLM-L6-v2`).
    pub model: Option<String>,
    pub dim: Option<usize>,
    pub embedded: u64,
    pub pending: u64,
    /// Vector and hybrid queries work (model loaded, identities agree).
    pub usable: bool,
    /// Why not, when not usable.
    pub reason: Option<String>,
    /// Where the vectors are searched when the index folder holds none (a PostgreSQL
    /// index: `PostgreSQL `postgres://…` (schema `docfuse`)`); `None`: in the folder.
    pub store: Option<String>,
}

impl DocfuseRetriever {
    /// Wraps an opened index; at most one search per available core runs at a time.
    pub fn new(index: impl Into<Arc<DocIndex>>) -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self::with_concurrency(index, cores)
    }

    /// Wraps an opened index; at most `searches` (≥ 1) searches run at a time, the others
    /// wait without holding a thread (as many as [`DocfuseRetriever::with_max_queued`]
    /// allows; no bound unless set).
    pub fn with_concurrency(index: impl Into<Arc<DocIndex>>, searches: usize) -> Self {
        let index: Arc<DocIndex> = index.into();
        let searches = searches.max(1);
        DocfuseRetriever {
            current: Arc::new(Current {
                stamp: Mutex::new(manifest_stamp(index.dir())),
                inner: RwLock::new(Arc::new(Inner::new(index))),
                permits: Arc::new(Semaphore::new(searches)),
                read_permits: Arc::new(Semaphore::new(searches * READS_PER_CORE)),
                embed_permits: Arc::new(Semaphore::new(searches)),
                queued: AtomicUsize::new(0),
                reads_queued: AtomicUsize::new(0),
                embeds_queued: AtomicUsize::new(0),
                last_health: Mutex::new(None),
                max_queued: AtomicUsize::new(usize::MAX),
            }),
        }
    }

    /// At most `max_queued` searches, as many query embeddings (a hybrid or vector
    /// search waits first for an embedding permit, then for a search permit: at most
    /// `max_queued` in each queue) and as many reads wait for a permit; one more is
    /// refused at once with
    /// [`RetrieveError::Overloaded`] (the HTTP API answers `503` with `Retry-After`).
    /// Clones share one queue: the bound applies to all of them.
    pub fn with_max_queued(self, max_queued: usize) -> Self {
        self.current.max_queued.store(max_queued, Ordering::SeqCst);
        self
    }

    /// Takes every search permit until the returned guard is dropped (tests of the queue).
    #[cfg(test)]
    pub(crate) async fn hold_all_permits(&self) -> tokio::sync::OwnedSemaphorePermit {
        Self::hold_all(&self.current.permits).await
    }

    /// Takes every query-embedding permit until the returned guard is dropped (tests of
    /// the lanes).
    #[cfg(test)]
    pub(crate) async fn hold_all_embed_permits(&self) -> tokio::sync::OwnedSemaphorePermit {
        Self::hold_all(&self.current.embed_permits).await
    }

    /// Takes every read permit until the returned guard is dropped (tests of the queue).
    #[cfg(test)]
    pub(crate) async fn hold_all_read_permits(&self) -> tokio::sync::OwnedSemaphorePermit {
        Self::hold_all(&self.current.read_permits).await
    }

    #[cfg(test)]
    async fn hold_all(permits: &Arc<Semaphore>) -> tokio::sync::OwnedSemaphorePermit {
        let n = permits.available_permits() as u32;
        permits
            .clone()
            .acquire_many_owned(n)
            .await
            .expect("the semaphore is never closed")
    }

    /// A permit of `lane`: at once when one is free; else a place in the wait queue, or
    /// [`RetrieveError::Overloaded`] when the queue is full.
    async fn permit(&self, lane: Lane) -> Result<tokio::sync::OwnedSemaphorePermit, RetrieveError> {
        let c = &self.current;
        let (permits, queued) = match lane {
            Lane::Search => (&c.permits, &c.queued),
            Lane::Read => (&c.read_permits, &c.reads_queued),
            Lane::Embed => (&c.embed_permits, &c.embeds_queued),
        };
        if let Ok(p) = permits.clone().try_acquire_owned() {
            return Ok(p);
        }
        let max = c.max_queued.load(Ordering::SeqCst);
        // a place only when one is free: a refused search never counts as waiting
        if let Err(queued) = queued.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < max).then_some(n + 1)
        }) {
            return Err(RetrieveError::Overloaded {
                queued,
                retry_after_s: 1,
            });
        }
        let _place = QueuePlace(queued);
        permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| RetrieveError::Task(e.to_string()))
    }

    /// The generation to serve this request: the one open, or the newly published one
    /// (opened with the loaded embedder) when the manifest changed. A new generation that
    /// does not open (e.g. damaged) leaves the open one served, with a warning.
    fn inner(&self) -> Arc<Inner> {
        let open = self.current.inner.read().map(|g| g.clone());
        let open = match open {
            Ok(i) => i,
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let now = manifest_stamp(open.index.dir());
        let Ok(mut stamp) = self.current.stamp.lock() else {
            return open;
        };
        if now.is_none() || *stamp == now {
            return open;
        }
        *stamp = now;
        match DocIndex::open(open.index.dir()) {
            // Another manifest (its seal covers all of it), also one that reuses the
            // generation number (an index removed and built again).
            Ok(next) if next.manifest().seal != open.index.manifest().seal => {
                let next = match open.index.loaded_embedder() {
                    Some(e) => next.with_embedder(e),
                    None => next,
                };
                tracing::info!(
                    "serving generation {} (was {})",
                    next.manifest().generation,
                    open.index.manifest().generation
                );
                let fresh = Arc::new(Inner::new(Arc::new(next)));
                if let Ok(mut slot) = self.current.inner.write() {
                    *slot = fresh.clone();
                }
                fresh
            }
            Ok(_) => open,
            Err(e) => {
                tracing::warn!(
                    "a new generation was published but does not open ({e}); serving generation {}",
                    open.index.manifest().generation
                );
                open
            }
        }
    }

    /// Opens the index in `dir` (see [`DocIndex::open`]), or — when `dir` is a
    /// `postgres://…` URL — this host's cache of the database's published generation,
    /// synced first (this host's copy, with a warning logged, while the database cannot
    /// be reached), with vector search in the database and a thread that follows later
    /// publishes for the rest of the process (see [`crate::pgstore::open_reader`] and
    /// [`crate::pgstore::follow`]). Blocking: from async code, call it where blocking is
    /// allowed (e.g. `tokio::task::spawn_blocking`).
    ///
    /// # Errors
    /// [`RetrieveError::Engine`] when there is no index or it is unusable; for a URL,
    /// [`crate::Error::Database`] when the database refuses the connection, holds no
    /// index, or cannot be reached and this host has no copy.
    pub fn open(dir: &Path) -> Result<Self, RetrieveError> {
        let Some(url) = dir.to_str().filter(|u| crate::pgstore::is_database_url(u)) else {
            return Ok(Self::new(DocIndex::open(dir)?));
        };
        // the sync runs its own runtime, which cannot start inside another: on a tokio
        // runtime's thread it runs on a thread of its own (blocking this one, as opening
        // a folder does)
        if tokio::runtime::Handle::try_current().is_err() {
            return Self::open_database(url);
        }
        let url = url.to_string();
        std::thread::scope(|s| {
            s.spawn(move || Self::open_database(&url))
                .join()
                .unwrap_or_else(|_| {
                    Err(RetrieveError::Task(
                        "opening the database index panicked".into(),
                    ))
                })
        })
    }

    /// [`DocfuseRetriever::open`] for a database URL.
    fn open_database(url: &str) -> Result<Self, RetrieveError> {
        use crate::pgstore::{follow, open_reader, Followed, PgLocation};
        let loc = PgLocation::parse(url)?;
        let r = open_reader(&loc)?;
        if let Some(first) = &r.copy {
            tracing::warn!(
                "{first}; answering from this host's copy of generation {}",
                r.cache.generation
            );
        }
        let shown = loc.shown.clone();
        follow(loc, r.vectors, move |seen| match seen {
            Followed::Failing(e) => tracing::warn!("{e}; answering from this host's copy"),
            seen => tracing::info!("`{shown}`: {seen:?}"),
        })?;
        Ok(Self::new(DocIndex::open(&r.cache.index_dir)?))
    }

    /// Why the served index is no longer on disk (its folder deleted or moved), if so
    /// ([`crate::read::index_gone`]).
    pub fn index_gone(&self) -> Option<String> {
        crate::read::index_gone(&self.inner().index)
    }

    /// The index generation served now (a later refresh may publish another).
    pub fn index(&self) -> Arc<DocIndex> {
        self.inner().index.clone()
    }

    /// Searches without blocking the executor: the documents plus the mode that answered.
    ///
    /// # Errors
    /// See [`DocfuseRetriever::search_blocking`].
    pub async fn search(
        &self,
        query: &str,
        options: &RetrieveOptions,
    ) -> Result<Retrieval, RetrieveError> {
        let (query, options) = (query.to_string(), options.clone());
        // The query's vector first, holding an embedding permit only: a search permit
        // (one per core) is taken once the vector is ready and handed to the search, so
        // lexical searches never queue behind an embedding.
        let prepared = if super::search::may_embed(&self.inner().index, &query, &options) {
            let (q, o) = (query.clone(), options.clone());
            let p = self.run_blocking(Lane::Embed, move |inner| {
                Ok(super::search::prepare(inner, &q, &o))
            });
            Some(p.await?)
        } else {
            None
        };
        self.run_blocking(Lane::Search, move |inner| {
            super::search::search(inner, &query, &options, prepared.as_ref())
        })
        .await
    }

    /// Searches on the calling thread (CPU-bound: do not call it on an async executor).
    ///
    /// # Errors
    /// [`RetrieveError::InvalidRequest`] for a bad floor or glob;
    /// [`RetrieveError::Engine`] when the index cannot be read, or for an explicit
    /// `vector`/`hybrid` mode when the vector side is not usable.
    pub fn search_blocking(
        &self,
        query: &str,
        options: &RetrieveOptions,
    ) -> Result<Retrieval, RetrieveError> {
        super::search::search(&self.inner(), query, options, None)
    }

    /// Reads a passage from an indexed file, confined to the indexed roots (see
    /// [`PassageRequest`]).
    ///
    /// # Errors
    /// [`RetrieveError::Refused`] for a path that leaves the roots;
    /// [`RetrieveError::NotFound`] for a file that is not indexed or an unknown id;
    /// [`RetrieveError::InvalidRequest`] for a bad line range.
    pub async fn read_passage(&self, request: &PassageRequest) -> Result<Passage, RetrieveError> {
        self.read_passage_page(request, super::MAX_PASSAGE_BYTES)
            .await
    }

    /// [`DocfuseRetriever::read_passage`] with at most `max_bytes` of text per page (pages
    /// end on a line; [`Passage::next_start_line`] reads the next one).
    ///
    /// # Errors
    /// As [`DocfuseRetriever::read_passage`].
    pub async fn read_passage_page(
        &self,
        request: &PassageRequest,
        max_bytes: usize,
    ) -> Result<Passage, RetrieveError> {
        let request = request.clone();
        self.run_blocking(Lane::Read, move |inner| {
            passage::read(inner, &request, max_bytes)
        })
        .await
    }

    /// [`DocfuseRetriever::read_passage`] on the calling thread.
    ///
    /// # Errors
    /// As [`DocfuseRetriever::read_passage`].
    pub fn read_passage_blocking(
        &self,
        request: &PassageRequest,
    ) -> Result<Passage, RetrieveError> {
        passage::read(&self.inner(), request, super::MAX_PASSAGE_BYTES)
    }

    /// [`DocfuseRetriever::read_passage_page`] on the calling thread.
    ///
    /// # Errors
    /// As [`DocfuseRetriever::read_passage`].
    pub fn read_passage_page_blocking(
        &self,
        request: &PassageRequest,
        max_bytes: usize,
    ) -> Result<Passage, RetrieveError> {
        passage::read(&self.inner(), request, max_bytes)
    }

    /// One page of a document's chunks, in file order, their texts totalling at most
    /// `max_bytes` (at least one chunk per page). See [`DocumentRequest`].
    ///
    /// # Errors
    /// [`RetrieveError::Refused`] / [`RetrieveError::InvalidRequest`] for a path outside
    /// the roots or a `from` past the end; [`RetrieveError::NotFound`] for a file that is
    /// not indexed; [`RetrieveError::Engine`] when the index cannot be read.
    pub async fn read_document(
        &self,
        request: &super::DocumentRequest,
        max_bytes: usize,
    ) -> Result<super::Document, RetrieveError> {
        let request = request.clone();
        self.run_blocking(Lane::Read, move |inner| {
            super::document::read(inner, &request, max_bytes)
        })
        .await
    }

    /// The handoff for `target` (a document path, folder, section id, title or alias):
    /// where to start reading, what to read before editing, where to edit, which checks
    /// apply ([`crate::views::handoff_for_entity`]).
    ///
    /// # Errors
    /// [`RetrieveError::NotFound`] naming the closest paths for an unknown target (or an
    /// index without a graph); [`RetrieveError::Engine`] when the index cannot be read.
    pub async fn handoff(
        &self,
        target: &str,
        caveats: bool,
    ) -> Result<super::Handoff, RetrieveError> {
        let target = target.to_string();
        self.run_blocking(Lane::Read, move |inner| {
            crate::views::handoff_for_entity(&inner.index, &target, caveats).map_err(|e| match e {
                crate::Error::NotFound(m) => RetrieveError::NotFound(m),
                e => RetrieveError::Engine(e),
            })
        })
        .await
    }

    /// Freshness against the files on disk (walks the roots), counts and the vector side.
    ///
    /// # Errors
    /// [`RetrieveError::Engine`] when the snapshot is damaged or a root has gone.
    pub async fn status(&self) -> Result<IndexStatus, RetrieveError> {
        self.run_blocking(Lane::Read, |inner| index_status(&inner.index))
            .await
    }

    /// Whether vector and hybrid queries work. Each call embeds one short query; the first
    /// also loads the model (slow: call it once at start-up to keep the first query fast).
    pub async fn vector_health(&self) -> Result<(), String> {
        // One query embedded: the model's query session is created on first use, so a
        // server's first hybrid request would otherwise pay for it.
        let now = self
            .run_blocking(Lane::Read, |inner| {
                let index = &inner.index;
                // (an index without usable vectors loads nothing; vector_usable says why)
                Ok(index
                    .warm_up()
                    .map_err(|e| e.to_string())
                    .and_then(|_| index.vector_usable()))
            })
            .await;
        let Ok(mut last) = self.current.last_health.lock() else {
            return now.unwrap_or_else(|e| Err(e.to_string()));
        };
        match now {
            Ok(health) => {
                *last = Some(health.clone());
                health
            }
            // every read permit busy: the last health seen, not "down"
            Err(e @ RetrieveError::Overloaded { .. }) => last.clone().unwrap_or(Err(e.to_string())),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Runs `f` on the blocking pool (or a thread of its own outside a tokio runtime)
    /// once it holds a permit of `lane`, kept until `f` returns even if the caller stops
    /// waiting. Reads (I/O-bound) do not queue behind searches (CPU-bound).
    async fn run_blocking<T: Send + 'static>(
        &self,
        lane: Lane,
        f: impl FnOnce(&Inner) -> Result<T, RetrieveError> + Send + 'static,
    ) -> Result<T, RetrieveError> {
        let permit = self.permit(lane).await?;
        let inner = self.inner();
        let job = move || {
            let out = f(&inner);
            drop(permit);
            out
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => rt
                .spawn_blocking(job)
                .await
                .map_err(|e| RetrieveError::Task(e.to_string()))?,
            Err(_) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                std::thread::spawn(move || {
                    let _ = tx.send(job());
                });
                rx.await.map_err(|e| RetrieveError::Task(e.to_string()))?
            }
        }
    }
}

/// Which permits a blocking job takes: searches (one per core) or reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    Search,
    Read,
    /// Embedding a query ahead of its search (one per core).
    Embed,
}

/// A place in the wait queue, given back when dropped (the search got its permit, or
/// its caller stopped waiting; a refused search never holds one).
struct QueuePlace<'a>(&'a AtomicUsize);

impl Drop for QueuePlace<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Retriever for DocfuseRetriever {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        Box::pin(async move { Ok(self.search(query, options).await?.documents) })
    }

    fn name(&self) -> &str {
        "docfuse"
    }
}

fn index_status(index: &DocIndex) -> Result<IndexStatus, RetrieveError> {
    let m = index.manifest();
    let usable = index.vector_usable();
    let s = status_now(index)?;
    let embedder = s.embedder.clone();
    let roots = match &m.source {
        SourceSpec::Roots { roots } => roots.clone(),
        SourceSpec::Jsonl { .. } => Vec::new(),
    };
    Ok(IndexStatus {
        status: s,
        index_dir: index.dir().display().to_string(),
        roots,
        vectors: match index.remote_vectors() {
            Some(r) => VectorsReport {
                present: r.counts().0 > 0,
                model: embedder.as_ref().map(|e| e.model.clone()),
                dim: embedder.as_ref().map(|e| e.dim),
                embedded: r.counts().0,
                pending: r.counts().1,
                usable: usable.is_ok(),
                reason: usable.err(),
                store: Some(r.describe()),
            },
            None => VectorsReport {
                present: m.vectors.is_some(),
                model: m.vectors.as_ref().map(|v| v.model.clone()),
                dim: m.vectors.as_ref().map(|v| v.dim),
                embedded: m.vectors.as_ref().map_or(0, |v| v.embedded),
                pending: m.vectors.as_ref().map_or(0, |v| v.pending),
                usable: usable.is_ok(),
                reason: usable.err(),
                store: None,
            },
        },
        list_counts: Default::default(),
    })
}
