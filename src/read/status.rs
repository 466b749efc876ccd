//! Status: is the index up to date with the files on disk, its settings and its vectors,
//! and if not, why. The one answer behind `docfuse status`, `GET /v1/status`, MCP
//! `index_status` and the `stale` flag of every search response.

use super::freshness::Freshness;
use super::index::DocIndex;
use super::remote::EmbedderInfo;
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
    /// Why the model cannot be found now, for an index that wants vectors (checked by
    /// [`status_now`] only; `None` otherwise or when it is installed): vector searches
    /// answer lexically until it is installed.
    pub model_unavailable: Option<String>,
    /// The embedder that made the index's vectors (`None` for a lexical-only index).
    pub embedder: Option<EmbedderInfo>,
    /// Whether the vector side can answer now (known once the model is loaded).
    pub vectors_usable: bool,
    /// Entries the last walk skipped, per reason.
    pub skipped: BTreeMap<String, u64>,
    /// Human-readable reasons, empty when fresh.
    pub reasons: Vec<String>,
}

/// The status of `index`. Does not load the embedding model: the embedder is compared
/// with the vectors only once it is loaded (call [`DocIndex::vector_side`] first to
/// include that check).
///
/// # Errors
/// [`crate::Error::Corrupt`] when the snapshot is damaged.
pub fn status(index: &DocIndex) -> Result<Status> {
    status_with(index, None)
}

/// [`status`], with the vector side's reasons told as of now: when the index wants
/// vectors, whether the model is installed now (its files located and read, no ONNX
/// Runtime session, [`crate::embed::installed_identity`]), so a reason recorded at the
/// last refresh ("model not found") is not repeated after the model was fixed. For the
/// front ends' status (CLI, HTTP, MCP); a search's staleness check uses [`status`].
///
/// # Errors
/// As [`status`].
pub fn status_now(index: &DocIndex) -> Result<Status> {
    let m = index.manifest();
    // the model embeds the chunks without a vector and every query of a vector search:
    // whenever the index wants vectors (of its own files), say whether it is there now
    let wants_model = m.embeddings.wanted && index.remote_vectors().is_none();
    let unembedded = m.vectors.as_ref().is_none_or(|v| v.pending > 0);
    let now = wants_model.then(|| {
        // chunks to embed: the model's files read (a refresh must be able to load them);
        // all embedded: only located (a few `stat` calls), as a status may be asked often
        let found = match unembedded {
            true => crate::embed::installed_identity().map(|_| ()),
            false => crate::embed::locate_models().map(|_| ()),
        };
        found.map_err(|e| {
            let why = match e {
                crate::Error::VectorsUnavailable(why) => why,
                other => other.to_string(),
            };
            // one line: "reason; hint" (a reason's hint comes on a line of its own)
            why.replace("\nhint: ", "; ").replace('\n', " ")
        })
    });
    status_with(index, now)
}

/// Why the index this process opened is no longer on disk (its folder or manifest was
/// deleted or moved), if so: a running server then answers from what it loaded.
pub fn index_gone(index: &DocIndex) -> Option<String> {
    let manifest = index.dir().join(crate::store::MANIFEST_FILE);
    (!manifest.is_file()).then(|| {
        format!(
            "the index folder `{}` is gone (no `{}`): answers come from the generation this process loaded; build it again with `docfuse index` and restart",
            index.dir().display(),
            crate::store::MANIFEST_FILE
        )
    })
}

/// The status, `model_now` being whether the model is installed now (`None`: not
/// checked).
fn status_with(
    index: &DocIndex,
    model_now: Option<std::result::Result<(), String>>,
) -> Result<Status> {
    let m = index.manifest();
    let f: Freshness = index.freshness().map_err(|e| match index_gone(index) {
        Some(_) => crate::Error::NoIndex {
            dir: index.dir().to_path_buf(),
        },
        None => e,
    })?;
    let current = IndexConfig::with_overrides(&m.config_overrides).map(|c| c.hash());
    let config_changed = current.as_deref().is_ok_and(|h| h != m.config_hash);
    let mut reasons: Vec<String> = index_gone(index).into_iter().collect();
    reasons.extend(f
        .missing_roots
        .iter()
        .map(|r| format!("root `{r}` is missing (restore it, or drop it with `docfuse refresh --drop-missing-roots`)")));
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
        reasons.push(format!(
            "{pending} chunk(s) pending embedding{}",
            now_note(model_now.as_ref().filter(|now| now.is_err()), None)
        ));
    }
    let vectors_missing = match (&m.vectors, &m.embeddings.unavailable) {
        (None, Some(why)) if m.embeddings.wanted => Some(why.clone()),
        _ => None,
    };
    if let Some(why) = &vectors_missing {
        reasons.push(match &model_now {
            None => format!("vectors missing: {why}"),
            Some(now) => format!("vectors missing{}", now_note(Some(now), Some(why))),
        });
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
        model_unavailable: model_now.and_then(Result::err),
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

/// The end of a vector reason as of now: `": {why now}"` while the model is still not
/// installed (naming the reason of the last refresh when it was another), or that it is
/// installed now and a refresh embeds the chunks. Empty when not checked.
fn now_note(model_now: Option<&std::result::Result<(), String>>, then: Option<&str>) -> String {
    match (model_now, then) {
        (None, _) => String::new(),
        (Some(Err(now)), Some(then)) if !now.starts_with(then.lines().next().unwrap_or(then)) => {
            format!(": {now} (at the last refresh: {})", then.lines().next().unwrap_or(then))
        }
        (Some(Err(now)), _) => format!(": {now}"),
        (Some(Ok(())), Some(then)) => format!(
            ": at the last refresh {then}; the model is installed now, `docfuse refresh` embeds them"
        ),
        (Some(Ok(())), None) => String::new(),
    }
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

/// Whether `index` is stale: [`status`] (without loading a model) says it is not fresh.
/// A check is reused for a second (a server answers many queries a second; each check
/// walks the roots). True when the check itself fails.
pub fn stale(index: &DocIndex) -> bool {
    index
        .checks()
        .cached_stale(|| status(index).map_or(true, |s| !s.fresh))
}
