//! A search's options and results, whatever the mode: hits, their explain parts
//! (fusion, proximity, the relations a proximity came through).

use crate::config::QueryParams;
use crate::fusion::Fusion;
use crate::graph::Confidence;
use crate::graph::{Relation, RelationKind};
use crate::lexical::Explain;
use crate::projection::StoredChunk;
use serde::{Deserialize, Serialize};

/// How a query is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Hybrid when the index has usable vectors, else lexical (and says why).
    Auto,
    /// BM25F only.
    Lexical,
    /// Cosine similarity only.
    Vector,
    /// Fusion of the lexical and vector rankings.
    Hybrid,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Lexical => "lexical",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "lexical" => Ok(Mode::Lexical),
            "vector" => Ok(Mode::Vector),
            "hybrid" => Ok(Mode::Hybrid),
            other => Err(format!(
                "`mode` must be one of auto, lexical, vector, hybrid; got {other:?}"
            )),
        }
    }
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The score the ranking used (lexical score, cosine, or fused score by mode).
    pub score: f32,
    /// Chunk ordinal.
    pub ord: u64,
    pub chunk: StoredChunk,
    /// Query terms that matched the chunk lexically, stop words aside unless the query
    /// has only those ([`crate::lexical::Hit::matched_terms`]; empty when none did).
    pub matched_terms: Vec<String>,
    /// 1-based file line of the chunk that best matches the query (its first line of
    /// prose when no term matched).
    pub match_line: u32,
    /// One line around the match (at most [`super::SNIPPET_CHARS`] characters).
    pub snippet: String,
    /// `observed` when the hit has evidence of its own (a query term or its vector);
    /// for a hit the graph alone surfaced, the weaker of its anchor's and its relations'.
    pub confidence: Confidence,
    pub explain: Option<HitExplain>,
}

impl Hit {
    /// Sets `match_line` and `snippet` for a query whose terms weigh `weights`
    /// ([`SearchResponse::weights`]); until then they are the chunk's first line and empty.
    pub fn locate(&mut self, weights: &super::matchline::TermWeights) {
        // plain text and source code are matched line by line, not as Markdown
        let text_doc = crate::chunk::SourceKind::of_path(&self.chunk.path)
            == Some(crate::chunk::SourceKind::Text)
            || crate::chunk::EntryKind::of_chunk(self.chunk.kind)
                != crate::chunk::EntryKind::Document;
        let m = super::matchline::best_line(
            &self.chunk.text,
            self.chunk.start_line,
            weights,
            !text_doc,
        );
        self.match_line = m.line;
        self.snippet = super::matchline::snippet_at(&self.chunk.text, m.offset, weights, !text_doc);
    }
}

/// Every named part of a hit's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HitExplain {
    /// The lexical parts (all zero when no query term matched).
    #[serde(flatten)]
    pub lexical: Explain,
    /// The fusion parts, in vector and hybrid mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionExplain>,
    /// The graph-proximity part (present, possibly 0, whenever explain is asked for).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proximity: Option<ProximityExplain>,
}

/// How a hit's fused score came about.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FusionExplain {
    pub fusion: Fusion,
    /// Lexical score without exact parts (`lexical × aboutness`), and 1-based rank.
    pub lexical_score: f32,
    pub lexical_rank: Option<u32>,
    /// Cosine with the query, and 1-based rank among all chunks.
    pub cosine: f32,
    pub vector_rank: Option<u32>,
    /// How far the cosine stands above the query's cosines over the collection, in
    /// standard deviations: `(cos − mean) / sd` (0 when the collection is too small to
    /// measure, [`crate::fusion::MIN_VECTORS_FOR_STATS`]).
    pub cosine_z: f32,
    /// The lexical side's multiplier by information matched: the best share of the
    /// query's IDF mass a top lexical candidate holds, `^ QueryParams::info_share` (1
    /// when off).
    pub information_share: f32,
    /// Contribution of each side to the fused score.
    pub lexical_part: f32,
    pub vector_part: f32,
    /// Added for an exact id, path or symbol match (keeps such hits on top).
    pub exact_bonus: f32,
    /// Added for the page's canonicality (a tie-breaker among hits with lexical
    /// evidence; 0 at `canon_gain` 0).
    pub canonicality_bonus: f32,
    /// The fused score's multiplier for a module entry when the query asks for code
    /// (`QueryParams::module_prior`); 1 otherwise.
    pub module_prior: f32,
    /// The routing prior on the vector part: `QueryParams::route_prior` for an
    /// ownership record or route when the query asks who owns something; 1 otherwise.
    pub route_prior: f32,
    /// The change-log prior on the vector part: `QueryParams::changelog_prior` for a
    /// change log's chunk when the query does not ask about changes; 1 otherwise.
    pub changelog_prior: f32,
    /// The template prior on the vector part: `QueryParams::template_prior` for a
    /// template copy (its text is on three or more pages); 1 otherwise.
    pub template_prior: f32,
}

/// A query's results and how they were produced.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResponse {
    pub hits: Vec<Hit>,
    /// The mode that produced the hits (never `Auto`).
    pub mode: Mode,
    /// Why the requested mode could not be used, when `auto` fell back to lexical.
    pub degraded: Option<String>,
    /// The query's terms that matched some chunk, with their IDF: for
    /// [`Hit::locate`].
    pub weights: Vec<(String, f32)>,
    /// The query's content words no chunk contains
    /// ([`crate::lexical::LexicalRun::missing_words`]).
    pub missing_words: Vec<String>,
    /// The hits are neighbours by meaning alone: the answer used vectors and no chunk
    /// matched a word of the query in any form
    /// ([`crate::lexical::LexicalRun::holds_no_query_word`]).
    pub neighbours_only: bool,
}

impl From<crate::lexical::Hit> for Hit {
    fn from(h: crate::lexical::Hit) -> Self {
        Hit {
            score: h.score,
            ord: h.ord,
            match_line: h.chunk.start_line,
            snippet: String::new(),
            chunk: h.chunk,
            matched_terms: h.matched_terms,
            confidence: Confidence::Observed,
            explain: h.explain.map(|lexical| HitExplain {
                lexical,
                fusion: None,
                proximity: None,
            }),
        }
    }
}

/// The fusion used when none is given: chosen on the two dev sets and checked on
/// SciFact (see `benches/QUALITY.md`).
pub const DEFAULT_FUSION: Fusion = Fusion::Calibrated {
    alpha: 0.45,
    noise: 0.5,
    tmm: false,
};

/// Search settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchOptions {
    /// Results wanted (after the floor). Default 10.
    pub limit: usize,
    /// Attach the named score parts to each hit.
    pub explain: bool,
    pub mode: Mode,
    pub params: QueryParams,
    pub fusion: Fusion,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            explain: false,
            mode: Mode::Auto,
            params: QueryParams::default(),
            fusion: DEFAULT_FUSION,
        }
    }
}

/// The proximity part of one result, for `--explain`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProximityExplain {
    /// Added to the score: `prox_gain × best × reach` (0 at `prox_gain` 0).
    pub proximity: f32,
    /// How close the page is to the anchor, in `[0, 1]`: the anchor's share of the best
    /// score times the normalised weights of the relations (0 when no anchor is within
    /// two relations).
    pub reach: f32,
    /// The page of the strong lexical hit the proximity comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The relations from the anchor's page to this one, in order (each as written,
    /// with its evidence line).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<RelationView>,
    /// Surfaced by the relations alone: the result has no evidence of its own.
    pub graph_only: bool,
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

impl RelationView {
    /// `r` with its two documents named by `path`.
    pub fn of(r: &Relation, path: impl Fn(u32) -> String) -> RelationView {
        RelationView {
            kind: r.kind,
            confidence: r.confidence,
            from: path(r.from),
            to: path(r.to),
            line: r.line,
            section: r.section.clone(),
            in_code_block: r.in_code_block,
        }
    }
}
