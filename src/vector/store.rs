//! The vector files of a generation: `vectors.f32` (row-major little-endian f32) and
//! `vectors.json` (identity, shape, per-row embedding hashes, sha256 of the matrix).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// File name of the matrix.
pub const VECTORS_BIN: &str = "vectors.f32";
/// File name of the metadata.
pub const VECTORS_META: &str = "vectors.json";

/// What the matrix holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorMeta {
    /// The embedder identity (as JSON) that produced every row.
    pub identity: serde_json::Value,
    /// Key of that identity (sha256).
    pub identity_key: String,
    pub dim: usize,
    /// Embedding hash of row `i` (= chunk ordinal `i`); empty when the row has no vector.
    pub hashes: Vec<String>,
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

/// `[n, dim]` L2-normalised vectors, row `i` for chunk ordinal `i`.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorSet {
    pub meta: VectorMeta,
    /// Row-major, `hashes.len() × dim`. A row with an empty hash is all zeros.
    pub data: Vec<f32>,
}

impl VectorSet {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.meta.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.meta.hashes.is_empty()
    }

    /// True when row `i` holds a vector (false for a chunk pending embedding).
    pub fn has_vector(&self, i: usize) -> bool {
        self.meta.hashes.get(i).is_some_and(|h| !h.is_empty())
    }

    /// Row `i` (empty slice when out of range).
    pub fn row(&self, i: usize) -> &[f32] {
        let d = self.meta.dim;
        self.data.get(i * d..(i + 1) * d).unwrap_or(&[])
    }

    /// Cosine of `query` with every row, `[n]`.
    pub fn cosines(&self, query: &[f32]) -> Vec<f32> {
        (0..self.len())
            .map(|i| super::dot(self.row(i), query))
            .collect()
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
                hashes: vec!["a".into(), String::new(), "c".into()],
                matrix_sha256: String::new(),
                hnsw_sha256: None,
            },
            data: vec![1.0, 0.0, 0.0, 0.0, 0.6, 0.8],
        }
    }

    #[test]
    fn round_trips_and_reports_cosines_and_hashes() {
        let d = tempfile::tempdir().unwrap();
        let mut s = set();
        s.write(d.path()).unwrap();
        let r = VectorSet::read(d.path()).unwrap();
        assert_eq!(r, s);
        assert_eq!(r.cosines(&[0.6, 0.8]), [0.6, 0.0, 1.0]);
        assert_eq!(r.by_hash().len(), 2);
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
