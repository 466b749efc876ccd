//! Running a question set against an index.

use super::judge::{gains, unit_key};
use super::metrics::Metrics;
use super::questions::Question;
use crate::error::Result;
use crate::read::{DocIndex, SearchOptions};
use serde::Serialize;
use std::time::Instant;

/// Ranked results retrieved per question (recall@100 needs 100 units).
pub const EVAL_DEPTH: usize = 100;

/// One question's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryOutcome {
    pub id: String,
    pub query: String,
    /// Rank (1-based, among distinct units) of the first relevant result, if any in depth.
    pub first_relevant_rank: Option<usize>,
    pub metrics: Metrics,
    /// Time of the search call, ms.
    pub latency_ms: f64,
    /// Distinct retrieval units (sections, or documents for BEIR) with their best
    /// score, in rank order.
    #[serde(skip)]
    pub ranking: Vec<(String, f32)>,
}

/// The report of one mode over one question set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    pub mode: String,
    pub queries: usize,
    /// Means over the questions.
    pub metrics: Metrics,
    pub latency_ms_median: f64,
    pub latency_ms_p95: f64,
    /// Per-question outcomes, in question order (omitted from JSON when emptied).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_query: Vec<QueryOutcome>,
}

/// The labels of `questions` that match no chunk of `index` (a path that is not indexed,
/// or a heading not found in it): `(question id, "path › heading")`. Such a question
/// can never be answered, which a metric alone does not show.
///
/// # Errors
/// [`crate::Error::Corrupt`] when the stored chunks cannot be read.
pub fn unmatched_labels(index: &DocIndex, questions: &[Question]) -> Result<Vec<(String, String)>> {
    let chunks = index.lexical().all_chunks()?;
    let mut out = Vec::new();
    for q in questions {
        for j in &q.judgments {
            if let super::Target::Section { path, heading } = &j.target {
                if !chunks.iter().any(|c| j.target.matches(c)) {
                    out.push((q.id.clone(), format!("{path} › {heading}")));
                }
            }
        }
    }
    Ok(out)
}

/// The ids of `questions` with no relevant label (none given, or every grade 0): no
/// ranking can be judged for them, so [`evaluate`] leaves them out of the metrics (as
/// trec_eval does), and the CLI says so.
pub fn unjudged(questions: &[Question]) -> Vec<&str> {
    questions
        .iter()
        .filter(|q| q.judgments.is_empty())
        .map(|q| q.id.as_str())
        .collect()
}

impl EvalReport {
    /// The ranked units of every question as a TREC run (`qid Q0 docid rank score tag`),
    /// document ids as [`run_docid`] writes them.
    pub fn trec_run(&self, tag: &str) -> String {
        let mut out = String::new();
        for q in &self.per_query {
            for (i, (key, score)) in q.ranking.iter().enumerate() {
                let key = run_docid(key);
                out.push_str(&format!("{} Q0 {key} {} {score} {tag}\n", q.id, i + 1));
            }
        }
        out
    }
}

/// Evaluates `questions` on `index` with `opts` (its limit is raised to [`EVAL_DEPTH`] and
/// its floor set to 0, so the metrics judge the ranking, not the cut). Each question is
/// searched on the part a search would search ([`crate::read::focus`]: a pasted trace's
/// message lines, a long question's window). Questions without a relevant label
/// ([`unjudged`]) are left out. Latency is the in-process time of each search call,
/// that part's choice included.
///
/// # Errors
/// Whatever [`DocIndex::search`] returns.
pub fn evaluate(
    index: &DocIndex,
    questions: &[Question],
    mode: &str,
    opts: &SearchOptions,
) -> Result<EvalReport> {
    evaluate_at(index, questions, mode, opts, EVAL_DEPTH)
}

/// [`evaluate`] with `depth` results per question instead of [`EVAL_DEPTH`]: the
/// latency of a search of that many results; metrics past `depth` (recall@100 at depth
/// 10) see only `depth` results.
///
/// # Errors
/// Whatever [`DocIndex::search`] returns.
pub fn evaluate_at(
    index: &DocIndex,
    questions: &[Question],
    mode: &str,
    opts: &SearchOptions,
    depth: usize,
) -> Result<EvalReport> {
    let mut opts = *opts;
    opts.limit = depth.max(1);
    opts.params.floor = 0.0;
    let mut outcomes = Vec::with_capacity(questions.len());
    for q in questions.iter().filter(|q| !q.judgments.is_empty()) {
        let t = Instant::now();
        let focused = crate::read::focus(index, &q.query);
        let searched = focused
            .as_ref()
            .map_or(q.query.as_str(), |f| f.text.as_str());
        let hits = index.search(searched, &opts)?.hits;
        let latency_ms = t.elapsed().as_secs_f64() * 1000.0;
        let ranked: Vec<_> = hits.iter().map(|h| &h.chunk).collect();
        let g = gains(&ranked, &q.judgments);
        let by_doc = q
            .judgments
            .iter()
            .all(|j| matches!(j.target, super::Target::Doc { .. }));
        let mut seen = std::collections::HashSet::new();
        let ranking = hits
            .iter()
            .map(|h| (unit_key(&h.chunk, by_doc), h.score))
            .filter(|(k, _)| seen.insert(k.clone()))
            .collect();
        let ideal: Vec<u32> = q.judgments.iter().map(|j| j.grade).collect();
        outcomes.push(QueryOutcome {
            id: q.id.clone(),
            query: q.query.clone(),
            first_relevant_rank: g.iter().position(|x| *x > 0).map(|p| p + 1),
            metrics: Metrics::of(&g, &ideal),
            latency_ms,
            ranking,
        });
    }
    let metrics = Metrics::mean(&outcomes.iter().map(|o| o.metrics).collect::<Vec<_>>());
    let mut lat: Vec<f64> = outcomes.iter().map(|o| o.latency_ms).collect();
    lat.sort_by(f64::total_cmp);
    Ok(EvalReport {
        mode: mode.to_string(),
        queries: outcomes.len(),
        metrics,
        latency_ms_median: percentile(&lat, 0.5),
        latency_ms_p95: percentile(&lat, 0.95),
        per_query: outcomes,
    })
}

/// Nearest-rank percentile of sorted values (0 for none).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A unit key as a run file's document id, one token for any reader: the heading
/// levels of a section key joined by `›` (as the labels are printed), white space and
/// control characters as `_` (Python's `str.split`, which pytrec_eval users read runs
/// with, also splits at the information separators `\x1c`–`\x1f`).
pub fn run_docid(key: &str) -> String {
    key.chars()
        .map(|c| match c {
            '\u{1f}' => '›',
            c if c.is_whitespace() || c.is_control() => '_',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn nearest_rank_percentiles() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(super::percentile(&v, 0.5), 5.0);
        assert_eq!(super::percentile(&v, 0.95), 10.0);
        assert_eq!(super::percentile(&[], 0.5), 0.0);
    }

    #[test]
    fn a_run_docid_is_one_token_for_python_and_trec_eval() {
        let key = "ch15-04-rc.md#`Rc<T>`, the Smart Pointer\u{1f}Cloning\tto\u{1c}Count";
        let id = super::run_docid(key);
        assert_eq!(
            id,
            "ch15-04-rc.md#`Rc<T>`,_the_Smart_Pointer›Cloning_to_Count"
        );
        // the split Python readers use (str.split) sees a single token
        assert!(!id.chars().any(|c| c.is_whitespace() || c.is_control()));
    }
}
