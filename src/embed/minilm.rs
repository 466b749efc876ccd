//! all-MiniLM-L6-v2 through `fastembed` on ONNX Runtime, loaded at run time from a file
//! (`ort::init_from`), mean pooling over the attention mask, L2-normalised, 256 word pieces.

use super::identity::{EmbedderIdentity, INPUT_TEMPLATE_VERSION};
use super::locate::ModelPaths;
use super::{Embedder, MINILM_DIM};
use crate::error::{Error, Result};
use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

/// Longest input in word pieces, as the reference sentence-transformers model.
pub const MAX_LENGTH: usize = 256;

/// Texts per inference call. The int8 model quantises activations dynamically per call,
/// so a text's vector would depend on its batch neighbours (and their padding); one
/// text per call keeps every vector a function of its own text only.
const BATCH: usize = 1;

/// The MiniLM embedder. Inference runs on the calling thread (call it from a blocking
/// pool in async code); calls are serialised by a mutex.
pub struct MiniLm {
    /// The inference session, created on first use (a refresh with nothing to embed
    /// needs only the identity).
    model: OnceLock<std::result::Result<Mutex<TextEmbedding>, String>>,
    parts: Mutex<Option<(Vec<u8>, TokenizerFiles)>>,
    identity: EmbedderIdentity,
}

static ORT_LOADED: OnceLock<std::result::Result<(), String>> = OnceLock::new();

fn load_ort(dylib: &Path) -> Result<()> {
    ORT_LOADED
        .get_or_init(|| {
            ort::init_from(dylib)
                .map(|_| ())
                .map_err(|e| format!("cannot load the ONNX Runtime library: {e}"))
        })
        .clone()
        .map_err(Error::VectorsUnavailable)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io("read", path, e))
}

impl MiniLm {
    /// Loads the ONNX Runtime library (once per process) and the model.
    ///
    /// # Errors
    /// [`Error::VectorsUnavailable`] when the library does not load;
    /// [`Error::Io`] when a model file cannot be read; [`Error::Embedder`] when the
    /// session or the tokenizer cannot be built.
    pub fn load(paths: &ModelPaths) -> Result<Self> {
        load_ort(&paths.ort_dylib)?;
        let dir = &paths.model_dir;
        let onnx = read(&dir.join("model.onnx"))?;
        let tokenizer_file = read(&dir.join("tokenizer.json"))?;
        let identity = EmbedderIdentity {
            model: "all-MiniLM-L6-v2".into(),
            model_sha256: crate::hashing::sha256_hex(&onnx),
            tokenizer_sha256: crate::hashing::sha256_hex(&tokenizer_file),
            pooling: "mean".into(),
            normalized: true,
            max_length: MAX_LENGTH,
            dim: MINILM_DIM,
            input_template: INPUT_TEMPLATE_VERSION,
        };
        let files = TokenizerFiles {
            tokenizer_file,
            config_file: read(&dir.join("config.json"))?,
            special_tokens_map_file: read(&dir.join("special_tokens_map.json"))?,
            tokenizer_config_file: read(&dir.join("tokenizer_config.json"))?,
        };
        Ok(MiniLm {
            model: OnceLock::new(),
            parts: Mutex::new(Some((onnx, files))),
            identity,
        })
    }

    fn session(&self) -> Result<&Mutex<TextEmbedding>> {
        self.model
            .get_or_init(|| {
                let (onnx, files) = self
                    .parts
                    .lock()
                    .map_err(|_| "the embedder panicked earlier".to_string())?
                    .take()
                    .ok_or_else(|| "the model bytes are gone".to_string())?;
                // fastembed's default pooling for user-defined models is CLS: set mean.
                let model = UserDefinedEmbeddingModel::new(onnx, files).with_pooling(Pooling::Mean);
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
                let opts = InitOptionsUserDefined::new()
                    .with_max_length(MAX_LENGTH)
                    .with_intra_threads(threads);
                TextEmbedding::try_new_from_user_defined(model, opts)
                    .map(Mutex::new)
                    .map_err(|e| format!("cannot load all-MiniLM-L6-v2: {e}"))
            })
            .as_ref()
            .map_err(|e| Error::Embedder(e.clone()))
    }
}

impl Embedder for MiniLm {
    fn identity(&self) -> &EmbedderIdentity {
        &self.identity
    }

    fn dim(&self) -> usize {
        MINILM_DIM
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let mut model = self
            .session()?
            .lock()
            .map_err(|_| Error::Embedder("the embedder panicked earlier".into()))?;
        let mut out = Vec::with_capacity(texts.len() * MINILM_DIM);
        for batch in texts.chunks(BATCH) {
            let vecs = model
                .embed(batch, Some(batch.len()))
                .map_err(|e| Error::Embedder(format!("inference failed: {e}")))?;
            for v in vecs {
                if v.len() != MINILM_DIM {
                    return Err(Error::Embedder(format!(
                        "model returned {} dimensions, expected {MINILM_DIM}",
                        v.len()
                    )));
                }
                out.extend_from_slice(&v);
            }
        }
        Ok(out)
    }
}
