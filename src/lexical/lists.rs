//! The posting lists one query reads, looked up in every segment's term dictionaries
//! once per query.

use super::reader::LexicalIndex;
use super::search::QTerm;
use crate::config::Field as DocField;
use crate::error::Result;
use tantivy::postings::SegmentPostings;
use tantivy::schema::IndexRecordOption;
use tantivy::{Searcher, Term};

/// One posting list a query reads: query term `q`'s variant `v` in field `f` of one
/// segment, as its dictionary gives it.
pub(super) struct List {
    pub f: usize,
    pub q: usize,
    pub v: usize,
    inv: std::sync::Arc<tantivy::InvertedIndexReader>,
    info: tantivy::postings::TermInfo,
}

/// Every posting list of a query that some document holds, by segment, in the order an
/// exhaustive run reads them (field, term, variant): looked up in the term
/// dictionaries once per query, however many terms become essential.
pub(super) struct Lists(Vec<Vec<List>>);

impl Lists {
    pub fn of(&self, seg: usize) -> &[List] {
        self.0.get(seg).map_or(&[], Vec::as_slice)
    }
}

impl List {
    /// Its postings, with `option` (document ids only, or frequencies too).
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when the postings cannot be read.
    pub fn postings(&self, option: IndexRecordOption) -> Result<SegmentPostings> {
        Ok(self
            .inv
            .read_postings_from_terminfo(&self.info, option)
            .map_err(tantivy::TantivyError::from)?)
    }
}

impl LexicalIndex {
    /// The [`Lists`] of `qterms` (a stop word's not in title, headings or path).
    pub(super) fn lists(&self, s: &Searcher, qterms: &[QTerm]) -> Result<Lists> {
        let mut out = Vec::with_capacity(s.segment_readers().len());
        for sr in s.segment_readers() {
            let mut of_seg = Vec::new();
            for (f, &field) in self.fields.text.iter().enumerate() {
                let inv = sr.inverted_index(field)?;
                for (q, qt) in qterms.iter().enumerate() {
                    if qt.stop && DocField::ALL[f].is_about() {
                        continue;
                    }
                    for (v, (term, _)) in qt.variants.iter().enumerate() {
                        let t = Term::from_field_text(field, term);
                        if let Some(info) =
                            inv.get_term_info(&t).map_err(tantivy::TantivyError::from)?
                        {
                            of_seg.push(List {
                                f,
                                q,
                                v,
                                inv: inv.clone(),
                                info,
                            });
                        }
                    }
                }
            }
            out.push(of_seg);
        }
        Ok(Lists(out))
    }
}
