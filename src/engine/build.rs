//! Building and refreshing an index: one entry point. A build on an existing index is a
//! refresh: documents are re-read and re-chunked, vectors of unchanged chunks are reused
//! by hash, and nothing is written when nothing changed.

use super::generation::{previous_chunks, write_generation};
use super::lock;
use super::source::{absolute, load_jsonl, load_roots, read_sources, Loaded, Source};
use crate::config::IndexConfig;
use crate::discover::Warning;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::store::{Manifest, Snapshot, SourceSpec};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The phase a build is in, for progress reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Another process holds the writer lock; waiting for it.
    Waiting,
    /// Reading, chunking and indexing documents (units: documents).
    Indexing,
    /// Embedding chunks (units: chunks to embed).
    Embedding,
}

/// Progress of a build: `done` of `total` units of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

/// How to build.
#[derive(Clone, Copy, Default)]
pub struct BuildOptions<'a> {
    pub config: IndexConfig,
    /// Embed chunks with this embedder; `None` builds a lexical-only index.
    pub embedder: Option<&'a dyn Embedder>,
    /// Embed at most this many chunks in this run (the rest stays pending).
    pub max_chunks: Option<u64>,
    /// Stop embedding after this many seconds (the rest stays pending).
    pub max_seconds: Option<f64>,
    /// Write a new generation even when nothing changed.
    pub force: bool,
    /// Fail instead of waiting when another process is writing the index.
    pub no_wait: bool,
    /// Remove the index's roots that no longer exist (and their chunks) instead of failing.
    pub drop_missing_roots: bool,
}

/// Files compared with the previous generation (by root, path and content sha256).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub scanned: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub removed: u64,
}

/// Chunks compared with the previous generation (by id and content hash).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ChunkDiff {
    pub total: u64,
    pub added: u64,
    pub changed: u64,
    pub unchanged: u64,
    pub removed: u64,
}

/// What a build did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildReport {
    /// The published generation (the previous one when nothing changed).
    pub generation: u64,
    /// True when nothing changed and nothing was written.
    pub skipped: bool,
    /// Source documents indexed (files or JSONL records).
    pub documents: u64,
    pub chunks: u64,
    pub files: FileDiff,
    pub chunk_diff: ChunkDiff,
    /// Chunks embedded in this run.
    pub embedded: u64,
    /// Chunks whose vector was reused (same embedding hash).
    pub reused: u64,
    /// Chunks without a vector yet (limits of this run).
    pub pending: u64,
    /// Files or records skipped or degraded, each with its reason.
    #[serde(serialize_with = "warnings_as_text")]
    pub warnings: Vec<Warning>,
    /// Wall time, ms.
    pub elapsed_ms: u64,
}

fn warnings_as_text<S: serde::Serializer>(
    w: &[Warning],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(w.iter().map(|w| w.to_string()))
}

/// Builds the index in `index_dir` from `source`, or refreshes it: takes the writer lock,
/// re-reads the roots being refreshed (the index's other roots are carried over from the
/// previous generation), and publishes a new generation by atomically replacing the
/// manifest — unless nothing changed (same files, configuration and embedder, nothing
/// pending), in which case nothing is written. Vectors of unchanged chunks are reused by
/// embedding hash; a crash at any point leaves the previous generation readable.
///
/// # Errors
/// [`Error::Config`] for an invalid configuration or when no document is found;
/// [`Error::Root`] for a missing root; [`Error::Locked`] when another writer holds the
/// lock and `no_wait` is set; [`Error::Io`]/[`Error::Tantivy`] on write failures.
pub fn build(
    index_dir: &Path,
    source: &Source,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<BuildReport> {
    let started = Instant::now();
    opts.config.validate()?;
    std::fs::create_dir_all(index_dir).map_err(|e| Error::io("create", index_dir, e))?;
    let _lock = lock::acquire(index_dir, !opts.no_wait, &mut |_| {
        progress(Progress {
            phase: Phase::Waiting,
            done: 0,
            total: 0,
        })
    })?;
    let previous = match Manifest::load(index_dir) {
        Ok(m) => Some(m),
        Err(Error::NoIndex { .. }) => None,
        Err(e) => {
            tracing::warn!(
                "ignoring the unusable index at `{}`: {e}",
                index_dir.display()
            );
            None
        }
    };
    let mut warnings = Vec::new();
    let (spec, docs) = plan(index_dir, source, previous.as_ref(), opts, &mut warnings)?;
    let files = diff_files(index_dir, previous.as_ref(), &spec, &docs);
    if let Some(prev) = previous
        .as_ref()
        .filter(|p| !opts.force && unchanged(p, &spec, &files, opts))
        .filter(|p| generation_is_sound(index_dir, p))
    {
        let chunks = prev.collection.chunks;
        return Ok(BuildReport {
            generation: prev.generation,
            skipped: true,
            documents: prev.collection.documents,
            chunks,
            files,
            chunk_diff: ChunkDiff {
                total: chunks,
                unchanged: chunks,
                ..ChunkDiff::default()
            },
            embedded: 0,
            reused: prev.vectors.as_ref().map_or(0, |v| v.embedded),
            pending: 0,
            warnings,
            elapsed_ms: started.elapsed().as_millis() as u64,
        });
    }
    let old_chunks = previous
        .as_ref()
        .and_then(|p| previous_chunks(index_dir, p))
        .unwrap_or_default();
    let written = write_generation(index_dir, spec, docs, opts, progress)?;
    Ok(BuildReport {
        generation: written.generation,
        skipped: false,
        documents: written.documents,
        chunks: written.chunks.len() as u64,
        files,
        chunk_diff: diff_chunks(&old_chunks, &written.chunks),
        embedded: written.embedded,
        reused: written.reused,
        pending: written.pending,
        warnings,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// The build's roots and documents: refreshed roots from disk, the others carried over.
fn plan(
    index_dir: &Path,
    source: &Source,
    previous: Option<&Manifest>,
    opts: &BuildOptions,
    warnings: &mut Vec<Warning>,
) -> Result<(SourceSpec, Vec<Loaded>)> {
    let config = &opts.config;
    let requested = match source {
        Source::Jsonl(path) => {
            let abs = absolute(path)?;
            let docs = load_jsonl(&abs, warnings)?;
            return Ok((
                SourceSpec::Jsonl {
                    file: abs.to_string_lossy().into_owned(),
                },
                docs,
            ));
        }
        Source::Roots(r) => r
            .iter()
            .map(|p| absolute(p))
            .collect::<Result<Vec<PathBuf>>>()?,
    };
    let mut prev_roots: Vec<String> = match previous.map(|p| &p.source) {
        Some(SourceSpec::Roots { roots }) => roots.clone(),
        _ => Vec::new(),
    };
    if let Some(gone) = prev_roots.iter().find(|r| !Path::new(r.as_str()).exists()) {
        if !opts.drop_missing_roots {
            return Err(Error::Config(format!(
                "root `{gone}` of the index is missing\nhint: restore it, or drop it with `docfuse refresh --drop-missing-roots`"
            )));
        }
        prev_roots.retain(|r| Path::new(r.as_str()).exists());
    }
    let requested: Vec<String> = requested
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let requested = without_overlaps(&prev_roots, requested)?;
    let mut roots = prev_roots.clone();
    roots.extend(
        requested
            .iter()
            .filter(|r| !prev_roots.contains(r))
            .cloned(),
    );
    if roots.is_empty() {
        return Err(Error::Config(
            "no root to index\nhint: pass one or more folders".into(),
        ));
    }
    let refreshed: Vec<usize> = (0..roots.len())
        .filter(|&i| requested.is_empty() || requested.contains(&roots[i]))
        .collect();
    let paths: Vec<PathBuf> = refreshed
        .iter()
        .map(|&i| PathBuf::from(&roots[i]))
        .collect();
    let mut docs = load_roots(&paths, &refreshed, config, warnings)?;
    if let Some(prev) = previous {
        let gen_dir = index_dir.join(&prev.generation_dir);
        for i in (0..roots.len()).filter(|i| !refreshed.contains(i)) {
            docs.extend(read_sources(&gen_dir, &roots[i], i)?);
        }
    }
    docs.sort_by(|a, b| (a.entry.root, &a.entry.rel_path).cmp(&(b.entry.root, &b.entry.rel_path)));
    if docs.is_empty() {
        let list: Vec<String> = paths.iter().map(|r| format!("`{}`", r.display())).collect();
        return Err(Error::Config(format!(
            "no readable .md, .markdown, .mdx or .txt file under {}\nhint: check the path, or a .gitignore that excludes the files",
            list.join(", ")
        )));
    }
    Ok((SourceSpec::Roots { roots }, docs))
}

/// Maps a requested folder inside one of the index's roots to that root (refreshing it
/// refreshes the folder), and refuses roots that contain or repeat each other, which would
/// index the same files twice.
fn without_overlaps(existing: &[String], requested: Vec<String>) -> Result<Vec<String>> {
    let inside = |a: &str, b: &str| a != b && Path::new(a).starts_with(b);
    let mut out: Vec<String> = Vec::new();
    for r in requested {
        let r = existing
            .iter()
            .find(|p| inside(&r, p))
            .cloned()
            .unwrap_or(r);
        let clash = existing
            .iter()
            .chain(&out)
            .find(|p| inside(p, &r) || inside(&r, p));
        if let Some(p) = clash {
            return Err(Error::Config(format!(
                "root `{r}` overlaps root `{p}`: their files would be indexed twice\nhint: pass one of them, or index the other into another folder with `--index`"
            )));
        }
        if !out.contains(&r) {
            out.push(r);
        }
    }
    Ok(out)
}

fn root_names(spec: &SourceSpec) -> Vec<String> {
    match spec {
        SourceSpec::Roots { roots } => roots.clone(),
        SourceSpec::Jsonl { file } => vec![file.clone()],
    }
}

/// Compares the new documents with the previous generation's snapshot.
fn diff_files(
    index_dir: &Path,
    previous: Option<&Manifest>,
    spec: &SourceSpec,
    docs: &[Loaded],
) -> FileDiff {
    let old: HashMap<(String, String), String> = previous
        .and_then(|p| {
            let bytes = std::fs::read(index_dir.join(&p.generation_dir).join("files.json")).ok()?;
            let snap: Snapshot = serde_json::from_slice(&bytes).ok()?;
            let names = root_names(&p.source);
            Some(
                snap.files
                    .into_iter()
                    .map(|f| {
                        (
                            (names.get(f.root).cloned().unwrap_or_default(), f.rel_path),
                            f.sha256,
                        )
                    })
                    .collect(),
            )
        })
        .unwrap_or_default();
    let names = root_names(spec);
    let mut d = FileDiff {
        scanned: docs.len() as u64,
        ..FileDiff::default()
    };
    let mut seen = HashSet::new();
    for doc in docs {
        let key = (
            names.get(doc.entry.root).cloned().unwrap_or_default(),
            doc.entry.rel_path.clone(),
        );
        match old.get(&key) {
            None => d.added += 1,
            Some(sha) if *sha == doc.entry.sha256 => d.unchanged += 1,
            Some(_) => d.changed += 1,
        }
        seen.insert(key);
    }
    d.removed = old.keys().filter(|k| !seen.contains(*k)).count() as u64;
    d
}

/// True when a new generation would equal the published one.
fn unchanged(prev: &Manifest, spec: &SourceSpec, files: &FileDiff, opts: &BuildOptions) -> bool {
    let same_files = files.added + files.changed + files.removed == 0;
    let same_vectors = match (&prev.vectors, opts.embedder) {
        (None, None) => true,
        (Some(v), Some(e)) => v.identity_key == e.identity().key() && v.pending == 0,
        _ => false,
    };
    same_files && same_vectors && prev.source == *spec && prev.config_hash == opts.config.hash()
}

/// True when the published generation opens and its vectors read: a damaged one is
/// rebuilt by the next refresh instead of being called fresh.
fn generation_is_sound(index_dir: &Path, prev: &Manifest) -> bool {
    let gen = index_dir.join(&prev.generation_dir);
    let lexical_ok = super::open::DocIndex::open(index_dir)
        .and_then(|i| i.snapshot().map(|_| ()))
        .is_ok();
    let vectors_ok = prev.vectors.is_none() || crate::vector::VectorSet::read(&gen).is_ok();
    lexical_ok && vectors_ok && gen.join(super::source::SOURCES_FILE).is_file()
}

/// Compares chunk `(id, hash)` lists.
fn diff_chunks(old: &[(String, String)], new: &[(String, String)]) -> ChunkDiff {
    let old_map: HashMap<&str, &str> = old.iter().map(|(i, h)| (i.as_str(), h.as_str())).collect();
    let mut d = ChunkDiff {
        total: new.len() as u64,
        ..ChunkDiff::default()
    };
    let mut seen = HashSet::new();
    for (id, hash) in new {
        match old_map.get(id.as_str()) {
            None => d.added += 1,
            Some(h) if h == hash => d.unchanged += 1,
            Some(_) => d.changed += 1,
        }
        seen.insert(id.as_str());
    }
    d.removed = old_map.keys().filter(|k| !seen.contains(*k)).count() as u64;
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_roots_are_mapped_or_refused() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            without_overlaps(&s(&["/d"]), s(&["/d/guide"])).unwrap(),
            s(&["/d"])
        );
        assert_eq!(
            without_overlaps(&s(&["/d"]), s(&["/e", "/e"])).unwrap(),
            s(&["/e"])
        );
        assert!(without_overlaps(&s(&["/d/guide"]), s(&["/d"])).is_err());
        assert!(without_overlaps(&s(&[]), s(&["/d", "/d/x"])).is_err());
        // a name prefix is not a folder prefix
        assert_eq!(
            without_overlaps(&s(&["/doc"]), s(&["/docs"])).unwrap(),
            s(&["/docs"])
        );
    }

    #[test]
    fn chunk_diff_counts_each_kind() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        let old = [s("a", "1"), s("b", "2"), s("c", "3")];
        let new = [s("a", "1"), s("b", "9"), s("d", "4")];
        let d = diff_chunks(&old, &new);
        assert_eq!(
            (d.total, d.added, d.changed, d.unchanged, d.removed),
            (3, 1, 1, 1, 1)
        );
    }
}
