//! Atomic file replacement: temp file in the same folder, fsync, rename, fsync the folder.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Replaces `path` with `bytes` so that a reader sees either the old or the new content,
/// never a mix, even across a crash.
///
/// # Errors
/// [`Error::Io`] naming the temp file or the folder that failed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_mode(path, bytes, None)
}

/// [`write_atomic`] for a file only its owner may read or write (mode `0600` on Unix,
/// from the moment it exists): secrets such as a pack URL's password.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_mode(path, bytes, Some(0o600))
}

fn write_atomic_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = crate::fsio::temp_beside(path);
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::OpenOptionsExt;
        // a leftover temp file of the same name keeps its mode: start afresh, and never
        // through a link planted in its place
        let _ = std::fs::remove_file(&tmp);
        open.mode(mode).create_new(true);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut f = open.open(&tmp).map_err(|e| Error::io("create", &tmp, e))?;
    f.write_all(bytes)
        .map_err(|e| Error::io("write", &tmp, e))?;
    f.sync_all().map_err(|e| Error::io("fsync", &tmp, e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| Error::io("rename into place", path, e))?;
    if let Ok(d) = std::fs::File::open(dir) {
        // fsync of a folder is not supported everywhere; the rename is already done.
        let _ = d.sync_all();
    }
    Ok(())
}

/// Hard-links `src` at `dst` (a file of a generation carried into the next one; both
/// are immutable), copying it where links fail (another file system).
///
/// # Errors
/// [`Error::Io`] naming `src` when the copy fails.
pub fn link_or_copy(src: &Path, dst: &Path) -> Result<()> {
    if std::fs::hard_link(src, dst).is_err() {
        std::fs::copy(src, dst).map_err(|e| Error::io("copy", src, e))?;
    }
    Ok(())
}

/// Flushes a folder's entries (names, hard links) to disk; best effort where folders
/// cannot be fsynced.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_content_and_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("m.json");
        super::write_atomic(&p, b"one").unwrap();
        super::write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
