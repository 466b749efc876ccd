//! `docfuse refresh`: bring an index up to date with its roots, once or continuously.

use super::args::{RefreshArgs, RunArgs};
use super::build_run::{print_report, report_line, run_build, why_embedded, Vectors};
use super::job::Recorded;
use crate::generation::Source;
use crate::store::SourceSpec;
use crate::write::BuildOptions;
use anyhow::Context;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::Duration;
use std::time::Instant;

pub fn run(a: RefreshArgs) -> anyhow::Result<i32> {
    if !super::pg::is_db(&a.index) {
        return run_at(a, None);
    }
    if a.watch {
        anyhow::bail!("`refresh --watch` on a PostgreSQL index is not supported yet\nhint: run `docfuse refresh --index URL` from a scheduler (cron, CI) instead");
    }
    let run = a.run.clone();
    super::pg::write_command(a, |a| &mut a.index, &run, run_at)
}

/// `refresh` of the folder `a.index` (a database's writer folder when `db` is given).
fn run_at(a: RefreshArgs, db: Option<&super::pg::DbWriter>) -> anyhow::Result<i32> {
    if let Some(w) = db {
        w.ensure_index()?;
    }
    let wait = crate::generation::LockWait::of(a.run.no_wait, a.run.wait_timeout);
    let rec = Recorded::load_or_wait(&a.index, wait)?;
    let vectors = Vectors::load(rec.wanted && !a.no_embeddings);
    let vectors = match db {
        Some(w) => w.checked(vectors)?,
        None => vectors,
    };
    let source = rec.source_for(&a.roots);
    let config = crate::config::IndexConfig::with_overrides(&rec.overrides)?;
    let mut opts = a.run.build_options(config, rec.overrides.clone(), &vectors);
    opts.drop_roots =
        super::pg::still_to_drop(db, super::pack::drop_roots(&a.index, &a.run.drop_root));
    let steps = super::pack::PackSteps::new(&a.index, None, &a.run.drop_root);
    let report = super::pack::build_with(&steps, opts.clone(), |o| {
        super::pg::build(db, &a.index, &source, o)
    })?;
    print_report(&super::pg::shown(db, &a.index), &report, &vectors, a.json)?;
    let code = super::output::build_exit(&report);
    if a.watch {
        // The roots as this refresh left them: a dropped root is neither watched nor
        // dropped again.
        let now = Recorded::load(&a.index)?;
        let opts = BuildOptions {
            drop_roots: Vec::new(),
            hooks: Default::default(),
            ..opts
        };
        watch(&a, &now.spec, &source, &opts, &vectors)?;
    }
    Ok(code)
}

/// Refreshes every root of the index at `index` with its recorded configuration, for
/// `search --refresh`; prints a one-line summary on stderr.
pub fn refresh_before_search(index: &std::path::Path) -> anyhow::Result<()> {
    let rec = Recorded::load_or_wait(index, true)?;
    let vectors = Vectors::load(rec.wanted);
    let config = crate::config::IndexConfig::with_overrides(&rec.overrides)?;
    let opts = RunArgs::default().build_options(config, rec.overrides.clone(), &vectors);
    let r = run_build(index, &rec.source_for(&[]), &opts)?;
    if !r.skipped {
        eprintln!(
            "refreshed: generation {}, {} embedded, {} reused{}",
            r.generation,
            r.embedded,
            r.reused,
            why_embedded(&r)
        );
    }
    Ok(())
}

/// Refreshes after every debounced burst of changes under the roots, until interrupted.
fn watch(
    a: &RefreshArgs,
    spec: &SourceSpec,
    source: &Source,
    opts: &BuildOptions,
    vectors: &Vectors,
) -> anyhow::Result<()> {
    let mut watching = Watching::start(&a.index, spec, a.debounce_ms)?;
    eprintln!(
        "watching {} root(s) for changes; Ctrl-C stops",
        watching.roots
    );
    watching.run(&a.index, source, opts, &mut |r| match r {
        Ok(r) => print_report(&a.index, &r, vectors, a.json),
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(())
        }
    })
}

/// Starts the refresh job of `docfuse serve --watch` / `docfuse mcp --watch` on a thread
/// of its own: one refresh at once, then one after every debounced burst of changes under
/// the index's roots, for as long as the process runs. Summaries and errors go to stderr
/// (stdout may carry a protocol). It loads its own embedder when the index has vectors.
///
/// # Errors
/// When the index records no roots or they cannot be watched (before anything starts).
pub fn watch_in_background(index: &std::path::Path, debounce_ms: u64) -> anyhow::Result<()> {
    let rec = Recorded::load_or_wait(index, true)?;
    let watching = Watching::start(index, &rec.spec, debounce_ms)?;
    let index = index.to_path_buf();
    eprintln!(
        "docfuse: watching {} root(s) of `{}`: refreshing as they change",
        watching.roots,
        index.display()
    );
    std::thread::Builder::new()
        .name("docfuse-watch".into())
        .spawn(move || {
            if let Err(e) = refresh_in_background(&index, &rec, watching) {
                eprintln!("docfuse: the refresh job stopped: {e:#}");
            }
        })
        .context("cannot start the refresh thread")?;
    Ok(())
}

fn refresh_in_background(
    index: &std::path::Path,
    rec: &Recorded,
    mut watching: Watching,
) -> anyhow::Result<()> {
    let vectors = Vectors::load(rec.wanted);
    let config = crate::config::IndexConfig::with_overrides(&rec.overrides)?;
    let opts = RunArgs::default().build_options(config, rec.overrides.clone(), &vectors);
    let source = rec.source_for(&[]);
    let mut report = |r: anyhow::Result<crate::write::BuildReport>| {
        match r {
            Ok(r) => eprintln!("docfuse: {}", report_line(index, &r, &vectors)),
            Err(e) => eprintln!("docfuse: refresh failed: {e:#}"),
        }
        Ok(())
    };
    report(run_build(index, &source, &opts))?;
    watching.run(index, &source, &opts, &mut report)
}

/// A watch over an index's roots (and their parent folders, so that a root removed and
/// created again is watched again), batching changes until a quiet period passes.
struct Watching {
    watcher: RecommendedWatcher,
    events: Receiver<notify::Result<notify::Event>>,
    /// A batch ends when no change came for this long…
    quiet: Duration,
    /// …or when it has been gathering for this long (changes that never stop).
    longest: Duration,
    /// Each root with the identity (device, inode) of the folder being watched there.
    watched: Vec<(PathBuf, Option<(u64, u64)>)>,
    roots: usize,
}

/// The (device, inode) of `path`, if it exists.
fn identity(path: &std::path::Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).ok().map(|_| (0, 0))
    }
}

/// True for an event that changes nothing: a file or folder opened, read or closed
/// after reading (a refresh's own walk and reads raise these).
fn is_read(kind: &EventKind) -> bool {
    matches!(kind, EventKind::Access(k) if !matches!(k, AccessKind::Close(AccessMode::Write)))
}

impl Watching {
    /// Watches every root `spec` names (the JSONL file for a JSONL corpus).
    fn start(index: &std::path::Path, spec: &SourceSpec, debounce_ms: u64) -> anyhow::Result<Self> {
        let paths: Vec<PathBuf> = match spec {
            SourceSpec::Roots { roots } => roots.iter().map(PathBuf::from).collect(),
            SourceSpec::Jsonl { file } => vec![PathBuf::from(file)],
        };
        anyhow::ensure!(
            !paths.is_empty(),
            "the index at `{}` has no root to watch",
            index.display()
        );
        anyhow::ensure!(debounce_ms > 0, "`--debounce-ms` must be positive");
        let (tx, rx) = std::sync::mpsc::channel();
        let mut watcher = notify::recommended_watcher(tx).context("cannot start watching files")?;
        let mut watched = Vec::new();
        for p in &paths {
            watcher
                .watch(p, RecursiveMode::Recursive)
                .with_context(|| format!("cannot watch `{}`", p.display()))?;
            if let Some(parent) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                if let Err(e) = watcher.watch(parent, RecursiveMode::NonRecursive) {
                    eprintln!(
                        "warning: cannot watch `{}` ({e}): if `{}` is removed and created again, restart the watch",
                        parent.display(),
                        p.display()
                    );
                }
            }
            watched.push((p.clone(), identity(p)));
        }
        let quiet = Duration::from_millis(debounce_ms);
        Ok(Watching {
            watcher,
            events: rx,
            quiet,
            longest: quiet.saturating_mul(20).max(Duration::from_secs(2)),
            watched,
            roots: paths.len(),
        })
    }

    /// The paths of the next batch of changes (an empty path: a change whose place is
    /// unknown, e.g. a lost event queue): waits for a change, then gathers changes until
    /// none came for the quiet period. `None` when the watch ended.
    fn next_batch(&self) -> Option<Vec<PathBuf>> {
        let mut batch: Vec<PathBuf> = Vec::new();
        let mut started = None;
        loop {
            let event = match started {
                None => self.events.recv().ok()?,
                Some(t) => {
                    let left = self
                        .longest
                        .saturating_sub(Instant::now().duration_since(t));
                    match self.events.recv_timeout(self.quiet.min(left)) {
                        Ok(e) => e,
                        Err(_) => return Some(batch),
                    }
                }
            };
            match event {
                Ok(e) if is_read(&e.kind) => continue,
                Ok(e) if e.paths.is_empty() => batch.push(PathBuf::new()),
                Ok(e) => batch.extend(e.paths),
                Err(e) => {
                    eprintln!("warning: watching files: {e}");
                    batch.push(PathBuf::new());
                }
            }
            started.get_or_insert_with(Instant::now);
        }
    }

    /// Watches again every root that was removed and created anew (the old watch died
    /// with the old folder): one whose identity changed or that the batch names itself.
    fn rewatch_replaced_roots(&mut self, batch: &[PathBuf]) {
        for (path, seen) in &mut self.watched {
            let now = identity(path);
            if now.is_some() && (now != *seen || batch.contains(path)) {
                match self.watcher.watch(path, RecursiveMode::Recursive) {
                    Ok(()) => *seen = now,
                    Err(e) => eprintln!("warning: cannot watch `{}` again: {e}", path.display()),
                }
            }
        }
    }

    /// Refreshes after every batch of changes that left the index stale, handing each
    /// outcome to `report`, until the watch ends or `report` fails.
    fn run(
        &mut self,
        index: &std::path::Path,
        source: &Source,
        opts: &BuildOptions,
        report: &mut dyn FnMut(anyhow::Result<crate::write::BuildReport>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let index_dir = index.canonicalize().unwrap_or_else(|_| index.to_path_buf());
        let mut missing_said = false;
        while let Some(batch) = self.next_batch() {
            self.rewatch_replaced_roots(&batch);
            // While a root is missing (being replaced), wait for it to come back.
            if let Some((gone, _)) = self.watched.iter().find(|(p, _)| !p.exists()) {
                if !missing_said {
                    eprintln!(
                        "warning: root `{}` is missing: refreshing again once it is back",
                        gone.display()
                    );
                    missing_said = true;
                }
                continue;
            }
            missing_said = false;
            // Changes inside the index folder itself (when it lives under a root) are ignored.
            if batch.iter().all(|p| p.starts_with(&index_dir)) {
                continue;
            }
            // Refresh only when a file really changed (or appeared, or went).
            let stale = crate::read::DocIndex::open(index).map_or(true, |i| crate::read::stale(&i));
            if !stale {
                continue;
            }
            report(run_build(index, source, opts))?;
        }
        Ok(())
    }
}
