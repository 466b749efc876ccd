//! The published generation of a folder index as plain rows — roots, documents with
//! their indexed text, chunks with their content and embedding hashes, vectors — for
//! another store to hold (`pgstore`). Reads only; the generation is verified as a build
//! verifies it.

use super::previous::{previous_chunks, root_names, vectors_in, Previous};
use crate::error::{Error, Result};
use crate::store::{Manifest, Snapshot, SourceSpec};
use crate::vector::VectorSet;
use std::path::Path;

/// One chunk of a document, in ordinal order.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedChunk {
    /// The chunk id within its root (`path#heading-slug/…`: a multi-root index's
    /// `N:` position prefix removed, so a root's ids do not change when another root
    /// is dropped).
    pub id: String,
    /// sha256 of the chunk's projected fields.
    pub content_hash: String,
    /// sha256(embedder identity key, embedding input); `None` while pending.
    pub embed_hash: Option<String>,
    /// The embedding hashes of its tail windows ([`crate::vector::VectorSet`]), in order.
    pub tail_hashes: Vec<String>,
}

/// One indexed document.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedDoc {
    /// The root (as the manifest records it) holding the document.
    pub root: String,
    /// Path relative to the root, `/`-separated.
    pub rel_path: String,
    /// sha256 of the bytes indexed.
    pub sha256: String,
    /// Size in bytes of the file when read.
    pub size: u64,
    /// The text the build indexed (decoded, cut at the byte budget).
    pub text: String,
    /// Its chunks in ordinal order.
    pub chunks: Vec<ExportedChunk>,
}

/// A published generation as rows.
pub struct Exported {
    pub manifest: Manifest,
    /// The roots in the manifest's order (the order of chunk ordinals).
    pub roots: Vec<String>,
    /// Documents in ordinal order.
    pub documents: Vec<ExportedDoc>,
    /// The generation's vectors (`[chunks, dim]` f32, L2-normalised), when it has any.
    pub vectors: Option<VectorSet>,
    /// The inputs still waiting for a vector ([`super::QUEUE_FILE`] of the folder).
    pub queue: Vec<super::Queued>,
}

impl Exported {
    /// Every vector (chunks' and tail windows') with its embedding hash.
    pub fn vectors_by_hash(&self) -> Vec<(&str, &[f32])> {
        let Some(v) = &self.vectors else {
            return Vec::new();
        };
        (0..v.rows())
            .filter(|&i| !v.meta.hashes[i].is_empty())
            .map(|i| (v.meta.hashes[i].as_str(), v.row(i)))
            .collect()
    }
}

/// The tail-row hashes of each chunk, `[chunks]`.
fn tails_of(v: &VectorSet) -> Vec<Vec<String>> {
    let n = v.len();
    let mut out = vec![Vec::new(); n];
    for (j, &o) in v.meta.tails.iter().enumerate() {
        if let Some(t) = out.get_mut(o as usize) {
            t.push(v.meta.hashes[n + j].clone());
        }
    }
    out
}

/// Reads the published generation of the folder index at `index_dir`.
///
/// # Errors
/// [`Error::NoIndex`] without a manifest; [`Error::Corrupt`] when the generation does not
/// verify, its chunk counts do not add up to `chunks.json`, or a document's text cannot
/// be read; [`Error::Database`] for an index of a JSONL file.
pub fn export(index_dir: &Path) -> Result<Exported> {
    let manifest = Manifest::load(index_dir)?;
    if matches!(manifest.source, SourceSpec::Jsonl { .. }) {
        return Err(Error::Database(
            "an index of a JSONL file cannot be stored in PostgreSQL yet\nhint: index folders of documents into it".into(),
        ));
    }
    let prev = Previous::open(index_dir, manifest).map_err(|why| Error::corrupt(index_dir, why))?;
    let ids = previous_chunks(&prev.gen_dir)
        .ok_or_else(|| Error::corrupt(index_dir, "cannot read chunks.json"))?;
    let vectors = vectors_in(&prev.gen_dir).map(|(v, _)| v);
    let tails = vectors.as_ref().map(tails_of).unwrap_or_default();
    let roots = root_names(&prev.manifest.source);
    let total: usize = prev.snapshot.files.iter().map(|f| f.chunks as usize).sum();
    if total != ids.len() {
        return Err(Error::corrupt(
            index_dir,
            format!("files hold {total} chunks, chunks.json {}", ids.len()),
        ));
    }
    let mut documents = Vec::with_capacity(prev.snapshot.files.len());
    let mut ord = 0usize;
    for f in &prev.snapshot.files {
        // a multi-root index prefixes ids with the root's position ("1:path#slug"), which
        // shifts when a root before it is dropped; rows carry the root apart
        let prefix = format!("{}:", f.root);
        let chunks = (ord..ord + f.chunks as usize)
            .map(|o| ExportedChunk {
                id: match ids[o].0.strip_prefix(&prefix) {
                    Some(rest) if roots.len() > 1 => rest.to_string(),
                    _ => ids[o].0.clone(),
                },
                content_hash: ids[o].1.clone(),
                embed_hash: vectors
                    .as_ref()
                    .filter(|v| v.has_vector(o))
                    .map(|v| v.meta.hashes[o].clone()),
                tail_hashes: tails.get(o).cloned().unwrap_or_default(),
            })
            .collect();
        ord += f.chunks as usize;
        documents.push(ExportedDoc {
            root: roots.get(f.root).cloned().unwrap_or_default(),
            rel_path: f.rel_path.clone(),
            sha256: f.sha256.clone(),
            size: f.size,
            text: prev.text_of(f)?,
            chunks,
        });
    }
    // the queue's hashes are of the vectors' embedder: without vectors, nothing waits
    let queue = match &vectors {
        Some(_) => super::read_queue(index_dir),
        None => Vec::new(),
    };
    Ok(Exported {
        manifest: prev.manifest,
        roots,
        documents,
        vectors,
        queue,
    })
}

/// Where a chunk of a generation sits: the key a store holds its row under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkKey {
    /// Position of its root in the manifest's roots.
    pub root: usize,
    /// Its document's path relative to the root, `/`-separated.
    pub rel_path: String,
    /// Its place among its document's chunks, from 0.
    pub seq: u32,
    /// sha256 of the chunk's projected fields.
    pub content_hash: String,
}

/// The key of every chunk of the generation in `gen_dir` (of the index in `dir`, whose
/// file snapshot is `snapshot`), by ordinal.
///
/// # Errors
/// [`Error::Corrupt`] when `chunks.json` cannot be read or its length differs from the
/// snapshot's chunk counts.
pub fn chunk_keys(dir: &Path, gen_dir: &Path, snapshot: &Snapshot) -> Result<Vec<ChunkKey>> {
    let ids =
        previous_chunks(gen_dir).ok_or_else(|| Error::corrupt(dir, "cannot read chunks.json"))?;
    let total: usize = snapshot.files.iter().map(|f| f.chunks as usize).sum();
    if total != ids.len() {
        return Err(Error::corrupt(
            dir,
            format!("files hold {total} chunks, chunks.json {}", ids.len()),
        ));
    }
    let places = snapshot
        .files
        .iter()
        .flat_map(|f| (0..f.chunks).map(move |seq| (f, seq)));
    Ok(places
        .zip(ids)
        .map(|((f, seq), (_, hash))| ChunkKey {
            root: f.root,
            rel_path: f.rel_path.clone(),
            seq,
            content_hash: hash,
        })
        .collect())
}
