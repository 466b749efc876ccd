//! Whole-unit statistics for passage-level evidence: which section and which page each
//! chunk belongs to, and each unit's field lengths as if its chunks were one document
//! (Callan, 1994, "Passage-level evidence in document retrieval": a passage's score
//! combined with the score of the unit it belongs to). Sections weigh in by
//! `QueryParams::section_weight`, pages by `QueryParams::page_weight`.

use super::reader::LexicalIndex;
use crate::config::{Field as DocField, PerField};
use crate::error::Result;
use std::collections::HashMap;

/// What a chunk is scored as part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// The chunk's section: its pieces (one heading's text cut at the chunk budget).
    Section,
    /// The chunk's page: every chunk of its file.
    Page,
}

/// Per-unit statistics of one index, built on first use.
pub(crate) struct Units {
    unit: Unit,
    /// The unit of each chunk ordinal, named by the ordinal of its first chunk
    /// (`[chunks]`; `u32::MAX` for an ordinal no document has).
    of: Vec<u32>,
    /// Field lengths of each unit, in tokens, at the ordinal of its first chunk
    /// (`[chunks]`; zeros elsewhere).
    lens: Vec<PerField<f32>>,
    /// Mean field lengths over units, in tokens.
    avg: PerField<f32>,
    /// `(unit, chunk ordinal)` of every chunk with a unit, sorted: a unit's chunks,
    /// which need not be consecutive (a box with a heading of its own can interrupt a
    /// section, whose chunks after it are still the section's).
    members: Vec<(u32, u32)>,
}

/// How a field of a unit's chunks makes the field of the whole unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Merge {
    /// Frequencies and lengths add up: the text each chunk holds (body, code, symbols; a
    /// page's headings too, each section has its own).
    Sum,
    /// The first chunk's: a piece's summary is its own first paragraph, the unit's is
    /// the first chunk's.
    First,
    /// The same in every chunk (title, path, the page's aliases; a section's headings).
    Same,
}

fn merge_of(unit: Unit, f: usize) -> Merge {
    let summed = f == DocField::Body.index()
        || f == DocField::Code.index()
        || f == DocField::Symbols.index()
        || (unit == Unit::Page && f == DocField::Headings.index());
    if summed {
        Merge::Sum
    } else if f == DocField::Summary.index() {
        Merge::First
    } else {
        Merge::Same
    }
}

/// Adds chunk values `piece` (of the chunk at `ord`) into the unit's `acc` (the unit's
/// first chunk at `first`).
fn merge_into(
    unit: Unit,
    acc: &mut PerField<f32>,
    piece: &PerField<f32>,
    ord: usize,
    first: usize,
) {
    for f in 0..crate::config::FIELDS {
        acc[f] = match merge_of(unit, f) {
            Merge::Sum => acc[f] + piece[f],
            Merge::First if ord == first => piece[f],
            Merge::First => acc[f],
            Merge::Same => acc[f].max(piece[f]),
        };
    }
}

/// Every chunk's section (the ordinal of its first piece, `u32::MAX` when unknown) and
/// field lengths, in tokens, by ordinal.
pub(crate) struct ChunkStats {
    section_of: Vec<u32>,
    lens: Vec<PerField<f32>>,
}

impl Units {
    /// The units `of` names (by ordinal: its unit's first ordinal), their lengths merged
    /// from the chunks' `lens`.
    fn new(unit: Unit, of: Vec<u32>, lens_of: &[PerField<f32>]) -> Units {
        let n = of.len();
        let mut lens: Vec<PerField<f32>> = vec![[0.0; crate::config::FIELDS]; n];
        for (ord, l) in lens_of.iter().enumerate().take(n) {
            let first = of[ord] as usize;
            if let Some(acc) = lens.get_mut(first) {
                merge_into(unit, acc, l, ord, first);
            }
        }
        let mut sum = [0.0f64; crate::config::FIELDS];
        let mut with = [0usize; crate::config::FIELDS];
        let mut units = 0usize;
        for o in (0..n).filter(|&o| of[o] as usize == o) {
            units += 1;
            for f in 0..crate::config::FIELDS {
                sum[f] += f64::from(lens[o][f]);
                with[f] += usize::from(lens[o][f] > 0.0);
            }
        }
        // a sparse field's average is over the units that have it
        let avg = std::array::from_fn(|f| {
            let over = match crate::config::Field::ALL[f].is_sparse() {
                true => with[f],
                false => units,
            };
            (sum[f] / over.max(1) as f64) as f32
        });
        let mut members: Vec<(u32, u32)> = of
            .iter()
            .enumerate()
            .filter(|(_, &u)| u != u32::MAX)
            .filter_map(|(ord, &u)| u32::try_from(ord).ok().map(|o| (u, o)))
            .collect();
        members.sort_unstable();
        Units {
            unit,
            of,
            lens,
            avg,
            members,
        }
    }

    /// The sections of `stats`.
    pub(crate) fn sections(stats: &ChunkStats) -> Units {
        Units::new(Unit::Section, stats.section_of.clone(), &stats.lens)
    }

    /// The pages of `stats`, the first ordinal of each file given in file order
    /// (`starts`, ascending; a file of no chunk repeats the next one's).
    pub(crate) fn pages(stats: &ChunkStats, starts: &[u64]) -> Units {
        let n = stats.lens.len();
        let of = (0..n as u64)
            .map(|ord| {
                let at = starts.partition_point(|&s| s <= ord);
                match at.checked_sub(1).map(|i| starts[i]) {
                    Some(first) if first <= u64::from(u32::MAX) => first as u32,
                    _ => u32::MAX,
                }
            })
            .collect();
        Units::new(Unit::Page, of, &stats.lens)
    }
}

impl Units {
    /// The chunk ordinals of unit `first` (named by its first chunk), ascending.
    pub fn members(&self, first: u32) -> impl Iterator<Item = u64> + '_ {
        let at = self.members.partition_point(|&(u, _)| u < first);
        self.members[at..]
            .iter()
            .take_while(move |&&(u, _)| u == first)
            .map(|&(_, o)| u64::from(o))
    }

    /// The unit of chunk `ord`: the ordinal of the unit's first chunk (`None` for an
    /// ordinal out of range).
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
    pub(crate) fn chunk_stats(&self) -> Result<ChunkStats> {
        let searcher = self.searcher();
        let n = self.n as usize;
        let mut of = vec![u32::MAX; n];
        let mut lens: Vec<PerField<f32>> = vec![[0.0; crate::config::FIELDS]; n];
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
                    lens[ord][f] = norm.fieldnorm(doc) as f32;
                }
            }
        }
        Ok(ChunkStats {
            section_of: of,
            lens,
        })
    }

    /// The BM25F score of each candidate's whole unit, by unit: the candidates'
    /// frequencies merged per unit as the lengths are ([`Merge`]), over the unit's
    /// lengths and the mean unit lengths. O(candidates × query terms).
    pub(super) fn unit_scores(
        &self,
        sec: &Units,
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
                tfs.resize(tfs.len() + nq, [0.0; crate::config::FIELDS]);
                firsts.len() - 1
            });
            for (q, tf) in accs.tf(i).iter().enumerate() {
                merge_into(
                    sec.unit,
                    &mut tfs[row * nq + q],
                    tf,
                    acc.ord as usize,
                    s as usize,
                );
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
