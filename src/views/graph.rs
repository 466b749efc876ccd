//! Reading a generation's documentation graph for people and programs: pages by
//! PageRank, and one page's relations with their evidence (`docfuse graph`).

use serde::Serialize;

use crate::error::{Error, Result};
use crate::graph::{Graph, Relation, RelationKind};
use crate::read::{shown_path, DocIndex, RelationView};
use crate::store::Snapshot;

/// One page of the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphPage {
    /// 1-based place by PageRank (ties by snapshot order).
    pub rank: usize,
    pub root: usize,
    pub path: String,
    pub pagerank: f64,
    /// Log-scaled PageRank above the corpus floor, in `[0, 1]`.
    pub canonicality: f32,
    /// Relations that PageRank follows into this page (links in, and for an index
    /// page the pages it covers).
    pub inbound: usize,
    /// Links out of this page to other indexed pages.
    pub outbound: usize,
}

/// The graph of the open generation in brief.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphSummary {
    pub graph_metrics_version: u32,
    pub documents: usize,
    pub relations: usize,
    pub links_to: usize,
    pub mentions: usize,
    pub covers: usize,
    /// `imports` relations (an index built with sources).
    pub imports: usize,
    /// Relations written inside code blocks (kept for handoffs, never ranked).
    pub in_code_blocks: usize,
    pub external_links: u64,
    pub unresolved_links: u64,
    /// Links that name no indexed document or no section of their page, in snapshot
    /// order then line (`unresolved_links` counts only the first kind).
    pub broken: Vec<BrokenLinkView>,
    pub damping: f64,
    /// The `top` pages by PageRank.
    pub pages: Vec<GraphPage>,
}

/// A broken link and the page it is written on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenLinkView {
    /// The page (`root:path` with several roots).
    pub from: String,
    pub line: u32,
    pub target: String,
    pub why: crate::graph::Broken,
}

/// One page and every relation that starts or ends at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageRelations {
    pub page: GraphPage,
    pub outgoing: Vec<RelationView>,
    pub incoming: Vec<RelationView>,
    /// Links of this page that name no indexed document, or a section its target lacks.
    pub broken: Vec<BrokenView>,
}

/// A broken link of a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenView {
    pub line: u32,
    pub target: String,
    pub why: crate::graph::Broken,
}

/// The open generation's graph.
pub(super) struct GraphContext {
    pub graph: Graph,
    pub snapshot: Snapshot,
    order: Vec<usize>,
    canonicality: Vec<f32>,
    /// Per document: place by PageRank (1-based), relations PageRank follows in, links out.
    rank: Vec<usize>,
    inbound: Vec<usize>,
    outbound: Vec<usize>,
    /// Several roots: paths are shown as `root:path`.
    multi_root: bool,
}

impl GraphContext {
    /// Loads the graph of `index`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the generation has no graph of this version (written by
    /// an older docfuse: `docfuse refresh` rebuilds it); [`Error::Corrupt`] when the
    /// snapshot cannot be read or does not match the graph.
    pub fn load(index: &DocIndex) -> Result<GraphContext> {
        let graph = crate::generation::load_graph(&index.generation_dir())
            .map_err(|why| Error::corrupt(index.dir(), why))?
            .ok_or_else(|| {
            Error::NotFound(format!(
                "the index at `{}` has no documentation graph of this version\nhint: rebuild it with `docfuse refresh --index {}`",
                index.dir().display(),
                index.dir().display()
            ))
        })?;
        let snapshot = index.snapshot()?;
        if snapshot.files.len() != graph.pagerank.len() {
            return Err(Error::corrupt(
                index.dir(),
                "the graph and the file snapshot disagree on the documents",
            ));
        }
        let order = graph.by_pagerank();
        let canonicality = graph.canonicality();
        let n = snapshot.files.len();
        let mut rank = vec![0; n];
        for (place, &d) in order.iter().enumerate() {
            rank[d] = place + 1;
        }
        let (mut inbound, mut outbound) = (vec![0; n], vec![0; n]);
        for r in graph.relations.iter().filter(|r| r.ranks()) {
            match r.kind {
                RelationKind::Covers => inbound[r.from as usize] += 1,
                RelationKind::LinksTo => {
                    inbound[r.to as usize] += 1;
                    outbound[r.from as usize] += 1;
                }
                RelationKind::Mentions | RelationKind::Imports => {}
            }
        }
        let multi_root = snapshot.files.iter().any(|f| f.root != 0);
        Ok(GraphContext {
            graph,
            snapshot,
            order,
            canonicality,
            rank,
            inbound,
            outbound,
            multi_root,
        })
    }

    /// The document's path (`root:path` when the index has several roots; see
    /// [`shown_paths`]).
    pub fn path(&self, doc: u32) -> String {
        self.snapshot
            .files
            .get(doc as usize)
            .map_or_else(String::new, |f| shown_path(f, self.multi_root))
    }

    /// The canonicality of document `doc` (0 when out of range).
    pub fn canonicality_of(&self, doc: usize) -> f32 {
        self.canonicality.get(doc).copied().unwrap_or(0.0)
    }

    /// The page `doc` with its place and counts.
    pub fn page(&self, doc: usize) -> GraphPage {
        let f = &self.snapshot.files[doc];
        GraphPage {
            rank: self.rank[doc],
            root: f.root,
            path: f.rel_path.clone(),
            pagerank: self.graph.pagerank[doc],
            canonicality: self.canonicality[doc],
            inbound: self.inbound[doc],
            outbound: self.outbound[doc],
        }
    }

    /// The relation `r` with its ends named.
    pub fn view(&self, r: &Relation) -> RelationView {
        RelationView::of(r, |d| self.path(d))
    }

    /// The document at `path` (`root:path` with several roots), if indexed.
    pub fn find(&self, path: &str) -> Option<usize> {
        let path = path.trim_start_matches("./");
        self.snapshot
            .files
            .iter()
            .position(|f| f.rel_path == path)
            .or_else(|| {
                let (root, rel) = path.split_once(':')?;
                let root: usize = root.parse().ok()?;
                self.snapshot
                    .files
                    .iter()
                    .position(|f| f.root == root && f.rel_path == rel)
            })
    }

    /// Indexed paths closest to `path`, at most 5, for an error message: by string
    /// similarity (normalised Levenshtein, `strsim`) of the whole path and of the file
    /// name, so a typo, a missing folder or an absolute path all find the file.
    pub fn closest(&self, path: &str) -> Vec<String> {
        let asked = path
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_lowercase();
        let asked_name = asked.rsplit('/').next().unwrap_or(&asked).to_string();
        let mut scored: Vec<(f64, &str)> = self
            .snapshot
            .files
            .iter()
            .map(|f| {
                let p = f.rel_path.to_lowercase();
                let name = p.rsplit('/').next().unwrap_or(&p);
                let whole = strsim::normalized_levenshtein(&asked, &p);
                let by_name = strsim::normalized_levenshtein(&asked_name, name);
                // an asked path that ends with the indexed one (an absolute path)
                let suffix = if asked.ends_with(&format!("/{p}")) {
                    1.0
                } else {
                    0.0
                };
                (whole.max(by_name * 0.9).max(suffix), f.rel_path.as_str())
            })
            .filter(|(s, _)| *s >= 0.5)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(5)
            .map(|(_, p)| p.to_string())
            .collect()
    }
}

/// The graph of `index` in brief, with its `top` pages by PageRank.
///
/// # Errors
/// As [`GraphContext::load`].
pub fn graph_summary(index: &DocIndex, top: usize) -> Result<GraphSummary> {
    let ctx = GraphContext::load(index)?;
    let g = &ctx.graph;
    let count = |k: RelationKind| g.relations.iter().filter(|r| r.kind == k).count();
    Ok(GraphSummary {
        graph_metrics_version: g.graph_metrics_version,
        documents: g.pagerank.len(),
        relations: g.relations.len(),
        links_to: count(RelationKind::LinksTo),
        mentions: count(RelationKind::Mentions),
        covers: count(RelationKind::Covers),
        imports: count(RelationKind::Imports),
        in_code_blocks: g.relations.iter().filter(|r| r.in_code_block).count(),
        external_links: g.external_links,
        unresolved_links: g.unresolved_links,
        broken: g
            .broken
            .iter()
            .map(|b| BrokenLinkView {
                from: ctx
                    .snapshot
                    .files
                    .get(b.from as usize)
                    .map(|f| shown_path(f, ctx.multi_root))
                    .unwrap_or_default(),
                line: b.line,
                target: b.target.clone(),
                why: b.why,
            })
            .collect(),
        damping: g.damping,
        pages: ctx.order.iter().take(top).map(|&d| ctx.page(d)).collect(),
    })
}

/// Every relation of the page at `path`.
///
/// # Errors
/// [`Error::NotFound`] naming the closest indexed paths when `path` is not indexed; as
/// [`GraphContext::load`] otherwise.
pub fn page_relations(index: &DocIndex, path: &str) -> Result<PageRelations> {
    let ctx = GraphContext::load(index)?;
    let Some(doc) = ctx.find(path) else {
        let close = ctx.closest(path);
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!("; closest: {}", close.join(", "))
        };
        return Err(Error::NotFound(format!(
            "`{path}` is not an indexed document{hint}"
        )));
    };
    let rels = &ctx.graph.relations;
    let mut outgoing: Vec<&Relation> = rels.iter().filter(|r| r.from as usize == doc).collect();
    outgoing.sort_by_key(|r| (r.line, r.to));
    Ok(PageRelations {
        page: ctx.page(doc),
        outgoing: outgoing.into_iter().map(|r| ctx.view(r)).collect(),
        incoming: rels
            .iter()
            .filter(|r| r.to as usize == doc)
            .map(|r| ctx.view(r))
            .collect(),
        broken: ctx
            .graph
            .broken
            .iter()
            .filter(|b| b.from as usize == doc)
            .map(|b| BrokenView {
                line: b.line,
                target: b.target.clone(),
                why: b.why,
            })
            .collect(),
    })
}
