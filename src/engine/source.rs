//! Where a build's documents come from: roots on disk, a JSONL corpus, or the previous
//! generation's copy of a document (`sources.jsonl`: the text of every indexed document,
//! so a root that is not refreshed, or a file that cannot be read now, keeps its last
//! indexed text, and a passage of a changed file can still be served as indexed).

use super::jsonl::read_jsonl;
use crate::chunk::{SourceDoc, SourceKind};
use crate::discover::Warning;
use crate::error::{Error, Result};
use crate::store::FileEntry;
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// File of a generation holding the text of every indexed document.
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
#[derive(Debug, Clone)]
pub(super) struct Loaded {
    pub doc: SourceDoc,
    pub entry: FileEntry,
}

/// One line of `sources.jsonl`.
#[derive(Serialize, Deserialize)]
struct SourceRecord {
    rel_path: String,
    kind: SourceKind,
    title_hint: Option<String>,
    text: String,
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
                record: None,
            },
            doc,
        })
        .collect())
}

/// Writes every document's text to `gen_dir/sources.jsonl` and records where each
/// record is in its snapshot entry.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub(super) fn write_sources(gen_dir: &Path, docs: &mut [Loaded]) -> Result<()> {
    let path = gen_dir.join(SOURCES_FILE);
    let file = std::fs::File::create(&path).map_err(|e| Error::io("create", &path, e))?;
    let mut w = std::io::BufWriter::new(file);
    let mut offset = 0u64;
    for d in docs.iter_mut() {
        let rec = SourceRecord {
            rel_path: d.doc.rel_path.clone(),
            kind: d.doc.kind,
            title_hint: d.doc.title_hint.clone(),
            text: d.doc.text.clone(),
        };
        let mut line = serde_json::to_vec(&rec)
            .map_err(|e| Error::Config(format!("cannot serialise a source record: {e}")))?;
        line.push(b'\n');
        w.write_all(&line)
            .map_err(|e| Error::io("write", &path, e))?;
        d.entry.record = Some((offset, line.len() as u64));
        offset += line.len() as u64;
    }
    let f = w
        .into_inner()
        .map_err(|e| Error::io("write", &path, e.into_error()))?;
    f.sync_all().map_err(|e| Error::io("fsync", &path, e))
}

/// The indexed document of `entry` in the generation `gen_dir` (its `sources.jsonl`
/// record), with `entry` as its snapshot entry.
///
/// # Errors
/// [`Error::Corrupt`] (naming `index_dir`) when the record is missing or does not parse.
pub(crate) fn read_record(
    index_dir: &Path,
    gen_dir: &Path,
    entry: &FileEntry,
) -> Result<SourceDoc> {
    let corrupt = |why: String| Error::corrupt(index_dir, format!("{SOURCES_FILE}: {why}"));
    let (offset, len) = entry
        .record
        .ok_or_else(|| corrupt(format!("no record for `{}`", entry.rel_path)))?;
    let path = gen_dir.join(SOURCES_FILE);
    let mut f = std::fs::File::open(&path).map_err(|e| corrupt(e.to_string()))?;
    f.seek(SeekFrom::Start(offset))
        .map_err(|e| corrupt(e.to_string()))?;
    let mut buf = vec![0u8; len as usize];
    f.read_exact(&mut buf).map_err(|e| corrupt(e.to_string()))?;
    let rec: SourceRecord = serde_json::from_slice(&buf).map_err(|e| corrupt(e.to_string()))?;
    if rec.rel_path != entry.rel_path {
        return Err(corrupt(format!(
            "the record of `{}` names `{}`",
            entry.rel_path, rec.rel_path
        )));
    }
    Ok(SourceDoc {
        rel_path: rec.rel_path,
        text: rec.text,
        kind: rec.kind,
        title_hint: rec.title_hint,
    })
}
