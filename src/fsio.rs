//! Reading files docfuse wrote itself (manifest, generation files, caches) without ever
//! blocking: anything but a regular file in their place — a FIFO, a device, a folder —
//! is refused, since reading a FIFO waits forever for a writer. And the name of a
//! temporary file written beside another before a rename ([`temp_beside`]).
//!
//! Must not import any other docfuse module (foundation layer).

use std::fs::File;
use std::io::{Error, ErrorKind, Read};
use std::path::Path;

fn not_regular(path: &Path) -> Error {
    Error::new(
        ErrorKind::InvalidInput,
        format!(
            "`{}` is not a regular file (a FIFO, device or folder is in its place)",
            path.display()
        ),
    )
}

/// Opens `path` for reading if it is a regular file (symbolic links followed). On Unix it
/// is opened with `O_NONBLOCK` (no effect on a regular file), so a FIFO swapped in
/// between the check and the open cannot block; the open descriptor is checked again.
///
/// # Errors
/// The open error ([`ErrorKind::NotFound`] when it is missing), or
/// [`ErrorKind::InvalidInput`] when it is not a regular file.
pub fn open_regular(path: impl AsRef<Path>) -> std::io::Result<File> {
    let path = path.as_ref();
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular(path));
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = opts.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular(path));
    }
    Ok(file)
}

/// The bytes of the regular file at `path` ([`open_regular`]).
///
/// # Errors
/// As [`open_regular`], or the read error.
pub fn read_regular(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_folder_is_refused_without_blocking_and_a_file_is_read() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("manifest.json");
        std::fs::write(&f, b"{}").unwrap();
        assert_eq!(read_regular(&f).unwrap(), b"{}");
        assert_eq!(
            read_regular(d.path()).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            read_regular(d.path().join("absent")).unwrap_err().kind(),
            ErrorKind::NotFound
        );
        #[cfg(unix)]
        {
            let fifo = d.path().join("fifo.json");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            let e = read_regular(&fifo).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidInput);
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
    }
}

/// A temporary file's path in the folder of `path`, for a write renamed into place: a
/// hidden name of fixed length (`.docfuse-tmp-<pid>-<n>`, unique in this process), so a
/// file whose own name is near the file system's limit (255 bytes) can still be
/// written — a name grown from the original (`.<name>.tmp`) would not fit.
pub fn temp_beside(path: &Path) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = path.parent().unwrap_or(Path::new("."));
    dir.join(format!(".docfuse-tmp-{}-{n}", std::process::id()))
}

#[cfg(test)]
mod temp_tests {
    #[test]
    fn a_temp_name_does_not_grow_with_the_name_it_stands_for() {
        let dir = tempfile::tempdir().unwrap();
        let long = dir.path().join("a".repeat(250) + ".tar");
        let (a, b) = (super::temp_beside(&long), super::temp_beside(&long));
        assert_ne!(a, b, "unique in the process");
        assert_eq!(a.parent(), long.parent());
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(".docfuse-tmp-") && name.len() < 48,
            "{name}"
        );
        std::fs::write(&a, b"x").unwrap();
        std::fs::rename(&a, &long).unwrap();
        assert_eq!(std::fs::read(&long).unwrap(), b"x");
    }
}

/// docfuse's folder in the user's cache: `$XDG_CACHE_HOME/docfuse`, else
/// `~/.cache/docfuse`; `None` when neither variable is set.
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|d| !d.is_empty())
                .map(|h| std::path::PathBuf::from(h).join(".cache"))
        })?;
    Some(base.join("docfuse"))
}

/// This host's name: `HOSTNAME`, else the kernel's (`/proc/sys/kernel/hostname`), else
/// "an unnamed host".
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "an unnamed host".into())
}
