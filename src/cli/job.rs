//! One refresh job of an index with its recorded settings — the unit `ingest` and
//! `serve`'s `POST /v1/refresh` run: roots to refresh or add, roots to drop (`pack:CODE`
//! names an ingested pack), a docs pack to unpack first under the writer lock. Also
//! [`Recorded`], what an index records about itself, read by `refresh` too.

use super::args::RunArgs;
use super::build_run::Vectors;
use super::pack::PackSteps;
use super::pg::DbWriter;
use crate::generation::Source;
use crate::pack::Pack;
use crate::store::SourceSpec;
use crate::write::BuildReport;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// What one job does besides refreshing.
#[derive(Default)]
pub(super) struct Job<'a> {
    /// Roots to refresh or add (none: every root of the index).
    pub roots: Vec<PathBuf>,
    /// Roots to drop, as given (`pack:CODE` or a path).
    pub drop_roots: Vec<PathBuf>,
    /// A verified pack to unpack (and index as its root), with where it came from.
    pub pack: Option<(&'a Pack, &'a str)>,
    /// Embed at most this many chunks (the rest wait; a database queues them for
    /// embedding workers).
    pub max_chunks: Option<u64>,
}

/// Runs `job` on the index at `index` with its recorded settings; with no index there
/// yet and a pack to ingest, builds a new one with docfuse's defaults (vectors when
/// `vectors.wanted`). Settings changed by another writer while this job waited for the
/// writer lock are read again (up to three times), never overwritten with older ones.
/// For a database URL the job runs as a writer of the database (its writer lock held
/// for the job, this host's writer folder brought to the published generation first,
/// one publish; packs are unpacked in that folder), as `refresh --index URL` does.
///
/// # Errors
/// No index and nothing to build it from, a pack for an index of a JSONL corpus, a root
/// that is not the index's to drop, and every error of the build (for a database: the
/// connection, the lock, the publish).
pub(super) fn run_job(index: &Path, job: &Job, vectors: &Vectors) -> anyhow::Result<BuildReport> {
    if !super::pg::is_db(index) {
        return attempts(index, job, vectors, None);
    }
    super::pg::write_job(index, |w| {
        if job.pack.is_none() {
            // a refresh or a drop: there must be an index to work on
            w.ensure_index()?;
        }
        w.check(vectors)?;
        attempts(&w.dir, job, vectors, Some(w))
    })
}

/// [`run_job`] on the folder `index` (a database's writer folder when `db` is given).
fn attempts(
    index: &Path,
    job: &Job,
    vectors: &Vectors,
    db: Option<&DbWriter>,
) -> anyhow::Result<BuildReport> {
    for _ in 0..3 {
        if let Some(report) = try_job(index, job, vectors, db)? {
            return Ok(report);
        }
    }
    anyhow::bail!(
        "the settings of `{}` kept changing while waiting for the writer lock",
        index.display()
    )
}

/// One attempt of [`run_job`]: `None` when the recorded settings changed before the
/// lock was taken (nothing was written).
fn try_job(
    index: &Path,
    job: &Job,
    vectors: &Vectors,
    db: Option<&DbWriter>,
) -> anyhow::Result<Option<BuildReport>> {
    let rec = match Recorded::load_or_wait(index, true) {
        Ok(rec) => Some(rec),
        Err(e) if job.pack.is_some() && is_no_index(&e) => None,
        Err(e) => return Err(e),
    };
    if let (Some(rec), Some((p, _))) = (&rec, job.pack) {
        anyhow::ensure!(
            matches!(rec.spec, SourceSpec::Roots { .. }),
            "the index at `{}` holds a JSONL corpus: the pack `{}` can go only into an index of folders\nhint: give another `--index`",
            index.display(),
            p.manifest.repo
        );
    }
    let mut roots = job.roots.clone();
    if let Some((p, _)) = job.pack {
        roots.push(super::pack::dir_of(index, p));
    }
    let overrides = rec.as_ref().map(|r| r.overrides.clone());
    let (config, source) = match &rec {
        Some(rec) => (
            crate::config::IndexConfig::with_overrides(&rec.overrides)?,
            rec.source_for(&roots),
        ),
        None => (Default::default(), Source::Roots(roots)),
    };
    let mut opts = RunArgs::default().build_options(
        config,
        overrides.clone().unwrap_or_else(|| serde_json::json!({})),
        vectors,
    );
    opts.drop_roots = super::pg::still_to_drop(db, super::pack::drop_roots(index, &job.drop_roots));
    opts.max_chunks = job.max_chunks;
    // under the lock, before anything is written: the settings read above still hold
    let changed = std::sync::atomic::AtomicBool::new(false);
    let check = || {
        let now = Recorded::load(index).ok().map(|r| r.overrides);
        if now != overrides {
            changed.store(true, std::sync::atomic::Ordering::Relaxed);
            return Err(crate::Error::Config("the index's settings changed".into()));
        }
        Ok(())
    };
    let steps = PackSteps::new(index, job.pack, &job.drop_roots).with_check(&check);
    match super::pack::build_with(&steps, opts, |o| super::pg::build(db, index, &source, o)) {
        Err(_) if changed.load(std::sync::atomic::Ordering::Relaxed) => Ok(None),
        other => other.map(Some),
    }
}

/// The error says there is no index at all.
pub(super) fn is_no_index(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref(), Some(crate::Error::NoIndex { .. }))
}

/// What the index records about itself, read leniently (an index of an older docfuse is
/// refreshed into a rebuild).
pub(super) struct Recorded {
    pub spec: SourceSpec,
    pub overrides: serde_json::Value,
    /// Vectors were asked for when it was built.
    pub wanted: bool,
}

impl Recorded {
    /// [`Recorded::load`]; when there is no manifest yet but a writer holds the lock (a
    /// first `index` still running), waits for it (or, with `wait` false, says so).
    pub fn load_or_wait(
        index: &std::path::Path,
        wait: impl Into<crate::generation::LockWait>,
    ) -> anyhow::Result<Recorded> {
        match Recorded::load(index) {
            Err(e) if is_no_index(&e) && index.join(crate::generation::LOCK_FILE).exists() => {
                let lock = crate::generation::acquire_writer_lock(index, wait, &mut |holder| {
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

    pub fn load(index: &std::path::Path) -> anyhow::Result<Recorded> {
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

    pub fn source_for(&self, roots: &[PathBuf]) -> Source {
        match &self.spec {
            SourceSpec::Jsonl { file } => Source::Jsonl(PathBuf::from(file)),
            SourceSpec::Roots { .. } => Source::Roots(roots.to_vec()),
        }
    }
}
