//! Building an index: discover → read → chunk → project → write → publish.

use super::embedding::embed_all;
use super::jsonl::read_jsonl;
use crate::chunk::{chunk_document, SourceDoc};
use crate::config::IndexConfig;
use crate::discover::{discover, read_text, Warning};
use crate::embed::{embedding_input, Embedder};
use crate::error::{Error, Result};
use crate::lexical::LexicalWriter;
use crate::projection::project;
use crate::store::{
    write_atomic, CollectionShape, FileEntry, Manifest, Snapshot, SourceSpec, VectorsInfo,
    SCHEMA_VERSION,
};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What to index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Folders or files to walk.
    Roots(Vec<PathBuf>),
    /// A JSONL corpus of `{"_id", "title", "text"}` records.
    Jsonl(PathBuf),
}

/// The phase a build is in, for progress reporting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Reading, chunking and indexing documents (units: documents).
    Indexing,
    /// Embedding chunks (units: chunks to embed).
    Embedding,
}

/// Progress of a build: `done` of `total` units of `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: u64,
    pub total: u64,
}

/// How to build.
#[derive(Clone, Copy)]
pub struct BuildOptions<'a> {
    pub config: IndexConfig,
    /// Embed every chunk with this embedder; `None` builds a lexical-only index.
    pub embedder: Option<&'a dyn Embedder>,
}

/// What a build did.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildReport {
    /// Source documents indexed (files or JSONL records).
    pub documents: u64,
    pub chunks: u64,
    /// Files or records skipped or degraded, each with its reason.
    pub warnings: Vec<Warning>,
    pub generation: u64,
    /// Chunks embedded in this build.
    pub embedded: u64,
    /// Chunks whose vector was reused from the previous generation (same embedding hash).
    pub reused: u64,
    /// Wall time of the whole build, ms.
    pub elapsed_ms: u64,
}

/// Builds a new generation of the index in `index_dir` from `source` and publishes it by
/// atomically replacing the manifest. `progress` is called after each document and each
/// group of embedded chunks. A crash before the manifest is replaced leaves the previous
/// index intact. With an embedder, vectors of unchanged chunks are reused from the
/// previous generation (found by embedding hash) and only the others are embedded.
///
/// # Errors
/// [`Error::Config`] for an invalid configuration or when no document is found;
/// [`Error::Root`] for a missing root; [`Error::Io`]/[`Error::Tantivy`] on write failures.
pub fn build(
    index_dir: &Path,
    source: &Source,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<BuildReport> {
    let started = Instant::now();
    let config = &opts.config;
    config.validate()?;
    let mut warnings = Vec::new();
    let (spec, docs) = load_source(source, config, &mut warnings)?;
    std::fs::create_dir_all(index_dir).map_err(|e| Error::io("create", index_dir, e))?;
    let generation = next_generation(index_dir);
    let gen_name = format!("gen-{generation:06}");
    let gen_dir = index_dir.join(&gen_name);
    let lex_dir = gen_dir.join("lexical");
    if gen_dir.exists() {
        std::fs::remove_dir_all(&gen_dir).map_err(|e| Error::io("remove stale", &gen_dir, e))?;
    }
    std::fs::create_dir_all(&lex_dir).map_err(|e| Error::io("create", &lex_dir, e))?;

    let mut writer = LexicalWriter::create(&lex_dir)?;
    let total = docs.len() as u64;
    let mut snapshot = Snapshot::default();
    let mut inputs = Vec::new();
    for (i, loaded) in docs.into_iter().enumerate() {
        let chunks = chunk_document(&loaded.doc, &config.chunker);
        let mut entry = loaded.entry;
        entry.chunks = chunks.len() as u32;
        for chunk in chunks {
            if opts.embedder.is_some() {
                inputs.push(embedding_input(
                    &chunk.title,
                    &chunk.heading_path,
                    &chunk.body,
                ));
            }
            writer.add(&project(chunk, entry.root))?;
        }
        snapshot.files.push(entry);
        progress(Progress {
            phase: Phase::Indexing,
            done: i as u64 + 1,
            total,
        });
    }
    let stats = writer.finish()?;
    let (vectors, embedded, reused) = match opts.embedder {
        Some(e) => {
            let previous = previous_vectors(index_dir);
            let mut out = embed_all(e, &inputs, previous.as_ref(), progress)?;
            write_ann(&mut out.set, &gen_dir, config.hnsw_min_vectors)?;
            out.set.write(&gen_dir)?;
            let info = VectorsInfo {
                identity_key: out.set.meta.identity_key.clone(),
                model: e.identity().model.clone(),
                dim: out.set.meta.dim,
                embedded: out.set.len() as u64,
                pending: 0,
            };
            (Some(info), out.embedded, out.reused)
        }
        None => (None, 0, 0),
    };

    let files_json = serde_json::to_vec(&snapshot).unwrap_or_default();
    let files_path = gen_dir.join("files.json");
    write_atomic(&files_path, &files_json)?;
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        lexicon_version: crate::analysis::LEXICON_VERSION,
        writer: format!("docfuse {}", env!("CARGO_PKG_VERSION")),
        generation,
        generation_dir: gen_name.clone(),
        created_unix_ms: now_ms(),
        source: spec,
        config: *config,
        config_hash: config.hash(),
        collection: CollectionShape {
            documents: total,
            chunks: stats.chunks,
            avg_field_len: stats.avg_field_len,
        },
        snapshot_hash: snapshot.hash(),
        files_sha256: crate::hashing::sha256_hex(&files_json),
        vectors,
        seal: String::new(),
    };
    write_atomic(
        &index_dir.join(crate::store::MANIFEST_FILE),
        &manifest.sealed_json(),
    )?;
    remove_old_generations(index_dir, generation);
    Ok(BuildReport {
        documents: total,
        chunks: stats.chunks,
        warnings,
        generation,
        embedded,
        reused,
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// Builds and dumps an HNSW graph when the collection is large enough for it to pay,
/// recording the graph files' sha256 in the vector metadata.
#[cfg(feature = "embeddings")]
fn write_ann(set: &mut crate::vector::VectorSet, gen_dir: &Path, min: usize) -> Result<()> {
    use crate::vector::{hnsw_files, HnswIndex};
    if set.len() < min {
        return Ok(());
    }
    HnswIndex::build(set).dump(gen_dir)?;
    let mut shas = Vec::new();
    for f in hnsw_files(gen_dir) {
        let bytes = std::fs::read(&f).map_err(|e| Error::io("read", &f, e))?;
        shas.push(crate::hashing::sha256_hex(&bytes));
    }
    set.meta.hnsw_sha256 = Some(shas);
    Ok(())
}

#[cfg(not(feature = "embeddings"))]
fn write_ann(_: &mut crate::vector::VectorSet, _: &Path, _: usize) -> Result<()> {
    Ok(())
}

/// The vectors of the currently published generation, if any can be read.
fn previous_vectors(index_dir: &Path) -> Option<crate::vector::VectorSet> {
    let m = Manifest::load(index_dir).ok()?;
    m.vectors.as_ref()?;
    match crate::vector::VectorSet::read(&index_dir.join(&m.generation_dir)) {
        Ok(v) => Some(v),
        Err(e) => {
            tracing::warn!("previous vectors unusable, embedding everything again: {e}");
            None
        }
    }
}

/// A document ready to chunk, with its snapshot entry.
struct Loaded {
    doc: SourceDoc,
    entry: FileEntry,
}

fn load_source(
    source: &Source,
    config: &IndexConfig,
    warnings: &mut Vec<Warning>,
) -> Result<(SourceSpec, Vec<Loaded>)> {
    match source {
        Source::Roots(roots) => load_roots(roots, config, warnings),
        Source::Jsonl(path) => {
            let abs = absolute(path)?;
            let docs = read_jsonl(&abs, warnings)?;
            if docs.is_empty() {
                return Err(Error::Config(format!(
                    "no `{{\"_id\", \"title\", \"text\"}}` record in `{}`",
                    path.display()
                )));
            }
            let meta = std::fs::metadata(&abs).map_err(|e| Error::io("stat", &abs, e))?;
            let loaded = docs
                .into_iter()
                .map(|doc| Loaded {
                    entry: FileEntry {
                        root: 0,
                        rel_path: doc.rel_path.clone(),
                        size: meta.len(),
                        mtime_ns: crate::discover::mtime_ns(&meta),
                        sha256: crate::hashing::sha256_hex(doc.text.as_bytes()),
                        chunks: 0,
                    },
                    doc,
                })
                .collect();
            let file = abs.to_string_lossy().into_owned();
            Ok((SourceSpec::Jsonl { file }, loaded))
        }
    }
}

fn load_roots(
    roots: &[PathBuf],
    config: &IndexConfig,
    warnings: &mut Vec<Warning>,
) -> Result<(SourceSpec, Vec<Loaded>)> {
    if roots.is_empty() {
        return Err(Error::Config(
            "no root to index\nhint: pass one or more folders".into(),
        ));
    }
    let abs: Vec<PathBuf> = roots.iter().map(|r| absolute(r)).collect::<Result<_>>()?;
    let (files, mut found_warnings) = discover(&abs)?;
    warnings.append(&mut found_warnings);
    let mut loaded = Vec::with_capacity(files.len());
    for f in files {
        let Some(read) = read_text(&f.path, config.max_file_bytes, warnings) else {
            continue;
        };
        loaded.push(Loaded {
            doc: SourceDoc {
                rel_path: f.rel_path.clone(),
                text: read.text,
                kind: f.kind,
                title_hint: None,
            },
            entry: FileEntry {
                root: f.root,
                rel_path: f.rel_path,
                size: f.size,
                mtime_ns: f.mtime_ns,
                sha256: read.sha256,
                chunks: 0,
            },
        });
    }
    if loaded.is_empty() {
        let list: Vec<String> = roots.iter().map(|r| format!("`{}`", r.display())).collect();
        return Err(Error::Config(format!(
            "no readable .md, .markdown, .mdx or .txt file under {}\nhint: check the path, or a .gitignore that excludes the files",
            list.join(", ")
        )));
    }
    let roots = abs
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    Ok((SourceSpec::Roots { roots }, loaded))
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(path).map_err(|source| Error::Root {
        path: path.to_path_buf(),
        source,
    })
}

/// One more than the highest generation in the manifest or among `gen-*` folders.
fn next_generation(index_dir: &Path) -> u64 {
    let from_manifest = Manifest::load(index_dir).map(|m| m.generation).unwrap_or(0);
    let from_dirs = generation_dirs(index_dir)
        .into_iter()
        .map(|(g, _)| g)
        .max()
        .unwrap_or(0);
    from_manifest.max(from_dirs) + 1
}

fn generation_dirs(index_dir: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(index_dir) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let g = name.strip_prefix("gen-")?.parse::<u64>().ok()?;
            Some((g, e.path()))
        })
        .collect()
}

/// Removes generations older than the previous one (a reader that opened the previous
/// manifest moments ago can still finish).
fn remove_old_generations(index_dir: &Path, current: u64) {
    for (g, path) in generation_dirs(index_dir) {
        if g + 1 < current {
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::warn!("cannot remove old generation `{}`: {e}", path.display());
            }
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
