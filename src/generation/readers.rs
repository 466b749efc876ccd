//! Readers of a generation register, so a refresh never deletes the files of a
//! generation that someone still answers from: an opened [`crate::read::DocIndex`] holds an
//! exclusive `flock` on its own file `DIR/readers/gen-G.PID.N` until it is dropped. A
//! writer cleaning up old generations keeps every generation with a held reader file;
//! the file of a process that died is unlocked, so it is removed and does not count.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Folder of reader files in the index folder.
pub const READERS_DIR: &str = "readers";

/// A registered reader of one generation; unregisters on drop.
#[derive(Debug)]
pub struct ReaderMark {
    _file: File,
    path: PathBuf,
}

impl Drop for ReaderMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Registers a reader of `generation` in `index_dir`. Best effort: `None` when the
/// folder cannot be written (a read-only index, which no refresh can clean up either).
pub fn register(index_dir: &Path, generation: u64) -> Option<ReaderMark> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = index_dir.join(READERS_DIR);
    std::fs::create_dir_all(&dir).ok()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("gen-{generation}.{}.{n}", std::process::id()));
    let file = File::create(&path).ok()?;
    if file.try_lock().is_err() {
        let _ = std::fs::remove_file(&path);
        return None;
    }
    Some(ReaderMark { _file: file, path })
}

/// Whether a live reader holds `generation`; removes the files of dead readers.
pub fn in_use(index_dir: &Path, generation: u64) -> bool {
    let Ok(rd) = std::fs::read_dir(index_dir.join(READERS_DIR)) else {
        return false;
    };
    let prefix = format!("gen-{generation}.");
    let mut used = false;
    for entry in rd.filter_map(Result::ok) {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let Ok(file) = File::open(entry.path()) else {
            continue;
        };
        match file.try_lock() {
            Err(TryLockError::WouldBlock) => used = true,
            Ok(()) => {
                let _ = std::fs::remove_file(entry.path());
            }
            Err(TryLockError::Error(_)) => used = true,
        }
    }
    used
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_mark_is_in_use_and_a_dropped_or_dead_one_is_not() {
        let d = tempfile::tempdir().unwrap();
        let mark = register(d.path(), 3).unwrap();
        assert!(in_use(d.path(), 3));
        assert!(!in_use(d.path(), 4));
        drop(mark);
        assert!(!in_use(d.path(), 3));
        // a file nobody holds (its process died) is removed
        let dead = d.path().join(READERS_DIR).join("gen-5.1.0");
        std::fs::write(&dead, b"").unwrap();
        assert!(!in_use(d.path(), 5));
        assert!(!dead.exists());
    }
}
