//! Publishing a folder index's generation into the database: the documents whose text or
//! chunks changed are replaced, the others are not touched, vectors are added by
//! embedding hash, and the `published` row moves on — all in one transaction, so a
//! writer killed or disconnected mid-way leaves the last published generation whole.

use super::{db_err, PgLocation};
use crate::error::Result;
use crate::generation::{Exported, ExportedDoc};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use tokio_postgres::{Client, Transaction};

/// Rows per `INSERT … SELECT FROM unnest(…)` statement.
const BATCH: usize = 500;

/// Document text per statement, in bytes (PostgreSQL refuses messages over 1 GiB).
const BATCH_BYTES: usize = 32 << 20;

/// What a publish changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PublishReport {
    /// The published generation (the previous one when nothing changed).
    pub generation: i64,
    /// The schema's epoch ([`super::Published::epoch`]).
    pub epoch: String,
    /// True when the database already held this generation's content.
    pub skipped: bool,
    /// Documents written (new or changed) and deleted.
    pub documents_written: u64,
    pub documents_deleted: u64,
    /// Chunk rows written (those of the documents written).
    pub chunks_written: u64,
    /// Vectors added (embedding hashes the database did not hold).
    pub vectors_written: u64,
    /// Vectors no chunk refers to any more, deleted.
    pub vectors_deleted: u64,
    /// Inputs in the embedding queue after the publish (waiting for a worker, or
    /// embedded by one and waiting for the writer's next publish).
    pub queued: u64,
}

/// Publishes `ex` (the writer's folder index) as the database's next generation;
/// `writer` names the writer (recorded in the row).
///
/// # Errors
/// [`crate::Error::Database`] when a statement fails: the transaction is rolled back
/// and the published generation is the previous one.
pub async fn publish(
    client: &mut Client,
    loc: &PgLocation,
    ex: &Exported,
    writer: &str,
) -> Result<PublishReport> {
    // before the transaction: 15 ms per 1,000 vectors, no lock held meanwhile
    let moments = moments_of(ex);
    let tx = client
        .transaction()
        .await
        .map_err(|e| db_err(loc, "cannot start the publish", e))?;
    let mut report = PublishReport::default();
    let held = held_documents(&tx, loc).await?;
    let roots_changed = write_roots(&tx, loc, &ex.roots).await?;
    let local: HashSet<(&str, &str)> = ex
        .documents
        .iter()
        .map(|d| (d.root.as_str(), d.rel_path.as_str()))
        .collect();
    let gone: Vec<(String, String)> = held
        .keys()
        .filter(|(r, p)| !local.contains(&(r.as_str(), p.as_str())))
        .cloned()
        .collect();
    let changed: Vec<&ExportedDoc> = ex
        .documents
        .iter()
        .filter(|d| {
            held.get(&(d.root.clone(), d.rel_path.clone()))
                .is_none_or(|(sha, digest)| *sha != d.sha256 || *digest != chunks_digest(d))
        })
        .collect();
    let replaced: Vec<(String, String)> = changed
        .iter()
        .filter(|d| held.contains_key(&(d.root.clone(), d.rel_path.clone())))
        .map(|d| (d.root.clone(), d.rel_path.clone()))
        .collect();
    delete_documents(&tx, loc, &gone).await?;
    delete_documents(&tx, loc, &replaced).await?;
    report.documents_deleted = gone.len() as u64;
    report.documents_written = changed.len() as u64;
    report.chunks_written = insert_documents(&tx, loc, &changed).await?;
    // the queue first: its rows a worker holds are left for the next publish (never
    // waited for), and a vector a worker wrote meanwhile is not written twice
    report.queued = replace_queue(&tx, loc, ex).await?;
    report.vectors_written = insert_vectors(&tx, loc, ex, &changed).await?;
    if !gone.is_empty() || !replaced.is_empty() {
        report.vectors_deleted = delete_unused_vectors(&tx, loc).await?;
    }
    let unchanged = !(roots_changed || !gone.is_empty() || !changed.is_empty());
    let (generation, epoch, skipped) =
        publish_row(&tx, loc, (ex, moments), writer, unchanged).await?;
    report.generation = generation;
    report.epoch = epoch;
    report.skipped = skipped;
    crate::write::pause_point("db-before-commit");
    tx.commit()
        .await
        .map_err(|e| db_err(loc, "cannot commit the publish", e))?;
    Ok(report)
}

/// sha256 over a document's chunk ids, content hashes and embedding hashes: a document
/// whose text is the same but whose chunks changed (other settings, a vector filled
/// in) is written again.
fn chunks_digest(d: &ExportedDoc) -> String {
    let mut s = String::new();
    for c in &d.chunks {
        s.push_str(&c.id);
        s.push('\t');
        s.push_str(&c.content_hash);
        s.push('\t');
        s.push_str(c.embed_hash.as_deref().unwrap_or(""));
        for t in &c.tail_hashes {
            s.push(' ');
            s.push_str(t);
        }
        s.push('\n');
    }
    crate::hashing::sha256_hex(s.as_bytes())
}

type Held = HashMap<(String, String), (String, String)>;

async fn held_documents(tx: &Transaction<'_>, loc: &PgLocation) -> Result<Held> {
    let rows = tx
        .query(
            &format!(
                "SELECT root, path, sha256, chunks_digest FROM {}",
                loc.table("documents")
            ),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the documents", e))?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), (r.get(2), r.get(3))))
        .collect())
}

/// Replaces the roots when they differ; true when they did.
async fn write_roots(tx: &Transaction<'_>, loc: &PgLocation, roots: &[String]) -> Result<bool> {
    let held = super::read::roots(tx, loc).await?;
    if held == roots {
        return Ok(false);
    }
    let table = loc.table("roots");
    let positions: Vec<i32> = (0..roots.len() as i32).collect();
    tx.execute(&format!("DELETE FROM {table}"), &[])
        .await
        .map_err(|e| db_err(loc, "cannot write the roots", e))?;
    tx.execute(
        &format!(
            "INSERT INTO {table} (position, path) SELECT * FROM unnest($1::int[], $2::text[])"
        ),
        &[&positions, &roots],
    )
    .await
    .map_err(|e| db_err(loc, "cannot write the roots", e))?;
    Ok(true)
}

async fn delete_documents(
    tx: &Transaction<'_>,
    loc: &PgLocation,
    keys: &[(String, String)],
) -> Result<()> {
    for batch in keys.chunks(BATCH) {
        let roots: Vec<&str> = batch.iter().map(|k| k.0.as_str()).collect();
        let paths: Vec<&str> = batch.iter().map(|k| k.1.as_str()).collect();
        tx.execute(
            &format!(
                "DELETE FROM {} d USING unnest($1::text[], $2::text[]) AS k(root, path)
                 WHERE d.root = k.root AND d.path = k.path",
                loc.table("documents")
            ),
            &[&roots, &paths],
        )
        .await
        .map_err(|e| db_err(loc, "cannot delete documents", e))?;
    }
    Ok(())
}

/// Inserts documents and their chunks; returns the chunk rows written.
async fn insert_documents(
    tx: &Transaction<'_>,
    loc: &PgLocation,
    docs: &[&ExportedDoc],
) -> Result<u64> {
    let mut chunks = 0;
    for batch in by_size(docs) {
        let roots: Vec<&str> = batch.iter().map(|d| d.root.as_str()).collect();
        let paths: Vec<&str> = batch.iter().map(|d| d.rel_path.as_str()).collect();
        let shas: Vec<&str> = batch.iter().map(|d| d.sha256.as_str()).collect();
        let sizes: Vec<i64> = batch.iter().map(|d| d.size as i64).collect();
        let digests: Vec<String> = batch.iter().map(|d| chunks_digest(d)).collect();
        let bodies: Vec<&[u8]> = batch.iter().map(|d| d.text.as_bytes()).collect();
        tx.execute(
            &format!(
                "INSERT INTO {} (root, path, sha256, size, chunks_digest, body)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bytea[])",
                loc.table("documents")
            ),
            &[&roots, &paths, &shas, &sizes, &digests, &bodies],
        )
        .await
        .map_err(|e| db_err(loc, "cannot write documents", e))?;
        let mut c = ChunkRows::default();
        for d in batch {
            for (seq, ch) in d.chunks.iter().enumerate() {
                c.roots.push(&d.root);
                c.paths.push(&d.rel_path);
                c.seqs.push(seq as i32);
                c.ids.push(&ch.id);
                c.hashes.push(&ch.content_hash);
                c.embeds.push(ch.embed_hash.as_deref());
                c.tails.push(ch.tail_hashes.join(","));
            }
        }
        chunks += tx
            .execute(
                &format!(
                    "INSERT INTO {} (root, path, seq, id, content_hash, embed_hash, tail_hashes)
                     SELECT r, p, q, i, h, e, NULLIF(string_to_array(t, ','), '{{}}')
                     FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[])
                       AS u(r, p, q, i, h, e, t)",
                    loc.table("chunks")
                ),
                &[&c.roots, &c.paths, &c.seqs, &c.ids, &c.hashes, &c.embeds, &c.tails],
            )
            .await
            .map_err(|e| db_err(loc, "cannot write chunks", e))?;
    }
    Ok(chunks)
}

/// `docs` in batches of at most [`BATCH`] documents and [`BATCH_BYTES`] of text (a
/// larger document alone).
fn by_size<'a>(docs: &'a [&'a ExportedDoc]) -> Vec<&'a [&'a ExportedDoc]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, d) in docs.iter().enumerate() {
        if i > start && (i - start == BATCH || bytes + d.text.len() > BATCH_BYTES) {
            out.push(&docs[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += d.text.len();
    }
    if start < docs.len() {
        out.push(&docs[start..]);
    }
    out
}

#[derive(Default)]
struct ChunkRows<'a> {
    roots: Vec<&'a str>,
    paths: Vec<&'a str>,
    seqs: Vec<i32>,
    ids: Vec<&'a str>,
    hashes: Vec<&'a str>,
    embeds: Vec<Option<&'a str>>,
    /// Tail-window hashes, comma-separated (hex: no comma inside one).
    tails: Vec<String>,
}

/// Adds the vectors of `docs`' chunks that the database does not hold; returns how many.
async fn insert_vectors(
    tx: &Transaction<'_>,
    loc: &PgLocation,
    ex: &Exported,
    docs: &[&ExportedDoc],
) -> Result<u64> {
    let Some(set) = &ex.vectors else {
        return Ok(0);
    };
    let wanted: HashSet<&str> = docs
        .iter()
        .flat_map(|d| d.chunks.iter())
        .filter(|c| c.embed_hash.is_some())
        .flat_map(|c| {
            c.embed_hash
                .iter()
                .chain(&c.tail_hashes)
                .map(String::as_str)
        })
        .collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let table = loc.table("vectors");
    let list: Vec<&str> = wanted.iter().copied().collect();
    let rows = tx
        .query(
            &format!("SELECT embed_hash FROM {table} WHERE embed_hash = ANY($1)"),
            &[&list],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the vectors", e))?;
    let held: HashSet<String> = rows.iter().map(|r| r.get(0)).collect();
    let mut seen = HashSet::new();
    let new: Vec<(&str, &[f32])> = ex
        .vectors_by_hash()
        .into_iter()
        .filter(|(h, _)| wanted.contains(h) && !held.contains(*h) && seen.insert(*h))
        .collect();
    let key = set.meta.identity_key.as_str();
    for batch in new.chunks(BATCH) {
        let hashes: Vec<&str> = batch.iter().map(|(h, _)| *h).collect();
        let keys: Vec<&str> = vec![key; batch.len()];
        let texts: Vec<String> = batch.iter().map(|(_, v)| vector_text(v)).collect();
        tx.execute(
            &format!(
                "INSERT INTO {table} (embed_hash, identity_key, embedding)
                 SELECT h, k, e::vector FROM unnest($1::text[], $2::text[], $3::text[]) AS t(h, k, e)
                 ON CONFLICT (embed_hash) DO NOTHING"
            ),
            &[&hashes, &keys, &texts],
        )
        .await
        .map_err(|e| db_err(loc, "cannot write vectors", e))?;
    }
    Ok(new.len() as u64)
}

/// Makes the database's embedding queue the generation's ([`Exported::queue`]): inputs
/// no longer waiting leave it (their vector is published, or their chunk is gone) unless
/// a worker holds them now (they leave with a later publish: a publish never waits for a
/// worker), new ones join it at the end, the others keep their place (their text is not
/// sent again). Returns how many inputs the generation queues.
async fn replace_queue(tx: &Transaction<'_>, loc: &PgLocation, ex: &Exported) -> Result<u64> {
    let table = loc.table("embed_queue");
    let key = ex
        .vectors
        .as_ref()
        .map_or("", |v| v.meta.identity_key.as_str());
    let hashes: Vec<&str> = ex.queue.iter().map(|q| q.hash.as_str()).collect();
    let failed = |e| db_err(loc, "cannot update the embedding queue", e);
    tx.execute(
        &format!(
            "DELETE FROM {table} WHERE embed_hash IN (
               SELECT embed_hash FROM {table}
               WHERE identity_key <> $1 OR NOT (embed_hash = ANY($2))
               FOR UPDATE SKIP LOCKED)"
        ),
        &[&key, &hashes],
    )
    .await
    .map_err(failed)?;
    let held: HashSet<String> = tx
        .query(
            &format!("SELECT embed_hash FROM {table} WHERE embed_hash = ANY($1)"),
            &[&hashes],
        )
        .await
        .map_err(failed)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let new: Vec<&crate::generation::Queued> = ex
        .queue
        .iter()
        .filter(|q| !held.contains(&q.hash))
        .collect();
    for batch in new.chunks(BATCH) {
        let hashes: Vec<&str> = batch.iter().map(|q| q.hash.as_str()).collect();
        // bytes: an input may hold NUL, which a text column refuses
        let inputs: Vec<&[u8]> = batch.iter().map(|q| q.input.as_bytes()).collect();
        tx.execute(
            &format!(
                "INSERT INTO {table} (embed_hash, identity_key, input)
                 SELECT h, $1, i FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS t(h, i, n)
                 ORDER BY n ON CONFLICT (embed_hash) DO NOTHING"
            ),
            &[&key, &hashes, &inputs],
        )
        .await
        .map_err(failed)?;
    }
    Ok(ex.queue.len() as u64)
}

/// pgvector's text form; Rust prints each f32 as the shortest decimal that reads back
/// to the same f32, so the stored vector is bit-identical.
pub(super) fn vector_text(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

async fn delete_unused_vectors(tx: &Transaction<'_>, loc: &PgLocation) -> Result<u64> {
    tx.execute(
        &format!(
            "DELETE FROM {v} v WHERE NOT EXISTS (SELECT 1 FROM {c} c WHERE c.embed_hash = v.embed_hash)
               AND NOT EXISTS (SELECT 1 FROM {c} c WHERE c.tail_hashes @> ARRAY[v.embed_hash])
               AND NOT EXISTS (SELECT 1 FROM {q} q WHERE q.embed_hash = v.embed_hash)",
            v = loc.table("vectors"),
            c = loc.table("chunks"),
            q = loc.table("embed_queue")
        ),
        &[],
    )
    .await
    .map_err(|e| db_err(loc, "cannot delete unused vectors", e))
}

/// Moves the published row to the next generation (or keeps it when `unchanged` and the
/// manifest's settings are the same) and notifies listeners on commit.
async fn publish_row(
    tx: &Transaction<'_>,
    loc: &PgLocation,
    (ex, moments): (&Exported, Option<Vec<u8>>),
    writer: &str,
    unchanged: bool,
) -> Result<(i64, String, bool)> {
    let manifest = serde_json::to_value(&ex.manifest).unwrap_or_default();
    let identity = ex.vectors.as_ref().map(|v| v.meta.identity.clone());
    let table = loc.table("published");
    let held = super::read::published(tx, loc).await?;
    if let Some(p) = &held {
        let same = p.manifest["config_hash"] == manifest["config_hash"] && p.identity == identity;
        // a schema migrated to version 2 gets its moments with the next publish
        let moments_held = p.has_moments || ex.vectors.is_none();
        if unchanged && same && moments_held {
            return Ok((p.generation, p.epoch.clone(), true));
        }
    }
    let row = tx
        .query_one(
            &format!(
                "INSERT INTO {table} (generation, epoch, writer, manifest, identity, moments)
                 VALUES (1, md5(random()::text || clock_timestamp()::text), $1, $2, $3, $4)
                 ON CONFLICT (singleton) DO UPDATE SET generation = {table}.generation + 1,
                   published_at = now(), writer = $1, manifest = $2, identity = $3,
                   moments = $4
                 RETURNING generation, epoch"
            ),
            &[&writer, &manifest, &identity, &moments],
        )
        .await
        .map_err(|e| db_err(loc, "cannot publish", e))?;
    let generation: i64 = row.get(0);
    let epoch: String = row.get(1);
    tx.execute(
        "SELECT pg_notify('docfuse_published', $1)",
        &[&format!("{}:{generation}", loc.schema)],
    )
    .await
    .map_err(|e| db_err(loc, "cannot notify", e))?;
    Ok((generation, epoch, false))
}

/// The moments of the generation's vectors, one term per chunk with a vector (its first
/// row, as the folder store's statistics count them), as stored bytes; `None` without
/// vectors.
fn moments_of(ex: &Exported) -> Option<Vec<u8>> {
    let v = ex.vectors.as_ref()?;
    let rows = (0..v.len()).filter(|&i| v.has_vector(i)).map(|i| v.row(i));
    Some(crate::vector::Moments::of(rows, v.meta.dim).to_bytes())
}
