//! The embedding phase of a build: reuse vectors by embedding hash (from the previous
//! generation and from the resumable cache), embed the rest within the run's limits.
//!
//! The cache `DIR/embed-cache.bin` receives every freshly embedded vector, flushed after
//! each group, so a refresh that is interrupted (killed, or stopped by `--max-chunks` /
//! `--max-seconds`) does not embed those chunks again. Records: 64 bytes of hex hash,
//! then `dim` little-endian f32. A torn last record is ignored. The cache is removed
//! once a generation is published.

use super::options::{Phase, Progress};
use crate::embed::{embedding_hash, Embedder};
use crate::error::{Error, Result};
use crate::vector::{VectorMeta, VectorSet};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Chunks whose texts (each one's input and tail windows) are sent to the embedder per
/// call (progress, limit and cache-flush granularity).
const GROUP: usize = 16;
/// File name of the resumable cache in the index folder.
pub const CACHE_FILE: &str = "embed-cache.bin";

/// Bounds of one run's embedding work.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmbedLimits {
    /// Embed at most this many chunks.
    pub max_chunks: Option<u64>,
    /// Stop starting new groups after this many seconds.
    pub max_seconds: Option<f64>,
}

/// Vectors of a build and how they were obtained.
pub(super) struct Embedded {
    pub set: VectorSet,
    /// Chunks embedded in this run.
    pub embedded: u64,
    /// Chunks whose vector was found by hash (previous generation or cache).
    pub reused: u64,
    /// Chunks left without a vector, or without all their tail windows, by the limits
    /// (lexical only, or seen by their first window only, until a later refresh).
    pub pending: u64,
    /// The inputs of those chunks that have no vector and whose text is known, for
    /// embedding workers.
    pub queue: Vec<crate::generation::Queued>,
}

fn cache_path(index_dir: &Path) -> PathBuf {
    index_dir.join(CACHE_FILE)
}

/// Removes the resumable cache (after a successful publish).
pub(super) fn clear_cache(index_dir: &Path) {
    let _ = std::fs::remove_file(cache_path(index_dir));
}

/// Appends the vectors of the published generation of the index folder `index_dir` to
/// its resumable cache (before the folder is removed and built again: its vectors, found
/// by hash, are then not embedded again). Returns how many were written.
///
/// # Errors
/// [`Error::Io`] when the cache cannot be written; a folder without a readable
/// generation or vectors writes nothing.
pub fn keep_vectors(index_dir: &Path) -> Result<u64> {
    let Ok(m) = crate::store::Manifest::load(index_dir) else {
        return Ok(0);
    };
    let Ok(set) = VectorSet::read(&index_dir.join(&m.generation_dir)) else {
        return Ok(0);
    };
    let dim = set.meta.dim;
    let rows: Vec<usize> = (0..set.rows())
        .filter(|&i| !set.meta.hashes[i].is_empty())
        .collect();
    if rows.is_empty() {
        return Ok(0);
    }
    let path = cache_path(index_dir);
    let mut file = open_cache(&path, dim)?;
    let hashes: Vec<&str> = rows.iter().map(|&i| set.meta.hashes[i].as_str()).collect();
    let vecs: Vec<f32> = rows.iter().flat_map(|&i| set.row(i).to_vec()).collect();
    append_cache(&mut file, &path, &hashes, &vecs, dim)?;
    Ok(rows.len() as u64)
}

/// Removes the cache when it holds no record (a run that failed before embedding
/// anything leaves no empty file behind).
pub(super) fn drop_empty_cache(index_dir: &Path) {
    let path = cache_path(index_dir);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(path);
    }
}

fn read_cache(index_dir: &Path, dim: usize) -> HashMap<String, Vec<f32>> {
    let Ok(bytes) = crate::fsio::read_regular(cache_path(index_dir)) else {
        return HashMap::new();
    };
    bytes
        .chunks_exact(64 + dim * 4)
        .filter_map(|r| {
            let hash = std::str::from_utf8(&r[..64]).ok()?;
            if !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let v: Vec<f32> = r[64..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            // A damaged record is never reused: every vector is finite and L2-normalised.
            let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            let sound = v.iter().all(|x| x.is_finite()) && (norm - 1.0).abs() < 1e-3;
            sound.then(|| (hash.to_string(), v))
        })
        .collect()
}

/// Opens the cache for appending, first cutting a torn last record (a crash mid-write)
/// so that new records stay aligned.
fn open_cache(path: &Path, dim: usize) -> Result<std::fs::File> {
    let rec = (64 + dim * 4) as u64;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io("open", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if len % rec != 0 {
        file.set_len(len - len % rec)
            .map_err(|e| Error::io("truncate", path, e))?;
    }
    Ok(file)
}

fn append_cache(
    file: &mut std::fs::File,
    path: &Path,
    hashes: &[&str],
    vecs: &[f32],
    dim: usize,
) -> Result<()> {
    let mut buf = Vec::with_capacity(hashes.len() * (64 + dim * 4));
    for (i, h) in hashes.iter().enumerate() {
        buf.extend_from_slice(h.as_bytes());
        for x in &vecs[i * dim..(i + 1) * dim] {
            buf.extend_from_slice(&x.to_le_bytes());
        }
    }
    file.write_all(&buf)
        .map_err(|e| Error::io("write", path, e))?;
    file.sync_data().map_err(|e| Error::io("fsync", path, e))
}

/// Who makes the vectors of a build: a loaded embedder, or — when the model cannot be
/// loaded — only the identity of the previous vectors (chunks whose embedding hash is
/// known keep their vector; the others wait as pending).
#[derive(Clone, Copy)]
pub(super) enum VectorSource<'a> {
    Embedder(&'a dyn Embedder),
    ReuseOnly(&'a VectorSet),
}

/// The embedding input of one chunk, or — for a chunk carried over unchanged with its
/// bucket — only its embedding hash (its vector is the previous generation's).
#[derive(Debug, Clone)]
pub(super) enum EmbedInput {
    Text(String),
    Hash(String),
}

impl EmbedInput {
    fn text(&self) -> Option<&str> {
        match self {
            EmbedInput::Text(t) => Some(t),
            EmbedInput::Hash(_) => None,
        }
    }
}

/// The store's vectors by embedding hash ([`super::IndexStore::vectors`]): identity key
/// and hashes in, the vectors it holds for them out (`[dim]` f32 each).
pub(super) type VectorLookup<'a> =
    dyn FnMut(&str, &[&str]) -> Result<HashMap<String, Vec<f32>>> + 'a;

/// One chunk's embedding work: its own input and its tail windows, each with its
/// embedding hash.
struct Work<'a> {
    head: (Option<&'a str>, String),
    tails: Vec<(Option<String>, String)>,
    /// False when the tail windows could not be known (no embedder to cut them, and no
    /// previous generation under the same rule that holds them).
    tails_known: bool,
}

/// The tail windows of every input, by embedding hash: the previous generation's when
/// the input's own hash is known there under the same window rule, else the embedder's
/// (none without one: such a chunk waits for its tails as for a vector).
fn windows_of<'a>(
    inputs: &'a [EmbedInput],
    hashes: Vec<String>,
    previous: Option<&VectorSet>,
    embedder: Option<&dyn Embedder>,
    key: &str,
) -> Result<Vec<Work<'a>>> {
    let same_rule = previous.filter(|p| p.meta.window_rule == crate::vector::WINDOW_RULE);
    let heads: std::collections::HashSet<&str> = same_rule
        .map(|p| {
            p.meta.hashes[..p.len()]
                .iter()
                .map(String::as_str)
                .collect()
        })
        .unwrap_or_default();
    let known_tails = same_rule.map(VectorSet::tails_by_head).unwrap_or_default();
    let mut out = Vec::with_capacity(inputs.len());
    for (input, hash) in inputs.iter().zip(hashes) {
        let (tails, tails_known) = match (known_tails.get(hash.as_str()), input.text(), embedder) {
            (Some(t), _, _) => (t.iter().map(|h| (None, h.to_string())).collect(), true),
            _ if heads.contains(hash.as_str()) => (Vec::new(), true),
            (None, Some(text), Some(e)) => {
                let cut = e.tails(text)?.into_iter().map(|t| {
                    let h = embedding_hash(key, &t);
                    (Some(t), h)
                });
                (cut.collect(), true)
            }
            _ => (Vec::new(), false),
        };
        out.push(Work {
            head: (input.text(), hash),
            tails,
            tails_known,
        });
    }
    Ok(out)
}

/// The rows of a build's vector set.
struct Rows {
    /// Chunks' hashes (empty: no vector), then the tail rows'.
    hashes: Vec<String>,
    tails: Vec<u32>,
    data: Vec<f32>,
    /// Every chunk with a vector has all its tail windows, and they are known.
    complete: bool,
}

/// Lays out the vectors `known` by hash: each chunk's own row (kept when known, even if
/// its windows are `unfinished`), then the tail rows of the chunks that have a vector.
fn assemble(
    work: &[Work<'_>],
    known: &HashMap<&str, &[f32]>,
    unfinished: &[bool],
    dim: usize,
) -> Rows {
    let n = work.len();
    let mut hashes: Vec<String> = Vec::with_capacity(n);
    let mut data = vec![0.0f32; n * dim];
    let (mut tails, mut tail_hashes, mut tail_data) = (Vec::new(), Vec::new(), Vec::new());
    let mut complete = true;
    for (i, w) in work.iter().enumerate() {
        let Some(v) = known.get(w.head.1.as_str()).filter(|v| v.len() == dim) else {
            hashes.push(String::new());
            continue;
        };
        data[i * dim..(i + 1) * dim].copy_from_slice(v);
        hashes.push(w.head.1.clone());
        complete &= !unfinished[i] && w.tails_known;
        for (_, h) in &w.tails {
            match known.get(h.as_str()).filter(|t| t.len() == dim) {
                Some(t) => {
                    tails.push(i as u32);
                    tail_hashes.push(h.clone());
                    tail_data.extend_from_slice(t);
                }
                None => complete = false,
            }
        }
    }
    hashes.extend(tail_hashes);
    data.extend(tail_data);
    Rows {
        hashes,
        tails,
        data,
        complete,
    }
}

/// The inputs of the `unfinished` chunks that lack a vector and have a text, each once.
fn queue_of(
    work: &[Work<'_>],
    known: &HashMap<&str, &[f32]>,
    unfinished: &[bool],
    dim: usize,
) -> Vec<crate::generation::Queued> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (w, _) in work.iter().zip(unfinished).filter(|(_, u)| **u) {
        let head = (w.head.0, &w.head.1);
        for (text, hash) in
            std::iter::once(head).chain(w.tails.iter().map(|t| (t.0.as_deref(), &t.1)))
        {
            let lacks = known.get(hash.as_str()).is_none_or(|v| v.len() != dim);
            if let (Some(text), true) = (text, lacks && seen.insert(hash.as_str())) {
                out.push(crate::generation::Queued {
                    hash: hash.clone(),
                    input: text.to_string(),
                });
            }
        }
    }
    out
}

/// Gives every input a vector, and every long input's tail windows theirs: the previous
/// generation's, the cache's or the store's (`lookup`, asked once for the hashes the
/// first two lack) when the embedding hash is known, else a fresh one, until a limit
/// stops the run (or at once when there is no embedder). Inputs are embedded longest
/// first (each vector depends on its own text only); a chunk's windows go with it.
///
/// # Errors
/// The lookup's error; the embedder's; [`Error::Io`] on the resumable cache.
pub(super) fn embed_all(
    source: VectorSource<'_>,
    inputs: &[EmbedInput],
    previous: Option<&VectorSet>,
    lookup: &mut VectorLookup<'_>,
    index_dir: &Path,
    limits: EmbedLimits,
    progress: &mut dyn FnMut(Progress),
) -> Result<Embedded> {
    let started = Instant::now();
    let (identity, key, dim, embedder) = match source {
        VectorSource::Embedder(e) => {
            let id = serde_json::to_value(e.identity()).unwrap_or_default();
            (id, e.identity().key(), e.dim(), Some(e))
        }
        VectorSource::ReuseOnly(v) => (
            v.meta.identity.clone(),
            v.meta.identity_key.clone(),
            v.meta.dim,
            None,
        ),
    };
    let hashes: Vec<String> = inputs
        .iter()
        .map(|i| match i {
            EmbedInput::Text(t) => embedding_hash(&key, t),
            EmbedInput::Hash(h) => h.clone(),
        })
        .collect();
    let previous = previous.filter(|p| p.meta.identity_key == key && p.meta.dim == dim);
    let work = windows_of(inputs, hashes, previous, embedder, &key)?;
    let mut known: HashMap<&str, &[f32]> = previous.map(|p| p.by_hash()).unwrap_or_default();
    let cached = read_cache(index_dir, dim);
    let mut fresh: HashMap<String, Vec<f32>> = HashMap::new();
    for (h, v) in &cached {
        known.entry(h.as_str()).or_insert(v.as_slice());
    }
    let all = || {
        work.iter()
            .flat_map(|w| std::iter::once(&w.head.1).chain(w.tails.iter().map(|t| &t.1)))
    };
    let unknown: Vec<&str> = all()
        .filter(|h| known.get(h.as_str()).is_none_or(|v| v.len() != dim))
        .map(String::as_str)
        .collect();
    let stored = match unknown.is_empty() {
        true => HashMap::new(),
        false => lookup(&key, &unknown)?,
    };
    for (h, v) in &stored {
        known.entry(h.as_str()).or_insert(v.as_slice());
    }
    let lacks =
        |h: &str, known: &HashMap<&str, &[f32]>| known.get(h).is_none_or(|v| v.len() != dim);
    let todo: Vec<usize> = (0..work.len())
        .filter(|&i| {
            lacks(&work[i].head.1, &known) || work[i].tails.iter().any(|t| lacks(&t.1, &known))
        })
        .collect();
    let reused = (inputs.len() - todo.len()) as u64;
    // A carried-over chunk whose vector is gone cannot be embedded here (no text): it
    // waits as pending, and its bucket is chunked again by the next refresh. So does one
    // whose tail windows are not known without an embedder to cut them.
    let (mut todo, orphans): (Vec<usize>, Vec<usize>) = todo.into_iter().partition(|&i| {
        work[i].head.0.is_some()
            && work[i]
                .tails
                .iter()
                .all(|t| t.0.is_some() || !lacks(&t.1, &known))
    });
    todo.sort_by_key(|&i| std::cmp::Reverse(work[i].head.0.map_or(0, str::len)));
    let budget = match embedder {
        None => 0,
        Some(_) => limits
            .max_chunks
            .map_or(todo.len(), |m| (m as usize).min(todo.len())),
    };
    let total = budget as u64;
    let path = cache_path(index_dir);
    let mut cache = match embedder {
        Some(_) if budget > 0 => Some(open_cache(&path, dim)?),
        _ => None,
    };
    let mut done = 0usize;
    for group in todo[..budget].chunks(GROUP) {
        let (Some(embedder), Some(cache)) = (embedder, cache.as_mut()) else {
            break;
        };
        if limits
            .max_seconds
            .is_some_and(|s| started.elapsed().as_secs_f64() >= s)
        {
            break;
        }
        // every text of the group's chunks that has no vector: heads and tail windows
        let mut texts: Vec<&str> = Vec::new();
        let mut group_hashes: Vec<&str> = Vec::new();
        for &i in group {
            let w = &work[i];
            let head = (w.head.0, &w.head.1);
            for (text, hash) in
                std::iter::once(head).chain(w.tails.iter().map(|t| (t.0.as_deref(), &t.1)))
            {
                if let (Some(text), true) = (text, lacks(hash, &known) && !fresh.contains_key(hash))
                {
                    texts.push(text);
                    group_hashes.push(hash);
                }
            }
        }
        let vecs = embedder.embed(&texts)?;
        if vecs.len() != texts.len() * dim {
            return Err(crate::Error::Embedder(format!(
                "the model returned {} values for {} texts, expected {dim} per text (its identity says {dim} dimensions)",
                vecs.len(),
                texts.len()
            )));
        }
        append_cache(cache, &path, &group_hashes, &vecs, dim)?;
        for (row, h) in group_hashes.iter().enumerate() {
            fresh.insert(h.to_string(), vecs[row * dim..(row + 1) * dim].to_vec());
        }
        done += group.len();
        progress(Progress {
            phase: Phase::Embedding,
            done: done as u64,
            total,
        });
        super::hooks::pause_point("embed-group");
    }
    for (h, v) in &fresh {
        known.entry(h.as_str()).or_insert(v.as_slice());
    }
    // Chunks the limits left out have no vector yet: an empty hash marks the row pending.
    let mut unfinished = vec![false; work.len()];
    for &i in todo[done..].iter().chain(&orphans) {
        unfinished[i] = true;
    }
    let rows = assemble(&work, &known, &unfinished, dim);
    let queue = queue_of(&work, &known, &unfinished, dim);
    let meta = VectorMeta {
        identity,
        identity_key: key,
        dim,
        hashes: rows.hashes,
        tails: rows.tails,
        // a generation some of whose chunks lack tail windows (the limits stopped the
        // run, or there was no model to cut them) says it was not made by the rule: the
        // next build cuts its chunks again (their vectors found by hash)
        window_rule: match rows.complete {
            true => crate::vector::WINDOW_RULE,
            false => 0,
        },
        matrix_sha256: String::new(),
        hnsw_sha256: None,
    };
    let data = rows.data;
    Ok(Embedded {
        set: VectorSet { meta, data },
        embedded: done as u64,
        reused,
        pending: (todo.len() - done + orphans.len()) as u64,
        queue,
    })
}
