//! File stamps: a large file's digest remembered with what the file system says about it
//! (device, inode, size, modification and status-change times, in ns) and a digest of its
//! first and last 64 KiB, so that a file hashed once in full is not hashed again on a
//! latency path (a one-off `docfuse search`) until it changes.
//!
//! Any write to a file moves its status-change time (ctime), which no user tool can set
//! back; a copy or a rename into place is another inode. A stamp that does not match in
//! every field is ignored and the file hashed in full (then stamped again). This is the
//! file-identity check of git's index and of build tools; the full digest is still
//! checked when the file is written and by `docfuse verify`. On a system without inodes
//! (not Unix) nothing is remembered: every call hashes in full.
//!
//! Imports only `store`, `fsio` and `hashing` (see `ARCHITECTURE.md`).

use crate::hashing::sha256_hex;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes read from each end of a file for its cheap head-and-tail digest.
const ENDS: u64 = 64 * 1024;

/// What a stamp remembers of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Stamp {
    /// The digest's name (`sha256`, `blake3`), so one stamp never answers for another.
    algorithm: String,
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    /// sha256 of the first and last [`ENDS`] bytes.
    ends_sha256: String,
    /// The full digest, lowercase hex.
    digest: String,
}

/// The digest `algorithm` of the file at `path`: remembered in the stamp file `memo`
/// when the stamp matches the file in every field, else `full(path)`, which is then
/// stamped (best effort: a stamp that cannot be written, e.g. on a read-only disk, only
/// means the next call hashes in full again).
///
/// # Errors
/// The I/O error of reading the file (through `full` or for its ends).
pub fn digest(
    path: &Path,
    memo: &Path,
    algorithm: &str,
    full: impl FnOnce(&Path) -> std::io::Result<String>,
) -> std::io::Result<String> {
    digest_unless_within(path, memo, algorithm, full, RACY_NS)
}

/// [`digest`], stamping only a file whose status changed at least `racy_ns` ago.
fn digest_unless_within(
    path: &Path,
    memo: &Path,
    algorithm: &str,
    full: impl FnOnce(&Path) -> std::io::Result<String>,
    racy_ns: i128,
) -> std::io::Result<String> {
    let Some(now) = observe(path, algorithm)? else {
        return full(path);
    };
    if let Some(known) = read_stamp(memo) {
        if known.algorithm == now.algorithm
            && known.dev == now.dev
            && known.ino == now.ino
            && known.len == now.len
            && known.mtime_ns == now.mtime_ns
            && known.ctime_ns == now.ctime_ns
            && known.ends_sha256 == now.ends_sha256
        {
            return Ok(known.digest);
        }
    }
    let digest = full(path)?;
    // the file changed while it was hashed: do not remember it; nor when it changed in
    // the last seconds (on a file system with coarse times a write in the same tick
    // would leave every field as it is: git's "racy clean" rule)
    if observe(path, algorithm)?.as_ref() == Some(&now) && !recent(now.ctime_ns, racy_ns) {
        let stamp = Stamp { digest, ..now };
        write_stamp(memo, &stamp);
        return Ok(stamp.digest);
    }
    Ok(digest)
}

/// Whether a status change at `ctime_ns` (ns since the Unix epoch) is under `racy_ns`
/// old.
fn recent(ctime_ns: i128, racy_ns: i128) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128);
    now - ctime_ns < racy_ns
}

/// A file changed this recently (ns) is hashed but not stamped: file systems with 1–2 s
/// times (FAT, some network mounts) could not tell a later write in the same tick.
const RACY_NS: i128 = 3_000_000_000;

/// The stamp file for `path` in the user's cache folder (`$XDG_CACHE_HOME/docfuse/
/// stamps`, else `~/.cache/docfuse/stamps`), named by the sha256 of the path and the
/// digest's name; `None` without such a folder.
pub fn user_memo(path: &Path, algorithm: &str) -> Option<PathBuf> {
    let base = crate::fsio::user_cache_dir()?;
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = sha256_hex(format!("{}\n{algorithm}", abs.display()).as_bytes());
    Some(base.join("stamps").join(format!("{name}.json")))
}

/// The stamp of `path` as it is now, without the full digest; `None` on a system without
/// inodes.
#[cfg(unix)]
fn observe(path: &Path, algorithm: &str) -> std::io::Result<Option<Stamp>> {
    use std::os::unix::fs::MetadataExt;
    let mut file = crate::fsio::open_regular(path)?;
    let m = file.metadata()?;
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Ok(Some(Stamp {
        algorithm: algorithm.to_string(),
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns: ns(m.mtime(), m.mtime_nsec()),
        ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        ends_sha256: ends_sha256(&mut file, m.len())?,
        digest: String::new(),
    }))
}

#[cfg(not(unix))]
fn observe(_path: &Path, _algorithm: &str) -> std::io::Result<Option<Stamp>> {
    Ok(None)
}

/// sha256 of the first and last [`ENDS`] bytes of a file of `len` bytes.
#[cfg(unix)]
fn ends_sha256(file: &mut std::fs::File, len: u64) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity((2 * ENDS).min(len) as usize);
    file.by_ref().take(ENDS).read_to_end(&mut buf)?;
    if len > ENDS {
        file.seek(SeekFrom::Start(len.saturating_sub(ENDS).max(ENDS)))?;
        file.by_ref().take(ENDS).read_to_end(&mut buf)?;
    }
    Ok(sha256_hex(&buf))
}

fn read_stamp(memo: &Path) -> Option<Stamp> {
    let bytes = crate::fsio::read_regular(memo).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn write_stamp(memo: &Path, stamp: &Stamp) {
    let Ok(json) = serde_json::to_vec_pretty(stamp) else {
        return;
    };
    if let Some(dir) = memo.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = crate::store::write_atomic(memo, &json) {
        tracing::debug!("cannot write the stamp `{}`: {e}", memo.display());
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// [`digest`] without the racy-clean wait (the test's files are seconds old).
    fn digest(
        path: &Path,
        memo: &Path,
        algorithm: &str,
        full: impl FnOnce(&Path) -> std::io::Result<String>,
    ) -> std::io::Result<String> {
        digest_unless_within(path, memo, algorithm, full, 0)
    }

    #[test]
    fn a_file_changed_in_the_last_seconds_is_not_stamped() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("model.onnx");
        std::fs::write(&f, b"model").unwrap();
        let memo = t.path().join("m.json");
        let calls = Cell::new(0);
        super::digest(&f, &memo, "sha256", counting(&calls)).unwrap();
        super::digest(&f, &memo, "sha256", counting(&calls)).unwrap();
        assert_eq!(calls.get(), 2);
        assert!(!memo.exists());
    }

    fn counting(calls: &Cell<u32>) -> impl FnOnce(&Path) -> std::io::Result<String> + '_ {
        move |p: &Path| {
            calls.set(calls.get() + 1);
            Ok(sha256_hex(&std::fs::read(p)?))
        }
    }

    #[test]
    fn a_stamped_file_is_not_hashed_again_until_it_changes() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("weights.bin");
        let memo = t.path().join("stamps").join("w.json");
        std::fs::write(&f, vec![7u8; 200_000]).unwrap();
        let calls = Cell::new(0);
        let want = sha256_hex(&std::fs::read(&f).unwrap());
        assert_eq!(digest(&f, &memo, "sha256", counting(&calls)).unwrap(), want);
        assert_eq!(digest(&f, &memo, "sha256", counting(&calls)).unwrap(), want);
        assert_eq!(calls.get(), 1, "the second call reads the stamp");
        // another digest's name never answers from this stamp
        digest(&f, &memo, "blake3", counting(&calls)).unwrap();
        assert_eq!(calls.get(), 2);
        // a change in the middle, same size, mtime set back: ctime moved, hashed again
        let before = std::fs::metadata(&f).unwrap().modified().unwrap();
        let mut bytes = std::fs::read(&f).unwrap();
        bytes[100_000] = 8;
        std::fs::write(&f, &bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(before)
            .unwrap();
        let got = digest(&f, &memo, "sha256", counting(&calls)).unwrap();
        assert_eq!(got, sha256_hex(&bytes));
        assert_eq!(calls.get(), 3);
    }

    #[test]
    fn a_damaged_or_missing_stamp_means_a_full_hash() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("model.onnx");
        std::fs::write(&f, b"model").unwrap();
        let memo = t.path().join("m.json");
        std::fs::write(&memo, b"{not json").unwrap();
        let calls = Cell::new(0);
        digest(&f, &memo, "sha256", counting(&calls)).unwrap();
        assert_eq!(calls.get(), 1);
        // an unwritable stamp folder: still the right digest, every time in full
        let blocked = t.path().join("file-not-dir").join("m.json");
        std::fs::write(t.path().join("file-not-dir"), b"x").unwrap();
        let d = digest(&f, &blocked, "sha256", counting(&calls)).unwrap();
        assert_eq!(d, sha256_hex(b"model"));
        digest(&f, &blocked, "sha256", counting(&calls)).unwrap();
        assert_eq!(calls.get(), 3);
    }
}
