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

/// How long a writer waits for the lock another process holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWait {
    /// Fail at once (`--no-wait`).
    No,
    /// Until it is free (the default).
    Forever,
    /// At most this long (`--wait-timeout`), then fail.
    For(std::time::Duration),
}

impl From<bool> for LockWait {
    fn from(wait: bool) -> Self {
        if wait {
            LockWait::Forever
        } else {
            LockWait::No
        }
    }
}

impl LockWait {
    /// From `--no-wait` and `--wait-timeout SECONDS`.
    pub fn of(no_wait: bool, timeout_s: Option<f64>) -> LockWait {
        match (no_wait, timeout_s) {
            (true, _) => LockWait::No,
            (false, Some(s)) => LockWait::For(std::time::Duration::from_secs_f64(s.max(0.0))),
            (false, None) => LockWait::Forever,
        }
    }
}

/// How often a bounded wait tries the lock again.
const RETRY_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Takes the writer lock of `index_dir`. When another process holds it: unless `wait`
/// is [`LockWait::No`], calls `on_wait(holder)` once and waits until it is free (at most
/// the given time for [`LockWait::For`]); else fails.
///
/// # Errors
/// [`Error::Locked`] naming the holder's pid when busy and not waiting, or still busy at
/// the end of a bounded wait; [`Error::Io`] when the lock file cannot be opened.
pub fn acquire(
    index_dir: &Path,
    wait: impl Into<LockWait>,
    on_wait: &mut dyn FnMut(&str),
) -> Result<WriterLock> {
    acquire_named(index_dir, LOCK_FILE, wait.into(), on_wait)
}

/// [`acquire`] of the lock file `name` in `index_dir` (another role's lock, such as
/// `ingest`'s one ingester per index).
///
/// # Errors
/// As [`acquire`].
pub fn acquire_named(
    index_dir: &Path,
    name: &str,
    wait: LockWait,
    on_wait: &mut dyn FnMut(&str),
) -> Result<WriterLock> {
    let path = index_dir.join(name);
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
            let limit = match wait {
                LockWait::No => {
                    return Err(Error::Locked {
                        dir: index_dir.to_path_buf(),
                        holder,
                    })
                }
                LockWait::Forever => None,
                LockWait::For(d) => Some(d),
            };
            on_wait(&holder);
            match limit {
                None => file.lock().map_err(|e| Error::io("lock", &path, e))?,
                Some(limit) => wait_at_most(&file, limit).map_err(|e| match e {
                    Some(e) => Error::io("lock", &path, e),
                    None => Error::Locked {
                        dir: index_dir.to_path_buf(),
                        holder: format!(
                            "{holder}; still writing after {:.1} s",
                            limit.as_secs_f64()
                        ),
                    },
                })?,
            }
        }
        Err(TryLockError::Error(e)) => return Err(Error::io("lock", &path, e)),
    }
    let _ = file.set_len(0);
    let _ = write!(file, "pid {}", std::process::id());
    Ok(WriterLock { _file: file })
}

/// Tries the lock every [`RETRY_EVERY`] for at most `limit`: `Err(None)` when it stayed
/// busy, `Err(Some(e))` on an I/O failure.
fn wait_at_most(
    file: &File,
    limit: std::time::Duration,
) -> std::result::Result<(), Option<std::io::Error>> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::Error(e)) => return Err(Some(e)),
            Err(TryLockError::WouldBlock) if std::time::Instant::now() >= deadline => {
                return Err(None)
            }
            Err(TryLockError::WouldBlock) => std::thread::sleep(RETRY_EVERY),
        }
    }
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
        // a bounded wait gives up after its time, naming the holder and the wait
        let held = acquire(d.path(), false, &mut |_| {}).unwrap();
        let started = std::time::Instant::now();
        let mut told = 0;
        let err = acquire(
            d.path(),
            LockWait::For(std::time::Duration::from_millis(300)),
            &mut |_| told += 1,
        )
        .err()
        .unwrap()
        .to_string();
        assert!(started.elapsed() >= std::time::Duration::from_millis(300));
        assert!(err.contains("still writing after 0.3 s"), "{err}");
        assert_eq!(told, 1);
        // and takes the lock when it is freed within the time
        let freer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            drop(held);
        });
        assert!(acquire(
            d.path(),
            LockWait::For(std::time::Duration::from_secs(5)),
            &mut |_| {}
        )
        .is_ok());
        freer.join().unwrap();
    }
}
