//! Freshness of an opened index against the files on disk, one rule for every caller
//! (`status`, the search envelope's `stale`, per-result marks, verified passage reads):
//! a file whose size, mtime and ctime match the snapshot is unchanged (ctime moves on any
//! write, also one that sets the mtime back); otherwise its content decides (sha256 of
//! the bytes as indexed), and the answer is remembered for that size, mtime and ctime, so
//! a touched file is hashed once, not on every query.

use super::opened::OpenGeneration;
use crate::chunk::SourceKind;
use crate::discover::{discover, read_checked, ReadError};
use crate::error::Result;
use crate::generation::read_document;
use crate::store::{FileEntry, SourceSpec};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// An indexed file on disk now, against the index's snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum FileState {
    /// Same content as indexed (possibly touched: another mtime, same bytes).
    Fresh,
    /// Other content than indexed.
    Changed,
    /// No longer on disk.
    Deleted,
    /// On disk but cannot be read now (permissions, I/O error).
    Unreadable(String),
    /// Its path now resolves outside its root (replaced by a symbolic link): never read.
    Outside,
}

impl FileState {
    /// A short note for a result from this file, `None` when fresh.
    pub fn note(&self) -> Option<String> {
        match self {
            FileState::Fresh => None,
            FileState::Changed => Some("file changed since indexing".into()),
            FileState::Deleted => Some("file deleted since indexing".into()),
            FileState::Unreadable(e) => Some(format!("file unreadable now ({e})")),
            FileState::Outside => {
                Some("file now resolves outside its root (a symbolic link); not read".into())
            }
        }
    }
}

/// A remembered content check: the size, mtime and ctime it was made at, and whether the
/// content was the indexed one.
type Check = ((u64, u64, u64), FileState);

/// Remembered content checks by `(root, path)`.
#[derive(Default)]
pub struct FileChecks {
    same: Mutex<HashMap<(usize, String), Check>>,
    /// The last cheap status and when it was computed.
    last_stale: Mutex<Option<(std::time::Instant, bool)>>,
}

/// Indexed files compared with the disk.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Freshness {
    /// Files under the roots that the index does not have.
    pub added: Vec<String>,
    /// Indexed files whose content changed.
    pub changed: Vec<String>,
    /// Indexed files no longer on disk.
    pub removed: Vec<String>,
    /// Indexed files that cannot be read now (or sit in a folder that cannot be listed).
    pub unreadable: Vec<String>,
    /// Indexed files with another size, mtime or ctime but the same content.
    pub touched: u64,
    /// Roots of the index that are gone.
    pub missing_roots: Vec<String>,
}

impl Freshness {
    /// No file added, changed, removed or unreadable, no root missing.
    pub fn is_fresh(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.unreadable.is_empty()
            && self.missing_roots.is_empty()
    }
}

impl FileChecks {
    /// The state of indexed file `rel_path` of root `root` on disk now. A file of a JSONL
    /// source is always fresh (its records are served from the index).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the snapshot cannot be read; a path the snapshot
    /// does not hold is [`FileState::Deleted`].
    pub fn file_state(&self, g: &OpenGeneration, root: usize, rel_path: &str) -> Result<FileState> {
        let Some(root_dir) = g.root_dir(root) else {
            return Ok(FileState::Fresh);
        };
        let Some(entry) = g.entry(root, rel_path)? else {
            return Ok(FileState::Deleted);
        };
        let path = if std::path::Path::new(root_dir).is_file() {
            PathBuf::from(root_dir)
        } else {
            PathBuf::from(root_dir).join(rel_path)
        };
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::Deleted),
            Err(e) => return Ok(FileState::Unreadable(e.to_string())),
        };
        // The walk's rule: a file is indexed by its canonical path inside its root.
        let inside = std::fs::canonicalize(&path)
            .ok()
            .zip(std::fs::canonicalize(root_dir).ok())
            .is_some_and(|(c, r)| c.starts_with(r));
        if !inside {
            return Ok(FileState::Outside);
        }
        let stat = (
            meta.len(),
            crate::discover::mtime_ns(&meta),
            crate::discover::ctime_ns(&meta),
        );
        Ok(self.content_state(g, &entry, &path, stat))
    }

    fn content_state(
        &self,
        g: &OpenGeneration,
        entry: &FileEntry,
        path: &std::path::Path,
        stat: (u64, u64, u64),
    ) -> FileState {
        let (size, mtime, ctime) = stat;
        // An entry of an older index (no ctime recorded) goes by size and mtime.
        let same_ctime = entry.ctime_ns == 0 || entry.ctime_ns == ctime;
        if entry.size == size && entry.mtime_ns == mtime && same_ctime {
            return FileState::Fresh;
        }
        let key = (entry.root, entry.rel_path.clone());
        let mut same = self.same.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, state)) = same.get(&key) {
            if *seen == stat {
                return state.clone();
            }
        }
        drop(same);
        let max = g.manifest().config.max_file_bytes;
        let spec = SourceKind::of_path(&entry.rel_path) == Some(SourceKind::OpenApi);
        let state = match read_checked(path, max, &mut Vec::new()) {
            Ok(t) if t.sha256 == entry.sha256 => FileState::Fresh,
            // an edit that broke a spec: a refresh keeps its last sections (partial)
            Ok(t) if spec && (t.cut || crate::chunk::openapi::check(&t.text).is_err()) => {
                FileState::Unreadable("not readable as an API spec".into())
            }
            Ok(_)
            | Err(ReadError::Binary(_))
            | Err(ReadError::NotRegular(_))
            | Err(ReadError::InvalidSpec(_)) => FileState::Changed,
            Err(ReadError::Unreadable(e)) => return FileState::Unreadable(e),
        };
        same = self.same.lock().unwrap_or_else(|p| p.into_inner());
        same.insert(key, (stat, state.clone()));
        state
    }

    /// Compares every indexed file with the disk (a walk of the roots, a stat per file,
    /// content hashes only where size, mtime or ctime moved).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the snapshot cannot be read.
    pub fn freshness(&self, g: &OpenGeneration) -> Result<Freshness> {
        let m = g.manifest();
        let snapshot = g.snapshot_ref()?;
        let mut out = Freshness::default();
        let SourceSpec::Roots { roots } = &m.source else {
            return Ok(jsonl_freshness(m, &snapshot.files));
        };
        let present: Vec<usize> = (0..roots.len())
            .filter(|&i| PathBuf::from(&roots[i]).exists())
            .collect();
        out.missing_roots = (0..roots.len())
            .filter(|i| !present.contains(i))
            .map(|i| roots[i].clone())
            .collect();
        let paths: Vec<PathBuf> = present.iter().map(|&i| PathBuf::from(&roots[i])).collect();
        let found = match discover(&paths, m.config.walk) {
            Ok(f) => f,
            Err(e) => {
                out.unreadable.push(e.to_string());
                return Ok(out);
            }
        };
        let mut known: HashMap<(usize, &str), &FileEntry> = snapshot
            .files
            .iter()
            .map(|f| ((f.root, f.rel_path.as_str()), f))
            .collect();
        for f in &found.files {
            let root = present[f.root];
            match known.remove(&(root, f.rel_path.as_str())) {
                None => {
                    // A file the build would skip (binary, special, a spec that does
                    // not parse) is not new content.
                    let max = m.config.max_file_bytes;
                    if read_document(&f.path, f.kind, max, &mut Vec::new()).is_ok() {
                        out.added.push(f.rel_path.clone());
                    }
                }
                Some(e) => {
                    match self.content_state(g, e, &f.path, (f.size, f.mtime_ns, f.ctime_ns)) {
                        FileState::Fresh if e.size != f.size || e.mtime_ns != f.mtime_ns => {
                            out.touched += 1
                        }
                        FileState::Fresh => {}
                        FileState::Changed => out.changed.push(f.rel_path.clone()),
                        FileState::Deleted | FileState::Outside => {
                            out.removed.push(f.rel_path.clone())
                        }
                        FileState::Unreadable(_) => out.unreadable.push(f.rel_path.clone()),
                    }
                }
            }
        }
        for e in known.into_values() {
            let Some(pos) = present.iter().position(|&r| r == e.root) else {
                continue; // its root is missing: reported as such
            };
            if found.under_unreadable_dir(pos, &e.rel_path) {
                out.unreadable.push(e.rel_path.clone());
            } else {
                out.removed.push(e.rel_path.clone());
            }
        }
        for v in [
            &mut out.added,
            &mut out.changed,
            &mut out.removed,
            &mut out.unreadable,
        ] {
            v.sort();
        }
        Ok(out)
    }

    /// Whether the index is stale, as `compute` says (a cheap status), reusing the last
    /// answer for a second: a server answers many queries a second, each check walks the
    /// roots.
    pub fn cached_stale(&self, compute: impl FnOnce() -> bool) -> bool {
        let mut last = self.last_stale.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, stale)) = *last {
            if at.elapsed() < STALE_CHECK_TTL {
                return stale;
            }
        }
        let stale = compute();
        *last = Some((std::time::Instant::now(), stale));
        stale
    }
}

/// A JSONL source is one file: changed when its size or mtime moved.
fn jsonl_freshness(m: &crate::store::Manifest, files: &[FileEntry]) -> Freshness {
    let mut out = Freshness::default();
    if let SourceSpec::Jsonl { file } = &m.source {
        let moved = match std::fs::metadata(file) {
            Err(_) => {
                out.missing_roots.push(file.clone());
                return out;
            }
            Ok(meta) => files.first().is_none_or(|e| {
                e.size != meta.len() || e.mtime_ns != crate::discover::mtime_ns(&meta)
            }),
        };
        if moved {
            out.changed.push(file.clone());
        }
    }
    out
}

/// A stale check is reused for this long.
const STALE_CHECK_TTL: std::time::Duration = std::time::Duration::from_secs(1);
