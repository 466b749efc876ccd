//! Per-query accumulators: one per candidate chunk, held in flat arrays (no allocation
//! per candidate, no hashing per posting).

use crate::config::PerField;
use tantivy::{DocAddress, DocId};

/// What one query found in one candidate chunk (its term frequencies live in
/// [`Accs::tf`]).
#[derive(Debug, Clone, Default)]
pub(super) struct Acc {
    pub addr: Option<DocAddress>,
    pub ord: u64,
    /// Field lengths (tantivy field norms), in tokens.
    pub lens: PerField<f32>,
    /// Exact id, path and symbol matches.
    pub exact: [bool; 3],
}

/// A posting that matched: candidate, query term, field, variant (for explain).
#[derive(Debug, Clone, Copy)]
pub(super) struct Matched {
    pub acc: u32,
    pub q: u16,
    pub field: u8,
    pub variant: u16,
}

/// Every candidate of one query.
///
/// `slots[segment][doc]` is the candidate's index plus one (0: not a candidate), so a
/// posting finds its accumulator with two array reads. Memory: 4 bytes per document of
/// each segment holding a candidate, `nq × 28` bytes per candidate.
pub(super) struct Accs {
    nq: usize,
    list: Vec<Acc>,
    /// `nq` rows of per-field weighted term frequencies per candidate.
    tf: Vec<PerField<f32>>,
    matched: Vec<Matched>,
    slots: Vec<Vec<u32>>,
}

impl Accs {
    /// Empty accumulators for `nq` query terms over `segments` segments.
    pub fn new(nq: usize, segments: usize) -> Accs {
        Accs {
            nq,
            list: Vec::new(),
            tf: Vec::new(),
            matched: Vec::new(),
            slots: vec![Vec::new(); segments],
        }
    }

    /// The index of `doc`'s candidate in segment `seg` (of `max_doc` documents), created
    /// if new.
    pub fn entry(&mut self, seg: usize, max_doc: u32, doc: DocId) -> usize {
        let slots = &mut self.slots[seg];
        if slots.is_empty() {
            slots.resize(max_doc as usize, 0);
        }
        let slot = &mut slots[doc as usize];
        if *slot == 0 {
            self.list.push(Acc {
                addr: Some(DocAddress::new(seg as u32, doc)),
                ..Acc::default()
            });
            self.tf
                .resize(self.tf.len() + self.nq, [0.0; crate::config::FIELDS]);
            *slot = self.list.len() as u32;
        }
        *slot as usize - 1
    }

    /// Adds `tf` for term `q` in `field` (variant `variant`) to candidate `i`.
    pub fn add(&mut self, i: usize, q: usize, field: usize, variant: usize, tf: f32) {
        self.tf[i * self.nq + q][field] += tf;
        self.matched.push(Matched {
            acc: i as u32,
            q: q as u16,
            field: field as u8,
            variant: variant as u16,
        });
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, i: usize) -> &Acc {
        &self.list[i]
    }

    pub fn get_mut(&mut self, i: usize) -> &mut Acc {
        &mut self.list[i]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Acc> {
        self.list.iter()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Acc> {
        self.list.iter_mut()
    }

    /// Candidate `i`'s term frequencies: one row per query term.
    pub fn tf(&self, i: usize) -> &[PerField<f32>] {
        &self.tf[i * self.nq..(i + 1) * self.nq]
    }

    /// Every matched posting, in the order read.
    pub fn matched(&self) -> &[Matched] {
        &self.matched
    }

    /// Candidate `i`'s matched postings, in the order read.
    pub fn matched_of(&self, i: usize) -> Vec<Matched> {
        self.matched
            .iter()
            .filter(|m| m.acc as usize == i)
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_candidate_per_document_and_rows_per_term() {
        let mut a = Accs::new(2, 2);
        let x = a.entry(1, 10, 7);
        let y = a.entry(0, 8, 7);
        assert_eq!(a.entry(1, 10, 7), x);
        assert_ne!(x, y);
        a.add(x, 1, 3, 0, 2.0);
        a.add(x, 1, 3, 1, 0.5);
        assert_eq!(a.tf(x)[1][3], 2.5);
        assert_eq!(a.tf(x)[0], [0.0; crate::config::FIELDS]);
        assert_eq!(a.tf(y), [[0.0; crate::config::FIELDS]; 2]);
        assert_eq!(a.get(x).addr, Some(DocAddress::new(1, 7)));
        assert_eq!(a.matched().len(), 2);
        assert_eq!(a.len(), 2);
    }
}
