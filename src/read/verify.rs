//! `verify`: every file of the published generation against the sha256 the manifest
//! recorded for it, and the snapshot against the manifest.

use crate::error::Result;
use crate::store::{check_hashes, Manifest};
use serde::Serialize;
use std::path::Path;

/// The outcome of [`verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    pub generation: u64,
    /// Files checked.
    pub files: usize,
    /// Bytes hashed.
    pub bytes: u64,
    /// What does not match, one line per file; empty when the generation is whole.
    pub damaged: Vec<String>,
    /// Folded-model cache folders that do not check out (the user's `model-cache/`), one line each:
    /// not damage of the index — a search would not use them (it removes them) and the
    /// next refresh writes them again.
    pub model_cache: Vec<String>,
}

/// Checks the manifest (seal, versions) and the sha256 of every file of the published
/// generation of the index in `dir`, and the folded-model cache in full.
///
/// # Errors
/// [`crate::Error::NoIndex`], [`crate::Error::IndexVersion`] or [`crate::Error::Corrupt`]
/// when the manifest itself cannot be trusted.
pub fn verify(dir: &Path) -> Result<Verification> {
    let m = Manifest::load(dir)?;
    let gen = dir.join(&m.generation_dir);
    let mut damaged = check_hashes(&gen, &m.contents);
    if !m
        .contents
        .iter()
        .any(|f| f.path == crate::generation::FILES_FILE)
    {
        damaged.push("the manifest does not list the snapshot".into());
    }
    let model_cache = crate::embed::folded::damaged(&crate::embed::folded::cache_dir(dir))
        .into_iter()
        .map(|(folder, why)| format!("{}: {why}", folder.display()))
        .collect();
    Ok(Verification {
        generation: m.generation,
        files: m.contents.len(),
        bytes: m.contents.iter().map(|f| f.size).sum(),
        damaged,
        model_cache,
    })
}
