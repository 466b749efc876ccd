//! The vector side of a database index, answered by PostgreSQL: `ORDER BY embedding <=>
//! $1 LIMIT k` over pgvector's HNSW index (`hnsw.ef_search` set on the connection
//! before it), the cosines of the lexical candidates by embedding hash, and the query's
//! cosine statistics from the moments the writer published. A reader's cache holds no
//! vectors: each chunk of its generation is matched to the database's row by (root,
//! path, place) and content hash, once per (cache generation, database generation).

use super::{connect, db_err, PgLocation, ReaderCache};
use crate::error::{Error, Result};
use crate::generation::chunk_keys;
use crate::read::{EmbedderInfo, OpenGeneration, RemoteAnswer, RemoteVectors};
use crate::vector::Moments;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

/// Default connections a reader keeps to the database for vector queries
/// (`DOCFUSE_PG_POOL` overrides, 1–64).
pub const POOL_SIZE: usize = 4;

/// Default milliseconds a vector query may take (`DOCFUSE_PG_VECTOR_TIMEOUT_MS`
/// overrides); past it the query is cancelled and its connection dropped.
const QUERY_TIMEOUT_MS: u64 = 5_000;

/// After a failure, vector search is off for this long; then one search tries the
/// database again while the others go on without it.
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// Longest wait of a health check ([`RemoteVectors::health`]).
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// pgvector's largest `hnsw.ef_search`; HNSW returns at most that many rows, so a
/// deeper search is an exact scan.
const EF_SEARCH_MAX: usize = 1000;

/// A generation's chunks matched to the database's vectors.
struct Layout {
    /// (cache manifest seal, database epoch, database generation) it was made for.
    key: (String, String, i64),
    /// Identity key of the published vectors (`None`: the index has none).
    identity_key: Option<String>,
    /// The chunk ordinals holding each embedding hash.
    ords: HashMap<String, Vec<u64>>,
    /// Each ordinal's embedding hash (`None`: no vector in the database).
    hashes: Vec<Option<String>>,
    /// The tail-window hashes of the ordinals that have some (also in `ords`).
    tails: HashMap<u64, Vec<String>>,
    moments: Moments,
}

/// What the last sync of the cache said.
#[derive(Clone)]
struct Synced {
    embedder: Option<EmbedderInfo>,
    counts: (u64, u64),
    epoch: String,
    generation: i64,
    /// The seal of the cache folder's manifest that holds `generation`.
    seal: Option<String>,
}

/// A pooled connection and the `hnsw.ef_search` it has set.
struct Conn {
    client: Client,
    ef_search: Option<usize>,
}

/// PostgreSQL + pgvector as the vector side of a reader's cache folder
/// ([`crate::read::attach`]). Makes its runtime and connections on the first query.
pub struct PgVectors {
    loc: PgLocation,
    rt: OnceLock<std::result::Result<tokio::runtime::Runtime, String>>,
    pool: Vec<tokio::sync::Mutex<Option<Conn>>>,
    next: AtomicUsize,
    synced: Mutex<Synced>,
    layout: Mutex<Option<Arc<Layout>>>,
    /// Held while a layout is read, so concurrent searches read it once.
    loading: Mutex<()>,
    /// The last failure and until when vector search is off.
    down: Mutex<Option<(Instant, String)>>,
    /// True while one search tries the database again after a failure.
    probing: AtomicBool,
}

impl PgVectors {
    /// The vector side of `loc` for the cache `cache` (its embedder, counts, epoch and
    /// generation; [`PgVectors::update`] records later syncs).
    pub fn new(loc: PgLocation, cache: &ReaderCache) -> PgVectors {
        PgVectors {
            loc,
            rt: OnceLock::new(),
            pool: (0..pool_size())
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            next: AtomicUsize::new(0),
            synced: Mutex::new(synced_of(cache)),
            layout: Mutex::new(None),
            loading: Mutex::new(()),
            down: Mutex::new(None),
            probing: AtomicBool::new(false),
        }
    }

    /// Records a later sync of the cache: the generation it holds, its embedder (vectors
    /// of another embedder, or none, from now on) and counts.
    pub fn update(&self, cache: &ReaderCache) {
        if let Ok(mut s) = self.synced.lock() {
            *s = synced_of(cache);
        }
    }

    fn synced(&self) -> Option<Synced> {
        self.synced.lock().ok().map(|s| s.clone())
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime> {
        self.rt
            .get_or_init(|| {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("docfuse-pg")
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start a runtime for PostgreSQL: {e}"))
            })
            .as_ref()
            .map_err(|e| Error::Database(e.clone()))
    }

    /// Runs `f` with a connection of the pool (a free one, else the next in turn once
    /// it is free; made when missing). A connection whose use failed is cancelled and
    /// dropped, so no half-done transaction or running query is handed to the next.
    fn with_conn<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let rt = self.runtime()?;
        let n = self.pool.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let limit = query_timeout();
        let mut guard = match (0..n).find_map(|i| self.pool[(start + i) % n].try_lock().ok()) {
            Some(g) => g,
            None => rt
                .block_on(async { tokio::time::timeout(limit, self.pool[start].lock()).await })
                .map_err(|_| {
                    Error::Database(format!(
                        "every connection to `{}` stayed busy for {} ms",
                        self.loc.shown,
                        limit.as_millis()
                    ))
                })?,
        };
        // the database failed while this search waited: do not try it again here
        if let Some(why) = self.backing_off() {
            return Err(Error::Database(why));
        }
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            *guard = None;
            // bounded like a query: a search waits no longer for a connection
            let client = rt
                .block_on(async { tokio::time::timeout(limit, connect(&self.loc)).await })
                .map_err(|_| {
                    Error::Database(format!(
                        "cannot connect to `{}`: no answer within {} ms (DOCFUSE_PG_VECTOR_TIMEOUT_MS)",
                        self.loc.shown,
                        limit.as_millis()
                    ))
                })??;
            *guard = Some(Conn {
                client,
                ef_search: None,
            });
        }
        let Some(conn) = guard.as_mut() else {
            return Err(Error::Database("no connection".into()));
        };
        let out = f(conn);
        if out.is_err() {
            if let Some(conn) = guard.take() {
                let token = conn.client.cancel_token();
                let loc = self.loc.clone();
                rt.spawn(async move {
                    if let Ok(tls) = super::tls::connector(&loc.tls) {
                        let _ = token.cancel_query(tls).await;
                    }
                });
            }
        }
        out
    }

    /// The layout of `index`'s generation: kept, or read from the database (once for
    /// concurrent searches).
    fn layout(
        &self,
        index: &OpenGeneration,
        conn: &mut Conn,
        synced: &Synced,
    ) -> Result<Arc<Layout>> {
        let key = (
            index.manifest().seal.clone(),
            synced.epoch.clone(),
            synced.generation,
        );
        let kept = || {
            self.layout
                .lock()
                .ok()
                .and_then(|l| l.clone())
                .filter(|l| l.key == key)
        };
        if let Some(l) = kept() {
            return Ok(l);
        }
        let _one = self.loading.lock();
        if let Some(l) = kept() {
            return Ok(l);
        }
        let rt = self.runtime()?;
        let rows = rt.block_on(async {
            tokio::time::timeout(
                super::cache::read_limit(),
                read_layout(&mut conn.client, &self.loc),
            )
            .await
            .map_err(|_| {
                Error::Database(format!("no answer from `{}` to a read", self.loc.shown))
            })?
        })?;
        let layout = Arc::new(match_layout(index, rows, key)?);
        if let Ok(mut slot) = self.layout.lock() {
            *slot = Some(layout.clone());
        }
        Ok(layout)
    }

    fn answer(
        &self,
        index: &OpenGeneration,
        query: &[f32],
        identity_key: &str,
        (k, ef_search): (usize, usize),
        also: &[u64],
    ) -> std::result::Result<RemoteAnswer, Failure> {
        let synced = self
            .synced()
            .ok_or_else(|| Failure::Other("the store's state is unreadable".into()))?;
        let rt = self.runtime().map_err(Failure::Database)?;
        let mut other = None;
        let out = self.with_conn(|conn| {
            let layout = self.layout(index, conn, &synced)?;
            if layout.identity_key.as_deref() != Some(identity_key) {
                other = Some(format!(
                    "the database's vectors now come from another embedder ({}…) than the query's ({}…); they follow the next sync",
                    short(layout.identity_key.as_deref().unwrap_or("none")),
                    short(identity_key)
                ));
                return Ok(None);
            }
            if layout.moments.dim != query.len() {
                other = Some(format!(
                    "the database's vector moments have dimension {}, the query {}",
                    layout.moments.dim,
                    query.len()
                ));
                return Ok(None);
            }
            let wanted: Vec<String> = also
                .iter()
                .filter_map(|&o| layout.hashes.get(o as usize).cloned().flatten())
                .chain(also.iter().flat_map(|o| layout.tails.get(o).into_iter().flatten().cloned()))
                .collect();
            let q = pgvector::Vector::from(query.to_vec());
            let limit = query_timeout();
            // as the folder store: exact below the HNSW threshold, the graph above it
            let exact = layout.moments.n < index.manifest().config.hnsw_min_vectors as u64;
            // a chunk's tail windows can take several of the nearest rows: rows are asked
            // for until `k` distinct chunks are found (doubling, at most 4 rounds)
            let mut rows = match layout.tails.is_empty() {
                true => k,
                false => k.saturating_mul(2),
            };
            let mut rounds = 0;
            loop {
                let how = (rows, ef_search, exact);
                let (top, known) = rt.block_on(async {
                    tokio::time::timeout(limit, nearest(conn, &self.loc, &q, how, &wanted))
                        .await
                        .map_err(|_| {
                            Error::Database(format!(
                                "no answer from `{}` to a vector query within {} ms (DOCFUSE_PG_VECTOR_TIMEOUT_MS)",
                                self.loc.shown,
                                limit.as_millis()
                            ))
                        })?
                })?;
                let full = top.len() >= rows;
                let answer = to_answer(&layout, query, top, known, k);
                rounds += 1;
                if answer.top.len() >= k || !full || rounds == 4 {
                    return Ok(Some(answer));
                }
                rows = rows.saturating_mul(2);
            }
        });
        match (out, other) {
            (Ok(Some(a)), _) => Ok(a),
            (Ok(None), Some(why)) => Err(Failure::Other(why)),
            (Ok(None), None) => Err(Failure::Other("no answer".into())),
            (Err(e), _) => Err(Failure::Database(e)),
        }
    }

    /// Whether vector search is off after a failure: the reason while it is, `None`
    /// once it may be tried again.
    fn backing_off(&self) -> Option<String> {
        let down = self.down.lock().ok()?.clone()?;
        (Instant::now() < down.0).then_some(down.1)
    }

    fn record(&self, failure: Option<&str>) {
        if let Ok(mut d) = self.down.lock() {
            *d = failure.map(|why| (Instant::now() + RETRY_AFTER, why.to_string()));
        }
    }

    /// The reason of the last failure (while another search tries the database again).
    fn last_failure(&self) -> String {
        self.down
            .lock()
            .ok()
            .and_then(|d| d.as_ref().map(|(_, why)| why.clone()))
            .unwrap_or_else(|| "the database is being tried again".into())
    }

    /// Clears a failure recorded before `started` (a search that began after a newer
    /// failure does not clear it).
    fn recovered(&self, started: Instant) {
        if let Ok(mut d) = self.down.lock() {
            if d.as_ref()
                .is_some_and(|(until, _)| *until - RETRY_AFTER <= started)
            {
                *d = None;
            }
        }
    }
}

/// Clears the probing flag when dropped.
struct Probing<'a>(&'a AtomicBool);

impl Drop for Probing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Why a vector query failed: the database (vector search is off for a while), or
/// something of this generation (that query only).
enum Failure {
    Database(Error),
    Other(String),
}

impl RemoteVectors for PgVectors {
    fn embedder(&self) -> std::result::Result<EmbedderInfo, String> {
        if let Some(why) = self.backing_off() {
            return Err(why);
        }
        self.synced()
            .and_then(|s| s.embedder)
            .ok_or_else(|| "the index in the database has no vectors (its writer ran with --no-embeddings or without the model)".to_string())
    }

    fn search(
        &self,
        index: &OpenGeneration,
        query: &[f32],
        identity_key: &str,
        k: usize,
        ef_search: usize,
        also: &[u64],
    ) -> std::result::Result<RemoteAnswer, String> {
        if let Some(why) = self.backing_off() {
            return Err(why);
        }
        // after a failure, one search tries the database again; the others go on
        // without it meanwhile
        let after_failure = self.down.lock().is_ok_and(|d| d.is_some());
        if after_failure && self.probing.swap(true, Ordering::SeqCst) {
            return Err(self.last_failure());
        }
        // cleared however the probe ends (an error, a panic)
        let _probe = after_failure.then(|| Probing(&self.probing));
        let started = Instant::now();
        let out = self.answer(index, query, identity_key, (k, ef_search), also);
        match out {
            Ok(a) => {
                self.recovered(started);
                Ok(a)
            }
            Err(Failure::Other(why)) => Err(why),
            Err(Failure::Database(e)) => {
                let why = unavailable(&e);
                tracing::warn!("{why}");
                self.record(Some(&why));
                Err(why)
            }
        }
    }

    fn counts(&self) -> (u64, u64) {
        self.synced().map_or((0, 0), |s| s.counts)
    }

    fn generation(&self) -> u64 {
        self.synced().map_or(0, |s| s.generation.max(0) as u64)
    }

    fn generation_of(&self, seal: &str) -> Option<u64> {
        self.synced()
            .filter(|s| s.seal.as_deref() == Some(seal))
            .map(|s| s.generation.max(0) as u64)
    }

    fn has_vectors(&self) -> bool {
        self.synced().is_some_and(|s| s.embedder.is_some())
    }

    fn health(&self) -> std::result::Result<(), String> {
        if let Some(why) = self.backing_off() {
            return Err(why);
        }
        if self.probing.load(Ordering::SeqCst) {
            return Err(self.last_failure());
        }
        let rt = self.runtime().map_err(|e| e.to_string())?;
        let limit = HEALTH_TIMEOUT.min(query_timeout());
        let out = self.with_conn(|conn| {
            rt.block_on(async {
                tokio::time::timeout(limit, conn.client.simple_query("SELECT 1")).await
            })
            .map_err(|_| {
                Error::Database(format!(
                    "no answer from `{}` within {} ms",
                    self.loc.shown,
                    limit.as_millis()
                ))
            })?
            .map_err(|e| db_err(&self.loc, "cannot ask the database", e))?;
            Ok(())
        });
        out.map_err(|e| {
            let why = unavailable(&e);
            self.record(Some(&why));
            why
        })
    }

    fn describe(&self) -> String {
        format!(
            "PostgreSQL `{}` (schema `{}`)",
            self.loc.shown, self.loc.schema
        )
    }
}

impl Drop for PgVectors {
    fn drop(&mut self) {
        // dropped anywhere, also inside another runtime: never block there
        if let Some(Ok(rt)) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The reason vector search is off after `e`.
fn unavailable(e: &Error) -> String {
    format!(
        "the vectors in the database cannot be searched now ({e}); tried again in {} s",
        RETRY_AFTER.as_secs()
    )
}

fn synced_of(c: &ReaderCache) -> Synced {
    Synced {
        embedder: c.embedder.clone(),
        counts: c.vectors,
        epoch: c.epoch.clone(),
        generation: c.generation,
        seal: c.seal.clone(),
    }
}

fn short(key: &str) -> &str {
    &key[..12.min(key.len())]
}

fn pool_size() -> usize {
    std::env::var("DOCFUSE_PG_POOL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &usize| (1..=64).contains(n))
        .unwrap_or(POOL_SIZE)
}

fn query_timeout() -> Duration {
    let ms = std::env::var("DOCFUSE_PG_VECTOR_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&ms: &u64| ms > 0)
        .unwrap_or(QUERY_TIMEOUT_MS);
    Duration::from_millis(ms)
}

/// What the database says of the published generation's chunks: roots in order,
/// (root, path, seq) → (content hash, embedding hash, tail-window hashes), the vectors'
/// identity key and moments.
type ChunkRow = (String, Option<String>, Option<Vec<String>>);

struct Rows {
    roots: Vec<String>,
    chunks: HashMap<(String, String, i32), ChunkRow>,
    identity_key: Option<String>,
    moments: Option<Vec<u8>>,
}

async fn read_layout(client: &mut Client, loc: &PgLocation) -> Result<Rows> {
    // one snapshot, so the moments, identity and chunks are of one generation
    let tx = super::read::snapshot(client, loc).await?;
    let roots = super::read::roots(&tx, loc).await?;
    let chunks = tx
        .query(
            &format!(
                "SELECT root, path, seq, content_hash, embed_hash, tail_hashes FROM {}",
                loc.table("chunks")
            ),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the chunks", e))?;
    let published = tx
        .query_opt(
            &format!("SELECT identity, moments FROM {}", loc.table("published")),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the published generation", e))?;
    tx.commit()
        .await
        .map_err(|e| db_err(loc, "cannot end a read", e))?;
    let (identity, moments): (Option<serde_json::Value>, Option<Vec<u8>>) =
        published.map_or((None, None), |r| (r.get(0), r.get(1)));
    let identity_key = identity
        .map(serde_json::from_value::<crate::embed::EmbedderIdentity>)
        .transpose()
        .map_err(|e| {
            Error::Database(format!(
                "the published embedder identity does not parse: {e}"
            ))
        })?
        .map(|id| id.key());
    Ok(Rows {
        roots,
        chunks: chunks
            .iter()
            .map(|r| {
                (
                    (r.get(0), r.get(1), r.get(2)),
                    (r.get(3), r.get(4), r.get(5)),
                )
            })
            .collect(),
        identity_key,
        moments,
    })
}

/// Matches each chunk of `index` to its database row: the same root, path and place,
/// and the same content hash (a chunk the database has since changed gets no vector).
fn match_layout(index: &OpenGeneration, rows: Rows, key: (String, String, i64)) -> Result<Layout> {
    let moments = rows
        .moments
        .ok_or_else(|| Error::Database("the database holds no vector moments yet: run `docfuse refresh --index URL` once to publish them".into()))
        .and_then(|b| Moments::from_bytes(&b).map_err(Error::Database))?;
    let keys = chunk_keys(index.dir(), &index.generation_dir(), index.snapshot_ref()?)?;
    let mut ords: HashMap<String, Vec<u64>> = HashMap::new();
    let mut hashes = Vec::with_capacity(keys.len());
    let mut tails = HashMap::new();
    for (ord, k) in keys.iter().enumerate() {
        let root = rows.roots.get(k.root).cloned().unwrap_or_default();
        let row = rows
            .chunks
            .get(&(root, k.rel_path.clone(), k.seq as i32))
            .filter(|(content, e, _)| *content == k.content_hash && e.is_some());
        let hash = row.and_then(|(_, e, _)| e.clone());
        let windows = row.and_then(|(_, _, t)| t.clone()).unwrap_or_default();
        for h in hash.iter().chain(&windows) {
            ords.entry(h.clone()).or_default().push(ord as u64);
        }
        if !windows.is_empty() {
            tails.insert(ord as u64, windows);
        }
        hashes.push(hash);
    }
    Ok(Layout {
        key,
        identity_key: rows.identity_key,
        ords,
        hashes,
        tails,
        moments,
    })
}

/// The `k` nearest embedding hashes with their cosine distance, and the distances of
/// the hashes `wanted`. `hnsw.ef_search` is set first (awaited) when the connection
/// has another value; deeper than pgvector allows, the nearest are found by an exact
/// scan (an ordering the HNSW index cannot serve).
async fn nearest(
    conn: &mut Conn,
    loc: &PgLocation,
    q: &pgvector::Vector,
    (k, ef_search, exact): (usize, usize, bool),
    wanted: &[String],
) -> Result<(Vec<(String, f64)>, Vec<(String, f64)>)> {
    let table = loc.table("vectors");
    let exact = exact || k > EF_SEARCH_MAX;
    let ef = ef_search.clamp(k.min(EF_SEARCH_MAX), EF_SEARCH_MAX);
    if !exact && conn.ef_search != Some(ef) {
        // the HNSW index even where the planner would scan a small table (2,500 vectors:
        // 1.0 ms against 2.6 ms, measured); an exact scan is still made when asked
        conn.client
            .query(
                "SELECT set_config('hnsw.ef_search', $1, false), set_config('enable_seqscan', 'off', false)",
                &[&ef.to_string()],
            )
            .await
            .map_err(|e| db_err(loc, "cannot set hnsw.ef_search", e))?;
        conn.ef_search = Some(ef);
    }
    let order = if exact {
        "(embedding <=> $1) + 0"
    } else {
        "embedding <=> $1"
    };
    let top_sql =
        format!("SELECT embed_hash, embedding <=> $1 FROM {table} ORDER BY {order} LIMIT $2");
    let also_sql =
        format!("SELECT embed_hash, embedding <=> $1 FROM {table} WHERE embed_hash = ANY($2)");
    let limit = k as i64;
    let top_params: [&(dyn ToSql + Sync); 2] = [q, &limit];
    let also_params: [&(dyn ToSql + Sync); 2] = [q, &wanted];
    // two reads, pipelined: their order does not matter
    let top = conn.client.query(&top_sql, &top_params);
    let also = conn.client.query(&also_sql, &also_params);
    let (top, also) =
        tokio::try_join!(top, also).map_err(|e| db_err(loc, "cannot search the vectors", e))?;
    let pairs = |rows: Vec<tokio_postgres::Row>| -> Vec<(String, f64)> {
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    };
    Ok((pairs(top), pairs(also)))
}

/// The database's answer in chunk ordinals: each hash's chunks (a text indexed twice
/// holds one vector; a tail window's hash names its chunk), best first with ties by
/// ordinal, cut at `k`; a chunk's cosine (1 − distance) is its best row's.
fn to_answer(
    layout: &Layout,
    query: &[f32],
    top: Vec<(String, f64)>,
    known: Vec<(String, f64)>,
    k: usize,
) -> RemoteAnswer {
    let mut cosines = HashMap::new();
    let best = |cosines: &mut HashMap<u64, f32>, hash: &str, distance: f64| {
        for &ord in layout.ords.get(hash).into_iter().flatten() {
            let c = (1.0 - distance) as f32;
            let at = cosines.entry(ord).or_insert(c);
            *at = at.max(c);
        }
    };
    for (hash, distance) in top {
        best(&mut cosines, &hash, distance);
    }
    let nearest: Vec<u64> = cosines.keys().copied().collect();
    for (hash, distance) in known {
        best(&mut cosines, &hash, distance);
    }
    let mut ranked: Vec<(u64, f32)> = nearest.iter().map(|o| (*o, cosines[o])).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(k);
    RemoteAnswer {
        top: ranked,
        stats: layout.moments.stats(query),
        cosines,
    }
}
