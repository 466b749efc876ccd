//! The vector side of an opened index: the generation's vectors (or a store attached to
//! the folder, [`super::remote`]) and the embedder of queries, both loaded on first use,
//! and the identity check between them.

use super::opened::OpenGeneration;
use super::query_cache::QueryCache;
use super::remote::{EmbedderInfo, RemoteVectors};
use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::store::VectorsInfo;
use crate::vector::VectorSearch;
use std::sync::{Arc, OnceLock};

/// How long a failed load (the model not installed, ONNX Runtime missing) is answered
/// from memory before it is tried again: a model installed while a server runs is used
/// from the next query after this, without a restart.
pub const LOAD_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// A value loaded on first use and kept once loaded; a failure is kept only for
/// [`LOAD_RETRY`], then the next use loads again.
pub struct Retrying<T> {
    ok: OnceLock<T>,
    failed: std::sync::Mutex<Option<(std::time::Instant, String)>>,
    retry: std::time::Duration,
}

impl<T> Default for Retrying<T> {
    fn default() -> Self {
        Self::with_retry(LOAD_RETRY)
    }
}

impl<T> Retrying<T> {
    /// Nothing loaded; a failure is kept for `retry`.
    pub fn with_retry(retry: std::time::Duration) -> Self {
        Retrying {
            ok: OnceLock::new(),
            failed: std::sync::Mutex::new(None),
            retry,
        }
    }

    /// The loaded value, or `load`'s result now (at most one load at a time), or the
    /// last failure when it is younger than the retry interval.
    ///
    /// # Errors
    /// Why the value could not be loaded.
    pub fn get_or_load(
        &self,
        load: impl FnOnce() -> std::result::Result<T, String>,
    ) -> std::result::Result<&T, String> {
        if let Some(v) = self.ok.get() {
            return Ok(v);
        }
        let mut failed = match self.failed.lock() {
            Ok(f) => f,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(v) = self.ok.get() {
            return Ok(v);
        }
        if let Some((at, why)) = failed.as_ref() {
            if at.elapsed() < self.retry {
                return Err(why.clone());
            }
        }
        match load() {
            Ok(v) => {
                *failed = None;
                Ok(self.ok.get_or_init(|| v))
            }
            Err(why) => {
                *failed = Some((std::time::Instant::now(), why.clone()));
                Err(why)
            }
        }
    }

    /// The loaded value, if any.
    pub fn get(&self) -> Option<&T> {
        self.ok.get()
    }

    /// Sets the value unless one is loaded.
    pub fn set(&self, v: T) {
        let _ = self.ok.set(v);
    }

    /// True once a load was tried (loaded, or failed).
    pub fn tried(&self) -> bool {
        self.ok.get().is_some() || self.failed.lock().map_or(true, |f| f.is_some())
    }
}

/// Made-up words, of the shapes people mistype or invent (syllables, keyboard runs,
/// letter soup), that no documentation holds: the cosines they reach over a collection
/// are its noise ([`VectorPart::noise_ceiling`]).
pub const NOISE_PROBES: [&str; 24] = [
    "vorquen",
    "blatisk mudrofel",
    "xyqz",
    "frandolium peskaret",
    "ghuvtar",
    "snorbleck wimpath",
    "qwpoeiru",
    "tazzlevrink",
    "ploomiferous grastle",
    "jkdfhg",
    "zentravo quimble",
    "mivvox",
    "drellisaunt",
    "wuzzak trombelin",
    "kreepolnid",
    "fimbrastic olluvar",
    "hrudsk",
    "pentaquobble nerisk",
    "vaxxilum",
    "sprenkadoodle",
    "oblimvar trusket",
    "lkjhgf poiuy",
    "quorvastian",
    "nebbleworth yitch",
];

/// Made-up runs of Chinese characters and Japanese kana, the probes of a query written in
/// CJK script: MiniLM reads such text a character at a piece, and any two CJK texts
/// stand nearer each other than Latin made-up words stand to them, so a CJK query's noise
/// is measured with CJK probes.
pub const CJK_NOISE_PROBES: [&str; 24] = [
    "筆水羊道中",
    "牛む海",
    "田人石虫",
    "あ馬イ",
    "帽油月",
    "雨る土針",
    "塩鍵火",
    "ア油竹つ床",
    "紙油車",
    "も牛雪雨",
    "米門酒石",
    "スコみたう",
    "窓箱雨人",
    "トひクす花",
    "麦虫木",
    "布テア木鳥",
    "犬窓猫布米",
    "風馬けソ雪雨",
    "道油門帽玉",
    "よふ人シほ",
    "船月米中",
    "す茶うる",
    "糊鏡米人木玉",
    "さ塩エさんま",
];

/// The script of a query, for its noise ceiling: CJK when it holds a CJK character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeScript {
    Latin,
    Cjk,
}

impl ProbeScript {
    /// The script of `query`.
    pub fn of(query: &str) -> ProbeScript {
        match query.chars().any(crate::analysis::is_cjk) {
            true => ProbeScript::Cjk,
            false => ProbeScript::Latin,
        }
    }

    fn probes(self) -> &'static [&'static str; 24] {
        match self {
            ProbeScript::Latin => &NOISE_PROBES,
            ProbeScript::Cjk => &CJK_NOISE_PROBES,
        }
    }
}

/// How many standard deviations of the probes' highest cosines the noise ceiling stands
/// above the highest of them. Chosen on the three dev collections: made-up words outside
/// the probes reached up to 2.6 deviations above the probes' highest, real one-word
/// questions no passage holds (`hashtable`, `segfault`, `linkedlist`) 4.2 and more.
pub const CEILING_SDS: f32 = 3.0;

/// The highest of `tops` plus [`CEILING_SDS`] sample standard deviations of them.
fn ceiling_of(tops: &[f32]) -> f32 {
    let n = tops.len().max(1) as f32;
    let mean = tops.iter().sum::<f32>() / n;
    let var = tops.iter().map(|t| (t - mean) * (t - mean)).sum::<f32>() / (n - 1.0).max(1.0);
    let max = tops.iter().copied().fold(f32::MIN, f32::max);
    max + CEILING_SDS * var.sqrt()
}

/// `ef_search` of a probe's nearest-neighbour search (one result wanted).
const PROBE_EF: usize = 64;

/// A query's vector made ahead of its search ([`VectorPart::prepare_query`]) and handed
/// to it: the search of the same text takes it instead of embedding, when the embedder
/// it searches with has the identity the vector was made with.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedQuery {
    /// The text embedded (the focused query the search is asked).
    pub query: String,
    /// Identity key of the embedder that made the vector.
    pub identity_key: String,
    /// `[dim]` f32, L2-normalised.
    pub vector: Vec<f32>,
}

/// The embedder for the vector side (the default MiniLM, or one given).
pub type EmbedderSlot = Retrying<Arc<dyn Embedder>>;

/// Where a query's vector side is answered.
#[derive(Clone)]
pub enum VectorSide<'a> {
    /// The generation's own vector files.
    Local(&'a VectorSearch),
    /// A store attached to the folder (PostgreSQL + pgvector), and the identity key of
    /// the embedder the query is embedded with (the store refuses vectors of another).
    Remote(&'a dyn RemoteVectors, String),
}

/// The vectors and the embedder of one opened generation, each loaded once.
pub struct VectorPart {
    vectors: OnceLock<std::result::Result<VectorSearch, String>>,
    embedder: EmbedderSlot,
    /// The installed embedder's identity key, read from the model files once (for
    /// answering cached questions without loading the model).
    installed_key: Retrying<String>,
    /// Why the vector files cannot be used (sizes differ from the manifest), if so.
    vectors_damage: Option<String>,
    /// The vector store attached to this folder ([`super::remote::attach`]), which then
    /// answers the vector side instead of the generation's files.
    remote: Option<Arc<dyn RemoteVectors>>,
    /// [`VectorPart::noise_ceiling`] per [`ProbeScript`] (Latin, CJK), once measured.
    noise_ceiling: [OnceLock<f32>; 2],
}

impl VectorPart {
    /// Nothing loaded yet; `vectors_damage` is why the vector files cannot be used, and
    /// the store attached to `g`'s folder, if any, answers instead of them.
    pub fn new(g: &OpenGeneration, vectors_damage: Option<String>) -> VectorPart {
        VectorPart {
            vectors: OnceLock::new(),
            embedder: Retrying::default(),
            installed_key: Retrying::default(),
            vectors_damage,
            remote: super::remote::attached_to(g.dir()),
            noise_ceiling: [OnceLock::new(), OnceLock::new()],
        }
    }

    /// Uses `embedder` for queries instead of loading the default one (e.g. to share one
    /// loaded model between indexes). Has no effect after the first vector query. The
    /// embedder is given this index's folded-model cache, which only sessions it has not
    /// made yet use (the first index given to an embedder keeps it).
    pub fn with_embedder(&self, g: &OpenGeneration, embedder: Arc<dyn Embedder>) {
        embedder.use_cache_dir(&crate::embed::folded::cache_dir(g.dir()));
        self.embedder.set(embedder);
    }

    /// The embedder loaded for queries, if one has been loaded (or given): to carry a
    /// loaded model over to the next generation of the same index.
    pub fn loaded_embedder(&self) -> Option<Arc<dyn Embedder>> {
        self.embedder.get().cloned()
    }

    /// Why the index has no usable vectors before any model is loaded, if so.
    fn vectors_absent(&self, g: &OpenGeneration) -> Option<String> {
        if g.manifest().vectors.is_some() {
            return self.vectors_damage.clone();
        }
        Some(match &g.manifest().embeddings {
            e if !e.wanted => "the index was built without vectors (--no-embeddings); rebuild it without that flag to get them".into(),
            e => no_vectors_yet(e.unavailable.as_deref()),
        })
    }

    /// Why the vector files cannot be used (their sizes differ from the manifest), if so.
    pub fn vectors_damage(&self) -> Option<&str> {
        self.vectors_damage.as_deref()
    }

    /// True once the embedding model has been loaded (or failed to load).
    pub fn embedder_loaded(&self) -> bool {
        self.embedder.tried()
    }

    /// The vectors and the embedder, if both are usable and agree on the identity;
    /// otherwise the reason, for messages and the `degraded` flag. With a store attached
    /// ([`super::remote::attach`]) the vectors are the store's.
    pub fn vector_side(
        &self,
        g: &OpenGeneration,
    ) -> std::result::Result<(VectorSide<'_>, &dyn Embedder), String> {
        if let Some(remote) = &self.remote {
            let info = remote.embedder()?;
            let embedder = self.query_embedder(g)?;
            check_identity(&info.model, &info.identity_key, embedder)?;
            let key = info.identity_key;
            return Ok((VectorSide::Remote(remote.as_ref(), key), embedder));
        }
        let info = self.vectors_info(g)?;
        let embedder = self.query_embedder(g)?;
        check_identity(&info.model, &info.identity_key, embedder)?;
        Ok((VectorSide::Local(self.vector_search(g)?), embedder))
    }

    /// The embedder of queries: the one given, else the default, loaded once.
    fn query_embedder(&self, g: &OpenGeneration) -> std::result::Result<&dyn Embedder, String> {
        let e = self.embedder.get_or_load(|| {
            crate::embed::load_default_embedder()
                .map(|e| {
                    e.use_cache_dir(&crate::embed::folded::cache_dir(g.dir()));
                    Arc::from(e)
                })
                .map_err(|e| match e {
                    Error::VectorsUnavailable(why) => why,
                    other => other.to_string(),
                })
        })?;
        Ok(e.as_ref())
    }

    /// The embedder of the attached vector store, when one is attached and says.
    pub fn remote_embedder(&self) -> Option<std::result::Result<EmbedderInfo, String>> {
        self.remote.as_ref().map(|r| r.embedder())
    }

    /// Whether vector and hybrid queries work now: [`Self::vector_side`], and for an
    /// attached store, an answer from it (a round trip).
    ///
    /// # Errors
    /// Why not.
    pub fn vector_usable(&self, g: &OpenGeneration) -> std::result::Result<(), String> {
        self.vector_side(g)?;
        match &self.remote {
            Some(r) => r.health(),
            None => Ok(()),
        }
    }

    /// True when the index answers lexically by choice: built without vectors (a
    /// folder built with `--no-embeddings`, a store whose index has none).
    pub fn lexical_by_choice(&self, g: &OpenGeneration) -> bool {
        match &self.remote {
            Some(r) => !r.has_vectors(),
            None => !g.manifest().embeddings.wanted,
        }
    }

    /// The generation number callers are told, the one whose text `g` holds: for a
    /// folder with a store attached, the store's generation its last sync recorded for
    /// `g` (a later publish that changed no text keeps `g`), else the one `g`'s manifest
    /// names; for a folder of its own, the manifest's. So an answer's text and its
    /// generation always agree, also while the store moves on.
    pub fn generation(&self, g: &OpenGeneration) -> u64 {
        let m = g.manifest();
        match &self.remote {
            None => m.generation,
            Some(r) => r
                .generation_of(&m.seal)
                .or(m.store_generation)
                .unwrap_or_else(|| r.generation()),
        }
    }

    /// The vector store attached to this folder, if any.
    pub fn remote_vectors(&self) -> Option<&dyn RemoteVectors> {
        self.remote.as_deref()
    }

    /// The vectors and the vector of `query`, once the embedder is known to be the
    /// index's ([`Self::vector_side`]: files read and identity checked; the ONNX
    /// session is created on the first embedding only): from the query-vector cache when
    /// it holds the query, else embedded (and cached). `Ok(Err(reason))` when the vector
    /// side is not usable.
    ///
    /// # Errors
    /// [`Error::Embedder`] when the query cannot be embedded.
    pub fn query_side(
        &self,
        g: &OpenGeneration,
        query: &str,
    ) -> Result<std::result::Result<(VectorSide<'_>, Vec<f32>), String>> {
        self.query_side_with(g, query, None)
    }

    /// [`VectorPart::query_side`], taking the vector of `prepared` when it was made for
    /// this text by this embedder (else as without it).
    ///
    /// # Errors
    /// As [`VectorPart::query_side`].
    pub fn query_side_with(
        &self,
        g: &OpenGeneration,
        query: &str,
        prepared: Option<&PreparedQuery>,
    ) -> Result<std::result::Result<(VectorSide<'_>, Vec<f32>), String>> {
        if let Some(hit) = self.cached_query_side(g, query) {
            return Ok(Ok(hit));
        }
        let (vectors, embedder) = match self.vector_side(g) {
            Ok(side) => side,
            Err(why) => return Ok(Err(why)),
        };
        let key = embedder.identity().key();
        if let Some(p) = prepared.filter(|p| p.query == query && p.identity_key == key) {
            return Ok(Ok((vectors, p.vector.clone())));
        }
        let cache = QueryCache::new(g.dir(), &key, embedder.dim());
        if let Some(v) = cache.get(query) {
            return Ok(Ok((vectors, v)));
        }
        let v = embedder.embed(&[query])?;
        cache.put(query, &v);
        Ok(Ok((vectors, v)))
    }

    /// `query`'s vector, made ahead of its search (embedded, or read from the
    /// query-vector cache) for [`VectorPart::query_side_with`], so that a server can
    /// embed while holding no search permit. `None` when the vector side is not usable
    /// (the search says why), or when the query-vector cache answers without a model
    /// (the search reads the same entry).
    ///
    /// # Errors
    /// [`Error::Embedder`] when the query cannot be embedded.
    pub fn prepare_query(&self, g: &OpenGeneration, query: &str) -> Result<Option<PreparedQuery>> {
        if self.cached_query_side(g, query).is_some() {
            return Ok(None);
        }
        let Ok((_, embedder)) = self.vector_side(g) else {
            return Ok(None);
        };
        let identity_key = embedder.identity().key();
        Ok(match self.query_side(g, query)? {
            Ok((_, vector)) => Some(PreparedQuery {
                query: query.to_string(),
                identity_key,
                vector,
            }),
            Err(_) => None,
        })
    }

    /// Loads the embedder and makes its query session now, by embedding one short text
    /// (nothing is cached): what a resident process does before its first search.
    /// `Ok(false)` when the vector side is not usable (nothing is loaded).
    ///
    /// # Errors
    /// [`Error::Embedder`] when the text cannot be embedded.
    pub fn warm_up(&self, g: &OpenGeneration) -> Result<bool> {
        let Ok((_, embedder)) = self.vector_side(g) else {
            return Ok(false);
        };
        embedder.embed(&["docfuse"])?;
        Ok(true)
    }

    /// The collection's noise ceiling for queries of `script`: the highest cosine any of
    /// its probes ([`NOISE_PROBES`], [`CJK_NOISE_PROBES`]: made-up words no documentation
    /// holds) reaches over the generation's vectors, plus
    /// [`CEILING_SDS`] standard deviations of the probes' highest cosines (made-up words
    /// reach about 0.2–0.4 with MiniLM; their highs spread with a heavy tail). A cosine at
    /// or below it is what meaning alone gives any string; a query no passage shares a
    /// word with is answered from vectors only above it. Measured on first use (the probes
    /// embedded in one batch, not cached; one nearest-neighbour search each) and kept for
    /// the generation. `None` when the vector side cannot answer now (tried again on the
    /// next use).
    pub fn noise_ceiling(&self, g: &OpenGeneration, script: ProbeScript) -> Option<f32> {
        let slot = &self.noise_ceiling[script as usize];
        if let Some(c) = slot.get() {
            return Some(*c);
        }
        let probes = script.probes();
        let (side, embedder) = self.vector_side(g).ok()?;
        let vectors = embedder.embed(probes).ok()?;
        let dim = embedder.dim().max(1);
        let mut tops = Vec::with_capacity(probes.len());
        for v in vectors.chunks_exact(dim) {
            let top = match &side {
                VectorSide::Local(vectors) => vectors.top(v, 1, PROBE_EF).first().map(|t| t.1),
                VectorSide::Remote(store, key) => store
                    .search(g, v, key, 1, PROBE_EF, &[])
                    .ok()?
                    .top
                    .first()
                    .map(|t| t.1),
            };
            tops.push(top?);
        }
        if tops.len() != probes.len() {
            return None;
        }
        let ceiling = ceiling_of(&tops);
        tracing::debug!("noise ceiling of the collection ({script:?}): cosine {ceiling:.3}");
        Some(*slot.get_or_init(|| ceiling))
    }

    /// The vectors and the cached vector of `query` when the query-vector cache holds one
    /// made by the embedder the vectors were made with and that embedder is the one
    /// installed (its identity from the model files, [`crate::embed::installed_identity`]),
    /// without loading ONNX Runtime or making a session: the vector is the one the model
    /// gave, so the answer is the one an embedding would give (about 35 ms less for a
    /// one-off process). `None` when the model is already loaded (the usual path then
    /// checks it), the installed model is another or missing (the usual path says so, as
    /// for a new question), nothing is cached, or the vectors are not usable.
    fn cached_query_side(
        &self,
        g: &OpenGeneration,
        query: &str,
    ) -> Option<(VectorSide<'_>, Vec<f32>)> {
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
                let info = self.vectors_info(g).ok()?;
                let side = VectorSide::Local(self.vector_search(g).ok()?);
                (side, info.identity_key.clone(), info.dim)
            }
        };
        // read once; the model files are hashed (once per index) only for a cached question
        let v = QueryCache::new(g.dir(), &key, dim).get(query)?;
        let installed = self
            .installed_key
            .get_or_load(|| {
                crate::embed::installed_identity()
                    .map(|i| i.key())
                    .map_err(|e| e.to_string())
            })
            .ok();
        if installed.map(String::as_str) != Some(key.as_str()) {
            return None;
        }
        tracing::debug!("query vector from the cache, no model loaded");
        Some((side, v))
    }

    /// What the manifest says of the vectors, or why there are none usable.
    fn vectors_info<'g>(
        &self,
        g: &'g OpenGeneration,
    ) -> std::result::Result<&'g VectorsInfo, String> {
        if let Some(why) = self.vectors_absent(g) {
            return Err(why);
        }
        g.manifest()
            .vectors
            .as_ref()
            .ok_or_else(|| "the index has no vectors".to_string())
    }

    /// The generation's vectors, opened once.
    fn vector_search(&self, g: &OpenGeneration) -> std::result::Result<&VectorSearch, String> {
        self.vectors
            .get_or_init(|| {
                VectorSearch::open(&g.dir().join(&g.manifest().generation_dir)).map_err(|e| match e
                {
                    Error::Corrupt { reason, .. } => {
                        format!("the vectors are damaged ({reason}); run `docfuse verify`")
                    }
                    other => other.to_string(),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
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
        "the index's vectors come from another embedder ({model} {}…), the loaded one is {} {}…; set DOCFUSE_MODEL_DIR to the `{model}` model folder to search them, or run `docfuse refresh` to re-embed the index with the loaded model",
        &identity_key[..12.min(identity_key.len())],
        embedder.identity().model,
        &key[..12.min(key.len())]
    ))
}

/// Why an index that wants vectors has none yet (`then`: the reason recorded at the last
/// refresh), told as of now: while the model is still not found, where it was looked for
/// and the command that installs it (so the fix is said where the search is, not only at
/// the refresh); once it is, that a refresh embeds the chunks. Locating the files is a
/// few `stat` calls: nothing is read or hashed on the search path.
fn no_vectors_yet(then: Option<&str>) -> String {
    let then = then.unwrap_or("the model was not loaded");
    match crate::embed::locate_models() {
        Err(Error::VectorsUnavailable(now)) => match now.split_once("\nhint: ") {
            Some((why, hint)) => {
                format!("the index has no vectors yet: {why}\nhint: {hint}; then run `docfuse refresh`")
            }
            None => format!("the index has no vectors yet: {now}; run `docfuse refresh` once the model loads"),
        },
        Err(_) => format!(
            "the index has no vectors yet: {then}; run `docfuse refresh` once the model loads"
        ),
        Ok(_) => format!(
            "the index has no vectors yet ({then} at the last refresh); the model is installed now: run `docfuse refresh` to embed"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::Retrying;
    use std::time::Duration;

    #[test]
    fn a_failed_load_is_tried_again_after_the_interval_and_a_loaded_value_is_kept() {
        let slot: Retrying<u32> = Retrying::with_retry(Duration::from_millis(50));
        assert!(!slot.tried());
        assert_eq!(
            slot.get_or_load(|| Err("model files not found".into())),
            Err("model files not found".to_string())
        );
        assert!(slot.tried());
        // within the interval: the failure, without loading
        assert_eq!(
            slot.get_or_load(|| panic!("not loaded again so soon")),
            Err("model files not found".to_string())
        );
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(slot.get_or_load(|| Ok(7)), Ok(&7));
        assert_eq!(slot.get_or_load(|| panic!("kept once loaded")), Ok(&7));
        assert_eq!(slot.get(), Some(&7));
    }
}
