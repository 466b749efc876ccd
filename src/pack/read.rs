//! Reading a pack whole (verified before anything is written) and unpacking it into the
//! index's `packs/CODE/` folder, keeping unchanged files as they are.

use super::{
    check_rel, valid_code, Limits, PackError, PackManifest, DOCS_DIR, MANIFEST_FILE, PACK_FORMAT,
};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A verified pack: its manifest and its compressed bytes (the unpacked files are never
/// held in memory: [`read`] streams them through sha256, [`install`] streams them to
/// disk, checking each hash again as it writes).
#[derive(Debug)]
pub struct Pack {
    pub manifest: PackManifest,
    pub(super) bytes: Vec<u8>,
    pub(super) limits: Limits,
}

impl Pack {
    /// The bytes of the file `rel` (a path of the manifest), read from the pack.
    ///
    /// # Errors
    /// As [`read`] (the pack was verified, so only an I/O fault of memory is left).
    pub fn file(&self, rel: &str) -> Result<Option<Vec<u8>>, PackError> {
        let mut found = None;
        scan(&self.bytes, &self.limits, &mut |path, entry, _| {
            if path == rel {
                let mut body = Vec::new();
                entry
                    .read_to_end(&mut body)
                    .map_err(|e| PackError::Refused(format!("not a readable .tar.gz ({e})")))?;
                found = Some(body);
            }
            Ok(())
        })?;
        Ok(found)
    }
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

/// Reads and verifies a pack (`.tar.gz` bytes) within `limits`, streaming: memory holds
/// the compressed bytes and one read buffer, never the unpacked files.
///
/// # Errors
/// [`PackError::Refused`] naming the first problem: not a gzip tar, an entry that is not
/// a regular file or folder, a path outside the pack, a missing, extra or altered file,
/// an invalid `pack.json`, or a limit passed (compressed size, unpacked size, the
/// unpacked-to-compressed ratio, file count).
pub fn read(bytes: Vec<u8>, limits: &Limits) -> Result<Pack, PackError> {
    if bytes.len() as u64 > limits.max_pack_bytes {
        return Err(PackError::Refused(format!(
            "{} bytes, over the limit of {}",
            bytes.len(),
            limits.max_pack_bytes
        )));
    }
    let mut limits = *limits;
    limits.max_unpacked_bytes = limits.unpacked_budget(bytes.len() as u64);
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let manifest = scan(&bytes, &limits, &mut |path, entry, _| {
        let sha256 = hash_stream(entry)?;
        if seen.insert(path.to_string(), sha256).is_some() {
            return Err(PackError::Refused(format!(
                "file `{}` is in it twice",
                path.escape_debug()
            )));
        }
        Ok(())
    })?;
    verify(&manifest, &seen)?;
    Ok(Pack {
        manifest,
        bytes,
        limits,
    })
}

/// Lowercase hex sha256 of what `r` yields ([`crate::hashing::sha256_reader`]); its
/// size was checked against the manifest by [`scan`] before it was read.
fn hash_stream(r: &mut dyn Read) -> Result<String, PackError> {
    crate::hashing::sha256_reader(r)
        .map_err(|e| PackError::Refused(format!("not a readable .tar.gz ({e})")))
}

/// A reader that copies what is read through it to `copy`.
struct Tee<'a, R: Read, W: std::io::Write> {
    inner: R,
    copy: &'a mut W,
}

impl<R: Read, W: std::io::Write> Read for Tee<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// A file of the pack as [`scan`] hands it over: its path under `docs/`, a reader of its
/// bytes (at most its listed size, within the unpacked budget) and the manifest.
type Visit<'a> = dyn FnMut(&str, &mut dyn Read, &PackManifest) -> Result<(), PackError> + 'a;

/// Walks the entries of `bytes` with every structural check (paths, entry types,
/// `pack.json` first and listed sizes, counts, the unpacked budget), calling `visit` for
/// each file; returns the manifest.
fn scan(bytes: &[u8], limits: &Limits, visit: &mut Visit<'_>) -> Result<PackManifest, PackError> {
    let refuse = |why: String| PackError::Refused(why);
    let not_tar = |e: std::io::Error| refuse(format!("not a readable .tar.gz ({e})"));
    // The tar stream is at most the files' bytes plus a few 512-byte blocks per entry.
    let cap = limits
        .max_unpacked_bytes
        .saturating_add(2048 * (limits.max_files as u64 + 16));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes).take(cap));
    let mut entries = 0usize;
    let mut manifest: Option<PackManifest> = None;
    let mut sizes: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    let mut files = 0usize;
    let mut total = 0u64;
    for entry in archive.entries().map_err(not_tar)? {
        let mut entry = entry.map_err(not_tar)?;
        entries += 1;
        if entries > limits.max_files + 16 {
            return Err(refuse(format!("more than {} entries", limits.max_files)));
        }
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
        let Some(m) = &manifest else {
            if path != MANIFEST_FILE {
                return Err(refuse(format!(
                    "its first file is `{}`, not `{MANIFEST_FILE}`",
                    path.escape_debug()
                )));
            }
            let body = read_body(&mut entry, MAX_MANIFEST_BYTES, &mut total, limits)?;
            let m: PackManifest = serde_json::from_slice(&body)
                .map_err(|e| refuse(format!("`{MANIFEST_FILE}` is invalid: {e}")))?;
            sizes = m.files.iter().map(|f| (f.path.clone(), f.size)).collect();
            manifest = Some(m);
            continue;
        };
        if path == MANIFEST_FILE {
            return Err(refuse(format!("`{MANIFEST_FILE}` is in it twice")));
        }
        let Some(rel) = path.strip_prefix(&format!("{DOCS_DIR}/")) else {
            return Err(refuse(format!(
                "entry `{}` is outside `{DOCS_DIR}/`",
                path.escape_debug()
            )));
        };
        // Checked before the bytes are read: a file not listed, or not of its listed size.
        let size = match sizes.get(rel) {
            None => {
                return Err(refuse(format!(
                    "`{}` is in the pack but not in `{MANIFEST_FILE}`",
                    rel.escape_debug()
                )))
            }
            Some(&size) if entry.header().size().ok() != Some(size) => {
                return Err(refuse(format!(
                    "`{}` does not match its size and sha256 in `{MANIFEST_FILE}`",
                    rel.escape_debug()
                )))
            }
            Some(&size) => size,
        };
        files += 1;
        if files > limits.max_files {
            return Err(refuse(format!("more than {} files", limits.max_files)));
        }
        if total.saturating_add(size) > limits.max_unpacked_bytes {
            return Err(refuse(format!(
                "its files unpack to more than {} bytes (a pack may unpack to {} times its compressed size, at least {} bytes, at most `--max-pack-bytes` × 16 and 512 MiB)",
                limits.max_unpacked_bytes,
                limits.max_ratio,
                super::MIN_UNPACKED_ALLOWANCE
            )));
        }
        total += size;
        visit(rel, &mut (&mut entry).take(size), m)?;
    }
    manifest.ok_or_else(|| refuse(format!("it has no `{MANIFEST_FILE}`")))
}

/// Most bytes of `pack.json`.
const MAX_MANIFEST_BYTES: u64 = 32 << 20;

/// Reads one entry's bytes, at most `max`, counting them in `total` against the
/// unpacked limit.
fn read_body(
    entry: &mut impl Read,
    max: u64,
    total: &mut u64,
    limits: &Limits,
) -> Result<Vec<u8>, PackError> {
    let budget = limits.max_unpacked_bytes.saturating_sub(*total).min(max);
    let mut body = Vec::new();
    entry
        .take(budget.saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| PackError::Refused(format!("not a readable .tar.gz ({e})")))?;
    *total += body.len() as u64;
    if body.len() as u64 > budget {
        return Err(PackError::Refused(format!(
            "its files unpack to more than {} bytes",
            budget.min(limits.max_unpacked_bytes)
        )));
    }
    Ok(body)
}

/// Checks the manifest against the files seen (path → sha256; each one's size was
/// checked as it was read): format, code, the same paths and hashes.
fn verify(m: &PackManifest, files: &BTreeMap<String, String>) -> Result<(), PackError> {
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
    let mut paths: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    for w in paths.windows(2) {
        if w[0] == w[1] || w[1].starts_with(&format!("{}/", w[0])) {
            return refuse(format!(
                "`{MANIFEST_FILE}` lists `{}` and `{}`: a path twice, or a file that is also a folder",
                w[0].escape_debug(),
                w[1].escape_debug()
            ));
        }
    }
    if m.version.len() > 128 || m.version.chars().any(char::is_control) {
        return refuse("its version is longer than 128 bytes or has control characters".into());
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
        let Some(sha256) = files.get(&f.path) else {
            return refuse(format!("`{}` is listed but absent", f.path.escape_debug()));
        };
        if *sha256 != f.sha256 {
            return refuse(format!(
                "`{}` does not match its size and sha256 in `{MANIFEST_FILE}`",
                f.path.escape_debug()
            ));
        }
    }
    Ok(())
}

/// Unpacks `pack` into `packs_dir/CODE/` in place: a file with the same bytes is left
/// untouched (size, mtime and ctime kept, so a refresh does not even read it), a new or
/// changed one is written beside itself and renamed over, and files the pack no longer
/// has are deleted (with folders left empty). Run it under the index's writer lock: a
/// refresh must not walk the folder half-updated.
///
/// # Errors
/// [`PackError::Io`] when a folder or file cannot be written or removed (the folder is
/// then a mix of both versions; ingesting the pack again completes it).
pub fn install(pack: &Pack, packs_dir: &Path) -> Result<Installed, PackError> {
    check_disk_budget(pack, packs_dir)?;
    let dir = packs_dir.join(&pack.manifest.repo);
    std::fs::create_dir_all(&dir).map_err(|e| PackError::io("cannot create", &dir, e))?;
    let mut out = Installed {
        dir: dir.clone(),
        written: 0,
        kept: 0,
        removed: 0,
    };
    let listed: std::collections::HashMap<&str, &super::PackFile> = pack
        .manifest
        .files
        .iter()
        .map(|f| (f.path.as_str(), f))
        .collect();
    for rel in files_under(&dir, "") {
        if !listed.contains_key(rel.as_str()) {
            let path = dir.join(&rel);
            std::fs::remove_file(&path).map_err(|e| PackError::io("cannot remove", &path, e))?;
            out.removed += 1;
        }
    }
    remove_empty_dirs(&dir);
    scan(&pack.bytes, &pack.limits, &mut |rel, entry, _| {
        let Some(f) = listed.get(rel) else {
            return Err(PackError::Refused(format!(
                "`{}` is not listed",
                rel.escape_debug()
            )));
        };
        let dest = dir.join(rel);
        if same_file(&dest, f) {
            out.kept += 1;
            return Ok(());
        }
        write_file(&dest, entry, f)?;
        out.written += 1;
        Ok(())
    })?;
    Ok(out)
}

/// Whether `dest` is a regular file with `f`'s size and sha256 (read in a stream).
fn same_file(dest: &Path, f: &super::PackFile) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dest) else {
        return false;
    };
    if !meta.is_file() || meta.len() != f.size {
        return false;
    }
    let Ok(mut file) = std::fs::File::open(dest) else {
        return false;
    };
    hash_stream(&mut file).is_ok_and(|sha| sha == f.sha256)
}

/// Bytes the regular files under `dir` take, except under the folder `skip` and hidden
/// entries (temporary files).
fn bytes_under(dir: &Path, skip: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut total = 0u64;
    for e in rd.flatten() {
        let path = e.path();
        if path == skip || e.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() => total += bytes_under(&path, skip),
            Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
            _ => {}
        }
    }
    total
}

/// Refuses `pack` when the packs folder would hold more than
/// [`Limits::max_total_bytes`] with it (its own earlier version not counted).
fn check_disk_budget(pack: &Pack, packs_dir: &Path) -> Result<(), PackError> {
    let own: u64 = pack.manifest.files.iter().map(|f| f.size).sum();
    let others = bytes_under(packs_dir, &packs_dir.join(&pack.manifest.repo));
    let budget = pack.limits.max_total_bytes;
    if others.saturating_add(own) > budget {
        return Err(PackError::Refused(format!(
            "with it the packs would take {} bytes on disk ({own} its own), over the budget of {budget} bytes\nhint: drop packs no longer needed (`refresh --drop-root pack:CODE`) or raise `--max-packs-total-bytes`",
            others.saturating_add(own)
        )));
    }
    Ok(())
}

/// Streams `body` to `dest` through a hidden file beside it (never walked) and a rename,
/// checking its size and sha256 against `f` again; whatever was at `dest` (a file, a
/// folder, a link) is replaced.
fn write_file(dest: &Path, body: &mut dyn Read, f: &super::PackFile) -> Result<(), PackError> {
    let parent = dest.parent().unwrap_or(dest);
    std::fs::create_dir_all(parent).map_err(|e| PackError::io("cannot create", parent, e))?;
    let tmp = crate::fsio::temp_beside(dest);
    let written = std::fs::File::create(&tmp).and_then(|mut file| {
        crate::hashing::sha256_reader(Tee {
            inner: body,
            copy: &mut file,
        })
    });
    let sha = written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        PackError::io("cannot write", &tmp, e)
    })?;
    if sha != f.sha256 {
        let _ = std::fs::remove_file(&tmp);
        return Err(PackError::Refused(format!(
            "`{}` changed between its check and its unpacking",
            f.path.escape_debug()
        )));
    }
    if std::fs::symlink_metadata(dest).is_ok_and(|m| m.is_dir()) {
        let _ = std::fs::remove_dir_all(dest);
    }
    std::fs::rename(&tmp, dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        PackError::io("cannot write", dest, e)
    })
}

/// Removes the empty folders under `dir` (not `dir` itself).
fn remove_empty_dirs(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_dirs(&e.path());
            let _ = std::fs::remove_dir(e.path());
        }
    }
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
