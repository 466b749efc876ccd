//! Reading a generation's documentation graph for people and programs: pages by
//! PageRank, and one page's relations with their evidence (`docfuse graph`).

use serde::Serialize;

use super::open::DocIndex;
use crate::error::{Error, Result};
use crate::graph::{Confidence, Graph, Relation, RelationKind};
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
    /// Relations written inside code blocks (kept for handoffs, never ranked).
    pub in_code_blocks: usize,
    pub external_links: u64,
    pub unresolved_links: u64,
    pub damping: f64,
    /// The `top` pages by PageRank.
    pub pages: Vec<GraphPage>,
}

/// One relation with its two ends named.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelationView {
    pub kind: RelationKind,
    pub confidence: Confidence,
    pub from: String,
    pub to: String,
    /// 1-based line of `from` where it is written (0 for `covers`).
    pub line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    pub in_code_block: bool,
}

/// One page and every relation that starts or ends at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageRelations {
    pub page: GraphPage,
    pub outgoing: Vec<RelationView>,
    pub incoming: Vec<RelationView>,
}

/// The open generation's graph.
pub(super) struct GraphContext {
    pub graph: Graph,
    pub snapshot: Snapshot,
    order: Vec<usize>,
    canonicality: Vec<f32>,
}

impl GraphContext {
    /// Loads the graph of `index`.
    ///
    /// # Errors
    /// [`Error::NotFound`] when the generation has no graph of this version (written by
    /// an older docfuse: `docfuse refresh` rebuilds it); [`Error::Corrupt`] when the
    /// snapshot cannot be read or does not match the graph.
    pub fn load(index: &DocIndex) -> Result<GraphContext> {
        let graph = super::relations::load_graph(&index.generation_dir()).ok_or_else(|| {
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
        Ok(GraphContext {
            graph,
            snapshot,
            order,
            canonicality,
        })
    }

    fn path(&self, doc: u32) -> String {
        let multi = self.snapshot.files.iter().any(|f| f.root != 0);
        match self.snapshot.files.get(doc as usize) {
            Some(f) if multi => format!("{}:{}", f.root, f.rel_path),
            Some(f) => f.rel_path.clone(),
            None => String::new(),
        }
    }

    /// The canonicality of document `doc` (0 when out of range).
    pub fn canonicality_of(&self, doc: usize) -> f32 {
        self.canonicality.get(doc).copied().unwrap_or(0.0)
    }

    /// The page `doc` with its place and counts.
    pub fn page(&self, doc: usize) -> GraphPage {
        let rank = self
            .order
            .iter()
            .position(|&d| d == doc)
            .map_or(0, |p| p + 1);
        let ranked = |r: &&Relation| r.ranks() && r.kind != RelationKind::Mentions;
        let inbound = self
            .graph
            .relations
            .iter()
            .filter(ranked)
            .filter(|r| match r.kind {
                RelationKind::Covers => r.from as usize == doc,
                _ => r.to as usize == doc,
            })
            .count();
        let outbound = self
            .graph
            .relations
            .iter()
            .filter(|r| r.kind == RelationKind::LinksTo && r.ranks() && r.from as usize == doc)
            .count();
        let f = &self.snapshot.files[doc];
        GraphPage {
            rank,
            root: f.root,
            path: f.rel_path.clone(),
            pagerank: self.graph.pagerank[doc],
            canonicality: self.canonicality[doc],
            inbound,
            outbound,
        }
    }

    /// The relation `r` with its ends named.
    pub fn view(&self, r: &Relation) -> RelationView {
        RelationView {
            kind: r.kind,
            confidence: r.confidence,
            from: self.path(r.from),
            to: self.path(r.to),
            line: r.line,
            section: r.section.clone(),
            in_code_block: r.in_code_block,
        }
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

    /// Indexed paths closest to `path` (same file name first, then shared words), at
    /// most 5, for an error message.
    pub fn closest(&self, path: &str) -> Vec<String> {
        let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        let stem = name.split('.').next().unwrap_or(&name).to_string();
        let mut scored: Vec<(usize, &str)> = self
            .snapshot
            .files
            .iter()
            .map(|f| {
                let p = f.rel_path.to_lowercase();
                let s = usize::from(p.ends_with(&name)) * 4
                    + usize::from(!stem.is_empty() && p.contains(&stem)) * 2;
                (s, f.rel_path.as_str())
            })
            .filter(|(s, _)| *s > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
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
        in_code_blocks: g.relations.iter().filter(|r| r.in_code_block).count(),
        external_links: g.external_links,
        unresolved_links: g.unresolved_links,
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
    Ok(PageRelations {
        page: ctx.page(doc),
        outgoing: rels
            .iter()
            .filter(|r| r.from as usize == doc)
            .map(|r| ctx.view(r))
            .collect(),
        incoming: rels
            .iter()
            .filter(|r| r.to as usize == doc)
            .map(|r| ctx.view(r))
            .collect(),
    })
}
