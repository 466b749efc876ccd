//! What the whole index holds of one query term — its document frequency and whether
//! any chunk holds it — counted from the postings' document ids alone (no frequencies,
//! no accumulators) and remembered per opened index, so a query that does not score
//! every posting ([`super::topk`]) still ranks with the collection's IDF.

use crate::config::Field as DocField;
use crate::error::Result;
use std::collections::HashMap;
use std::sync::Mutex;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, SegmentReader, Term, TERMINATED};

/// The postings one query term is read from: its variants (the word, inflections,
/// prefix expansions) in the fields it is searched in.
pub(super) struct TermSpec<'a> {
    /// The index terms, the word itself first.
    pub variants: &'a [(String, f32)],
    /// How many of `variants` are the word and its inflections (the rest are longer
    /// words it begins).
    pub whole_variants: usize,
    /// The prefix expansions (past `whole_variants`) that are inflections of the word:
    /// they make it found too.
    pub inflected: &'a [usize],
    /// The inflections were added to a word the collection uses: they do not count in
    /// the document frequency.
    pub extra_inflections: bool,
    /// A stop word: not searched in the title, headings and path.
    pub stop: bool,
}

/// What the whole index holds of one query term.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct TermStats {
    /// Chunks holding a variant that counts in the document frequency, in a field the
    /// term is searched in (BM25F df: any field).
    pub df: u64,
    /// Some chunk holds any of its variants.
    pub any: bool,
    /// Some chunk holds the word itself or an inflection of it.
    pub whole: bool,
}

/// Remembered [`TermStats`] of one opened index, by [`TermSpec`]; cleared when it
/// reaches [`CACHE_ENTRIES`].
#[derive(Default)]
pub(crate) struct StatsCache(Mutex<HashMap<String, TermStats>>);

/// At most this many terms' statistics are remembered (about 100 bytes each).
const CACHE_ENTRIES: usize = 65_536;

/// Whether variant `v` of a term is an inflection added to a word the collection uses
/// (`extra_inflections`; variants `1..whole_variants` are the inflections): it counts
/// once per field and not in the term's document frequency.
pub(super) fn added_inflection(extra_inflections: bool, whole_variants: usize, v: usize) -> bool {
    extra_inflections && v >= 1 && v < whole_variants
}

impl TermSpec<'_> {
    /// Whether variant `v` is the word itself or an inflection of it (a prefix
    /// expansion is not, unless it is an inflected form).
    fn is_whole(&self, v: usize) -> bool {
        v < self.whole_variants || self.inflected.contains(&v)
    }

    fn key(&self) -> String {
        let mut k = format!(
            "{}{}{}",
            u8::from(self.stop),
            u8::from(self.extra_inflections),
            self.whole_variants
        );
        for (v, _) in self.variants {
            k.push('\u{1f}');
            k.push_str(v);
        }
        k
    }

    /// Whether variant `v` counts in the document frequency.
    fn counts(&self, v: usize) -> bool {
        !added_inflection(self.extra_inflections, self.whole_variants, v)
    }
}

impl StatsCache {
    /// The [`TermStats`] of `term` over every chunk of `s`, whose text fields are
    /// `fields` (`config::Field::ALL` order): the same document frequency as counting
    /// the chunks an exhaustive run accumulates, deleted documents left out.
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when a term dictionary or posting list cannot be read.
    pub(super) fn term_stats(
        &self,
        fields: &[Field],
        s: &Searcher,
        term: &TermSpec,
    ) -> Result<TermStats> {
        let key = term.key();
        let cached = self.0.lock().ok().and_then(|c| c.get(&key).copied());
        if let Some(t) = cached {
            return Ok(t);
        }
        let mut out = TermStats::default();
        let mut bits: Vec<u64> = Vec::new();
        for sr in s.segment_readers() {
            count_in(fields, sr, term, &mut bits, &mut out)?;
        }
        if let Ok(mut c) = self.0.lock() {
            if c.len() >= CACHE_ENTRIES {
                c.clear();
            }
            c.insert(key, out);
        }
        Ok(out)
    }
}

/// Adds segment `sr`'s part of `term`'s statistics to `out` (`bits`: a scratch bit set,
/// one bit per document).
fn count_in(
    fields: &[Field],
    sr: &SegmentReader,
    term: &TermSpec,
    bits: &mut Vec<u64>,
    out: &mut TermStats,
) -> Result<()> {
    let mut lists = Vec::new();
    for (f, &field) in fields.iter().enumerate() {
        if term.stop && DocField::ALL[f].is_about() {
            continue;
        }
        let inv = sr.inverted_index(field)?;
        for (v, (text, _)) in term.variants.iter().enumerate() {
            let t = Term::from_field_text(field, text);
            if let Some(info) = inv.get_term_info(&t).map_err(tantivy::TantivyError::from)? {
                lists.push((inv.clone(), v, info));
            }
        }
    }
    let deletes = sr.num_deleted_docs() > 0;
    let counted: Vec<_> = lists.iter().filter(|(_, v, _)| term.counts(*v)).collect();
    if !deletes {
        // a term info is written only for a term some document holds
        out.any |= !lists.is_empty();
        out.whole |= lists.iter().any(|(_, v, _)| term.is_whole(*v));
        if let [(_, _, info)] = counted.as_slice() {
            out.df += u64::from(info.doc_freq);
            return Ok(());
        }
    }
    bits.clear();
    bits.resize((sr.max_doc() as usize).div_ceil(64), 0);
    for (inv, v, info) in &lists {
        let mut post = inv
            .read_postings_from_terminfo(info, IndexRecordOption::Basic)
            .map_err(tantivy::TantivyError::from)?;
        let count = term.counts(*v);
        let mut doc = post.doc();
        while doc != TERMINATED {
            if !sr.is_deleted(doc) {
                out.any = true;
                out.whole |= term.is_whole(*v);
                if !count {
                    // only whether a chunk holds it
                    break;
                }
                bits[doc as usize / 64] |= 1u64 << (doc % 64);
            }
            doc = post.advance();
        }
    }
    out.df += bits.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
    Ok(())
}
