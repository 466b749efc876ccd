//! Where a build's documents come from: roots on disk, a JSONL corpus, or the previous
//! generation's copy of a root that is not being refreshed (`sources.jsonl`).

use super::jsonl::read_jsonl;
use crate::chunk::{SourceDoc, SourceKind};
use crate::config::IndexConfig;
use crate::discover::{discover, read_text, Warning};
use crate::error::{Error, Result};
use crate::store::FileEntry;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// File of a generation holding the text of every indexed document, so that refreshing
/// one root can carry the other roots over unchanged.
pub const SOURCES_FILE: &str = "sources.jsonl";

/// What to index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Folders or files to walk. On an existing index these roots are refreshed and the
    /// index's other roots are kept as they were; no roots at all refreshes every root.
    Roots(Vec<PathBuf>),
    /// A JSONL corpus of `{"_id", "title", "text"}` records.
    Jsonl(PathBuf),
}

/// A document ready to chunk, with its snapshot entry (`entry.root` indexes the build's roots).
pub(super) struct Loaded {
    pub doc: SourceDoc,
    pub entry: FileEntry,
}

/// One line of `sources.jsonl`.
#[derive(Serialize, Deserialize)]
struct SourceRecord {
    root: String,
    rel_path: String,
    kind: SourceKind,
    title_hint: Option<String>,
    text: String,
    size: u64,
    mtime_ns: u64,
    sha256: String,
}

/// Canonical absolute path of a root or file.
///
/// # Errors
/// [`Error::Root`] when it does not exist.
pub(super) fn absolute(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|source| Error::Root {
        path: path.to_path_buf(),
        source,
    })
}

/// Walks and reads `roots` (absolute); `root_index[i]` is root `i`'s index in the build.
pub(super) fn load_roots(
    roots: &[PathBuf],
    root_index: &[usize],
    config: &IndexConfig,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Loaded>> {
    let (files, mut found_warnings) = discover(roots)?;
    warnings.append(&mut found_warnings);
    let mut loaded = Vec::with_capacity(files.len());
    for f in files {
        let Some(read) = read_text(&f.path, config.max_file_bytes, warnings) else {
            continue;
        };
        loaded.push(Loaded {
            doc: SourceDoc {
                rel_path: f.rel_path.clone(),
                text: read.text,
                kind: f.kind,
                title_hint: None,
            },
            entry: FileEntry {
                root: root_index[f.root],
                rel_path: f.rel_path,
                size: f.size,
                mtime_ns: f.mtime_ns,
                sha256: read.sha256,
                chunks: 0,
            },
        });
    }
    Ok(loaded)
}

/// Reads a JSONL corpus as documents of root 0.
///
/// # Errors
/// [`Error::Io`] when unreadable; [`Error::Config`] when it holds no record.
pub(super) fn load_jsonl(path: &Path, warnings: &mut Vec<Warning>) -> Result<Vec<Loaded>> {
    let docs = read_jsonl(path, warnings)?;
    if docs.is_empty() {
        return Err(Error::Config(format!(
            "no `{{\"_id\", \"title\", \"text\"}}` record in `{}`",
            path.display()
        )));
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::io("stat", path, e))?;
    Ok(docs
        .into_iter()
        .map(|doc| Loaded {
            entry: FileEntry {
                root: 0,
                rel_path: doc.rel_path.clone(),
                size: meta.len(),
                mtime_ns: crate::discover::mtime_ns(&meta),
                sha256: crate::hashing::sha256_hex(doc.text.as_bytes()),
                chunks: 0,
            },
            doc,
        })
        .collect())
}

/// Writes every document's text to `gen_dir/sources.jsonl`; `roots[i]` names root `i`.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub(super) fn write_sources(gen_dir: &Path, roots: &[String], docs: &[Loaded]) -> Result<()> {
    let path = gen_dir.join(SOURCES_FILE);
    let file = std::fs::File::create(&path).map_err(|e| Error::io("create", &path, e))?;
    let mut w = std::io::BufWriter::new(file);
    for d in docs {
        let rec = SourceRecord {
            root: roots.get(d.entry.root).cloned().unwrap_or_default(),
            rel_path: d.entry.rel_path.clone(),
            kind: d.doc.kind,
            title_hint: d.doc.title_hint.clone(),
            text: d.doc.text.clone(),
            size: d.entry.size,
            mtime_ns: d.entry.mtime_ns,
            sha256: d.entry.sha256.clone(),
        };
        let line = serde_json::to_string(&rec).unwrap_or_default();
        writeln!(w, "{line}").map_err(|e| Error::io("write", &path, e))?;
    }
    let f = w
        .into_inner()
        .map_err(|e| Error::io("write", &path, e.into_error()))?;
    f.sync_all().map_err(|e| Error::io("fsync", &path, e))
}

/// The documents of root `root` (absolute path as recorded) in a generation's
/// `sources.jsonl`, assigned to build root index `index`.
///
/// # Errors
/// [`Error::Corrupt`] when the file is missing or a line does not parse.
pub(super) fn read_sources(gen_dir: &Path, root: &str, index: usize) -> Result<Vec<Loaded>> {
    let path = gen_dir.join(SOURCES_FILE);
    let corrupt = |why: String| Error::corrupt(gen_dir, format!("{SOURCES_FILE}: {why}"));
    let file = std::fs::File::open(&path).map_err(|e| corrupt(e.to_string()))?;
    let mut out = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.map_err(|e| corrupt(e.to_string()))?;
        let rec: SourceRecord = serde_json::from_str(&line).map_err(|e| corrupt(e.to_string()))?;
        if rec.root != root {
            continue;
        }
        out.push(Loaded {
            entry: FileEntry {
                root: index,
                rel_path: rec.rel_path.clone(),
                size: rec.size,
                mtime_ns: rec.mtime_ns,
                sha256: rec.sha256,
                chunks: 0,
            },
            doc: SourceDoc {
                rel_path: rec.rel_path,
                text: rec.text,
                kind: rec.kind,
                title_hint: rec.title_hint,
            },
        });
    }
    Ok(out)
}
