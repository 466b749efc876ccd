//! PostgreSQL + pgvector as an index store: the database holds the source of truth
//! (roots, documents with their indexed text, chunks with content and embedding hashes,
//! vectors as `vector(384)` under an HNSW cosine index, and one `published` row — the
//! commit point, the manifest's role), and each docfuse keeps a local folder index as
//! its cache:
//!
//! - a **writer** (`index`/`refresh --index postgres://…`) opens a [`PgStore`] — the
//!   database as an [`crate::write::IndexStore`]: its advisory lock, its documents,
//!   chunks and vectors by embedding hash (a vector the database holds is never embedded
//!   again), this host's writer folder to stage generations in — and builds into it with
//!   [`crate::write::build_in`], the folder store's pipeline; each build [`publish`]es the
//!   difference in one transaction;
//! - a **reader** (`search`, `status`, `serve`, …) brings its local cache — the
//!   documents' text written under a mirror folder, indexed lexically — to the published
//!   generation ([`sync_reader`]) and answers from it; its vector side is the database
//!   ([`PgVectors`]: pgvector's HNSW top-k, the candidates' cosines, the statistics from
//!   the published moments), so BM25F is exactly the folder store's and the fusion gets
//!   the same inputs.
//!
//! Depends on `write` and `generation` (to build and export folder indexes) and `read` (the vector side); nothing below it imports
//! this module.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! PostgreSQL + pgvector as an index store (tokio-postgres, pgvector, rustls):
//! `location.rs` (`postgres://…?schema=NAME` parsed, password redacted, cache key),
//! `tls.rs` (libpq's `sslmode` meanings over rustls: no check for `prefer`/`require`, the
//! chain for `verify-ca`, chain and name for `verify-full`; `sslrootcert` or the system's
//! roots), `schema.rs` (versioned migrations, applied by writers, checked by readers; the
//! `vector` extension; the schema created only when missing), `publish.rs` (a folder
//! index's generation published in one transaction: changed documents replaced with their
//! chunks, vectors added by embedding hash, unused ones deleted, the vectors' moments, the
//! `published` row moved on and `pg_notify`), `read.rs`, `writer.rs` (`PgStore`: the
//! database as an `write::IndexStore` — the advisory lock taken on opening, the published
//! documents and chunks, vectors by embedding hash (this host's writer folder's older
//! generations first, then one query for the rest), this host's writer folder as the
//! staging folder, at the published generation only when the last publish recorded the
//! database's epoch and generation with the folder generation holding them, a publish that
//! publishes the folder's generation and then the difference in one transaction and records
//! both; `Seeding`: the same store publishing into the folder only), `reader.rs` (what
//! every reader opens for a URL — CLI, servers and the library's `DocfuseRetriever::open`:
//! the cache synced, or this host's copy while the database cannot be reached, with the
//! database attached as its vector side, one store and one follower thread per database in
//! a process), `cache.rs` (a reader's cache: read in one `REPEATABLE READ` snapshot, the
//! documents' text under a mirror folder `r0…rN`, a lexical folder index over it refreshed
//! in place — no vectors —, `synced.json` holding the schema's epoch, generation, embedder
//! and vector counts), `dense.rs` (`PgVectors`, the reader's vector side: a pool of
//! connections on a runtime of its own, each chunk of the cache's generation matched to its
//! database row by (root, path, seq) and content hash once per (cache seal, database epoch
//! and generation), the published identity checked against the query's embedder, top-k
//! exact below `hnsw_min_vectors` as the folder store, over HNSW above it with
//! `hnsw.ef_search` set first, candidates' cosines by hash, statistics from the moments;
//! after a failure vector search is off for 5 s, then one search probes; a health check for
//! the servers); the writer lock is a session advisory lock; depends on `write` (build,
//! `export`, the `RemoteVectors` side); imported by `cli` and by `retriever` (only
//! `DocfuseRetriever::open` of a URL)

mod cache;
mod dense;
mod location;
mod publish;
mod queue;
mod read;
mod reader;
mod schema;
mod tls;
mod writer;

pub use cache::{
    cache_base, cached_reader, record_synced, sync_reader, synced_generation, writer_base,
    ReaderCache,
};
pub use dense::{PgVectors, POOL_SIZE};
pub use location::{is_database_url, redacted, PgLocation, DEFAULT_SCHEMA};
pub use publish::{publish, PublishReport};
pub use queue::{
    embed_batch, is_transient, prepare_worker, queue_counts, QueueCounts, CLAIM_IDLE_LIMIT_S,
};
pub use read::{published, published_if_made, roots as root_paths, vectors_of, Published};
pub use reader::{follow, open_reader, poll_interval, Followed, OpenedReader, POLL_MS};
pub use schema::{check, migrate, HNSW_EF_CONSTRUCTION, HNSW_M, SCHEMA_VERSION};
pub use writer::PgStore;

use crate::error::{Error, Result};
use tokio_postgres::Client;

/// How every error that means "the database cannot be reached now" begins (a
/// connection refused, timed out or dropped; never a refusal by the database itself).
pub const UNREACHABLE: &str = "cannot connect";

/// True when `e` says the database cannot be reached now (worth trying again later).
pub fn is_unreachable(e: &Error) -> bool {
    matches!(e, Error::Database(why) if why.starts_with(UNREACHABLE))
}

/// Runs `f` to completion on a current-thread runtime of its own (the CLI is
/// synchronous; servers call this before their runtime starts).
///
/// # Errors
/// [`Error::Database`] when the runtime cannot be made; else `f`'s result.
pub fn block_on<T>(f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Database(format!("cannot start a runtime for PostgreSQL: {e}")))?
        .block_on(f)
}

/// Connects to `loc`, with TLS as its `sslmode` asks ([`tls`]); the connection is driven
/// by a task on the current runtime.
///
/// # Errors
/// [`Error::Database`] naming the redacted URL and the driver's reason.
pub async fn connect(loc: &PgLocation) -> Result<Client> {
    // the whole attempt, handshake included, is bounded: a server that accepts the
    // connection and never answers is an error, not a hang
    let limit =
        loc.config
            .get_connect_timeout()
            .copied()
            .unwrap_or(std::time::Duration::from_secs(
                location::CONNECT_TIMEOUT_SECS,
            ));
    let tls = tls::connector(&loc.tls)?;
    let attempt = tokio::time::timeout(limit, loc.config.connect(tls));
    let (client, conn) = attempt
        .await
        .map_err(|_| {
            Error::Database(format!(
                "cannot connect to `{}`: no answer within {} s\nhint: check the host and port (set `connect_timeout=SECONDS` in the URL to wait longer)",
                loc.shown,
                limit.as_secs()
            ))
        })?
        .map_err(|e| refused(loc, &e))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::warn!("PostgreSQL connection closed: {}", reason(&e));
        }
    });
    Ok(client)
}

/// A failed connection as an error whose first words say its kind: `cannot connect`
/// (the server could not be reached: a reader then answers from its copy), `\`URL\`
/// refused the connection` (the server said no: a wrong password, user or database) or
/// `cannot verify` (TLS: the certificate did not check out). The last two are mistakes
/// to fix, never hidden behind a copy.
fn refused(loc: &PgLocation, e: &tokio_postgres::Error) -> Error {
    let why = reason(e);
    // by SQLSTATE class: 08 connection, 53 resources (too many clients), 57P0x the server
    // starting, stopping or in recovery are outages; the others (28 authorisation, 3D no
    // such database, …) are mistakes to fix
    let outage = e.as_db_error().map(|d| {
        let c = d.code().code();
        c.starts_with("08") || c.starts_with("53") || c.starts_with("57P0")
    });
    let login = why.contains("password missing") || why.contains("authentication error");
    if outage == Some(false) || login {
        return Error::Database(format!(
            "`{}` refused the connection: {why}\nhint: check the URL's user, password (or PGPASSWORD) and database",
            loc.shown
        ));
    }
    if why.contains("server does not support TLS") {
        return Error::Database(format!(
            "`{}` does not offer TLS and the URL's sslmode requires it: {why}\nhint: enable SSL on the server, or use `sslmode=prefer` to allow plain connections",
            loc.shown
        ));
    }
    if why.contains("certificate") {
        return Error::Database(format!(
            "cannot verify the TLS connection to `{}`: {why}\nhint: give the server's certificate authority with `sslrootcert=PATH` (PEM), use `sslmode=verify-ca` when the host name differs, or `sslmode=require` to encrypt without checking",
            loc.shown
        ));
    }
    Error::Database(format!(
        "cannot connect to `{}`: {why}\nhint: check that the server is up and the URL's host and port (`scripts/pg up` starts a local one)",
        loc.shown
    ))
}

/// Takes the writer lock of `loc`'s schema: a session-level advisory lock released when
/// `client`'s connection ends (also when the writer is killed). Waits for it unless
/// `no_wait`.
///
/// # Errors
/// [`Error::Database`]: held by another writer with `no_wait`, or a failed query.
pub async fn lock_writer(client: &Client, loc: &PgLocation, no_wait: bool) -> Result<()> {
    let key = lock_key(&loc.schema);
    let held: bool = if no_wait {
        client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
            .await
            .map_err(|e| db_err(loc, "cannot take the writer lock", e))?
            .get(0)
    } else {
        client
            .execute("SELECT pg_advisory_lock($1)", &[&key])
            .await
            .map_err(|e| db_err(loc, "cannot take the writer lock", e))?;
        true
    };
    if !held {
        return Err(Error::Database(format!(
            "another docfuse is writing the index in `{}` (schema `{}`)\nhint: wait for it, or run without `--no-wait` to wait",
            loc.shown, loc.schema
        )));
    }
    Ok(())
}

/// The advisory lock key of a schema: the first 8 bytes of sha256("docfuse writer" +
/// schema) as a signed integer.
pub fn lock_key(schema: &str) -> i64 {
    key_of("writer", schema)
}

/// The first 8 bytes of sha256("docfuse ROLE\nSCHEMA") as a signed integer.
fn key_of(role: &str, schema: &str) -> i64 {
    let h = crate::hashing::sha256_hex(format!("docfuse {role}\n{schema}").as_bytes());
    u64::from_str_radix(&h[..16], 16).unwrap_or(0) as i64
}

/// Takes the ingester lock of `loc`'s schema (one `docfuse ingest` per database index:
/// two would take each other's events and could apply one service's out of order): a
/// session-level advisory lock, held while `client`'s connection lasts. False when
/// another session holds it.
///
/// # Errors
/// [`Error::Database`] when the query fails.
pub async fn try_lock_ingester(client: &Client, loc: &PgLocation) -> Result<bool> {
    let key = key_of("ingest", &loc.schema);
    Ok(client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
        .await
        .map_err(|e| db_err(loc, "cannot take the ingester lock", e))?
        .get(0))
}

/// The driver's reason: the server's message when there is one.
fn reason(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{} ({})", d.message(), d.code().code()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(": ");
                s.push_str(&inner.to_string());
                src = inner.source();
            }
            s
        }
    }
}

/// A failed statement on `loc`, with what docfuse was doing.
pub(crate) fn db_err(loc: &PgLocation, doing: &str, e: tokio_postgres::Error) -> Error {
    Error::Database(format!("{doing} in `{}`: {}", loc.shown, reason(&e)))
}
