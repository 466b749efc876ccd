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
    /// Where its indexed text is in its bucket's sources file: byte offset and
    /// length of its record (one JSON line).
    #[serde(default)]
    pub record: Option<(u64, u64)>,
    /// Status-change time when it was read, ns since the Unix epoch (0 when unknown).
    #[serde(default)]
    pub ctime_ns: u64,
    /// When a build read it (the start of that build's reading), ms since the Unix epoch;
    /// 0 when unknown.
    #[serde(default)]
    pub read_ms: u64,
    /// The lexical bucket holding its chunks; its record is in that bucket's sources
    /// file, `sources/b<bucket>.jsonl`.
    #[serde(default)]
    pub bucket: Option<u64>,
    /// How its indexed text is not exactly the file, when it is not (cut at the byte
    /// budget, decoded as Windows-1252 or lossily); shown by `docfuse status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How long before the build that read a file its mtime must be for size, mtime and
/// ctime alone to prove it unchanged since, ns.
pub const RACY_NS: u64 = 2_000_000_000;

impl FileEntry {
    /// True when a file found now with `size`, `mtime_ns` and `ctime_ns` is the file this
    /// entry recorded, without reading it: all three match and the mtime is more than
    /// [`RACY_NS`] older than when it was read. A file rewritten within one clock tick of
    /// being read keeps its mtime: such "racily clean" entries (git's term) prove nothing.
    pub fn unchanged_by_stat(&self, size: u64, mtime_ns: u64, ctime_ns: u64) -> bool {
        self.size == size
            && self.mtime_ns == mtime_ns
            && self.ctime_ns == ctime_ns
            && !self.racily_clean()
    }

    /// True when the entry's mtime is too close to when it was read to prove anything.
    pub fn racily_clean(&self) -> bool {
        self.read_ms == 0
            || self.mtime_ns.saturating_add(RACY_NS) >= self.read_ms.saturating_mul(1_000_000)
    }
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

#[cfg(test)]
mod stat_tests {
    use super::*;

    fn entry(mtime_s: u64, read_s: u64) -> FileEntry {
        FileEntry {
            root: 0,
            rel_path: "a.md".into(),
            size: 10,
            mtime_ns: mtime_s * 1_000_000_000,
            sha256: String::new(),
            chunks: 1,
            record: Some((0, 10)),
            ctime_ns: 7,
            read_ms: read_s * 1000,
            bucket: Some(0),
            note: None,
        }
    }

    #[test]
    fn size_mtime_and_ctime_prove_a_file_unchanged_only_when_it_was_read_well_after_its_mtime() {
        let e = entry(100, 110);
        assert!(e.unchanged_by_stat(10, 100_000_000_000, 7));
        assert!(!e.unchanged_by_stat(11, 100_000_000_000, 7), "size");
        assert!(!e.unchanged_by_stat(10, 100_000_000_001, 7), "mtime");
        assert!(
            !e.unchanged_by_stat(10, 100_000_000_000, 8),
            "ctime (mtime set back)"
        );
        // read one second after its last write: a rewrite in the same tick is possible
        let racy = entry(100, 101);
        assert!(racy.racily_clean());
        assert!(!racy.unchanged_by_stat(10, 100_000_000_000, 7));
        // never read by a build that recorded when
        assert!(entry(100, 0).racily_clean());
    }
}
