//! Opening a published index; the vector side is loaded lazily, on first use. Readers
//! never write: an index on a read-only disk answers like any other.

use super::freshness::FileChecks;
use super::hit::{Hit, Mode, SearchResponse};
use super::query_cache::QueryCache;
use super::remote::RemoteVectors;
use super::status::EmbedderInfo;
use crate::config::QueryParams;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::fusion::Fusion;
use crate::lexical::{LexicalIndex, LexicalQuery, LexicalRun};
use crate::store::{
    check_sizes, FileEntry, GenerationFile, Manifest, Snapshot, SourceSpec, VectorsInfo,
};
use crate::vector::VectorSearch;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The fusion used when none is given: chosen on the two dev sets and checked on
/// SciFact (see `benches/QUALITY.md`).
pub const DEFAULT_FUSION: Fusion = Fusion::Calibrated {
    alpha: 0.45,
    noise: 0.5,
    tmm: false,
};

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Results wanted (after the floor). Default 10.
    pub limit: usize,
    /// Attach the named score parts to each hit.
    pub explain: bool,
    pub mode: Mode,
    pub params: QueryParams,
    pub fusion: Fusion,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            explain: false,
            mode: Mode::Auto,
            params: QueryParams::default(),
            fusion: DEFAULT_FUSION,
        }
    }
}

/// Loads the embedder for the vector side (the default MiniLM, or one given).
pub type EmbedderSlot = OnceLock<std::result::Result<Arc<dyn Embedder>, String>>;

/// An opened, verified index.
pub struct DocIndex {
    dir: PathBuf,
    manifest: Manifest,
    pub(super) lexical: LexicalIndex,
    vectors: OnceLock<std::result::Result<VectorSearch, String>>,
    embedder: EmbedderSlot,
    /// The installed embedder's identity key, read from the model files once (for
    /// answering cached questions without loading the model).
    installed_key: OnceLock<Option<String>>,
    /// The generation's files.json, read once (a generation never changes).
    snapshot: OnceLock<Snapshot>,
    /// Snapshot entries by (root, rel_path), built on first use.
    by_path: OnceLock<HashMap<(usize, String), usize>>,
    /// The graph for proximity, read on first use (`None`: the generation has none).
    proximity: OnceLock<Option<super::proximity::ProximityGraph>>,
    /// Why the vector files cannot be used (sizes differ from the manifest), if so.
    vectors_damage: Option<String>,
    /// Content checks of files whose size or mtime moved, and the last status.
    pub(super) checks: FileChecks,
    /// This reader's registration, so no refresh deletes the generation under it.
    _reader: Option<super::readers::ReaderMark>,
    /// The vector store attached to this folder ([`super::remote::attach`]), which then
    /// answers the vector side instead of the generation's files.
    remote: Option<Arc<dyn RemoteVectors>>,
}

/// Where a query's vector side is answered.
#[derive(Clone)]
pub enum VectorSide<'a> {
    /// The generation's own vector files.
    Local(&'a VectorSearch),
    /// A store attached to the folder (PostgreSQL + pgvector), and the identity key of
    /// the embedder the query is embedded with (the store refuses vectors of another).
    Remote(&'a dyn RemoteVectors, String),
}

impl DocIndex {
    /// Opens the index in `dir`: verifies the manifest (seal, versions) and the sizes of
    /// the generation's files, then opens its lexical index (read-only, no lock). Vectors
    /// and the embedder are loaded on first vector use.
    ///
    /// # Errors
    /// [`Error::NoIndex`] when `dir` holds no index; [`Error::IndexVersion`] when another
    /// docfuse wrote it; [`Error::Corrupt`] (naming `dir`, with a rebuild hint) when the
    /// manifest or the generation is damaged.
    pub fn open(dir: &Path) -> Result<Self> {
        let manifest = Manifest::load(dir)?;
        // Registered before anything of the generation is read: from here on no refresh
        // deletes it.
        let reader = super::readers::register(dir, manifest.generation);
        let gen = dir.join(&manifest.generation_dir);
        if !gen.is_dir() {
            return Err(Error::corrupt(
                dir,
                format!("generation folder `{}` is missing", manifest.generation_dir),
            ));
        }
        let (vector_files, other_files): (Vec<GenerationFile>, Vec<GenerationFile>) = manifest
            .contents
            .iter()
            .cloned()
            .partition(|f| is_vector_file(&f.path));
        if let Some(why) = check_sizes(&gen, &other_files) {
            return Err(Error::corrupt(
                dir,
                format!("generation {}: {why}", manifest.generation),
            ));
        }
        let vectors_damage = check_sizes(&gen, &vector_files)
            .map(|why| format!("the vectors are damaged ({why}); run `docfuse verify`"));
        let mut lexical = LexicalIndex::open(
            &gen.join("lexical"),
            manifest.config.bm25f,
            manifest.collection.avg_field_len,
            manifest.collection.chunks,
        )
        .map_err(|e| match e {
            Error::Corrupt { reason, .. } => Error::corrupt(dir, reason),
            Error::Unreadable { reason, .. } => Error::Unreadable {
                dir: dir.to_path_buf(),
                reason,
            },
            other => other,
        })?;
        if let Some(p) = super::relations::chunk_priors(&gen, manifest.collection.chunks) {
            lexical.set_priors(p);
        }
        Ok(DocIndex {
            dir: dir.to_path_buf(),
            manifest,
            lexical,
            vectors: OnceLock::new(),
            embedder: OnceLock::new(),
            installed_key: OnceLock::new(),
            snapshot: OnceLock::new(),
            by_path: OnceLock::new(),
            proximity: OnceLock::new(),
            vectors_damage,
            checks: FileChecks::default(),
            _reader: reader,
            remote: super::remote::attached_to(dir),
        })
    }

    /// Uses `embedder` for queries instead of loading the default one (e.g. to share one
    /// loaded model between indexes). Has no effect after the first vector query. The
    /// embedder is given this index's folded-model cache, which only sessions it has not
    /// made yet use (the first index given to an embedder keeps it).
    pub fn with_embedder(self, embedder: Arc<dyn Embedder>) -> Self {
        embedder.use_cache_dir(&self.dir.join(super::MODEL_CACHE_DIR));
        let _ = self.embedder.set(Ok(embedder));
        self
    }

    /// The embedder loaded for queries, if one has been loaded (or given): to carry a
    /// loaded model over to the next generation of the same index.
    pub fn loaded_embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder.get().and_then(|e| e.as_ref().ok().cloned())
    }

    /// The lexical ranking alone, cut by floor and limit.
    pub(super) fn lexical_search(
        &self,
        query: &str,
        opts: &SearchOptions,
    ) -> Result<SearchResponse> {
        let q = LexicalQuery {
            text: query,
            limit: opts.limit,
            params: opts.params,
            explain: opts.explain,
        };
        let run = self.lexical_run(query, &opts.params)?;
        let weights = run.term_weights();
        let hits = if opts.params.prox_gain > 0.0 {
            self.lexical_with_proximity(&run, opts)?
        } else {
            let mut hits: Vec<Hit> = self
                .lexical
                .cut(&run, &q)?
                .into_iter()
                .map(Into::into)
                .collect();
            if opts.explain {
                self.explain_proximity(&run.scored(), &mut hits);
            }
            hits
        };
        Ok(SearchResponse {
            hits,
            weights,
            mode: Mode::Lexical,
            degraded: None,
            missing_words: run.missing_words(),
        })
    }

    /// The lexical run of `query`; with page evidence on, the lexical index is first given
    /// the pages (the first chunk of each file, from the snapshot; without a readable
    /// snapshot page evidence is off).
    pub(super) fn lexical_run(&self, query: &str, params: &QueryParams) -> Result<LexicalRun> {
        if params.page_weight > 0.0 {
            let _ = self.page_starts();
        }
        self.lexical.run(query, params)
    }

    /// The first chunk ordinal of each file ([`file_starts`]), computed from the snapshot
    /// once and kept by the lexical index (its pages).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the snapshot cannot be read.
    fn page_starts(&self) -> Result<&[u64]> {
        if self.lexical.page_starts().is_none() {
            self.lexical
                .set_page_starts(file_starts(&self.snapshot_ref()?.files));
        }
        Ok(self.lexical.page_starts().unwrap_or_default())
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
        let run = self.lexical_run(query, params)?;
        let files = &self.snapshot_ref()?.files;
        let starts = self.page_starts()?;
        let keep_ord = |ord: u64| {
            let at = starts.partition_point(|&s| s <= ord).checked_sub(1);
            at.is_some_and(|i| keep(files[i].root, &files[i].rel_path))
        };
        Ok(run.missing_words_where(&keep_ord))
    }

    /// Why the index has no usable vectors before any model is loaded, if so.
    fn vectors_absent(&self) -> Option<String> {
        if self.manifest.vectors.is_some() {
            return self.vectors_damage.clone();
        }
        Some(match &self.manifest.embeddings {
            e if !e.wanted => "the index was built without vectors (--no-embeddings); rebuild it without that flag to get them".into(),
            e => format!(
                "the index has no vectors yet: {}; run `docfuse refresh` once the model loads",
                e.unavailable.as_deref().unwrap_or("the model was not loaded")
            ),
        })
    }

    /// Why the vector files cannot be used (their sizes differ from the manifest), if so.
    pub fn vectors_damage(&self) -> Option<&str> {
        self.vectors_damage.as_deref()
    }

    /// True once the embedding model has been loaded (or failed to load).
    pub fn embedder_loaded(&self) -> bool {
        self.embedder.get().is_some()
    }

    /// The vectors and the embedder, if both are usable and agree on the identity;
    /// otherwise the reason, for messages and the `degraded` flag. With a store attached
    /// ([`super::remote::attach`]) the vectors are the store's.
    pub fn vector_side(&self) -> std::result::Result<(VectorSide<'_>, &dyn Embedder), String> {
        if let Some(remote) = &self.remote {
            let info = remote.embedder()?;
            let embedder = self.query_embedder()?;
            check_identity(&info.model, &info.identity_key, embedder)?;
            let key = info.identity_key;
            return Ok((VectorSide::Remote(remote.as_ref(), key), embedder));
        }
        let info = self.vectors_info()?;
        let embedder = self.query_embedder()?;
        check_identity(&info.model, &info.identity_key, embedder)?;
        Ok((VectorSide::Local(self.vector_search()?), embedder))
    }

    /// The embedder of queries: the one given, else the default, loaded once.
    fn query_embedder(&self) -> std::result::Result<&dyn Embedder, String> {
        let e = self
            .embedder
            .get_or_init(|| {
                crate::embed::load_default_embedder()
                    .map(|e| {
                        e.use_cache_dir(&self.dir.join(super::MODEL_CACHE_DIR));
                        Arc::from(e)
                    })
                    .map_err(|e| match e {
                        Error::VectorsUnavailable(why) => why,
                        other => other.to_string(),
                    })
            })
            .as_ref()
            .map_err(Clone::clone)?;
        Ok(e.as_ref())
    }

    /// The embedder of the attached vector store, when one is attached and says.
    pub fn remote_embedder(&self) -> Option<std::result::Result<EmbedderInfo, String>> {
        self.remote.as_ref().map(|r| r.embedder())
    }

    /// Whether vector and hybrid queries work now: [`DocIndex::vector_side`], and for an
    /// attached store, an answer from it (a round trip).
    ///
    /// # Errors
    /// Why not.
    pub fn vector_usable(&self) -> std::result::Result<(), String> {
        self.vector_side()?;
        match &self.remote {
            Some(r) => r.health(),
            None => Ok(()),
        }
    }

    /// True when the index answers lexically by choice: built without vectors (a
    /// folder built with `--no-embeddings`, a store whose index has none).
    pub fn lexical_by_choice(&self) -> bool {
        match &self.remote {
            Some(r) => !r.has_vectors(),
            None => !self.manifest.embeddings.wanted,
        }
    }

    /// The generation number callers are told: the attached store's (a database's
    /// published generation this folder holds), else the manifest's.
    pub fn generation(&self) -> u64 {
        self.remote
            .as_ref()
            .map_or(self.manifest.generation, |r| r.generation())
    }

    /// The vector store attached to this folder, if any.
    pub fn remote_vectors(&self) -> Option<&dyn RemoteVectors> {
        self.remote.as_deref()
    }

    /// The vectors and the vector of `query`, once the embedder is known to be the
    /// index's ([`DocIndex::vector_side`]: files read and identity checked; the ONNX
    /// session is created on the first embedding only): from the query-vector cache when
    /// it holds the query, else embedded (and cached). `Ok(Err(reason))` when the vector
    /// side is not usable.
    ///
    /// # Errors
    /// [`Error::Embedder`] when the query cannot be embedded.
    pub fn query_side(
        &self,
        query: &str,
    ) -> Result<std::result::Result<(VectorSide<'_>, Vec<f32>), String>> {
        if let Some(hit) = self.cached_query_side(query) {
            return Ok(Ok(hit));
        }
        let (vectors, embedder) = match self.vector_side() {
            Ok(side) => side,
            Err(why) => return Ok(Err(why)),
        };
        let cache = QueryCache::new(&self.dir, &embedder.identity().key(), embedder.dim());
        if let Some(v) = cache.get(query) {
            return Ok(Ok((vectors, v)));
        }
        let v = embedder.embed(&[query])?;
        cache.put(query, &v);
        Ok(Ok((vectors, v)))
    }

    /// The vectors and the cached vector of `query` when the query-vector cache holds one
    /// made by the embedder the vectors were made with and that embedder is the one
    /// installed (its identity from the model files, [`crate::embed::installed_identity`]),
    /// without loading ONNX Runtime or making a session: the vector is the one the model
    /// gave, so the answer is the one an embedding would give (about 35 ms less for a
    /// one-off process). `None` when the model is already loaded (the usual path then
    /// checks it), the installed model is another or missing (the usual path says so, as
    /// for a new question), nothing is cached, or the vectors are not usable.
    fn cached_query_side(&self, query: &str) -> Option<(VectorSide<'_>, Vec<f32>)> {
        if self.embedder_loaded() {
            return None;
        }
        let (side, key, dim) = match &self.remote {
            Some(remote) => {
                let info = remote.embedder().ok()?;
                let side = VectorSide::Remote(remote.as_ref(), info.identity_key.clone());
                (side, info.identity_key, info.dim)
            }
            None => {
                let info = self.vectors_info().ok()?;
                let side = VectorSide::Local(self.vector_search().ok()?);
                (side, info.identity_key.clone(), info.dim)
            }
        };
        // read once; the model files are hashed (once per index) only for a cached question
        let v = QueryCache::new(&self.dir, &key, dim).get(query)?;
        let installed = self
            .installed_key
            .get_or_init(|| crate::embed::installed_identity().ok().map(|i| i.key()));
        if installed.as_deref() != Some(key.as_str()) {
            return None;
        }
        tracing::debug!("query vector from the cache, no model loaded");
        Some((side, v))
    }

    /// What the manifest says of the vectors, or why there are none usable.
    fn vectors_info(&self) -> std::result::Result<&VectorsInfo, String> {
        if let Some(why) = self.vectors_absent() {
            return Err(why);
        }
        self.manifest
            .vectors
            .as_ref()
            .ok_or_else(|| "the index has no vectors".to_string())
    }

    /// The generation's vectors, opened once.
    fn vector_search(&self) -> std::result::Result<&VectorSearch, String> {
        self.vectors
            .get_or_init(|| {
                VectorSearch::open(&self.dir.join(&self.manifest.generation_dir)).map_err(|e| {
                    match e {
                        Error::Corrupt { reason, .. } => {
                            format!("the vectors are damaged ({reason}); run `docfuse verify`")
                        }
                        other => other.to_string(),
                    }
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of the open generation.
    pub fn generation_dir(&self) -> PathBuf {
        self.dir.join(&self.manifest.generation_dir)
    }

    pub fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    /// The folder a hit's `root` index refers to (None for a JSONL source).
    pub fn root_dir(&self, root: usize) -> Option<&str> {
        match &self.manifest.source {
            SourceSpec::Roots { roots } => roots.get(root).map(String::as_str),
            SourceSpec::Jsonl { .. } => None,
        }
    }

    /// The file snapshot of the open generation, verified against the manifest.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when `files.json` is missing, altered or does not parse.
    pub fn snapshot(&self) -> Result<Snapshot> {
        self.snapshot_ref().cloned()
    }

    /// The graph for proximity, read once; `None` when the generation has no graph of
    /// this version or it does not match the snapshot (proximity is then 0).
    pub(super) fn proximity_graph(&self) -> Option<&super::proximity::ProximityGraph> {
        self.proximity
            .get_or_init(|| {
                let gen = self.generation_dir();
                let graph = super::relations::load_graph(&gen).ok()??;
                let chunks = super::relations::chunk_counts(&gen)?;
                let files = &self.snapshot_ref().ok()?.files;
                let paths = super::graph_view::shown_paths(files);
                let total = self.manifest.collection.chunks;
                super::proximity::ProximityGraph::new(graph, &chunks, paths, total)
            })
            .as_ref()
    }

    /// The snapshot, read once and kept (a search looks up every result's file in it:
    /// no copy per lookup).
    pub(super) fn snapshot_ref(&self) -> Result<&Snapshot> {
        if let Some(s) = self.snapshot.get() {
            return Ok(s);
        }
        let s = super::previous::read_snapshot(&self.dir, &self.manifest)?;
        Ok(self.snapshot.get_or_init(|| s))
    }

    /// The snapshot entry of `rel_path` under root `root`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the snapshot cannot be read.
    pub fn entry(&self, root: usize, rel_path: &str) -> Result<Option<FileEntry>> {
        let snap = self.snapshot_ref()?;
        let map = self.by_path.get_or_init(|| {
            snap.files
                .iter()
                .enumerate()
                .map(|(i, f)| ((f.root, f.rel_path.clone()), i))
                .collect()
        });
        Ok(map
            .get(&(root, rel_path.to_string()))
            .map(|&i| snap.files[i].clone()))
    }

    /// The text of an indexed file as it was indexed (from the generation's copy).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the copy cannot be read; `Ok(None)` for a path the
    /// generation does not hold.
    pub fn indexed_text(&self, root: usize, rel_path: &str) -> Result<Option<String>> {
        let Some(entry) = self.entry(root, rel_path)? else {
            return Ok(None);
        };
        let doc = super::source::read_record(&self.dir, &self.generation_dir(), &entry)?;
        Ok(Some(doc.text))
    }
}

/// The first chunk ordinal of each file: chunk ordinals run in snapshot order, file i
/// holds `[starts[i], starts[i + 1])`.
fn file_starts(files: &[crate::store::FileEntry]) -> Vec<u64> {
    files
        .iter()
        .scan(0u64, |next, f| {
            let first = *next;
            *next += u64::from(f.chunks);
            Some(first)
        })
        .collect()
}

/// Files of a generation that belong to its vector side (damage there leaves lexical
/// search working).
fn is_vector_file(path: &str) -> bool {
    path.starts_with("vectors.") || path.starts_with("hnsw.")
}

/// Refuses an embedder other than the one the vectors come from.
fn check_identity(
    model: &str,
    identity_key: &str,
    embedder: &dyn Embedder,
) -> std::result::Result<(), String> {
    let key = embedder.identity().key();
    if key == identity_key {
        return Ok(());
    }
    Err(format!(
        "the index's vectors come from another embedder ({model} {}…), the loaded one is {} {}…; run `docfuse refresh` to re-embed",
        &identity_key[..12.min(identity_key.len())],
        embedder.identity().model,
        &key[..12.min(key.len())]
    ))
}
