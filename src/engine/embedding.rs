//! The embedding phase of a build: reuse vectors by embedding hash, embed the rest.

use super::build::{Phase, Progress};
use crate::embed::{embedding_hash, Embedder};
use crate::error::Result;
use crate::vector::{VectorMeta, VectorSet};
use std::collections::HashMap;

/// Texts sent to the embedder per call (progress granularity).
const GROUP: usize = 16;

/// Vectors of a build and how they were obtained.
pub(super) struct Embedded {
    pub set: VectorSet,
    /// Chunks embedded in this build.
    pub embedded: u64,
    /// Chunks whose vector was found by hash in the previous generation.
    pub reused: u64,
}

/// Gives every input a vector: the previous generation's when its embedding hash is
/// known, else a fresh one. Inputs are embedded longest first (they are independent of
/// each other, so order only affects speed).
pub(super) fn embed_all(
    embedder: &dyn Embedder,
    inputs: &[String],
    previous: Option<&VectorSet>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Embedded> {
    let identity = embedder.identity();
    let key = identity.key();
    let dim = embedder.dim();
    let hashes: Vec<String> = inputs.iter().map(|i| embedding_hash(&key, i)).collect();
    let known: HashMap<&str, &[f32]> = previous
        .filter(|p| p.meta.identity_key == key && p.meta.dim == dim)
        .map(|p| p.by_hash())
        .unwrap_or_default();
    let mut data = vec![0.0f32; inputs.len() * dim];
    let mut todo = Vec::new();
    for (i, h) in hashes.iter().enumerate() {
        match known.get(h.as_str()) {
            Some(v) if v.len() == dim => data[i * dim..(i + 1) * dim].copy_from_slice(v),
            _ => todo.push(i),
        }
    }
    let reused = (inputs.len() - todo.len()) as u64;
    todo.sort_by_key(|&i| std::cmp::Reverse(inputs[i].len()));
    let total = todo.len() as u64;
    for (g, group) in todo.chunks(GROUP).enumerate() {
        let texts: Vec<&str> = group.iter().map(|&i| inputs[i].as_str()).collect();
        let vecs = embedder.embed(&texts)?;
        for (row, &i) in group.iter().enumerate() {
            data[i * dim..(i + 1) * dim].copy_from_slice(&vecs[row * dim..(row + 1) * dim]);
        }
        let done = ((g + 1) * GROUP).min(todo.len()) as u64;
        progress(Progress {
            phase: Phase::Embedding,
            done,
            total,
        });
    }
    let meta = VectorMeta {
        identity: serde_json::to_value(identity).unwrap_or_default(),
        identity_key: key,
        dim,
        hashes,
        matrix_sha256: String::new(),
        hnsw_sha256: None,
    };
    Ok(Embedded {
        set: VectorSet { meta, data },
        embedded: total,
        reused,
    })
}
