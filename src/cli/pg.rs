//! `--index postgres://…` for every command: a reader answers from this host's cache
//! folder, synced to the database's published generation first; a writer (`index`,
//! `refresh`) takes the database's writer lock, runs the command on this host's writer
//! folder (vectors the database holds are not embedded again) and publishes the result
//! in one transaction.

use super::build_run::{run_build, Vectors};
use crate::embed::Embedder;
use crate::engine::{BuildOptions, Source};
use crate::pgstore::{self, PgLocation, Prefetched};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::runtime::Runtime;

/// True when `--index` names a database.
pub fn is_db(index: &Path) -> bool {
    index.to_str().is_some_and(pgstore::is_database_url)
}

/// The folder a reader opens for `--index`: the folder itself, or for a database URL
/// this host's cache synced to the published generation.
pub fn reader_dir(index: &Path) -> anyhow::Result<PathBuf> {
    if !is_db(index) {
        return Ok(index.to_path_buf());
    }
    let loc = location(index)?;
    let cache = pgstore::sync_reader(&loc)?;
    if cache.written > 0 {
        eprintln!(
            "synced generation {} of `{}`: {} document(s) updated in `{}`",
            cache.generation,
            loc.shown,
            cache.written,
            cache.index_dir.display()
        );
    }
    Ok(cache.index_dir)
}

fn location(index: &Path) -> anyhow::Result<PgLocation> {
    let url = index.to_str().unwrap_or_default();
    Ok(PgLocation::parse(url)?)
}

/// A writer's hold on a database: its runtime and connection (which holds the advisory
/// lock until dropped) and its writer folder.
pub struct DbWriter {
    rt: Runtime,
    client: tokio_postgres::Client,
    loc: PgLocation,
    /// This host's folder index of the database (`<cache>/<key>/writer/index`).
    pub dir: PathBuf,
    base: PathBuf,
    /// Every embedder handed out (the seeding build's and the command's), for the counts.
    prefetched: std::sync::Mutex<Vec<Arc<Prefetched>>>,
}

impl DbWriter {
    /// `vectors` with its embedder answering first from the database's vectors of the
    /// same identity.
    pub fn wrap(&self, vectors: Vectors) -> anyhow::Result<Vectors> {
        let Some(inner) = vectors.embedder else {
            return Ok(vectors);
        };
        let identity = inner.identity().clone();
        let key = identity.key();
        let held = self
            .rt
            .block_on(pgstore::vectors_of(&self.client, &self.loc, &key))?;
        let p = Arc::new(Prefetched::new(identity, held, Some(inner)));
        self.prefetched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p.clone());
        Ok(Vectors {
            embedder: Some(Box::new(Shared(p))),
            ..vectors
        })
    }
}

/// An `Arc<Prefetched>` as a boxed embedder, so its counts can be read after the build.
struct Shared(Arc<Prefetched>);

impl Embedder for Shared {
    fn identity(&self) -> &crate::embed::EmbedderIdentity {
        self.0.identity()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<f32>> {
        self.0.embed(texts)
    }
    fn use_cache_dir(&self, dir: &Path) {
        self.0.use_cache_dir(dir)
    }
    fn prepare_cache(&self, dir: &Path) -> crate::Result<bool> {
        self.0.prepare_cache(dir)
    }
    fn used_cache(&self) -> bool {
        self.0.used_cache()
    }
}

/// Runs a write command on a database index: lock, migrate, bring the writer folder to
/// the published generation, `run(writer)` (the command on `writer.dir`), publish.
pub fn write(
    index: &Path,
    no_wait: bool,
    run: impl FnOnce(&DbWriter) -> anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    let loc = location(index)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut client = rt.block_on(pgstore::connect(&loc))?;
    if rt
        .block_on(pgstore::lock_writer(&client, &loc, true))
        .is_err()
    {
        if no_wait {
            rt.block_on(pgstore::lock_writer(&client, &loc, true))?;
        }
        eprintln!("waiting for another docfuse writing `{}`…", loc.shown);
        rt.block_on(pgstore::lock_writer(&client, &loc, false))?;
    }
    let applied = rt.block_on(pgstore::migrate(&mut client, &loc))?;
    if !applied.is_empty() {
        eprintln!(
            "`{}`: schema `{}` migrated to version {}",
            loc.shown,
            loc.schema,
            pgstore::SCHEMA_VERSION
        );
    }
    let base = pgstore::cache_base().join(loc.cache_key()).join("writer");
    let w = DbWriter {
        dir: base.join("index"),
        base,
        loc,
        client,
        rt,
        prefetched: Default::default(),
    };
    seed(&w)?;
    let code = run(&w)?;
    publish(&mut { w })?;
    Ok(code)
}

/// A writer folder that is not at the database's published generation (a new host,
/// another writer published since) is built again from the database's roots, as they
/// are on this host, with the database's vectors.
fn seed(w: &DbWriter) -> anyhow::Result<()> {
    let Some(p) = w.rt.block_on(pgstore::published(&w.client, &w.loc))? else {
        return Ok(());
    };
    if pgstore::synced_generation(&w.base) == Some(p.generation)
        && w.dir.join("manifest.json").is_file()
    {
        return Ok(());
    }
    if w.dir.exists() {
        std::fs::remove_dir_all(&w.dir)?;
    }
    let roots: Vec<PathBuf> =
        w.rt.block_on(pgstore::root_paths(&w.client, &w.loc))?
            .into_iter()
            .map(PathBuf::from)
            .collect();
    if roots.is_empty() {
        return Ok(());
    }
    eprintln!(
        "this host's copy of `{}` is not at generation {}: reading its {} root(s) again",
        w.loc.shown,
        p.generation,
        roots.len()
    );
    let overrides = p.manifest["config_overrides"].clone();
    let vectors = w.wrap(Vectors::load(p.identity.is_some()))?;
    let opts = BuildOptions {
        config: crate::config::IndexConfig::with_overrides(&overrides)?,
        config_overrides: overrides,
        embeddings: vectors.wanted,
        embedder: vectors.embedder.as_deref(),
        embedder_unavailable: vectors.unavailable.as_deref(),
        ..Default::default()
    };
    run_build(&w.dir, &Source::Roots(roots), &opts)?;
    Ok(())
}

/// Publishes the writer folder's generation and records it as this host's.
fn publish(w: &mut DbWriter) -> anyhow::Result<()> {
    let ex = crate::engine::export(&w.dir)?;
    let writer = format!(
        "docfuse {} on {}",
        env!("CARGO_PKG_VERSION"),
        std::env::var("HOSTNAME").unwrap_or_else(|_| "this host".into())
    );
    let r =
        w.rt.block_on(pgstore::publish(&mut w.client, &w.loc, &ex, &writer))?;
    pgstore::record_synced(&w.base, r.generation)?;
    let (found, embedded) = w
        .prefetched
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .fold((0, 0), |(f, e), p| (f + p.found(), e + p.embedded()));
    eprintln!(
        "{} generation {} to `{}`: documents +{} -{}, {} chunk rows, vectors +{} -{}; {} vector(s) taken from the database, {} embedded",
        if r.skipped { "kept" } else { "published" },
        r.generation,
        w.loc.shown,
        r.documents_written,
        r.documents_deleted,
        r.chunks_written,
        r.vectors_written,
        r.vectors_deleted,
        found,
        embedded
    );
    Ok(())
}
