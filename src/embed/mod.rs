//! Embedders: text in, L2-normalised dense vectors out, with an identity that says
//! exactly which model, tokenizer and settings produced them.
//!
//! Owns: the [`Embedder`] trait, [`EmbedderIdentity`], the embedding-input template of a
//! chunk, locating model files, and the MiniLM embedder (feature `embeddings`).
//! Must not import: `lexical`, `vector`, `generation`, `write`, `read`, `cli` (indexes do not import each other).

pub mod folded;
mod identity;
mod locate;
#[cfg(feature = "embeddings")]
mod minilm;
pub mod windows;

pub use identity::{embedding_hash, embedding_input, EmbedderIdentity, INPUT_TEMPLATE_VERSION};
pub use locate::{locate_models, user_models_dir, ModelPaths, ENV_MODEL_DIR, ENV_ORT_DYLIB};

use crate::error::Result;
use std::path::Path;

/// Dimension of all-MiniLM-L6-v2 vectors.
pub const MINILM_DIM: usize = 384;

/// Turns texts into vectors.
///
/// Implementations must be deterministic: the same text gives the same vector whatever
/// else is in the call (no dependence on batch neighbours).
pub trait Embedder: Send + Sync {
    /// What produces the vectors; part of every chunk's embedding hash.
    fn identity(&self) -> &EmbedderIdentity;

    /// Vector dimension.
    fn dim(&self) -> usize;

    /// Embeds `texts`: returns `[texts.len(), dim]` f32 row-major, each row L2-normalised
    /// (cosine = dot product).
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] when tokenisation or inference fails.
    fn embed(&self, texts: &[&str]) -> Result<Vec<f32>>;

    /// The texts of the windows of `input` that [`Embedder::embed`] does not see: empty
    /// when the input fits the model's input length, else one text per window of the
    /// remaining word pieces (see [`windows`]), each within that length. Depends on
    /// `input` only. Default: none (an embedder that sees every input whole).
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] when tokenisation fails.
    fn tails(&self, _input: &str) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Lets the embedder keep files derived from its model in `dir`, next to an index
    /// (the [`folded`] model cache): sessions created after this call (sessions are made
    /// on first use and kept) load from there when the cache checks out. The first folder
    /// given stays. Default: no cache.
    fn use_cache_dir(&self, _dir: &Path) {}

    /// Writes the cache into `dir` (an index's cache folder) when it is missing there
    /// (about 1.5 s, once per model and index). Call it as the index's writer (under its
    /// writer lock). `Ok(true)` when written.
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] saying why it was not written (its temporary folder is
    /// removed; sessions are then made from the original model, as without a cache).
    fn prepare_cache(&self, _dir: &Path) -> Result<bool> {
        Ok(false)
    }

    /// Whether every session this embedder made so far came from the cache (and at least
    /// one was made).
    fn used_cache(&self) -> bool {
        false
    }
}

/// Loads the default embedder (all-MiniLM-L6-v2 through ONNX Runtime) from the located
/// model files.
///
/// # Errors
/// [`crate::Error::VectorsUnavailable`] saying why (built without the `embeddings`
/// feature, model files or the ONNX Runtime library missing, library failed to load).
#[cfg(feature = "embeddings")]
pub fn load_default_embedder() -> Result<Box<dyn Embedder>> {
    load_embedder(None)
}

/// [`load_default_embedder`] embedding lists of texts on `threads` threads (default: one
/// per core); a single text (a query) still uses every core.
///
/// # Errors
/// As [`load_default_embedder`].
#[cfg(feature = "embeddings")]
pub fn load_embedder(threads: Option<usize>) -> Result<Box<dyn Embedder>> {
    let paths = locate_models()?;
    let model = minilm::MiniLm::load(&paths)?;
    Ok(Box::new(match threads {
        Some(n) => model.with_threads(n),
        None => model,
    }))
}

/// The identity of the default embedder as installed now (the located model files),
/// without loading ONNX Runtime or the model: equal to [`load_default_embedder`]'s
/// identity whenever that loads.
///
/// # Errors
/// [`crate::Error::VectorsUnavailable`] when the model files or the ONNX Runtime library
/// are not found (or the feature is off); [`crate::Error::Io`] /
/// [`crate::Error::Embedder`] when a model file cannot be read or parsed.
pub fn installed_identity() -> Result<EmbedderIdentity> {
    #[cfg(feature = "embeddings")]
    {
        minilm::identity_of(&locate_models()?)
    }
    #[cfg(not(feature = "embeddings"))]
    {
        Err(crate::Error::VectorsUnavailable(
            "this docfuse was built without the `embeddings` feature".into(),
        ))
    }
}

/// Without the `embeddings` feature there is no embedder: this always fails, loudly.
///
/// # Errors
/// Always [`crate::Error::VectorsUnavailable`].
#[cfg(not(feature = "embeddings"))]
pub fn load_default_embedder() -> Result<Box<dyn Embedder>> {
    load_embedder(None)
}

/// Without the `embeddings` feature there is no embedder: this always fails, loudly.
///
/// # Errors
/// Always [`crate::Error::VectorsUnavailable`].
#[cfg(not(feature = "embeddings"))]
pub fn load_embedder(_threads: Option<usize>) -> Result<Box<dyn Embedder>> {
    Err(crate::Error::VectorsUnavailable(
        "this docfuse was built without the `embeddings` feature".into(),
    ))
}
