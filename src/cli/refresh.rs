//! `docfuse refresh`: bring an index up to date with its roots, once or continuously.

use super::args::{RefreshArgs, RunArgs};
use super::build_run::{print_report, run_build, Vectors};
use crate::engine::{BuildOptions, Source};
use crate::store::SourceSpec;
use anyhow::Context;
use notify_debouncer_mini::{new_debouncer, notify::RecursiveMode};
use std::path::PathBuf;
use std::time::Duration;

pub fn run(a: RefreshArgs) -> anyhow::Result<i32> {
    let rec = Recorded::load_or_wait(&a.index, !a.run.no_wait)?;
    let vectors = Vectors::load(rec.wanted && !a.no_embeddings);
    let source = rec.source_for(&a.roots);
    let config = crate::config::IndexConfig::with_overrides(&rec.overrides)?;
    let opts = a.run.build_options(config, rec.overrides.clone(), &vectors);
    let report = run_build(&a.index, &source, &opts)?;
    print_report(&a.index, &report, &vectors, a.json)?;
    if a.watch {
        watch(&a, &rec.spec, &source, &opts, &vectors)?;
    }
    Ok(super::EXIT_OK)
}

/// What the index records about itself, read leniently (an index of an older docfuse is
/// refreshed into a rebuild).
struct Recorded {
    spec: SourceSpec,
    overrides: serde_json::Value,
    /// Vectors were asked for when it was built.
    wanted: bool,
}

impl Recorded {
    /// [`Recorded::load`]; when there is no manifest yet but a writer holds the lock (a
    /// first `index` still running), waits for it (or, with `wait` false, says so).
    fn load_or_wait(index: &std::path::Path, wait: bool) -> anyhow::Result<Recorded> {
        match Recorded::load(index) {
            Err(e)
                if matches!(e.downcast_ref(), Some(crate::Error::NoIndex { .. }))
                    && index.join(crate::engine::LOCK_FILE).exists() =>
            {
                let lock = crate::engine::acquire_writer_lock(index, wait, &mut |holder| {
                    eprintln!(
                        "waiting for another docfuse ({holder}) building `{}`…",
                        index.display()
                    )
                })?;
                drop(lock);
                Recorded::load(index)
            }
            other => other,
        }
    }

    fn load(index: &std::path::Path) -> anyhow::Result<Recorded> {
        let v = crate::store::read_manifest_json(index)?;
        let spec: SourceSpec = v
            .get("source")
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .with_context(|| format!("the manifest of `{}` does not say what was indexed\nhint: rebuild it with `docfuse index --force --index {} <ROOT>...`", index.display(), index.display()))?;
        let wanted = v
            .get("embeddings")
            .and_then(|e| e.get("wanted"))
            .and_then(serde_json::Value::as_bool)
            // an index of an older docfuse: vectors were wanted if it had some
            .unwrap_or_else(|| v.get("vectors").is_some_and(|x| !x.is_null()));
        Ok(Recorded {
            spec,
            overrides: v.get("config_overrides").cloned().unwrap_or_default(),
            wanted,
        })
    }

    fn source_for(&self, roots: &[PathBuf]) -> Source {
        match &self.spec {
            SourceSpec::Jsonl { file } => Source::Jsonl(PathBuf::from(file)),
            SourceSpec::Roots { .. } => Source::Roots(roots.to_vec()),
        }
    }
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
            "refreshed: generation {}, {} embedded, {} reused",
            r.generation, r.embedded, r.reused
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
    let paths: Vec<PathBuf> = match spec {
        SourceSpec::Roots { roots } => roots.iter().map(PathBuf::from).collect(),
        SourceSpec::Jsonl { file } => vec![PathBuf::from(file)],
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let mut debouncer = new_debouncer(Duration::from_millis(a.debounce_ms), tx)
        .context("cannot start watching files")?;
    for p in &paths {
        debouncer
            .watcher()
            .watch(p, RecursiveMode::Recursive)
            .with_context(|| format!("cannot watch `{}`", p.display()))?;
    }
    eprintln!("watching {} root(s) for changes; Ctrl-C stops", paths.len());
    let index_dir = a.index.canonicalize().unwrap_or_else(|_| a.index.clone());
    for events in rx {
        let Ok(events) = events else { continue };
        // Changes inside the index folder itself (when it lives under a root) are ignored.
        if events.iter().all(|e| e.path.starts_with(&index_dir)) {
            continue;
        }
        // Reading the files for a refresh raises events of its own: refresh only when a
        // file really changed size or mtime (or appeared, or went).
        let stale = crate::engine::DocIndex::open(&a.index).map_or(true, |i| i.stale());
        if !stale {
            continue;
        }
        match run_build(&a.index, source, opts) {
            Ok(r) => print_report(&a.index, &r, vectors, a.json)?,
            Err(e) => eprintln!("error: {e:#}"),
        }
    }
    Ok(())
}
