//! The vector side of a database index, answered by PostgreSQL: `ORDER BY embedding <=>
//! $1 LIMIT k` over pgvector's HNSW index (`hnsw.ef_search` set per query), the cosines
//! of the lexical candidates by embedding hash, and the query's cosine statistics from
//! the moments the writer published. A reader's cache holds no vectors: each chunk of
//! its generation is matched to the database's row by (root, path, place) and content
//! hash, once per generation.

use super::{connect, db_err, PgLocation};
use crate::engine::{chunk_keys, DocIndex, EmbedderInfo, RemoteAnswer, RemoteVectors};
use crate::error::{Error, Result};
use crate::vector::Moments;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

/// Default connections a reader keeps to the database for vector queries
/// (`DOCFUSE_PG_POOL` overrides, 1–64).
pub const POOL_SIZE: usize = 4;

/// Default milliseconds a vector query may take before the search answers lexically
/// (`DOCFUSE_PG_VECTOR_TIMEOUT_MS` overrides).
const QUERY_TIMEOUT_MS: u64 = 5_000;

/// After a failure, searches answer lexically at once for this long before the
/// database is asked again (a server whose database is down does not wait per query).
const RETRY_AFTER: Duration = Duration::from_secs(5);

/// A generation's chunks matched to the database's vectors.
struct Layout {
    /// The seal of the cache manifest it was made for.
    seal: String,
    /// The chunk ordinals holding each embedding hash.
    ords: HashMap<String, Vec<u64>>,
    /// Each ordinal's embedding hash (`None`: no vector in the database).
    hashes: Vec<Option<String>>,
    moments: Moments,
}

/// PostgreSQL + pgvector as the vector side of a reader's cache folder
/// ([`crate::engine::attach`]).
pub struct PgVectors {
    loc: PgLocation,
    embedder: EmbedderInfo,
    rt: Option<tokio::runtime::Runtime>,
    pool: Vec<tokio::sync::Mutex<Option<Client>>>,
    next: AtomicUsize,
    layout: Mutex<Option<Arc<Layout>>>,
    /// The last failure and until when searches skip the database.
    down: Mutex<Option<(Instant, String)>>,
    /// Chunks with a vector and pending, as of the last sync.
    counts: Mutex<(u64, u64)>,
}

impl PgVectors {
    /// A vector side for `loc`, whose published vectors come from `embedder`, with
    /// `counts` (chunks with a vector, pending) as the last sync saw them. Connects on
    /// the first query.
    ///
    /// # Errors
    /// [`Error::Database`] when the runtime for the connections cannot be made.
    pub fn new(loc: PgLocation, embedder: EmbedderInfo, counts: (u64, u64)) -> Result<PgVectors> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("docfuse-pg")
            .enable_all()
            .build()
            .map_err(|e| Error::Database(format!("cannot start a runtime for PostgreSQL: {e}")))?;
        let size = pool_size();
        Ok(PgVectors {
            loc,
            embedder,
            rt: Some(rt),
            pool: (0..size).map(|_| tokio::sync::Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
            layout: Mutex::new(None),
            down: Mutex::new(None),
            counts: Mutex::new(counts),
        })
    }

    /// Records the counts of a later sync.
    pub fn set_counts(&self, counts: (u64, u64)) {
        if let Ok(mut c) = self.counts.lock() {
            *c = counts;
        }
    }

    /// The layout of `index`'s generation: kept, or read from the database.
    fn layout(&self, index: &DocIndex, client: &Client) -> Result<Arc<Layout>> {
        let seal = &index.manifest().seal;
        if let Some(l) = self.layout.lock().ok().and_then(|l| l.clone()) {
            if &l.seal == seal {
                return Ok(l);
            }
        }
        let rt = self.runtime()?;
        let rows = rt.block_on(async {
            tokio::time::timeout(super::cache::read_limit(), read_layout(client, &self.loc))
                .await
                .map_err(|_| {
                    Error::Database(format!("no answer from `{}` to a read", self.loc.shown))
                })?
        })?;
        let layout = Arc::new(match_layout(index, rows)?);
        if let Ok(mut slot) = self.layout.lock() {
            *slot = Some(layout.clone());
        }
        Ok(layout)
    }

    fn runtime(&self) -> Result<&tokio::runtime::Runtime> {
        self.rt
            .as_ref()
            .ok_or_else(|| Error::Database("the PostgreSQL runtime is shut down".into()))
    }

    /// Runs `f` with a connection of the pool: a free one, else the next in turn once
    /// it is free; a closed one is replaced.
    fn with_client<T>(&self, f: impl FnOnce(&Client) -> Result<T>) -> Result<T> {
        let rt = self.runtime()?;
        let n = self.pool.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed) % n;
        let mut guard = (0..n)
            .find_map(|i| self.pool[(start + i) % n].try_lock().ok())
            .unwrap_or_else(|| rt.block_on(self.pool[start].lock()));
        if guard.as_ref().is_none_or(|c| c.is_closed()) {
            *guard = None;
            *guard = Some(rt.block_on(connect(&self.loc))?);
        }
        match guard.as_ref() {
            Some(c) => f(c),
            None => Err(Error::Database("no connection".into())),
        }
    }

    fn answer(
        &self,
        index: &DocIndex,
        query: &[f32],
        k: usize,
        ef_search: usize,
        also: &[u64],
    ) -> Result<RemoteAnswer> {
        self.with_client(|client| {
            let layout = self.layout(index, client)?;
            let wanted: Vec<String> = also
                .iter()
                .filter_map(|&o| layout.hashes.get(o as usize).cloned().flatten())
                .collect();
            let q = pgvector::Vector::from(query.to_vec());
            let limit = query_timeout();
            let (top, known) = self.runtime()?.block_on(async {
                tokio::time::timeout(limit, nearest(client, &self.loc, &q, k, ef_search, &wanted))
                    .await
                    .map_err(|_| {
                        Error::Database(format!(
                            "no answer from `{}` to a vector query within {} ms (DOCFUSE_PG_VECTOR_TIMEOUT_MS)",
                            self.loc.shown,
                            limit.as_millis()
                        ))
                    })?
            })?;
            Ok(to_answer(&layout, query, top, known, k))
        })
    }
}

impl RemoteVectors for PgVectors {
    fn embedder(&self) -> std::result::Result<EmbedderInfo, String> {
        Ok(self.embedder.clone())
    }

    fn search(
        &self,
        index: &DocIndex,
        query: &[f32],
        k: usize,
        ef_search: usize,
        also: &[u64],
    ) -> std::result::Result<RemoteAnswer, String> {
        if let Some((until, why)) = self.down.lock().ok().and_then(|d| d.clone()) {
            if Instant::now() < until {
                return Err(why);
            }
        }
        self.answer(index, query, k, ef_search, also).map_err(|e| {
            let why = format!(
                "the vectors in the database cannot be searched now ({e}); answered lexically from this host's copy"
            );
            tracing::warn!("{why}");
            if let Ok(mut d) = self.down.lock() {
                *d = Some((Instant::now() + RETRY_AFTER, why.clone()));
            }
            why
        })
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.lock().map_or((0, 0), |c| *c)
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
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
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
/// (root, path, seq) → (content hash, embedding hash), and the moments.
struct Rows {
    roots: Vec<String>,
    chunks: HashMap<(String, String, i32), (String, Option<String>)>,
    moments: Option<Vec<u8>>,
}

async fn read_layout(client: &Client, loc: &PgLocation) -> Result<Rows> {
    // one snapshot, so the moments and the chunks are of one generation
    client
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await
        .map_err(|e| db_err(loc, "cannot start a read", e))?;
    let read = async {
        let roots = super::read::roots(client, loc).await?;
        let chunks = client
            .query(
                &format!(
                    "SELECT root, path, seq, content_hash, embed_hash FROM {}",
                    loc.table("chunks")
                ),
                &[],
            )
            .await
            .map_err(|e| db_err(loc, "cannot read the chunks", e))?;
        let moments = client
            .query_opt(
                &format!("SELECT moments FROM {}", loc.table("published")),
                &[],
            )
            .await
            .map_err(|e| db_err(loc, "cannot read the published generation", e))?
            .and_then(|r| r.get::<_, Option<Vec<u8>>>(0));
        Ok(Rows {
            roots,
            chunks: chunks
                .iter()
                .map(|r| ((r.get(0), r.get(1), r.get(2)), (r.get(3), r.get(4))))
                .collect(),
            moments,
        })
    }
    .await;
    let _ = client.batch_execute("COMMIT").await;
    read
}

/// Matches each chunk of `index` to its database row: the same root, path and place,
/// and the same content hash (a chunk the database has since changed gets no vector).
fn match_layout(index: &DocIndex, rows: Rows) -> Result<Layout> {
    let moments = rows
        .moments
        .ok_or_else(|| Error::Database("the database holds no vector moments yet: run `docfuse refresh --index URL` once to publish them".into()))
        .and_then(|b| Moments::from_bytes(&b).map_err(Error::Database))?;
    let keys = chunk_keys(index)?;
    let mut ords: HashMap<String, Vec<u64>> = HashMap::new();
    let mut hashes = Vec::with_capacity(keys.len());
    for (ord, k) in keys.iter().enumerate() {
        let root = rows.roots.get(k.root).cloned().unwrap_or_default();
        let hash = rows
            .chunks
            .get(&(root, k.rel_path.clone(), k.seq as i32))
            .filter(|(content, _)| *content == k.content_hash)
            .and_then(|(_, e)| e.clone());
        if let Some(h) = &hash {
            ords.entry(h.clone()).or_default().push(ord as u64);
        }
        hashes.push(hash);
    }
    Ok(Layout {
        seal: index.manifest().seal.clone(),
        ords,
        hashes,
        moments,
    })
}

/// The `k` nearest embedding hashes with their cosine distance, and the distances of
/// the hashes `wanted` — three statements pipelined on one connection.
async fn nearest(
    client: &Client,
    loc: &PgLocation,
    q: &pgvector::Vector,
    k: usize,
    ef_search: usize,
    wanted: &[String],
) -> Result<(Vec<(String, f64)>, Vec<(String, f64)>)> {
    let table = loc.table("vectors");
    // pgvector accepts ef_search in 1..=1000; HNSW returns at most ef_search rows
    let ef = ef_search.clamp(k.min(1000), 1000).to_string();
    let limit = k as i64;
    let (set_params, top_params): ([&(dyn ToSql + Sync); 1], [&(dyn ToSql + Sync); 2]) =
        ([&ef], [q, &limit]);
    let also_params: [&(dyn ToSql + Sync); 2] = [q, &wanted];
    let set = client.query(
        "SELECT set_config('hnsw.ef_search', $1, false)",
        &set_params,
    );
    let top_sql = format!(
        "SELECT embed_hash, embedding <=> $1 FROM {table} ORDER BY embedding <=> $1 LIMIT $2"
    );
    let also_sql =
        format!("SELECT embed_hash, embedding <=> $1 FROM {table} WHERE embed_hash = ANY($2)");
    let top = client.query(&top_sql, &top_params);
    let also = client.query(&also_sql, &also_params);
    let (_, top, also) = tokio::try_join!(set, top, also)
        .map_err(|e| db_err(loc, "cannot search the vectors", e))?;
    let pairs = |rows: Vec<tokio_postgres::Row>| -> Vec<(String, f64)> {
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    };
    Ok((pairs(top), pairs(also)))
}

/// The database's answer in chunk ordinals: each hash's chunks (a text indexed twice
/// holds one vector), best first with ties by ordinal, cut at `k`; cosine = 1 − distance.
fn to_answer(
    layout: &Layout,
    query: &[f32],
    top: Vec<(String, f64)>,
    known: Vec<(String, f64)>,
    k: usize,
) -> RemoteAnswer {
    let mut cosines = HashMap::new();
    let mut ranked = Vec::new();
    for (hash, distance) in top {
        for &ord in layout.ords.get(&hash).into_iter().flatten() {
            let c = (1.0 - distance) as f32;
            ranked.push((ord, c));
            cosines.insert(ord, c);
        }
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(k);
    for (hash, distance) in known {
        for &ord in layout.ords.get(&hash).into_iter().flatten() {
            cosines.insert(ord, (1.0 - distance) as f32);
        }
    }
    RemoteAnswer {
        top: ranked,
        stats: layout.moments.stats(query),
        cosines,
    }
}
