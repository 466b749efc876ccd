//! The embedder identity and the embedding hash (the input template lives with the
//! projection: [`embedding_input`]).

use serde::{Deserialize, Serialize};

pub use crate::projection::{embedding_input, INPUT_TEMPLATE_VERSION};

/// Everything that decides the vectors an embedder produces. Two embedders with equal
/// identities give equal vectors for equal inputs; any difference re-embeds everything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedderIdentity {
    /// Model name, e.g. `all-MiniLM-L6-v2`.
    pub model: String,
    /// sha256 of the ONNX model file.
    pub model_sha256: String,
    /// sha256 of `tokenizer.json`.
    pub tokenizer_sha256: String,
    /// Pooling over token states: `mean` (attention-masked).
    pub pooling: String,
    /// Vectors are L2-normalised.
    pub normalized: bool,
    /// Longest input, in word pieces; longer inputs are truncated.
    pub max_length: usize,
    pub dim: usize,
    /// [`INPUT_TEMPLATE_VERSION`].
    pub input_template: u32,
}

impl EmbedderIdentity {
    /// sha256 over the identity's JSON (a short, stable key for it).
    pub fn key(&self) -> String {
        crate::hashing::sha256_hex(&serde_json::to_vec(self).unwrap_or_default())
    }
}

/// The hash a chunk's vector is stored under: sha256 over the embedder identity key and
/// the exact embedding input. Equal hash, equal vector: reuse it instead of embedding.
pub fn embedding_hash(identity_key: &str, input: &str) -> String {
    let mut h = crate::hashing::Hasher::new();
    h.part(identity_key).part(input);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> EmbedderIdentity {
        EmbedderIdentity {
            model: "m".into(),
            model_sha256: "a".into(),
            tokenizer_sha256: "b".into(),
            pooling: "mean".into(),
            normalized: true,
            max_length: 256,
            dim: 384,
            input_template: INPUT_TEMPLATE_VERSION,
        }
    }

    #[test]
    fn every_part_of_the_identity_changes_its_key() {
        let base = id().key();
        type Change = Box<dyn Fn(&mut EmbedderIdentity)>;
        let variants: Vec<Change> = vec![
            Box::new(|i| i.model.push('x')),
            Box::new(|i| i.model_sha256.push('x')),
            Box::new(|i| i.tokenizer_sha256.push('x')),
            Box::new(|i| i.pooling = "cls".into()),
            Box::new(|i| i.normalized = false),
            Box::new(|i| i.max_length = 128),
            Box::new(|i| i.dim = 768),
            Box::new(|i| i.input_template += 1),
        ];
        for change in variants {
            let mut i = id();
            change(&mut i);
            assert_ne!(i.key(), base);
        }
    }
}
