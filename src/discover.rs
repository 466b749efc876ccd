//! Discovery: walking roots for documentation files and reading them safely.
//!
//! Owns: the file kinds (`.md`, `.markdown`, `.mdx`, `.txt`), `.gitignore`-aware walking
//! with the `ignore` crate (hidden and VCS folders skipped, symlink loops detected), and
//! reading with a byte budget, binary detection and lossy UTF-8 decoding. A bad file is
//! skipped or decoded with a [`Warning`] naming it; the walk never aborts for one file.
//! Must not import: `chunk` internals beyond `SourceKind`, `lexical`, `store`, `cli`.

use crate::chunk::SourceKind;
use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A file found under a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// Index of the root it was found under, in the order the roots were given.
    pub root: usize,
    /// Absolute (or as-given) path on disk.
    pub path: PathBuf,
    /// Path relative to its root, `/`-separated; a root that is a file gives its file name.
    pub rel_path: String,
    pub kind: SourceKind,
    /// Size in bytes at discovery.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: u64,
}

/// Something skipped or degraded, with the file it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.path.display(), self.message)
    }
}

/// The kind of a path by its extension (case-insensitive), or `None` if docfuse ignores it.
pub fn kind_of(path: &Path) -> Option<SourceKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "md" | "markdown" => Some(SourceKind::Markdown),
        "mdx" => Some(SourceKind::Mdx),
        "txt" => Some(SourceKind::Text),
        _ => None,
    }
}

/// Walks `roots` and returns the documentation files, sorted by (root, rel_path), and
/// the warnings met on the way (unreadable entries, symlink loops).
///
/// # Errors
/// [`Error::Root`] when a root does not exist or is not readable.
pub fn discover(roots: &[PathBuf]) -> Result<(Vec<FoundFile>, Vec<Warning>)> {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    for (i, root) in roots.iter().enumerate() {
        let meta = std::fs::metadata(root).map_err(|source| Error::Root {
            path: root.clone(),
            source,
        })?;
        if meta.is_file() {
            push_root_file(i, root, &meta, &mut files, &mut warnings);
        } else {
            walk_root(i, root, &mut files, &mut warnings);
        }
    }
    files.sort_by(|a, b| (a.root, &a.rel_path).cmp(&(b.root, &b.rel_path)));
    Ok((files, warnings))
}

fn push_root_file(
    i: usize,
    root: &Path,
    meta: &std::fs::Metadata,
    files: &mut Vec<FoundFile>,
    warnings: &mut Vec<Warning>,
) {
    let Some(kind) = kind_of(root) else {
        warnings.push(Warning {
            path: root.to_path_buf(),
            message: "not a .md, .markdown, .mdx or .txt file; skipped".into(),
        });
        return;
    };
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    files.push(found(i, root.to_path_buf(), name, kind, meta));
}

fn walk_root(i: usize, root: &Path, files: &mut Vec<FoundFile>, warnings: &mut Vec<Warning>) {
    let walker = ignore::WalkBuilder::new(root)
        .follow_links(true)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    let canon_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    // Folders reached through a symbolic link: files under them may live outside the root.
    let mut linked_dirs: Vec<PathBuf> = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                warnings.push(Warning {
                    path: root.to_path_buf(),
                    message: format!("skipped an entry: {err}"),
                });
                continue;
            }
        };
        if entry.path_is_symlink() && entry.file_type().is_some_and(|t| t.is_dir()) {
            linked_dirs.push(entry.path().to_path_buf());
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Some(kind) = kind_of(path) else { continue };
        let linked = entry.path_is_symlink() || linked_dirs.iter().any(|d| path.starts_with(d));
        if linked
            && !path
                .canonicalize()
                .is_ok_and(|c| c.starts_with(&canon_root))
        {
            warnings.push(Warning {
                path: path.to_path_buf(),
                message: "a symbolic link that leaves the root; skipped".into(),
            });
            continue;
        }
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(err) => {
                warnings.push(Warning {
                    path: path.to_path_buf(),
                    message: format!("cannot stat, skipped: {err}"),
                });
                continue;
            }
        };
        files.push(found(
            i,
            path.to_path_buf(),
            rel_path(root, path),
            kind,
            &meta,
        ));
    }
}

fn found(
    root: usize,
    path: PathBuf,
    rel_path: String,
    kind: SourceKind,
    meta: &std::fs::Metadata,
) -> FoundFile {
    FoundFile {
        root,
        path,
        rel_path,
        kind,
        size: meta.len(),
        mtime_ns: mtime_ns(meta),
    }
}

/// Modification time of `meta` in nanoseconds since the Unix epoch (0 when unavailable).
pub fn mtime_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// A file's text as docfuse will index it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadText {
    pub text: String,
    /// sha256 of the bytes read (before decoding).
    pub sha256: String,
}

/// Reads `path` up to `max_bytes` (a longer file is cut at its last line end within the
/// budget), refusing binary content (a NUL byte in the first 8 KiB) and decoding invalid
/// UTF-8 lossily. Every degradation is reported in `warnings`.
///
/// Returns `None` (with a warning) when the file is unreadable or binary.
pub fn read_text(path: &Path, max_bytes: u64, warnings: &mut Vec<Warning>) -> Option<ReadText> {
    let mut warn = |message: String| {
        warnings.push(Warning {
            path: path.to_path_buf(),
            message,
        })
    };
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes));
    if let Err(err) = read {
        warn(format!("cannot read, skipped: {err}"));
        return None;
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        warn("looks binary (NUL byte), skipped".into());
        return None;
    }
    if bytes.len() as u64 > max_bytes {
        bytes.truncate(max_bytes as usize);
        let cut = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        bytes.truncate(cut);
        warn(format!(
            "larger than the {max_bytes}-byte budget; indexed its first {cut} bytes"
        ));
    }
    let sha256 = crate::hashing::sha256_hex(&bytes);
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            warn("not valid UTF-8; decoded lossily".into());
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    };
    Some(ReadText { text, sha256 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir_all(p.join("guide/deep")).unwrap();
        fs::create_dir_all(p.join(".hidden")).unwrap();
        fs::create_dir_all(p.join("ignored")).unwrap();
        fs::write(p.join("a.md"), "# A\n").unwrap();
        fs::write(p.join("guide/b.MDX"), "# B\n").unwrap();
        fs::write(p.join("guide/deep/c.txt"), "c\n").unwrap();
        fs::write(p.join("guide/d.markdown"), "# D\n").unwrap();
        fs::write(p.join("guide/e.rs"), "fn main() {}\n").unwrap();
        fs::write(p.join(".hidden/h.md"), "# H\n").unwrap();
        fs::write(p.join("ignored/i.md"), "# I\n").unwrap();
        fs::write(p.join(".gitignore"), "ignored/\n").unwrap();
        d
    }

    #[test]
    fn finds_doc_kinds_respects_gitignore_and_hidden() {
        let d = tree();
        let (files, warnings) = discover(&[d.path().to_path_buf()]).unwrap();
        let rels: Vec<&str> = files.iter().map(|f| f.rel_path.as_str()).collect();
        assert_eq!(
            rels,
            [
                "a.md",
                "guide/b.MDX",
                "guide/d.markdown",
                "guide/deep/c.txt"
            ]
        );
        assert_eq!(files[1].kind, SourceKind::Mdx);
        assert_eq!(files[3].kind, SourceKind::Text);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn missing_root_is_an_error_naming_it() {
        let err = discover(&[PathBuf::from("/no/such/folder")]).unwrap_err();
        assert!(err.to_string().contains("/no/such/folder"), "{err}");
    }

    #[test]
    fn a_file_root_gives_its_name() {
        let d = tree();
        let (files, _) = discover(&[d.path().join("a.md")]).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].rel_path, "a.md");
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loop_does_not_hang_and_is_reported() {
        let d = tree();
        std::os::unix::fs::symlink(d.path(), d.path().join("guide/loop")).unwrap();
        let (files, warnings) = discover(&[d.path().to_path_buf()]).unwrap();
        assert_eq!(files.len(), 4);
        assert!(
            warnings.iter().any(|w| w.message.contains("loop")),
            "{warnings:?}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn links_that_leave_the_root_are_skipped_and_links_inside_are_followed() {
        let d = tree();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "# Secret\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), d.path().join("leak.md"))
            .unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("leakdir")).unwrap();
        std::os::unix::fs::symlink(d.path().join("a.md"), d.path().join("alias.md")).unwrap();
        let (files, warnings) = discover(&[d.path().to_path_buf()]).unwrap();
        let rels: Vec<&str> = files.iter().map(|f| f.rel_path.as_str()).collect();
        assert!(rels.contains(&"alias.md"), "{rels:?}");
        assert!(!rels.iter().any(|r| r.contains("leak")), "{rels:?}");
        assert_eq!(
            warnings
                .iter()
                .filter(|w| w.message.contains("leaves the root"))
                .count(),
            2
        );
    }

    #[test]
    fn binary_is_skipped_and_invalid_utf8_decoded_lossily() {
        let d = tempfile::tempdir().unwrap();
        let bin = d.path().join("bin.md");
        fs::write(&bin, b"# x\0\x01\x02").unwrap();
        let latin = d.path().join("latin.md");
        fs::write(&latin, b"caf\xe9\n").unwrap();
        let mut w = Vec::new();
        assert_eq!(read_text(&bin, 1 << 20, &mut w), None);
        assert!(w[0].message.contains("binary"));
        let t = read_text(&latin, 1 << 20, &mut w).unwrap();
        assert_eq!(t.text, "caf\u{fffd}\n");
        assert!(w[1].message.contains("UTF-8"));
    }

    #[test]
    fn byte_budget_cuts_at_a_line_end() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.md");
        fs::write(&p, "line one\nline two\nline three\n").unwrap();
        let mut w = Vec::new();
        let t = read_text(&p, 12, &mut w).unwrap();
        assert_eq!(t.text, "line one\n");
        assert!(w[0].message.contains("budget"));
    }
}
