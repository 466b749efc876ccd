//! The contents of a generation folder: every file with its size and sha256, recorded in
//! the (sealed) manifest. Opening checks the sizes (cheap: a stat per file); `docfuse
//! verify` checks every sha256.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// One file of a generation folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationFile {
    /// Path relative to the generation folder, `/`-separated (e.g. `lexical/meta.json`).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    pub sha256: String,
}

/// Lists every regular file under `gen_dir` with its size and sha256, sorted by path.
/// A file whose `(path, size)` equals an entry of `known` and that is a hard link of the
/// same content (the caller guarantees it) takes that entry's sha256 without reading.
///
/// # Errors
/// [`Error::Io`] when a file cannot be listed or read.
pub fn list_contents(
    gen_dir: &Path,
    known: &HashMap<String, GenerationFile>,
) -> Result<Vec<GenerationFile>> {
    let mut out = Vec::new();
    collect(gen_dir, gen_dir, known, &mut out)?;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn collect(
    base: &Path,
    dir: &Path,
    known: &HashMap<String, GenerationFile>,
    out: &mut Vec<GenerationFile>,
) -> Result<()> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))?;
    for e in rd {
        let e = e.map_err(|e| Error::io("list", dir, e))?;
        let path = e.path();
        let t = e.file_type().map_err(|e| Error::io("stat", &path, e))?;
        if t.is_dir() {
            collect(base, &path, known, out)?;
            continue;
        }
        let rel = path
            .strip_prefix(base)
            .unwrap_or(&path)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        // tantivy's lock files come and go; they hold nothing.
        if rel.ends_with(".lock") {
            continue;
        }
        let size = e.metadata().map_err(|e| Error::io("stat", &path, e))?.len();
        let sha256 = match known.get(&rel).filter(|k| k.size == size) {
            Some(k) => k.sha256.clone(),
            None => {
                let bytes =
                    crate::fsio::read_regular(&path).map_err(|e| Error::io("read", &path, e))?;
                crate::hashing::sha256_hex(&bytes)
            }
        };
        out.push(GenerationFile {
            path: rel,
            size,
            sha256,
        });
    }
    Ok(())
}

/// The first listed file of `gen_dir` that is missing or has another size, as a reason.
pub fn check_sizes(gen_dir: &Path, contents: &[GenerationFile]) -> Option<String> {
    contents.iter().find_map(|f| {
        let path = gen_dir.join(&f.path);
        match std::fs::metadata(&path) {
            Err(_) => Some(format!("`{}` of the generation is missing", f.path)),
            Ok(m) if m.len() != f.size => Some(format!(
                "`{}` has {} bytes, the manifest recorded {}",
                f.path,
                m.len(),
                f.size
            )),
            Ok(_) => None,
        }
    })
}

/// Every listed file of `gen_dir` whose sha256 (or size) differs from the record, as
/// reasons; empty when the generation is whole.
pub fn check_hashes(gen_dir: &Path, contents: &[GenerationFile]) -> Vec<String> {
    contents
        .iter()
        .filter_map(|f| {
            let path = gen_dir.join(&f.path);
            match crate::fsio::read_regular(&path) {
                Err(e) => Some(format!("`{}`: {e}", f.path)),
                Ok(b) if b.len() as u64 != f.size => Some(format!(
                    "`{}` has {} bytes, the manifest recorded {}",
                    f.path,
                    b.len(),
                    f.size
                )),
                Ok(b) if crate::hashing::sha256_hex(&b) != f.sha256 => {
                    Some(format!("`{}` does not match its recorded sha256", f.path))
                }
                Ok(_) => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_checks_sizes_and_hashes() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("lexical")).unwrap();
        std::fs::write(d.path().join("vectors.f32"), b"abcd").unwrap();
        std::fs::write(d.path().join("lexical/meta.json"), b"{}").unwrap();
        std::fs::write(d.path().join("lexical/.tantivy-meta.lock"), b"").unwrap();
        let c = list_contents(d.path(), &HashMap::new()).unwrap();
        let names: Vec<&str> = c.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["lexical/meta.json", "vectors.f32"]);
        assert_eq!(check_sizes(d.path(), &c), None);
        assert!(check_hashes(d.path(), &c).is_empty());
        std::fs::write(d.path().join("vectors.f32"), b"abxd").unwrap();
        assert_eq!(check_sizes(d.path(), &c), None);
        assert_eq!(check_hashes(d.path(), &c).len(), 1);
        std::fs::write(d.path().join("vectors.f32"), b"ab").unwrap();
        assert!(check_sizes(d.path(), &c).unwrap().contains("vectors.f32"));
    }
}
