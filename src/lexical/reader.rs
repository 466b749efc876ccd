//! Opening a lexical index for search.

use super::schema::{fields_of, register_tokenizer, Fields};
use crate::config::{Bm25fParams, PerField};
use crate::error::{Error, Result};
use crate::projection::StoredChunk;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tantivy::schema::Value;
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument};

/// An opened lexical index and the collection statistics it is scored with.
pub struct LexicalIndex {
    pub(crate) dir: PathBuf,
    pub(crate) reader: IndexReader,
    pub(crate) fields: Fields,
    pub(crate) params: Bm25fParams,
    pub(crate) avg_field_len: PerField<f32>,
    /// Chunks in the collection (BM25F N).
    pub(crate) n: u64,
    /// First ordinal of each bucket, by bucket id (from the bucket list).
    first_ord: HashMap<u64, u64>,
    /// Document address of each chunk ordinal, read from the fast fields on first use.
    addrs: std::sync::OnceLock<Vec<Option<DocAddress>>>,
    /// Page-level priors by ordinal (empty: no graph).
    pub(super) priors: PagePriors,
    /// Whole-section statistics, read on the first query that weighs section evidence
    /// (`None`: they could not be read; section evidence is then off).
    sections: std::sync::OnceLock<Option<super::units::Units>>,
    /// Whole-page statistics, read on the first query that weighs page evidence once the
    /// page starts are given (`None`: they could not be read; page evidence is then off).
    pages: std::sync::OnceLock<Option<super::units::Units>>,
    /// The first chunk ordinal of each file, in file order (from the engine's snapshot).
    page_starts: std::sync::OnceLock<Vec<u64>>,
    /// Query terms' whole-index statistics, remembered (`dfs.rs`).
    pub(super) stats_cache: super::dfs::StatsCache,
}

/// What the documentation graph says about each chunk's page, by chunk ordinal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PagePriors {
    /// Log-scaled PageRank of the page, in `[0, 1]` (`[chunks]`).
    pub canonicality: Vec<f32>,
    /// The page is written for agents (`[chunks]`).
    pub for_agents: Vec<bool>,
    /// The page is a source file or a package manifest, a module or package entry
    /// (`[chunks]`; empty: none is).
    pub code: Vec<bool>,
    /// The page is a project file (`docfuse.toml`): its entries are ownership records,
    /// intent and change routes (`[chunks]`; empty: none is).
    pub routes: Vec<bool>,
    /// The chunk is in a change log: its page is one (`chunk::is_changelog`) or its
    /// section is (`chunk::is_changelog_section`); `[chunks]`; empty: none is.
    pub changelog: Vec<bool>,
    /// The chunk is a template copy: its visible text is on three or more pages
    /// (`generation` finds them); `[chunks]`; empty: none is.
    pub template: Vec<bool>,
}

/// Ordinals of a segment's documents: the `ord` (position in the bucket) and `bucket`
/// fast fields and the buckets' first ordinals.
pub(crate) struct SegmentOrds<'a> {
    local: tantivy::columnar::Column<u64>,
    bucket: tantivy::columnar::Column<u64>,
    first_ord: &'a HashMap<u64, u64>,
}

impl SegmentOrds<'_> {
    /// The ordinal of document `doc` of the segment (`u64::MAX` when its bucket is not
    /// in the bucket list, which a sound index never has).
    pub(crate) fn of(&self, doc: tantivy::DocId) -> u64 {
        let (Some(local), Some(bucket)) = (self.local.first(doc), self.bucket.first(doc)) else {
            return u64::MAX;
        };
        self.first_ord
            .get(&bucket)
            .map_or(u64::MAX, |first| first + local)
    }
}

impl LexicalIndex {
    /// Sets the page-level priors of every chunk (by ordinal): the inputs of the
    /// canonicality part (`QueryParams::canon_gain`) and of the audience fit
    /// (`QueryParams::agent`).
    pub fn set_priors(&mut self, priors: PagePriors) {
        self.priors = priors;
    }

    /// Gives the first chunk ordinal of each file, in file order (ascending): the pages
    /// of page evidence (`QueryParams::page_weight`). Only the first call counts.
    pub fn set_page_starts(&self, starts: Vec<u64>) {
        let _ = self.page_starts.set(starts);
    }

    /// The page starts given ([`Self::set_page_starts`]), if any.
    pub fn page_starts(&self) -> Option<&[u64]> {
        self.page_starts.get().map(Vec::as_slice)
    }

    /// The whole-section statistics (read once; `None` when they cannot be read).
    pub(crate) fn sections(&self) -> Option<&super::units::Units> {
        self.sections
            .get_or_init(|| match self.chunk_stats() {
                Ok(s) => Some(super::units::Units::sections(&s)),
                Err(e) => {
                    tracing::warn!(dir = %self.dir.display(), "section evidence is off: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// The whole-page statistics (read once; `None` without page starts or when they
    /// cannot be read).
    pub(crate) fn pages(&self) -> Option<&super::units::Units> {
        let starts = self.page_starts.get()?;
        self.pages
            .get_or_init(|| match self.chunk_stats() {
                Ok(s) => Some(super::units::Units::pages(&s, starts)),
                Err(e) => {
                    tracing::warn!(dir = %self.dir.display(), "page evidence is off: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// The canonicality of the page of chunk `ord` (0 without a graph).
    pub(crate) fn canonicality_of(&self, ord: u64) -> f32 {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.canonicality.get(o))
            .copied()
            .unwrap_or(0.0)
    }

    /// Whether chunk `ord` is of a module or package entry (a source file, a manifest).
    pub(crate) fn is_code(&self, ord: u64) -> bool {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.code.get(o))
            .copied()
            .unwrap_or(false)
    }

    /// Whether the index holds module or package entries (it was built with sources).
    pub(crate) fn has_code(&self) -> bool {
        !self.priors.code.is_empty()
    }

    /// Whether chunk `ord` is an ownership record or a route (of a project file).
    pub(crate) fn is_route(&self, ord: u64) -> bool {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.routes.get(o))
            .copied()
            .unwrap_or(false)
    }

    /// Whether chunk `ord` is in a change log (its page or its section).
    pub(crate) fn is_changelog(&self, ord: u64) -> bool {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.changelog.get(o))
            .copied()
            .unwrap_or(false)
    }

    /// Whether chunk `ord` is a template copy (its text is on three or more pages).
    pub(crate) fn is_template(&self, ord: u64) -> bool {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.template.get(o))
            .copied()
            .unwrap_or(false)
    }

    /// Whether the page of chunk `ord` is written for agents.
    pub(crate) fn for_agents(&self, ord: u64) -> bool {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.priors.for_agents.get(o))
            .copied()
            .unwrap_or(false)
    }

    /// Opens the tantivy index in `dir`; `avg_field_len` and `n` come from the manifest.
    /// A file this user may not read is [`Error::Unreadable`], not damage.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when tantivy cannot open the folder or the schema lacks a field.
    pub fn open(
        dir: &Path,
        params: Bm25fParams,
        avg_field_len: PerField<f32>,
        n: u64,
    ) -> Result<Self> {
        let corrupt = |e: tantivy::TantivyError| {
            if permission_denied(&e) {
                Error::Unreadable {
                    dir: dir.to_path_buf(),
                    reason: format!("lexical index: {e}"),
                }
            } else {
                Error::corrupt(dir, format!("lexical index: {e}"))
            }
        };
        // Read-only and lock-free: a published generation never changes.
        let directory = super::readonly::ReadOnlyDirectory::open(dir).map_err(corrupt)?;
        let index = Index::open(directory).map_err(corrupt)?;
        register_tokenizer(&index);
        let fields = fields_of(&index.schema()).map_err(corrupt)?;
        let first_ord = super::buckets::first_ordinals(&super::buckets::read_buckets(dir)?);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(corrupt)?;
        Ok(LexicalIndex {
            dir: dir.to_path_buf(),
            reader,
            fields,
            params,
            avg_field_len,
            n,
            first_ord,
            addrs: std::sync::OnceLock::new(),
            priors: PagePriors::default(),
            sections: std::sync::OnceLock::new(),
            pages: std::sync::OnceLock::new(),
            page_starts: std::sync::OnceLock::new(),
            stats_cache: super::dfs::StatsCache::default(),
        })
    }

    /// The document address of chunk ordinal `ord`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when no chunk has that ordinal or the fast field is unreadable.
    pub(crate) fn addr_of(&self, ord: u64) -> Result<DocAddress> {
        if self.addrs.get().is_none() {
            let table = self.read_addrs()?;
            let _ = self.addrs.set(table);
        }
        self.addrs
            .get()
            .and_then(|t| t.get(ord as usize).copied().flatten())
            .ok_or_else(|| Error::corrupt(&self.dir, format!("no chunk with ordinal {ord}")))
    }

    fn read_addrs(&self) -> Result<Vec<Option<DocAddress>>> {
        let searcher = self.searcher();
        let mut table = vec![None; self.n as usize];
        for (seg, sr) in searcher.segment_readers().iter().enumerate() {
            let ords = self.segment_ords(sr)?;
            for doc in sr.doc_ids_alive() {
                if let Some(slot) = table.get_mut(ords.of(doc) as usize) {
                    *slot = Some(DocAddress::new(seg as u32, doc));
                }
            }
        }
        Ok(table)
    }

    /// The ordinals of one segment's documents.
    ///
    /// # Errors
    /// [`Error::Tantivy`] when a fast field cannot be opened.
    pub(crate) fn segment_ords(&self, sr: &tantivy::SegmentReader) -> Result<SegmentOrds<'_>> {
        Ok(SegmentOrds {
            local: sr.fast_fields().u64("ord")?,
            bucket: sr.fast_fields().u64("bucket")?,
            first_ord: &self.first_ord,
        })
    }

    /// The field-norm readers of one segment, one per text field (`config::Field::ALL` order).
    ///
    /// # Errors
    /// [`tantivy::TantivyError`] when a field's norms cannot be opened.
    pub(crate) fn field_norms(
        &self,
        sr: &tantivy::SegmentReader,
    ) -> tantivy::Result<Vec<tantivy::fieldnorm::FieldNormReader>> {
        self.fields
            .text
            .iter()
            .map(|&f| sr.get_fieldnorms_reader(f))
            .collect()
    }

    pub(crate) fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// Number of chunks in the index.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when the index holds no chunk.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Every stored chunk, in ordinal order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a chunk is missing or cannot be read or decoded.
    pub fn all_chunks(&self) -> Result<Vec<StoredChunk>> {
        let searcher = self.searcher();
        (0..self.n)
            .map(|ord| self.stored(&searcher, self.addr_of(ord)?))
            .collect()
    }

    /// The stored chunk with ordinal `ord` (chunks are numbered in (root, path, line)
    /// order, so a run of parts of one section has consecutive ordinals).
    ///
    /// # Errors
    /// [`Error::Corrupt`] when no chunk has that ordinal or it cannot be decoded.
    pub fn chunk_at(&self, ord: u64) -> Result<StoredChunk> {
        let addr = self.addr_of(ord)?;
        self.stored(&self.searcher(), addr)
    }

    pub(crate) fn stored(&self, searcher: &Searcher, addr: DocAddress) -> Result<StoredChunk> {
        let doc: TantivyDocument = searcher
            .doc(addr)
            .map_err(|e| Error::corrupt(&self.dir, format!("stored chunk: {e}")))?;
        let json = doc
            .get_first(self.fields.stored)
            .and_then(|v| v.as_str())
            .ok_or_else(|| Error::corrupt(&self.dir, "stored chunk is missing"))?;
        serde_json::from_str(json)
            .map_err(|e| Error::corrupt(&self.dir, format!("stored chunk does not decode: {e}")))
    }
}

/// Whether tantivy failed because a file may not be read by this user.
fn permission_denied(e: &tantivy::TantivyError) -> bool {
    use tantivy::directory::error::OpenReadError;
    match e {
        tantivy::TantivyError::OpenReadError(OpenReadError::IoError { io_error, .. }) => {
            io_error.kind() == std::io::ErrorKind::PermissionDenied
        }
        _ => false,
    }
}
