//! Opening a published index; the vector side is loaded lazily, on first use.

use super::hit::{Mode, SearchResponse};
use crate::config::QueryParams;
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::fusion::Fusion;
use crate::lexical::{LexicalIndex, LexicalQuery};
use crate::store::{Manifest, Snapshot, SourceSpec};
use crate::vector::VectorSearch;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The fusion used when none is given: chosen on the dev sets (see `benches/RESULTS.md`).
pub const DEFAULT_FUSION: Fusion = Fusion::Convex { alpha: 0.4 };

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
    /// The generation's files.json, read once (a generation never changes).
    snapshot: OnceLock<Snapshot>,
    /// The last cheap stale check and when it ran.
    stale_cache: std::sync::Mutex<Option<(std::time::Instant, bool)>>,
}

/// A stale check is reused for this long (a server answers many queries a second; each
/// check walks the roots).
const STALE_CHECK_TTL: std::time::Duration = std::time::Duration::from_secs(1);

impl DocIndex {
    /// Opens the index in `dir`: verifies the manifest (seal, versions), then opens the
    /// generation it names. Vectors and the embedder are loaded on first vector use.
    ///
    /// # Errors
    /// [`Error::NoIndex`] when `dir` holds no index; [`Error::Corrupt`] with a rebuild
    /// hint when the manifest or the generation is damaged or of another version.
    pub fn open(dir: &Path) -> Result<Self> {
        let manifest = Manifest::load(dir)?;
        let gen = dir.join(&manifest.generation_dir);
        if !gen.join("lexical").is_dir() {
            return Err(Error::corrupt(
                dir,
                format!("generation folder `{}` is missing", manifest.generation_dir),
            ));
        }
        let lexical = LexicalIndex::open(
            &gen.join("lexical"),
            manifest.config.bm25f,
            manifest.collection.avg_field_len,
            manifest.collection.chunks,
        )
        .map_err(|e| match e {
            Error::Corrupt { reason, .. } => Error::corrupt(dir, reason),
            other => other,
        })?;
        Ok(DocIndex {
            dir: dir.to_path_buf(),
            manifest,
            lexical,
            vectors: OnceLock::new(),
            embedder: OnceLock::new(),
            snapshot: OnceLock::new(),
            stale_cache: std::sync::Mutex::new(None),
        })
    }

    /// Uses `embedder` for queries instead of loading the default one (e.g. to share one
    /// loaded model between indexes). Has no effect after the first vector query.
    pub fn with_embedder(self, embedder: Arc<dyn Embedder>) -> Self {
        let _ = self.embedder.set(Ok(embedder));
        self
    }

    /// The lexical ranking alone, cut by floor and limit.
    pub(super) fn lexical_search(
        &self,
        query: &str,
        opts: &SearchOptions,
    ) -> Result<SearchResponse> {
        let hits = self.lexical.search(&LexicalQuery {
            text: query,
            limit: opts.limit,
            params: opts.params,
            explain: opts.explain,
        })?;
        Ok(SearchResponse {
            hits: hits.into_iter().map(Into::into).collect(),
            mode: Mode::Lexical,
            degraded: None,
        })
    }

    /// The vectors and the embedder, if both are usable and agree on the identity;
    /// otherwise the reason, for messages and the `degraded` flag.
    pub fn vector_side(&self) -> std::result::Result<(&VectorSearch, &dyn Embedder), String> {
        let Some(info) = &self.manifest.vectors else {
            return Err("the index has no vectors (built with --no-embeddings or without a model); rebuild it with the model provisioned".into());
        };
        let embedder = self
            .embedder
            .get_or_init(|| {
                crate::embed::load_default_embedder()
                    .map(Arc::from)
                    .map_err(|e| match e {
                        Error::VectorsUnavailable(why) => why,
                        other => other.to_string(),
                    })
            })
            .as_ref()
            .map_err(Clone::clone)?;
        let key = embedder.identity().key();
        if key != info.identity_key {
            return Err(format!(
                "the index's vectors come from another embedder ({} {}…), the loaded one is {} {}…; rebuild with `docfuse index` to re-embed",
                info.model,
                &info.identity_key[..12.min(info.identity_key.len())],
                embedder.identity().model,
                &key[..12]
            ));
        }
        let vectors = self
            .vectors
            .get_or_init(|| {
                VectorSearch::open(&self.dir.join(&self.manifest.generation_dir))
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)?;
        Ok((vectors, embedder.as_ref()))
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn dir(&self) -> &Path {
        &self.dir
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
        if let Some(s) = self.snapshot.get() {
            return Ok(s.clone());
        }
        let s = self.read_snapshot()?;
        let _ = self.snapshot.set(s.clone());
        Ok(s)
    }

    /// Whether files changed since this generation was built ([`super::quick_stale`]),
    /// reusing a check younger than a second; true when the check itself fails.
    pub fn stale(&self) -> bool {
        let mut cache = self.stale_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, stale)) = *cache {
            if at.elapsed() < STALE_CHECK_TTL {
                return stale;
            }
        }
        let stale = super::quick_stale(self).unwrap_or(true);
        *cache = Some((std::time::Instant::now(), stale));
        stale
    }

    fn read_snapshot(&self) -> Result<Snapshot> {
        let path = self
            .dir
            .join(&self.manifest.generation_dir)
            .join("files.json");
        let bytes = std::fs::read(&path)
            .map_err(|e| Error::corrupt(&self.dir, format!("cannot read files.json ({e})")))?;
        if crate::hashing::sha256_hex(&bytes) != self.manifest.files_sha256 {
            return Err(Error::corrupt(
                &self.dir,
                "files.json does not match the manifest",
            ));
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(&self.dir, format!("files.json does not parse ({e})")))
    }
}
