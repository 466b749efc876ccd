//! A read-only tantivy directory: a generation's lexical index is immutable once
//! published, so readers need no lock and must never write (an index on a read-only
//! disk, or owned by another user, must still answer). Every write is refused; locks are
//! granted without touching the disk; `watch` is a no-op (readers reload nothing).

use std::io;
use std::path::Path;
use std::sync::Arc;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::Directory;

/// [`MmapDirectory`] for readers: no lock files, no writes, and only regular files read
/// (a FIFO in place of `meta.json` or a segment file would block tantivy's read forever).
#[derive(Debug, Clone)]
pub(crate) struct ReadOnlyDirectory(MmapDirectory, std::path::PathBuf);

impl ReadOnlyDirectory {
    /// Opens `dir` for reading.
    ///
    /// # Errors
    /// tantivy's error when the folder does not exist or cannot be read.
    pub fn open(dir: &Path) -> tantivy::Result<Self> {
        Ok(ReadOnlyDirectory(
            MmapDirectory::open(dir)?,
            dir.to_path_buf(),
        ))
    }

    /// Refuses `path` when something other than a regular file is in its place.
    fn regular(&self, path: &Path) -> Result<(), OpenReadError> {
        match std::fs::metadata(self.1.join(path)) {
            Ok(m) if !m.is_file() => Err(OpenReadError::IoError {
                io_error: Arc::new(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file (a FIFO, device or folder is in its place)",
                )),
                filepath: path.to_path_buf(),
            }),
            _ => Ok(()),
        }
    }
}

fn refused() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "a published generation is read-only",
    )
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.regular(path)?;
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(refused()),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: Arc::new(refused()),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.regular(path)?;
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(refused())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}
