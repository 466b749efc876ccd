//! Freshness: is the index up to date with the files on disk and the configuration?

use super::open::DocIndex;
use crate::config::IndexConfig;
use crate::discover::{discover, read_text};
use crate::error::Result;
use crate::store::SourceSpec;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

/// Whether any indexed file was added, removed, or changed size or mtime since the
/// index was built: a cheap check (a walk and a stat per file, no hashing) for every
/// search response. A file touched without a content change reads as stale here.
///
/// # Errors
/// [`crate::Error::Corrupt`] when the snapshot is damaged.
pub fn quick_stale(index: &DocIndex) -> Result<bool> {
    let m = index.manifest();
    let snapshot = index.snapshot()?;
    match &m.source {
        SourceSpec::Roots { roots } => {
            let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
            let Ok((found, _)) = discover(&roots) else {
                return Ok(true);
            };
            let known: HashMap<(usize, &str), &crate::store::FileEntry> = snapshot
                .files
                .iter()
                .map(|e| ((e.root, e.rel_path.as_str()), e))
                .collect();
            let mut seen = 0;
            for f in &found {
                match known.get(&(f.root, f.rel_path.as_str())) {
                    Some(e) if e.size == f.size && e.mtime_ns == f.mtime_ns => seen += 1,
                    Some(_) => return Ok(true),
                    None if is_indexable(&f.path, m.config.max_file_bytes) => return Ok(true),
                    None => {}
                }
            }
            Ok(seen != snapshot.files.len())
        }
        SourceSpec::Jsonl { file } => {
            let Ok(meta) = std::fs::metadata(file) else {
                return Ok(true);
            };
            let first = snapshot.files.first();
            Ok(first.is_none_or(|e| {
                e.size != meta.len() || e.mtime_ns != crate::discover::mtime_ns(&meta)
            }))
        }
    }
}

/// True when a build would index `path` (readable, not binary).
fn is_indexable(path: &std::path::Path, max_bytes: u64) -> bool {
    read_text(path, max_bytes, &mut Vec::new()).is_some()
}

/// The freshness of an index against its sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub fresh: bool,
    pub generation: u64,
    pub documents: u64,
    pub chunks: u64,
    /// Files under the roots that the index does not have (`root-index:path`).
    pub added: Vec<String>,
    /// Indexed files whose content changed.
    pub changed: Vec<String>,
    /// Indexed files no longer on disk.
    pub removed: Vec<String>,
    /// The configuration in use differs from the one the index was built with.
    pub config_changed: bool,
    /// The embedder that would be loaded now differs from the one that made the vectors.
    pub embedder_changed: bool,
    /// Chunks still without a vector (lexical only until a refresh embeds them).
    pub pending: u64,
    /// The embedder that made the index's vectors (`None` for a lexical-only index).
    pub embedder: Option<EmbedderInfo>,
    /// Whether the vector side can answer now, or why not.
    pub vectors_usable: bool,
    /// Human-readable reasons, empty when fresh.
    pub reasons: Vec<String>,
}

/// The embedder identity recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbedderInfo {
    pub model: String,
    pub identity_key: String,
    pub dim: usize,
}

/// Compares `index` with the files under its roots and with `config`. A file whose size
/// and mtime match the snapshot is taken as unchanged; otherwise its content hash decides.
///
/// # Errors
/// [`crate::Error::Corrupt`] when the snapshot is damaged; [`crate::Error::Root`] when a
/// root has gone.
pub fn status(index: &DocIndex, config: &IndexConfig) -> Result<Status> {
    let m = index.manifest();
    let snapshot = index.snapshot()?;
    let (mut added, mut changed, mut removed) = (Vec::new(), Vec::new(), Vec::new());
    let mut missing_roots = Vec::new();
    if let SourceSpec::Roots { roots } = &m.source {
        // A root that has gone is a reason to report, not an error: its files count as removed.
        let present: Vec<usize> = (0..roots.len())
            .filter(|&i| PathBuf::from(&roots[i]).exists())
            .collect();
        missing_roots = (0..roots.len())
            .filter(|i| !present.contains(i))
            .map(|i| roots[i].clone())
            .collect();
        let paths: Vec<PathBuf> = present.iter().map(|&i| PathBuf::from(&roots[i])).collect();
        let (mut found, _) = discover(&paths)?;
        for f in &mut found {
            f.root = present[f.root];
        }
        let mut known: HashMap<(usize, &str), &crate::store::FileEntry> = snapshot
            .files
            .iter()
            .map(|f| ((f.root, f.rel_path.as_str()), f))
            .collect();
        for f in &found {
            let label = f.rel_path.clone();
            match known.remove(&(f.root, f.rel_path.as_str())) {
                // A file the build skipped (binary, unreadable) is not new content.
                None if is_indexable(&f.path, m.config.max_file_bytes) => added.push(label),
                None => {}
                Some(e) if e.size == f.size && e.mtime_ns == f.mtime_ns => {}
                Some(e) => {
                    let mut w = Vec::new();
                    let now = read_text(&f.path, m.config.max_file_bytes, &mut w);
                    if now.map(|r| r.sha256) != Some(e.sha256.clone()) {
                        changed.push(label);
                    }
                }
            }
        }
        removed = known.into_values().map(|e| e.rel_path.clone()).collect();
        removed.sort();
    }
    let config_changed = m.config_hash != config.hash();
    let mut reasons: Vec<String> = missing_roots
        .iter()
        .map(|r| format!("root `{r}` is missing (restore it, or drop it with `docfuse refresh --drop-missing-roots`)"))
        .collect();
    for (n, what) in [
        (added.len(), "added"),
        (changed.len(), "changed"),
        (removed.len(), "removed"),
    ] {
        if n > 0 {
            reasons.push(format!("{n} file(s) {what}"));
        }
    }
    if config_changed {
        reasons.push("configuration changed".into());
    }
    let pending = m.vectors.as_ref().map_or(0, |v| v.pending);
    if pending > 0 {
        reasons.push(format!("{pending} chunk(s) pending embedding"));
    }
    let side = m.vectors.as_ref().map(|_| index.vector_side().map(|_| ()));
    let embedder_changed = matches!(&side, Some(Err(why)) if why.contains("another embedder"));
    if embedder_changed {
        reasons.push("embedder changed".into());
    }
    Ok(Status {
        fresh: reasons.is_empty(),
        generation: m.generation,
        documents: m.collection.documents,
        chunks: m.collection.chunks,
        added,
        changed,
        removed,
        config_changed,
        embedder_changed,
        pending,
        embedder: m.vectors.as_ref().map(|v| EmbedderInfo {
            model: v.model.clone(),
            identity_key: v.identity_key.clone(),
            dim: v.dim,
        }),
        vectors_usable: matches!(side, Some(Ok(()))),
        reasons,
    })
}
