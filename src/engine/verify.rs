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
}

/// Checks the manifest (seal, versions) and the sha256 of every file of the published
/// generation of the index in `dir`.
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
        .any(|f| f.path == super::previous::FILES_FILE)
    {
        damaged.push("the manifest does not list the snapshot".into());
    }
    for (folder, why) in crate::embed::folded::damaged(&dir.join(super::MODEL_CACHE_DIR)) {
        damaged.push(format!(
            "{}: {why} (a folded-model cache: delete the folder, the next `docfuse refresh` writes it again)",
            folder.display()
        ));
    }
    Ok(Verification {
        generation: m.generation,
        files: m.contents.len(),
        bytes: m.contents.iter().map(|f| f.size).sum(),
        damaged,
    })
}
