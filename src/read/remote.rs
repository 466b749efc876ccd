//! A vector side held outside the generation's files: a store that searches the
//! vectors itself (PostgreSQL + pgvector) and answers a query's nearest chunks, their
//! cosines and the query's cosine statistics. An index folder is attached to one in this
//! process ([`attach`]); every [`super::DocIndex`] opened on that folder afterwards —
//! also each later generation a server switches to — answers its vector side through
//! it. While the store cannot answer, `auto` searches are lexical (the reason in
//! `degraded`) and explicit `vector`/`hybrid` searches fail with it.

use super::opened::OpenGeneration;
use crate::vector::CosineStats;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The embedder identity recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct EmbedderInfo {
    pub model: String,
    pub identity_key: String,
    pub dim: usize,
}

/// One query's answer from a remote vector side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteAnswer {
    /// The nearest chunks as `(ordinal, cosine)`, best first (ties by ordinal).
    pub top: Vec<(u64, f32)>,
    /// The query's cosine statistics over every chunk with a vector.
    pub stats: CosineStats,
    /// The cosine of every chunk of `top` and of the asked ordinals that have a vector;
    /// a chunk absent here has no vector.
    pub cosines: HashMap<u64, f32>,
}

/// A vector store answering for an index folder whose generation holds no vectors.
pub trait RemoteVectors: Send + Sync {
    /// The embedder the store's vectors come from (a query is embedded with the
    /// default embedder, which must have the same identity key).
    ///
    /// # Errors
    /// Why vector search is not available now: the store holds no vectors, or it failed
    /// moments ago (it is asked again a few seconds later).
    fn embedder(&self) -> Result<EmbedderInfo, String>;

    /// The `k` chunks of `index` nearest to `query` (`[dim]` f32, L2-normalised, made
    /// by the embedder whose identity key is `identity_key`), at `ef_search`
    /// candidates, with the cosines of the chunks `also` and the statistics.
    ///
    /// # Errors
    /// Why the store cannot answer now (unreachable, or its vectors now come from
    /// another embedder): `auto` searches answer lexically with it as `degraded`.
    fn search(
        &self,
        index: &OpenGeneration,
        query: &[f32],
        identity_key: &str,
        k: usize,
        ef_search: usize,
        also: &[u64],
    ) -> Result<RemoteAnswer, String>;

    /// Chunks with a vector and chunks pending one, as of the store's last sync.
    fn counts(&self) -> (u64, u64);

    /// The store's own number of the generation the folder holds (a database counts
    /// its publishes; the folder's manifest counts its own builds).
    fn generation(&self) -> u64;

    /// The store's generation that the folder generation sealed `seal` holds, when the
    /// store's last sync made or kept that folder generation (`None` otherwise: a folder
    /// generation published before or after that sync names its own in its manifest).
    fn generation_of(&self, seal: &str) -> Option<u64>;

    /// False when the store's index has no vectors at all (built without them): its
    /// searches are lexical by choice.
    fn has_vectors(&self) -> bool;

    /// Asks the store whether it answers now (a round trip, bounded to a few seconds).
    ///
    /// # Errors
    /// Why not.
    fn health(&self) -> Result<(), String>;

    /// Where the vectors are, for messages (`PostgreSQL `postgres://…` (schema docfuse)`).
    fn describe(&self) -> String;
}

type Attached = Mutex<HashMap<PathBuf, Arc<dyn RemoteVectors>>>;

fn attached() -> &'static Attached {
    static ATTACHED: OnceLock<Attached> = OnceLock::new();
    ATTACHED.get_or_init(Default::default)
}

fn key(dir: &Path) -> PathBuf {
    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// Makes `store` the vector side of every index opened on `dir` in this process from
/// now on (replacing an earlier one).
pub fn attach(dir: &Path, store: Arc<dyn RemoteVectors>) {
    if let Ok(mut m) = attached().lock() {
        m.insert(key(dir), store);
    }
}

/// The vector store attached to `dir`, if any.
pub(super) fn attached_to(dir: &Path) -> Option<Arc<dyn RemoteVectors>> {
    let m = attached().lock().ok()?;
    if m.is_empty() {
        return None;
    }
    m.get(&key(dir)).cloned()
}
