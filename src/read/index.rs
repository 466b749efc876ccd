//! An opened index: [`DocIndex`] holds its parts — the opened generation
//! ([`OpenGeneration`]), the vector side ([`VectorPart`]), the proximity graph
//! ([`ProximityPart`]) and the freshness checks ([`FileChecks`]) — and answers for them.
//! Each part lives in a file of its own and never sees the whole; this file only
//! composes them.

use super::freshness::{FileChecks, FileState, Freshness};
use super::hit::{SearchOptions, SearchResponse};
use super::hybrid::Parts;
use super::opened::OpenGeneration;
use super::proximity::ProximityPart;
use super::remote::{EmbedderInfo, RemoteVectors};
use super::vectors::{PreparedQuery, VectorPart, VectorSide};
use crate::config::QueryParams;
use crate::embed::Embedder;
use crate::error::Result;
use crate::lexical::LexicalIndex;
use crate::store::{FileEntry, Manifest, Snapshot};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An opened, verified index.
pub struct DocIndex {
    vectors: VectorPart,
    proximity: ProximityPart,
    /// Content checks of files whose size or mtime moved, and the last status.
    checks: FileChecks,
    /// Declared last, so dropped last: its reader registration is released only after
    /// the vector files and the graph are closed.
    generation: OpenGeneration,
}

impl DocIndex {
    /// Opens the index in `dir`: verifies the manifest (seal, versions) and the sizes of
    /// the generation's files, then opens its lexical index (read-only, no lock). Vectors
    /// and the embedder are loaded on first vector use.
    ///
    /// # Errors
    /// [`crate::Error::NoIndex`] when `dir` holds no index; [`crate::Error::IndexVersion`] when another
    /// docfuse wrote it; [`crate::Error::Corrupt`] (naming `dir`, with a rebuild hint) when the
    /// manifest or the generation is damaged.
    pub fn open(dir: &Path) -> Result<Self> {
        let (generation, vectors_damage) = OpenGeneration::open(dir)?;
        let vectors = VectorPart::new(&generation, vectors_damage);
        Ok(DocIndex {
            generation,
            vectors,
            proximity: ProximityPart::default(),
            checks: FileChecks::default(),
        })
    }

    fn parts(&self) -> Parts<'_> {
        Parts {
            g: &self.generation,
            v: &self.vectors,
            p: &self.proximity,
            prepared: None,
        }
    }

    /// The opened generation: manifest, lexical index, snapshot.
    pub fn opened(&self) -> &OpenGeneration {
        &self.generation
    }

    /// The freshness checks this index remembers.
    pub(super) fn checks(&self) -> &FileChecks {
        &self.checks
    }

    /// Ranks chunks for `query` in `opts.mode`, best first.
    ///
    /// `auto` answers with hybrid when the vector side is usable, else lexically with the
    /// reason in [`SearchResponse::degraded`].
    ///
    /// # Errors
    /// [`crate::Error::VectorsUnavailable`] for an explicit `vector` or `hybrid` request when the
    /// vector side is not usable; [`crate::Error::Corrupt`]/[`crate::Error::Tantivy`] when the index
    /// cannot be read; [`crate::Error::Embedder`] when the query cannot be embedded. Any query
    /// text is accepted.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResponse> {
        self.parts().search(query, opts)
    }

    /// [`DocIndex::search`] with the query's vector made ahead of it
    /// ([`DocIndex::prepare_query`]): taken instead of embedding when it was made for
    /// `query` by the embedder this index searches with.
    ///
    /// # Errors
    /// As [`DocIndex::search`].
    pub fn search_prepared(
        &self,
        query: &str,
        opts: &SearchOptions,
        prepared: Option<&PreparedQuery>,
    ) -> Result<SearchResponse> {
        Parts {
            prepared,
            ..self.parts()
        }
        .search(query, opts)
    }

    /// Uses `embedder` for queries instead of loading the default one (e.g. to share one
    /// loaded model between indexes). Has no effect after the first vector query. The
    /// embedder is given this index's folded-model cache, which only sessions it has not
    /// made yet use (the first index given to an embedder keeps it).
    pub fn with_embedder(self, embedder: Arc<dyn Embedder>) -> Self {
        self.vectors.with_embedder(&self.generation, embedder);
        self
    }

    /// The embedder loaded for queries, if one has been loaded (or given): to carry a
    /// loaded model over to the next generation of the same index.
    pub fn loaded_embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.vectors.loaded_embedder()
    }

    /// The query's missing words ([`crate::lexical::LexicalRun::missing_words`]) among
    /// the files `keep(root, rel_path)` accepts: what a search under path filters
    /// reports (a word only files outside them hold is missing there).
    ///
    /// # Errors
    /// As [`Self::search`] for the lexical side; [`crate::Error::Corrupt`] when the
    /// snapshot cannot be read.
    pub fn missing_words_in(
        &self,
        query: &str,
        params: &QueryParams,
        keep: &dyn Fn(usize, &str) -> bool,
    ) -> Result<Vec<String>> {
        self.generation.missing_words_in(query, params, keep)
    }

    /// Why the vector files cannot be used (their sizes differ from the manifest), if so.
    pub fn vectors_damage(&self) -> Option<&str> {
        self.vectors.vectors_damage()
    }

    /// True once the embedding model has been loaded (or failed to load).
    pub fn embedder_loaded(&self) -> bool {
        self.vectors.embedder_loaded()
    }

    /// The vectors and the embedder, if both are usable and agree on the identity;
    /// otherwise the reason, for messages and the `degraded` flag. With a store attached
    /// ([`super::remote::attach`]) the vectors are the store's.
    pub fn vector_side(&self) -> std::result::Result<(VectorSide<'_>, &dyn Embedder), String> {
        self.vectors.vector_side(&self.generation)
    }

    /// The embedder of the attached vector store, when one is attached and says.
    pub fn remote_embedder(&self) -> Option<std::result::Result<EmbedderInfo, String>> {
        self.vectors.remote_embedder()
    }

    /// Whether vector and hybrid queries work now: [`DocIndex::vector_side`], and for an
    /// attached store, an answer from it (a round trip).
    ///
    /// # Errors
    /// Why not.
    pub fn vector_usable(&self) -> std::result::Result<(), String> {
        self.vectors.vector_usable(&self.generation)
    }

    /// True when the index answers lexically by choice: built without vectors (a
    /// folder built with `--no-embeddings`, a store whose index has none).
    pub fn lexical_by_choice(&self) -> bool {
        self.vectors.lexical_by_choice(&self.generation)
    }

    /// The generation number callers are told, the one whose text this generation holds:
    /// a database's published generation for a reader's cache, else the manifest's
    /// (see [`VectorPart::generation`](super::vectors::VectorPart::generation)).
    pub fn generation(&self) -> u64 {
        self.vectors.generation(&self.generation)
    }

    /// The vector store attached to this folder, if any.
    pub fn remote_vectors(&self) -> Option<&dyn RemoteVectors> {
        self.vectors.remote_vectors()
    }

    /// The vectors and the vector of `query`, once the embedder is known to be the
    /// index's ([`DocIndex::vector_side`]: files read and identity checked; the ONNX
    /// session is created on the first embedding only): from the query-vector cache when
    /// it holds the query, else embedded (and cached). `Ok(Err(reason))` when the vector
    /// side is not usable.
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] when the query cannot be embedded.
    pub fn query_side(
        &self,
        query: &str,
    ) -> Result<std::result::Result<(VectorSide<'_>, Vec<f32>), String>> {
        self.vectors.query_side(&self.generation, query)
    }

    /// Whether the index has vectors to search, in its folder or in an attached store
    /// (whether they are usable is [`DocIndex::vector_usable`]'s question).
    pub fn has_vectors(&self) -> bool {
        self.manifest().vectors.is_some() || self.remote_vectors().is_some()
    }

    /// `query`'s vector, made ahead of a search of it for [`DocIndex::search_prepared`]
    /// (see [`VectorPart::prepare_query`]); `None` when the vector side is not usable or
    /// the query-vector cache answers without a model.
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] when the query cannot be embedded.
    pub fn prepare_query(&self, query: &str) -> Result<Option<PreparedQuery>> {
        self.vectors.prepare_query(&self.generation, query)
    }

    /// Loads the embedder and makes its query session now (see
    /// [`VectorPart::warm_up`]); `Ok(false)` when the index has no usable vectors.
    ///
    /// # Errors
    /// [`crate::Error::Embedder`] when the model cannot embed.
    pub fn warm_up(&self) -> Result<bool> {
        self.vectors.warm_up(&self.generation)
    }

    pub fn manifest(&self) -> &Manifest {
        self.generation.manifest()
    }

    pub fn dir(&self) -> &Path {
        self.generation.dir()
    }

    /// The folder of the open generation.
    pub fn generation_dir(&self) -> PathBuf {
        self.generation.generation_dir()
    }

    pub fn lexical(&self) -> &LexicalIndex {
        self.generation.lexical()
    }

    /// The folder a hit's `root` index refers to (None for a JSONL source).
    pub fn root_dir(&self, root: usize) -> Option<&str> {
        self.generation.root_dir(root)
    }

    /// The file snapshot of the open generation, verified against the manifest.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when `files.json` is missing, altered or does not parse.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.generation.snapshot()
    }

    /// The snapshot entry of `rel_path` under root `root`.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the snapshot cannot be read.
    pub fn entry(&self, root: usize, rel_path: &str) -> Result<Option<FileEntry>> {
        self.generation.entry(root, rel_path)
    }

    /// The text of an indexed file as it was indexed (from the generation's copy).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the copy cannot be read; `Ok(None)` for a path the
    /// generation does not hold.
    pub fn indexed_text(&self, root: usize, rel_path: &str) -> Result<Option<String>> {
        self.generation.indexed_text(root, rel_path)
    }

    /// The section id an anchor of page `rel_path` (under root `root`, or any) names among the
    /// anchors site generators give it besides its sections' own slugs (another
    /// generator's slug, a MyST target `(label)=`, a `<summary>` line), compared without
    /// case, with the root of the page that has it; `None` when the page has none such or
    /// the generation has no links file.
    pub fn anchor_section(
        &self,
        root: Option<usize>,
        rel_path: &str,
        anchor: &str,
    ) -> Option<(usize, String)> {
        self.generation.anchor_section(root, rel_path, anchor)
    }

    /// The state of indexed file `rel_path` of root `root` on disk now. A file of a JSONL
    /// source is always fresh (its records are served from the index).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the snapshot cannot be read; a path the snapshot
    /// does not hold is [`FileState::Deleted`].
    pub fn file_state(&self, root: usize, rel_path: &str) -> Result<FileState> {
        self.checks.file_state(&self.generation, root, rel_path)
    }

    /// Compares every indexed file with the disk (a walk of the roots, a stat per file,
    /// content hashes only where size, mtime or ctime moved).
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when the snapshot cannot be read.
    pub fn freshness(&self) -> Result<Freshness> {
        self.checks.freshness(&self.generation)
    }
}
