//! Opening a lexical index for search.

use super::schema::{fields_of, register_tokenizer, Fields};
use crate::config::{Bm25fParams, PerField};
use crate::error::{Error, Result};
use crate::projection::StoredChunk;
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
    /// Document address of each chunk ordinal, read from the `ord` fast field on first use.
    addrs: std::sync::OnceLock<Vec<Option<DocAddress>>>,
}

impl LexicalIndex {
    /// Opens the tantivy index in `dir`; `avg_field_len` and `n` come from the manifest.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when tantivy cannot open the folder or the schema lacks a field.
    pub fn open(
        dir: &Path,
        params: Bm25fParams,
        avg_field_len: PerField<f32>,
        n: u64,
    ) -> Result<Self> {
        let corrupt = |e: tantivy::TantivyError| Error::corrupt(dir, format!("lexical index: {e}"));
        // Read-only and lock-free: a published generation never changes.
        let directory = super::readonly::ReadOnlyDirectory::open(dir).map_err(corrupt)?;
        let index = Index::open(directory).map_err(corrupt)?;
        register_tokenizer(&index);
        let fields = fields_of(&index.schema()).map_err(corrupt)?;
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
            addrs: std::sync::OnceLock::new(),
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
            let ords = sr.fast_fields().u64("ord")?;
            for doc in sr.doc_ids_alive() {
                if let Some(slot) = ords.first(doc).and_then(|o| table.get_mut(o as usize)) {
                    *slot = Some(DocAddress::new(seg as u32, doc));
                }
            }
        }
        Ok(table)
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

    /// Every stored chunk, in insertion order.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when a stored document cannot be read or decoded.
    pub fn all_chunks(&self) -> Result<Vec<StoredChunk>> {
        let searcher = self.searcher();
        let mut out = Vec::new();
        for (seg, sr) in searcher.segment_readers().iter().enumerate() {
            for doc in sr.doc_ids_alive() {
                out.push(self.stored(&searcher, DocAddress::new(seg as u32, doc))?);
            }
        }
        Ok(out)
    }

    /// The stored chunk with ordinal `ord` (chunks are numbered in (root, path, line)
    /// order, so the parts of one section have consecutive ordinals).
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
