//! Opening a published index and searching it.

use crate::config::QueryParams;
use crate::error::{Error, Result};
use crate::lexical::{Hit, LexicalIndex, LexicalQuery};
use crate::store::{Manifest, Snapshot, SourceSpec};
use std::path::{Path, PathBuf};

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Results wanted (after the floor). Default 10.
    pub limit: usize,
    /// Attach the named score parts to each hit.
    pub explain: bool,
    pub params: QueryParams,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            explain: false,
            params: QueryParams::default(),
        }
    }
}

/// An opened, verified index.
pub struct DocIndex {
    dir: PathBuf,
    manifest: Manifest,
    lexical: LexicalIndex,
}

impl DocIndex {
    /// Opens the index in `dir`: verifies the manifest (seal, versions), then opens the
    /// generation it names.
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
        })
    }

    /// Ranks chunks for `query`, best first.
    ///
    /// # Errors
    /// [`Error::Corrupt`] or [`Error::Tantivy`] when the index cannot be read. Any query
    /// text is accepted.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<Vec<Hit>> {
        self.lexical.search(&LexicalQuery {
            text: query,
            limit: opts.limit,
            params: opts.params,
            explain: opts.explain,
        })
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
