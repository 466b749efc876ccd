//! The JSON shape of search results, shared by `docfuse search --json`, `POST /v1/search`
//! and the MCP `search_docs` tool (its structured content).

use super::RetrievedDocument;
use crate::engine::{snippet, Hit, HitExplain};
use serde::Serialize;

/// One result: `{"rank", "id", "path", "start_line", "end_line", "heading_path", "title",
/// "score", "snippet", "lexical_match"}`, plus `explain` when asked for and `content`
/// (title, heading path and passage text) when the caller asked for text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// 1-based.
    pub rank: usize,
    pub id: String,
    /// Relative to the root it was found under.
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub heading_path: Vec<String>,
    pub title: String,
    /// Rounded to 3 decimals.
    pub score: f32,
    pub snippet: String,
    /// Whether any query term matched the chunk lexically.
    pub lexical_match: bool,
    /// Why the result's file no longer has the indexed content (`file deleted since
    /// indexing`, `file changed since indexing`), else null: the text is the indexed one.
    pub stale_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplain>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

impl SearchResult {
    /// The result for the engine hit at 0-based position `i`.
    pub fn from_hit(i: usize, h: &Hit) -> Self {
        let c = &h.chunk;
        SearchResult {
            rank: i + 1,
            id: c.id.clone(),
            path: c.path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            heading_path: c.heading_path.clone(),
            title: c.title.clone(),
            score: round3(h.score),
            snippet: snippet(&c.text, &h.matched_terms),
            lexical_match: !h.matched_terms.is_empty(),
            stale_reason: None,
            explain: h.explain.clone(),
            content: None,
        }
    }

    /// The result for the retrieved document at 0-based position `i`; `with_content`
    /// adds its `content`.
    pub fn from_document(i: usize, d: &RetrievedDocument, with_content: bool) -> Self {
        let m = &d.metadata;
        SearchResult {
            rank: i + 1,
            id: d.id.clone(),
            path: d.filter_path().to_string(),
            start_line: m.start_line,
            end_line: m.end_line,
            heading_path: m.heading_path.clone(),
            title: m.title.clone(),
            score: round3(d.score),
            snippet: if m.snippet.is_empty() {
                snippet(&d.content, &m.matched_terms)
            } else {
                m.snippet.clone()
            },
            lexical_match: !m.matched_terms.is_empty(),
            stale_reason: m.stale.clone(),
            explain: m.explain.clone(),
            content: with_content.then(|| d.content.clone()),
        }
    }
}

/// The whole answer: `{"query", "mode", "degraded", "generation", "stale", "results"}`, as printed
/// by `docfuse search --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchEnvelope {
    pub query: String,
    /// The mode that answered: `lexical`, `vector` or `hybrid`.
    pub mode: &'static str,
    /// Why `auto` answered lexically, else null.
    pub degraded: Option<String>,
    /// Generation of the index that answered.
    pub generation: u64,
    /// Files changed since that generation was built (size/mtime check); refresh to update.
    pub stale: bool,
    pub results: Vec<SearchResult>,
}

/// `x` rounded to 3 decimals (the JSON scores).
pub(crate) fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}
