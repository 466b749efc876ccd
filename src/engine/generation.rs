//! Writing one generation: chunk → project → lexical index → vectors → snapshot → publish
//! (atomic manifest replacement), and the generation folders' life cycle.

use super::build::{BuildOptions, Phase, Progress};
use super::embedding::{embed_all, EmbedLimits};
use super::source::{write_sources, Loaded};
use crate::chunk::chunk_document;
use crate::embed::embedding_input;
use crate::error::{Error, Result};
use crate::lexical::LexicalWriter;
use crate::projection::project;
use crate::store::{
    write_atomic, CollectionShape, Manifest, Snapshot, SourceSpec, VectorsInfo, SCHEMA_VERSION,
};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// File of a generation listing `(chunk id, content hash)` in ordinal order.
pub const CHUNKS_FILE: &str = "chunks.json";

/// What writing a generation produced.
pub(super) struct Written {
    pub generation: u64,
    pub documents: u64,
    pub chunks: Vec<(String, String)>,
    pub embedded: u64,
    pub reused: u64,
    pub pending: u64,
}

/// Test hook: when `DOCFUSE_TEST_PAUSE_AFTER` names `step`, sleep for
/// `DOCFUSE_TEST_PAUSE_MS` (default 60000) ms, so a crash test can kill the process there.
pub(super) fn pause_point(step: &str) {
    if std::env::var("DOCFUSE_TEST_PAUSE_AFTER").as_deref() == Ok(step) {
        eprintln!("docfuse: paused after `{step}`");
        let ms = std::env::var("DOCFUSE_TEST_PAUSE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60_000);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Writes a new generation of `docs` into `index_dir` and publishes it.
pub(super) fn write_generation(
    index_dir: &Path,
    spec: SourceSpec,
    docs: Vec<Loaded>,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Written> {
    let config = &opts.config;
    let published = Manifest::load(index_dir).ok().map(|m| m.generation);
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
    let mut chunk_hashes = Vec::new();
    let mut loaded = docs;
    // With several roots, the same relative path can exist twice: ids name the root.
    let multi_root = matches!(&spec, SourceSpec::Roots { roots } if roots.len() > 1);
    for (i, d) in loaded.iter_mut().enumerate() {
        let chunks = chunk_document(&d.doc, &config.chunker);
        d.entry.chunks = chunks.len() as u32;
        for mut chunk in chunks {
            if multi_root {
                chunk.id = format!("{}:{}", d.entry.root, chunk.id);
            }
            if opts.embedder.is_some() {
                inputs.push(embedding_input(
                    title_for_embedding(&chunk.title, &chunk.rel_path),
                    &chunk.heading_path,
                    &chunk.body,
                ));
            }
            let entry = project(chunk, d.entry.root);
            chunk_hashes.push((entry.stored.id.clone(), entry.stored.hash.clone()));
            writer.add(&entry)?;
        }
        snapshot.files.push(d.entry.clone());
        progress(Progress {
            phase: Phase::Indexing,
            done: i as u64 + 1,
            total,
        });
    }
    let stats = writer.finish()?;
    pause_point("lexical");
    let roots = match &spec {
        SourceSpec::Roots { roots } => roots.clone(),
        SourceSpec::Jsonl { file } => vec![file.clone()],
    };
    write_sources(&gen_dir, &roots, &loaded)?;
    let chunks_json = serde_json::to_vec(&chunk_hashes).unwrap_or_default();
    write_atomic(&gen_dir.join(CHUNKS_FILE), &chunks_json)?;

    let (vectors, embedded, reused, pending) = match opts.embedder {
        Some(e) => {
            let previous = previous_vectors(index_dir);
            let limits = EmbedLimits {
                max_chunks: opts.max_chunks,
                max_seconds: opts.max_seconds,
            };
            let mut out = embed_all(e, &inputs, previous.as_ref(), index_dir, limits, progress)?;
            pause_point("vectors");
            write_ann(&mut out.set, &gen_dir, config.hnsw_min_vectors)?;
            out.set.write(&gen_dir)?;
            let info = VectorsInfo {
                identity_key: out.set.meta.identity_key.clone(),
                model: e.identity().model.clone(),
                dim: out.set.meta.dim,
                embedded: out.set.len() as u64 - out.pending,
                pending: out.pending,
            };
            (Some(info), out.embedded, out.reused, out.pending)
        }
        None => (None, 0, 0, 0),
    };

    let files_json = serde_json::to_vec(&snapshot).unwrap_or_default();
    write_atomic(&gen_dir.join("files.json"), &files_json)?;
    let mut manifest = Manifest {
        schema_version: SCHEMA_VERSION,
        lexicon_version: crate::analysis::LEXICON_VERSION,
        writer: format!("docfuse {}", env!("CARGO_PKG_VERSION")),
        generation,
        generation_dir: gen_name,
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
    pause_point("before-publish");
    write_atomic(
        &index_dir.join(crate::store::MANIFEST_FILE),
        &manifest.sealed_json(),
    )?;
    pause_point("published");
    super::embedding::clear_cache(index_dir);
    remove_old_generations(index_dir, generation, published);
    Ok(Written {
        generation,
        documents: total,
        chunks: chunk_hashes,
        embedded,
        reused,
        pending,
    })
}

/// The title that goes into a chunk's embedding input: none when it is only the file
/// stem (a file without front-matter title or H1), so renaming such a file changes no
/// embedding hash and re-embeds nothing.
fn title_for_embedding<'a>(title: &'a str, rel_path: &str) -> &'a str {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    if title == stem {
        ""
    } else {
        title
    }
}

/// The `(id, hash)` list of the published generation, if readable.
pub(super) fn previous_chunks(index_dir: &Path, m: &Manifest) -> Option<Vec<(String, String)>> {
    let bytes = std::fs::read(index_dir.join(&m.generation_dir).join(CHUNKS_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
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

/// Removes every generation but the current one and the one published before it (a
/// reader that opened the previous manifest moments ago can still finish; open files stay
/// readable on Unix). Folders left by crashed builds go too.
fn remove_old_generations(index_dir: &Path, current: u64, previous: Option<u64>) {
    for (g, path) in generation_dirs(index_dir) {
        if g != current && Some(g) != previous {
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
