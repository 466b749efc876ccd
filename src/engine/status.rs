//! Status: is the index up to date with the files on disk, its settings and its vectors,
//! and if not, why. The one answer behind `docfuse status`, `GET /v1/status`, MCP
//! `index_status` and the `stale` flag of every search response.

use super::freshness::Freshness;
use super::open::DocIndex;
use crate::config::IndexConfig;
use crate::error::Result;
use serde::Serialize;
use std::collections::BTreeMap;

/// The freshness of an index against its sources.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Status {
    pub fresh: bool,
    pub generation: u64,
    pub documents: u64,
    pub chunks: u64,
    /// Files under the roots that the index does not have.
    pub added: Vec<String>,
    /// Indexed files whose content changed.
    pub changed: Vec<String>,
    /// Indexed files no longer on disk.
    pub removed: Vec<String>,
    /// Indexed files that cannot be read now.
    pub unreadable: Vec<String>,
    /// Indexed files touched (new mtime or size, same content); not a reason to refresh.
    pub touched: u64,
    /// Files that could not be read at the last refresh; their previous text is served
    /// (`path: reason`).
    pub partial: Vec<String>,
    /// Files whose indexed text is not exactly the file (`path: how`): cut at the byte
    /// budget (`--max-file-bytes`), decoded as Windows-1252 or lossily. Not a reason to
    /// refresh: a refresh reads them the same way.
    pub read_in_part: Vec<String>,
    /// Roots of the index that are gone.
    pub missing_roots: Vec<String>,
    /// docfuse's defaults changed since the index was built (the settings given
    /// explicitly are kept).
    pub config_changed: bool,
    /// The embedder that would be loaded now differs from the one that made the vectors
    /// (checked only when the model is loaded).
    pub embedder_changed: bool,
    /// Chunks still without a vector (lexical only until a refresh embeds them).
    pub pending: u64,
    /// Why the index has no vectors although they were asked for.
    pub vectors_missing: Option<String>,
    /// The embedder that made the index's vectors (`None` for a lexical-only index).
    pub embedder: Option<EmbedderInfo>,
    /// Whether the vector side can answer now (known once the model is loaded).
    pub vectors_usable: bool,
    /// Entries the last walk skipped, per reason.
    pub skipped: BTreeMap<String, u64>,
    /// Human-readable reasons, empty when fresh.
    pub reasons: Vec<String>,
}

/// The embedder identity recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct EmbedderInfo {
    pub model: String,
    pub identity_key: String,
    pub dim: usize,
}

/// The status of `index`. Does not load the embedding model: the embedder is compared
/// with the vectors only once it is loaded (call [`DocIndex::vector_side`] first to
/// include that check).
///
/// # Errors
/// [`crate::Error::Corrupt`] when the snapshot is damaged.
pub fn status(index: &DocIndex) -> Result<Status> {
    let m = index.manifest();
    let f: Freshness = index.freshness()?;
    let current = IndexConfig::with_overrides(&m.config_overrides).map(|c| c.hash());
    let config_changed = current.as_deref().is_ok_and(|h| h != m.config_hash);
    let mut reasons: Vec<String> = f
        .missing_roots
        .iter()
        .map(|r| format!("root `{r}` is missing (restore it, or drop it with `docfuse refresh --drop-missing-roots`)"))
        .collect();
    for (n, what) in [
        (f.added.len(), "added"),
        (f.changed.len(), "changed"),
        (f.removed.len(), "removed"),
        (
            f.unreadable.len(),
            "unreadable now (their last indexed text is served)",
        ),
    ] {
        if n > 0 {
            reasons.push(format!("{n} file(s) {what}"));
        }
    }
    let partial: Vec<String> = m
        .partial
        .iter()
        .map(|p| format!("{}: {}", p.path, p.reason))
        .collect();
    if !partial.is_empty() {
        reasons.push(format!(
            "partial: {} file(s) could not be read (or, for API specs, parsed) at the last refresh; their last indexed text is kept",
            partial.len()
        ));
    }
    if config_changed {
        reasons.push(
            "configuration changed (docfuse's defaults moved since the index was built)".into(),
        );
    }
    let remote = index.remote_vectors();
    let pending = m
        .vectors
        .as_ref()
        .map_or(0, |v| v.pending)
        .max(remote.map_or(0, |r| r.counts().1));
    if pending > 0 {
        reasons.push(format!("{pending} chunk(s) pending embedding"));
    }
    let vectors_missing = match (&m.vectors, &m.embeddings.unavailable) {
        (None, Some(why)) if m.embeddings.wanted => Some(why.clone()),
        _ => None,
    };
    if let Some(why) = &vectors_missing {
        reasons.push(format!("vectors missing: {why}"));
    }
    if let Some(why) = index.vectors_damage() {
        reasons.push(format!(
            "damaged: {why}; `docfuse refresh --force` rebuilds them"
        ));
    }
    // in-memory checks only: a search's staleness check calls this, so no round trip
    // to an attached store (`DocIndex::vector_usable` asks it; the front ends do)
    let side = ((m.vectors.is_some() || remote.is_some()) && index.embedder_loaded())
        .then(|| index.vector_side().map(|_| ()));
    let embedder_changed = matches!(&side, Some(Err(why)) if why.contains("another embedder"));
    if embedder_changed {
        reasons.push("embedder changed".into());
    }

    Ok(Status {
        fresh: reasons.is_empty(),
        generation: index.generation(),
        documents: m.collection.documents,
        chunks: m.collection.chunks,
        added: f.added,
        changed: f.changed,
        removed: f.removed,
        unreadable: f.unreadable,
        touched: f.touched,
        partial,
        read_in_part: read_in_part(index)?,
        missing_roots: f.missing_roots,
        config_changed,
        embedder_changed,
        pending,
        vectors_missing,
        embedder: m
            .vectors
            .as_ref()
            .map(|v| EmbedderInfo {
                model: v.model.clone(),
                identity_key: v.identity_key.clone(),
                dim: v.dim,
            })
            .or_else(|| remote.and_then(|r| r.embedder().ok())),
        vectors_usable: matches!(side, Some(Ok(()))),
        skipped: m.skips.clone(),
        reasons,
    })
}

/// `path: note` of every indexed file read with a note (roots named when there are several).
fn read_in_part(index: &DocIndex) -> Result<Vec<String>> {
    let snapshot = index.snapshot()?;
    let several = snapshot.files.iter().any(|e| e.root > 0);
    Ok(snapshot
        .files
        .iter()
        .filter_map(|e| {
            let note = e.note.as_ref()?;
            let root = index.root_dir(e.root).filter(|_| several);
            Some(match root {
                Some(r) => format!("{r}/{}: {note}", e.rel_path),
                None => format!("{}: {note}", e.rel_path),
            })
        })
        .collect())
}
