//! `docfuse refresh`: bring an index up to date with its roots, once or continuously.

use super::args::RefreshArgs;
use super::build_run::{print_report, run_build};
use crate::engine::{BuildOptions, Source};
use crate::store::{Manifest, SourceSpec};
use anyhow::Context;
use notify_debouncer_mini::{new_debouncer, notify::RecursiveMode};
use std::path::PathBuf;
use std::time::Duration;

pub fn run(a: RefreshArgs) -> anyhow::Result<i32> {
    let manifest = Manifest::load(&a.index)?;
    let embedder = embedder_for(&manifest, a.no_embeddings)?;
    let source = source_of(&manifest, &a.roots);
    let opts = a.run.build_options(manifest.config, embedder.as_deref());
    let report = run_build(&a.index, &source, &opts)?;
    print_report(&a.index, &report, embedder.is_some(), a.json)?;
    if a.watch {
        watch(&a, &manifest, &source, &opts, embedder.is_some())?;
    }
    Ok(super::EXIT_OK)
}

/// The embedder a refresh uses: the default one when the index has vectors. A refresh
/// of an index with vectors never quietly drops them: when the model cannot be loaded it
/// fails (`--no-embeddings` makes the index lexical-only on purpose).
fn embedder_for(
    m: &Manifest,
    no_embeddings: bool,
) -> anyhow::Result<Option<Box<dyn crate::embed::Embedder>>> {
    if no_embeddings || m.vectors.is_none() {
        return Ok(None);
    }
    crate::embed::load_default_embedder().map(Some).map_err(|e| {
        anyhow::anyhow!(
            "cannot refresh the vectors of this index: {e}\nhint: to make the index lexical-only instead, pass `--no-embeddings`"
        )
    })
}

fn source_of(m: &Manifest, roots: &[PathBuf]) -> Source {
    match &m.source {
        SourceSpec::Jsonl { file } => Source::Jsonl(PathBuf::from(file)),
        SourceSpec::Roots { .. } => Source::Roots(roots.to_vec()),
    }
}

/// Refreshes every root of the index at `index` with its recorded configuration, for
/// `search --refresh`; prints a one-line summary on stderr.
pub fn refresh_before_search(index: &std::path::Path) -> anyhow::Result<()> {
    let manifest = Manifest::load(index)?;
    let embedder = embedder_for(&manifest, false)?;
    let opts = BuildOptions {
        config: manifest.config,
        embedder: embedder.as_deref(),
        ..BuildOptions::default()
    };
    let r = run_build(index, &source_of(&manifest, &[]), &opts)?;
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
    manifest: &Manifest,
    source: &Source,
    opts: &BuildOptions,
    vectors: bool,
) -> anyhow::Result<()> {
    let paths: Vec<PathBuf> = match &manifest.source {
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
        let stale = crate::engine::DocIndex::open(&a.index)
            .and_then(|i| crate::engine::quick_stale(&i))
            .unwrap_or(true);
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
