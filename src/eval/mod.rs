//! Evaluation: labelled questions in, ranking metrics and latency out.
//!
//! Owns: reading docfuse JSONL question sets and BEIR queries + qrels, judging hits
//! against them, the metrics (nDCG@10, recall@k, MRR@10) and the report. Uses only the
//! engine's public search API. Must not import: `cli`.

mod judge;
mod metrics;
mod questions;
mod run;

pub use judge::{Judgment, Target};
pub use metrics::{mrr_at, ndcg_at, recall_at, Metrics};
pub use questions::{read_beir, read_docfuse, Question};
pub use run::{
    evaluate, evaluate_at, unjudged, unmatched_labels, EvalReport, QueryOutcome, EVAL_DEPTH,
};
