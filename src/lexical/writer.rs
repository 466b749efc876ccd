//! Building a lexical index from projected entries.

use super::schema::{build_schema, register_tokenizer, Fields};
use crate::analysis::index_terms;
use crate::config::PerField;
use crate::error::{Error, Result};
use crate::projection::Entry;
use std::path::Path;
use tantivy::{Index, IndexWriter, TantivyDocument};

/// Writer heap for tantivy, bytes.
const WRITER_HEAP_BYTES: usize = 128 * 1024 * 1024;

/// Collection statistics gathered while writing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildStats {
    pub chunks: u64,
    /// Average number of terms per field, [`crate::config::Field::ALL`] order.
    pub avg_field_len: PerField<f32>,
}

/// Writes entries into a new tantivy index in one folder, in the order given (the
/// insertion ordinal is the stable tie-break key of the ranking).
pub struct LexicalWriter {
    writer: IndexWriter,
    fields: Fields,
    total_len: PerField<u64>,
    count: u64,
}

impl LexicalWriter {
    /// Creates an empty index in `dir` (which must exist and be empty).
    ///
    /// # Errors
    /// [`Error::Tantivy`] when tantivy cannot create the index there.
    pub fn create(dir: &Path) -> Result<Self> {
        let (schema, fields) = build_schema();
        let index = Index::create_in_dir(dir, schema)?;
        register_tokenizer(&index);
        // One indexing thread: documents keep their insertion order.
        let writer = index.writer_with_num_threads(1, WRITER_HEAP_BYTES)?;
        Ok(LexicalWriter {
            writer,
            fields,
            total_len: [0; 7],
            count: 0,
        })
    }

    /// Adds one entry.
    ///
    /// # Errors
    /// [`Error::Tantivy`] when the document cannot be added.
    pub fn add(&mut self, entry: &Entry) -> Result<()> {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        for (i, text) in entry.fields.iter().enumerate() {
            let terms = index_terms(text);
            self.total_len[i] += terms.len() as u64;
            doc.add_text(f.text[i], terms.join(" "));
        }
        for k in &entry.id_keys {
            doc.add_text(f.id_key, k);
        }
        for k in &entry.path_keys {
            doc.add_text(f.path_key, k);
        }
        for k in &entry.symbol_keys {
            doc.add_text(f.symbol_key, k);
        }
        doc.add_u64(f.ord, self.count);
        let stored = serde_json::to_string(&entry.stored)
            .map_err(|e| Error::Config(format!("cannot serialise chunk: {e}")))?;
        doc.add_text(f.stored, stored);
        self.writer.add_document(doc)?;
        self.count += 1;
        Ok(())
    }

    /// Commits, merges into one segment and returns the collection statistics.
    ///
    /// # Errors
    /// [`Error::Tantivy`] when the commit or the merge fails.
    pub fn finish(mut self) -> Result<BuildStats> {
        self.writer.commit()?;
        let ids = self.writer.index().searchable_segment_ids()?;
        if ids.len() > 1 {
            self.writer.merge(&ids).wait()?;
        }
        self.writer.wait_merging_threads()?;
        let n = self.count.max(1) as f32;
        Ok(BuildStats {
            chunks: self.count,
            avg_field_len: self.total_len.map(|t| t as f32 / n),
        })
    }
}
