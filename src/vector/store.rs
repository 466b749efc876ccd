//! The vector files of a generation: `vectors.f32` (row-major little-endian f32) and
//! `vectors.json` (identity, shape, per-row embedding hashes, sha256 of the matrix).
//!
//! A chunk's first row holds the vector of its whole embedding input, which the
//! embedder truncates (256 word pieces for MiniLM). A longer input also gets **tail
//! rows**, one per window of its remaining word pieces ([`crate::embed::Embedder::tails`]),
//! stored after the chunks' rows with the ordinal of the chunk they belong to: no part
//! of an indexed text is unseen by the vector side. A chunk's cosine with a query is the
//! largest of its rows' (max-pooling over passages, as in Dai & Callan 2019, "Deeper
//! Text Understanding for IR with Contextual Neural Language Modeling", BERT-MaxP).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// File name of the matrix.
pub const VECTORS_BIN: &str = "vectors.f32";
/// File name of the metadata.
pub const VECTORS_META: &str = "vectors.json";
/// Version of the tail-window rule ([`crate::embed::Embedder::tails`]): a generation
/// made by another rule is chunked and embedded again (heads are reused by hash).
pub const WINDOW_RULE: u32 = 1;

/// What the matrix holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorMeta {
    /// The embedder identity (as JSON) that produced every row.
    pub identity: serde_json::Value,
    /// Key of that identity (sha256).
    pub identity_key: String,
    pub dim: usize,
    /// Embedding hash of row `i`: rows `0..chunks` are chunk ordinals (empty when the
    /// chunk has no vector yet), the rest tail rows (see [`VectorMeta::tails`]).
    pub hashes: Vec<String>,
    /// The chunk ordinal of each tail row: row `chunks + j` belongs to chunk `tails[j]`
    /// (ascending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tails: Vec<u32>,
    /// The rule the tail rows were made by ([`WINDOW_RULE`]; 0: an index made before
    /// tails, whose long chunks have none).
    #[serde(default)]
    pub window_rule: u32,
    /// sha256 of `vectors.f32`.
    pub matrix_sha256: String,
    /// sha256 of the HNSW graph files (graph, data), when the generation has a graph.
    #[serde(default)]
    pub hnsw_sha256: Option<Vec<String>>,
}

impl VectorMeta {
    /// The metadata in `dir` (`vectors.json`) without the matrix; `None` when missing or
    /// unreadable. Nothing is verified: read the [`VectorSet`] before using a row.
    pub fn read(dir: &Path) -> Option<VectorMeta> {
        let bytes = crate::fsio::read_regular(dir.join(VECTORS_META)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// `[rows, dim]` L2-normalised vectors: row `i < len()` for chunk ordinal `i`, then the
/// tail rows.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorSet {
    pub meta: VectorMeta,
    /// Row-major, `hashes.len() × dim`. A row with an empty hash is all zeros.
    pub data: Vec<f32>,
}

impl VectorSet {
    /// Number of chunks (rows before the tail rows).
    pub fn len(&self) -> usize {
        self.meta.hashes.len().saturating_sub(self.meta.tails.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of rows, tail rows included.
    pub fn rows(&self) -> usize {
        self.meta.hashes.len()
    }

    /// The chunk ordinal row `row` belongs to.
    pub fn owner(&self, row: usize) -> usize {
        let n = self.len();
        match row.checked_sub(n) {
            Some(j) => self.meta.tails.get(j).map_or(row, |&o| o as usize),
            None => row,
        }
    }

    /// True when chunk `i` holds a vector (false for a chunk pending embedding).
    pub fn has_vector(&self, i: usize) -> bool {
        i < self.len() && self.meta.hashes.get(i).is_some_and(|h| !h.is_empty())
    }

    /// Row `i` (empty slice when out of range).
    pub fn row(&self, i: usize) -> &[f32] {
        let d = self.meta.dim;
        self.data.get(i * d..(i + 1) * d).unwrap_or(&[])
    }

    /// The tail rows of every chunk: `starts[i]..starts[i + 1]` index into the tail
    /// rows (offsets from `len()`), `[len() + 1]`.
    pub fn tail_starts(&self) -> Vec<u32> {
        let n = self.len();
        let mut starts = vec![0u32; n + 1];
        for &o in &self.meta.tails {
            if let Some(s) = starts.get_mut(o as usize + 1) {
                *s += 1;
            }
        }
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        starts
    }

    /// Cosine of `query` with every chunk (the largest over its rows), `[len()]`.
    pub fn cosines(&self, query: &[f32]) -> Vec<f32> {
        let mut out = self.first_row_cosines(query);
        self.raise_by_tails(&mut out, query);
        out
    }

    /// Cosine of `query` with every chunk's first row, `[len()]`.
    pub fn first_row_cosines(&self, query: &[f32]) -> Vec<f32> {
        (0..self.len())
            .map(|i| super::dot(self.row(i), query))
            .collect()
    }

    /// Raises each chunk's cosine in `out` (`[len()]`) to its tail rows' where higher.
    pub fn raise_by_tails(&self, out: &mut [f32], query: &[f32]) {
        let n = self.len();
        for (j, &o) in self.meta.tails.iter().enumerate() {
            let c = super::dot(self.row(n + j), query);
            if let Some(best) = out.get_mut(o as usize) {
                *best = best.max(c);
            }
        }
    }

    /// Rows by embedding hash, for reuse in the next build.
    pub fn by_hash(&self) -> HashMap<&str, &[f32]> {
        self.meta
            .hashes
            .iter()
            .enumerate()
            .filter(|(_, h)| !h.is_empty())
            .map(|(i, h)| (h.as_str(), self.row(i)))
            .collect()
    }

    /// The tail-row hashes of every chunk with a vector and tail rows, by the chunk's
    /// embedding hash (equal hash, equal input: equal tails under the same rule; of two
    /// chunks with one hash, the first's).
    pub fn tails_by_head(&self) -> HashMap<&str, Vec<&str>> {
        let n = self.len();
        let mut owner: HashMap<&str, u32> = HashMap::new();
        let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
        for (j, &o) in self.meta.tails.iter().enumerate() {
            let head = self.meta.hashes.get(o as usize).map_or("", String::as_str);
            if head.is_empty() || o as usize >= n || *owner.entry(head).or_insert(o) != o {
                continue;
            }
            out.entry(head)
                .or_default()
                .push(self.meta.hashes[n + j].as_str());
        }
        out
    }

    /// Writes both files into `dir`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that failed.
    pub fn write(&mut self, dir: &Path) -> Result<()> {
        let bytes: Vec<u8> = self.data.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.meta.matrix_sha256 = crate::hashing::sha256_hex(&bytes);
        crate::store::write_atomic(&dir.join(VECTORS_BIN), &bytes)?;
        let meta = serde_json::to_vec(&self.meta).unwrap_or_default();
        crate::store::write_atomic(&dir.join(VECTORS_META), &meta)
    }

    /// Reads and verifies both files from `dir`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a file is missing, does not parse, has the wrong size or
    /// its sha256 differs from the recorded one.
    pub fn read(dir: &Path) -> Result<VectorSet> {
        let corrupt = |why: String| Error::corrupt(dir, format!("vectors: {why}"));
        let meta = crate::fsio::read_regular(dir.join(VECTORS_META))
            .map_err(|e| corrupt(e.to_string()))?;
        let meta: VectorMeta = serde_json::from_slice(&meta).map_err(|e| corrupt(e.to_string()))?;
        let bytes =
            crate::fsio::read_regular(dir.join(VECTORS_BIN)).map_err(|e| corrupt(e.to_string()))?;
        if meta.tails.len() > meta.hashes.len()
            || meta.tails.windows(2).any(|w| w[0] > w[1])
            || meta
                .tails
                .last()
                .is_some_and(|&o| o as usize >= meta.hashes.len() - meta.tails.len())
        {
            return Err(corrupt(
                "tail rows name chunks out of order or out of range".into(),
            ));
        }
        if bytes.len() != meta.hashes.len() * meta.dim * 4 {
            return Err(corrupt(format!(
                "matrix has {} bytes, expected {}",
                bytes.len(),
                meta.hashes.len() * meta.dim * 4
            )));
        }
        if crate::hashing::sha256_hex(&bytes) != meta.matrix_sha256 {
            return Err(corrupt("matrix does not match its recorded sha256".into()));
        }
        let data = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(VectorSet { meta, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> VectorSet {
        VectorSet {
            meta: VectorMeta {
                identity: serde_json::json!({"model": "t"}),
                identity_key: "k".into(),
                dim: 2,
                hashes: vec!["a".into(), String::new(), "c".into(), "t".into()],
                tails: vec![0],
                window_rule: WINDOW_RULE,
                matrix_sha256: String::new(),
                hnsw_sha256: None,
            },
            data: vec![1.0, 0.0, 0.0, 0.0, 0.6, 0.8, 0.0, 1.0],
        }
    }

    #[test]
    fn round_trips_and_reports_cosines_and_hashes() {
        let d = tempfile::tempdir().unwrap();
        let mut s = set();
        s.write(d.path()).unwrap();
        let r = VectorSet::read(d.path()).unwrap();
        assert_eq!(r, s);
        // chunk 0's tail row (0, 1) is nearer the query than its first row
        assert_eq!(r.cosines(&[0.6, 0.8]), [0.8, 0.0, 1.0]);
        assert_eq!((r.len(), r.rows(), r.owner(3), r.owner(2)), (3, 4, 0, 2));
        assert_eq!(r.tail_starts(), [0, 1, 1, 1]);
        assert!(!r.has_vector(3));
        assert_eq!(r.by_hash().len(), 3);
        assert_eq!(r.tails_by_head()["a"], ["t"]);
        // two chunks of one text: one chunk's tails, not both
        let mut twice = set();
        twice.meta.hashes = ["a", "", "a", "t1", "t2", "t1", "t2"]
            .map(String::from)
            .to_vec();
        twice.meta.tails = vec![0, 0, 2, 2];
        twice.data = vec![0.0; 14];
        assert_eq!(twice.tails_by_head()["a"], ["t1", "t2"]);
    }

    #[test]
    fn a_truncated_or_altered_matrix_is_refused() {
        let d = tempfile::tempdir().unwrap();
        set().write(d.path()).unwrap();
        let bin = d.path().join(VECTORS_BIN);
        let mut bytes = std::fs::read(&bin).unwrap();
        bytes[0] ^= 1;
        std::fs::write(&bin, &bytes).unwrap();
        assert!(VectorSet::read(d.path())
            .unwrap_err()
            .to_string()
            .contains("sha256"));
        std::fs::write(&bin, &bytes[..8]).unwrap();
        assert!(VectorSet::read(d.path())
            .unwrap_err()
            .to_string()
            .contains("bytes"));
    }
}
