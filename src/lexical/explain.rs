//! Named score parts of a lexical hit, for `--explain`. Stable JSON keys.

use serde::Serialize;

/// Why a chunk scored what it did:
/// `score = lexical × prior × aboutness × audience_fit + exact_id + exact_path +
/// exact_symbol + canonicality`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explain {
    pub score: f32,
    /// `(1 − page_weight) × ((1 − section_weight) × chunk_lexical + section_weight ×
    /// section_lexical) + page_weight × page_lexical`.
    pub lexical: f32,
    /// The chunk's own BM25F: the sum over `terms`.
    pub chunk_lexical: f32,
    /// The BM25F of the chunk's whole section (its pieces as one document; Callan 1994,
    /// passage-level evidence), 0 when section evidence is off.
    pub section_lexical: f32,
    /// The weight of the section's BM25F (`QueryParams::section_weight`; 0: off).
    pub section_weight: f32,
    /// The BM25F of the chunk's whole page (every chunk of its file as one document),
    /// 0 when page evidence is off.
    pub page_lexical: f32,
    /// The weight of the page's BM25F (`QueryParams::page_weight`; 0: off).
    pub page_weight: f32,
    /// `1 + about_gain × about_share` (1 when nothing matched lexically).
    pub aboutness: f32,
    /// Share of the query's IDF mass matched in title, headings or path.
    pub about_share: f32,
    /// Bonus: the query names this chunk's id or an alias.
    pub exact_id: f32,
    /// Bonus: the query names this chunk's file (path, file name or stem).
    pub exact_path: f32,
    /// Bonus: the query is (or, for 1–2 token queries, contains) one of the chunk's symbols.
    pub exact_symbol: f32,
    /// Tie-breaker: `canon_gain × best × page_canonicality`, only with lexical evidence.
    pub canonicality: f32,
    /// The page's log-scaled PageRank above the corpus floor, in `[0, 1]` (0 without a
    /// graph).
    pub page_canonicality: f32,
    /// Query-shape prior: `path_prior` for a path-shaped query naming this chunk's file,
    /// `symbol_prior` for a symbol-shaped one naming its symbol, else 1; times
    /// `module_prior` for a module or package entry when the query asks for code, and
    /// `route_prior` for an ownership record or route when the query asks who owns
    /// something or the record's title covers the query; times `changelog_prior` for a
    /// change log's chunk when the query does not ask about changes, and
    /// `template_prior` for a template copy.
    pub prior: f32,
    /// `audience_fit` for agent documentation under `agent`, else 1.
    pub audience_fit: f32,
    pub k1: f32,
    pub b: f32,
    /// Chunks in the collection (BM25F N).
    pub n: u64,
    /// One entry per query term that matched this chunk.
    pub terms: Vec<TermExplain>,
}

/// One query term's part of the lexical score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermExplain {
    /// The analysed query term.
    pub term: String,
    /// Chunks containing it (or one of its prefix expansions) in any field.
    pub df: u64,
    pub idf: f32,
    /// Weighted, length-normalised frequency summed over fields (`tf~`).
    pub pseudo_tf: f32,
    /// `idf × tf~ / (k1 + tf~)`.
    pub contribution: f32,
    pub fields: Vec<FieldExplain>,
}

/// One field's part of a term's contribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldExplain {
    pub field: &'static str,
    pub weight: f32,
    /// Term frequency in the field (prefix expansions counted at their weight).
    pub tf: f32,
    /// Field length in terms (tantivy's field norm) and the collection average.
    pub length: f32,
    pub avg_length: f32,
    /// `weight × tf / B_f`.
    pub weighted_tf: f32,
    /// This field's share of the term's contribution.
    pub contribution: f32,
    /// Index terms that matched (the query term itself and/or its prefix expansions).
    pub matched: Vec<String>,
}
