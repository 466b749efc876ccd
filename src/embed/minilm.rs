//! all-MiniLM-L6-v2 (or another BERT-style sentence encoder in its place) through
//! `fastembed` on ONNX Runtime, loaded at run time from a file (`ort::init_from`), mean
//! pooling over the attention mask, L2-normalised, 256 word pieces. The label and the
//! dimension come from the model folder itself.

use super::folded::{self, Folded, Folder, GRAPH, PROBE, WEIGHTS};
use super::identity::{EmbedderIdentity, INPUT_TEMPLATE_VERSION};
use super::locate::ModelPaths;
use super::windows::{self, Piece};
use super::Embedder;
use crate::error::{Error, Result};
use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Longest input in word pieces, as the reference sentence-transformers model.
pub const MAX_LENGTH: usize = 256;

/// Texts per inference call. One text per call keeps every vector a function of its own
/// text by construction (no batch neighbours, no padding). Measured on 400 Rust-book
/// chunks (2026-12-01, one thread): length-sorted batches of 4–32 gave bit-identical
/// vectors with this int8 model but 0.70–1.00× the throughput, so batching buys nothing
/// on a CPU this size.
const BATCH: usize = 1;

/// A session slot: created on first use.
type Session = OnceLock<std::result::Result<Mutex<TextEmbedding>, String>>;

/// The MiniLM embedder. Inference runs on the calling thread (call it from a blocking
/// pool in async code). A single text (a query) runs on one session using every core; a
/// list of texts (a build) is spread over one single-threaded session per core, each
/// embedding one text per call, so every vector still depends on its own text only.
pub struct MiniLm {
    /// The session for single texts, created on first use (a refresh with nothing to
    /// embed needs only the identity).
    model: Session,
    /// One single-threaded session per core, for lists of texts, created on first use.
    workers: Vec<Session>,
    /// The tokenizer files.
    tokenizer: TokenizerFiles,
    /// The tokenizer without truncation, for tail windows; made on first use.
    splitter: OnceLock<std::result::Result<tokenizers::Tokenizer, String>>,
    /// The original model's bytes, read on first need (a session from the folded model
    /// never needs them) and checked against `identity`.
    onnx: OnceLock<Vec<u8>>,
    /// Where they are read from.
    model_path: PathBuf,
    identity: EmbedderIdentity,
    /// The process's ONNX Runtime environment (telemetry off), shared by every session.
    env: Environment,
    /// ONNX Runtime's build string (version and commit): part of the folded-model key.
    runtime: String,
    /// The folded-model cache folder, once given ([`Embedder::use_cache_dir`]).
    cache_dir: OnceLock<PathBuf>,
    /// Sessions made so far, and how many of them from the folded model.
    made: AtomicUsize,
    from_cache: AtomicUsize,
}

/// ONNX Runtime's session option naming the folder of a graph's external data when the
/// graph is given from memory.
const EXTERNAL_DATA_FOLDER: &str = "session.model_external_initializers_file_folder_path";

/// ONNX Runtime's session option that saves, with an optimised model's external data,
/// the weights its kernels pre-pack (ONNX Runtime ≥ 1.20): a session made from that model
/// maps them instead of packing them again (10–30 ms less for MiniLM here). Set only
/// where [`folded::PREPACKED_WEIGHTS`] says the cache key covers their layout.
const PREPACKED: &str = "session.save_external_prepacked_constant_initializers";

/// The process's ONNX Runtime environment once one was built. A failure is not kept: a
/// library installed (or repaired) after a failed load is loaded by the next try, without
/// a restart of the server ([`crate::read`] retries a failed embedder load).
static ORT_ENV: Mutex<Option<Environment>> = Mutex::new(None);

/// Loads the ONNX Runtime library and builds the process's one environment, with ONNX
/// Runtime's telemetry turned off: `ort` enables it by default, and ONNX Runtime 1.31
/// then keeps a usage database (device id, process path, machine details) under
/// `~/.cache/Microsoft/DeveloperTools/` and tries to send it to
/// `mobile.events.data.microsoft.com`. docfuse sends nothing anywhere.
fn load_ort(dylib: &Path) -> Result<Environment> {
    let mut held = ORT_ENV.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(env) = held.as_ref() {
        return Ok(env.clone());
    }
    let env = ort::init_from(dylib)
        .map_err(|e| {
            Error::VectorsUnavailable(format!("cannot load the ONNX Runtime library: {e}"))
        })?
        .with_telemetry(false)
        .build()
        .map_err(|e| Error::VectorsUnavailable(format!("cannot start ONNX Runtime: {e}")))?;
    *held = Some(env.clone());
    Ok(env)
}

/// The identity of the model files in `dir` with the tokenizer and config bytes.
type ModelFiles = (EmbedderIdentity, Vec<u8>, Vec<u8>);

fn read_model(dir: &Path) -> Result<ModelFiles> {
    let tokenizer_file = read(&dir.join("tokenizer.json"))?;
    let config_file = read(&dir.join("config.json"))?;
    let (model, dim) = label_and_dim(dir, &config_file)?;
    let identity = EmbedderIdentity {
        model,
        model_sha256: model_sha256(&dir.join("model.onnx"))?,
        tokenizer_sha256: crate::hashing::sha256_hex(&tokenizer_file),
        pooling: "mean".into(),
        normalized: true,
        max_length: MAX_LENGTH,
        dim,
        input_template: INPUT_TEMPLATE_VERSION,
    };
    Ok((identity, tokenizer_file, config_file))
}

/// sha256 of the model file: remembered with the file's stamp in the user's cache folder
/// ([`crate::stamp`]), so a one-off search does not hash 23 MB; in full when the file
/// changed or no stamp can be kept.
fn model_sha256(path: &Path) -> Result<String> {
    let full = |p: &Path| crate::fsio::open_regular(p).and_then(crate::hashing::sha256_reader);
    let digest = match crate::stamp::user_memo(path, "sha256") {
        Some(memo) => crate::stamp::digest(path, &memo, "sha256", full),
        None => full(path),
    };
    digest.map_err(|e| Error::io("read", path, e))
}

/// The identity [`MiniLm::load`] would report for the model files at `paths`, without
/// loading ONNX Runtime or making a session: reads the tokenizer and config, and the
/// model's sha256 from its stamp (hashing its 23 MB only when it changed).
///
/// # Errors
/// As [`MiniLm::load`] for the files.
pub fn identity_of(paths: &ModelPaths) -> Result<EmbedderIdentity> {
    read_model(&paths.model_dir).map(|(identity, ..)| identity)
}

/// The model's identity and the tokenizer files, from the model folder `dir`.
fn read_files(dir: &Path) -> Result<(EmbedderIdentity, TokenizerFiles)> {
    let (identity, tokenizer_file, config_file) = read_model(dir)?;
    let files = TokenizerFiles {
        tokenizer_file,
        config_file,
        special_tokens_map_file: read(&dir.join("special_tokens_map.json"))?,
        tokenizer_config_file: read(&dir.join("tokenizer_config.json"))?,
    };
    Ok((identity, files))
}

fn read(path: &Path) -> Result<Vec<u8>> {
    crate::fsio::read_regular(path).map_err(|e| Error::io("read", path, e))
}

impl MiniLm {
    /// Loads the ONNX Runtime library (once per process) and the model.
    ///
    /// # Errors
    /// [`Error::VectorsUnavailable`] when the library does not load;
    /// [`Error::Io`] when a model file cannot be read; [`Error::Embedder`] when the
    /// session or the tokenizer cannot be built, or reading the files panicked.
    pub fn load(paths: &ModelPaths) -> Result<Self> {
        let dir = &paths.model_dir;
        // The model files are read and hashed (about 20 ms for MiniLM) on a second thread
        // while this one loads ONNX Runtime (about as long): a one-off search waits for
        // the longer of the two, not their sum. Without a thread, one after the other.
        let (env, files) = std::thread::scope(|scope| {
            let reader = std::thread::Builder::new().spawn_scoped(scope, || read_files(dir));
            let env = load_ort(&paths.ort_dylib);
            let files = match reader {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::Embedder("reading the model panicked".into()))),
                Err(_) => read_files(dir),
            };
            (env, files)
        });
        let env = env?;
        let (identity, files) = files?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(MiniLm {
            model: OnceLock::new(),
            workers: (0..cores).map(|_| OnceLock::new()).collect(),
            tokenizer: files,
            splitter: OnceLock::new(),
            onnx: OnceLock::new(),
            model_path: dir.join("model.onnx"),
            identity,
            env,
            runtime: ort::info().to_string(),
            cache_dir: OnceLock::new(),
            made: AtomicUsize::new(0),
            from_cache: AtomicUsize::new(0),
        })
    }

    fn cache_key(&self) -> String {
        folded::key(&self.identity.key(), &self.runtime)
    }

    /// The cache folder, if one was given, the cache is on and its path can be handed to
    /// ONNX Runtime (which takes the external-data folder as UTF-8).
    fn cache_dir(&self) -> Option<&Path> {
        let dir = self.cache_dir.get().filter(|_| folded::enabled())?;
        dir.to_str().is_some().then_some(dir.as_path())
    }

    /// A session with `threads` intra-op threads: from the folded model when the cache
    /// holds one that checks out in full ([`folded`]), else from the original model. A
    /// cached model that does not check out is removed.
    fn new_session(&self, threads: usize) -> std::result::Result<TextEmbedding, String> {
        self.made.fetch_add(1, Ordering::Relaxed);
        if let Some(dir) = self.cache_dir() {
            let tried = match folded::open(dir, &self.cache_key()) {
                Ok(None) => {
                    tracing::info!(
                        "no folded model for this docfuse, model and CPU in `{}`: the session is made from the original model (slower); `docfuse refresh` writes one",
                        dir.display()
                    );
                    None
                }
                Ok(Some(f)) => Some(self.folded_session(f, threads)),
                Err(why) => Some(Err((dir.join(self.cache_key()), why, true))),
            };
            match tried {
                Some(Ok(s)) => {
                    self.from_cache.fetch_add(1, Ordering::Relaxed);
                    return Ok(s);
                }
                // ONNX Runtime failing to make the session (memory, say) is no fault of
                // the folder, which other indexes share: kept
                Some(Err((folder, why, false))) => tracing::warn!(
                    "no session from the folded model in `{}` ({why}): made from the original model",
                    folder.display()
                ),
                Some(Err((folder, why, true))) => match folded::discard(&folder) {
                    Ok(()) => tracing::warn!(
                        "the folded model in `{}` is not used ({why}): removed it; the next `docfuse refresh` writes it again",
                        folder.display()
                    ),
                    Err(e) => tracing::warn!(
                        "the folded model in `{}` is not used ({why}) and cannot be removed ({e}); until its owner deletes it or runs `docfuse refresh`, searches check it in vain",
                        folder.display()
                    ),
                },
                None => {}
            }
        }
        self.open_session(self.onnx()?.to_vec(), threads, None)
    }

    /// The original model's bytes, read once (a failure is not kept: the next call
    /// reads again); an error when the file cannot be read or no longer has the sha256
    /// of this embedder's identity.
    fn onnx(&self) -> std::result::Result<&[u8], String> {
        if let Some(bytes) = self.onnx.get() {
            return Ok(bytes);
        }
        let bytes = crate::fsio::read_regular(&self.model_path)
            .map_err(|e| format!("cannot read `{}`: {e}", self.model_path.display()))?;
        if crate::hashing::sha256_hex(&bytes) != self.identity.model_sha256 {
            return Err(format!(
                "`{}` changed since docfuse loaded it (its sha256 differs): restart docfuse",
                self.model_path.display()
            ));
        }
        Ok(self.onnx.get_or_init(|| bytes))
    }

    /// A session from the folded model `f`, once its weights hash to the record (checked
    /// on a second thread while the session is made) and it embeds the probe to the
    /// recorded vector. On failure, the folder, why, and whether the folder is at fault
    /// (its weights or probe differ: remove it) or not (the session could not be made).
    fn folded_session(
        &self,
        f: Folded,
        threads: usize,
    ) -> std::result::Result<TextEmbedding, (PathBuf, String, bool)> {
        let (made, checked) = std::thread::scope(|scope| {
            let check = std::thread::Builder::new()
                .spawn_scoped(scope, || folded::check_weights_stamped(&f));
            let made = self.open_session(f.graph.clone(), threads, Some(&f.dir));
            let checked = match check {
                Ok(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Err("the weights check panicked".into())),
                Err(_) => folded::check_weights_stamped(&f),
            };
            (made, checked)
        });
        let fail = |why: String| (f.dir.clone(), why, true);
        checked.map_err(fail)?;
        let mut session = made.map_err(|why| (f.dir.clone(), why, false))?;
        match probe(&mut session, self.identity.dim) {
            Ok(p) if p == f.record.probe_sha256 => {
                tracing::debug!("session from the folded model in {}", f.dir.display());
                folded::mark_used(&f.dir);
                Ok(session)
            }
            Ok(_) => Err(fail("its session embeds the probe differently".into())),
            Err(why) => Err(fail(why)),
        }
    }

    /// A session of `graph` (the model's bytes), its external weights read from
    /// `weights_dir` when given.
    fn open_session(
        &self,
        graph: Vec<u8>,
        threads: usize,
        weights_dir: Option<&Path>,
    ) -> std::result::Result<TextEmbedding, String> {
        // fastembed's default pooling for user-defined models is CLS: set mean.
        let model = UserDefinedEmbeddingModel::new(graph, self.tokenizer.clone())
            .with_pooling(Pooling::Mean);
        // Idle intra-op threads sleep instead of spinning: with concurrent requests
        // on few cores a spinning pool burns the CPU the other searches need
        // (`scripts/loadtest`, hybrid at 32 clients: 113 → 137 req/s, p99 352 → 273
        // ms; vectors bit-identical, only the thread pool's waiting changes).
        let mut opts = InitOptionsUserDefined::new()
            .with_environment(self.env.clone())
            .with_max_length(MAX_LENGTH)
            .with_intra_threads(threads)
            .with_session_config("session.intra_op.allow_spinning", "0");
        if let Some(dir) = weights_dir {
            opts = opts.with_session_config(EXTERNAL_DATA_FOLDER, dir.to_string_lossy());
        }
        TextEmbedding::try_new_from_user_defined(model, opts)
            .map_err(|e| format!("cannot load the embedding model: {e}"))
    }

    /// The session in `slot`, created with `threads` intra-op threads on first use.
    fn session<'a>(&self, slot: &'a Session, threads: usize) -> Result<&'a Mutex<TextEmbedding>> {
        slot.get_or_init(|| self.new_session(threads).map(Mutex::new))
            .as_ref()
            .map_err(|e| Error::Embedder(e.clone()))
    }

    /// One text (a query) on the all-cores session when it is free; else on a free
    /// single-threaded worker session (made on first need); else waiting for the
    /// all-cores one. Concurrent queries so do not wait for each other while a session
    /// is idle; every session gives the same vector, bit for bit (`tests/it/embed.rs`).
    fn embed_single(&self, texts: &[&str], cores: usize) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len() * self.identity.dim);
        let shared = self.session(&self.model, cores)?;
        if let Ok(mut model) = shared.try_lock() {
            self.run_on(&mut model, texts, &mut out)?;
            return Ok(out);
        }
        // (one core: the worker would be a second session for the same core)
        let workers = if cores > 1 { &self.workers[..] } else { &[] };
        for worker in workers.iter().filter_map(|slot| self.session(slot, 1).ok()) {
            if let Ok(mut model) = worker.try_lock() {
                self.run_on(&mut model, texts, &mut out)?;
                return Ok(out);
            }
        }
        self.run(shared, texts, &mut out)?;
        Ok(out)
    }

    /// Embeds `texts` one per call on `session`, appending rows to `out`.
    fn run(
        &self,
        session: &Mutex<TextEmbedding>,
        texts: &[&str],
        out: &mut Vec<f32>,
    ) -> Result<()> {
        let mut model = session
            .lock()
            .map_err(|_| Error::Embedder("the embedder panicked earlier".into()))?;
        self.run_on(&mut model, texts, out)
    }

    /// Embeds `texts` one per call on `model`, appending rows to `out`.
    fn run_on(&self, model: &mut TextEmbedding, texts: &[&str], out: &mut Vec<f32>) -> Result<()> {
        let dim = self.identity.dim;
        for batch in texts.chunks(BATCH) {
            let vecs = model
                .embed(batch, Some(batch.len()))
                .map_err(|e| Error::Embedder(format!("inference failed: {e}")))?;
            for v in vecs {
                if v.len() != dim {
                    return Err(Error::Embedder(format!(
                        "the model returned {} dimensions, its config.json says {dim} (`hidden_size`)",
                        v.len()
                    )));
                }
                out.extend_from_slice(&v);
            }
        }
        Ok(())
    }
}

/// sha256 of the vector `session` gives for [`PROBE`] (one row of `dim` values).
fn probe(session: &mut TextEmbedding, dim: usize) -> std::result::Result<String, String> {
    let rows = session
        .embed([PROBE], Some(1))
        .map_err(|e| format!("the probe failed: {e}"))?;
    match rows.as_slice() {
        [v] if v.len() == dim => Ok(folded::vector_sha256(v)),
        _ => Err(format!(
            "the probe gave {} rows, not one of {dim} values",
            rows.len()
        )),
    }
}

impl Folder for MiniLm {
    /// The level every session is made at (fastembed's `Level3`: constant folding,
    /// fusions and layout changes for this CPU) writes the optimised graph with its
    /// weights as external data, and with them the weights its matrix products pack
    /// for this CPU, so that a session made from it neither folds nor packs.
    fn fold(&self, dir: &Path) -> std::result::Result<(), String> {
        let fail = |e: ort::Error<ort::session::builder::SessionBuilder>| e.to_string();
        ort::session::Session::builder(&self.env)
            .map_err(|e| e.to_string())?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(fail)?
            .with_intra_threads(1)
            .map_err(fail)?
            .with_optimized_model_path(dir.join(GRAPH))
            .map_err(fail)?
            .with_config_entry(
                "session.optimized_model_external_initializers_file_name",
                WEIGHTS,
            )
            .map_err(fail)?
            .with_config_entry(
                "session.optimized_model_external_initializers_min_size_in_bytes",
                "1024",
            )
            .map_err(fail)?
            .with_config_entry(PREPACKED, if folded::PREPACKED_WEIGHTS { "1" } else { "0" })
            .map_err(fail)?
            .commit_from_memory(self.onnx()?)
            .map(drop)
            .map_err(|e| format!("cannot fold the model: {e}"))
    }

    fn probe_folded(&self, dir: &Path) -> std::result::Result<String, String> {
        let graph = crate::fsio::read_regular(dir.join(GRAPH)).map_err(|e| e.to_string())?;
        probe(
            &mut self.open_session(graph, 1, Some(dir))?,
            self.identity.dim,
        )
    }

    fn probe_original(&self) -> std::result::Result<String, String> {
        probe(
            &mut self.open_session(self.onnx()?.to_vec(), 1, None)?,
            self.identity.dim,
        )
    }
}

/// The model's label and vector dimension, from its own files: the label is the model
/// folder's name (`all-MiniLM-L6-v2` as provisioned), the dimension `hidden_size` of its
/// `config.json` (a BERT-style encoder's pooled output has that many values).
///
/// # Errors
/// [`Error::Embedder`] when `config.json` has no usable `hidden_size`.
pub(crate) fn label_and_dim(dir: &Path, config: &[u8]) -> Result<(String, usize)> {
    let v: serde_json::Value = serde_json::from_slice(config).map_err(|e| {
        Error::Embedder(format!(
            "`{}` is not JSON: {e}",
            dir.join("config.json").display()
        ))
    })?;
    let dim = v
        .get("hidden_size")
        .and_then(serde_json::Value::as_u64)
        .filter(|&d| (1..=65_536).contains(&d))
        .ok_or_else(|| {
            Error::Embedder(format!(
                "`{}` has no `hidden_size`: cannot tell the vector dimension",
                dir.join("config.json").display()
            ))
        })? as usize;
    let label = dir
        .canonicalize()
        .unwrap_or_else(|_| dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "embedder".into());
    Ok((label, dim))
}

impl MiniLm {
    /// Embeds lists of texts on `threads` single-threaded sessions (default: one per
    /// core), e.g. one for an embedding worker that leaves the other cores to others.
    pub fn with_threads(mut self, threads: usize) -> MiniLm {
        self.workers = (0..threads.max(1)).map(|_| OnceLock::new()).collect();
        self
    }

    /// The word pieces of `input` (no special tokens, no truncation).
    fn pieces(&self, input: &str) -> Result<Vec<Piece>> {
        let splitter = self
            .splitter
            .get_or_init(|| {
                let mut t = tokenizers::Tokenizer::from_bytes(&self.tokenizer.tokenizer_file)
                    .map_err(|e| e.to_string())?;
                t.with_truncation(None).map_err(|e| e.to_string())?;
                t.with_padding(None);
                Ok(t)
            })
            .as_ref()
            .map_err(|e| Error::Embedder(format!("cannot load the tokenizer: {e}")))?;
        let enc = splitter
            .encode(input, false)
            .map_err(|e| Error::Embedder(format!("cannot tokenise an input: {e}")))?;
        let words = enc.get_word_ids();
        Ok(enc
            .get_offsets()
            .iter()
            .enumerate()
            .map(|(i, &(start, end))| Piece {
                start,
                end,
                continues: i > 0 && words[i].is_some() && words[i] == words[i - 1],
            })
            .collect())
    }
}

impl Embedder for MiniLm {
    fn identity(&self) -> &EmbedderIdentity {
        &self.identity
    }

    fn dim(&self) -> usize {
        self.identity.dim
    }

    fn use_cache_dir(&self, dir: &Path) {
        let _ = self.cache_dir.set(dir.to_path_buf());
    }

    fn prepare_cache(&self, dir: &Path) -> Result<bool> {
        if !folded::enabled() {
            return Ok(false);
        }
        if dir.to_str().is_none() {
            return Err(Error::Embedder(format!(
                "no folded-model cache in `{}`: ONNX Runtime takes its folder as UTF-8",
                dir.display()
            )));
        }
        folded::write(
            dir,
            &self.cache_key(),
            &self.identity.key(),
            &self.runtime,
            self,
        )
        .map_err(Error::Embedder)
    }

    fn used_cache(&self) -> bool {
        let from_cache = self.from_cache.load(Ordering::Relaxed);
        from_cache > 0 && from_cache == self.made.load(Ordering::Relaxed)
    }

    fn tails(&self, input: &str) -> Result<Vec<String>> {
        // every piece covers a byte at least: an input of fewer bytes fits; 2 places go
        // to the special tokens ([CLS], [SEP])
        let limit = MAX_LENGTH - 2;
        if input.len() <= limit {
            return Ok(Vec::new());
        }
        Ok(windows::tails(input, &self.pieces(input)?, limit))
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let dim = self.identity.dim;
        let cores = self.workers.len().max(1);
        if texts.len() <= 1 || cores == 1 {
            return self.embed_single(texts, cores);
        }
        // One contiguous share of the texts per worker session, embedded in parallel.
        let share = texts.len().div_ceil(cores);
        let parts: Vec<Result<Vec<f32>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = texts
                .chunks(share)
                .zip(&self.workers)
                .map(|(part, slot)| {
                    scope.spawn(move || {
                        let session = self.session(slot, 1)?;
                        let mut out = Vec::with_capacity(part.len() * dim);
                        self.run(session, part, &mut out)?;
                        Ok(out)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error::Embedder("an embedding thread panicked".into()))
                    })
                })
                .collect()
        });
        let mut out = Vec::with_capacity(texts.len() * dim);
        for p in parts {
            out.extend(p?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_is_the_folder_and_dimension_the_hidden_size() {
        let d = tempfile::tempdir().unwrap();
        let m = d.path().join("bge-small-en");
        std::fs::create_dir_all(&m).unwrap();
        let (label, dim) = label_and_dim(&m, br#"{"hidden_size": 768}"#).unwrap();
        assert_eq!((label.as_str(), dim), ("bge-small-en", 768));
        let e = label_and_dim(&m, b"{}").unwrap_err().to_string();
        assert!(e.contains("hidden_size"), "{e}");
    }
}
