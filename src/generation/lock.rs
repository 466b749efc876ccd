//! One writer per index folder: an advisory lock on `DIR/writer.lock` (`flock` through
//! `std::fs::File::lock`). The operating system releases it when the holder exits or is
//! killed, so a stale lock from a dead process never blocks.

use crate::error::{Error, Result};
use std::fs::{File, TryLockError};
use std::io::Write;
use std::path::Path;

/// File name of the lock in the index folder.
pub const LOCK_FILE: &str = "writer.lock";

/// Held while a build or refresh writes; released on drop.
pub struct WriterLock {
    _file: File,
}

/// Takes the writer lock of `index_dir`. When another process holds it: with `wait`,
/// calls `on_wait(holder)` once and blocks until it is free; without, fails.
///
/// # Errors
/// [`Error::Locked`] naming the holder's pid when busy and not waiting; [`Error::Io`]
/// when the lock file cannot be opened.
pub fn acquire(index_dir: &Path, wait: bool, on_wait: &mut dyn FnMut(&str)) -> Result<WriterLock> {
    let path = index_dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io("open", &path, e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let holder = std::fs::read_to_string(&path)
                .unwrap_or_default()
                .trim()
                .to_string();
            if !wait {
                return Err(Error::Locked {
                    dir: index_dir.to_path_buf(),
                    holder,
                });
            }
            on_wait(&holder);
            file.lock().map_err(|e| Error::io("lock", &path, e))?;
        }
        Err(TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
    }
    let _ = file.set_len(0);
    let _ = write!(file, "pid {}", std::process::id());
    Ok(WriterLock { _file: file })
}

/// The holder (`pid N`, or `pid unknown` in the instant it is being written) of
/// `index_dir`'s writer lock when it is held now, else `None` (no lock file, or nobody
/// holds it). A lock this process holds counts too (`flock` locks belong to an open
/// file). Opens the lock file read-only and never creates it: safe on a read-only index.
pub fn holder(index_dir: &Path) -> Option<String> {
    let path = index_dir.join(LOCK_FILE);
    let file = File::open(&path).ok()?;
    match file.try_lock_shared() {
        Err(TryLockError::WouldBlock) => {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            Some(match text.trim() {
                "" => "pid unknown".to_string(),
                pid => pid.to_string(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_fails_without_wait_and_gets_the_lock_after_release() {
        let d = tempfile::tempdir().unwrap();
        let first = acquire(d.path(), false, &mut |_| {}).unwrap();
        let err = acquire(d.path(), false, &mut |_| {}).err().unwrap();
        assert!(
            err.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert_eq!(
            holder(d.path()),
            Some(format!("pid {}", std::process::id()))
        );
        drop(first);
        assert_eq!(holder(d.path()), None);
        assert!(acquire(d.path(), false, &mut |_| {}).is_ok());
    }
}
