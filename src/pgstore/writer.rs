//! PostgreSQL as an [`IndexStore`] for a writer: the session advisory lock, the published
//! row as the commit point, documents, chunks and vectors read from the database, and
//! this host's writer folder (`<cache>/<key>/writer/index`) as the folder generations
//! are staged in. A publish publishes the staged generation in the folder first, then
//! the difference in the database in one transaction ([`super::publish`]); the folder
//! records the database generation it holds, so the next writer on this host knows
//! whether its folder is the database's.

use super::{lock_writer, migrate, PgLocation, PublishReport, Published};
use crate::error::{Error, Result};
use crate::generation::LockWait;
use crate::write::{
    FolderStore, IndexStore, Publication, Staged, StoreLock, StoreSnapshot, StoredChunk, StoredDoc,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokio::runtime::Runtime;
use tokio_postgres::Client;

/// A database index opened for writing (the writer lock is held until it is dropped).
pub struct PgStore {
    rt: Runtime,
    client: Client,
    loc: PgLocation,
    base: PathBuf,
    folder: FolderStore,
    published: Option<Published>,
    migrated: Vec<i32>,
    reports: Vec<PublishReport>,
    found: u64,
}

impl PgStore {
    /// Connects to `loc`, takes its writer lock (when another writer holds it: fails at
    /// once with [`LockWait::No`], else calls `waiting` once and waits, at most the given
    /// time with [`LockWait::For`]), applies the schema's missing migrations and reads the
    /// published row.
    ///
    /// # Errors
    /// [`Error::Database`]: the connection, the lock (busy with [`LockWait::No`], or still
    /// busy at the end of a bounded wait), a migration or a read failed; [`Error::Io`]
    /// when this host's writer folder cannot be made.
    pub fn open(loc: &PgLocation, wait: LockWait, waiting: &mut dyn FnMut()) -> Result<PgStore> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Database(format!("cannot start a runtime for PostgreSQL: {e}")))?;
        let mut client = rt.block_on(super::connect(loc))?;
        if rt.block_on(lock_writer(&client, loc, true)).is_err() {
            match wait {
                LockWait::No => rt.block_on(lock_writer(&client, loc, true))?,
                LockWait::Forever => {
                    waiting();
                    rt.block_on(lock_writer(&client, loc, false))?
                }
                LockWait::For(limit) => {
                    waiting();
                    rt.block_on(lock_within(&client, loc, limit))?
                }
            }
        }
        let migrated = rt.block_on(migrate(&mut client, loc))?;
        let base = super::writer_base(loc)?;
        let published = rt.block_on(super::published(&client, loc))?;
        Ok(PgStore {
            folder: FolderStore::new(&base.join("index")),
            rt,
            client,
            loc: loc.clone(),
            base,
            published,
            migrated,
            reports: Vec::new(),
            found: 0,
        })
    }

    /// The database.
    pub fn location(&self) -> &PgLocation {
        &self.loc
    }

    /// The schema versions [`PgStore::open`] applied.
    pub fn migrated(&self) -> &[i32] {
        &self.migrated
    }

    /// The database's published row (as of the last publish of this store, or its
    /// opening).
    pub fn published_row(&self) -> Option<&Published> {
        self.published.as_ref()
    }

    /// True when the staging folder holds the database's published generation: this
    /// host's last publish recorded the database's epoch and generation with the folder's
    /// generation that holds them, and the folder is still at that generation (a folder
    /// published after it — a database publish that failed, a seed — is not); or the
    /// database has none.
    pub fn staging_current(&self) -> bool {
        let Some(p) = &self.published else {
            return true;
        };
        let folder = manifest_sha256(self.folder.dir());
        let held = super::synced_generation(&self.base);
        folder.is_some() && held == Some((p.epoch.clone(), p.generation, folder))
    }

    /// The store for a seed: a build that brings the staging folder to the database's
    /// roots as they are on this host, publishing into the folder only (the command's
    /// build then publishes into the database, once). Vectors come from the database by
    /// embedding hash as for any build.
    pub fn seeding(&mut self) -> Seeding<'_> {
        Seeding(self)
    }

    /// Removes the staging folder's index (not its `packs/`, the unpacked docs packs that
    /// are roots, nor the resumable embedding cache, whose vectors are keyed by hash), so
    /// the next build reads its roots again.
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be removed.
    pub fn clear_staging(&self) -> Result<()> {
        // the vectors of the folder's generation (embedded by a build whose database
        // publish failed) go to the resumable cache first: not embedded again
        match crate::write::keep_vectors(self.folder.dir()) {
            Ok(n) if n > 0 => tracing::debug!("{n} vectors of the writer folder kept by hash"),
            Ok(_) => {}
            Err(e) => tracing::warn!("the writer folder's vectors are not kept ({e})"),
        }
        wipe_keeping_packs(self.folder.dir())
    }

    /// The database's roots in their order.
    ///
    /// # Errors
    /// [`Error::Database`] on a failed query.
    pub fn roots(&self) -> Result<Vec<String>> {
        self.rt.block_on(super::root_paths(&self.client, &self.loc))
    }

    /// What each publish of this store did in the database, in order.
    pub fn reports(&self) -> &[PublishReport] {
        &self.reports
    }

    /// Vectors the database gave builds of this store by embedding hash (never
    /// embedded here).
    pub fn vectors_found(&self) -> u64 {
        self.found
    }
}

impl IndexStore for PgStore {
    fn shown(&self) -> String {
        self.loc.shown.clone()
    }

    fn staging_dir(&self) -> &Path {
        self.folder.dir()
    }

    fn staging_is_published(&self) -> bool {
        self.staging_current()
    }

    fn lock(
        &mut self,
        wait: crate::generation::LockWait,
        waiting: &mut dyn FnMut(),
    ) -> Result<StoreLock> {
        // the database's lock is held since `open`; the folder's keeps a writer that
        // works on the folder directly off it
        self.folder.lock(wait, waiting)
    }

    fn snapshot(&mut self) -> Result<Option<StoreSnapshot>> {
        let Some(p) = &self.published else {
            return Ok(None);
        };
        let generation = p.generation.max(0) as u64;
        let docs = self
            .rt
            .block_on(super::read::document_hashes(&self.client, &self.loc))?;
        Ok(Some(StoreSnapshot {
            generation,
            documents: docs
                .into_iter()
                .map(|(root, path, sha256)| StoredDoc { root, path, sha256 })
                .collect(),
        }))
    }

    fn chunks(&mut self) -> Result<Vec<StoredChunk>> {
        if self.published.is_none() {
            return Ok(Vec::new());
        }
        self.rt
            .block_on(super::read::chunk_hashes(&self.client, &self.loc))
    }

    fn vectors(
        &mut self,
        identity_key: &str,
        hashes: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>> {
        let mut found = self.folder.vectors(identity_key, hashes)?;
        let rest: Vec<String> = hashes
            .iter()
            .filter(|h| !found.contains_key(**h))
            .map(|h| h.to_string())
            .collect();
        if rest.is_empty() || self.published.is_none() {
            return Ok(found);
        }
        let held = self.rt.block_on(super::read::vectors(
            &self.client,
            &self.loc,
            identity_key,
            Some(&rest),
        ))?;
        self.found += held.len() as u64;
        found.extend(held);
        Ok(found)
    }

    fn publish(&mut self, staged: Option<Staged>) -> Result<Publication> {
        self.folder.publish(staged)?;
        let folder = manifest_sha256(self.folder.dir()).unwrap_or_default();
        let ex = crate::generation::export(self.folder.dir())?;
        let writer = format!(
            "docfuse {} on {}",
            env!("CARGO_PKG_VERSION"),
            crate::fsio::host_name()
        );
        let r = self
            .rt
            .block_on(super::publish(&mut self.client, &self.loc, &ex, &writer))?;
        super::record_synced(&self.base, &r.epoch, r.generation, &folder)?;
        self.published = self
            .rt
            .block_on(super::published(&self.client, &self.loc))?;
        let publication = Publication {
            generation: r.generation.max(0) as u64,
            unchanged: r.skipped,
        };
        self.reports.push(r);
        Ok(publication)
    }
}

/// [`PgStore`] for a seed ([`PgStore::seeding`]): a publish goes into the staging folder
/// only.
pub struct Seeding<'a>(&'a mut PgStore);

impl IndexStore for Seeding<'_> {
    fn shown(&self) -> String {
        self.0.shown()
    }
    fn staging_dir(&self) -> &Path {
        self.0.staging_dir()
    }
    fn staging_is_published(&self) -> bool {
        self.0.staging_is_published()
    }
    fn lock(
        &mut self,
        wait: crate::generation::LockWait,
        waiting: &mut dyn FnMut(),
    ) -> Result<StoreLock> {
        self.0.lock(wait, waiting)
    }
    fn snapshot(&mut self) -> Result<Option<StoreSnapshot>> {
        self.0.snapshot()
    }
    fn chunks(&mut self) -> Result<Vec<StoredChunk>> {
        self.0.chunks()
    }
    fn vectors(
        &mut self,
        identity_key: &str,
        hashes: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>> {
        self.0.vectors(identity_key, hashes)
    }
    fn publish(&mut self, staged: Option<Staged>) -> Result<Publication> {
        self.0.folder.publish(staged)
    }
}

/// sha256 of the manifest of the folder index `dir` (which names its generation and
/// seals its contents), if it has one.
fn manifest_sha256(dir: &Path) -> Option<String> {
    let bytes = crate::fsio::read_regular(dir.join(crate::store::MANIFEST_FILE)).ok()?;
    Some(crate::hashing::sha256_hex(&bytes))
}

/// Removes the folder index at `dir` but its `packs/` and the resumable embedding cache.
fn wipe_keeping_packs(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name() == "packs" || e.file_name() == crate::write::EMBED_CACHE_FILE {
            continue;
        }
        let p = e.path();
        let gone = match e.file_type().is_ok_and(|t| t.is_dir()) {
            true => std::fs::remove_dir_all(&p),
            false => std::fs::remove_file(&p),
        };
        gone.map_err(|e| Error::io("remove", &p, e))?;
    }
    Ok(())
}

/// How often a bounded wait for the database's writer lock tries it again.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(200);

/// Tries `loc`'s writer lock every [`LOCK_RETRY`] for at most `limit` (`--wait-timeout`).
///
/// # Errors
/// [`Error::Database`] when a try fails, or the lock is still held at the end.
async fn lock_within(client: &Client, loc: &PgLocation, limit: std::time::Duration) -> Result<()> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match lock_writer(client, loc, true).await {
            Ok(()) => return Ok(()),
            Err(_) if tokio::time::Instant::now() >= deadline => {
                return Err(Error::Database(format!(
                    "another docfuse is writing the index in `{}` (schema `{}`): still writing after {:.1} s (`--wait-timeout`)\nhint: wait for it, or give a longer `--wait-timeout`",
                    loc.shown,
                    loc.schema,
                    limit.as_secs_f64()
                )))
            }
            Err(_) => tokio::time::sleep(LOCK_RETRY).await,
        }
    }
}
