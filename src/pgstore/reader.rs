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
        Err(Error::Database(why)) if why.starts_with(super::UNREACHABLE) => {
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

/// The vector side of one database opened in this process.
struct Held {
    vectors: Arc<PgVectors>,
    /// The location it was opened with (a follower syncs with the latest).
    loc: PgLocation,
    /// A follower thread runs for it.
    following: bool,
}

/// The vector side of each database opened in this process, by cache key: a second open
/// (the library's retriever opened again) takes the same store and follower instead of
/// starting others — unless it connects another way (another password, `sslmode` or
/// root certificate), which gets a store of its own that the follower then uses.
fn held() -> &'static Mutex<HashMap<String, Held>> {
    static HELD: OnceLock<Mutex<HashMap<String, Held>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// The store attached to `cache`'s folder: this process's earlier one brought to this
/// sync's state, or a new one.
fn attached(loc: &PgLocation, cache: &ReaderCache) -> Arc<PgVectors> {
    let mut m = held().lock().unwrap_or_else(|e| e.into_inner());
    let fresh = || Arc::new(PgVectors::new(loc.clone(), cache));
    let h = m.entry(loc.cache_key()).or_insert_with(|| Held {
        vectors: fresh(),
        loc: loc.clone(),
        following: false,
    });
    if h.loc.fingerprint == loc.fingerprint {
        h.vectors.update(cache);
    } else {
        h.vectors = fresh();
        h.loc = loc.clone();
    }
    crate::read::attach(&cache.index_dir, h.vectors.clone());
    h.vectors.clone()
}

/// The location and store a follower of `key` uses now.
fn current(key: &str) -> Option<(PgLocation, Arc<PgVectors>)> {
    let m = held().lock().unwrap_or_else(|e| e.into_inner());
    m.get(key).map(|h| (h.loc.clone(), h.vectors.clone()))
}

/// Marks the follower of `key` stopped when dropped (its thread ended, even by a panic),
/// so that the next open starts another.
struct Following(String);

impl Drop for Following {
    fn drop(&mut self) {
        let mut m = held().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = m.get_mut(&self.0) {
            h.following = false;
        }
    }
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
/// the database published again and hands the attached store the new state, for as long
/// as the process runs. Readers that follow the cache folder's manifest (servers, the
/// library's retriever) then switch between requests. One follower per database in a
/// process: when one runs already, nothing is started (false).
///
/// # Errors
/// [`Error::Io`] when the thread cannot be started.
pub fn follow(
    loc: PgLocation,
    vectors: Arc<PgVectors>,
    mut report: impl FnMut(Followed) + Send + 'static,
) -> Result<bool> {
    let key = loc.cache_key();
    {
        let mut m = held().lock().unwrap_or_else(|e| e.into_inner());
        let h = m.entry(key.clone()).or_insert_with(|| Held {
            vectors,
            loc: loc.clone(),
            following: false,
        });
        if std::mem::replace(&mut h.following, true) {
            return Ok(false);
        }
    }
    let every = poll_interval();
    let guard = Following(key.clone());
    let started = std::thread::Builder::new()
        .name("docfuse-pg-follow".into())
        .spawn(move || {
            let _guard = guard;
            let mut failing = false;
            loop {
                std::thread::sleep(every);
                let Some((loc, vectors)) = current(&key) else {
                    return;
                };
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
    // a thread that could not start dropped its guard: the flag is cleared
    started.map_err(|e| Error::io("start the follower thread for", loc.shown.as_str(), e))?;
    Ok(true)
}
