//! `docfuse pack`: the documentation files under a folder (found with the walk rules of
//! indexing: ignore files, hidden and dependency folders skipped, only documentation
//! kinds and API specs) written as a pack.

use super::{
    check_rel, valid_code, PackError, PackFile, PackManifest, DOCS_DIR, MANIFEST_FILE, PACK_FORMAT,
};
use crate::discover::{discover, WalkOptions};
use crate::hashing::sha256_hex;
use std::io::Write;
use std::path::Path;

/// Writes the pack of `root` (repository `repo`, version `version`) to `out`, a
/// `.tar.gz`, and returns its manifest. `out` is written beside itself first and renamed,
/// so a failed write leaves no partial pack.
///
/// # Errors
/// [`PackError::Refused`] for an invalid repository code or a folder with no
/// documentation; [`PackError::Io`] when a file cannot be read or the pack written;
/// [`PackError::Discover`] when the folder cannot be walked.
pub fn write(
    root: &Path,
    repo: &str,
    version: &str,
    out: &Path,
    walk: WalkOptions,
) -> Result<PackManifest, PackError> {
    if version.len() > 128 || version.chars().any(char::is_control) {
        return Err(PackError::Refused(
            "the version must be at most 128 bytes, without control characters".into(),
        ));
    }
    if !valid_code(repo) {
        return Err(PackError::Refused(format!(
            "repository code `{}` must be 1 to 64 of a-z 0-9 . _ - starting with a letter or digit",
            repo.escape_debug()
        )));
    }
    let found = discover(&[root.to_path_buf()], walk)?;
    if found.files.is_empty() {
        return Err(PackError::Refused(format!(
            "no documentation file under `{}`",
            root.display()
        )));
    }
    let mut files = Vec::with_capacity(found.files.len());
    let mut bodies = Vec::with_capacity(found.files.len());
    for f in &found.files {
        check_rel(&f.rel_path)?;
        let bytes = std::fs::read(&f.path).map_err(|e| PackError::io("cannot read", &f.path, e))?;
        files.push(PackFile {
            path: f.rel_path.clone(),
            size: bytes.len() as u64,
            sha256: sha256_hex(&bytes),
        });
        bodies.push(bytes);
    }
    let manifest = PackManifest {
        format: PACK_FORMAT,
        repo: repo.to_string(),
        version: version.to_string(),
        created_at: now_rfc3339(),
        files,
    };
    // through a link (`/dev/stdout` → a pipe or a file): write where it points, in place
    let link = std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink());
    if link && std::fs::metadata(out).is_ok_and(|m| m.is_file()) {
        return write_tar(out, &manifest, &bodies, true).map(|()| manifest);
    }
    match std::fs::metadata(out) {
        Ok(m) if m.is_dir() => {
            return Err(PackError::Refused(format!(
                "the output `{}` is a folder; name a file, e.g. `{}`",
                out.display(),
                out.join(format!("{repo}.tar.gz")).display()
            )))
        }
        // a device, FIFO or socket (`-o /dev/null`, `-o /dev/stdout`): written to, never
        // replaced by a file
        Ok(m) if !m.is_file() => {
            return write_tar(out, &manifest, &bodies, false).map(|()| manifest)
        }
        _ => {}
    }
    let tmp = crate::fsio::temp_beside(out);
    let written = write_tar(&tmp, &manifest, &bodies, true).and_then(|()| {
        std::fs::rename(&tmp, out).map_err(|e| PackError::io("cannot write", out, e))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| manifest)
}

/// Now, to the second (truncated, never ahead), as RFC 3339 UTC.
fn now_rfc3339() -> String {
    let now = jiff::Timestamp::now();
    jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

/// Writes the pack to `path` (created or truncated); `sync`: flushed to disk (a regular
/// file about to be renamed into place).
fn write_tar(
    path: &Path,
    manifest: &PackManifest,
    bodies: &[Vec<u8>],
    sync: bool,
) -> Result<(), PackError> {
    let io = |e| PackError::io("cannot write", path, e);
    let file = std::fs::File::create(path).map_err(io)?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let json = serde_json::to_vec_pretty(manifest)
        .map_err(std::io::Error::other)
        .map_err(io)?;
    append(&mut tar, MANIFEST_FILE, &json).map_err(io)?;
    for (f, body) in manifest.files.iter().zip(bodies) {
        append(&mut tar, &format!("{DOCS_DIR}/{}", f.path), body).map_err(io)?;
    }
    let gz = tar.into_inner().map_err(io)?;
    let mut file = gz.finish().map_err(io)?;
    file.flush().map_err(io)?;
    if sync {
        file.sync_all().map_err(io)?;
    }
    Ok(())
}

/// Appends a regular file (mode 0644, mtime 0: a pack's bytes depend only on its files
/// and manifest).
fn append<W: Write>(tar: &mut tar::Builder<W>, path: &str, body: &[u8]) -> std::io::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(body.len() as u64);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    tar.append_data(&mut h, path, body)
}
