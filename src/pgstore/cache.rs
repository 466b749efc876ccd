//! The local caches of a database index: the folder a reader answers from, brought to
//! the published generation by writing the documents' text under a mirror folder and
//! refreshing a lexical folder index over it. It holds no vectors: the vector side is
//! searched in the database ([`super::PgVectors`]).

use super::read::{documents, roots, vector_counts, Docs};
use super::{block_on, check, connect, published, PgLocation, Published};
use crate::config::IndexConfig;
use crate::embed::EmbedderIdentity;
use crate::error::{Error, Result};
use crate::generation::{acquire_writer_lock, Source};
use crate::read::EmbedderInfo;
use crate::write::{build, BuildOptions};
use std::path::{Component, Path, PathBuf};

/// Where the local caches of database indexes live: `DOCFUSE_PG_CACHE`, else
/// `$XDG_CACHE_HOME/docfuse/pg`, else `~/.cache/docfuse/pg`, else a folder under the
/// system's temporary folder.
pub fn cache_base() -> PathBuf {
    if let Some(d) = std::env::var_os("DOCFUSE_PG_CACHE").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    match crate::fsio::user_cache_dir() {
        Some(d) => d.join("pg"),
        None => std::env::temp_dir().join("docfuse-pg-cache"),
    }
}

/// A reader's cache, at the database's published generation.
#[derive(Debug, Clone)]
pub struct ReaderCache {
    /// The folder index to answer from.
    pub index_dir: PathBuf,
    /// The database generation it holds.
    pub generation: i64,
    /// The schema's epoch it holds ([`super::Published::epoch`]).
    pub epoch: String,
    /// Documents written to the mirror in this sync (0 when it was current).
    pub written: u64,
    /// The embedder of the database's vectors (`None`: the index has none).
    pub embedder: Option<EmbedderInfo>,
    /// Chunks with a vector in the database, and chunks pending one.
    pub vectors: (u64, u64),
    /// The seal of the cache folder's manifest that holds `generation` (`None` for a
    /// cache an older docfuse recorded): a folder generation published after it holds a
    /// later database generation, named in its own manifest.
    pub seal: Option<String>,
}

/// File in a cache folder recording the database generation it holds.
const SYNCED_FILE: &str = "synced.json";

/// Brings this host's reader cache of `loc` to the published generation (at once when
/// it is there already) and returns it. Everything is read in one `REPEATABLE READ`
/// snapshot, so a publish committed meanwhile is never half taken. The cache is
/// lexical: nothing is embedded and no vector is copied.
///
/// # Errors
/// [`Error::Database`] (no index, no roots, unknown schema version, connection); a
/// build error of the cache folder.
pub fn sync_reader(loc: &PgLocation) -> Result<ReaderCache> {
    let base = cache_dir(loc)?.join("reader");
    let index_dir = base.join("index");
    let limit = read_limit();
    let fetched = block_on(async {
        tokio::time::timeout(limit, fetch(loc, &base, &index_dir))
            .await
            .map_err(|_| {
                Error::Database(format!(
                    "cannot connect to `{}`: no answer to a read within {} s\nhint: the server may be overloaded or a table locked (DOCFUSE_PG_READ_TIMEOUT_SECS waits longer)",
                    loc.shown,
                    limit.as_secs()
                ))
            })?
    })?;
    let f = match fetched {
        Fetched::Current(c) => return Ok(c),
        Fetched::New(f) => *f,
    };
    let (mirror_roots, written) = write_mirror(&base.join("mirror"), &f.roots, &f.docs)?;
    let seal = rebuild(&index_dir, &f.published, mirror_roots, &f.roots)?;
    let embedder = f.identity.map(|id| EmbedderInfo {
        model: id.model.clone(),
        identity_key: id.key(),
        dim: id.dim,
    });
    let held = Synced {
        epoch: f.published.epoch.clone(),
        generation: f.published.generation,
        embedder: embedder.clone(),
        vectors: f.vectors,
        folder: None,
        seal: Some(seal.clone()),
    };
    record(&base, &held)?;
    drop(f.lock);
    Ok(ReaderCache {
        index_dir,
        generation: f.published.generation,
        epoch: f.published.epoch,
        written,
        embedder,
        vectors: f.vectors,
        seal: Some(seal),
    })
}

/// Seconds a reader's queries may take in all (`DOCFUSE_PG_READ_TIMEOUT_SECS`, default 60):
/// a stalled connection or a locked table is an error (and a copy answers), not a hang.
pub(super) fn read_limit() -> std::time::Duration {
    let secs = std::env::var("DOCFUSE_PG_READ_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&s: &u64| s > 0)
        .unwrap_or(60);
    std::time::Duration::from_secs(secs)
}

/// What a sync read from the database.
enum Fetched {
    /// The cache already holds the published generation.
    Current(ReaderCache),
    New(Box<NewGeneration>),
}

struct NewGeneration {
    published: Published,
    roots: Vec<String>,
    docs: Docs,
    identity: Option<EmbedderIdentity>,
    vectors: (u64, u64),
    /// This host's sync lock, held until the cache is written.
    lock: crate::generation::WriterLock,
}

/// Reads the published generation in one snapshot, unless the cache holds it already.
async fn fetch(loc: &PgLocation, base: &Path, index_dir: &Path) -> Result<Fetched> {
    let mut client = connect(loc).await?;
    check(&client, loc).await?;
    let p = published(&client, loc)
        .await?
        .ok_or_else(|| no_index(loc))?;
    if let Some(c) = current(base, index_dir, &p) {
        return Ok(Fetched::Current(c));
    }
    std::fs::create_dir_all(base).map_err(|e| Error::io("create", base, e))?;
    let lock = acquire_writer_lock(base, true, &mut |_| {})?;
    let tx = super::read::snapshot(&mut client, loc).await?;
    let read = read_generation(&tx, loc, base, index_dir).await;
    // ended here, not left to the connection's drop: the server sees a clean end
    let _ = tx.commit().await;
    Ok(match read? {
        Ok(current) => Fetched::Current(current),
        Err((published, roots, docs, identity, vectors)) => Fetched::New(Box::new(NewGeneration {
            published,
            roots,
            docs,
            identity,
            vectors,
            lock,
        })),
    })
}

/// What one snapshot holds, for [`fetch`].
type Snapshot = (
    Published,
    Vec<String>,
    Docs,
    Option<EmbedderIdentity>,
    (u64, u64),
);

/// The cache when it holds the snapshot's generation already (another process of this
/// host may have synced while this one waited), else the snapshot.
async fn read_generation(
    tx: &tokio_postgres::Transaction<'_>,
    loc: &PgLocation,
    base: &Path,
    index_dir: &Path,
) -> Result<std::result::Result<ReaderCache, Snapshot>> {
    let p = published(tx, loc).await?.ok_or_else(|| no_index(loc))?;
    if let Some(c) = current(base, index_dir, &p) {
        return Ok(Ok(c));
    }
    let roots = roots(tx, loc).await?;
    if roots.is_empty() {
        return Err(Error::Database(format!(
            "the index in `{}` (schema `{}`) has no roots: every root was dropped\nhint: add one with `docfuse index --index {} <ROOT>...`",
            loc.shown, loc.schema, loc.shown
        )));
    }
    let docs = documents(tx, loc).await?;
    let identity = identity_of(&p)?;
    // an index built without vectors has none pending
    let vectors = match p.manifest["embeddings"]["wanted"].as_bool() {
        Some(false) => (0, 0),
        _ => vector_counts(tx, loc).await?,
    };
    Ok(Err((p, roots, docs, identity, vectors)))
}

/// This host's reader cache of `loc` as it is, without asking the database: its folder
/// and the database generation it holds, when there is one (for answering while the
/// database cannot be reached).
pub fn cached_reader(loc: &PgLocation) -> Option<ReaderCache> {
    let base = cache_base().join(loc.cache_key()).join("reader");
    let index_dir = base.join("index");
    let held = synced(&base)?;
    index_dir
        .join("manifest.json")
        .is_file()
        .then_some(ReaderCache {
            index_dir,
            generation: held.generation,
            epoch: held.epoch,
            written: 0,
            embedder: held.embedder,
            vectors: held.vectors,
            seal: held.seal,
        })
}

/// This host's folder for `loc`'s caches (created private to the user).
fn cache_dir(loc: &PgLocation) -> Result<PathBuf> {
    let dir = cache_base().join(loc.cache_key());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(dir)
}

/// The writer folder's base for `loc` (`<cache>/<key>/writer`).
///
/// # Errors
/// [`Error::Io`] when the cache folder cannot be made.
pub fn writer_base(loc: &PgLocation) -> Result<PathBuf> {
    Ok(cache_dir(loc)?.join("writer"))
}

/// The cache when it already holds `p`'s epoch and generation in this docfuse's format
/// (a cache an older docfuse wrote is rebuilt, even when the database did not change).
fn current(base: &Path, index_dir: &Path, p: &Published) -> Option<ReaderCache> {
    let held = synced(base)?;
    (held.epoch == p.epoch
        && held.generation == p.generation
        && crate::store::Manifest::load(index_dir).is_ok())
    .then(|| ReaderCache {
        index_dir: index_dir.to_path_buf(),
        generation: p.generation,
        epoch: p.epoch.clone(),
        written: 0,
        embedder: held.embedder,
        vectors: held.vectors,
        seal: held.seal,
    })
}

fn no_index(loc: &PgLocation) -> Error {
    Error::Database(format!(
        "no docfuse index is published in `{}` (schema `{}`) yet\nhint: build one with `docfuse index --index {} <ROOT>...`",
        loc.shown, loc.schema, loc.shown
    ))
}

/// The embedder identity of the published vectors.
pub(super) fn identity_of(p: &Published) -> Result<Option<EmbedderIdentity>> {
    match &p.identity {
        None => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
            Error::Database(format!(
                "the published embedder identity does not parse: {e}"
            ))
        }),
    }
}

/// Refreshes the cache index over the mirror roots (`r0`, `r1`, … in the database's
/// order) with the published settings. Mirror roots only ever grow or shrink at the end,
/// so a refresh that drops the ones past the database's count keeps chunk ordinals in
/// the database's order; the folder is never deleted under a running server. The new
/// generation's manifest names `p`'s generation ([`crate::store::Manifest::store_generation`]);
/// returns the seal of the manifest served now.
fn rebuild(
    index_dir: &Path,
    p: &Published,
    mirror_roots: Vec<PathBuf>,
    roots: &[String],
) -> Result<String> {
    let overrides = p.manifest["config_overrides"].clone();
    let config = IndexConfig::with_overrides(&overrides)?;
    let held: Vec<PathBuf> = match crate::store::Manifest::load(index_dir).map(|m| m.source) {
        Ok(crate::store::SourceSpec::Roots { roots }) => {
            roots.into_iter().map(PathBuf::from).collect()
        }
        _ => Vec::new(),
    };
    let opts = BuildOptions {
        config,
        config_overrides: overrides,
        embeddings: false,
        drop_roots: held
            .into_iter()
            .filter(|r| !mirror_roots.contains(r))
            .collect(),
        // links between roots resolve as on the writer's machine
        link_roots: Some(roots.to_vec()),
        store_generation: u64::try_from(p.generation).ok(),
        ..Default::default()
    };
    build(index_dir, &Source::Roots(mirror_roots), &opts, &mut |_| {})?;
    // the manifest now served (a build that changed nothing leaves the one before)
    Ok(crate::store::Manifest::load(index_dir)?.seal)
}

/// Writes every document's text under `mirror/<root position>/<path>` (only files whose
/// text differs), deletes the files and roots the database no longer holds, and
/// returns the mirror roots in the database's order and the files written.
fn write_mirror(mirror: &Path, roots: &[String], docs: &Docs) -> Result<(Vec<PathBuf>, u64)> {
    let mut written = 0;
    let dirs: Vec<PathBuf> = (0..roots.len())
        .map(|i| mirror.join(format!("r{i}")))
        .collect();
    for d in &dirs {
        std::fs::create_dir_all(d).map_err(|e| Error::io("create", d, e))?;
    }
    let mut keep = std::collections::HashSet::new();
    for (root, rel) in docs.keys() {
        if let Some(i) = roots.iter().position(|r| r == root) {
            keep.insert(dirs[i].join(safe_rel(rel)?));
        }
    }
    // files and roots the database no longer holds go first, so a path that turned
    // from a file into a folder (or back) can be written
    remove_others(mirror, &keep, &dirs)?;
    for ((root, rel), (_, body)) in docs {
        let Some(i) = roots.iter().position(|r| r == root) else {
            continue;
        };
        let rel_path = safe_rel(rel)?;
        let path = dirs[i].join(rel_path);
        if std::fs::read(&path).is_ok_and(|b| b == *body) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        replace_file(&path, body)?;
        written += 1;
    }
    Ok((dirs, written))
}

/// Writes `body` to `path` by renaming a written temporary file over it: a server
/// reading the mirror meanwhile sees the old text or the new, never a part. No fsync:
/// the mirror is a cache, written again by the next sync.
fn replace_file(path: &Path, body: &[u8]) -> Result<()> {
    let tmp = crate::fsio::temp_beside(path);
    std::fs::write(&tmp, body).map_err(|e| Error::io("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("rename into place", path, e)
    })
}

/// A document path from the database as a relative path: plain components only.
fn safe_rel(rel: &str) -> Result<PathBuf> {
    let p = Path::new(rel);
    if rel.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(Error::Database(format!(
            "the database holds a document path that is not a plain relative path: `{rel}`"
        )));
    }
    Ok(p.to_path_buf())
}

/// Deletes every file under `mirror` not in `keep`, and root folders not in `dirs`.
fn remove_others(
    mirror: &Path,
    keep: &std::collections::HashSet<PathBuf>,
    dirs: &[PathBuf],
) -> Result<()> {
    let entries = std::fs::read_dir(mirror).map_err(|e| Error::io("read", mirror, e))?;
    for e in entries.flatten() {
        let p = e.path();
        if !dirs.contains(&p) {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
    for d in dirs {
        remove_files_not_kept(d, keep);
    }
    Ok(())
}

fn remove_files_not_kept(dir: &Path, keep: &std::collections::HashSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => remove_files_not_kept(&p, keep),
            _ if !keep.contains(&p) => {
                let _ = std::fs::remove_file(&p);
            }
            _ => {}
        }
    }
}

/// What a cache folder holds, recorded in [`SYNCED_FILE`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Synced {
    epoch: String,
    generation: i64,
    #[serde(default)]
    embedder: Option<EmbedderInfo>,
    /// Chunks with a vector in the database, and pending.
    #[serde(default)]
    vectors: (u64, u64),
    /// sha256 of the writer folder's manifest that holds the database's generation (a
    /// folder published after it — a database publish that failed, a seed — is not the
    /// database's).
    #[serde(default)]
    folder: Option<String>,
    /// A reader cache's: the seal of its folder's manifest that holds `generation`.
    #[serde(default)]
    seal: Option<String>,
}

fn synced(base: &Path) -> Option<Synced> {
    let bytes = std::fs::read(base.join(SYNCED_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn record(base: &Path, held: &Synced) -> Result<()> {
    let path = base.join(SYNCED_FILE);
    let text = serde_json::to_string(held).unwrap_or_default();
    crate::store::write_atomic(&path, text.as_bytes())
}

/// Records the database epoch and generation a writer folder holds, and the sha256 of the
/// folder's manifest that holds it.
///
/// # Errors
/// [`Error::Io`] when it cannot be written.
pub fn record_synced(base: &Path, epoch: &str, generation: i64, folder: &str) -> Result<()> {
    record(
        base,
        &Synced {
            epoch: epoch.to_string(),
            generation,
            embedder: None,
            vectors: (0, 0),
            folder: Some(folder.to_string()),
            seal: None,
        },
    )
}

/// The database epoch and generation a writer folder holds, and the sha256 of the
/// folder's manifest that holds them, if recorded.
pub fn synced_generation(base: &Path) -> Option<(String, i64, Option<String>)> {
    synced(base).map(|s| (s.epoch, s.generation, s.folder))
}
