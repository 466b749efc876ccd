//! `--index postgres://…` for every command: a reader answers from this host's cache
//! folder, synced to the database's published generation first; a writer (`index`,
//! `refresh`) takes the database's writer lock, runs the command on this host's writer
//! folder (vectors the database holds are not embedded again) and publishes the result
//! in one transaction.

use super::build_run::{run_build, Vectors};
use crate::embed::Embedder;
use crate::engine::{BuildOptions, Source};
use crate::pgstore::{self, Followed, PgLocation, Prefetched};
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
    let r = open(&loc)?;
    if r.cache.written > 0 {
        eprintln!(
            "synced generation {} of `{}`: {} document(s) updated in `{}`",
            r.cache.generation,
            loc.shown,
            r.cache.written,
            r.cache.index_dir.display()
        );
    }
    Ok(r.cache.index_dir)
}

/// `reader_dir` for `status`: also says on stderr which database, schema, schema version
/// and generation the cache holds.
pub fn status_dir(index: &Path) -> anyhow::Result<PathBuf> {
    if !is_db(index) {
        return Ok(index.to_path_buf());
    }
    let loc = location(index)?;
    let cache = open(&loc)?.cache;
    let (with, pending) = cache.vectors;
    let vectors = match &cache.embedder {
        Some(e) => format!(
            "{with} vectors of {} in the database, searched there ({pending} chunk(s) pending)",
            e.model
        ),
        None => "no vectors (built without them)".to_string(),
    };
    eprintln!(
        "database `{}`, schema `{}` (version {}): generation {}, {vectors}; answered from `{}` (freshness below is against the published generation; the writer checks the roots)",
        loc.shown,
        loc.schema,
        pgstore::SCHEMA_VERSION,
        cache.generation,
        cache.index_dir.display()
    );
    Ok(cache.index_dir)
}

/// The folder a server (`serve`, `mcp`) opens: for a database URL, the synced cache, kept
/// in step with later publishes by a thread that checks the database every
/// [`pgstore::POLL_MS`] ms and syncs when it moved on (the server follows the cache
/// folder's manifest, so answers switch between requests). While the database cannot be
/// reached the server answers from the cache it has, and says so once on stderr.
pub fn server_dir(index: &Path, watch: bool) -> anyhow::Result<PathBuf> {
    if !is_db(index) {
        return Ok(index.to_path_buf());
    }
    anyhow::ensure!(
        !watch,
        "`--watch` does not apply to a PostgreSQL index: the server follows the database's publishes by itself\nhint: run the writer (`docfuse refresh --index URL`) where the roots are"
    );
    let loc = location(index)?;
    let r = open(&loc)?;
    let shown = loc.shown.clone();
    pgstore::follow(loc, r.vectors, move |seen| match seen {
        Followed::Reachable => {
            eprintln!("`{shown}` is reachable again: following its publishes")
        }
        Followed::Serving {
            generation,
            written,
        } => eprintln!(
            "now serving generation {generation} of `{shown}` ({written} document(s) updated)"
        ),
        Followed::Failing(e) => eprintln!(
            "warning: {e}\nwarning: answering from this host's copy until the database is back"
        ),
    })?;
    Ok(r.cache.index_dir)
}

/// [`pgstore::open_reader`], saying on stderr when the answer comes from this host's copy.
fn open(loc: &PgLocation) -> anyhow::Result<pgstore::OpenedReader> {
    let r = pgstore::open_reader(loc)?;
    if let Some(first) = &r.copy {
        eprintln!(
            "warning: {first}\nwarning: answering from this host's copy of generation {}",
            r.cache.generation
        );
    }
    Ok(r)
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
    /// The database's published row when the writer started.
    published: Option<pgstore::Published>,
    /// Every embedder handed out (the seeding build's and the command's), for the counts.
    prefetched: std::sync::Mutex<Vec<Arc<Prefetched>>>,
    /// Whether `wrap` reads the database's vectors: only while the writer folder is not
    /// at the published generation. Once it is, its own generation holds every published
    /// vector by hash, and reading them all again would cost every refresh the whole
    /// vector table.
    fetch: std::cell::Cell<bool>,
}

impl DbWriter {
    /// `vectors` with its embedder answering first from the database's vectors of the
    /// same identity.
    ///
    /// # Errors
    /// Without a loaded model while the database holds vectors: publishing would drop
    /// them (every chunk of a writer folder read again would have none).
    pub fn wrap(&self, vectors: Vectors) -> anyhow::Result<Vectors> {
        let Some(inner) = vectors.embedder else {
            let held = self
                .published
                .as_ref()
                .is_some_and(|p| p.identity.is_some());
            anyhow::ensure!(
                !held,
                "`{}` holds vectors and this docfuse has no model to keep them ({}): nothing was published\nhint: provision the model on this host (`bash scripts/provision-models`) and run again",
                self.loc.shown,
                vectors.unavailable.as_deref().unwrap_or("--no-embeddings was given")
            );
            return Ok(vectors);
        };
        let identity = inner.identity().clone();
        let key = identity.key();
        let held = if self.fetch.get() {
            self.rt
                .block_on(pgstore::vectors_of(&self.client, &self.loc, &key))?
        } else {
            Default::default()
        };
        let p = Arc::new(Prefetched::new(identity, held, Some(inner), false));
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

/// `write` for a command whose `--index` is the database URL `index`: runs `run` with
/// `index` replaced by the writer folder.
pub fn write_command<A>(
    mut a: A,
    index: fn(&mut A) -> &mut PathBuf,
    run_args: &super::args::RunArgs,
    run: fn(A, Option<&DbWriter>) -> anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    let url = index(&mut a).clone();
    write(&url, run_args.no_wait, &DropRoots::of(run_args), |w| {
        *index(&mut a) = w.dir.clone();
        run(a, Some(w))
    })
}

/// Runs a write command on a database index: lock, migrate, bring the writer folder to
/// the published generation, `run(writer)` (the command on `writer.dir`), publish.
pub fn write(
    index: &Path,
    no_wait: bool,
    drop: &DropRoots,
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
    let base = pgstore::writer_base(&loc)?;
    let published = rt.block_on(pgstore::published(&client, &loc))?;
    let w = DbWriter {
        dir: base.join("index"),
        base,
        loc,
        client,
        rt,
        published,
        prefetched: Default::default(),
        fetch: std::cell::Cell::new(true),
    };
    let current = seed(&w, drop)?;
    w.fetch.set(!current);
    let code = run(&w)?;
    publish(&mut { w })?;
    Ok(code)
}

/// The roots a write command drops (`--drop-root`, `--drop-missing-roots`), which a seed
/// leaves out too.
#[derive(Default)]
pub struct DropRoots {
    pub roots: Vec<PathBuf>,
    pub missing: bool,
}

impl DropRoots {
    /// The drop options of a write command (`--drop-root` made absolute).
    pub fn of(run: &super::args::RunArgs) -> DropRoots {
        DropRoots {
            roots: run
                .drop_root
                .iter()
                .map(|r| std::path::absolute(r).unwrap_or_else(|_| r.clone()))
                .collect(),
            missing: run.drop_missing_roots,
        }
    }
}

/// A writer folder that is not at the database's published epoch and generation (a new
/// host, another writer published since, a schema made again) is built again from the
/// database's roots as they are on this host, with the database's vectors; with no
/// published row, a leftover folder is removed. Docs packs unpacked in it are kept.
/// True when the folder now holds every published vector (or there is none).
fn seed(w: &DbWriter, drop: &DropRoots) -> anyhow::Result<bool> {
    let Some(p) = &w.published else {
        wipe_keeping_packs(&w.dir)?;
        return Ok(true);
    };
    let here = pgstore::synced_generation(&w.base);
    if here == Some((p.epoch.clone(), p.generation)) && w.dir.join("manifest.json").is_file() {
        return Ok(true);
    }
    wipe_keeping_packs(&w.dir)?;
    let mut roots = Vec::new();
    for r in w.rt.block_on(pgstore::root_paths(&w.client, &w.loc))? {
        let r = PathBuf::from(r);
        if drop.roots.contains(&r) {
            continue;
        }
        if !r.exists() {
            anyhow::ensure!(
                drop.missing,
                "root `{}` of `{}` does not exist on this host, so this host cannot write the index\nhint: run the writer where the roots are, or pass `--drop-root {}` (or `--drop-missing-roots`) to drop it from the index",
                r.display(),
                w.loc.shown,
                r.display()
            );
            continue;
        }
        roots.push(r);
    }
    if roots.is_empty() {
        return Ok(false);
    }
    eprintln!(
        "this host's copy of `{}` is not at generation {}: reading its {} root(s) again",
        w.loc.shown,
        p.generation,
        roots.len()
    );
    let overrides = p.manifest["config_overrides"].clone();
    let wanted = p.manifest["embeddings"]["wanted"].as_bool().unwrap_or(true);
    let vectors = w.wrap(Vectors::load(wanted || p.identity.is_some()))?;
    let opts = BuildOptions {
        config: crate::config::IndexConfig::with_overrides(&overrides)?,
        config_overrides: overrides,
        embeddings: vectors.wanted,
        embedder: vectors.embedder.as_deref(),
        embedder_unavailable: vectors.unavailable.as_deref(),
        ..Default::default()
    };
    run_build(&w.dir, &Source::Roots(roots), &opts)?;
    Ok(true)
}

/// Removes the folder index at `dir` but its `packs/` (the unpacked docs packs that are
/// its roots).
fn wipe_keeping_packs(dir: &Path) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        if e.file_name() == "packs" {
            continue;
        }
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&p)?;
        } else {
            std::fs::remove_file(&p)?;
        }
    }
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
    pgstore::record_synced(&w.base, &r.epoch, r.generation)?;
    let (found, embedded) = w
        .prefetched
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .fold((0, 0), |(f, e), p| (f + p.found(), e + p.embedded()));
    eprintln!(
        "{} {} in `{}`: documents +{} -{}, {} chunk rows, vectors +{} -{}; {} vector(s) taken from the database, {} embedded",
        if r.skipped {
            "nothing new: generation"
        } else {
            "published generation"
        },
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
