//! Writing one generation folder — chunk → project → lexical index → vectors → snapshot
//! — or linking one that differs from the published generation only in file metadata;
//! then publishing it (the manifest, listing every file of the folder with its size and
//! sha256, replaced atomically), and the generation folders' life cycle. A folder that
//! was not published is removed, whatever stopped the write.

use super::carry::{build_all, Carry};
use super::embedding::{
    drop_empty_cache, embed_all, EmbedInput, EmbedLimits, VectorLookup, VectorSource,
};
use super::hooks::pause_point;
use super::layout::{bucket_chunks_for, Step, MAX_BUCKET_BYTES};
use super::options::{BuildOptions, Phase, Progress};
use super::plan::Plan;
use crate::chunk::{chunk_document_with_links, Chunked, SourceDoc};
use crate::error::{Error, Result};
use crate::generation::{generation_dirs, Previous, CHUNKS_FILE, FILES_FILE};
use crate::generation::{graph_unchanged, link_graph, write_graph};
use crate::generation::{sources_name, write_sources, SOURCES_DIR};
use crate::graph::DocLinks;
use crate::lexical::{LexicalWriter, Prepared};
use crate::projection::{chunk_embedding_input, project};
use crate::store::{
    list_contents, write_atomic, CollectionShape, EmbeddingsState, GenerationFile, Manifest,
    Snapshot, SourceSpec, VectorsInfo,
};
use crate::vector::VectorSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What writing a generation produced.
pub(super) struct Written {
    pub chunks: Vec<(String, String)>,
    pub embedded: u64,
    pub reused: u64,
    pub pending: u64,
    pub vectors_unavailable: Option<String>,
    pub embedder_changed: Option<String>,
    pub buckets_kept: u64,
    pub buckets_written: u64,
}

/// A generation written into an index folder and not yet published: what
/// [`super::IndexStore::publish`] takes. Dropped unpublished, its folder is removed.
pub struct Staged {
    gen: NewGeneration,
    manifest: Manifest,
    snapshot: Snapshot,
    known: HashMap<String, GenerationFile>,
}

impl Staged {
    /// The generation number it gets in its folder when published.
    pub fn generation(&self) -> u64 {
        self.gen.generation
    }

    /// The index folder it was written in.
    pub fn index_dir(&self) -> &Path {
        &self.gen.index_dir
    }
}

/// A generation folder being written: removed on drop unless published.
struct NewGeneration {
    generation: u64,
    name: String,
    dir: PathBuf,
    index_dir: PathBuf,
    published: bool,
}

impl NewGeneration {
    fn create(index_dir: &Path) -> Result<Self> {
        let generation = next_generation(index_dir);
        let name = format!("gen-{generation:06}");
        let dir = index_dir.join(&name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| Error::io("remove stale", &dir, e))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("create", &dir, e))?;
        Ok(NewGeneration {
            generation,
            name,
            dir,
            index_dir: index_dir.to_path_buf(),
            published: false,
        })
    }
}

impl Drop for NewGeneration {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.dir);
            drop_empty_cache(&self.index_dir);
        }
    }
}

/// Writes a new generation of `plan` into `index_dir`, staged for publishing. Buckets of
/// the previous generation whose documents did not change are carried over (segment and
/// sources files linked, each chunk's vector found by the hash recorded at its previous
/// ordinal); the other documents are chunked and indexed; vectors the previous generation
/// and the resumable cache lack are asked of the store (`lookup`) before any is embedded.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_generation(
    index_dir: &Path,
    mut plan: Plan,
    previous: Option<&Previous>,
    (previous_chunks, previous_links): (&[(String, String)], Option<Vec<DocLinks>>),
    older_vectors: Option<(VectorSet, VectorsInfo)>,
    lookup: &mut VectorLookup<'_>,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Written, Staged)> {
    let gen = NewGeneration::create(index_dir)?;
    let lex_dir = gen.dir.join("lexical");
    std::fs::create_dir_all(&lex_dir).map_err(|e| Error::io("create", &lex_dir, e))?;
    let old = previous.and_then(previous_vectors).or(older_vectors);
    let bucket_chunks = opts
        .bucket_chunks
        .or_else(super::hooks::bucket_chunks)
        .unwrap_or_else(|| {
            let bytes = plan.docs.iter().map(|d| d.entry.size).sum();
            let before = previous.map(|p| {
                let bytes = p.snapshot.files.iter().map(|f| f.size).sum();
                (p.manifest.collection.chunks, bytes)
            });
            bucket_chunks_for(bytes, before)
        })
        .max(1);
    let mut carry = Carry::of(
        previous,
        &plan,
        previous_chunks,
        old.as_ref().map(|(v, _)| v),
        opts,
    );
    let steps = match &carry {
        Some(c) => c.steps(&plan, bucket_chunks),
        None => build_all(plan.docs.len()),
    };
    let keeps = steps.iter().any(|s| matches!(s, Step::Keep { .. }));
    if let (Some(c), true) = (carry.as_mut(), keeps) {
        c.links = previous_links;
    }
    // where the lexical index starts from: the previous one, less the buckets not kept
    let kept = kept_ids(&steps);
    let update = match (&carry, keeps) {
        (Some(c), true) => Some(c.previous.gen_dir.join("lexical")),
        _ => None,
    };
    let mut out = Indexed::default();
    let mut updates: Vec<DocUpdate> = vec![DocUpdate::default(); plan.docs.len()];
    let total = plan.docs.len() as u64;
    let build_docs: Vec<usize> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Build { docs } => Some(docs.clone()),
            Step::Keep { .. } => None,
        })
        .flatten()
        .collect();
    // Chunking and analysis run on a second thread, ahead of tantivy's indexing and the
    // bucket commits (and of the writer's start: linking the kept segments' files).
    let plan_ref = &plan;
    let writer = std::thread::scope(|scope| -> Result<LexicalWriter> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<DocWork>>(64);
        scope.spawn(move || {
            for p in build_docs {
                let work = prepare_doc(plan_ref, p, previous, opts);
                let failed = work.is_err();
                if tx.send(work).is_err() || failed {
                    break;
                }
            }
        });
        let mut writer = match &update {
            Some(previous_lexical) => LexicalWriter::update(&lex_dir, previous_lexical, &kept)?,
            None => LexicalWriter::create(&lex_dir)?,
        };
        for step in &steps {
            match step {
                Step::Keep {
                    bucket,
                    previous_first,
                    docs,
                } => {
                    let Some(c) = carry.as_ref() else {
                        return Err(Error::Config(
                            "internal: a kept bucket without a previous generation".into(),
                        ));
                    };
                    writer.keep(bucket.id)?;
                    let ords = *previous_first..*previous_first + bucket.chunks;
                    keep_bucket(
                        c,
                        plan_ref,
                        docs.clone(),
                        ords,
                        opts,
                        &mut out,
                        &mut updates,
                    )?;
                }
                Step::Build { docs } => {
                    // the source bytes of the bucket being written
                    let mut bucket_bytes = 0u64;
                    for p in docs.clone() {
                        let work = rx.recv().map_err(|_| {
                            Error::Config("internal: the chunking thread stopped".into())
                        })??;
                        let u = &mut updates[p];
                        u.chunks = work.prepared.len() as u32;
                        u.text = work.text;
                        u.links = work.links;
                        out.chunks.extend(work.ids);
                        out.inputs.extend(work.inputs);
                        for e in work.prepared {
                            writer.add_prepared(e)?;
                        }
                        u.bucket = Some(writer.file_done());
                        bucket_bytes += plan_ref.docs[p].entry.size;
                        if writer.open_chunks() >= bucket_chunks || bucket_bytes >= MAX_BUCKET_BYTES
                        {
                            writer.close_bucket()?;
                            bucket_bytes = 0;
                            pause_point("bucket");
                        }
                        progress(Progress {
                            phase: Phase::Indexing,
                            done: p as u64 + 1,
                            total,
                        });
                    }
                    writer.close_bucket()?;
                    pause_point("bucket");
                }
            }
            if let Step::Keep { docs, .. } = step {
                progress(Progress {
                    phase: Phase::Indexing,
                    done: docs.end as u64,
                    total,
                });
            }
        }
        Ok(writer)
    })?;
    let links: Vec<DocLinks> = updates
        .iter_mut()
        .map(|u| std::mem::take(&mut u.links))
        .collect();
    for (d, u) in plan.docs.iter_mut().zip(updates) {
        u.apply(d);
    }
    let chunks = &out.chunks;
    let gen_dir = gen.dir.as_path();
    let (stats, known) = std::thread::scope(|scope| -> Result<_> {
        // the chunk list (megabytes on a large site) is written and hashed meanwhile
        // (written here, at the join, when no thread can be started)
        let chunk_list = std::thread::Builder::new()
            .name("docfuse-chunk-list".into())
            .spawn_scoped(scope, move || write_chunk_list(gen_dir, chunks))
            .ok();
        let stats = writer.finish()?;
        tracing::debug!(
            "lexical buckets: {} kept, {} written",
            stats.buckets_kept,
            stats.buckets_written
        );
        let mut known = carry
            .as_ref()
            .map(|c| linked_files(&c.previous.manifest, &kept))
            .unwrap_or_default();
        let same_graph = carry.as_ref().is_some_and(|c| {
            graph_unchanged(
                c.previous,
                c.links.as_deref(),
                c.chunks,
                &plan.docs,
                &links,
                &out.chunks,
            )
        });
        drop(carry);
        pause_point("lexical");
        write_sources(
            &gen.dir,
            &mut plan.docs,
            &kept,
            previous.map(|p| p.gen_dir.as_path()),
        )?;
        crate::generation::write_copies(&gen.dir, &plan.docs, &links)?;
        match previous.filter(|_| same_graph) {
            Some(prev) => {
                for f in link_graph(prev, &gen.dir)? {
                    known.insert(f.path.clone(), f);
                }
            }
            None => {
                let roots = match (&opts.link_roots, &plan.spec) {
                    (Some(r), _) => r.clone(),
                    (None, SourceSpec::Roots { roots }) => roots.clone(),
                    (None, _) => Vec::new(),
                };
                write_graph(&gen.dir, &plan.docs, links, &out.chunks, &roots)?;
            }
        }
        pause_point("graph");
        let file = match chunk_list {
            Some(h) => h.join().map_err(|_| {
                Error::Config("internal: the chunk list's writer panicked".into())
            })??,
            None => write_chunk_list(gen_dir, chunks)?,
        };
        known.insert(file.path.clone(), file);
        Ok((stats, known))
    })?;
    let vectors = write_vectors(
        index_dir,
        &gen.dir,
        &out.inputs,
        old,
        lookup,
        opts,
        progress,
    )?;
    let snapshot = Snapshot {
        files: plan.docs.iter().map(|d| d.entry.clone()).collect(),
    };
    let manifest = Manifest {
        collection: CollectionShape {
            documents: total,
            chunks: stats.chunks,
            avg_field_len: stats.avg_field_len,
        },
        vectors: vectors.info.clone(),
        embeddings: EmbeddingsState {
            wanted: opts.wants_vectors(),
            unavailable: vectors.unavailable.clone(),
        },
        ..base_manifest(&plan, opts, &snapshot)
    };
    let written = Written {
        chunks: out.chunks,
        embedded: vectors.embedded,
        reused: vectors.reused,
        pending: vectors.pending,
        vectors_unavailable: vectors.unavailable,
        embedder_changed: vectors.embedder_changed,
        buckets_kept: stats.buckets_kept,
        buckets_written: stats.buckets_written,
    };
    let staged = Staged {
        gen,
        manifest,
        snapshot,
        known,
    };
    Ok((written, staged))
}

/// The ids of the previous buckets that `steps` keep.
fn kept_ids(steps: &[Step]) -> std::collections::HashSet<u64> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Keep { bucket, .. } => Some(bucket.id),
            Step::Build { .. } => None,
        })
        .collect()
}

/// Writes the chunk list `chunks` as [`CHUNKS_FILE`] into `gen_dir`; returns its entry
/// in the manifest's contents (so it is not read back to be hashed).
///
/// # Errors
/// [`Error::Io`] when it cannot be written.
fn write_chunk_list(gen_dir: &Path, chunks: &[(String, String)]) -> Result<GenerationFile> {
    let bytes = serde_json::to_vec(chunks).unwrap_or_default();
    write_atomic(&gen_dir.join(CHUNKS_FILE), &bytes)?;
    Ok(GenerationFile {
        path: CHUNKS_FILE.to_string(),
        size: bytes.len() as u64,
        sha256: crate::hashing::sha256_hex(&bytes),
    })
}

/// What the indexing loop gathers, in ordinal order.
#[derive(Default)]
struct Indexed {
    /// `(chunk id, content hash)` of every chunk.
    chunks: Vec<(String, String)>,
    /// Every chunk's embedding input (when vectors are wanted).
    inputs: Vec<EmbedInput>,
}

/// What indexing changes in a document's snapshot entry (applied once the plan is no
/// longer shared with the chunking thread).
#[derive(Debug, Clone, Default)]
struct DocUpdate {
    chunks: u32,
    bucket: Option<u64>,
    /// The previous generation's record, for a document of a kept bucket.
    record: Option<(u64, u64)>,
    /// The text of a carried document that was chunked again.
    text: Option<String>,
    /// The document's links as written (taken before `apply`).
    links: DocLinks,
}

impl DocUpdate {
    fn apply(self, d: &mut crate::generation::Loaded) {
        d.entry.chunks = self.chunks;
        d.entry.bucket = self.bucket;
        if self.record.is_some() {
            d.entry.record = self.record;
        }
        if let Some(t) = self.text {
            d.doc.text = t;
        }
    }
}

/// Carries a kept bucket's chunks (previous ordinals `ords`) and its documents' snapshot
/// entries over.
fn keep_bucket(
    c: &Carry<'_>,
    plan: &Plan,
    docs: std::ops::Range<usize>,
    ords: std::ops::Range<u64>,
    opts: &BuildOptions,
    out: &mut Indexed,
    updates: &mut [DocUpdate],
) -> Result<()> {
    let names = crate::generation::root_names(&plan.spec);
    let internal = |what: &str| Error::Config(format!("internal: a kept bucket {what}"));
    for p in docs {
        let d = &plan.docs[p];
        let root = names.get(d.entry.root).map_or("", String::as_str);
        let old = c
            .previous
            .position(root, &d.entry.rel_path)
            .and_then(|j| c.previous.snapshot.files.get(j))
            .ok_or_else(|| internal("names a file the previous snapshot lacks"))?;
        if old.bucket.is_none() || old.record.is_none() {
            return Err(internal("holds a file without a sources record"));
        }
        updates[p] = DocUpdate {
            chunks: old.chunks,
            bucket: old.bucket,
            record: old.record,
            text: None,
            links: kept_links(c, plan, p, opts)?,
        };
    }
    for o in ords {
        let chunk = c
            .chunks
            .get(o as usize)
            .ok_or_else(|| internal("reaches past the previous chunk list"))?;
        out.chunks.push(chunk.clone());
        if opts.wants_vectors() {
            out.inputs.push(EmbedInput::Hash(c.vector_hash(o)));
        }
    }
    Ok(())
}

/// The links (and chunk fingerprints) of document `p` of a kept bucket: the previous
/// generation's record of them, or — for an index written before links or fingerprints
/// were kept — extracted from its text again.
fn kept_links(c: &Carry<'_>, plan: &Plan, p: usize, opts: &BuildOptions) -> Result<DocLinks> {
    let d = &plan.docs[p];
    let names = crate::generation::root_names(&plan.spec);
    let root = names.get(d.entry.root).map_or("", String::as_str);
    let recorded = c
        .previous
        .position(root, &d.entry.rel_path)
        .and_then(|j| {
            let chunks = c.previous.snapshot.files.get(j)?.chunks as usize;
            Some((c.links.as_ref()?.get(j)?, chunks))
        })
        // a document of a generation without fingerprints (`copies.json`) is read again
        .filter(|(l, chunks)| !d.is_prose() || l.bodies.len() == *chunks)
        .map(|(l, _)| l);
    if let Some(links) = recorded {
        return Ok(links.clone());
    }
    let text = carried_text(plan, d, Some(c.previous), opts)?;
    let doc = SourceDoc {
        text,
        ..d.doc.clone()
    };
    let mut chunked = chunk_document_with_links(&doc, &opts.config.chunker);
    let chunks = std::mem::take(&mut chunked.chunks);
    let mut links = doc_graph_links(chunked);
    links.bodies = copy_fingerprints(&chunks);
    Ok(links)
}

/// Each chunk's `chunk::copy_fingerprint` (its own heading and text), in order.
fn copy_fingerprints(chunks: &[crate::chunk::Chunk]) -> Vec<u64> {
    chunks
        .iter()
        .map(|c| {
            let heading = c.heading_path.last().map_or("", String::as_str);
            crate::chunk::copy_fingerprint(heading, &c.body)
        })
        .collect()
}

/// What the graph keeps of a chunked document: its links, audience and names.
fn doc_graph_links(chunked: Chunked) -> DocLinks {
    DocLinks {
        for_agents: chunked.for_agents,
        names: chunked.names,
        routes: chunked.routes,
        anchors: chunked.anchors,
        labels: chunked.labels,
        symbols: chunked.symbols,
        ..DocLinks::of(chunked.links)
    }
}

/// The text of a carried document: its record in the previous generation, or — when
/// that cannot be read — the file itself, read again (if it still has the same content).
///
/// # Errors
/// The record's error when neither can be read.
fn carried_text(
    plan: &Plan,
    d: &crate::generation::Loaded,
    previous: Option<&Previous>,
    opts: &BuildOptions,
) -> Result<String> {
    let err = match previous.map(|prev| prev.text_of(&d.entry)) {
        Some(Ok(t)) => return Ok(t),
        Some(Err(e)) => e,
        None => {
            return Err(Error::Config(
                "internal: a carried document without a previous generation".into(),
            ))
        }
    };
    let names = crate::generation::root_names(&plan.spec);
    let Some(root) = names.get(d.entry.root) else {
        return Err(err);
    };
    let path = Path::new(root).join(&d.entry.rel_path);
    tracing::warn!("{err}; reading `{}` again", path.display());
    let mut warnings = Vec::new();
    match crate::discover::read_checked(&path, opts.config.max_file_bytes, &mut warnings) {
        Ok(t) if t.sha256 == d.entry.sha256 => Ok(t.text),
        _ => Err(err),
    }
}

/// One document chunked and analysed, ready for the lexical writer.
struct DocWork {
    /// The text read from the previous generation for a carried document.
    text: Option<String>,
    prepared: Vec<Prepared>,
    ids: Vec<(String, String)>,
    inputs: Vec<EmbedInput>,
    /// The document's links as written.
    links: DocLinks,
}

/// Chunks and analyses document `p` of the plan (reading a carried document's text from
/// the previous generation).
fn prepare_doc(
    plan: &Plan,
    p: usize,
    previous: Option<&Previous>,
    opts: &BuildOptions,
) -> Result<DocWork> {
    // With several roots, the same relative path can exist twice: ids name the root.
    let multi_root = matches!(&plan.spec, SourceSpec::Roots { roots } if roots.len() > 1);
    let d = &plan.docs[p];
    let mut text = None;
    if d.carried && d.doc.text.is_empty() {
        text = Some(carried_text(plan, d, previous, opts)?);
    }
    let doc = match &text {
        Some(t) => std::borrow::Cow::Owned(crate::chunk::SourceDoc {
            text: t.clone(),
            ..d.doc.clone()
        }),
        None => std::borrow::Cow::Borrowed(&d.doc),
    };
    let mut chunked = chunk_document_with_links(&doc, &opts.config.chunker);
    if chunked.links.len() >= crate::chunk::MAX_LINKS {
        tracing::warn!(
            "`{}` has more than {} links: the documentation graph keeps the first {}",
            d.entry.rel_path,
            crate::chunk::MAX_LINKS,
            crate::chunk::MAX_LINKS
        );
    }
    let chunks = std::mem::take(&mut chunked.chunks);
    let mut links = doc_graph_links(chunked);
    links.bodies = copy_fingerprints(&chunks);
    let mut work = DocWork {
        links,
        text,
        prepared: Vec::with_capacity(chunks.len()),
        ids: Vec::with_capacity(chunks.len()),
        inputs: Vec::new(),
    };
    for mut chunk in chunks {
        if multi_root {
            chunk.id = format!("{}:{}", d.entry.root, chunk.id);
        }
        if opts.wants_vectors() {
            work.inputs
                .push(EmbedInput::Text(chunk_embedding_input(&chunk)));
        }
        let entry = project(chunk, d.entry.root);
        work.ids
            .push((entry.stored.id.clone(), entry.stored.hash.clone()));
        work.prepared.push(Prepared::of(&entry)?);
    }
    Ok(work)
}

/// The previous generation's files that the new one holds as hard links: tantivy
/// segment files (named by segment id, never rewritten) and the sources files of the
/// `kept` buckets. Their recorded sha256 holds for the links.
fn linked_files(
    prev: &Manifest,
    kept: &std::collections::HashSet<u64>,
) -> HashMap<String, GenerationFile> {
    let segment = |name: &str| {
        name.len() > 33
            && name.as_bytes()[32] == b'.'
            && name[..32].bytes().all(|b| b.is_ascii_hexdigit())
    };
    let sources: std::collections::HashSet<String> = kept
        .iter()
        .map(|&id| format!("{}/{}", SOURCES_DIR, sources_name(Some(id))))
        .collect();
    prev.contents
        .iter()
        .filter(|f| {
            f.path.strip_prefix("lexical/").is_some_and(segment) || sources.contains(&f.path)
        })
        .map(|f| (f.path.clone(), f.clone()))
        .collect()
}

/// Publishes a generation that differs from `previous` only in file metadata (sizes,
/// mtimes), partial records or skip counts: every file of the previous generation is
/// hard-linked (copied where links fail) and only the snapshot is written anew.
pub(super) fn link_generation(
    index_dir: &Path,
    plan: &Plan,
    previous: &Previous,
    opts: &BuildOptions,
    unavailable: Option<String>,
) -> Result<Staged> {
    let gen = NewGeneration::create(index_dir)?;
    link_tree(&previous.gen_dir, &gen.dir, Path::new(FILES_FILE))?;
    let old = &previous.snapshot.files;
    let aligned = old.len() == plan.docs.len()
        && old
            .iter()
            .zip(&plan.docs)
            .all(|(o, d)| o.root == d.entry.root && o.rel_path == d.entry.rel_path);
    if !aligned {
        return Err(Error::Config(
            "internal: a metadata-only refresh over another set of files".into(),
        ));
    }
    let files = plan
        .docs
        .iter()
        .zip(old)
        .map(|(d, o)| crate::store::FileEntry {
            size: d.entry.size,
            mtime_ns: d.entry.mtime_ns,
            ctime_ns: d.entry.ctime_ns,
            read_ms: d.entry.read_ms,
            ..o.clone()
        })
        .collect();
    let snapshot = Snapshot { files };
    let prev = &previous.manifest;
    let manifest = Manifest {
        collection: prev.collection.clone(),
        vectors: prev.vectors.clone(),
        embeddings: EmbeddingsState {
            wanted: opts.wants_vectors(),
            unavailable,
        },
        ..base_manifest(plan, opts, &snapshot)
    };
    // Linked files keep their recorded sha256; the snapshot is new.
    let known: HashMap<String, GenerationFile> = prev
        .contents
        .iter()
        .filter(|f| f.path != FILES_FILE)
        .map(|f| (f.path.clone(), f.clone()))
        .collect();
    Ok(Staged {
        gen,
        manifest,
        snapshot,
        known,
    })
}

/// The parts of a new manifest that come from the plan and the options.
fn base_manifest(plan: &Plan, opts: &BuildOptions, snapshot: &Snapshot) -> Manifest {
    let mut m = Manifest {
        schema_version: 0,
        lexicon_version: 0,
        chunker_version: 0,
        projection_version: 0,
        input_template_version: 0,
        graph_metrics_version: 0,
        writer: format!("docfuse {}", env!("CARGO_PKG_VERSION")),
        generation: 0,
        generation_dir: String::new(),
        created_unix_ms: plan.started_unix_ms,
        source: plan.spec.clone(),
        config: opts.config,
        config_hash: opts.config.hash(),
        config_overrides: opts.config_overrides.clone(),
        collection: CollectionShape {
            documents: 0,
            chunks: 0,
            avg_field_len: [0.0; crate::config::FIELDS],
        },
        snapshot_hash: snapshot.hash(),
        files_sha256: String::new(),
        vectors: None,
        embeddings: EmbeddingsState::default(),
        partial: plan.partial.clone(),
        skips: plan
            .skips
            .iter()
            .map(|(k, v)| (k.name().to_string(), *v))
            .collect(),
        store_generation: opts.store_generation,
        contents: Vec::new(),
        seal: String::new(),
    };
    m.set_current_versions();
    m
}

/// Writes `files.json`, lists the folder's contents into the manifest and publishes it
/// by replacing `manifest.json`; then removes the resumable cache and old generations.
/// Returns the generation published.
pub(super) fn publish(staged: Staged) -> Result<u64> {
    let Staged {
        mut gen,
        mut manifest,
        snapshot,
        mut known,
    } = staged;
    let files_json = serde_json::to_vec(&snapshot).unwrap_or_default();
    write_atomic(&gen.dir.join(FILES_FILE), &files_json)?;
    let published = crate::store::manifest_generation(&gen.index_dir);
    manifest.generation = gen.generation;
    manifest.generation_dir = gen.name.clone();
    manifest.files_sha256 = crate::hashing::sha256_hex(&files_json);
    known.insert(
        FILES_FILE.to_string(),
        GenerationFile {
            path: FILES_FILE.to_string(),
            size: files_json.len() as u64,
            sha256: manifest.files_sha256.clone(),
        },
    );
    manifest.contents = list_contents(&gen.dir, &known)?;
    // Hard links and new names must be on disk before the manifest names the folder.
    for sub in ["lexical", SOURCES_DIR, ""] {
        crate::store::sync_dir(&gen.dir.join(sub));
    }
    pause_point("before-publish");
    write_atomic(
        &gen.index_dir.join(crate::store::MANIFEST_FILE),
        &manifest.sealed_json(),
    )?;
    gen.published = true;
    pause_point("published");
    super::embedding::clear_cache(&gen.index_dir);
    remove_old_generations(&gen.index_dir, gen.generation, published);
    Ok(gen.generation)
}

/// The vector side of a new generation.
struct Vectors {
    info: Option<VectorsInfo>,
    embedded: u64,
    reused: u64,
    pending: u64,
    unavailable: Option<String>,
    /// Why every chunk was embedded again: the previous vectors' embedder is another.
    embedder_changed: Option<String>,
}

/// Embeds (or, without a model, reuses by hash) the vectors of `inputs` and writes them.
fn write_vectors(
    index_dir: &Path,
    gen_dir: &Path,
    inputs: &[EmbedInput],
    old: Option<(VectorSet, VectorsInfo)>,
    lookup: &mut VectorLookup<'_>,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<Vectors> {
    let none = |unavailable: Option<String>| Vectors {
        info: None,
        embedded: 0,
        reused: 0,
        pending: 0,
        unavailable,
        embedder_changed: None,
    };
    if opts.queue_pending {
        // an earlier build's queue is never published with this one
        crate::generation::write_queue(index_dir, &[])?;
    }
    if !opts.wants_vectors() {
        return Ok(none(None));
    }
    let unavailable = opts.embedder_unavailable.map(str::to_string).or_else(|| {
        opts.embedder
            .is_none()
            .then(|| "no embedder was given".to_string())
    });
    let (source, model) = match (opts.embedder, &old) {
        (Some(e), _) => (VectorSource::Embedder(e), e.identity().model.clone()),
        (None, Some((set, info))) => (VectorSource::ReuseOnly(set), info.model.clone()),
        (None, None) => return Ok(none(unavailable)),
    };
    let limits = EmbedLimits {
        max_chunks: opts.max_chunks,
        max_seconds: opts.max_seconds,
    };
    let embedder_changed = match (opts.embedder, &old) {
        (Some(e), Some((set, info))) if set.meta.identity_key != e.identity().key() => {
            Some(embedder_change(&info.model, &e.identity().model))
        }
        _ => None,
    };
    let old_set = old.as_ref().map(|(s, _)| s);
    let mut out = embed_all(source, inputs, old_set, lookup, index_dir, limits, progress)?;
    if opts.queue_pending {
        crate::generation::write_queue(index_dir, &out.queue)?;
    }
    pause_point("vectors");
    write_ann(&mut out.set, gen_dir, opts.config.hnsw_min_vectors)?;
    out.set.write(gen_dir)?;
    let info = VectorsInfo {
        identity_key: out.set.meta.identity_key.clone(),
        model,
        dim: out.set.meta.dim,
        embedded: (0..out.set.len())
            .filter(|&i| out.set.has_vector(i))
            .count() as u64,
        pending: out.pending,
    };
    Ok(Vectors {
        info: Some(info),
        embedded: out.embedded,
        reused: out.reused,
        pending: out.pending,
        unavailable: opts.embedder.is_none().then_some(unavailable).flatten(),
        embedder_changed,
    })
}

/// Why a build embeds every chunk again, in words: `all-MiniLM-L6-v2 → all-MiniLM-L6-v2-dq`,
/// or, for the same model name, that its files differ.
fn embedder_change(before: &str, now: &str) -> String {
    match before == now {
        true => format!("the embedder changed: {now}'s model, tokenizer or settings differ from those of the previous vectors"),
        false => format!("the embedder changed: {before} → {now}"),
    }
}

/// Builds and dumps an HNSW graph when the collection is large enough for it to pay,
/// recording the graph files' sha256 in the vector metadata.
#[cfg(feature = "embeddings")]
fn write_ann(set: &mut VectorSet, gen_dir: &Path, min: usize) -> Result<()> {
    use crate::vector::{hnsw_files, HnswIndex};
    // counted in chunks, as a database store decides (its moments count chunks)
    if set.len() < min {
        return Ok(());
    }
    HnswIndex::build(set).dump(gen_dir)?;
    let mut shas = Vec::new();
    for f in hnsw_files(gen_dir) {
        let bytes = crate::fsio::read_regular(&f).map_err(|e| Error::io("read", &f, e))?;
        shas.push(crate::hashing::sha256_hex(&bytes));
    }
    set.meta.hnsw_sha256 = Some(shas);
    Ok(())
}

#[cfg(not(feature = "embeddings"))]
fn write_ann(_: &mut VectorSet, _: &Path, _: usize) -> Result<()> {
    Ok(())
}

/// The vectors of the previous generation, if it has readable ones.
fn previous_vectors(prev: &Previous) -> Option<(VectorSet, VectorsInfo)> {
    let info = prev.manifest.vectors.clone()?;
    match VectorSet::read(&prev.gen_dir) {
        Ok(v) => Some((v, info)),
        Err(e) => {
            tracing::warn!("previous vectors unusable, embedding everything again: {e}");
            None
        }
    }
}

/// Hard-links every file of `from` into `to` (same relative paths) but `except`;
/// copies a file when linking fails (another file system).
fn link_tree(from: &Path, to: &Path, except: &Path) -> Result<()> {
    let rd = std::fs::read_dir(from).map_err(|e| Error::io("list", from, e))?;
    for e in rd {
        let e = e.map_err(|e| Error::io("list", from, e))?;
        let src = e.path();
        let name = e.file_name();
        if Path::new(&name) == except {
            continue;
        }
        let dst = to.join(&name);
        let t = e.file_type().map_err(|e| Error::io("stat", &src, e))?;
        if t.is_dir() {
            std::fs::create_dir_all(&dst).map_err(|e| Error::io("create", &dst, e))?;
            link_tree(&src, &dst, Path::new(""))?;
        } else {
            crate::store::link_or_copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// One more than the highest generation in the manifest or among `gen-*` folders.
fn next_generation(index_dir: &Path) -> u64 {
    let from_manifest = crate::store::manifest_generation(index_dir).unwrap_or(0);
    let from_dirs = generation_dirs(index_dir)
        .into_iter()
        .map(|(g, _)| g)
        .max()
        .unwrap_or(0);
    from_manifest.max(from_dirs) + 1
}

/// Removes the generation folders newer than the published one: a build killed before
/// it published leaves its folder behind, and no reader ever opens an unpublished
/// generation. Called with the writer lock held; leaves everything alone when a manifest
/// is there but does not say its generation (an index of another docfuse, a damaged one).
/// Returns how many folders were removed.
pub(super) fn remove_unpublished(index_dir: &Path) -> usize {
    let published = if index_dir.join(crate::store::MANIFEST_FILE).exists() {
        match crate::store::manifest_generation(index_dir) {
            Some(g) => g,
            None => return 0,
        }
    } else {
        0
    };
    let mut removed = 0;
    for (g, path) in generation_dirs(index_dir) {
        if g <= published {
            continue;
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!(
                "cannot remove the unpublished generation `{}` ({e})",
                path.display()
            ),
        }
    }
    if removed > 0 {
        tracing::info!(
            "removed {removed} generation folder(s) an interrupted build left in `{}`",
            index_dir.display()
        );
    }
    removed
}

/// Removes every generation but the current one, the one published before it (a reader
/// that opened the previous manifest moments ago can still finish) and any older one a
/// live reader still holds (see [`crate::generation::reader_in_use`]). Folders left by crashed builds go too.
fn remove_old_generations(index_dir: &Path, current: u64, previous: Option<u64>) {
    for (g, path) in generation_dirs(index_dir) {
        let held = g < current && crate::generation::reader_in_use(index_dir, g);
        if g != current && Some(g) != previous && !held {
            if let Err(e) = std::fs::remove_dir_all(&path) {
                tracing::warn!("cannot remove old generation `{}`: {e}", path.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::remove_unpublished;
    use std::path::Path;

    fn gens(dir: &Path) -> Vec<u64> {
        let mut g: Vec<u64> = crate::generation::generation_dirs(dir)
            .into_iter()
            .map(|(g, _)| g)
            .collect();
        g.sort();
        g
    }

    #[test]
    fn folders_newer_than_the_published_generation_are_removed_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        for g in [2, 3, 4, 5] {
            std::fs::create_dir_all(t.path().join(format!("gen-{g:06}/x"))).unwrap();
        }
        // no manifest: nothing was ever published, every folder is a killed build's
        let none = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(none.path().join("gen-000001")).unwrap();
        assert_eq!(remove_unpublished(none.path()), 1);
        assert!(gens(none.path()).is_empty());
        // a manifest that does not say its generation: left alone
        std::fs::write(t.path().join("manifest.json"), r#"{"format": 99}"#).unwrap();
        assert_eq!(remove_unpublished(t.path()), 0);
        assert_eq!(gens(t.path()), vec![2, 3, 4, 5]);
        std::fs::write(t.path().join("manifest.json"), r#"{"generation": 3}"#).unwrap();
        assert_eq!(remove_unpublished(t.path()), 2);
        assert_eq!(gens(t.path()), vec![2, 3]);
    }
}
