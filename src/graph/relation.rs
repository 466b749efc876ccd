//! What the graph is made of: relation kinds, a relation with its evidence and
//! confidence, a document's links as written ([`DocLinks`]) and a document as the graph
//! sees it ([`GraphDoc`]). A leaf of `graph/`: the files that resolve relations import it.

use serde::{Deserialize, Serialize};

use super::resolve::is_external;
use crate::chunk::{LinkForm, RawLink};

/// What a relation says about its two documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelationKind {
    /// A Markdown or HTML link (mdBook's `SUMMARY.md` is links).
    LinksTo,
    /// The path of an indexed file written in prose or code (`observed`, or `fuzzy` when
    /// only its end matched), or a page's title or alias written as an emphasised or
    /// quoted phrase (`fuzzy`).
    Mentions,
    /// An index page (`README.md`, `index.md(x)`, `_index.md`, `SUMMARY.md`) and a document
    /// of its folder (or below it, up to the next index page).
    Covers,
    /// A source file and a file of the repository it imports (`use crate::config`,
    /// `import … from "../config"`, `mod search;`), resolved by the language's rules.
    /// Feeds proximity, never PageRank.
    Imports,
}

impl RelationKind {
    /// The kind as written in JSON (`links_to`, `mentions`, `covers`).
    pub fn name(self) -> &'static str {
        match self {
            RelationKind::LinksTo => "links_to",
            RelationKind::Mentions => "mentions",
            RelationKind::Covers => "covers",
            RelationKind::Imports => "imports",
        }
    }
}

/// How sure a relation (or a result) is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// An explicit link, an exact path, or the folder layout.
    #[default]
    Observed,
    /// A path that matched the end of exactly one indexed path, a bare file name, or a
    /// title or alias.
    Fuzzy,
}

/// One relation between two documents (indices in snapshot order).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Relation {
    pub from: u32,
    pub to: u32,
    pub kind: RelationKind,
    pub confidence: Confidence,
    /// 1-based line of `from` where the relation is written (0 for `covers`: the folder
    /// layout is its evidence).
    pub line: u32,
    /// The section of `to` that the link's anchor names, by section id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Written inside a code block: kept for handoffs, never a ranking signal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_code_block: bool,
}

impl Relation {
    /// Whether PageRank and the ranking parts may use this relation.
    pub fn ranks(&self) -> bool {
        !self.in_code_block && self.from != self.to
    }
}

/// A document's links as kept with a generation: the targets inside the collection's
/// reach as written, and how many links leave it (their URLs are not kept: they are
/// never ranked).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocLinks {
    pub links: Vec<RawLink>,
    #[serde(default)]
    pub external: u32,
    /// The document is written for agents (front matter `audience: agent`, `AGENTS.md`,
    /// `CLAUDE.md`): kept here with the links so a refresh carries it too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub for_agents: bool,
    /// The names other pages may call the document by (its title and aliases): an
    /// emphasised or quoted phrase equal to one of them is a `fuzzy` mention.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Routes a site serves the document at besides its path (Docusaurus `slug`, `id`),
    /// relative to the root.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<String>,
    /// Anchors other site generators give its headings (VitePress `#server-proxy` for
    /// `## server.proxy`), each with the section id it names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<(String, String)>,
    /// Its MyST targets (`(label)=`, a front-matter `label`, a directive's `:label:` or
    /// `:name:`, `+++ {"label": …}`): a `#label` link on any page of its root names it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// The names a source file exports (its module entry's symbols): inline code in a
    /// document naming one of them mentions the file ([`LinkForm::Symbol`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// Per chunk, in order: the fingerprint of its heading and visible text
    /// (`chunk::copy_fingerprint`, 0: too short), from which a generation's template
    /// copies are found (one block stamped on many pages). Kept in `copies.json`, not
    /// with the links: it is no part of the graph ([`DocLinks::same_graph`]).
    #[serde(skip)]
    pub bodies: Vec<u64>,
}

impl DocLinks {
    /// Whether `self` and `other` give the graph the same document: all but the chunks'
    /// fingerprints (`bodies`) equal.
    pub fn same_graph(&self, other: &DocLinks) -> bool {
        let DocLinks {
            links,
            external,
            for_agents,
            names,
            routes,
            anchors,
            labels,
            symbols,
            bodies: _,
        } = self;
        *links == other.links
            && *external == other.external
            && *for_agents == other.for_agents
            && *names == other.names
            && *routes == other.routes
            && *anchors == other.anchors
            && *labels == other.labels
            && *symbols == other.symbols
    }

    /// Splits `raw` into the links kept and the count of external ones.
    pub fn of(raw: Vec<RawLink>) -> DocLinks {
        let total = raw.len();
        let links: Vec<RawLink> = raw
            .into_iter()
            .filter(|l| !(l.form == LinkForm::Link && is_external(&l.target)))
            .collect();
        let external = u32::try_from(total - links.len()).unwrap_or(u32::MAX);
        // a link to an anchor of the same page is kept: it relates the page to itself
        // (no relation), but its anchor may be broken
        DocLinks {
            links,
            external,
            for_agents: false,
            names: Vec::new(),
            routes: Vec::new(),
            anchors: Vec::new(),
            labels: Vec::new(),
            symbols: Vec::new(),
            bodies: Vec::new(),
        }
    }
}

/// One document as the graph sees it.
#[derive(Debug, Clone)]
pub struct GraphDoc<'a> {
    pub root: usize,
    /// Relative to its root, `/`-separated.
    pub path: &'a str,
    /// Section ids of the document's chunks (a cut section's pieces share one).
    pub sections: Vec<String>,
    pub links: &'a DocLinks,
}
