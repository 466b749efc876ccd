//! Reading a PostgreSQL index store: the published row, roots, documents, vectors.

use super::{db_err, PgLocation};
use crate::error::Result;
use std::collections::HashMap;
use tokio_postgres::GenericClient;

/// The published generation of a database index.
#[derive(Debug, Clone)]
pub struct Published {
    /// Counts up from 1 with each publish.
    pub generation: i64,
    /// Random, set by the first publish into the schema: a schema dropped and made
    /// again starts another epoch, so a cache of generation N of the old one is never
    /// taken for generation N of the new one.
    pub epoch: String,
    /// The writer's folder-index manifest of that generation (settings, versions,
    /// `config_overrides`, roots as the writer named them).
    pub manifest: serde_json::Value,
    /// The embedder identity of its vectors (`VectorMeta::identity`), when it has any.
    pub identity: Option<serde_json::Value>,
    /// True when the row holds the vectors' moments ([`crate::vector::Moments`]).
    pub has_moments: bool,
}

/// A read-only `REPEATABLE READ` transaction: every read in it sees one snapshot, so
/// a publish committed meanwhile is never half taken.
///
/// # Errors
/// [`crate::Error::Database`] when it cannot start.
pub(super) async fn snapshot<'a>(
    client: &'a mut tokio_postgres::Client,
    loc: &PgLocation,
) -> Result<tokio_postgres::Transaction<'a>> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(|e| db_err(loc, "cannot start a read", e))
}

/// [`published`], or `None` when the schema or its tables are not made yet (a writer's
/// first run makes them).
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub async fn published_if_made(
    client: &impl GenericClient,
    loc: &PgLocation,
) -> Result<Option<Published>> {
    let made: bool = client
        .query_one(
            "SELECT to_regclass($1) IS NOT NULL",
            &[&loc.table("published")],
        )
        .await
        .map(|r| r.get(0))
        .map_err(|e| db_err(loc, "cannot look for the index's tables", e))?;
    match made {
        true => published(client, loc).await,
        false => Ok(None),
    }
}

/// The published row, or `None` before the first publish.
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub async fn published(client: &impl GenericClient, loc: &PgLocation) -> Result<Option<Published>> {
    let row = client
        .query_opt(
            &format!(
                "SELECT generation, manifest, identity, epoch, moments IS NOT NULL FROM {}",
                loc.table("published")
            ),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the published generation", e))?;
    Ok(row.map(|r| Published {
        generation: r.get(0),
        manifest: r.get(1),
        identity: r.get(2),
        epoch: r.get(3),
        has_moments: r.get(4),
    }))
}

/// The roots in their order (as the writer named them).
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub async fn roots(client: &impl GenericClient, loc: &PgLocation) -> Result<Vec<String>> {
    let rows = client
        .query(
            &format!("SELECT path FROM {} ORDER BY position", loc.table("roots")),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the roots", e))?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// A document as stored: (root, path) → (sha256, body bytes).
pub(super) type Docs = HashMap<(String, String), (String, Vec<u8>)>;

/// Every document with its text.
pub(super) async fn documents(client: &impl GenericClient, loc: &PgLocation) -> Result<Docs> {
    let rows = client
        .query(
            &format!(
                "SELECT root, path, sha256, body FROM {}",
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

/// The vectors of `identity_key` (all of them when `hashes` is `None`, else those
/// listed): embedding hash → `[384]` f32.
pub(super) async fn vectors(
    client: &impl GenericClient,
    loc: &PgLocation,
    identity_key: &str,
    hashes: Option<&[String]>,
) -> Result<HashMap<String, Vec<f32>>> {
    let table = loc.table("vectors");
    let rows = match hashes {
        None => {
            client
                .query(
                    &format!("SELECT embed_hash, embedding FROM {table} WHERE identity_key = $1"),
                    &[&identity_key],
                )
                .await
        }
        Some(h) => {
            client
                .query(
                    &format!("SELECT embed_hash, embedding FROM {table} WHERE identity_key = $1 AND embed_hash = ANY($2)"),
                    &[&identity_key, &h],
                )
                .await
        }
    }
    .map_err(|e| db_err(loc, "cannot read the vectors", e))?;
    Ok(rows
        .iter()
        .map(|r| {
            let v: pgvector::Vector = r.get(1);
            (r.get::<_, String>(0), v.to_vec())
        })
        .collect())
}

/// Every vector of embedder `identity_key`: embedding hash → `[384]` f32.
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub async fn vectors_of(
    client: &impl GenericClient,
    loc: &PgLocation,
    identity_key: &str,
) -> Result<HashMap<String, Vec<f32>>> {
    vectors(client, loc, identity_key, None).await
}

/// Chunks with a vector in the database and chunks without one (pending).
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub(super) async fn vector_counts(
    client: &impl GenericClient,
    loc: &PgLocation,
) -> Result<(u64, u64)> {
    let row = client
        .query_one(
            &format!(
                "SELECT count(v.embed_hash), count(*) - count(v.embed_hash)
                 FROM {} c LEFT JOIN {} v ON v.embed_hash = c.embed_hash",
                loc.table("chunks"),
                loc.table("vectors")
            ),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot count the vectors", e))?;
    let (with, without): (i64, i64) = (row.get(0), row.get(1));
    Ok((with.max(0) as u64, without.max(0) as u64))
}

/// The published documents as `(root, path, sha256)` (without their text).
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub(super) async fn document_hashes(
    client: &impl GenericClient,
    loc: &PgLocation,
) -> Result<Vec<(String, String, String)>> {
    let rows = client
        .query(
            &format!("SELECT root, path, sha256 FROM {}", loc.table("documents")),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the documents", e))?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// The published chunks as `(root, chunk id within its root, content hash)` in the
/// order of root, path and place.
///
/// # Errors
/// [`crate::Error::Database`] on a failed query.
pub(super) async fn chunk_hashes(
    client: &impl GenericClient,
    loc: &PgLocation,
) -> Result<Vec<(String, String, String)>> {
    let rows = client
        .query(
            &format!(
                "SELECT c.root, c.id, c.content_hash
                 FROM {chunks} c JOIN {roots} r ON r.path = c.root
                 ORDER BY r.position, c.path COLLATE \"C\", c.seq",
                roots = loc.table("roots"),
                chunks = loc.table("chunks")
            ),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the chunks", e))?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}
