//! A vector side held outside the generation's files: a store that searches the
//! vectors itself (PostgreSQL + pgvector) and answers a query's nearest chunks, their
//! cosines and the query's cosine statistics. An index folder is attached to one in this
//! process ([`attach`]); every [`super::DocIndex`] opened on that folder — also the
//! next generation a server switches to — answers its vector side through it, and is
//! lexical-only (the reason in `degraded`) while the store cannot answer.

use super::status::EmbedderInfo;
use super::DocIndex;
use crate::vector::CosineStats;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

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
    /// Why the store cannot say (unreachable, nothing published, no vectors).
    fn embedder(&self) -> Result<EmbedderInfo, String>;

    /// The `k` chunks of `index` nearest to `query` (`[dim]` f32, L2-normalised), at
    /// `ef_search` candidates, with the cosines of the chunks `also` and the statistics.
    ///
    /// # Errors
    /// Why the store cannot answer now: the caller answers lexically, saying so.
    fn search(
        &self,
        index: &DocIndex,
        query: &[f32],
        k: usize,
        ef_search: usize,
        also: &[u64],
    ) -> Result<RemoteAnswer, String>;

    /// Chunks of the store's published generation with a vector, and pending one.
    fn counts(&self) -> (u64, u64);

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
