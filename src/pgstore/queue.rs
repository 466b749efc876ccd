//! The embedding queue in the database, as embedding workers see it: a worker claims a
//! batch of inputs with `FOR UPDATE SKIP LOCKED` (PostgreSQL's row locks: two workers
//! never take the same input, and none waits for another), embeds them and writes their
//! vectors by embedding hash in the same transaction. A worker killed mid-batch holds no
//! lock any more once its connection is gone: its inputs are taken by the next worker,
//! and no vector is half-written. The writer's next build finds the vectors by hash
//! ([`crate::write::IndexStore::vectors`]) and publishes them; the queue rows then leave
//! with that publish ([`super::publish`]).

use super::{db_err, PgLocation};
use crate::error::{Error, Result};
use tokio_postgres::Client;

/// What the queue holds for one embedder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueCounts {
    /// Inputs of this embedder without a vector: work for a worker.
    pub waiting: u64,
    /// Inputs embedded by a worker whose vectors the writer has not published yet.
    pub embedded: u64,
    /// Inputs of another embedder (a worker with this model cannot take them).
    pub other_embedder: u64,
}

/// The queue's counts for the embedder whose identity key is `identity_key`, leaving out
/// inputs the published generation already has (a row a worker held while the writer
/// published leaves the queue with the next publish).
///
/// # Errors
/// [`Error::Database`] on a failed query.
pub async fn queue_counts(
    client: &Client,
    loc: &PgLocation,
    identity_key: &str,
) -> Result<QueueCounts> {
    let row = client
        .query_one(
            &format!(
                "SELECT count(*) FILTER (WHERE v.embed_hash IS NULL AND q.identity_key = $1),
                        count(*) FILTER (WHERE v.embed_hash IS NOT NULL),
                        count(*) FILTER (WHERE v.embed_hash IS NULL AND q.identity_key <> $1)
                 FROM {q} q LEFT JOIN {v} v ON v.embed_hash = q.embed_hash
                 WHERE NOT EXISTS (SELECT 1 FROM {c} c WHERE c.embed_hash = q.embed_hash)
                   AND NOT EXISTS (SELECT 1 FROM {c} c WHERE c.tail_hashes @> ARRAY[q.embed_hash])",
                q = loc.table("embed_queue"),
                v = loc.table("vectors"),
                c = loc.table("chunks")
            ),
            &[&identity_key],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the embedding queue", e))?;
    let n = |i: usize| row.get::<_, i64>(i).max(0) as u64;
    Ok(QueueCounts {
        waiting: n(0),
        embedded: n(1),
        other_embedder: n(2),
    })
}

/// Claims at most `n` waiting inputs of the embedder `identity_key` (oldest first),
/// embeds them with `embed` (texts in, `[texts, dim]` f32 out) and writes their vectors,
/// in one transaction. Returns how many vectors were written (0: none waiting that
/// another worker has not claimed).
///
/// # Errors
/// [`Error::Database`] on a failed statement (the transaction is rolled back: the inputs
/// wait for the next claim); `embed`'s error, likewise; [`Error::Embedder`] when `embed`
/// returns the wrong number of values.
pub async fn embed_batch(
    client: &mut Client,
    loc: &PgLocation,
    (identity_key, dim): (&str, usize),
    n: usize,
    embed: &mut (dyn FnMut(&[&str]) -> Result<Vec<f32>> + Send),
) -> Result<usize> {
    let tx = client
        .transaction()
        .await
        .map_err(|e| db_err(loc, "cannot start a claim", e))?;
    let rows = tx
        .query(
            &format!(
                "SELECT q.embed_hash, q.input FROM {q} q
                 WHERE q.identity_key = $1
                   AND NOT EXISTS (SELECT 1 FROM {v} v WHERE v.embed_hash = q.embed_hash)
                 ORDER BY q.queued_at LIMIT $2 FOR UPDATE OF q SKIP LOCKED",
                q = loc.table("embed_queue"),
                v = loc.table("vectors")
            ),
            &[&identity_key, &(n as i64)],
        )
        .await
        .map_err(|e| db_err(loc, "cannot claim queued inputs", e))?;
    // a row another worker embedded after this statement's snapshot was taken, but
    // before its lock was free, was locked all the same: left out, not embedded again
    let claimed: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let done: std::collections::HashSet<String> = tx
        .query(
            &format!(
                "SELECT embed_hash FROM {} WHERE embed_hash = ANY($1)",
                loc.table("vectors")
            ),
            &[&claimed],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the vectors", e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let rows: Vec<_> = rows
        .iter()
        .filter(|r| !done.contains(&r.get::<_, String>(0)))
        .collect();
    if rows.is_empty() {
        // nothing claimed, or all of it done meanwhile: the transaction ends unused
        tx.rollback()
            .await
            .map_err(|e| db_err(loc, "cannot end a claim", e))?;
        return Ok(0);
    }
    let hashes: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    let inputs = rows
        .iter()
        .map(|r| String::from_utf8(r.get::<_, Vec<u8>>(1)))
        .collect::<std::result::Result<Vec<String>, _>>()
        .map_err(|_| Error::Database(format!("a queued input in `{}` is not UTF-8", loc.shown)))?;
    let texts: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let vecs = embed(&texts)?;
    if vecs.len() != texts.len() * dim {
        return Err(Error::Embedder(format!(
            "the model returned {} values for {} texts, expected {dim} per text",
            vecs.len(),
            texts.len()
        )));
    }
    let keys = vec![identity_key; hashes.len()];
    let values: Vec<String> = vecs.chunks(dim).map(super::publish::vector_text).collect();
    crate::write::pause_point("worker-embedded");
    let written = tx
        .execute(
            &format!(
                "INSERT INTO {} (embed_hash, identity_key, embedding)
             SELECT h, k, e::vector FROM unnest($1::text[], $2::text[], $3::text[]) AS t(h, k, e)
             ON CONFLICT (embed_hash) DO NOTHING",
                loc.table("vectors")
            ),
            &[&hashes, &keys, &values],
        )
        .await
        .map_err(|e| db_err(loc, "cannot write vectors", e))?;
    tx.commit()
        .await
        .map_err(|e| db_err(loc, "cannot commit a batch of vectors", e))?;
    Ok(written as usize)
}

/// Most seconds a worker's claim may sit idle (embedding) before the database ends it:
/// the locks of a worker whose host died are freed then, not when TCP gives up (hours).
pub const CLAIM_IDLE_LIMIT_S: u32 = 300;

/// Readies a worker's connection: [`CLAIM_IDLE_LIMIT_S`] as its
/// `idle_in_transaction_session_timeout`.
///
/// # Errors
/// [`Error::Database`] on a failed statement.
pub async fn prepare_worker(client: &Client, loc: &PgLocation) -> Result<()> {
    client
        .batch_execute(&format!(
            "SET idle_in_transaction_session_timeout = '{CLAIM_IDLE_LIMIT_S}s'"
        ))
        .await
        .map_err(|e| db_err(loc, "cannot set the claim's idle limit", e))
}

/// True when `e` is worth trying again: the database cannot be reached or went away
/// (SQLSTATE classes 08, 57P), or a transaction lost a race (class 40: deadlock,
/// serialization failure).
pub fn is_transient(e: &Error) -> bool {
    let Error::Database(why) = e else {
        return false;
    };
    super::is_unreachable(e) || ["(08", "(40", "(57P"].iter().any(|c| why.contains(c))
}
