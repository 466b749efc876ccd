//! Per-query accumulators: one per candidate chunk, held in flat arrays (no allocation
//! per candidate stored, no hashing per posting).

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

/// A posting that matched: candidate, query term, field, variant (for explain), and the
/// weighted term frequency it adds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Matched {
    pub acc: u32,
    pub q: u16,
    pub field: u8,
    pub variant: u16,
    pub tf: f32,
}

/// Every candidate of one query.
///
/// `slots[segment][doc]` is the candidate's index plus one (0: not a candidate), so a
/// posting finds its accumulator with two array reads. Term frequencies are kept per
/// matched posting, not per candidate and query term (a candidate holds few of a long
/// query's terms): a candidate's rows are summed from its postings, in the order read,
/// when asked for. Memory: 4 bytes per document of each segment holding a candidate,
/// about 60 bytes per candidate and 20 per matched posting.
pub(super) struct Accs {
    nq: usize,
    list: Vec<Acc>,
    matched: Vec<Matched>,
    /// The matched postings by candidate (indices into `matched`, in the order read,
    /// and where each candidate's begin), built when first asked for.
    by_acc: std::sync::OnceLock<(Vec<u32>, Vec<u32>)>,
    slots: Vec<Vec<u32>>,
}

impl Accs {
    /// Empty accumulators for `nq` query terms over `segments` segments.
    pub fn new(nq: usize, segments: usize) -> Accs {
        Accs {
            nq,
            list: Vec::new(),
            matched: Vec::new(),
            by_acc: std::sync::OnceLock::new(),
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
            *slot = self.list.len() as u32;
        }
        *slot as usize - 1
    }

    /// Adds `tf` for term `q` in `field` (variant `variant`) to candidate `i`.
    pub fn add(&mut self, i: usize, q: usize, field: usize, variant: usize, tf: f32) {
        if self.by_acc.get().is_some() {
            self.by_acc = std::sync::OnceLock::new();
        }
        self.matched.push(Matched {
            acc: i as u32,
            q: q as u16,
            field: field as u8,
            variant: variant as u16,
            tf,
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

    /// Candidate `i`'s weighted term frequencies: one row per query term, each the sum
    /// of its matched postings in the order read.
    pub fn tf(&self, i: usize) -> Vec<PerField<f32>> {
        let mut rows = vec![[0.0; crate::config::FIELDS]; self.nq];
        for m in self.postings_of(i) {
            if let Some(row) = rows.get_mut(m.q as usize) {
                row[m.field as usize] += m.tf;
            }
        }
        rows
    }

    /// Candidate `i`'s matched postings, in the order read.
    fn postings_of(&self, i: usize) -> impl Iterator<Item = &Matched> + '_ {
        let (order, starts) = self.by_acc.get_or_init(|| self.index_by_acc());
        let from = starts.get(i).copied().unwrap_or(0) as usize;
        let to = starts.get(i + 1).copied().unwrap_or(0) as usize;
        order
            .get(from..to)
            .unwrap_or(&[])
            .iter()
            .map(|&k| &self.matched[k as usize])
    }

    /// `matched`'s indices grouped by candidate (a counting sort, stable), and where
    /// each candidate's group begins (`len + 1` entries).
    fn index_by_acc(&self) -> (Vec<u32>, Vec<u32>) {
        let mut starts = vec![0u32; self.list.len() + 1];
        for m in &self.matched {
            starts[m.acc as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut order = vec![0u32; self.matched.len()];
        for (k, m) in self.matched.iter().enumerate() {
            let at = &mut next[m.acc as usize];
            order[*at as usize] = k as u32;
            *at += 1;
        }
        (order, starts)
    }

    /// Every matched posting, in the order read.
    pub fn matched(&self) -> &[Matched] {
        &self.matched
    }

    /// Candidate `i`'s matched postings, in the order read.
    pub fn matched_of(&self, i: usize) -> Vec<Matched> {
        self.postings_of(i).copied().collect()
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

    #[test]
    fn rows_are_summed_from_each_candidates_postings_in_the_order_read() {
        let mut a = Accs::new(3, 1);
        let x = a.entry(0, 4, 1);
        let y = a.entry(0, 4, 2);
        a.add(x, 2, 0, 0, 1.0);
        a.add(y, 2, 0, 0, 7.0);
        a.add(x, 2, 0, 1, 0.25);
        assert_eq!(a.tf(x)[2][0], 1.25);
        assert_eq!(a.tf(y)[2][0], 7.0);
        let variants: Vec<u16> = a.matched_of(x).iter().map(|m| m.variant).collect();
        assert_eq!(variants, [0, 1]);
        // a posting added after the rows were read is counted
        a.add(y, 0, 6, 0, 3.0);
        assert_eq!(a.tf(y)[0][6], 3.0);
        assert_eq!(a.matched_of(y).len(), 2);
        // a candidate with no posting (an exact key alone) has empty rows
        let z = a.entry(0, 4, 3);
        assert_eq!(a.tf(z), vec![[0.0; crate::config::FIELDS]; 3]);
        assert!(a.matched_of(z).is_empty());
    }
}
