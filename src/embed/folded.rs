//! The folded-model cache: the embedding model as ONNX Runtime's basic-level optimiser
//! leaves it (every `DequantizeLinear` of the int8 weights constant-folded into f32
//! weights), kept next to an index so that creating an ONNX session skips the folding.
//!
//! Why: folding the int8 all-MiniLM-L6-v2 takes about 250 ms of every session creation
//! (ONNX Runtime's `ConstantFolding`), which is most of a one-off `docfuse search` with
//! vectors. A session created from the folded graph, its 90 MB of weights memory-mapped
//! from `weights.bin`, is ready in about 120 ms and computes bit-identical vectors.
//!
//! Layout: `DIR/<key>/` holds `graph.onnx` (the folded graph, about 55 KB), `weights.bin`
//! (its weights, external data) and `folded.json` (the [`Record`]). The key is sha256 of
//! the embedder identity key, ONNX Runtime's build string and [`VERSION`]: another model,
//! tokenizer or runtime never sees it. A folder is complete or absent (written under a
//! temporary name, then renamed).
//!
//! Verification: a cached model is used only when its record names the same key, the
//! graph's sha256 and the weights' size and modification time are those recorded, and
//! the session made from it embeds a fixed probe text to the very vector the original
//! model gave when the cache was written (bit for bit: sha256 of the f32 bytes). Anything
//! else and the session is made from the original model, as without a cache. `docfuse
//! verify` checks the weights' full sha256 too.

use crate::hashing::{sha256_hex, Hasher};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Format of the cache; part of its key.
pub const VERSION: u32 = 1;

/// Set to `off` (or `0`, `false`, `no`) to neither use nor write the folded-model cache.
pub const ENV_MODEL_CACHE: &str = "DOCFUSE_MODEL_CACHE";

/// The folded graph's file name.
pub const GRAPH: &str = "graph.onnx";
/// The folded weights' file name (the graph's external data).
pub const WEIGHTS: &str = "weights.bin";
/// The record's file name.
pub const RECORD: &str = "folded.json";

/// Embedded to check that a session made from the cache computes what the original model
/// computes: words, sub-words, digits, punctuation, accents and code.
pub const PROBE: &str = "docfuse folded-model probe: Configure `cargo build --release` \
    with [profile.release] lto = true; naïve café, 0x1F 3.14 — Grüße! fn main() { }";

/// What a cache folder holds, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub v: u32,
    /// Cache key (the folder's name).
    pub key: String,
    /// The embedder identity key the model was folded for.
    pub identity_key: String,
    /// ONNX Runtime's build string (version and commit) that folded it.
    pub runtime: String,
    /// sha256 of `graph.onnx`.
    pub graph_sha256: String,
    /// Size of `weights.bin` in bytes.
    pub weights_bytes: u64,
    /// Modification time of `weights.bin`, ns since the Unix epoch.
    pub weights_mtime_ns: u128,
    /// sha256 of `weights.bin` (checked by `docfuse verify`, too slow for every load).
    pub weights_sha256: String,
    /// sha256 of the original model's vector of [`PROBE`] (`dim` f32, little-endian).
    pub probe_sha256: String,
}

/// A verified-on-disk folded model, ready for a session: the graph's bytes and the folder
/// its weights are read from.
#[derive(Debug, Clone)]
pub struct Folded {
    pub dir: PathBuf,
    pub graph: Vec<u8>,
    /// What the session must give for [`PROBE`].
    pub probe_sha256: String,
}

/// Whether the cache is on (`DOCFUSE_MODEL_CACHE` is not `off`).
pub fn enabled() -> bool {
    let v = std::env::var(ENV_MODEL_CACHE).unwrap_or_default();
    !matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "off" | "0" | "false" | "no"
    )
}

/// The cache key of a model: sha256(identity key, runtime build string, [`VERSION`]).
pub fn key(identity_key: &str, runtime: &str) -> String {
    let mut h = Hasher::new();
    h.part(identity_key)
        .part(runtime)
        .part(VERSION.to_le_bytes());
    h.finish()
}

/// sha256 of a vector's f32 little-endian bytes.
pub fn vector_sha256(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    sha256_hex(&bytes)
}

fn mtime_ns(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let t = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some((meta.len(), t.as_nanos()))
}

fn read_record(folder: &Path) -> Result<Record, String> {
    let bytes = std::fs::read(folder.join(RECORD)).map_err(|e| format!("no record: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("unreadable record: {e}"))
}

/// The cached folded model for `key` in `cache_dir`, when its record, graph hash and
/// weights' size and mtime check out (the probe is the caller's: it needs a session).
///
/// # Errors
/// Why it cannot be used (missing, foreign, changed), for a debug log.
pub fn open(cache_dir: &Path, key: &str) -> Result<Folded, String> {
    let dir = cache_dir.join(key);
    let rec = read_record(&dir)?;
    if rec.v != VERSION || rec.key != key {
        return Err("the record is of another model or format".into());
    }
    let graph = std::fs::read(dir.join(GRAPH)).map_err(|e| format!("no graph: {e}"))?;
    if sha256_hex(&graph) != rec.graph_sha256 {
        return Err("the graph's sha256 differs from the record".into());
    }
    if mtime_ns(&dir.join(WEIGHTS)) != Some((rec.weights_bytes, rec.weights_mtime_ns)) {
        return Err("the weights' size or mtime differ from the record".into());
    }
    Ok(Folded {
        dir,
        graph,
        probe_sha256: rec.probe_sha256,
    })
}

/// Whether `cache_dir` holds a folder for `key` whose files match its record by size and
/// mtime (cheap: no hashing of the weights, no session).
pub fn present(cache_dir: &Path, key: &str) -> bool {
    open(cache_dir, key).is_ok()
}

/// How a model is folded and probed, supplied by the embedder (this module does files).
pub trait Folder {
    /// Writes the folded graph to `dir/GRAPH` and its weights to `dir/WEIGHTS`.
    fn fold(&self, dir: &Path) -> Result<(), String>;
    /// sha256 of the vector of [`PROBE`] from a session made from the folded model in
    /// `dir` ([`vector_sha256`]).
    fn probe_folded(&self, dir: &Path) -> Result<String, String>;
    /// sha256 of the vector of [`PROBE`] from the original model.
    fn probe_original(&self) -> Result<String, String>;
}

/// Writes the folded model for `key` into `cache_dir` unless a usable one is there:
/// folds into a temporary folder, checks that the folded model embeds the probe to the
/// original's vector bit for bit, records it, renames the folder into place and removes
/// the folders of other keys. `Ok(true)` when written, `Ok(false)` when already there.
///
/// # Errors
/// Why it was not written (nothing is left behind): a write failure, or the folded model
/// computes other vectors than the original (then it must never be used).
pub fn write(
    cache_dir: &Path,
    key: &str,
    identity_key: &str,
    runtime: &str,
    folder: &dyn Folder,
) -> Result<bool, String> {
    if present(cache_dir, key) {
        return Ok(false);
    }
    std::fs::create_dir_all(cache_dir).map_err(|e| format!("cannot create the cache: {e}"))?;
    let tmp = cache_dir.join(format!(
        ".tmp-{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let result = fill(&tmp, key, identity_key, runtime, folder).and_then(|()| {
        let dest = cache_dir.join(key);
        let _ = std::fs::remove_dir_all(&dest);
        std::fs::rename(&tmp, &dest).map_err(|e| format!("cannot publish the cache: {e}"))
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result?;
    remove_others(cache_dir, key);
    Ok(true)
}

fn fill(
    tmp: &Path,
    key: &str,
    identity_key: &str,
    runtime: &str,
    folder: &dyn Folder,
) -> Result<(), String> {
    std::fs::create_dir_all(tmp).map_err(|e| format!("cannot create `{}`: {e}", tmp.display()))?;
    folder.fold(tmp)?;
    let original = folder.probe_original()?;
    let folded = folder.probe_folded(tmp)?;
    if folded != original {
        return Err("the folded model embeds differently from the original: not cached".into());
    }
    let graph = std::fs::read(tmp.join(GRAPH)).map_err(|e| format!("no folded graph: {e}"))?;
    let weights =
        std::fs::read(tmp.join(WEIGHTS)).map_err(|e| format!("no folded weights: {e}"))?;
    let (weights_bytes, weights_mtime_ns) =
        mtime_ns(&tmp.join(WEIGHTS)).ok_or("cannot stat the folded weights")?;
    let rec = Record {
        v: VERSION,
        key: key.to_string(),
        identity_key: identity_key.to_string(),
        runtime: runtime.to_string(),
        graph_sha256: sha256_hex(&graph),
        weights_bytes,
        weights_mtime_ns,
        weights_sha256: sha256_hex(&weights),
        probe_sha256: original,
    };
    let json = serde_json::to_vec_pretty(&rec).map_err(|e| e.to_string())?;
    std::fs::write(tmp.join(RECORD), json).map_err(|e| format!("cannot write the record: {e}"))
}

/// Removes the cache folders of other keys (another model or runtime) and temporary
/// folders older than an hour (left by a crashed writer).
fn remove_others(cache_dir: &Path, key: &str) {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let stale_tmp = name.starts_with(".tmp-")
            && e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600);
        let other_key = name.len() == 64 && name != key;
        if stale_tmp || other_key {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Full check for `docfuse verify`: every cache folder in `cache_dir` whose weights'
/// sha256 differs from its record, with the reason. An absent cache has no problems.
pub fn damaged(cache_dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let dir = e.path();
        if e.file_name().to_string_lossy().starts_with('.') || !dir.is_dir() {
            continue;
        }
        let problem = match read_record(&dir) {
            Err(why) => Some(why),
            Ok(rec) => match std::fs::read(dir.join(WEIGHTS)) {
                Err(e) => Some(format!("no weights: {e}")),
                Ok(w) if sha256_hex(&w) != rec.weights_sha256 => {
                    Some("the weights' sha256 differs from the record".into())
                }
                Ok(_) => match std::fs::read(dir.join(GRAPH)) {
                    Ok(g) if sha256_hex(&g) == rec.graph_sha256 => None,
                    _ => Some("the graph is missing or its sha256 differs".into()),
                },
            },
        };
        if let Some(p) = problem {
            out.push((dir, p));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Folds by copying fixed bytes; probes give fixed hashes.
    struct Fake {
        original: &'static str,
        folded: &'static str,
        folds: Cell<u32>,
    }

    impl Folder for Fake {
        fn fold(&self, dir: &Path) -> Result<(), String> {
            self.folds.set(self.folds.get() + 1);
            std::fs::write(dir.join(GRAPH), b"graph").map_err(|e| e.to_string())?;
            std::fs::write(dir.join(WEIGHTS), vec![7u8; 4096]).map_err(|e| e.to_string())
        }
        fn probe_folded(&self, _: &Path) -> Result<String, String> {
            Ok(self.folded.into())
        }
        fn probe_original(&self) -> Result<String, String> {
            Ok(self.original.into())
        }
    }

    fn fake(original: &'static str, folded: &'static str) -> Fake {
        Fake {
            original,
            folded,
            folds: Cell::new(0),
        }
    }

    #[test]
    fn written_once_then_opened_with_the_original_probe() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort 1.31");
        let f = fake("p1", "p1");
        assert_eq!(write(d.path(), &k, "identity", "ort 1.31", &f), Ok(true));
        assert_eq!(write(d.path(), &k, "identity", "ort 1.31", &f), Ok(false));
        assert_eq!(f.folds.get(), 1);
        let opened = open(d.path(), &k).unwrap();
        assert_eq!(
            (opened.graph.as_slice(), opened.probe_sha256.as_str()),
            (&b"graph"[..], "p1")
        );
        assert!(damaged(d.path()).is_empty());
        // only the cache folder is left
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![k]);
    }

    #[test]
    fn a_folded_model_that_embeds_differently_is_never_cached() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort");
        let e = write(d.path(), &k, "identity", "ort", &fake("p1", "p2")).unwrap_err();
        assert!(e.contains("differently"), "{e}");
        assert!(open(d.path(), &k).is_err());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn changed_files_or_another_key_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort");
        write(d.path(), &k, "identity", "ort", &fake("p", "p")).unwrap();
        assert!(open(d.path(), &key("identity", "ort 2")).is_err());
        assert!(open(d.path(), &key("other identity", "ort")).is_err());
        // the weights grow: size differs
        let w = d.path().join(&k).join(WEIGHTS);
        std::fs::write(&w, vec![7u8; 4097]).unwrap();
        assert!(open(d.path(), &k).unwrap_err().contains("size or mtime"));
        assert_eq!(damaged(d.path()).len(), 1);
        // a rewritten graph
        let d2 = tempfile::tempdir().unwrap();
        write(d2.path(), &k, "identity", "ort", &fake("p", "p")).unwrap();
        std::fs::write(d2.path().join(&k).join(GRAPH), b"graph!").unwrap();
        assert!(open(d2.path(), &k).unwrap_err().contains("graph"));
    }

    #[test]
    fn a_new_key_replaces_the_old_folder() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (key("id-a", "ort"), key("id-b", "ort"));
        write(d.path(), &a, "id-a", "ort", &fake("p", "p")).unwrap();
        write(d.path(), &b, "id-b", "ort", &fake("p", "p")).unwrap();
        assert!(open(d.path(), &a).is_err());
        assert!(open(d.path(), &b).is_ok());
    }
}
