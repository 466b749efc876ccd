//! Where a build's documents come from: roots on disk, a JSONL corpus, or the previous
//! generation's copy of a document (`sources/`: the text of every indexed document, one file per lexical bucket,
//! so a root that is not refreshed, or a file that cannot be read now, keeps its last
//! indexed text, and a passage of a changed file can still be served as indexed).

use super::jsonl::read_jsonl;
use crate::chunk::{SourceDoc, SourceKind};
use crate::discover::Warning;
use crate::error::{Error, Result};
use crate::store::FileEntry;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Folder of a generation holding the text of every indexed document: one JSONL file per
/// lexical bucket.
pub const SOURCES_DIR: &str = "sources";

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
pub struct Loaded {
    /// The document; its text is empty while `carried` (not read yet).
    pub doc: SourceDoc,
    pub entry: FileEntry,
    /// Unchanged since the previous generation and not read: its text is that
    /// generation's record (`entry.record`), loaded only if the document is chunked again.
    pub carried: bool,
}

impl Loaded {
    /// A document of prose (Markdown, MDX, text), which alone may be a change log or a
    /// template copy: a source file under `posts/` is code, a project file's records are
    /// routes.
    pub fn is_prose(&self) -> bool {
        use crate::chunk::SourceKind;
        matches!(
            self.doc.kind,
            SourceKind::Markdown | SourceKind::Mdx | SourceKind::Text
        )
    }
}

/// One line of a sources file.
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
pub fn absolute(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|source| Error::Root {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a JSONL corpus as documents of root 0.
///
/// # Errors
/// [`Error::Io`] when unreadable; [`Error::Config`] when it holds no record.
pub fn load_jsonl(path: &Path, warnings: &mut Vec<Warning>) -> Result<Vec<Loaded>> {
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
            carried: false,
            entry: FileEntry {
                root: 0,
                rel_path: doc.rel_path.clone(),
                size: meta.len(),
                mtime_ns: crate::discover::mtime_ns(&meta),
                ctime_ns: 0,
                read_ms: 0,
                sha256: record_sha256(&doc),
                chunks: 0,
                record: None,
                bucket: None,
                note: None,
            },
            doc,
        })
        .collect())
}

/// The content hash of a JSONL record: its title and its text (either changes the
/// indexed chunks).
fn record_sha256(doc: &SourceDoc) -> String {
    let mut h = crate::hashing::Hasher::new();
    h.part(doc.title_hint.as_deref().unwrap_or(""))
        .part(&doc.text);
    h.finish()
}

/// Writes every document's text into its bucket's sources file
/// (`gen_dir/sources/b<id>.jsonl`) and records where each record is in its snapshot
/// entry. The sources of a bucket in `kept` are hard links of `previous_gen`'s (their
/// records unchanged).
///
/// # Errors
/// [`Error::Io`] when a file cannot be written or linked.
pub fn write_sources(
    gen_dir: &Path,
    docs: &mut [Loaded],
    kept: &HashSet<u64>,
    previous_gen: Option<&Path>,
) -> Result<()> {
    let dir = gen_dir.join(SOURCES_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
    let mut start = 0;
    while start < docs.len() {
        let Some(bucket) = docs[start].entry.bucket else {
            return Err(Error::Config(format!(
                "internal: `{}` belongs to no lexical bucket",
                docs[start].entry.rel_path
            )));
        };
        let end = start
            + docs[start..]
                .iter()
                .take_while(|d| d.entry.bucket == Some(bucket))
                .count();
        let name = sources_name(Some(bucket));
        match previous_gen {
            Some(prev) if kept.contains(&bucket) => {
                crate::store::link_or_copy(&prev.join(SOURCES_DIR).join(&name), &dir.join(&name))?;
            }
            _ => write_records(&dir.join(&name), &mut docs[start..end])?,
        }
        start = end;
    }
    Ok(())
}

/// The name of a bucket's sources file.
pub fn sources_name(bucket: Option<u64>) -> String {
    format!("b{}.jsonl", bucket.unwrap_or(0))
}

fn write_records(path: &Path, docs: &mut [Loaded]) -> Result<()> {
    // A new file, never one linked from the previous generation.
    let file = std::fs::File::options()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io("create", path, e))?;
    let mut w = std::io::BufWriter::new(file);
    let mut offset = 0u64;
    for d in docs.iter_mut() {
        let line = source_line(&d.doc)?;
        w.write_all(&line)
            .map_err(|e| Error::io("write", path, e))?;
        d.entry.record = Some((offset, line.len() as u64));
        offset += line.len() as u64;
    }
    let f = w
        .into_inner()
        .map_err(|e| Error::io("write", path, e.into_error()))?;
    f.sync_all().map_err(|e| Error::io("fsync", path, e))
}

/// One sources-file line (with its newline) for `doc`.
fn source_line(doc: &SourceDoc) -> Result<Vec<u8>> {
    let rec = SourceRecord {
        rel_path: doc.rel_path.clone(),
        kind: doc.kind,
        title_hint: doc.title_hint.clone(),
        text: doc.text.clone(),
    };
    let mut line = serde_json::to_vec(&rec)
        .map_err(|e| Error::Config(format!("cannot serialise a source record: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

/// The indexed document of `entry` in the generation `gen_dir` (its record in its
/// bucket's sources file), with `entry` as its snapshot entry.
///
/// # Errors
/// [`Error::Corrupt`] (naming `index_dir`) when the record is missing or does not parse.
pub fn read_record(index_dir: &Path, gen_dir: &Path, entry: &FileEntry) -> Result<SourceDoc> {
    let corrupt = |why: String| Error::corrupt(index_dir, format!("{SOURCES_DIR}: {why}"));
    let (offset, len) = entry
        .record
        .ok_or_else(|| corrupt(format!("no record for `{}`", entry.rel_path)))?;
    let path = gen_dir.join(SOURCES_DIR).join(sources_name(entry.bucket));
    let mut f = crate::fsio::open_regular(&path)
        .map_err(|e| corrupt(format!("cannot open `{}`: {e}", path.display())))?;
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
