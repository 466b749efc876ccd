//! The composable retrieval API: a [`Retriever`] trait that async code can call without
//! blocking its executor, implemented by the docfuse index ([`DocfuseRetriever`]), and
//! composition on top of it: a [`HybridRetriever`] fusing any number of weighted
//! retrievers, a [`RerankedRetriever`] re-scoring another retriever's top candidates, and
//! [`format_retrieved_documents`] rendering results for a prompt with `path:line`
//! citations under a token budget.
//!
//! Owns: [`RetrievedDocument`] (what every retriever returns), [`RetrieveOptions`]
//! (limit, mode, path filters applied before the top-k cut, floor, explain), the JSON
//! result shape shared by `docfuse search --json`, the HTTP API and the MCP server
//! ([`SearchResult`]), and reading passages confined to the indexed roots.
//!
//! Must not import: `cli`, `server` (front ends sit above it). Imports `read`, `write`, `views`, and
//! `pgstore` only to open a `postgres://…` URL ([`DocfuseRetriever::open`]).
//!
//! ```
//! use docfuse::retriever::{
//!     format_retrieved_documents, BoxFuture, Combination, HybridRetriever, RetrieveError,
//!     RetrieveOptions, RetrievedDocument, Retriever,
//! };
//!
//! /// A toy retriever: every document containing a query word, in a fixed order.
//! struct Keywords(Vec<(&'static str, &'static str)>);
//!
//! impl Retriever for Keywords {
//!     fn retrieve<'a>(
//!         &'a self,
//!         query: &'a str,
//!         options: &'a RetrieveOptions,
//!     ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
//!         Box::pin(async move {
//!             let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
//!             Ok(self.0.iter()
//!                 .filter(|(_, text)| words.iter().any(|w| text.to_lowercase().contains(w.as_str())))
//!                 .take(options.limit)
//!                 .enumerate()
//!                 .map(|(i, (path, text))| {
//!                     RetrievedDocument::new(*path, *text, format!("{path}:1-1"), 1.0 / (i as f32 + 1.0))
//!                 })
//!                 .collect())
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), RetrieveError> {
//! let a = Keywords(vec![("a.md", "Install from source"), ("b.md", "Install with cargo")]);
//! let b = Keywords(vec![("b.md", "Install with cargo"), ("c.md", "Cargo features")]);
//! let hybrid = HybridRetriever::new(Combination::Rrf { k: 60.0 }).with(a, 1.0).with(b, 1.0);
//! let docs = hybrid.retrieve("cargo install", &RetrieveOptions::default()).await?;
//! assert_eq!(docs[0].id, "b.md"); // found by both
//! let prompt = format_retrieved_documents(&docs, 100);
//! assert!(prompt.starts_with("[1] b.md:1-1"));
//! # Ok(())
//! # }
//! ```
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! the `Retriever` trait (async, never blocks the executor), `request.rs` (the one
//! validation of query, limit, floor, filters and mode for every front end, and JSON
//! argument reading that names the parameter), the docfuse retriever (`search.rs`: filters
//! before the top-k cut, grouping by section; `passage.rs`: verified reads confined to the
//! roots, paging, stale text served from the generation's `sources/`; `document.rs`: a
//! document's chunks in file order, paged by whole chunks, through the same path checks and
//! verified text), `budget.rs` (every response under a token budget), N-list hybrid fusion,
//! reranking, prompt formatting, the shared search JSON shape

mod budget;
mod docfuse;
mod document;
mod filter;
mod format;
mod hybrid;
mod inner;
mod json;
mod passage;
mod request;
mod rerank;
mod search;
#[cfg(test)]
mod tests;

pub use crate::read::{Focused, WINDOW_WORDS};
pub use budget::{
    cut_at_line, fit_contents, fit_response, largest_that_fits, Budget, CUT_MARK,
    DEFAULT_RESPONSE_TOKENS, MIN_RESPONSE_TOKENS,
};
pub use docfuse::{
    DocfuseRetriever, IndexStatus, Retrieval, VectorsReport, DEFAULT_MAX_QUEUED, STATUS_LIST_CAP,
};
pub use document::{Document, DocumentChunk, DocumentRequest};
pub use filter::{PathFilter, PathFilters};
pub use format::{estimate_tokens, format_retrieved_documents, BYTES_PER_TOKEN};
pub use hybrid::{create_hybrid_retriever, fuse_lists, Combination, FusedItem, HybridRetriever};
pub use json::{coverage_note, SearchEnvelope, SearchResult};
pub use passage::{Passage, PassageRequest, MAX_PASSAGE_BYTES, MAX_PASSAGE_LINES};
pub use request::{
    document_args, passage_args, search_args, validate_search, Args, SearchArgs, MAX_LIMIT,
    MAX_PASTED_BYTES, MAX_PATTERN_BYTES, MAX_QUERY_BYTES,
};
pub use rerank::{create_reranked_retriever, FnReranker, RerankedRetriever, Reranker};

/// Read-side and view types that are part of this API (front ends need no other import
/// of them).
pub use crate::read::{HitExplain, Mode};
pub use crate::views::{
    Caveats, Check, Handoff, HandoffEntry, HandoffEvidence, HandoffTarget, Tier,
};

use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, `Send` future: what [`Retriever::retrieve`] returns, so retrievers of
/// different types compose behind `dyn Retriever`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Anything that answers a query with ranked documents.
///
/// Implementations must not block the calling executor: CPU-bound work (the docfuse
/// index embeds queries with ONNX Runtime) runs on a blocking thread pool.
pub trait Retriever: Send + Sync {
    /// At most `options.limit` documents for `query`, best first.
    ///
    /// # Errors
    /// [`RetrieveError`]: invalid options, an index that cannot be read, a mode the index
    /// cannot serve, a failing component.
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>>;

    /// A short name, recorded in fused results' [`DocumentMetadata::fusion`].
    fn name(&self) -> &str {
        "retriever"
    }
}

impl<R: Retriever + ?Sized> Retriever for Arc<R> {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        (**self).retrieve(query, options)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
}

impl<R: Retriever + ?Sized> Retriever for Box<R> {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        (**self).retrieve(query, options)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
}

/// What to retrieve and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrieveOptions {
    /// Most documents wanted (after filters and floor), 1..=[`MAX_LIMIT`]. Default 10.
    pub limit: usize,
    /// `auto` (hybrid when the index has usable vectors, else lexical, with the reason in
    /// [`DocumentMetadata::degraded`]), `lexical`, `vector` or `hybrid`.
    pub mode: Mode,
    /// Path prefix and globs, applied **before** the top-k cut: the docfuse retriever
    /// over-fetches so a filtered query still returns `limit` results when enough match.
    pub filters: PathFilters,
    /// Drop results scoring under `floor × best` (in [0, 1]); `None` is the default, 0:
    /// every result up to the limit is kept. With filters, `best` is the best result that
    /// passes them.
    pub floor: Option<f32>,
    /// Attach every named score part ([`DocumentMetadata::explain`]).
    pub explain: bool,
    /// One result per section (its best chunk stands for it, with the section's line
    /// span and how many of its chunks matched); false gives raw chunks. Default true.
    pub group: bool,
    /// Favour documentation written for agents (front matter `audience: agent`,
    /// `AGENTS.md`, `CLAUDE.md`): its lexical score is multiplied by the audience fit.
    pub agent: bool,
}

impl Default for RetrieveOptions {
    fn default() -> Self {
        RetrieveOptions {
            limit: 10,
            mode: Mode::Auto,
            filters: PathFilters::default(),
            floor: None,
            explain: false,
            group: true,
            agent: false,
        }
    }
}

impl RetrieveOptions {
    /// These options with another `limit`.
    pub fn with_limit(&self, limit: usize) -> Self {
        RetrieveOptions {
            limit,
            ..self.clone()
        }
    }
}

/// One retrieved passage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievedDocument {
    /// Stable id (docfuse: `path#heading-slugs`), the de-duplication key of fusion.
    pub id: String,
    /// What to show a model: the title and heading path on one line, a blank line, then
    /// the passage text exactly as in the file.
    pub content: String,
    /// Where it comes from: `path:start-end` (1-based, inclusive), e.g. `guide/x.md:5-8`.
    pub source: String,
    /// The ranking score of the retriever that produced this list (BM25F, cosine, fused…).
    pub score: f32,
    pub metadata: DocumentMetadata,
}

impl RetrievedDocument {
    /// A document with empty metadata, for retrievers outside docfuse.
    pub fn new(
        id: impl Into<String>,
        content: impl Into<String>,
        source: impl Into<String>,
        score: f32,
    ) -> Self {
        RetrievedDocument {
            id: id.into(),
            content: content.into(),
            source: source.into(),
            score,
            metadata: DocumentMetadata::default(),
        }
    }

    /// The kind of entry it is: by its chunk kind (`metadata.kind`: `section`,
    /// `preamble`, `module`, `item`, `package`) for docfuse's passages, else by its path.
    pub fn entry_kind(&self) -> crate::chunk::EntryKind {
        use crate::chunk::EntryKind;
        match self.metadata.kind.as_str() {
            "section" | "preamble" => EntryKind::Document,
            "module" | "item" => EntryKind::Module,
            "package" | "ownership" => EntryKind::Package,
            "intent" => EntryKind::Intent,
            "change" => EntryKind::Change,
            "area" => EntryKind::Area,
            _ => EntryKind::of_path(self.filter_path()),
        }
    }

    /// The path to filter on: `metadata.path`, else `source` without its `:lines` suffix.
    pub fn filter_path(&self) -> &str {
        if !self.metadata.path.is_empty() {
            return &self.metadata.path;
        }
        match self.source.rsplit_once(':') {
            Some((p, lines)) if lines.chars().all(|c| c.is_ascii_digit() || c == '-') => p,
            _ => &self.source,
        }
    }
}

/// Everything known about a retrieved passage besides its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DocumentMetadata {
    /// `section` or `preamble` for docfuse chunks; free for other retrievers.
    pub kind: String,
    /// Index of the root the path is relative to (docfuse; 0 for others).
    pub root: usize,
    /// Path relative to its root, `/`-separated.
    pub path: String,
    /// 1-based first and last line (0 when unknown).
    pub start_line: u32,
    pub end_line: u32,
    /// 1-based line that best matches the query (the one to cite; 0 when unknown).
    pub match_line: u32,
    /// The whole section the passage belongs to (its chunks together), 1-based lines.
    pub section_start_line: u32,
    pub section_end_line: u32,
    /// How many chunks of that section matched (grouped results; 1 for raw chunks).
    pub chunks_matched: u32,
    /// Document title.
    pub title: String,
    /// Ancestor headings and the section's own heading, outermost first.
    pub heading_path: Vec<String>,
    /// Evidence of the exact content: where it is and the hashes it was indexed with.
    pub evidence: Evidence,
    /// How the result is known: `observed` (read from the indexed files).
    pub provenance: Provenance,
    /// `observed` when the query matched the passage (lexically or by its vector); for a
    /// page the documentation graph alone surfaced, the weaker of its anchor's and its
    /// relations' (`fuzzy` when one is a title or partial-path mention).
    pub confidence: Confidence,
    /// The score relative to the best of the same list, in [0, 1] (1 for the first).
    /// A ranking signal, not a calibrated probability.
    pub relative_score: f32,
    /// Query terms that matched lexically, stop words aside unless the query has only
    /// those (empty when none did: a semantic neighbour, or a match on stop words only).
    pub matched_terms: Vec<String>,
    /// One line around the match (at most 200 characters, markup dropped).
    pub snippet: String,
    /// Set when the result's file no longer has the indexed content ("file deleted since
    /// indexing", "file changed since indexing"): the text shown is the indexed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
    /// The mode that answered (docfuse retriever).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    /// Every named score part, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplain>,
    /// Why the requested mode could not be used (`auto` answered lexically).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
    /// How a fused score came about: one part per member list that had the document.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fusion: Vec<FusionPart>,
    /// Rank and score before reranking.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_stage: Option<FirstStage>,
}

/// Where a passage is and what it was indexed from: `{"path", "start_line", "end_line",
/// "chunk_sha256", "file_sha256"}` (sha256 hex; empty when unknown, e.g. for another
/// retriever's documents).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// sha256 of the passage text as indexed: the file's lines `start_line..=end_line`
    /// as `read_passage` returns them (for a file with `\n` line endings, those lines
    /// joined with `\n`, no final newline), so a citation can be checked against it.
    pub chunk_sha256: String,
    /// The file's sha256 when it was indexed.
    pub file_sha256: String,
}

/// How a result is known. Only `observed` today; later kinds may be `declared`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Read from the indexed files themselves.
    #[default]
    Observed,
}

pub use crate::graph::Confidence;

/// One member list's contribution to a fused score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionPart {
    /// [`Retriever::name`] of the member.
    pub retriever: String,
    /// 1-based rank in the member's list.
    pub rank: u32,
    /// The member's own score.
    pub score: f32,
    /// What it added to the fused score.
    pub contribution: f32,
}

/// A reranked document's place before reranking.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FirstStage {
    /// 1-based rank in the first-stage list.
    pub rank: u32,
    pub score: f32,
}

/// Why a retrieval failed. [`RetrieveError::code`] gives a stable machine-readable code.
#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    /// The index could not answer (damaged, unreadable, vectors unavailable…).
    #[error(transparent)]
    Engine(#[from] crate::Error),
    /// Options or a request out of range (bad floor, glob, line range, missing field).
    #[error("{0}")]
    InvalidRequest(String),
    /// A path outside the indexed roots (`..`, absolute, encoded, or a symlink leaving).
    #[error("{0}")]
    Refused(String),
    /// No such indexed file, chunk id or line.
    #[error("{0}")]
    NotFound(String),
    /// A composed retriever or reranker failed.
    #[error("{component}: {message}")]
    Component { component: String, message: String },
    /// A blocking search task panicked or was cancelled.
    #[error("search task failed: {0}")]
    Task(String),
    /// Too many searches are already waiting: retry after `retry_after_s` seconds.
    #[error("docfuse is busy: {queued} searches are already waiting; retry in {retry_after_s} s")]
    Overloaded { queued: usize, retry_after_s: u64 },
}

impl RetrieveError {
    /// Stable code: `bad_request`, `forbidden_path`, `not_found`, `vectors_unavailable`,
    /// `overloaded`, `internal`.
    pub fn code(&self) -> &'static str {
        match self {
            RetrieveError::InvalidRequest(_) => "bad_request",
            RetrieveError::Refused(_) => "forbidden_path",
            RetrieveError::NotFound(_) => "not_found",
            RetrieveError::Engine(crate::Error::VectorsUnavailable(_)) => "vectors_unavailable",
            RetrieveError::Engine(crate::Error::Config(_)) => "bad_request",
            RetrieveError::Overloaded { .. } => "overloaded",
            RetrieveError::Engine(_) | RetrieveError::Component { .. } | RetrieveError::Task(_) => {
                "internal"
            }
        }
    }

    /// True when the caller's request is at fault (a 4xx), false for a fault of the
    /// server or the index (a 5xx).
    pub fn is_client_error(&self) -> bool {
        !matches!(self.code(), "internal" | "overloaded")
    }
}

/// `score / best`, clamped to [0, 1] (0 when `best` is not positive).
pub(crate) fn relative(score: f32, best: f32) -> f32 {
    if best > 0.0 && score.is_finite() {
        (score / best).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Sets each document's relative score to its score relative to the first one's.
pub(crate) fn set_relative_scores(docs: &mut [RetrievedDocument]) {
    let best = docs.first().map_or(0.0, |d| d.score);
    for d in docs {
        d.metadata.relative_score = relative(d.score, best);
    }
}
