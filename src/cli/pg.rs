//! `--index postgres://…` for every command: a reader answers from this host's cache
//! folder, synced to the database's published generation first ([`pgstore::open_reader`];
//! servers also follow later publishes, [`pgstore::follow`]); a writer (`index`,
//! `refresh`) opens the database as a [`PgStore`] (its writer lock held for the command),
//! brings this host's writer folder to the published generation when it is not there (a
//! seed that publishes into the folder only and embeds nothing), then runs the command,
//! whose build publishes into the database in one transaction.

use super::build_run::{run_build, run_build_in, Vectors};
use crate::generation::Source;
use crate::pgstore::{self, Followed, PgLocation, PgStore};
use crate::write::{BuildOptions, BuildReport, IndexStore};
use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

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

/// This host's cache of the database index `index`, synced to the published generation
/// (or its copy, with a warning, while the database cannot be reached).
///
/// # Errors
/// The URL does not parse; the database refuses or holds no index and there is no copy.
pub fn reader_cache(index: &Path) -> anyhow::Result<pgstore::ReaderCache> {
    Ok(open(&location(index)?)?.cache)
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

/// A writer's hold on a database: the store (its connection holds the advisory lock
/// until dropped) and what its builds embedded.
pub struct DbWriter {
    store: RefCell<PgStore>,
    /// This host's folder index of the database (`<cache>/<key>/writer/index`), where
    /// the generations are staged.
    pub dir: PathBuf,
    embedded: Cell<u64>,
    /// Roots the seed left out because the command drops them (`--drop-root`).
    left_out: RefCell<Vec<PathBuf>>,
}

impl DbWriter {
    /// `vectors`, once checked: without a loaded model while the database holds vectors,
    /// a refresh is refused (every chunk read again would have none, and publishing
    /// would drop them).
    ///
    /// # Errors
    /// As said.
    pub fn checked(&self, vectors: Vectors) -> anyhow::Result<Vectors> {
        self.check(&vectors)?;
        Ok(vectors)
    }

    /// [`DbWriter::checked`] without taking `vectors`.
    ///
    /// # Errors
    /// As said there.
    pub fn check(&self, vectors: &Vectors) -> anyhow::Result<()> {
        let store = self.store.borrow();
        let held = store.published_row().is_some_and(|p| p.identity.is_some());
        anyhow::ensure!(
            vectors.embedder.is_some() || !held,
            "`{}` holds vectors and this docfuse has no model to keep them ({}): nothing was published\nhint: provision the model on this host (`bash scripts/provision-models`) and run again",
            store.location().shown,
            vectors.unavailable.as_deref().unwrap_or("--no-embeddings was given")
        );
        Ok(())
    }

    /// Fails, naming the database, when it holds no index yet (nothing to refresh).
    ///
    /// # Errors
    /// As said, with the `docfuse index` command that makes one.
    pub fn ensure_index(&self) -> anyhow::Result<()> {
        let store = self.store.borrow();
        let loc = store.location();
        anyhow::ensure!(
            store.published_row().is_some(),
            "no docfuse index in `{}` (schema `{}`): nothing to refresh\nhint: make one with `docfuse index --index {} <ROOT>...`",
            loc.shown,
            loc.schema,
            loc.shown
        );
        Ok(())
    }

    /// Builds `source` into the database (staged in [`DbWriter::dir`], published in one
    /// transaction; vectors the database holds are taken from it by embedding hash).
    fn build(&self, source: &Source, opts: &BuildOptions) -> anyhow::Result<BuildReport> {
        // what the run leaves unembedded is queued in the database for embedding workers
        let opts = BuildOptions {
            queue_pending: true,
            ..opts.clone()
        };
        let r = run_build_in(&mut *self.store.borrow_mut(), source, &opts)?;
        self.embedded.set(self.embedded.get() + r.embedded);
        Ok(r)
    }
}

/// What a write command's summary names: the database's URL (password redacted) when
/// `db` is given, else the folder `index`.
pub fn shown(db: Option<&DbWriter>, index: &Path) -> PathBuf {
    match db {
        Some(w) => PathBuf::from(&w.store.borrow().location().shown),
        None => index.to_path_buf(),
    }
}

/// `drop` (the roots a write command drops) without those the seed of `db` already left
/// out: the writer folder no longer has them, and the command's publish drops them from
/// the database.
pub fn still_to_drop(db: Option<&DbWriter>, mut drop: Vec<PathBuf>) -> Vec<PathBuf> {
    if let Some(w) = db {
        let gone = w.left_out.borrow();
        let abs = |r: &PathBuf| std::path::absolute(r).unwrap_or_else(|_| r.clone());
        drop.retain(|r| !gone.contains(&abs(r)));
    }
    drop
}

/// Runs a build of `source` into the database of `db` when given, else into the folder
/// `index`.
pub fn build(
    db: Option<&DbWriter>,
    index: &Path,
    source: &Source,
    opts: &BuildOptions,
) -> anyhow::Result<BuildReport> {
    match db {
        Some(w) => w.build(source, opts),
        None => run_build(index, source, opts),
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
    let wait = crate::generation::LockWait::of(run_args.no_wait, run_args.wait_timeout);
    write(&url, wait, &DropRoots::of(run_args), |w| {
        *index(&mut a) = w.dir.clone();
        run(a, Some(w))
    })
}

/// Runs one job of a long-running writer (`ingest`, `serve`'s refresh jobs) on the
/// database index `index`: [`write`] waiting for the writer lock, dropping no root
/// beyond the job's own, and returns the report of the job's build.
///
/// # Errors
/// Every error of [`write`] and of `job`.
pub fn write_job(
    index: &Path,
    job: impl FnOnce(&DbWriter) -> anyhow::Result<BuildReport>,
) -> anyhow::Result<BuildReport> {
    let mut report = None;
    write(index, true.into(), &DropRoots::default(), |w| {
        report = Some(job(w)?);
        Ok(super::EXIT_OK)
    })?;
    report.ok_or_else(|| {
        anyhow::anyhow!(
            "the job on `{}` built nothing",
            shown_index(index).display()
        )
    })
}

/// The roots the database index `index` publishes (absolute paths on their writers'
/// hosts); none when it holds no index.
///
/// # Errors
/// The URL does not parse; the database cannot be reached or read.
pub fn database_roots(index: &Path) -> anyhow::Result<Vec<String>> {
    let loc = location(index)?;
    Ok(pgstore::block_on(async {
        let client = pgstore::connect(&loc).await?;
        match pgstore::published_if_made(&client, &loc).await? {
            Some(_) => pgstore::root_paths(&client, &loc).await,
            None => Ok(Vec::new()),
        }
    })?)
}

/// Whether the database index `index` wants vectors (built with them, or holding some);
/// `None` when it holds no index yet.
///
/// # Errors
/// The URL does not parse; the database cannot be reached or read.
pub fn wants_vectors(index: &Path) -> anyhow::Result<Option<bool>> {
    let loc = location(index)?;
    let p = pgstore::block_on(async {
        let client = pgstore::connect(&loc).await?;
        pgstore::published_if_made(&client, &loc).await
    })?;
    Ok(p.map(|p| {
        p.identity.is_some() || p.manifest["embeddings"]["wanted"].as_bool().unwrap_or(true)
    }))
}

/// The embedding queue of the database index `index` for the embedder `identity_key`.
///
/// # Errors
/// The URL does not parse, the database cannot be reached or read.
pub fn queue_counts(index: &Path, identity_key: &str) -> anyhow::Result<pgstore::QueueCounts> {
    let loc = location(index)?;
    Ok(pgstore::block_on(async {
        let client = pgstore::connect(&loc).await?;
        pgstore::queue_counts(&client, &loc, identity_key).await
    })?)
}

/// Holds the ingester lock of the database index `index` while the returned client's
/// connection lasts (it is driven on the current runtime).
///
/// # Errors
/// Another `docfuse ingest` holds it; the URL does not parse; the database cannot be
/// reached.
pub async fn hold_ingester_lock(index: &Path) -> anyhow::Result<tokio_postgres::Client> {
    let loc = location(index)?;
    let client = pgstore::connect(&loc).await?;
    anyhow::ensure!(
        pgstore::try_lock_ingester(&client, &loc).await?,
        "another `docfuse ingest` is ingesting into `{}` (schema `{}`): one ingester per index, or they would take each other's events\nhint: stop the other one first",
        loc.shown,
        loc.schema
    );
    Ok(client)
}

/// This host's writer folder of the database index `index` (where a writer stages its
/// generations and `ingest` unpacks its packs).
///
/// # Errors
/// The URL does not parse; the cache folder cannot be made.
pub fn writer_folder(index: &Path) -> anyhow::Result<PathBuf> {
    Ok(pgstore::writer_base(&location(index)?)?.join("index"))
}

/// What to show for `--index`: a database URL with its password redacted, else the folder.
pub fn shown_index(index: &Path) -> PathBuf {
    match index.to_str().filter(|u| pgstore::is_database_url(u)) {
        Some(url) => PathBuf::from(pgstore::redacted(url)),
        None => index.to_path_buf(),
    }
}

/// Runs a write command on a database index: open the store (lock, migrate), bring the
/// writer folder to the published generation, `run(writer)` (the command, whose builds
/// publish into the database), then say what was published.
pub fn write(
    index: &Path,
    wait: crate::generation::LockWait,
    drop: &DropRoots,
    run: impl FnOnce(&DbWriter) -> anyhow::Result<i32>,
) -> anyhow::Result<i32> {
    let loc = location(index)?;
    let store = PgStore::open(&loc, wait, &mut || {
        eprintln!("waiting for another docfuse writing `{}`…", loc.shown)
    })?;
    if !store.migrated().is_empty() {
        eprintln!(
            "`{}`: schema `{}` migrated to version {}",
            loc.shown,
            loc.schema,
            pgstore::SCHEMA_VERSION
        );
    }
    let w = DbWriter {
        dir: store.staging_dir().to_path_buf(),
        store: RefCell::new(store),
        embedded: Cell::new(0),
        left_out: RefCell::new(Vec::new()),
    };
    seed(&w, drop)?;
    let code = run(&w)?;
    say_published(&w);
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
fn seed(w: &DbWriter, drop: &DropRoots) -> anyhow::Result<()> {
    let store = w.store.borrow();
    let mut left_out = w.left_out.borrow_mut();
    let Some(p) = store.published_row().cloned() else {
        store.clear_staging()?;
        return Ok(());
    };
    if store.staging_current() {
        return Ok(());
    }
    store.clear_staging()?;
    let shown = store.location().shown.clone();
    let mut roots = Vec::new();
    for r in store.roots()? {
        let r = PathBuf::from(r);
        if drop.roots.contains(&r) {
            left_out.push(r);
            continue;
        }
        if !r.exists() {
            anyhow::ensure!(
                drop.missing,
                "root `{}` of `{shown}` does not exist on this host, so this host cannot write the index\nhint: run the writer (and `ingest`) where the roots are, or drop it from the index: `docfuse refresh --index {shown} --drop-root {}` (or `--drop-missing-roots`)",
                r.display(),
                r.display()
            );
            continue;
        }
        roots.push(r);
    }
    std::mem::drop((store, left_out));
    if roots.is_empty() {
        return Ok(());
    }
    eprintln!(
        "this host's copy of `{shown}` is not at generation {}: reading its {} root(s) again",
        p.generation,
        roots.len()
    );
    let overrides = p.manifest["config_overrides"].clone();
    let wanted = p.manifest["embeddings"]["wanted"].as_bool().unwrap_or(true);
    let vectors = w.checked(Vectors::load(wanted || p.identity.is_some()))?;
    // the seed embeds nothing: vectors the database or the resumable cache lack wait
    // as pending for the command's build, which embeds them within its limits and
    // publishes once
    let opts = BuildOptions {
        config: crate::config::IndexConfig::with_overrides(&overrides)?,
        config_overrides: overrides,
        embeddings: vectors.wanted,
        embedder: vectors.embedder.as_deref(),
        embedder_unavailable: vectors.unavailable.as_deref(),
        max_chunks: Some(0),
        ..Default::default()
    };
    run_build_in(
        &mut w.store.borrow_mut().seeding(),
        &Source::Roots(roots),
        &opts,
    )?;
    Ok(())
}

/// Says on stderr what the writer's builds published: a line per publish that wrote
/// something (or one "nothing new" line), the last one with the vectors taken from the
/// database and embedded.
fn say_published(w: &DbWriter) {
    let store = w.store.borrow();
    let reports = store.reports();
    let mut shown: Vec<&pgstore::PublishReport> = reports.iter().filter(|r| !r.skipped).collect();
    if shown.is_empty() {
        shown.extend(reports.last());
    }
    let last = shown.len().saturating_sub(1);
    for (i, r) in shown.iter().enumerate() {
        let counts = match i == last {
            true => format!(
                "; {} vector(s) taken from the database, {} embedded",
                store.vectors_found(),
                w.embedded.get()
            ),
            false => String::new(),
        };
        eprintln!(
            "{} {} in `{}`: documents +{} -{}, {} chunk rows, vectors +{} -{}{counts}",
            if r.skipped {
                "nothing new: generation"
            } else {
                "published generation"
            },
            r.generation,
            store.location().shown,
            r.documents_written,
            r.documents_deleted,
            r.chunks_written,
            r.vectors_written,
            r.vectors_deleted,
        );
    }
}
