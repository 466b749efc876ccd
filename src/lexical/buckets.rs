//! The bucket list of a lexical index (`buckets.json` in its folder): which runs of
//! documents the index holds, in order, each with its chunk count and field lengths, so
//! that ordinals and BM25F's average field lengths follow without reading the postings.

use crate::config::PerField;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// File of a lexical index folder listing its buckets.
pub const BUCKETS_FILE: &str = "buckets.json";

/// One bucket: a run of consecutive documents (in (root, path) order) whose chunks are
/// one tantivy segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Unique within an index; a refresh that carries buckets over numbers its new ones
    /// above every id of the index it started from.
    pub id: u64,
    /// Documents of the run (some may have no chunk).
    pub files: u64,
    /// Chunks of the run.
    pub chunks: u64,
    /// Terms per field summed over the run's chunks, [`crate::config::Field::ALL`] order.
    pub lens: PerField<u64>,
    /// Chunks of the run with a non-empty field, per field ([`crate::config::Field::is_sparse`]
    /// fields' averages are over these); absent in an older bucket list.
    #[serde(default)]
    pub with_field: PerField<u64>,
    /// The tantivy segment holding the run's chunks (its id, 32 hex digits), so a refresh
    /// that does not keep the bucket drops the segment instead of deleting its chunks one
    /// by one; `None` for a bucket without chunks, for one whose chunks tantivy wrote as
    /// two segments (past its memory budget, on a very large document) and in an index
    /// written before buckets recorded it (a refresh then deletes the bucket's chunks by
    /// their bucket term).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<String>,
}

impl Bucket {
    pub(crate) fn empty(id: u64) -> Self {
        Bucket {
            id,
            files: 0,
            chunks: 0,
            lens: [0; crate::config::FIELDS],
            with_field: [0; crate::config::FIELDS],
            segment: None,
        }
    }
}

/// The first ordinal of each bucket, by id.
pub(crate) fn first_ordinals(buckets: &[Bucket]) -> HashMap<u64, u64> {
    let mut next = 0u64;
    buckets
        .iter()
        .map(|b| {
            let first = next;
            next += b.chunks;
            (b.id, first)
        })
        .collect()
}

/// Reads the bucket list of the index in `dir`.
///
/// # Errors
/// [`Error::Corrupt`] when it is missing or does not parse.
pub fn read_buckets(dir: &Path) -> Result<Vec<Bucket>> {
    let path = dir.join(BUCKETS_FILE);
    let bytes = crate::fsio::read_regular(&path)
        .map_err(|e| Error::corrupt(dir, format!("cannot read {BUCKETS_FILE} ({e})")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::corrupt(dir, format!("{BUCKETS_FILE} does not parse ({e})")))
}

/// Writes the bucket list into `dir` (a folder being built: not yet published).
///
/// # Errors
/// [`Error::Io`] when it cannot be written.
pub(crate) fn write_buckets(dir: &Path, buckets: &[Bucket]) -> Result<()> {
    let path = dir.join(BUCKETS_FILE);
    let bytes = serde_json::to_vec(buckets)
        .map_err(|e| Error::Config(format!("cannot serialise the bucket list: {e}")))?;
    let mut f = std::fs::File::create(&path).map_err(|e| Error::io("create", &path, e))?;
    f.write_all(&bytes)
        .map_err(|e| Error::io("write", &path, e))?;
    f.sync_all().map_err(|e| Error::io("fsync", &path, e))
}
