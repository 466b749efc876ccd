//! The library's one error type.
//!
//! Owns: every failure the library reports, with the path or value involved and, where
//! the user can act, a hint. Must not import any other docfuse module. `anyhow` is used
//! only in `cli`.

use std::path::PathBuf;

/// Result alias for the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A docfuse failure. Messages are lowercase, name what failed, and end with a
/// `hint:` line when there is something to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A root given to `index` does not exist or cannot be read.
    #[error("cannot read root `{path}`: {source}\nhint: pass a folder or file that exists")]
    Root {
        path: PathBuf,
        source: std::io::Error,
    },
    /// No index at the given folder.
    #[error(
        "no docfuse index at `{dir}`\nhint: build one with `docfuse index --index {dir} <ROOT>...`"
    )]
    NoIndex { dir: PathBuf },
    /// The index on disk is damaged.
    #[error("index at `{dir}` is unusable: {reason}\nhint: rebuild it with `docfuse refresh --force --index {dir}` (or `docfuse index --force --index {dir} <ROOT>...`); `docfuse verify --index {dir}` lists what is damaged")]
    Corrupt { dir: PathBuf, reason: String },
    /// The index's files cannot be read by this user (written by another user with
    /// private file modes); nothing is wrong with the index itself.
    #[error("cannot read the index at `{dir}`: {reason}\nhint: its files are not readable by you (written by another user?): ask its owner for `chmod -R a+rX {dir}`, or build your own with `docfuse index --index OTHER_DIR <ROOT>...`")]
    Unreadable { dir: PathBuf, reason: String },
    /// The index was written by another version of docfuse (`what` names the part).
    #[error("{}", version_message(dir, what, *newer))]
    IndexVersion {
        dir: PathBuf,
        what: String,
        /// Written by a newer docfuse (else an older one).
        newer: bool,
    },
    /// The index folder given holds other files and no index (a folder of documents):
    /// nothing is written into it.
    #[error("`{dir}` is not a docfuse index and holds other files (`{entry}`): nothing was written there\nhint: `--index` names the folder the index is written to: give a new or empty one, or leave it out (default `.docfuse`); the folders to index are the ROOT arguments")]
    NotAnIndexFolder { dir: PathBuf, entry: String },
    /// The index folder cannot be written (read-only disk, another owner).
    #[error("the index folder `{dir}` is read-only ({source}): nothing was changed\nhint: refresh it where it is writable, or index into another folder with `--index`")]
    ReadOnly {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// An I/O failure on a named path.
    #[error("{action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// Another process is writing the index.
    #[error("another docfuse is writing the index at `{dir}` ({holder})\nhint: wait for it, or run without `--no-wait` to wait")]
    Locked { dir: PathBuf, holder: String },
    /// A failure inside tantivy (the lexical index store).
    #[error("lexical index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// A malformed input file (queries, qrels, JSONL corpus), with its line.
    #[error("{path}:{line}: {message}")]
    Input {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The vector side cannot be used (no embeddings feature, model or runtime missing,
    /// identity mismatch); lexical search still works.
    #[error("vector search unavailable: {0}")]
    VectorsUnavailable(String),
    /// The embedder failed on an input.
    #[error("embedder: {0}")]
    Embedder(String),
    /// A setting out of its range.
    #[error("invalid setting: {0}")]
    Config(String),

    /// A PostgreSQL index store failed (connection, schema version, a query); the text
    /// names the database with its password redacted and says what to do.
    #[error("{0}")]
    Database(String),

    /// Something asked for by name is not in the index (a document, a graph); the text
    /// says what and how to get it.
    #[error("{0}")]
    NotFound(String),
}

fn version_message(dir: &std::path::Path, what: &str, newer: bool) -> String {
    let d = dir.display();
    if newer {
        format!("the index at `{d}` was written by a newer docfuse ({what})\nhint: upgrade docfuse; to overwrite it with this version instead, pass `--force` to `docfuse index` or `docfuse refresh`")
    } else {
        format!("the index at `{d}` was written by an older docfuse ({what})\nhint: run `docfuse refresh --index {d}` to rebuild it")
    }
}

impl Error {
    /// Wraps an I/O error with the action and the path it concerned.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    /// A corrupt-index error for `dir`.
    pub fn corrupt(dir: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Corrupt {
            dir: dir.into(),
            reason: reason.into(),
        }
    }
}
