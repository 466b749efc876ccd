//! The folded-model cache: the embedding model as ONNX Runtime's optimiser leaves it for
//! this CPU (every `DequantizeLinear` of the int8 weights constant-folded into f32
//! weights, nodes fused, and on x86 the weights of its matrix products pre-packed), kept
//! next to an index so that creating an ONNX session neither folds nor packs.
//!
//! Why: folding the int8 all-MiniLM-L6-v2 takes about 250 ms of every session creation
//! (ONNX Runtime's `ConstantFolding`), which is most of a one-off `docfuse search` with
//! vectors; packing the folded weights for the CPU's matrix kernels takes 10–30 ms more
//! (Python `onnxruntime` 1.31.1, 2026-12-04, depending on the machine's load). A session
//! created from the cached graph, its weights and packed weights memory-mapped from
//! `weights.bin`, computes bit-identical vectors.
//!
//! Layout: `DIR/<key>/` holds `graph.onnx` (the optimised graph, about 55 KB),
//! `weights.bin` (its weights and packed weights, external data, about 130 MB; 90 MB
//! without packed weights) and
//! `folded.json` (the [`Record`]). The key is sha256 of the embedder identity key, ONNX
//! Runtime's build string, the CPU's features ([`cpu_fingerprint`]: packed layouts and
//! fused kernels are chosen per instruction set) and [`VERSION`]: another model,
//! tokenizer, runtime or CPU never sees it. `DIR` is one folder per user
//! ([`cache_dir`]: `~/.cache/docfuse/model-cache`), so one copy serves every index of a
//! model; folders of other keys stay there (another index may use them). A folder is
//! written under a temporary name, synced and renamed by an index's writer; when two
//! writers race, the first whole folder stays.
//!
//! Verification, on every session made from it: the record names the same key, the graph
//! has the sha256 recorded and the weights the BLAKE3 (on a second thread while the
//! session is made; hashed in full only when their stamp — inode, size, times — differs
//! from the one remembered with the digest, [`crate::stamp`]), and the
//! session embeds a fixed probe text to the very vector the original model gave when the
//! cache was written (bit for bit). Anything
//! else and the session is made from the original model, as without a cache, and the
//! folder is removed (the next refresh writes it again). A session keeps the weights
//! mapped for as long as it lives, and they are checked when it is made: docfuse never
//! rewrites `weights.bin` in place (a new folder is renamed into place), and a tool that
//! rewrites it in place under a running server is not supported.

use crate::fsio::{open_regular, read_regular};
use crate::hashing::{blake3_reader, sha256_hex, sha256_reader, Hasher};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Whether the cache also holds the weights ONNX Runtime pre-packs for its matrix
/// kernels (x86 only). ONNX Runtime uses packed weights read from a model file as they are,
/// without checking them, so their layout must be the one this CPU's kernels expect. On
/// x86 the SGEMM kernels' packed layout is fixed and the kernel choice is in
/// [`cpu_fingerprint`]; on ARM, MLAS may pack through KleidiAI with a layout that
/// depends on SME and its vector length, which the fingerprint does not capture, so
/// there the cache holds the folded model only and sessions pack as they start.
pub const PREPACKED_WEIGHTS: bool = cfg!(any(target_arch = "x86", target_arch = "x86_64"));

/// Format of the cache; part of its key. 2: optimised at the sessions' level with
/// pre-packed weights (1: constant folding only).
pub const VERSION: u32 = 2;

/// Set to `off` (or `0`, `false`, `no`) to neither use nor write the folded-model cache.
pub const ENV_MODEL_CACHE: &str = "DOCFUSE_MODEL_CACHE";

/// The folded graph's file name.
pub const GRAPH: &str = "graph.onnx";
/// The folded weights' file name (the graph's external data).
pub const WEIGHTS: &str = "weights.bin";
/// The record's file name.
pub const RECORD: &str = "folded.json";
/// Prefix of a folder being written.
const TMP_PREFIX: &str = ".tmp-";

/// Embedded to check that a session made from the cache computes what the original model
/// computes: words, sub-words, digits, punctuation, accents and code.
pub const PROBE: &str = "docfuse folded-model probe: Configure `cargo build --release` \
    with [profile.release] lto = true; naïve café, 0x1F 3.14 — Grüße! fn main() { }";

/// What a cache folder holds, as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// [`VERSION`].
    pub v: u32,
    /// Cache key (the folder's name).
    pub key: String,
    /// The embedder identity key the model was folded for (for people reading it).
    pub identity_key: String,
    /// ONNX Runtime's build string that folded it (for people reading it).
    pub runtime: String,
    /// sha256 of `graph.onnx`.
    pub graph_sha256: String,
    /// Size of `weights.bin` in bytes.
    pub weights_bytes: u64,
    /// BLAKE3 of `weights.bin` (checked on every session: fast enough to run beside
    /// its creation).
    pub weights_blake3: String,
    /// Modification time of `weights.bin` when last hashed in full, ns since the Unix
    /// epoch: a writer hashes the weights again only when it changed.
    #[serde(default)]
    pub weights_mtime_ns: u128,
    /// sha256 of the original model's vector of [`PROBE`] (`dim` f32, little-endian).
    pub probe_sha256: String,
    /// The CPU it was made on ([`cpu_fingerprint`], for people reading it).
    #[serde(default)]
    pub cpu: String,
}

/// A cached folded model whose record and graph check out: what a session needs, and
/// what the weights and the session must still prove ([`check_weights`], the probe).
#[derive(Debug)]
pub struct Folded {
    /// Its folder (the external data's folder for the session).
    pub dir: PathBuf,
    /// The folded graph's bytes.
    pub graph: Vec<u8>,
    /// Its record (what the weights must hash to, what a session must give for
    /// [`PROBE`]).
    pub record: Record,
}

/// Name of the cache folder (in the user's cache folder; in an index folder before
/// version 0.1's per-user cache, or when the user has no cache folder).
pub const DIR_NAME: &str = "model-cache";

/// The folded-model cache folder for the index folder `index_dir`: the user's
/// ([`crate::fsio::user_cache_dir`]`/model-cache`), shared by every index; the index's own
/// `model-cache` only when there is no user cache folder (no `HOME` nor
/// `XDG_CACHE_HOME`).
pub fn cache_dir(index_dir: &Path) -> PathBuf {
    crate::fsio::user_cache_dir()
        .map(|d| d.join(DIR_NAME))
        .unwrap_or_else(|| index_dir.join(DIR_NAME))
}

/// A temporary folder older than this is a dead writer's, removed by the next write
/// (a live one finishes in seconds).
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// A folder of another key no session was made from for this long (its record's mtime,
/// [`mark_used`]) is removed by the next write: another model, ONNX Runtime or CPU that
/// no index uses any more.
const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Records that a session was made from the folder `dir` now (its record's mtime), so
/// that writes for other keys keep it ([`UNUSED_FOR`]). Failures are ignored (a
/// read-only cache is only never pruned).
pub fn mark_used(dir: &Path) {
    if let Ok(f) = std::fs::File::open(dir.join(RECORD)) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Whether the file or folder at `path` was last modified over `limit` ago.
fn older_than(path: &Path, limit: std::time::Duration) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > limit)
}

/// Whether the cache is on (`DOCFUSE_MODEL_CACHE` is not `off`).
pub fn enabled() -> bool {
    !crate::config::env_switched_off(ENV_MODEL_CACHE)
}

/// The cache key of a model on this CPU: [`key_on`] with [`cpu_fingerprint`].
pub fn key(identity_key: &str, runtime: &str) -> String {
    key_on(identity_key, runtime, &cpu_fingerprint())
}

/// The cache key of a model: sha256(identity key, runtime build string, CPU
/// fingerprint, [`VERSION`]).
pub fn key_on(identity_key: &str, runtime: &str, cpu: &str) -> String {
    let mut h = Hasher::new();
    h.part(identity_key)
        .part(runtime)
        .part(cpu)
        .part(VERSION.to_le_bytes());
    h.finish()
}

/// The instruction-set features ONNX Runtime's CPU kernels (MLAS, chosen by CPUID in
/// `onnxruntime/core/mlas/lib/platform.cpp`) select their code by, as detected on this
/// CPU (`avx2,fma,avx512f,…`), after the architecture: a cache written on one CPU is never
/// used on another kind. The probe would catch a session that computes differently; the
/// key keeps it from being made. Packed weights are saved only where this list covers
/// what their layout depends on ([`PREPACKED_WEIGHTS`]).
pub fn cpu_fingerprint() -> String {
    let mut features: Vec<&str> = Vec::new();
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        macro_rules! detect {
            ($($f:tt),*) => {
                $(if std::arch::is_x86_feature_detected!($f) { features.push($f); })*
            };
        }
        detect!(
            "sse4.1",
            "sse4.2",
            "avx",
            "avx2",
            "fma",
            "f16c",
            "avx512f",
            "avx512bw",
            "avx512dq",
            "avx512vl",
            "avx512vnni",
            "avx512bf16",
            "avx512fp16",
            "avxvnni"
        );
    }
    #[cfg(target_arch = "aarch64")]
    {
        macro_rules! detect {
            ($($f:tt),*) => {
                $(if std::arch::is_aarch64_feature_detected!($f) { features.push($f); })*
            };
        }
        detect!("neon", "dotprod", "fp16", "i8mm", "bf16", "sve", "sve2");
    }
    format!("{}:{}", std::env::consts::ARCH, features.join(","))
}

/// sha256 of a vector's f32 little-endian bytes.
pub fn vector_sha256(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    sha256_hex(&bytes)
}

fn read_record(folder: &Path) -> Result<Record, String> {
    let path = folder.join(RECORD);
    let bytes =
        read_regular(&path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("`{}` is not a record: {e}", path.display()))
}

/// The cached folded model for `key` in `cache_dir`: `Ok(None)` when there is none,
/// `Err(why)` when its folder is there but its record, graph or weights' size do not
/// check out (then it should be [`discard`]ed). The weights' hash and the probe are the
/// caller's to check: they cost a read of 130 MB and a session.
///
/// # Errors
/// Why the folder cannot be used.
pub fn open(cache_dir: &Path, key: &str) -> Result<Option<Folded>, String> {
    let dir = cache_dir.join(key);
    if !dir.exists() {
        return Ok(None);
    }
    let rec = read_record(&dir)?;
    if rec.v != VERSION || rec.key != key {
        return Err("its record is of another model, runtime or format".into());
    }
    let graph = read_regular(dir.join(GRAPH)).map_err(|e| format!("no graph: {e}"))?;
    if sha256_hex(&graph) != rec.graph_sha256 {
        return Err("the graph's sha256 differs from the record".into());
    }
    match std::fs::metadata(dir.join(WEIGHTS)) {
        Err(e) => return Err(format!("cannot read the weights: {e}")),
        Ok(m) if !m.is_file() => return Err("the weights are not a regular file".into()),
        Ok(m) if m.len() != rec.weights_bytes => {
            return Err("the weights' size differs from the record".into())
        }
        Ok(_) => {}
    }
    Ok(Some(Folded {
        dir,
        graph,
        record: rec,
    }))
}

/// Hashes the weights of `f` in full against the record.
///
/// # Errors
/// Why they are not the weights recorded.
pub fn check_weights(f: &Folded) -> Result<(), String> {
    match open_regular(f.dir.join(WEIGHTS)).and_then(blake3_reader) {
        Ok(h) if h == f.record.weights_blake3 => Ok(()),
        Ok(_) => Err("the weights' BLAKE3 differs from the record".into()),
        Err(e) => Err(format!("cannot read the weights: {e}")),
    }
}

/// As [`check_weights`], on a session's path: the weights' BLAKE3 is remembered with
/// their stamp in the user's cache folder ([`crate::stamp`]), so they are hashed in full
/// only when they changed (or were copied, or no stamp can be kept). `verify` and the
/// writer hash in full ([`check_weights`]).
///
/// # Errors
/// Why they are not the weights recorded.
pub fn check_weights_stamped(f: &Folded) -> Result<(), String> {
    let path = f.dir.join(WEIGHTS);
    let full = |p: &Path| open_regular(p).and_then(blake3_reader);
    let digest = match crate::stamp::user_memo(&path, "blake3") {
        Some(memo) => crate::stamp::digest(&path, &memo, "blake3", full),
        None => full(&path),
    };
    match digest {
        Ok(h) if h == f.record.weights_blake3 => Ok(()),
        Ok(_) => Err("the weights' BLAKE3 differs from the record".into()),
        Err(e) => Err(format!("cannot read the weights: {e}")),
    }
}

/// Removes a cache folder that did not check out, or a leftover.
///
/// # Errors
/// Why it could not be removed (a read-only index keeps it, and its sessions keep coming
/// from the original model); an absent folder is no error.
pub fn discard(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// How a model is folded and probed, supplied by the embedder (this module does files).
pub trait Folder {
    /// Writes the folded graph to `dir/GRAPH` and its weights to `dir/WEIGHTS`.
    ///
    /// # Errors
    /// Why the model could not be folded or written.
    fn fold(&self, dir: &Path) -> Result<(), String>;
    /// sha256 of the vector of [`PROBE`] from a session made from the folded model in
    /// `dir` ([`vector_sha256`]).
    ///
    /// # Errors
    /// Why no session could be made or the probe not embedded.
    fn probe_folded(&self, dir: &Path) -> Result<String, String>;
    /// sha256 of the vector of [`PROBE`] from the original model.
    ///
    /// # Errors
    /// Why no session could be made or the probe not embedded.
    fn probe_original(&self) -> Result<String, String>;
}

/// Writes the folded model for `key` into `cache_dir` unless one whose record, graph and
/// weights check out is there (the weights are hashed in full only when their mtime is
/// not the one recorded): folds into a temporary folder, checks that the
/// folded model embeds the probe to the original's vector bit for bit, records the
/// hashes, syncs and renames the folder into place, and removes the temporary folders of
/// interrupted writes (over an hour old). `Ok(true)` when written, `Ok(false)` when
/// already there (also when another writer placed a whole one meanwhile). Call it as an
/// index's writer (under its writer lock); writers of other indexes may run at once.
///
/// # Errors
/// Why it was not written (its temporary folder is removed): a write failure, or the
/// folded model computes other vectors than the original (then it must never be used).
pub fn write(
    cache_dir: &Path,
    key: &str,
    identity_key: &str,
    runtime: &str,
    folder: &dyn Folder,
) -> Result<bool, String> {
    sweep(cache_dir, key);
    let whole = || matches!(open(cache_dir, key), Ok(Some(f)) if still_whole(&f));
    if whole() {
        return Ok(false);
    }
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| format!("cannot create `{}`: {e}", cache_dir.display()))?;
    let tmp = cache_dir.join(format!(
        "{TMP_PREFIX}{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    let dest = cache_dir.join(key);
    let result = fill(&tmp, key, identity_key, runtime, folder).and_then(|()| {
        // another writer may have placed a whole folder while this one folded: the
        // rename fails on a folder that is there, which is kept when whole
        if std::fs::rename(&tmp, &dest).is_ok() {
            return Ok(true);
        }
        if whole() {
            return Ok(false);
        }
        // a damaged one is moved aside first (a reader may hold its files open)
        let aside = cache_dir.join(format!("{TMP_PREFIX}damaged-{}", std::process::id()));
        let _ = std::fs::rename(&dest, &aside);
        let _ = discard(&aside);
        std::fs::rename(&tmp, &dest)
            .map(|()| true)
            .or_else(|e| match whole() {
                true => Ok(false),
                false => Err(format!(
                    "cannot rename `{}` to `{}`: {e}",
                    tmp.display(),
                    dest.display()
                )),
            })
    });
    if !matches!(result, Ok(true)) {
        let _ = discard(&tmp);
    }
    let written = result?;
    crate::store::sync_dir(cache_dir);
    Ok(written)
}

/// Whether a cache folder that opened is still whole: its weights' mtime is the one
/// recorded, or they hash to the record in full (then the new mtime is recorded, e.g.
/// after the index was copied).
fn still_whole(f: &Folded) -> bool {
    let mtime = mtime_ns(&f.dir.join(WEIGHTS));
    if mtime == Some(f.record.weights_mtime_ns) {
        return true;
    }
    if check_weights(f).is_err() {
        return false;
    }
    let record = Record {
        weights_mtime_ns: mtime.unwrap_or(0),
        ..f.record.clone()
    };
    if let Ok(json) = serde_json::to_vec_pretty(&record) {
        let _ = crate::store::write_atomic(&f.dir.join(RECORD), &json);
    }
    true
}

fn mtime_ns(path: &Path) -> Option<u128> {
    let t = std::fs::metadata(path).ok()?.modified().ok()?;
    Some(t.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_nanos())
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
    let (graph, weights) = (tmp.join(GRAPH), tmp.join(WEIGHTS));
    let hash = |p: &Path, with: fn(std::fs::File) -> std::io::Result<String>| {
        open_regular(p)
            .and_then(with)
            .map_err(|e| format!("cannot read `{}`: {e}", p.display()))
    };
    let rec = Record {
        v: VERSION,
        key: key.to_string(),
        identity_key: identity_key.to_string(),
        runtime: runtime.to_string(),
        graph_sha256: hash(&graph, sha256_reader)?,
        weights_bytes: std::fs::metadata(&weights).map_or(0, |m| m.len()),
        weights_blake3: hash(&weights, blake3_reader)?,
        weights_mtime_ns: mtime_ns(&weights).unwrap_or(0),
        probe_sha256: original,
        cpu: cpu_fingerprint(),
    };
    let json = serde_json::to_vec_pretty(&rec).map_err(|e| e.to_string())?;
    let record = tmp.join(RECORD);
    std::fs::write(&record, json)
        .map_err(|e| format!("cannot write `{}`: {e}", record.display()))?;
    for f in [&graph, &weights, &record] {
        std::fs::File::open(f)
            .and_then(|f| f.sync_all())
            .map_err(|e| format!("cannot sync `{}`: {e}", f.display()))?;
    }
    crate::store::sync_dir(tmp);
    Ok(())
}

/// Removes what no index needs from the cache folder before writing `key`: temporary
/// folders of writes interrupted over [`STALE_TMP`] ago (younger ones may be another
/// index's writer at work), folders of another cache format, and folders of other keys
/// no session was made from for [`UNUSED_FOR`].
fn sweep(cache_dir: &Path, key: &str) {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let drop = if name.starts_with(TMP_PREFIX) {
            older_than(&path, STALE_TMP)
        } else {
            name.len() == 64
                && name != key
                && (other_format(&path).is_some() || older_than(&path.join(RECORD), UNUSED_FOR))
        };
        if drop {
            if let Err(err) = discard(&e.path()) {
                tracing::warn!("cannot remove `{}`: {err}", e.path().display());
            }
        }
    }
}

/// Full check for `docfuse verify`: each folder of `cache_dir` that does not check out
/// (record, graph's sha256 and weights' BLAKE3), of another cache format, and leftovers
/// of interrupted writes, with the reason. An absent cache has no problems.
pub fn damaged(cache_dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let problem = if name.starts_with(TMP_PREFIX) {
            // a younger one may be a write under way (another index's writer)
            older_than(&e.path(), STALE_TMP).then(|| {
                "left by an interrupted write over an hour ago; the next `docfuse refresh` removes it".to_string()
            })
        } else if let Some(v) = other_format(&e.path()) {
            Some(format!("written by another docfuse (cache format {v}, this one writes {VERSION}); searches do not use it, and the next `docfuse refresh` removes it"))
        } else {
            check_folder(cache_dir, &name).err().map(|why| {
                format!("{why}; searches do not use it (the first one removes it when it may), and `docfuse refresh --force` writes it again")
            })
        };
        if let Some(p) = problem {
            out.push((e.path(), p));
        }
    }
    out
}

/// The format of a cache folder whose record names another format than [`VERSION`].
fn other_format(folder: &Path) -> Option<u64> {
    let bytes = read_regular(folder.join(RECORD)).ok()?;
    let v = serde_json::from_slice::<serde_json::Value>(&bytes).ok()?["v"].as_u64()?;
    (v != u64::from(VERSION)).then_some(v)
}

fn check_folder(cache_dir: &Path, key: &str) -> Result<(), String> {
    let f = open(cache_dir, key)?.ok_or("gone")?;
    check_weights(&f)
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

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn written_once_then_opened_and_checked_in_full() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort 1.31");
        let f = fake("p1", "p1");
        assert_eq!(write(d.path(), &k, "identity", "ort 1.31", &f), Ok(true));
        assert_eq!(write(d.path(), &k, "identity", "ort 1.31", &f), Ok(false));
        assert_eq!(f.folds.get(), 1);
        let opened = open(d.path(), &k).unwrap().unwrap();
        assert_eq!(opened.graph, b"graph");
        assert_eq!(opened.record.probe_sha256, "p1");
        assert_eq!(check_weights(&opened), Ok(()));
        assert!(damaged(d.path()).is_empty());
        assert_eq!(names(d.path()), vec![k]);
        assert!(open(d.path(), &key("identity", "ort 2")).unwrap().is_none());
    }

    #[test]
    fn another_cpu_kind_gets_another_key() {
        let cpu = cpu_fingerprint();
        assert!(
            cpu.starts_with(&format!("{}:", std::env::consts::ARCH)),
            "{cpu}"
        );
        assert_eq!(cpu, cpu_fingerprint());
        assert_eq!(key("identity", "ort"), key_on("identity", "ort", &cpu));
        assert_ne!(
            key_on("identity", "ort", "x86_64:avx2,fma"),
            key_on("identity", "ort", "x86_64:avx2,fma,avx512f")
        );
    }

    #[test]
    fn verify_names_a_folder_of_another_cache_format() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("a".repeat(64));
        std::fs::create_dir_all(&old).unwrap();
        std::fs::write(old.join(RECORD), br#"{"v": 1, "key": "x"}"#).unwrap();
        let found = damaged(d.path());
        assert_eq!(found.len(), 1);
        assert!(found[0].1.contains("cache format 1"), "{}", found[0].1);
        assert!(found[0].1.contains("removes it"), "{}", found[0].1);
        // and the next write (of this format) removes it
        write(d.path(), &key("id", "ort"), "id", "ort", &fake("p", "p")).unwrap();
        assert!(!old.exists());
    }

    #[test]
    fn a_folded_model_that_embeds_differently_is_never_cached() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort");
        let e = write(d.path(), &k, "identity", "ort", &fake("p1", "p2")).unwrap_err();
        assert!(e.contains("differently"), "{e}");
        assert!(open(d.path(), &k).unwrap().is_none());
        assert!(names(d.path()).is_empty());
    }

    #[test]
    fn changed_weights_graph_or_record_do_not_check_out() {
        let d = tempfile::tempdir().unwrap();
        let k = key("identity", "ort");
        write(d.path(), &k, "identity", "ort", &fake("p", "p")).unwrap();
        let w = d.path().join(&k).join(WEIGHTS);
        // same size, one byte changed: only the full hash sees it
        let mut bytes = std::fs::read(&w).unwrap();
        bytes[2048] ^= 1;
        std::fs::write(&w, &bytes).unwrap();
        let f = open(d.path(), &k).unwrap().unwrap();
        assert!(check_weights(&f).unwrap_err().contains("BLAKE3"));
        assert_eq!(damaged(d.path()).len(), 1);
        // the writer sees the new mtime, hashes, and writes it again
        let folds = fake("p", "p");
        assert_eq!(write(d.path(), &k, "identity", "ort", &folds), Ok(true));
        assert!(damaged(d.path()).is_empty());
        // the same bytes under a new mtime (a copied index): hashed once, kept, recorded
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&w)
            .unwrap()
            .set_modified(t)
            .unwrap();
        assert_eq!(write(d.path(), &k, "identity", "ort", &folds), Ok(false));
        assert_eq!(folds.folds.get(), 1, "not folded again");
        let rec = read_record(&d.path().join(&k)).unwrap();
        assert_eq!(Some(rec.weights_mtime_ns), mtime_ns(&w));
        // another size
        std::fs::write(&w, vec![7u8; 4097]).unwrap();
        assert!(open(d.path(), &k).unwrap_err().contains("size"));
        // a rewritten graph
        let d2 = tempfile::tempdir().unwrap();
        write(d2.path(), &k, "identity", "ort", &fake("p", "p")).unwrap();
        std::fs::write(d2.path().join(&k).join(GRAPH), b"graph!").unwrap();
        assert!(open(d2.path(), &k).unwrap_err().contains("graph"));
        // a FIFO in place of the graph or the record is refused, never waited on
        #[cfg(unix)]
        for name in [GRAPH, RECORD] {
            let d3 = tempfile::tempdir().unwrap();
            write(d3.path(), &k, "identity", "ort", &fake("p", "p")).unwrap();
            let p = d3.path().join(&k).join(name);
            std::fs::remove_file(&p).unwrap();
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            assert!(open(d3.path(), &k)
                .unwrap_err()
                .contains("not a regular file"));
        }
        // a whole folder under another key's name: its record says so
        let other = key("identity", "ort 2");
        std::fs::rename(d2.path().join(&k), d2.path().join(&other)).unwrap();
        assert!(open(d2.path(), &other).unwrap_err().contains("another"));
    }

    #[test]
    fn other_keys_stay_and_only_stale_interrupted_writes_are_swept() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (key("id-a", "ort"), key("id-b", "ort"));
        write(d.path(), &a, "id-a", "ort", &fake("p", "p")).unwrap();
        let tmp = d.path().join(".tmp-1-2");
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join(WEIGHTS), b"partial").unwrap();
        // a fresh one may be a write under way: verify does not call it damaged
        assert_eq!(damaged(d.path()), vec![]);
        // written again under the same key: nothing to write; the fresh temporary folder
        // may be another index's writer at work, so it stays
        assert_eq!(
            write(d.path(), &a, "id-a", "ort", &fake("p", "p")),
            Ok(false)
        );
        assert_eq!(names(d.path()), vec![".tmp-1-2".to_string(), a.clone()]);
        // an hour old: a dead writer's, named by verify and swept by the next write
        let old = std::time::SystemTime::now() - 2 * STALE_TMP;
        std::fs::File::open(&tmp)
            .unwrap()
            .set_modified(old)
            .unwrap();
        let found = damaged(d.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, tmp);
        assert!(
            found[0].1.starts_with("left by an interrupted write"),
            "{}",
            found[0].1
        );
        // another model's folder is written beside the first, which stays (one cache per
        // user serves indexes of both)
        write(d.path(), &b, "id-b", "ort", &fake("p", "p")).unwrap();
        let mut both = vec![a.clone(), b.clone()];
        both.sort();
        assert_eq!(names(d.path()), both);
        // no session made from `a` for a month: the next write of another key removes it,
        // while a folder just used stays
        let month_ago = std::time::SystemTime::now() - UNUSED_FOR - STALE_TMP;
        let record = std::fs::File::open(d.path().join(&a).join(RECORD)).unwrap();
        record.set_modified(month_ago).unwrap();
        mark_used(&d.path().join(&b));
        let c = key("id-c", "ort");
        write(d.path(), &c, "id-c", "ort", &fake("p", "p")).unwrap();
        let mut left = vec![b, c];
        left.sort();
        assert_eq!(names(d.path()), left);
    }
}
