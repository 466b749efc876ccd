//! Versioned migrations of docfuse's tables, applied by a writer (`docfuse index` /
//! `refresh`) under the writer's advisory lock; readers refuse a version they do not
//! know. SQL kept to PostgreSQL ≥ 14 and pgvector ≥ 0.5 (HNSW arrived in 0.5.0).

use super::{db_err, PgLocation};
use crate::error::{Error, Result};
use tokio_postgres::Client;

/// The schema version this docfuse writes and reads.
pub const SCHEMA_VERSION: i32 = 4;

/// HNSW graph parameters of `vectors.embedding` (pgvector's defaults, recorded here and
/// in the migration): `m`, `ef_construction`.
pub const HNSW_M: i32 = 16;
pub const HNSW_EF_CONSTRUCTION: i32 = 64;

/// (version, what it adds, SQL with `{s}` for the schema).
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "roots, documents, chunks, vectors (vector(384), HNSW cosine), the published generation",
    "CREATE TABLE {s}.roots (position integer PRIMARY KEY, path text NOT NULL UNIQUE);
     CREATE TABLE {s}.documents (
       root text NOT NULL, path text NOT NULL, sha256 text NOT NULL, size bigint NOT NULL,
       chunks_digest text NOT NULL, body bytea NOT NULL, PRIMARY KEY (root, path));
     CREATE TABLE {s}.chunks (
       root text NOT NULL, path text NOT NULL, seq integer NOT NULL, id text NOT NULL,
       content_hash text NOT NULL, embed_hash text, PRIMARY KEY (root, path, seq),
       FOREIGN KEY (root, path) REFERENCES {s}.documents (root, path) ON DELETE CASCADE);
     CREATE INDEX chunks_embed_hash ON {s}.chunks (embed_hash);
     CREATE TABLE {s}.vectors (
       embed_hash text PRIMARY KEY, identity_key text NOT NULL, embedding vector(384) NOT NULL);
     CREATE INDEX vectors_hnsw ON {s}.vectors USING hnsw (embedding vector_cosine_ops)
       WITH (m = 16, ef_construction = 64);
     CREATE TABLE {s}.published (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       generation bigint NOT NULL, epoch text NOT NULL, published_at timestamptz NOT NULL DEFAULT now(),
       writer text NOT NULL, manifest jsonb NOT NULL, identity jsonb);",
    ),
    (
        2,
        "the first two moments of the published vectors (a query's cosine mean and sd)",
        "ALTER TABLE {s}.published ADD COLUMN moments bytea;",
    ),
    (
        3,
        "the tail windows of long chunks: their embedding hashes, in order (vectors by hash)",
        "ALTER TABLE {s}.chunks ADD COLUMN tail_hashes text[];
         CREATE INDEX chunks_tail_hashes ON {s}.chunks USING gin (tail_hashes);",
    ),
    (
        4,
        "the embedding queue: inputs of the published generation without a vector, for embedding workers",
        "CREATE TABLE {s}.embed_queue (
           embed_hash text PRIMARY KEY, identity_key text NOT NULL, input bytea NOT NULL,
           queued_at timestamptz NOT NULL DEFAULT clock_timestamp());
         CREATE INDEX embed_queue_order ON {s}.embed_queue (identity_key, queued_at);",
    ),
];

/// Brings the schema to [`SCHEMA_VERSION`]: creates it and the migrations table when
/// missing, checks the `vector` extension, and applies each missing migration in its own
/// transaction. Returns the versions applied.
///
/// # Errors
/// [`Error::Database`] when the database holds a newer schema version, the extension is
/// missing and cannot be created, or a statement fails.
pub async fn migrate(client: &mut Client, loc: &PgLocation) -> Result<Vec<i32>> {
    ensure_vector_extension(client, loc).await?;
    refuse_foreign(client, loc).await?;
    let s = format!("\"{}\"", loc.schema);
    // created only when missing: a writer role with rights on the tables alone (no
    // CREATE on the database or the schema) refreshes an index made by another role
    let held: bool = client
        .query_one(
            "SELECT to_regclass(format('%I.schema_migrations', $1::text)) IS NOT NULL",
            &[&loc.schema],
        )
        .await
        .map_err(|e| db_err(loc, "cannot look for the schema", e))?
        .get(0);
    if !held {
        client
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {s};
                 CREATE TABLE IF NOT EXISTS {s}.schema_migrations (
                   version integer PRIMARY KEY, description text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now());"
            ))
            .await
            .map_err(|e| db_err(loc, "cannot create the schema", e))?;
    }
    let have = version(client, loc).await?.unwrap_or(0);
    if have > SCHEMA_VERSION {
        return Err(newer(loc, have));
    }
    let mut applied = Vec::new();
    for (v, what, sql) in MIGRATIONS.iter().filter(|(v, _, _)| *v > have) {
        let tx = client
            .transaction()
            .await
            .map_err(|e| db_err(loc, "cannot start a migration", e))?;
        tx.batch_execute(&sql.replace("{s}", &s))
            .await
            .map_err(|e| db_err(loc, &format!("migration {v} failed"), e))?;
        tx.execute(
            &format!("INSERT INTO {s}.schema_migrations (version, description) VALUES ($1, $2)"),
            &[v, what],
        )
        .await
        .map_err(|e| db_err(loc, "cannot record a migration", e))?;
        tx.commit()
            .await
            .map_err(|e| db_err(loc, &format!("migration {v} failed"), e))?;
        applied.push(*v);
    }
    Ok(applied)
}

/// Checks that the schema holds exactly [`SCHEMA_VERSION`], for readers.
///
/// # Errors
/// [`Error::NoIndex`]-like [`Error::Database`] when no docfuse schema is there; a newer
/// or older version says what to do.
pub async fn check(client: &Client, loc: &PgLocation) -> Result<()> {
    match version(client, loc).await? {
        None | Some(0) => Err(Error::Database(format!(
            "no docfuse index in `{}` (schema `{}`)\nhint: build one with `docfuse index --index {} <ROOT>...`",
            loc.shown, loc.schema, loc.shown
        ))),
        Some(v) if v > SCHEMA_VERSION => Err(newer(loc, v)),
        Some(v) if v < SCHEMA_VERSION => Err(Error::Database(format!(
            "the docfuse schema in `{}` is version {v}, older than this docfuse's {SCHEMA_VERSION}\nhint: run `docfuse refresh --index {}` once to migrate it",
            loc.shown, loc.shown
        ))),
        Some(_) => Ok(()),
    }
}

/// The schema's version: `None` when docfuse's migrations table is missing.
async fn version(client: &Client, loc: &PgLocation) -> Result<Option<i32>> {
    let table = format!("\"{}\".schema_migrations", loc.schema);
    let row = client
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .await
        .map_err(|e| db_err(loc, "cannot read the schema version", e))?;
    if !row.get::<_, bool>(0) {
        return Ok(None);
    }
    let row = client
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {table}"),
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot read the schema version", e))?;
    Ok(Some(row.get(0)))
}

/// A schema that holds tables but not docfuse's migrations table belongs to someone
/// else: docfuse writes nothing there.
async fn refuse_foreign(client: &Client, loc: &PgLocation) -> Result<()> {
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE c.relname <> 'schema_migrations'),
                    count(*) FILTER (WHERE c.relname = 'schema_migrations')
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm')",
            &[&loc.schema],
        )
        .await
        .map_err(|e| db_err(loc, "cannot list the schema's tables", e))?;
    let (others, ours): (i64, i64) = (row.get(0), row.get(1));
    if others > 0 && ours == 0 {
        return Err(Error::Database(format!(
            "schema `{}` in `{}` holds {others} table(s) that are not docfuse's: nothing was written\nhint: give docfuse a schema of its own with `?schema=NAME`",
            loc.schema, loc.shown
        )));
    }
    Ok(())
}

fn newer(loc: &PgLocation, v: i32) -> Error {
    Error::Database(format!(
        "the docfuse schema in `{}` is version {v}, written by a newer docfuse (this one knows {SCHEMA_VERSION})\nhint: upgrade docfuse",
        loc.shown
    ))
}

/// pgvector must be installed in the database; a user without the right to create it
/// gets the statement an administrator runs.
async fn ensure_vector_extension(client: &Client, loc: &PgLocation) -> Result<()> {
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_extension WHERE extname = 'vector'",
            &[],
        )
        .await
        .map_err(|e| db_err(loc, "cannot list the extensions", e))?;
    if row.get::<_, i64>(0) > 0 {
        return Ok(());
    }
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
        .map_err(|e| {
            Error::Database(format!(
                "the pgvector extension is not installed in `{}` and cannot be created ({e})\nhint: an administrator runs `CREATE EXTENSION vector;` in that database (pgvector ≥ 0.5)",
                loc.shown
            ))
        })
}
