//! A reader of a database index in this process — what the CLI, the servers and the
//! library ([`crate::retriever::DocfuseRetriever::open`]) open for `postgres://…`: this
//! host's cache folder synced to the published generation (or, while the database cannot
//! be reached, the copy this host has), with the database attached as its vector side;
//! optionally a thread that follows later publishes.

use super::{cached_reader, sync_reader, PgLocation, PgVectors, ReaderCache};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Default milliseconds between a follower's checks of the database's published
/// generation (`DOCFUSE_PG_POLL_MS` overrides).
pub const POLL_MS: u64 = 2_000;

/// A reader opened on a database index.
pub struct OpenedReader {
    /// The synced (or, see `copy`, last synced) cache: open `cache.index_dir`.
    pub cache: ReaderCache,
    /// The database as the cache folder's vector side, attached in this process.
    pub vectors: Arc<PgVectors>,
    /// Set when the database could not be reached and the cache is this host's copy:
    /// the first line of the connection error.
    pub copy: Option<String>,
}

/// Syncs this host's reader cache of `loc` to the published generation and attaches the
/// database as its vector side (every `DocIndex` opened on `cache.index_dir` in this
/// process, later generations included, searches vectors in the database).
///
/// # Errors
/// [`Error::Database`]: no index in the database, a refused login, an unverified TLS
/// certificate, an unknown schema version — or the database cannot be reached and this
/// host has no copy; a build error of the cache folder.
pub fn open_reader(loc: &PgLocation) -> Result<OpenedReader> {
    let (cache, copy) = match sync_reader(loc) {
        Ok(c) => (c, None),
        Err(Error::Database(why)) if why.starts_with("cannot connect") => {
            let Some(c) = cached_reader(loc) else {
                return Err(Error::Database(why));
            };
            let first = why.lines().next().unwrap_or_default().to_string();
            (c, Some(first))
        }
        Err(e) => Err(e)?,
    };
    let vectors = attached(loc, &cache);
    Ok(OpenedReader {
        cache,
        vectors,
        copy,
    })
}

/// See [`held`].
type Held = HashMap<String, (Arc<PgVectors>, bool)>;

/// The vector side of each database opened in this process, by cache key, and whether a
/// follower runs for it: a second open (the library's retriever opened again) takes the
/// same store and follower instead of starting others.
fn held() -> &'static Mutex<Held> {
    static HELD: OnceLock<Mutex<Held>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// The store attached to `cache`'s folder: this process's earlier one brought to this
/// sync's state, or a new one.
fn attached(loc: &PgLocation, cache: &ReaderCache) -> Arc<PgVectors> {
    let mut m = held().lock().unwrap_or_else(|e| e.into_inner());
    let (vectors, _) = m
        .entry(loc.cache_key())
        .and_modify(|(v, _)| v.update(cache))
        .or_insert_with(|| (Arc::new(PgVectors::new(loc.clone(), cache)), false));
    crate::engine::attach(&cache.index_dir, vectors.clone());
    vectors.clone()
}

/// What a follower saw (for the caller to report).
#[derive(Debug, Clone, PartialEq)]
pub enum Followed {
    /// The cache moved to a newer published generation.
    Serving { generation: i64, written: u64 },
    /// The database answered again after a failure.
    Reachable,
    /// The first failure of a run of failures (the later ones are not reported).
    Failing(String),
}

/// Milliseconds between a follower's checks: `DOCFUSE_PG_POLL_MS`, else [`POLL_MS`].
pub fn poll_interval() -> Duration {
    let ms = std::env::var("DOCFUSE_PG_POLL_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&ms: &u64| ms > 0)
        .unwrap_or(POLL_MS);
    Duration::from_millis(ms)
}

/// Starts a thread that, every [`poll_interval`], syncs the reader cache of `loc` when
/// the database published again and hands `vectors` the new state, for as long as the
/// process runs. Readers that follow the cache folder's manifest (servers, the library's
/// retriever) then switch between requests. One follower per database in a process: when
/// one runs already, nothing is started (false).
///
/// # Errors
/// [`Error::Io`] when the thread cannot be started.
pub fn follow(
    loc: PgLocation,
    vectors: Arc<PgVectors>,
    mut report: impl FnMut(Followed) + Send + 'static,
) -> Result<bool> {
    {
        let mut m = held().lock().unwrap_or_else(|e| e.into_inner());
        let entry = m.entry(loc.cache_key()).or_insert((vectors.clone(), false));
        if std::mem::replace(&mut entry.1, true) {
            return Ok(false);
        }
    }
    let every = poll_interval();
    let (key, shown) = (loc.cache_key(), loc.shown.clone());
    let started = std::thread::Builder::new()
        .name("docfuse-pg-follow".into())
        .spawn(move || {
            let mut failing = false;
            loop {
                std::thread::sleep(every);
                match sync_reader(&loc) {
                    Ok(c) => {
                        // the generation, embedder and counts the vector side answers for
                        vectors.update(&c);
                        if std::mem::take(&mut failing) {
                            report(Followed::Reachable);
                        }
                        if c.written > 0 {
                            report(Followed::Serving {
                                generation: c.generation,
                                written: c.written,
                            });
                        }
                    }
                    Err(e) if !failing => {
                        report(Followed::Failing(e.to_string()));
                        failing = true;
                    }
                    Err(_) => {}
                }
            }
        });
    if let Err(e) = started {
        if let Some(entry) = held()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&key)
        {
            entry.1 = false;
        }
        return Err(Error::io("start the follower thread for", shown, e));
    }
    Ok(true)
}
