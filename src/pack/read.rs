//! Reading a pack whole (verified before anything is written) and unpacking it into the
//! index's `packs/CODE/` folder, keeping unchanged files as they are.

use super::{
    check_rel, valid_code, Limits, PackError, PackManifest, DOCS_DIR, MANIFEST_FILE, PACK_FORMAT,
};
use crate::hashing::sha256_hex;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A verified pack: its manifest and every file's bytes, by path.
#[derive(Debug)]
pub struct Pack {
    pub manifest: PackManifest,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// What [`install`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The folder the pack's files are in (the root to index).
    pub dir: PathBuf,
    /// Files written (new or changed).
    pub written: usize,
    /// Files left as they were (same bytes).
    pub kept: usize,
    /// Files of the previous version that the pack no longer has.
    pub removed: usize,
}

/// Reads and verifies a pack (`.tar.gz` bytes) within `limits`.
///
/// # Errors
/// [`PackError::Refused`] naming the first problem: not a gzip tar, an entry that is not
/// a regular file or folder, a path outside the pack, a missing, extra or altered file,
/// an invalid `pack.json`, or a limit passed.
pub fn read(bytes: &[u8], limits: &Limits) -> Result<Pack, PackError> {
    if bytes.len() as u64 > limits.max_pack_bytes {
        return Err(PackError::Refused(format!(
            "{} bytes, over the limit of {}",
            bytes.len(),
            limits.max_pack_bytes
        )));
    }
    let refuse = |why: String| PackError::Refused(why);
    let not_tar = |e: std::io::Error| refuse(format!("not a readable .tar.gz ({e})"));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut manifest: Option<Vec<u8>> = None;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut total = 0u64;
    for entry in archive.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        let raw = entry.path_bytes().into_owned();
        let path =
            String::from_utf8(raw).map_err(|_| refuse("an entry's path is not UTF-8".into()))?;
        let path = path.trim_end_matches('/').to_string();
        match entry.header().entry_type() {
            tar::EntryType::Directory => {
                check_rel(&path)?;
                continue;
            }
            tar::EntryType::Regular => {}
            other => {
                return Err(refuse(format!(
                    "entry `{}` is a {other:?}, not a regular file or folder",
                    path.escape_debug()
                )))
            }
        }
        check_rel(&path)?;
        let budget = limits.max_unpacked_bytes.saturating_sub(total);
        let mut body = Vec::new();
        (&mut entry)
            .take(budget + 1)
            .read_to_end(&mut body)
            .map_err(not_tar)?;
        total += body.len() as u64;
        if total > limits.max_unpacked_bytes {
            return Err(refuse(format!(
                "its files unpack to more than {} bytes",
                limits.max_unpacked_bytes
            )));
        }
        if path == MANIFEST_FILE {
            if manifest.replace(body).is_some() {
                return Err(refuse(format!("`{MANIFEST_FILE}` is in it twice")));
            }
            continue;
        }
        let Some(rel) = path.strip_prefix(&format!("{DOCS_DIR}/")) else {
            return Err(refuse(format!(
                "entry `{}` is outside `{DOCS_DIR}/`",
                path.escape_debug()
            )));
        };
        if files.len() >= limits.max_files {
            return Err(refuse(format!("more than {} files", limits.max_files)));
        }
        if files.insert(rel.to_string(), body).is_some() {
            return Err(refuse(format!(
                "file `{}` is in it twice",
                rel.escape_debug()
            )));
        }
    }
    let manifest = manifest.ok_or_else(|| refuse(format!("it has no `{MANIFEST_FILE}`")))?;
    let manifest: PackManifest = serde_json::from_slice(&manifest)
        .map_err(|e| refuse(format!("`{MANIFEST_FILE}` is invalid: {e}")))?;
    verify(&manifest, &files)?;
    Ok(Pack { manifest, files })
}

/// Checks the manifest against the files: format, code, the same paths, sizes and hashes.
fn verify(m: &PackManifest, files: &BTreeMap<String, Vec<u8>>) -> Result<(), PackError> {
    let refuse = |why: String| Err(PackError::Refused(why));
    if m.format != PACK_FORMAT {
        return refuse(format!(
            "pack format {} is not {PACK_FORMAT}, the one this docfuse reads",
            m.format
        ));
    }
    if !valid_code(&m.repo) {
        return refuse(format!(
            "repository code `{}` is invalid",
            m.repo.escape_debug()
        ));
    }
    if m.files.len() != files.len() {
        return refuse(format!(
            "`{MANIFEST_FILE}` lists {} files, the pack holds {}",
            m.files.len(),
            files.len()
        ));
    }
    for f in &m.files {
        check_rel(&f.path)?;
        let Some(body) = files.get(&f.path) else {
            return refuse(format!("`{}` is listed but absent", f.path.escape_debug()));
        };
        if body.len() as u64 != f.size || sha256_hex(body) != f.sha256 {
            return refuse(format!(
                "`{}` does not match its size and sha256 in `{MANIFEST_FILE}`",
                f.path.escape_debug()
            ));
        }
    }
    Ok(())
}

/// Unpacks `pack` into `packs_dir/CODE/`: the new tree is made beside it (unchanged
/// files hard-linked from the current one, so their mtimes stay and a refresh does not
/// read them again), then swapped in by two renames.
///
/// # Errors
/// [`PackError::Io`] when a folder or file cannot be written.
pub fn install(pack: &Pack, packs_dir: &Path) -> Result<Installed, PackError> {
    let code = &pack.manifest.repo;
    let dir = packs_dir.join(code);
    let tmp = packs_dir.join(format!(".{code}.new-{}", std::process::id()));
    let old = packs_dir.join(format!(".{code}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| PackError::io("cannot create", &tmp, e))?;
    let mut out = Installed {
        dir: dir.clone(),
        written: 0,
        kept: 0,
        removed: 0,
    };
    let filled = fill(pack, &dir, &tmp, &mut out);
    if let Err(e) = filled {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    out.removed = files_under(&dir, "")
        .iter()
        .filter(|rel| !pack.files.contains_key(rel.as_str()))
        .count();
    if dir.exists() {
        std::fs::rename(&dir, &old).map_err(|e| PackError::io("cannot move", &dir, e))?;
    }
    std::fs::rename(&tmp, &dir).map_err(|e| PackError::io("cannot move", &tmp, e))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(out)
}

fn fill(pack: &Pack, current: &Path, tmp: &Path, out: &mut Installed) -> Result<(), PackError> {
    for (rel, body) in &pack.files {
        let dest = tmp.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| PackError::io("cannot create", parent, e))?;
        }
        let was = current.join(rel);
        let same = std::fs::read(&was).is_ok_and(|b| b == *body);
        if same && std::fs::hard_link(&was, &dest).is_ok() {
            out.kept += 1;
            continue;
        }
        std::fs::write(&dest, body).map_err(|e| PackError::io("cannot write", &dest, e))?;
        out.written += 1;
    }
    Ok(())
}

/// Paths (`/`-separated, after `prefix`) of the regular files under `dir` (none when it
/// does not exist).
fn files_under(dir: &Path, prefix: &str) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = format!("{prefix}{}", e.file_name().to_string_lossy());
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(files_under(&e.path(), &format!("{name}/"))),
            Ok(t) if t.is_file() => out.push(name),
            _ => {}
        }
    }
    out
}
