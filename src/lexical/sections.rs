//! Whole-section statistics for section evidence (`QueryParams::section_weight`): which
//! section each chunk belongs to, and each section's field lengths as if its pieces were
//! one document (Callan, 1994, "Passage-level evidence in document retrieval": a
//! passage's score combined with the score of the unit it belongs to).

use super::reader::LexicalIndex;
use crate::config::{Field as DocField, PerField};
use crate::error::Result;
use std::collections::HashMap;

/// Per-section statistics of one index, built on first use.
pub(crate) struct Sections {
    /// The section of each chunk ordinal, named by the ordinal of its first piece
    /// (`[chunks]`; `u32::MAX` for an ordinal no document has).
    of: Vec<u32>,
    /// Field lengths of each section, in tokens, at the ordinal of its first piece
    /// (`[chunks]`; zeros elsewhere).
    lens: Vec<PerField<f32>>,
    /// Mean field lengths over sections, in tokens.
    avg: PerField<f32>,
}

/// How a field of a section's pieces makes the field of the whole section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merge {
    /// Frequencies and lengths add up: the text each piece holds (body, symbols).
    Sum,
    /// The first piece's: a piece's summary is its own first paragraph, the section's is
    /// the first piece's.
    First,
    /// The same in every piece (title, headings, path, the page's aliases).
    Same,
}

fn merge_of(f: usize) -> Merge {
    if f == DocField::Body.index() || f == DocField::Symbols.index() {
        Merge::Sum
    } else if f == DocField::Summary.index() {
        Merge::First
    } else {
        Merge::Same
    }
}

/// Adds piece values `piece` (of the chunk at `ord`) into the section's `acc` (the
/// section's first piece at `first`).
fn merge_into(acc: &mut PerField<f32>, piece: &PerField<f32>, ord: usize, first: usize) {
    for f in 0..7 {
        acc[f] = match merge_of(f) {
            Merge::Sum => acc[f] + piece[f],
            Merge::First if ord == first => piece[f],
            Merge::First => acc[f],
            Merge::Same => acc[f].max(piece[f]),
        };
    }
}

impl Sections {
    /// The section of chunk `ord`: the ordinal of the section's first piece (`None` for
    /// an ordinal out of range).
    pub fn of(&self, ord: u64) -> Option<u32> {
        usize::try_from(ord)
            .ok()
            .and_then(|o| self.of.get(o))
            .copied()
            .filter(|&s| s != u32::MAX)
    }
}

impl LexicalIndex {
    /// Reads every chunk's section and field lengths (once per opened index): the fast
    /// fields and field norms of every document, no stored chunk.
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when a fast field or field norm cannot be read (an index
    /// written before sections were recorded).
    pub(crate) fn build_sections(&self) -> Result<Sections> {
        let searcher = self.searcher();
        let n = self.n as usize;
        let mut of = vec![u32::MAX; n];
        let mut piece_lens: Vec<PerField<f32>> = vec![[0.0; 7]; n];
        for sr in searcher.segment_readers() {
            let ords = self.segment_ords(sr)?;
            let local = sr.fast_fields().u64("ord")?;
            let section = sr.fast_fields().u64("section")?;
            let norms = self.field_norms(sr)?;
            for doc in sr.doc_ids_alive() {
                let ord = ords.of(doc) as usize;
                let (Some(l), Some(s)) = (local.first(doc), section.first(doc)) else {
                    continue;
                };
                // the first piece is written first: its place is never after a piece's
                if ord >= n || s > l || ord as u64 > u64::from(u32::MAX) {
                    continue;
                }
                of[ord] = (ord as u64 - (l - s)) as u32;
                for (f, norm) in norms.iter().enumerate() {
                    piece_lens[ord][f] = norm.fieldnorm(doc) as f32;
                }
            }
        }
        // a section's lengths, kept at the ordinal of its first piece
        let mut lens: Vec<PerField<f32>> = vec![[0.0; 7]; n];
        for (ord, l) in piece_lens.iter().enumerate() {
            let first = of[ord] as usize;
            if let Some(acc) = lens.get_mut(first) {
                merge_into(acc, l, ord, first);
            }
        }
        let mut sum = [0.0f64; 7];
        let mut sections = 0usize;
        for o in (0..n).filter(|&o| of[o] as usize == o) {
            sections += 1;
            for f in 0..7 {
                sum[f] += f64::from(lens[o][f]);
            }
        }
        let avg = sum.map(|s| (s / sections.max(1) as f64) as f32);
        Ok(Sections { of, lens, avg })
    }

    /// The BM25F score of each candidate's whole section, by section: the candidates'
    /// frequencies merged per section as the lengths are ([`Merge`]), over the section's
    /// lengths and the mean section lengths. O(candidates × query terms).
    pub(super) fn section_scores(
        &self,
        sec: &Sections,
        accs: &super::accs::Accs,
        idfs: &[(u64, f32)],
        qw: &[f32],
    ) -> HashMap<u32, f32> {
        let nq = qw.len();
        let mut row_of: HashMap<u32, usize> = HashMap::new();
        let mut firsts: Vec<u32> = Vec::new();
        let mut tfs: Vec<PerField<f32>> = Vec::new();
        for (i, acc) in accs.iter().enumerate() {
            let Some(s) = sec.of(acc.ord) else { continue };
            let row = *row_of.entry(s).or_insert_with(|| {
                firsts.push(s);
                tfs.resize(tfs.len() + nq, [0.0; 7]);
                firsts.len() - 1
            });
            for (q, tf) in accs.tf(i).iter().enumerate() {
                merge_into(&mut tfs[row * nq + q], tf, acc.ord as usize, s as usize);
            }
        }
        firsts
            .iter()
            .enumerate()
            .map(|(row, &s)| {
                let lens = &sec.lens[s as usize];
                let score = (0..nq)
                    .map(|q| {
                        let tf = &tfs[row * nq + q];
                        let ptf = super::bm25f::pseudo_tf(&self.params, tf, lens, &sec.avg);
                        qw[q] * idfs[q].1 * super::bm25f::saturate(ptf, self.params.k1)
                    })
                    .sum();
                (s, score)
            })
            .collect()
    }
}
