//! The published generation a build starts from: its manifest, its file snapshot, and
//! the indexed text of each of its documents (to carry a root over, or keep the last
//! text of a file that cannot be read now).

use super::source::{read_record, Loaded};
use crate::error::{Error, Result};
use crate::store::{check_sizes, FileEntry, Manifest, Snapshot, SourceSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// File of a generation listing `(chunk id, content hash)` in ordinal order.
pub const CHUNKS_FILE: &str = "chunks.json";

/// File of a generation holding its snapshot (one entry per indexed file).
pub const FILES_FILE: &str = "files.json";

/// A usable published generation.
pub struct Previous {
    pub manifest: Manifest,
    pub index_dir: PathBuf,
    pub gen_dir: PathBuf,
    pub snapshot: Snapshot,
    /// Snapshot entries by (root name, rel_path).
    by_key: HashMap<(String, String), usize>,
}

impl Previous {
    /// Opens the published generation of `manifest` for a build: its sizes must match
    /// the manifest and its snapshot must verify; else `Err` with the reason (the build
    /// then starts from scratch).
    pub fn open(index_dir: &Path, manifest: Manifest) -> std::result::Result<Previous, String> {
        let gen_dir = index_dir.join(&manifest.generation_dir);
        if let Some(why) = check_sizes(&gen_dir, &manifest.contents) {
            return Err(why);
        }
        let snapshot = read_snapshot(index_dir, &manifest).map_err(|e| e.to_string())?;
        let names = root_names(&manifest.source);
        let by_key = snapshot
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let root = names.get(f.root).cloned().unwrap_or_default();
                ((root, f.rel_path.clone()), i)
            })
            .collect();
        Ok(Previous {
            manifest,
            index_dir: index_dir.to_path_buf(),
            gen_dir,
            snapshot,
            by_key,
        })
    }

    /// The snapshot entry of `rel_path` under the root named `root`.
    pub fn entry(&self, root: &str, rel_path: &str) -> Option<&FileEntry> {
        self.by_key
            .get(&(root.to_string(), rel_path.to_string()))
            .map(|&i| &self.snapshot.files[i])
    }

    /// The position in the snapshot of `rel_path` under the root named `root`.
    pub fn position(&self, root: &str, rel_path: &str) -> Option<usize> {
        self.by_key
            .get(&(root.to_string(), rel_path.to_string()))
            .copied()
    }

    /// Every entry of the root named `root`.
    pub fn entries_of<'a>(&'a self, root: &'a str) -> impl Iterator<Item = &'a FileEntry> + 'a {
        let index = root_names(&self.manifest.source)
            .iter()
            .position(|r| r == root);
        self.snapshot
            .files
            .iter()
            .filter(move |f| Some(f.root) == index)
    }

    /// `entry` of the previous generation as an unchanged document of build root `root`,
    /// its text not read ([`Loaded::carried`]).
    pub fn carry(entry: &FileEntry, root: usize, kind: crate::chunk::SourceKind) -> Loaded {
        Loaded {
            doc: crate::chunk::SourceDoc {
                rel_path: entry.rel_path.clone(),
                text: String::new(),
                kind,
                title_hint: None,
            },
            entry: FileEntry {
                root,
                ..entry.clone()
            },
            carried: true,
        }
    }

    /// The text of a carried document.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when its record cannot be read.
    pub fn text_of(&self, entry: &FileEntry) -> Result<String> {
        Ok(read_record(&self.index_dir, &self.gen_dir, entry)?.text)
    }

    /// The indexed document of `entry`, as build root `root`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when its record cannot be read.
    pub fn load(&self, entry: &FileEntry, root: usize) -> Result<Loaded> {
        let doc = read_record(&self.index_dir, &self.gen_dir, entry)?;
        let mut entry = entry.clone();
        entry.root = root;
        Ok(Loaded {
            doc,
            entry,
            carried: false,
        })
    }
}

/// The names of a source's roots (a JSONL source has one: its file).
pub fn root_names(spec: &SourceSpec) -> Vec<String> {
    match spec {
        SourceSpec::Roots { roots } => roots.clone(),
        SourceSpec::Jsonl { file } => vec![file.clone()],
    }
}

/// Reads and verifies the snapshot of the generation `manifest` names.
///
/// # Errors
/// [`Error::Corrupt`] (naming `index_dir`) when `files.json` is missing, altered or does
/// not parse.
pub fn read_snapshot(index_dir: &Path, manifest: &Manifest) -> Result<Snapshot> {
    let path = index_dir.join(&manifest.generation_dir).join(FILES_FILE);
    let bytes = crate::fsio::read_regular(&path)
        .map_err(|e| Error::corrupt(index_dir, format!("cannot read {FILES_FILE} ({e})")))?;
    if crate::hashing::sha256_hex(&bytes) != manifest.files_sha256 {
        return Err(Error::corrupt(
            index_dir,
            format!("{FILES_FILE} does not match the manifest"),
        ));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::corrupt(index_dir, format!("{FILES_FILE} does not parse ({e})")))
}

/// The `(id, hash)` list of a published generation, if readable.
pub fn previous_chunks(gen_dir: &Path) -> Option<Vec<(String, String)>> {
    let bytes = crate::fsio::read_regular(gen_dir.join(CHUNKS_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The vectors in a generation folder of any docfuse version (the vector files keep
/// their format; a vector is only reused when its embedding hash matches).
pub fn vectors_in(gen_dir: &Path) -> Option<(crate::vector::VectorSet, crate::store::VectorsInfo)> {
    let set = crate::vector::VectorSet::read(gen_dir).ok()?;
    let pending = set.meta.hashes.iter().filter(|h| h.is_empty()).count() as u64;
    let info = crate::store::VectorsInfo {
        identity_key: set.meta.identity_key.clone(),
        model: set.meta.identity["model"]
            .as_str()
            .unwrap_or("embedder")
            .to_string(),
        dim: set.meta.dim,
        embedded: set.len() as u64 - pending,
        pending,
    };
    Some((set, info))
}

pub fn generation_dirs(index_dir: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(index_dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let g = name.strip_prefix("gen-")?.parse::<u64>().ok()?;
            Some((g, e.path()))
        })
        .collect()
}
