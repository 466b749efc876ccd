//! The documentation graph of one generation: what each document links to, mentions or
//! covers, resolved to indexed documents (and to a section when a link names an
//! anchor), and PageRank over `links_to` and `covers`.
//!
//! Owns: resolution of raw targets (`resolve.rs`), PageRank and canonicality
//! (`pagerank.rs`), the stored shape (`graph.json`).
//! Must not import: `lexical`, `embed`, `vector`, `generation`, `write`, `read`, `cli`, `server` (it sits beside
//! the indexes; `generation`, `write` and `read` compose it).
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! the documentation graph of a generation: raw links resolved to documents and sections
//! (`resolve.rs`: paths, site routes — front matter slugs and permalinks, `/docs/…` served
//! from the indexed folder, Jekyll's `_collection/` folders, pretty URLs relative to the
//! page's own URL), `links_to`/`mentions`/`covers` relations with line evidence and
//! confidence (title and alias phrases matched against pages' names), PageRank and
//! canonicality (`pagerank.rs`, networkx's definition), proximity (`proximity.rs`: reach
//! within two relations of anchor pages, symmetric-normalised edge weights, the path's
//! weakest confidence); knows nothing of the indexes

mod imports;
pub mod pagerank;
pub mod proximity;
mod relation;
mod resolve;
mod symbols;

pub use relation::{Confidence, DocLinks, GraphDoc, Relation, RelationKind};

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::chunk::{LinkForm, RawLink};
use resolve::{folder, is_asset, is_external, split_target, Lookup, Match};

/// Version of the graph rules (relation kinds, resolution, PageRank settings); recorded
/// in `graph.json`. A reader treats a graph of another version as absent.
pub const GRAPH_METRICS_VERSION: u32 = 12;

/// The graph of a generation, in the generation folder.
pub const GRAPH_FILE: &str = "graph.json";

/// The documentation graph of a generation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    pub graph_metrics_version: u32,
    /// PageRank damping factor.
    pub damping: f64,
    /// PageRank's stopping tolerance per document (L1).
    pub tolerance: f64,
    /// PageRank per document in snapshot order (`[documents]`, sums to 1).
    pub pagerank: Vec<f64>,
    /// Relations sorted by `from`, `to`, kind, line.
    pub relations: Vec<Relation>,
    /// Links that leave the collection (recorded as a count, never ranked).
    pub external_links: u64,
    /// Links that name no indexed document.
    pub unresolved_links: u64,
    /// Those links and the links whose `#anchor` names no section of their page, with
    /// their evidence, sorted by page and line.
    #[serde(default)]
    pub broken: Vec<BrokenLink>,
}

/// A link that names no indexed document, or an anchor that names no section of its page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokenLink {
    /// The document it is written in (snapshot order).
    pub from: u32,
    /// 1-based line.
    pub line: u32,
    /// The target as written.
    pub target: String,
    pub why: Broken,
}

/// Why a link is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Broken {
    /// The path names no indexed document.
    NoDocument,
    /// The document exists; its `#anchor` names none of its sections.
    NoSection,
}

impl Graph {
    /// Resolves every document's raw links and computes PageRank over the `links_to`
    /// relations outside code blocks and the `covers` relations, taken from the covered
    /// page up to its index page.
    pub fn build(docs: &[GraphDoc<'_>]) -> Graph {
        Graph::build_in(docs, &[])
    }

    /// [`Graph::build`] with each root's folder (absolute, `/`-separated, in root order;
    /// a file root's is its parent), so links that leave their root resolve to the
    /// documents of another root.
    pub fn build_in(docs: &[GraphDoc<'_>], root_dirs: &[String]) -> Graph {
        let lookup = Lookup::new(docs.iter().map(|d| (d.root, d.path))).with_root_dirs(root_dirs);
        let lookup = lookup.with_routes(docs.iter().map(|d| (d.root, d.links.routes.as_slice())));
        let names = names(docs);
        let repo = imports::Repo::of(docs);
        let declared = symbols::Declared::of(docs);
        let mut g = Graph {
            graph_metrics_version: GRAPH_METRICS_VERSION,
            damping: pagerank::DAMPING,
            tolerance: pagerank::TOLERANCE,
            ..Graph::default()
        };
        for (from, doc) in docs.iter().enumerate() {
            g.external_links += u64::from(doc.links.external);
            for link in &doc.links.links {
                match link.form {
                    LinkForm::Phrase => g.named(&names, docs, from as u32, link),
                    LinkForm::Anchor => {}
                    LinkForm::Import | LinkForm::ChildModule => g
                        .relations
                        .extend(imports::relations(&repo, docs, from as u32, link)),
                    LinkForm::Symbol => {
                        g.relations
                            .extend(declared.mentions(docs, from as u32, link))
                    }
                    _ => g.resolve(&lookup, docs, from as u32, link),
                }
            }
        }
        g.relations.extend(covers(docs));
        g.relations.retain(|r| r.from != r.to);
        g.relations.sort();
        g.relations.dedup();
        let edges: Vec<(u32, u32)> = g
            .relations
            .iter()
            .filter(|r| r.ranks())
            .filter_map(|r| match r.kind {
                RelationKind::LinksTo => Some((r.from, r.to)),
                // a page points up at the index page that covers it (the breadcrumb
                // every documentation site draws): the index page is the canonical one
                RelationKind::Covers => Some((r.to, r.from)),
                RelationKind::Mentions | RelationKind::Imports => None,
            })
            .collect();
        g.pagerank = pagerank::pagerank(docs.len(), &edges);
        g
    }

    fn resolve(&mut self, lookup: &Lookup, docs: &[GraphDoc<'_>], from: u32, link: &RawLink) {
        let doc = &docs[from as usize];
        let relation = |to: u32, kind, confidence, section| Relation {
            from,
            to,
            kind,
            confidence,
            line: link.line,
            section,
            in_code_block: link.form == LinkForm::Fence,
        };
        if link.form == LinkForm::Link {
            if is_external(&link.target) {
                self.external_links += 1;
                return;
            }
            let (path, fragment) = split_target(&link.target);
            // a footnote's anchor (`#fn:1`, `#fnref:1`) and `#top` name no heading
            let fragment = fragment
                .filter(|f| !f.starts_with("fn:") && !f.starts_with("fnref:") && f != "top");
            let to = if path.is_empty() {
                // `#label`: a MyST target of another page when this page has no such
                // anchor (MyST resolves targets site-wide)
                let html_id = |f: &str| {
                    doc.links
                        .links
                        .iter()
                        .any(|l| l.form == LinkForm::Anchor && l.target.eq_ignore_ascii_case(f))
                };
                let here = fragment
                    .as_deref()
                    .is_none_or(|f| section_of(doc, f).is_some() || html_id(f));
                match here {
                    true => Some(from),
                    false => fragment
                        .as_deref()
                        .and_then(|f| labelled(docs, doc.root, f))
                        .or(Some(from)),
                }
            } else {
                lookup.link(doc.root, doc.path, &path)
            };
            if to.is_none() && is_asset(&path) {
                return;
            }
            let broken = |why| BrokenLink {
                from,
                line: link.line,
                target: link.target.clone(),
                why,
            };
            match to {
                Some(to) => {
                    let target = &docs[to as usize];
                    let section = fragment.as_deref().and_then(|f| section_of(target, f));
                    // an HTML id of the page is a valid anchor, though no section
                    let html_id =
                        |f: &str| {
                            target.links.links.iter().any(|l| {
                                l.form == LinkForm::Anchor && l.target.eq_ignore_ascii_case(f)
                            })
                        };
                    // an API spec's anchors are JSON pointers or a viewer's routes
                    // (`#/components/schemas/Pet`, `#operation/listPets`), not sections
                    let spec = crate::chunk::SourceKind::of_path(target.path)
                        == Some(crate::chunk::SourceKind::OpenApi);
                    if fragment
                        .as_deref()
                        .is_some_and(|f| section.is_none() && !html_id(f) && !spec)
                    {
                        self.broken.push(broken(Broken::NoSection));
                    }
                    self.relations.push(relation(
                        to,
                        RelationKind::LinksTo,
                        Confidence::Observed,
                        section,
                    ));
                }
                None => {
                    self.unresolved_links += 1;
                    self.broken.push(broken(Broken::NoDocument));
                }
            }
            return;
        }
        if let Some((to, how)) = lookup.mention(doc.root, doc.path, &link.target) {
            let confidence = match how {
                Match::Exact => Confidence::Observed,
                Match::Suffix => Confidence::Fuzzy,
            };
            self.relations
                .push(relation(to, RelationKind::Mentions, confidence, None));
        }
    }

    /// A `fuzzy` mention when `link`'s phrase is the name of exactly one other document
    /// of the same root.
    fn named(&mut self, names: &Names, docs: &[GraphDoc<'_>], from: u32, link: &RawLink) {
        let root = docs[from as usize].root;
        let Some(found) = names.get(&(root, fold_name(&link.target))) else {
            return;
        };
        let others: Vec<u32> = found.iter().copied().filter(|&d| d != from).collect();
        if let [to] = others.as_slice() {
            {
                self.relations.push(Relation {
                    from,
                    to: *to,
                    kind: RelationKind::Mentions,
                    confidence: Confidence::Fuzzy,
                    line: link.line,
                    section: None,
                    in_code_block: false,
                });
            }
        }
    }

    /// Canonicality per document in `[0, 1]` ([`pagerank::canonicality`]).
    pub fn canonicality(&self) -> Vec<f32> {
        pagerank::canonicality(&self.pagerank)
    }

    /// Document indices by PageRank, highest first (ties by index).
    pub fn by_pagerank(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.pagerank.len()).collect();
        order.sort_by(|&a, &b| {
            self.pagerank[b]
                .total_cmp(&self.pagerank[a])
                .then(a.cmp(&b))
        });
        order
    }
}

/// The documents (snapshot order) that `text` names by title or alias, compared as the
/// graph's title mentions are (case, white space and outer punctuation ignored); `links`
/// is every document's [`DocLinks`] in snapshot order.
pub fn named_documents(links: &[DocLinks], text: &str) -> Vec<usize> {
    let want = fold_name(text);
    if want.is_empty() {
        return Vec::new();
    }
    links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.names.iter().any(|n| fold_name(n) == want))
        .map(|(i, _)| i)
        .collect()
}

/// Documents by (root, folded name).
type Names = HashMap<(usize, String), Vec<u32>>;

fn names(docs: &[GraphDoc<'_>]) -> Names {
    let mut out: Names = HashMap::new();
    for (i, d) in docs.iter().enumerate() {
        for n in &d.links.names {
            let key = (d.root, fold_name(n));
            let list = out.entry(key).or_default();
            if !list.contains(&(i as u32)) {
                list.push(i as u32);
            }
        }
    }
    out
}

/// A name as compared: lower-cased, white space collapsed, outer punctuation dropped.
fn fold_name(name: &str) -> String {
    name.trim_matches(|c: char| !c.is_alphanumeric())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The document of root `root` with the MyST target `label` (compared without case).
fn labelled(docs: &[GraphDoc<'_>], root: usize, label: &str) -> Option<u32> {
    let at = docs.iter().position(|d| {
        d.root == root && d.links.labels.iter().any(|l| l.eq_ignore_ascii_case(label))
    })?;
    u32::try_from(at).ok()
}

/// The section of `doc` an anchor names: the section whose own slug (the last part of
/// its id) is the anchor, compared without case; else the section of a heading another
/// site generator gives that anchor ([`DocLinks::anchors`]).
fn section_of(doc: &GraphDoc<'_>, anchor: &str) -> Option<String> {
    section_for_anchor(doc.sections.iter().map(String::as_str), anchor)
        .map(str::to_string)
        .or_else(|| {
            doc.links
                .anchors
                .iter()
                .find(|(a, _)| a.to_lowercase() == anchor.to_lowercase())
                .map(|(_, section)| section.clone())
        })
}

/// The section (of one document's section ids `path#slug/slug`, in order) that a link's
/// `#anchor` names, compared without case: the section whose own slug it is, else the first
/// section under a heading with that slug (a heading with no text of its own is merged into
/// its first sub-section, so it has no section id of its own).
pub fn section_for_anchor<'a>(
    sections: impl Iterator<Item = &'a str> + Clone,
    anchor: &str,
) -> Option<&'a str> {
    let slugs = |id: &'a str| id.rsplit_once('#').map_or(id, |(_, s)| s).split('/');
    let find = |fold: &dyn Fn(&str) -> String| {
        let anchor = fold(anchor);
        let own = |id: &&'a str| slugs(id).next_back().is_some_and(|s| fold(s) == anchor);
        let under = |id: &&'a str| slugs(id).any(|s| fold(s) == anchor);
        sections
            .clone()
            .find(own)
            .or_else(|| sections.clone().find(under))
    };
    // GitHub's slugs first; then Python-Markdown's (mkdocs), which collapse the runs of
    // `-` that GitHub keeps ("Caret, Mark & Tilde": `caret-mark--tilde`, `caret-mark-tilde`)
    find(&|s: &str| s.to_lowercase()).or_else(|| find(&loose_slug))
}

/// A slug lower-cased with runs of `-` collapsed and outer ones dropped.
fn loose_slug(s: &str) -> String {
    s.to_lowercase()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// Whether a file name is an index page of its folder.
pub fn is_index_page(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    matches!(
        name.as_str(),
        "readme.md" | "index.md" | "index.mdx" | "_index.md" | "summary.md"
    )
}

/// `covers` relations: each document is covered by the index pages of the nearest folder
/// at or above its own that has one (an index page looks from its parent folder up).
fn covers(docs: &[GraphDoc<'_>]) -> Vec<Relation> {
    let mut index_pages: HashMap<(usize, &str), Vec<u32>> = HashMap::new();
    for (i, d) in docs.iter().enumerate() {
        if is_index_page(d.path) {
            index_pages
                .entry((d.root, folder(d.path)))
                .or_default()
                .push(i as u32);
        }
    }
    let mut out = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let mut dir = Some(folder(d.path));
        if is_index_page(d.path) {
            dir = parent(folder(d.path));
        }
        while let Some(f) = dir {
            if let Some(pages) = index_pages.get(&(d.root, f)) {
                out.extend(pages.iter().map(|&p| Relation {
                    from: p,
                    to: i as u32,
                    kind: RelationKind::Covers,
                    confidence: Confidence::Observed,
                    line: 0,
                    section: None,
                    in_code_block: false,
                }));
                break;
            }
            dir = parent(f);
        }
    }
    out
}

/// The folder above `f` (`None` above the root).
fn parent(f: &str) -> Option<&str> {
    if f.is_empty() {
        None
    } else {
        Some(folder(f))
    }
}

#[cfg(test)]
mod tests;
