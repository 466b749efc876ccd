//! The manifest: what an index is, how it was built, sealed against damage.

use crate::config::{IndexConfig, PerField};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// On-disk format version of the index folder. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// File name of the manifest inside the index folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Where the indexed documents came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SourceSpec {
    /// Folders (or single files) walked for documentation; absolute paths.
    Roots { roots: Vec<String> },
    /// A JSONL file of `{"_id", "title", "text"}` records (BEIR corpus format).
    Jsonl { file: String },
}

/// Collection statistics BM25F needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectionShape {
    /// Source documents (files or JSONL records).
    pub documents: u64,
    /// Chunks indexed (the BM25F collection size N).
    pub chunks: u64,
    /// Average field length in terms, per field in [`crate::config::Field::ALL`] order.
    pub avg_field_len: PerField<f32>,
}

/// What the generation's vector files hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VectorsInfo {
    /// Key (sha256) of the embedder identity that produced the vectors.
    pub identity_key: String,
    /// Model name, for messages.
    pub model: String,
    pub dim: usize,
    /// Chunks with a vector.
    pub embedded: u64,
    /// Chunks still without one (lexical only until a refresh embeds them).
    pub pending: u64,
}

/// The sealed description of a published index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub lexicon_version: u32,
    /// docfuse version that wrote it.
    pub writer: String,
    /// Generation number, increasing with each build.
    pub generation: u64,
    /// Folder of the generation, relative to the index folder.
    pub generation_dir: String,
    /// Build time, ms since the Unix epoch.
    pub created_unix_ms: u64,
    pub source: SourceSpec,
    pub config: IndexConfig,
    pub config_hash: String,
    pub collection: CollectionShape,
    /// sha256 over the indexed inputs (see [`crate::store::Snapshot::hash`]).
    pub snapshot_hash: String,
    /// sha256 of the generation's `files.json`.
    pub files_sha256: String,
    /// The vector side of this generation, if it has one.
    #[serde(default)]
    pub vectors: Option<VectorsInfo>,
    /// sha256 over the manifest's canonical JSON with `seal` removed.
    #[serde(default)]
    pub seal: String,
}

impl Manifest {
    /// Sets `seal` and returns the pretty JSON to write.
    pub fn sealed_json(&mut self) -> Vec<u8> {
        self.seal.clear();
        // Seal what a reader will parse: the JSON text, not the in-memory floats
        // (an f32 widened to f64 prints differently from its shortest JSON form).
        let text = serde_json::to_string(&*self).unwrap_or_default();
        let value = serde_json::from_str(&text).unwrap_or_default();
        self.seal = seal_of(value);
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    /// Reads and verifies `DIR/manifest.json`: JSON shape, schema and lexicon versions,
    /// then the seal.
    ///
    /// # Errors
    /// [`Error::NoIndex`] when there is no manifest; [`Error::Corrupt`] when it does not
    /// parse, has another version, or its seal does not match its content.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NoIndex { dir: dir.into() })
            }
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(dir, format!("manifest is not valid JSON ({e})")))?;
        check_versions(dir, &value)?;
        let stored = value.get("seal").and_then(|s| s.as_str()).unwrap_or("");
        let mut unsealed = value.clone();
        if let Some(obj) = unsealed.as_object_mut() {
            obj.remove("seal");
        }
        if stored != seal_of(unsealed) {
            return Err(Error::corrupt(
                dir,
                "manifest seal does not match its content",
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| Error::corrupt(dir, format!("manifest has an unexpected shape ({e})")))
    }
}

fn check_versions(dir: &Path, value: &serde_json::Value) -> Result<()> {
    let found = |k: &str| value.get(k).and_then(|v| v.as_u64());
    let schema = found("schema_version");
    if schema != Some(SCHEMA_VERSION as u64) {
        return Err(Error::corrupt(
            dir,
            format!(
                "index format version {}, this docfuse reads version {SCHEMA_VERSION}",
                schema.map_or("missing".into(), |v| v.to_string())
            ),
        ));
    }
    let lexicon = found("lexicon_version");
    if lexicon != Some(crate::analysis::LEXICON_VERSION as u64) {
        return Err(Error::corrupt(
            dir,
            format!(
                "lexicon version {}, this docfuse analyses text with version {}",
                lexicon.map_or("missing".into(), |v| v.to_string()),
                crate::analysis::LEXICON_VERSION
            ),
        ));
    }
    Ok(())
}

/// sha256 of the canonical JSON of `value` (object keys sorted, compact), `seal` removed.
fn seal_of(mut value: serde_json::Value) -> String {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("seal");
    }
    // serde_json's Map is a BTreeMap (no `preserve_order`), so keys serialise sorted.
    let bytes = serde_json::to_vec(&value).unwrap_or_default();
    crate::hashing::sha256_hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Manifest {
        Manifest {
            schema_version: SCHEMA_VERSION,
            lexicon_version: crate::analysis::LEXICON_VERSION,
            writer: "test".into(),
            generation: 1,
            generation_dir: "gen-000001".into(),
            created_unix_ms: 0,
            source: SourceSpec::Roots {
                roots: vec!["/docs".into()],
            },
            config: IndexConfig::default(),
            config_hash: IndexConfig::default().hash(),
            collection: CollectionShape {
                documents: 1,
                chunks: 2,
                avg_field_len: [1.0; 7],
            },
            snapshot_hash: "s".into(),
            files_sha256: "f".into(),
            vectors: None,
            seal: String::new(),
        }
    }

    fn write(dir: &Path, bytes: &[u8]) {
        std::fs::write(dir.join(MANIFEST_FILE), bytes).unwrap();
    }

    #[test]
    fn sealed_manifest_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let mut m = sample();
        write(d.path(), &m.sealed_json());
        assert_eq!(Manifest::load(d.path()).unwrap(), m);
        assert_eq!(m.seal.len(), 64);
    }

    #[test]
    fn a_changed_value_breaks_the_seal() {
        let d = tempfile::tempdir().unwrap();
        let json = String::from_utf8(sample().sealed_json()).unwrap();
        write(
            d.path(),
            json.replace("\"chunks\": 2", "\"chunks\": 3").as_bytes(),
        );
        let err = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(
            err.contains("seal") && err.contains("hint: rebuild"),
            "{err}"
        );
    }

    #[test]
    fn other_schema_version_is_refused_with_both_versions() {
        let d = tempfile::tempdir().unwrap();
        let mut m = sample();
        m.schema_version = 99;
        write(d.path(), &m.sealed_json());
        let err = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(
            err.contains("version 99") && err.contains("reads version 1"),
            "{err}"
        );
    }

    #[test]
    fn garbage_and_missing_manifest_have_clear_errors() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            Manifest::load(d.path()),
            Err(Error::NoIndex { .. })
        ));
        write(d.path(), b"{not json");
        let err = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(err.contains("not valid JSON"), "{err}");
    }
}
