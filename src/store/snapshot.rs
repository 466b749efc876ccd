//! The snapshot of the inputs an index was built from: one entry per source file.

use serde::{Deserialize, Serialize};

/// One indexed source file as it was at build time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Index into the manifest's roots.
    pub root: usize,
    /// Path relative to the root, `/`-separated.
    pub rel_path: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the Unix epoch.
    pub mtime_ns: u64,
    /// sha256 of the bytes indexed.
    pub sha256: String,
    /// Number of chunks it gave.
    pub chunks: u32,
    /// Where its indexed text is in the generation's `sources.jsonl`: byte offset and
    /// length of its record (one JSON line).
    #[serde(default)]
    pub record: Option<(u64, u64)>,
}

/// All indexed files, sorted by (root, rel_path). Stored as `files.json` in a generation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub files: Vec<FileEntry>,
}

impl Snapshot {
    /// sha256 over every file's root, path and content hash, in order: equal snapshots
    /// of equal inputs hash equal, whatever the mtimes.
    pub fn hash(&self) -> String {
        let mut h = crate::hashing::Hasher::new();
        for f in &self.files {
            h.part(f.root.to_le_bytes())
                .part(&f.rel_path)
                .part(&f.sha256);
        }
        h.finish()
    }
}
