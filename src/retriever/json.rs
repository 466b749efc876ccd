//! The JSON shape of search results, shared by `docfuse search --json`, `POST /v1/search`
//! and the MCP `search_docs` tool (its structured content).

use super::RetrievedDocument;
use crate::read::HitExplain;
use serde::Serialize;

/// One result: `{"rank", "id", "root", "path", "start_line", "end_line", "match_line",
/// "heading_path", "title", "score", "snippet", "lexical_match", "stale_reason", "evidence",
/// "provenance", "confidence"}`, plus `explain` when asked for and `content`
/// (title, heading path and passage text) when the caller asked for text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResult {
    /// 1-based.
    pub rank: usize,
    pub id: String,
    /// The kind of entry: `document`, `module` (a source file or one of its items) or
    /// `package` (a package manifest).
    pub kind: &'static str,
    /// Index of the root `path` is relative to (as `/v1/status` lists the roots; give it
    /// as `root` to read a passage when several roots hold the same path).
    pub root: usize,
    /// Relative to the root it was found under.
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// The line that best matches the query: cite `path:match_line`.
    pub match_line: u32,
    /// The whole section the result stands for (grouped results).
    pub section_start_line: u32,
    pub section_end_line: u32,
    /// How many chunks of the section matched.
    pub chunks_matched: u32,
    pub heading_path: Vec<String>,
    pub title: String,
    /// Rounded to 3 decimals.
    pub score: f32,
    pub snippet: String,
    /// Whether a query word matched the chunk lexically (a stop word counts only in a
    /// question of stop words alone: sharing `what is the` is not a match).
    pub lexical_match: bool,
    /// Why the result's file no longer has the indexed content (`file deleted since
    /// indexing`, `file changed since indexing`), else null: the text is the indexed one.
    pub stale_reason: Option<String>,
    /// Where the passage is and the sha256 of the chunk and of its file when indexed.
    pub evidence: super::Evidence,
    /// `observed`: read from the indexed files.
    pub provenance: super::Provenance,
    /// `observed` (the query matched the passage, or observed relations from a strong
    /// hit surfaced it) or `fuzzy` (a fuzzy relation on the way), next to the numeric
    /// `score`.
    pub confidence: super::Confidence,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<HitExplain>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Set when `content` was asked for but cut or left out to keep the response under
    /// its budget: how to read the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_note: Option<String>,
}

impl SearchResult {
    /// The result for the retrieved document at 0-based position `i`; `with_content`
    /// adds its `content`.
    pub fn from_document(i: usize, d: &RetrievedDocument, with_content: bool) -> Self {
        let m = &d.metadata;
        SearchResult {
            rank: i + 1,
            id: d.id.clone(),
            kind: d.entry_kind().name(),
            root: m.root,
            path: d.filter_path().to_string(),
            start_line: m.start_line,
            end_line: m.end_line,
            match_line: m.match_line,
            section_start_line: m.section_start_line,
            section_end_line: m.section_end_line,
            chunks_matched: m.chunks_matched,
            heading_path: m.heading_path.clone(),
            title: m.title.clone(),
            score: round3(d.score),
            snippet: if m.snippet.is_empty() {
                first_line(&d.content)
            } else {
                m.snippet.clone()
            },
            lexical_match: !m.matched_terms.is_empty(),
            stale_reason: m.stale.clone(),
            evidence: m.evidence.clone(),
            provenance: m.provenance,
            confidence: m.confidence,
            explain: m.explain.clone(),
            content: with_content.then(|| d.content.clone()),
            content_note: None,
        }
    }

    /// This result with `content` set to `fitted` (the passage as it fits the response
    /// budget) when `include` is set, and a note when it was cut or left out.
    pub fn with_content(mut self, include: bool, fitted: Option<String>) -> Self {
        if !include {
            self.content = None;
            return self;
        }
        let cut = fitted
            .as_deref()
            .is_some_and(|c| c.ends_with(super::budget::CUT_MARK));
        self.content_note = match (&fitted, cut) {
            (None, _) => Some(format!(
                "left out to keep the response under its budget; read it with the passage route or tool, id `{}`",
                self.id
            )),
            (Some(_), true) => Some(format!(
                "cut to keep the response under its budget; read the rest with the passage route or tool, id `{}`",
                self.id
            )),
            _ => None,
        };
        self.content = fitted;
        self
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
    /// The query's content words no indexed passage contains (stop words aside; as
    /// written, lower-cased; a CJK run when none of its bigrams is held): the documentation may not cover them, and results are ranked on the
    /// other words or by meaning. Left out when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_words: Vec<String>,
    /// What to know of how well the index covers the question ([`coverage_note`]: words
    /// no passage holds, results that share none of its words), the note the CLI prints
    /// and the MCP text carries; left out when the results match the question's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// True when no result shares a word of the question with it and the answer used
    /// vectors: every result is a semantic neighbour, near in meaning only (a reader
    /// should weigh them as such). Left out when false. (A question whose nearest
    /// passages are no nearer than made-up words get has no results at all.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub semantic_neighbours_only: bool,
    /// The part of the query that was searched: the most informative run of words of a
    /// query over 4096 bytes, or the lines of a pasted stack trace that are not frames;
    /// left out when the query was searched whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searched_as: Option<String>,
    pub results: Vec<SearchResult>,
    /// Results left out (the last ones) to keep the response under its budget; ask for
    /// a smaller `limit` or narrow the query with filters.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub results_left_out: usize,
}

impl SearchEnvelope {
    /// The envelope of retrieval `r` for `query` with `results` (the first ones of
    /// `r.documents`, the rest left out to keep under a budget). Its note is made from all
    /// of `r.documents`, kept or not, so a cut never changes what it says.
    pub fn of(query: &str, r: &super::Retrieval, results: Vec<SearchResult>) -> Self {
        let all_unmatched = r
            .documents
            .iter()
            .all(|d| d.metadata.matched_terms.is_empty());
        // a long query was searched on a part of it: the words are that part's
        let query_searched = r.focused.as_ref().map_or(query, |f| f.text.as_str());
        let terms = crate::analysis::query_terms(query_searched);
        // a quoted phrase or a `-word` is matched as written: no note for those
        // (an operator, `what does ?? do`, is what such a question is about)
        let only_common = !terms.is_empty()
            && crate::read::operators_in(query_searched).is_empty()
            && !query_searched.contains(['"', '-'])
            && terms.iter().all(|t| crate::analysis::is_stop_word(t));
        let note = if only_common && !r.documents.is_empty() {
            Some(format!(
                "The query has only common words ({}): the results match those alone; ask with words of the topic.",
                terms.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
            ))
        } else {
            coverage_note(
                &r.missing_words,
                r.documents.len(),
                all_unmatched,
                r.mode != super::Mode::Lexical,
                r.filtered,
            )
        };
        // filters that keep no file: say so, not that the words are missing
        let note = match &r.no_file_passes {
            Some(example) => Some(no_file_note(example)),
            None => note,
        };
        let note = match &r.focused {
            Some(f) => Some(
                [focus_note(f), note.unwrap_or_default()]
                    .join(" ")
                    .trim_end()
                    .to_string(),
            ),
            None => note,
        };
        SearchEnvelope {
            query: query.to_string(),
            mode: r.mode.name(),
            degraded: r.degraded.clone(),
            generation: r.generation,
            stale: r.stale,
            missing_words: r.missing_words.clone(),
            note,
            searched_as: r.focused.as_ref().map(|f| f.text.clone()),
            semantic_neighbours_only: r.neighbours_only && !r.documents.is_empty(),
            results_left_out: r.documents.len().saturating_sub(results.len()),
            results,
        }
    }
}

/// What a reader should know of how well the index covers a query, said the same way by
/// every interface (CLI note, MCP text): the content words no passage contains, and
/// whether any result shares a content word with the query (`all_unmatched`: none does,
/// so every result is a semantic neighbour or shares only stop words; `with_vectors`:
/// the answer used vectors, so such results are semantic neighbours). `filtered`: the
/// words are missing from the passages the filters keep, which the note says (the index
/// may hold them elsewhere). `None` when the results match the query's words.
pub fn coverage_note(
    missing_words: &[String],
    results: usize,
    all_unmatched: bool,
    with_vectors: bool,
    filtered: bool,
) -> Option<String> {
    let quoted = |w: &[String]| {
        w.iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let none = match filtered {
        true => "No passage the filters keep contains",
        false => "No passage contains",
    };
    if results == 0 {
        return (!missing_words.is_empty()).then(|| format!("{none} {}.", quoted(missing_words)));
    }
    match (missing_words.is_empty(), all_unmatched) {
        (true, false) => None,
        (true, true) if with_vectors => Some(format!(
            "{none} the query's words: these are semantic neighbours only."
        )),
        (true, true) => Some("These results share only common words with the query.".into()),
        (false, true) => Some(format!(
            "{none} {}: the documentation may not cover this question; these results share only common words or meaning with it.",
            quoted(missing_words)
        )),
        (false, false) => Some(format!(
            "{none} {}: the results match only the query's other words.",
            quoted(missing_words)
        )),
    }
}

/// The note for filters that keep no indexed file; `example` is an indexed path.
fn no_file_note(example: &str) -> String {
    let shown = match example.is_empty() {
        true => String::new(),
        false => format!(", as results show them (`{example}`)"),
    };
    format!(
        "No indexed file passes the filters, so nothing was searched: paths are relative to an indexed root{shown}."
    )
}

/// What a reader should know of a query searched on a part of it: a long one's most
/// informative run of words, a stack trace's lines that are not frames.
fn focus_note(f: &super::Focused) -> String {
    match (f.query_bytes > super::MAX_QUERY_BYTES, f.trace) {
        (true, false) => format!(
            "The query is {} bytes long; it was searched on its most informative part (`searched_as`, at most {} words).",
            f.query_bytes,
            super::WINDOW_WORDS
        ),
        (true, true) => format!(
            "The query is {} bytes long; it was searched on the lines of its most informative part (at most {} words) that are not stack frames or source excerpts (`searched_as`).",
            f.query_bytes,
            super::WINDOW_WORDS
        ),
        (false, _) => "The query holds a stack trace or a compiler's source excerpt; it was searched on its message lines (`searched_as`).".to_string(),
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A snippet for a document of another retriever: its first shown line.
fn first_line(content: &str) -> String {
    // the offset of the first shown line; `snippet_at` shows it (one pass of markup
    // removal: `&amp;lt;` stays `&lt;`)
    let offset = crate::chunk::visible_lines(content)
        .iter()
        .position(|l| l.as_deref().is_some_and(|l| !l.trim().is_empty()));
    offset.map_or_else(String::new, |i| {
        crate::read::snippet_at(content, i, &[], true)
    })
}

/// `x` rounded to 3 decimals (the JSON scores).
pub(crate) fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::coverage_note;

    #[test]
    fn the_coverage_note_claims_only_what_holds() {
        let words = ["capital".to_string(), "france".to_string()];
        assert_eq!(
            coverage_note(&words, 0, true, true, false).as_deref(),
            Some("No passage contains `capital`, `france`.")
        );
        assert!(coverage_note(&words, 3, true, true, false)
            .unwrap()
            .contains("may not cover"));
        assert!(coverage_note(&words[1..], 3, false, true, false)
            .unwrap()
            .contains("match only the query's other words"));
        assert!(coverage_note(&[], 3, true, true, false)
            .unwrap()
            .contains("semantic neighbours only"));
        assert_eq!(coverage_note(&[], 3, false, true, false), None);
        // with filters, the words are missing from what the filters keep only
        assert_eq!(
            coverage_note(&words, 0, true, true, true).as_deref(),
            Some("No passage the filters keep contains `capital`, `france`.")
        );
        assert_eq!(coverage_note(&[], 0, true, true, false), None);
        assert_eq!(
            coverage_note(&[], 3, true, false, false).as_deref(),
            Some("These results share only common words with the query.")
        );
    }
}
