//! A published generation, opened for reading: its manifest, its lexical index and its
//! file snapshot (read once, on first use). The part of [`super::DocIndex`] every other
//! part reads; it knows nothing of vectors, proximity or freshness.

use crate::config::QueryParams;
use crate::error::{Error, Result};
use crate::generation::ReaderMark;
use crate::lexical::{LexicalIndex, LexicalRun};
use crate::store::{check_sizes, FileEntry, GenerationFile, Manifest, Snapshot, SourceSpec};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// An opened, verified generation.
pub struct OpenGeneration {
    dir: PathBuf,
    manifest: Manifest,
    lexical: LexicalIndex,
    /// The generation's files.json, read once (a generation never changes).
    snapshot: OnceLock<Snapshot>,
    /// Snapshot entries by (root, rel_path), built on first use.
    by_path: OnceLock<HashMap<(usize, String), usize>>,
    /// This reader's registration, so no refresh deletes the generation under it.
    _reader: Option<ReaderMark>,
}

impl OpenGeneration {
    /// Opens the generation the manifest in `dir` publishes: verifies the manifest (seal,
    /// versions) and the sizes of the generation's files, then opens its lexical index
    /// (read-only, no lock). Also returns why the vector files cannot be used (their sizes
    /// differ from the manifest), if so: damage there leaves lexical search working.
    ///
    /// # Errors
    /// [`Error::NoIndex`] when `dir` holds no index; [`Error::IndexVersion`] when another
    /// docfuse wrote it; [`Error::Corrupt`] (naming `dir`, with a rebuild hint) when the
    /// manifest or the generation is damaged.
    pub fn open(dir: &Path) -> Result<(Self, Option<String>)> {
        let manifest = Manifest::load(dir)?;
        // Registered before anything of the generation is read: from here on no refresh
        // deletes it.
        let reader = crate::generation::register_reader(dir, manifest.generation);
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
        if let Some(p) = crate::generation::chunk_priors(&gen, manifest.collection.chunks) {
            lexical.set_priors(p);
        }
        let opened = OpenGeneration {
            dir: dir.to_path_buf(),
            manifest,
            lexical,
            snapshot: OnceLock::new(),
            by_path: OnceLock::new(),
            _reader: reader,
        };
        Ok((opened, vectors_damage))
    }

    /// The lexical run of `query`; with page evidence on, the lexical index is first given
    /// the pages (the first chunk of each file, from the snapshot; without a readable
    /// snapshot page evidence is off).
    pub fn lexical_run(&self, query: &str, params: &QueryParams) -> Result<LexicalRun> {
        if params.page_weight > 0.0 {
            let _ = self.page_starts();
        }
        self.lexical.run(query, params)
    }

    /// The lexical run of `query` whose first `k` results are those of
    /// [`Self::lexical_run`], found without scoring every posting
    /// ([`crate::lexical::LexicalIndex::run_top`]).
    ///
    /// # Errors
    /// As [`Self::lexical_run`].
    pub fn lexical_top(&self, query: &str, params: &QueryParams, k: usize) -> Result<LexicalRun> {
        if params.page_weight > 0.0 {
            let _ = self.page_starts();
        }
        self.lexical.run_top(query, params, k)
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
    /// As [`crate::read::DocIndex::search`] for the lexical side; [`crate::Error::Corrupt`] when the
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

    /// The snapshot, read once and kept (a search looks up every result's file in it:
    /// no copy per lookup).
    pub fn snapshot_ref(&self) -> Result<&Snapshot> {
        if let Some(s) = self.snapshot.get() {
            return Ok(s);
        }
        let s = crate::generation::read_snapshot(&self.dir, &self.manifest)?;
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
        let doc = crate::generation::read_record(&self.dir, &self.generation_dir(), &entry)?;
        Ok(Some(doc.text))
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
        let snap = self.snapshot_ref().ok()?;
        let links = crate::generation::previous_links(&self.generation_dir())?;
        let wanted = anchor.to_lowercase();
        snap.files
            .iter()
            .zip(&links)
            .filter(|(f, _)| root.is_none_or(|r| r == f.root) && f.rel_path == rel_path)
            .find_map(|(f, l)| {
                l.anchors
                    .iter()
                    .find(|(a, _)| a.to_lowercase() == wanted)
                    .map(|(_, section)| (f.root, section.clone()))
            })
    }
}

/// Every document's path as shown, in snapshot order: `root:path` when the index has
/// several roots, else the path.
pub fn shown_paths(files: &[crate::store::FileEntry]) -> Vec<String> {
    let multi = files.iter().any(|f| f.root != 0);
    files.iter().map(|f| shown_path(f, multi)).collect()
}

pub fn shown_path(f: &crate::store::FileEntry, multi_root: bool) -> String {
    match multi_root {
        true => format!("{}:{}", f.root, f.rel_path),
        false => f.rel_path.clone(),
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
