//! Graph proximity: how close a document is, over at most two relations, to the strongest
//! lexical hits of a query (the anchors).
//!
//! Every relation that ranks ([`Relation::ranks`]: not written in a code block, not a
//! page to itself) is an undirected edge between its two documents. An edge weighs
//! `1 / sqrt(deg(u) × deg(v))`, the symmetric normalisation of label propagation (Zhou et
//! al., 2004, "Learning with Local and Global Consistency"), where `deg` counts a
//! document's distinct neighbours: a hub (an mdBook `SUMMARY.md` that links every chapter)
//! passes little proximity on. A document's proximity is its best path from an anchor,
//! `share(anchor) × Π edge weights` over one or two edges, where `share` is the anchor's
//! score over the best score of the query (in `(0, 1]`). The path names the anchor and
//! the relations that produced it, for `--explain`; its confidence is the weakest of its
//! relations'.

use std::collections::{BTreeMap, HashMap};

use super::relation::{Confidence, Relation};
use super::Graph;

/// A strong lexical hit that proximity spreads from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    /// Its document (snapshot order).
    pub doc: u32,
    /// Its score over the query's best score, in `(0, 1]`.
    pub share: f32,
}

/// How a document was reached from an anchor.
#[derive(Debug, Clone, PartialEq)]
pub struct Reach {
    /// `share × Π edge weights`, in `(0, 1]`.
    pub proximity: f32,
    /// The anchor's document.
    pub anchor: u32,
    /// The relations of the path, from the anchor's side (indices into
    /// [`Graph::relations`]); one or two.
    pub path: Vec<u32>,
    /// The weakest confidence of the path's relations.
    pub confidence: Confidence,
}

/// The undirected neighbourhoods of a graph's documents.
#[derive(Debug, Clone, Default)]
pub struct Neighbours {
    /// Per document: neighbour → the relation that joins them and its confidence (the
    /// strongest relation when several do: observed before fuzzy, then by kind, then the
    /// first).
    adj: Vec<BTreeMap<u32, (u32, Confidence)>>,
}

impl Neighbours {
    /// The neighbourhoods of `graph`'s documents (`graph.pagerank.len()` of them).
    pub fn of(graph: &Graph) -> Neighbours {
        let n = graph.pagerank.len();
        let mut best: Vec<BTreeMap<u32, u32>> = vec![BTreeMap::new(); n];
        let key = |r: &Relation| (r.confidence, r.kind);
        for (i, r) in graph.relations.iter().enumerate() {
            if !r.ranks() || r.from as usize >= n || r.to as usize >= n {
                continue;
            }
            for (a, b) in [(r.from, r.to), (r.to, r.from)] {
                let slot = best[a as usize].entry(b).or_insert(i as u32);
                if key(r) < key(&graph.relations[*slot as usize]) {
                    *slot = i as u32;
                }
            }
        }
        let adj = best
            .into_iter()
            .map(|m| {
                m.into_iter()
                    .map(|(v, i)| (v, (i, graph.relations[i as usize].confidence)))
                    .collect()
            })
            .collect();
        Neighbours { adj }
    }

    fn degree(&self, doc: u32) -> f32 {
        self.adj.get(doc as usize).map_or(0, BTreeMap::len) as f32
    }

    fn weight(&self, u: u32, v: u32) -> f32 {
        1.0 / (self.degree(u) * self.degree(v)).sqrt()
    }

    /// Every document within two relations of an anchor (an anchor's own
    /// document only when another anchor reaches it), with its best path. Of equal
    /// paths the first found is kept: anchors in the given order, neighbours in document
    /// order.
    pub fn reach(&self, anchors: &[Anchor]) -> HashMap<u32, Reach> {
        let mut out: HashMap<u32, Reach> = HashMap::new();
        let mut offer = |doc: u32, r: Reach| match out.get(&doc) {
            Some(old) if old.proximity >= r.proximity => {}
            _ => {
                out.insert(doc, r);
            }
        };
        for a in anchors {
            let Some(first) = self.adj.get(a.doc as usize) else {
                continue;
            };
            for (&m, &(r1, c1)) in first {
                let p1 = a.share * self.weight(a.doc, m);
                offer(
                    m,
                    Reach {
                        proximity: p1,
                        anchor: a.doc,
                        path: vec![r1],
                        confidence: c1,
                    },
                );
                for (&v, &(r2, c2)) in &self.adj[m as usize] {
                    if v == a.doc {
                        continue;
                    }
                    offer(
                        v,
                        Reach {
                            proximity: p1 * self.weight(m, v),
                            anchor: a.doc,
                            path: vec![r1, r2],
                            confidence: c1.max(c2),
                        },
                    );
                }
            }
        }
        out
    }
}
