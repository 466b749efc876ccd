//! A persistent cache of query vectors, so a question asked again (a CLI call per
//! question, a retried request) is answered without loading the embedding model.
//!
//! Each entry is one file under `DIR/query-vectors/`, named by
//! sha256(embedder identity key, query): a JSON header line (format version, the identity
//! key, the query, the dimension and the sha256 of the vector bytes), then the vector as
//! `dim` little-endian f32. A read checks every one of those against the request and the
//! bytes, so a damaged, foreign or truncated entry is never used (it is removed and the
//! query embedded again); a hit returns the very vector the model gave, so the cache
//! never changes a result. Entries are keyed by the embedder identity the index's vectors
//! were made with: a refresh keeps them, another model never sees them.
//!
//! Writing is best effort (a read-only index just does not cache). The folder holds at
//! most [`MAX_ENTRIES`] entries; beyond that the least recently used tenth is removed
//! (a hit refreshes an entry's mtime; files not named like an entry are left alone).
//! The cache holds the questions asked in plain text; `DOCFUSE_QUERY_CACHE=off` turns it
//! off, and deleting the folder clears it.

use crate::hashing::{sha256_hex, Hasher};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Set to `off` (or `0`, `false`, `no`, any case) to neither read nor write the cache.
pub const ENV_QUERY_CACHE: &str = "DOCFUSE_QUERY_CACHE";

/// Folder of the cache inside the index folder.
pub const QUERY_CACHE_DIR: &str = "query-vectors";

/// At most this many cached queries (about 2 KiB each for 384-d vectors: ≤ 8 MiB).
pub const MAX_ENTRIES: usize = 4096;

/// Format of an entry's header.
const VERSION: u32 = 1;

/// Longest query cached, in bytes (longer ones are embedded every time).
const MAX_QUERY_BYTES: usize = 4096;

#[derive(Serialize, Deserialize, PartialEq)]
struct Header {
    v: u32,
    identity_key: String,
    query: String,
    dim: usize,
    sha256: String,
}

/// The query-vector cache of one index folder for one embedder identity.
#[derive(Debug, Clone)]
pub struct QueryCache {
    dir: PathBuf,
    identity_key: String,
    dim: usize,
}

impl QueryCache {
    /// The cache of `index_dir` for vectors of `dim` values made by the embedder whose
    /// identity key is `identity_key`. Touches nothing on disk.
    pub fn new(index_dir: &Path, identity_key: &str, dim: usize) -> Self {
        QueryCache {
            dir: index_dir.join(QUERY_CACHE_DIR),
            identity_key: identity_key.to_string(),
            dim,
        }
    }

    fn enabled() -> bool {
        !crate::config::env_switched_off(ENV_QUERY_CACHE)
    }

    fn path(&self, query: &str) -> PathBuf {
        let mut h = Hasher::new();
        h.part(&self.identity_key).part(query);
        self.dir.join(h.finish())
    }

    /// The cached vector of `query` (`dim` f32, as the model returned it), or `None`
    /// when there is none or the entry does not verify (then it is removed).
    pub fn get(&self, query: &str) -> Option<Vec<f32>> {
        if query.len() > MAX_QUERY_BYTES || !Self::enabled() {
            return None;
        }
        let path = self.path(query);
        let bytes = crate::fsio::read_regular(&path).ok()?;
        let v = self.decode(query, &bytes);
        if v.is_some() {
            tracing::debug!("query vector from the cache");
            // a hit counts as a use: the bound removes the least recently used first
            let _ = std::fs::File::options()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        } else {
            tracing::debug!("removing a query-vector cache entry that does not verify");
            let _ = std::fs::remove_file(&path);
        }
        v
    }

    /// Whether [`QueryCache::get`] would return a vector for `query` now; touches
    /// nothing (no mtime, no removal).
    pub fn holds(&self, query: &str) -> bool {
        query.len() <= MAX_QUERY_BYTES
            && Self::enabled()
            && crate::fsio::read_regular(self.path(query))
                .ok()
                .and_then(|bytes| self.decode(query, &bytes))
                .is_some()
    }

    fn decode(&self, query: &str, bytes: &[u8]) -> Option<Vec<f32>> {
        let nl = bytes.iter().position(|&b| b == b'\n')?;
        let header: Header = serde_json::from_slice(&bytes[..nl]).ok()?;
        let body = &bytes[nl + 1..];
        let expected = Header {
            v: VERSION,
            identity_key: self.identity_key.clone(),
            query: query.to_string(),
            dim: self.dim,
            sha256: sha256_hex(body),
        };
        if header != expected || body.len() != self.dim * 4 {
            return None;
        }
        let v: Vec<f32> = body
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        v.iter().all(|x| x.is_finite()).then_some(v)
    }

    /// Stores `vector` for `query`; failures (read-only disk, full disk) are logged at
    /// debug level and otherwise ignored.
    pub fn put(&self, query: &str, vector: &[f32]) {
        if query.len() > MAX_QUERY_BYTES || vector.len() != self.dim || !Self::enabled() {
            return;
        }
        if let Err(e) = self.write(query, vector) {
            tracing::debug!("query-vector cache not written: {e}");
        }
    }

    fn write(&self, query: &str, vector: &[f32]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let body: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        let header = Header {
            v: VERSION,
            identity_key: self.identity_key.clone(),
            query: query.to_string(),
            dim: self.dim,
            sha256: sha256_hex(&body),
        };
        let mut bytes = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
        bytes.push(b'\n');
        bytes.extend_from_slice(&body);
        // a temp name no other writer (process or thread) uses, then an atomic rename
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let tmp = self.dir.join(format!(".tmp.{}.{seq}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        if let Err(e) = std::fs::rename(&tmp, self.path(query)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        // the bound is checked on a process's first write and every 64th after it (a
        // listing of the folder costs more than the write)
        if seq.is_multiple_of(64) {
            self.trim(MAX_ENTRIES);
        }
        Ok(())
    }

    /// Keeps at most `max` entries: beyond that, removes the least recently used tenth
    /// (and at least enough to get back to `max`).
    fn trim(&self, max: usize) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(std::time::SystemTime, PathBuf)> = rd
            .filter_map(Result::ok)
            .filter(|e| is_entry_name(&e.file_name().to_string_lossy()))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if entries.len() <= max {
            return;
        }
        entries.sort();
        let remove = (entries.len() - max).max(max / 10);
        for (_, p) in entries.into_iter().take(remove) {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// An entry's file name: 64 lowercase hex digits (other files in the folder are left
/// alone).
fn is_entry_name(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path) -> QueryCache {
        QueryCache::new(dir, "identity-a", 3)
    }

    #[test]
    fn a_stored_vector_comes_back_bit_for_bit_for_the_same_query_and_identity_only() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        assert_eq!(c.get("how do I publish"), None);
        assert!(!c.holds("how do I publish"));
        let v = [0.25f32, -1.5e-7, 0.333_333_34];
        c.put("how do I publish", &v);
        assert!(c.holds("how do I publish"));
        assert!(!c.holds("how do I publish?"));
        assert!(!QueryCache::new(d.path(), "identity-b", 3).holds("how do I publish"));
        let got = c.get("how do I publish").unwrap();
        assert_eq!(
            got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(c.get("how do I publish?"), None);
        assert_eq!(
            QueryCache::new(d.path(), "identity-b", 3).get("how do I publish"),
            None
        );
        assert_eq!(
            QueryCache::new(d.path(), "identity-a", 4).get("how do I publish"),
            None
        );
    }

    #[test]
    fn a_damaged_entry_is_never_used_and_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        c.put("q", &[1.0, 2.0, 3.0]);
        let path = c.path("q");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).unwrap();
        assert!(!c.holds("q"));
        assert!(path.exists(), "holds removes nothing");
        assert_eq!(c.get("q"), None);
        assert!(!path.exists());
        // truncated, and a header naming another query under this file name
        c.put("q", &[1.0, 2.0, 3.0]);
        std::fs::write(&path, &std::fs::read(&path).unwrap()[..20]).unwrap();
        assert_eq!(c.get("q"), None);
        c.put("other", &[1.0, 2.0, 3.0]);
        std::fs::copy(c.path("other"), c.path("q")).unwrap();
        assert_eq!(c.get("q"), None);
        assert_eq!(c.get("other"), Some(vec![1.0, 2.0, 3.0]));
    }

    #[test]
    fn the_folder_is_trimmed_to_the_bound_least_recently_used_first() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        for i in 0..12 {
            c.write(&format!("q{i}"), &[i as f32, 0.0, 0.0]).unwrap();
            let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i);
            let f = std::fs::File::options()
                .write(true)
                .open(c.path(&format!("q{i}")))
                .unwrap();
            f.set_modified(t).unwrap();
        }
        // q0 is the oldest written but used now; a file of the user's stays
        assert!(c.get("q0").is_some());
        std::fs::write(d.path().join(QUERY_CACHE_DIR).join("README.txt"), b"mine").unwrap();
        c.trim(10);
        let left = std::fs::read_dir(d.path().join(QUERY_CACHE_DIR))
            .unwrap()
            .count();
        assert_eq!(left, 11);
        assert_eq!(c.get("q1"), None);
        assert_eq!(c.get("q2"), None);
        assert_eq!(c.get("q0"), Some(vec![0.0, 0.0, 0.0]));
        assert_eq!(c.get("q11"), Some(vec![11.0, 0.0, 0.0]));
    }

    #[test]
    fn a_read_only_folder_just_does_not_cache() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("no").join("such");
        std::fs::write(d.path().join("no"), b"a file, not a folder").unwrap();
        let c = cache(&missing);
        c.put("q", &[1.0, 2.0, 3.0]);
        assert_eq!(c.get("q"), None);
    }
}
