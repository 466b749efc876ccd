//! The manifest: what an index is, how it was built, sealed against damage.

use super::contents::GenerationFile;
use super::versions::{Compatibility, FormatVersions};
use crate::config::{IndexConfig, PerField};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

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

/// Whether the index is meant to have vectors, and why it has none when it should.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbeddingsState {
    /// Vectors were asked for (not built with `--no-embeddings`).
    pub wanted: bool,
    /// Why the last build could not embed (the model or ONNX Runtime did not load): the
    /// next refresh that can load it fills the vectors in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// A file of the index that could not be read at the last refresh: its last indexed
/// text (and chunks) are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartialFile {
    pub root: usize,
    pub path: String,
    pub reason: String,
}

/// The sealed description of a published index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub lexicon_version: u32,
    pub chunker_version: u32,
    pub projection_version: u32,
    pub input_template_version: u32,
    /// The documentation graph's rules (0: written before the graph had a version here).
    #[serde(default)]
    pub graph_metrics_version: u32,
    /// docfuse version that wrote it.
    pub writer: String,
    /// Generation number, increasing with each build.
    pub generation: u64,
    /// Folder of the generation, relative to the index folder.
    pub generation_dir: String,
    /// When the build began reading its sources, ms since the Unix epoch. The next
    /// refresh trusts size+mtime alone only for files modified well before it.
    pub created_unix_ms: u64,
    pub source: SourceSpec,
    /// The effective configuration: docfuse's defaults with `config_overrides` applied.
    pub config: IndexConfig,
    pub config_hash: String,
    /// The settings given explicitly (`index --k1 …`), as a JSON object over the
    /// configuration's shape; the others follow docfuse's defaults on refresh.
    #[serde(default)]
    pub config_overrides: serde_json::Value,
    pub collection: CollectionShape,
    /// sha256 over the indexed inputs (see [`crate::store::Snapshot::hash`]).
    pub snapshot_hash: String,
    /// sha256 of the generation's `files.json`.
    pub files_sha256: String,
    /// The vector side of this generation, if it has one.
    #[serde(default)]
    pub vectors: Option<VectorsInfo>,
    pub embeddings: EmbeddingsState,
    /// Files that could not be read at the last refresh (their previous text is kept).
    #[serde(default)]
    pub partial: Vec<PartialFile>,
    /// Entries the last walk skipped, per reason (`hidden`, `ignored`, …).
    #[serde(default)]
    pub skips: BTreeMap<String, u64>,
    /// The generation number of the store this folder generation copies (a database
    /// reader's cache: the published generation whose text it indexes); `None` for a
    /// folder index of its own. Answers from this generation carry this number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_generation: Option<u64>,
    /// Every file of the generation folder with its size and sha256.
    pub contents: Vec<GenerationFile>,
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

    /// The versions this manifest records.
    pub fn versions(&self) -> FormatVersions {
        FormatVersions {
            schema: self.schema_version,
            lexicon: self.lexicon_version,
            chunker: self.chunker_version,
            projection: self.projection_version,
            input_template: self.input_template_version,
            graph: self.graph_metrics_version,
        }
    }

    /// Sets every `*_version` to this docfuse's.
    pub fn set_current_versions(&mut self) {
        let v = FormatVersions::current();
        self.schema_version = v.schema;
        self.lexicon_version = v.lexicon;
        self.chunker_version = v.chunker;
        self.projection_version = v.projection;
        self.input_template_version = v.input_template;
        self.graph_metrics_version = v.graph;
    }

    /// Reads and verifies `DIR/manifest.json`: JSON shape, every version, then the seal.
    ///
    /// # Errors
    /// [`Error::NoIndex`] when there is no manifest; [`Error::IndexVersion`] when it was
    /// written by an older or a newer docfuse; [`Error::Corrupt`] when it does not parse
    /// or its seal does not match its content.
    pub fn load(dir: &Path) -> Result<Manifest> {
        let value = read_json(dir)?;
        match FormatVersions::of_json(&value).compatibility() {
            Compatibility::Same => {}
            Compatibility::Older(what) => {
                return Err(Error::IndexVersion {
                    dir: dir.into(),
                    what,
                    newer: false,
                })
            }
            Compatibility::Newer(what) => {
                return Err(Error::IndexVersion {
                    dir: dir.into(),
                    what,
                    newer: true,
                })
            }
        }
        Self::verified(dir, value)
    }

    fn verified(dir: &Path, value: serde_json::Value) -> Result<Manifest> {
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

/// The manifest's JSON, unverified.
///
/// # Errors
/// [`Error::NoIndex`] when there is none; [`Error::Corrupt`] when it is not JSON;
/// [`Error::Database`] when `dir` is a PostgreSQL URL (only the CLI opens those: it
/// keeps a local copy in sync).
pub fn read_json(dir: &Path) -> Result<serde_json::Value> {
    if let Some(url) = dir.to_str().filter(|d| crate::dburl::looks_like_url(d)) {
        let shown = crate::dburl::redacted(url);
        // a misspelled database URL, or a real one where only folders are read
        let what = if crate::dburl::is_database_url(url) {
            "is a PostgreSQL URL, and this command or library call opens index folders only"
        } else {
            "looks like a URL but is neither an index folder nor a PostgreSQL URL (`postgres://…` or `postgresql://…`, two slashes)"
        };
        return Err(Error::Database(format!(
            "`{shown}` {what}\nhint: a PostgreSQL index is `postgres://USER@HOST:PORT/DB`, for the CLI's index, refresh, search, status, serve, mcp…; elsewhere pass its local copy's folder (`docfuse status --index URL` names it)"
        )));
    }
    let path = dir.join(MANIFEST_FILE);
    let bytes = match crate::fsio::read_regular(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::NoIndex { dir: dir.into() })
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(Error::Unreadable {
                dir: dir.into(),
                reason: format!("read `{}`: {e}", path.display()),
            })
        }
        Err(e) => return Err(Error::io("read", path, e)),
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::corrupt(dir, format!("manifest is not valid JSON ({e})")))
}

/// The generation number a manifest names, whatever its version (`None` when there is
/// no readable manifest).
pub fn manifest_generation(dir: &Path) -> Option<u64> {
    read_json(dir).ok()?.get("generation")?.as_u64()
}

/// What a writer finds in an index folder.
#[derive(Debug)]
pub enum Existing {
    /// Nothing: a new index.
    None,
    /// A verified manifest of this docfuse's versions.
    Current(Box<Manifest>),
    /// An index written by an older docfuse: to rebuild from its roots and settings.
    Older {
        what: String,
        source: Option<SourceSpec>,
        config_overrides: serde_json::Value,
        /// Its published generation folder (its vectors are reused by hash).
        generation_dir: Option<String>,
    },
    /// An index written by a newer docfuse: never overwritten without `--force`; with
    /// it, rebuilt from the roots it names (when its `source` still reads).
    Newer {
        what: String,
        source: Option<SourceSpec>,
    },
    /// A manifest that does not verify.
    Damaged(String),
}

impl Existing {
    /// Reads the manifest of `dir` for a writer.
    ///
    /// # Errors
    /// [`Error::Io`] when the manifest exists but cannot be read.
    pub fn load(dir: &Path) -> Result<Existing> {
        let value = match read_json(dir) {
            Ok(v) => v,
            Err(Error::NoIndex { .. }) => return Ok(Existing::None),
            Err(Error::Corrupt { reason, .. }) => return Ok(Existing::Damaged(reason)),
            Err(e) => return Err(e),
        };
        match FormatVersions::of_json(&value).compatibility() {
            Compatibility::Same => Ok(match Manifest::verified(dir, value) {
                Ok(m) => Existing::Current(Box::new(m)),
                Err(e) => Existing::Damaged(e.to_string()),
            }),
            Compatibility::Newer(what) => Ok(Existing::Newer {
                what,
                source: value
                    .get("source")
                    .and_then(|s| serde_json::from_value(s.clone()).ok()),
            }),
            Compatibility::Older(what) => Ok(Existing::Older {
                what,
                source: value
                    .get("source")
                    .and_then(|s| serde_json::from_value(s.clone()).ok()),
                config_overrides: value
                    .get("config_overrides")
                    .cloned()
                    .unwrap_or(serde_json::Value::Null),
                generation_dir: value
                    .get("generation_dir")
                    .and_then(|g| g.as_str())
                    .filter(|g| g.starts_with("gen-") && !g.contains(['/', '\\']))
                    .map(str::to_string),
            }),
        }
    }
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
        let v = FormatVersions::current();
        Manifest {
            schema_version: v.schema,
            lexicon_version: v.lexicon,
            chunker_version: v.chunker,
            projection_version: v.projection,
            input_template_version: v.input_template,
            graph_metrics_version: v.graph,
            writer: "test".into(),
            generation: 1,
            generation_dir: "gen-000001".into(),
            created_unix_ms: 0,
            source: SourceSpec::Roots {
                roots: vec!["/docs".into()],
            },
            config: IndexConfig::default(),
            config_hash: IndexConfig::default().hash(),
            config_overrides: serde_json::Value::Null,
            collection: CollectionShape {
                documents: 1,
                chunks: 2,
                avg_field_len: [1.0; crate::config::FIELDS],
            },
            snapshot_hash: "s".into(),
            files_sha256: "f".into(),
            vectors: None,
            embeddings: EmbeddingsState::default(),
            partial: Vec::new(),
            skips: BTreeMap::new(),
            contents: Vec::new(),
            store_generation: None,
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
    fn older_and_newer_indexes_are_told_apart() {
        let d = tempfile::tempdir().unwrap();
        let mut m = sample();
        m.schema_version = crate::store::SCHEMA_VERSION + 1;
        write(d.path(), &m.sealed_json());
        let err = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(err.contains("upgrade docfuse"), "{err}");
        assert!(matches!(
            Existing::load(d.path()).unwrap(),
            Existing::Newer {
                source: Some(_),
                ..
            }
        ));
        let mut m = sample();
        m.chunker_version -= 1;
        write(d.path(), &m.sealed_json());
        let err = Manifest::load(d.path()).unwrap_err().to_string();
        assert!(
            err.contains("older docfuse") && err.contains("docfuse refresh"),
            "{err}"
        );
        match Existing::load(d.path()).unwrap() {
            Existing::Older { source, .. } => assert_eq!(source, Some(sample().source)),
            other => panic!("{other:?}"),
        }
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
