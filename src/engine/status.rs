//! Freshness: is the index up to date with the files on disk and the configuration?

use super::open::DocIndex;
use crate::config::IndexConfig;
use crate::discover::{discover, read_text};
use crate::error::Result;
use crate::store::SourceSpec;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

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
    /// Human-readable reasons, empty when fresh.
    pub reasons: Vec<String>,
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
    if let SourceSpec::Roots { roots } = &m.source {
        let roots: Vec<PathBuf> = roots.iter().map(PathBuf::from).collect();
        let (found, _) = discover(&roots)?;
        let mut known: HashMap<(usize, &str), &crate::store::FileEntry> = snapshot
            .files
            .iter()
            .map(|f| ((f.root, f.rel_path.as_str()), f))
            .collect();
        for f in &found {
            let label = f.rel_path.clone();
            match known.remove(&(f.root, f.rel_path.as_str())) {
                None => added.push(label),
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
    let mut reasons = Vec::new();
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
    Ok(Status {
        fresh: reasons.is_empty(),
        generation: m.generation,
        documents: m.collection.documents,
        chunks: m.collection.chunks,
        added,
        changed,
        removed,
        config_changed,
        reasons,
    })
}
