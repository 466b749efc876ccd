//! Graph proximity at query time: the reach of the strongest lexical hits over the
//! generation's relations ([`crate::graph::proximity`]), as a named score part of each
//! result and as results that a relation alone surfaces.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::hit::{Hit, ProximityExplain, RelationView, SearchOptions};
use super::opened::{shown_paths, OpenGeneration};
use crate::error::Result;
use crate::graph::proximity::{Anchor, Neighbours, Reach};
use crate::graph::{Confidence, Graph};
use crate::lexical::{LexicalRun, Scored};

/// How many of the strongest lexical hits (chunks) proximity spreads from.
pub const ANCHORS: usize = 10;

/// At most this many chunks of a page are read to find the section a relation names.
const SECTION_SCAN: u64 = 256;

/// The graph a search reads for proximity, loaded once per open index.
struct ProximityGraph {
    graph: Graph,
    neighbours: Neighbours,
    /// First chunk ordinal of each document, then the chunk count (`[documents + 1]`).
    first_ord: Vec<u64>,
    /// Document paths (`root:path` when the index has several roots).
    paths: Vec<String>,
}

impl ProximityGraph {
    /// Builds the query-time graph from `graph`, the chunk count of each document and
    /// the document paths (all in snapshot order); `None` when their lengths disagree or
    /// the counts do not add up to the index's `total` chunks.
    fn new(graph: Graph, chunks: &[u32], paths: Vec<String>, total: u64) -> Option<Self> {
        let sum: u64 = chunks.iter().map(|&n| u64::from(n)).sum();
        if chunks.len() != graph.pagerank.len() || paths.len() != chunks.len() || sum != total {
            return None;
        }
        let mut first_ord = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0u64;
        for &n in chunks {
            first_ord.push(at);
            at += u64::from(n);
        }
        first_ord.push(at);
        let neighbours = Neighbours::of(&graph);
        Some(ProximityGraph {
            graph,
            neighbours,
            first_ord,
            paths,
        })
    }

    /// The document chunk `ord` belongs to.
    fn doc_of(&self, ord: u64) -> Option<u32> {
        let total = *self.first_ord.last()?;
        if ord >= total {
            return None;
        }
        let d = self.first_ord.partition_point(|&f| f <= ord) - 1;
        u32::try_from(d).ok()
    }
}

/// One query's proximity: the pages within reach of its anchors.
pub(super) struct ProximityRun<'a> {
    pg: &'a ProximityGraph,
    reach: HashMap<u32, Reach>,
    gain: f32,
}

impl ProximityRun<'_> {
    /// The part added to chunk `ord`'s score, `gain × best × reach` (0 out of reach).
    pub(super) fn part(&self, ord: u64, best: f32) -> f32 {
        self.reach_of(ord)
            .map_or(0.0, |r| self.gain * best * r.proximity)
    }

    fn reach_of(&self, ord: u64) -> Option<&Reach> {
        self.reach.get(&self.pg.doc_of(ord)?)
    }

    /// The confidence of a result the relations alone surfaced: the weaker of its
    /// anchor's (observed: a lexical hit) and its path's.
    pub(super) fn confidence(&self, ord: u64) -> Confidence {
        self.reach_of(ord)
            .map_or(Confidence::Observed, |r| r.confidence)
    }

    /// Pages within reach that have chunks and none of `present` (chunk ordinals) is on,
    /// closest first (ties by document), at most `limit`; each as its first chunk's
    /// ordinal (after the cut, [`Self::surface`] picks the chunk to show).
    pub(super) fn graph_only(&self, present: impl Iterator<Item = u64>, limit: usize) -> Vec<u64> {
        if self.gain <= 0.0 {
            return Vec::new();
        }
        let on: HashSet<u32> = present.filter_map(|o| self.pg.doc_of(o)).collect();
        let first = |d: u32| self.pg.first_ord[d as usize];
        let has_chunks = |d: u32| first(d) < self.pg.first_ord[d as usize + 1];
        let mut docs: Vec<(&u32, &Reach)> = self
            .reach
            .iter()
            .filter(|(d, _)| !on.contains(d) && has_chunks(**d))
            .collect();
        docs.sort_by(|a, b| b.1.proximity.total_cmp(&a.1.proximity).then(a.0.cmp(b.0)));
        docs.into_iter()
            .take(limit)
            .map(|(&d, _)| first(d))
            .collect()
    }

    /// The chunk to show for a graph-only page whose first chunk is `first`: the section
    /// the last relation of its path names, else `first`.
    pub(super) fn surface(&self, g: &OpenGeneration, first: u64) -> u64 {
        let Some((doc, r)) = self
            .pg
            .doc_of(first)
            .and_then(|d| Some((d, self.reach.get(&d)?)))
        else {
            return first;
        };
        let end = self.pg.first_ord[doc as usize + 1];
        let last = r.path.last().map(|&i| &self.pg.graph.relations[i as usize]);
        let Some(section) = last
            .filter(|l| l.to == doc)
            .and_then(|l| l.section.as_deref())
        else {
            return first;
        };
        (first..end.min(first + SECTION_SCAN))
            .find(|&o| {
                g.lexical()
                    .chunk_at(o)
                    .is_ok_and(|c| crate::chunk::section_id(&c.id) == section)
            })
            .unwrap_or(first)
    }

    /// Sets a hit's confidence (for a graph-only one) and its proximity explain, when
    /// explaining; `best` is the best score of its mode.
    pub(super) fn mark(&self, hit: &mut Hit, best: f32, graph_only: bool) {
        if graph_only {
            hit.confidence = self.confidence(hit.ord);
        }
        if let Some(x) = hit.explain.as_mut() {
            x.proximity = Some(self.explain(hit.ord, best, graph_only));
        }
    }

    /// The explain of chunk `ord` whose mode's best score is `best`.
    pub(super) fn explain(&self, ord: u64, best: f32, graph_only: bool) -> ProximityExplain {
        let Some(r) = self.reach_of(ord) else {
            return ProximityExplain::default();
        };
        let path = |d: u32| self.pg.paths.get(d as usize).cloned().unwrap_or_default();
        let via = r
            .path
            .iter()
            .map(|&i| RelationView::of(&self.pg.graph.relations[i as usize], path))
            .collect();
        ProximityExplain {
            proximity: self.gain * best * r.proximity,
            reach: r.proximity,
            anchor: Some(path(r.anchor)),
            via,
            graph_only,
        }
    }
}

/// The proximity part of an opened index: its graph, read on first use.
#[derive(Default)]
pub struct ProximityPart {
    /// `None` inside: the generation has no graph of this version, or it does not match
    /// the snapshot (proximity is then 0).
    graph: OnceLock<Option<ProximityGraph>>,
}

impl ProximityPart {
    /// The graph for proximity, read once; `None` when the generation has no graph of
    /// this version or it does not match the snapshot (proximity is then 0).
    fn graph(&self, g: &OpenGeneration) -> Option<&ProximityGraph> {
        self.graph
            .get_or_init(|| {
                let gen = g.generation_dir();
                let graph = crate::generation::load_graph(&gen).ok()??;
                let chunks = crate::generation::chunk_counts(&gen)?;
                let files = &g.snapshot_ref().ok()?.files;
                let paths = shown_paths(files);
                let total = g.manifest().collection.chunks;
                ProximityGraph::new(graph, &chunks, paths, total)
            })
            .as_ref()
    }

    /// The proximity of a query whose lexical ranking is `lexical` (best first), when
    /// `gain` is positive or `explain` is asked for and the generation has a graph.
    pub(super) fn proximity<'a>(
        &'a self,
        g: &OpenGeneration,
        lexical: &[Scored],
        gain: f32,
        explain: bool,
    ) -> Option<ProximityRun<'a>> {
        if gain <= 0.0 && !explain {
            return None;
        }
        let pg = self.graph(g)?;
        let best = lexical.first().map_or(0.0, |s| s.score);
        let mut seen = HashSet::new();
        let anchors: Vec<Anchor> = lexical
            .iter()
            .take(ANCHORS)
            .filter(|s| s.score > 0.0 && best > 0.0)
            .filter_map(|s| Some((pg.doc_of(s.ord)?, s.score / best)))
            .filter(|(d, _)| seen.insert(*d))
            .map(|(doc, share)| Anchor { doc, share })
            .collect();
        Some(ProximityRun {
            pg,
            reach: pg.neighbours.reach(&anchors),
            gain: gain.max(0.0),
        })
    }

    /// The lexical ranking with each chunk's proximity part added and the pages the
    /// relations alone reach surfaced, cut by floor and limit.
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when a stored chunk cannot be read.
    pub(super) fn lexical_with_proximity(
        &self,
        g: &OpenGeneration,
        run: &LexicalRun,
        opts: &SearchOptions,
    ) -> Result<Vec<Hit>> {
        let scored = run.scored();
        let best = scored.first().map_or(0.0, |s| s.score);
        let prox = self.proximity(g, &scored, opts.params.prox_gain, opts.explain);
        let part = |ord: u64| prox.as_ref().map_or(0.0, |p| p.part(ord, best));
        let mut list: Vec<(u64, f32, bool)> = scored
            .iter()
            .map(|s| (s.ord, s.score + part(s.ord), false))
            .collect();
        if let Some(p) = &prox {
            let only = p.graph_only(scored.iter().map(|s| s.ord), opts.limit);
            list.extend(only.into_iter().map(|o| (o, part(o), true)));
        }
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let top = list.first().map_or(0.0, |x| x.1);
        list.into_iter()
            .filter(|x| x.1 > 0.0 && x.1 >= opts.params.floor * top)
            .take(opts.limit)
            .map(|(ord, score, only)| {
                let ord = match (&prox, only) {
                    (Some(p), true) => p.surface(g, ord),
                    _ => ord,
                };
                let mut hit: Hit = g.lexical().hit_for(run, ord, opts.explain)?.into();
                hit.score = score;
                mark(prox.as_ref(), &mut hit, best, only);
                Ok(hit)
            })
            .collect()
    }

    /// Attaches the proximity part (0 at `prox_gain` 0) to the explain of `hits`, whose
    /// lexical ranking is `scored`.
    pub(super) fn explain_proximity(
        &self,
        g: &OpenGeneration,
        scored: &[Scored],
        hits: &mut [Hit],
    ) {
        let best = scored.first().map_or(0.0, |s| s.score);
        let prox = self.proximity(g, scored, 0.0, true);
        for h in hits {
            mark(prox.as_ref(), h, best, false);
        }
    }
}

/// Sets a hit's confidence (for a graph-only one) and, when explaining, its proximity
/// part: 0 with no anchor when the query has no proximity (no graph).
pub(super) fn mark(prox: Option<&ProximityRun<'_>>, hit: &mut Hit, best: f32, graph_only: bool) {
    match prox {
        Some(p) => p.mark(hit, best, graph_only),
        None => {
            if let Some(x) = hit.explain.as_mut() {
                x.proximity = Some(ProximityExplain::default());
            }
        }
    }
}
