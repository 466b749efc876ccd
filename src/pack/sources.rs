//! Where each ingested pack came from (`INDEX/packs/.sources.json`: repository code →
//! the file or URL it was fetched from), so that every known pack can be pulled again
//! (`docfuse ingest` on `gateway.online`). Written under the writer lock, atomically.
//!
//! A URL is stored as given, user and password included (they are needed to pull the
//! pack again), so the file is the owner's only: mode `0600`, set when it is written and
//! tightened when an older, wider file is read. Everything else shows the URL redacted
//! ([`super::redacted`]).

use super::PackError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file of the sources, inside the packs folder (a code never starts with `.`, so it
/// is never a pack's folder).
pub const SOURCES_FILE: &str = ".sources.json";

/// Repository code → the file path or URL its pack was last fetched from.
pub type Sources = BTreeMap<String, String>;

fn file_of(packs_dir: &Path) -> PathBuf {
    packs_dir.join(SOURCES_FILE)
}

/// The recorded sources; none when the file does not exist.
///
/// # Errors
/// [`PackError::Io`] when it cannot be read, [`PackError::Sources`] when it is not a JSON
/// object of strings (it names the file, to delete or fix).
pub fn sources(packs_dir: &Path) -> Result<Sources, PackError> {
    let path = file_of(packs_dir);
    let bytes = match crate::fsio::read_regular(&path) {
        Ok(b) => {
            owner_only(&path);
            b
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Sources::new()),
        Err(e) => return Err(PackError::io("cannot read", &path, e)),
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        PackError::Sources(format!(
            "`{}` is not a JSON object of pack sources ({e}); delete it and ingest the packs again",
            path.display()
        ))
    })
}

/// Records `source` as where the pack `code` comes from.
///
/// # Errors
/// As [`sources`], and [`PackError::Io`] when the file cannot be written.
pub fn record_source(packs_dir: &Path, code: &str, source: &str) -> Result<(), PackError> {
    let mut all = sources(packs_dir)?;
    if all.get(code).map(String::as_str) == Some(source) {
        return Ok(());
    }
    all.insert(code.to_string(), source.to_string());
    write(packs_dir, &all)
}

/// Forgets where the pack `code` came from (it left the index).
///
/// # Errors
/// As [`record_source`].
pub fn forget_source(packs_dir: &Path, code: &str) -> Result<(), PackError> {
    let mut all = sources(packs_dir)?;
    if all.remove(code).is_none() {
        return Ok(());
    }
    write(packs_dir, &all)
}

fn write(packs_dir: &Path, all: &Sources) -> Result<(), PackError> {
    std::fs::create_dir_all(packs_dir).map_err(|e| PackError::io("cannot create", packs_dir, e))?;
    let mut bytes = serde_json::to_vec_pretty(all).unwrap_or_default();
    bytes.push(b'\n');
    Ok(crate::store::write_atomic_private(
        &file_of(packs_dir),
        &bytes,
    )?)
}

/// Tightens `path` to mode `0600` when others or the group may read it (a file written
/// before sources were kept private); a failure is a warning.
fn owner_only(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.permissions().mode() & 0o077 != 0 {
            if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)) {
                tracing::warn!(
                    "`{}` holds pack URLs with their passwords and others may read it: {e}",
                    path.display()
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
