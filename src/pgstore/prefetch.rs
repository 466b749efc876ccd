//! An embedder that answers from vectors already in the database (by embedding hash,
//! sha256(identity key, input)) and asks the model only for the others: a chunk the
//! database holds a vector for is never embedded again, on any host.

use crate::embed::{embedding_hash, Embedder, EmbedderIdentity};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// Vectors by embedding hash, with the model behind them loaded on the first miss.
pub struct Prefetched {
    identity: EmbedderIdentity,
    key: String,
    vectors: HashMap<String, Vec<f32>>,
    model: OnceLock<std::result::Result<Box<dyn Embedder>, String>>,
    found: AtomicU64,
    embedded: AtomicU64,
}

impl Prefetched {
    /// `vectors` (`[384]` f32 each, L2-normalised, as stored) of embedder `identity`;
    /// `model`, when given, embeds what they lack; else, with `load_model`, the default
    /// model is loaded then (its identity must be `identity`), and without it a text the
    /// vectors lack is an [`Error::Embedder`].
    pub fn new(
        identity: EmbedderIdentity,
        vectors: HashMap<String, Vec<f32>>,
        model: Option<Box<dyn Embedder>>,
        load_model: bool,
    ) -> Prefetched {
        let cell = OnceLock::new();
        if let Some(m) = model {
            let _ = cell.set(Ok(m));
        } else if !load_model {
            let _ = cell.set(Err(
                "a chunk's vector is not in the database and no model is loaded here".into(),
            ));
        }
        Prefetched {
            key: identity.key(),
            identity,
            vectors,
            model: cell,
            found: AtomicU64::new(0),
            embedded: AtomicU64::new(0),
        }
    }

    /// Texts answered from the database's vectors so far.
    pub fn found(&self) -> u64 {
        self.found.load(Ordering::Relaxed)
    }

    /// Texts the model embedded so far.
    pub fn embedded(&self) -> u64 {
        self.embedded.load(Ordering::Relaxed)
    }

    fn model(&self) -> Result<&dyn Embedder> {
        let m = self.model.get_or_init(|| {
            let m = crate::embed::load_default_embedder().map_err(|e| e.to_string())?;
            if *m.identity() != self.identity {
                return Err(
                    "the local model is not the one the database's vectors come from".into(),
                );
            }
            Ok(m)
        });
        m.as_ref()
            .map(|b| b.as_ref())
            .map_err(|why| Error::Embedder(why.clone()))
    }
}

impl Embedder for Prefetched {
    fn identity(&self) -> &EmbedderIdentity {
        &self.identity
    }

    fn dim(&self) -> usize {
        self.identity.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let dim = self.dim();
        let mut out = vec![0f32; texts.len() * dim];
        let mut missing = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            match self.vectors.get(&embedding_hash(&self.key, t)) {
                Some(v) if v.len() == dim => out[i * dim..(i + 1) * dim].copy_from_slice(v),
                _ => missing.push(i),
            }
        }
        self.found
            .fetch_add((texts.len() - missing.len()) as u64, Ordering::Relaxed);
        if missing.is_empty() {
            return Ok(out);
        }
        let asked: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
        let got = self.model()?.embed(&asked)?;
        for (j, &i) in missing.iter().enumerate() {
            out[i * dim..(i + 1) * dim].copy_from_slice(&got[j * dim..(j + 1) * dim]);
        }
        self.embedded
            .fetch_add(missing.len() as u64, Ordering::Relaxed);
        Ok(out)
    }

    fn use_cache_dir(&self, dir: &Path) {
        if let Some(Ok(m)) = self.model.get() {
            m.use_cache_dir(dir);
        }
    }

    fn prepare_cache(&self, dir: &Path) -> Result<bool> {
        match self.model.get() {
            Some(Ok(m)) => m.prepare_cache(dir),
            _ => Ok(false),
        }
    }

    fn used_cache(&self) -> bool {
        matches!(self.model.get(), Some(Ok(m)) if m.used_cache())
    }
}
