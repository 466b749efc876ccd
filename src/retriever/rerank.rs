//! Reranking: another retriever's top candidates re-scored by a caller-supplied reranker
//! (a cross-encoder, an LLM judge, a heuristic), best new score first.

use super::{
    set_relative_scores, BoxFuture, FirstStage, RetrieveError, RetrieveOptions, RetrievedDocument,
    Retriever,
};
use std::sync::Arc;

/// Scores candidates for a query: one score per document, in the same order, higher is
/// better. CPU-heavy rerankers should do their work on a blocking pool
/// (`tokio::task::spawn_blocking`).
pub trait Reranker: Send + Sync {
    /// # Errors
    /// Whatever stops the reranker; reported as [`RetrieveError::Component`].
    fn rerank<'a>(
        &'a self,
        query: &'a str,
        documents: &'a [RetrievedDocument],
    ) -> BoxFuture<'a, Result<Vec<f32>, RetrieveError>>;
}

/// A reranker from a cheap, synchronous scoring function `(query, document) → score`.
pub struct FnReranker<F>(pub F);

impl<F> Reranker for FnReranker<F>
where
    F: Fn(&str, &RetrievedDocument) -> f32 + Send + Sync,
{
    fn rerank<'a>(
        &'a self,
        query: &'a str,
        documents: &'a [RetrievedDocument],
    ) -> BoxFuture<'a, Result<Vec<f32>, RetrieveError>> {
        let scores = documents.iter().map(|d| (self.0)(query, d)).collect();
        Box::pin(std::future::ready(Ok(scores)))
    }
}

/// Re-scores the top `candidates` of an inner retriever (like `createRerankedRetriever`).
///
/// The inner retriever is asked for `max(limit, candidates)` documents; the reranker
/// scores them; they are sorted by the new score (ties keep the first-stage order) and
/// cut at `limit`. Each document's `score` becomes the reranker's, its first-stage rank
/// and score go to [`super::DocumentMetadata::first_stage`].
pub struct RerankedRetriever {
    inner: Arc<dyn Retriever>,
    reranker: Arc<dyn Reranker>,
    candidates: usize,
}

impl RerankedRetriever {
    /// Reranks the top `candidates` (≥ 1) of `inner`.
    pub fn new(
        inner: impl Retriever + 'static,
        reranker: impl Reranker + 'static,
        candidates: usize,
    ) -> Self {
        RerankedRetriever {
            inner: Arc::new(inner),
            reranker: Arc::new(reranker),
            candidates: candidates.max(1),
        }
    }

    async fn run(
        &self,
        query: &str,
        options: &RetrieveOptions,
    ) -> Result<Vec<RetrievedDocument>, RetrieveError> {
        super::validate_search(query, options)?;
        let first = options.with_limit(options.limit.max(self.candidates).min(super::MAX_LIMIT));
        let docs = self.inner.retrieve(query, &first).await?;
        let scores = self.reranker.rerank(query, &docs).await?;
        if scores.len() != docs.len() {
            return Err(RetrieveError::Component {
                component: "reranker".into(),
                message: format!(
                    "returned {} scores for {} documents",
                    scores.len(),
                    docs.len()
                ),
            });
        }
        let mut ranked: Vec<(usize, f32, RetrievedDocument)> = docs
            .into_iter()
            .zip(scores)
            .enumerate()
            .map(|(i, (d, s))| (i, if s.is_nan() { f32::NEG_INFINITY } else { s }, d))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut out: Vec<RetrievedDocument> = ranked
            .into_iter()
            .take(options.limit)
            .map(|(i, s, mut d)| {
                d.metadata.first_stage = Some(FirstStage {
                    rank: i as u32 + 1,
                    score: d.score,
                });
                d.score = s;
                d
            })
            .collect();
        set_relative_scores(&mut out);
        Ok(out)
    }
}

impl Retriever for RerankedRetriever {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        Box::pin(self.run(query, options))
    }

    fn name(&self) -> &str {
        "reranked"
    }
}

/// A [`RerankedRetriever`] over shared parts.
pub fn create_reranked_retriever(
    inner: Arc<dyn Retriever>,
    reranker: Arc<dyn Reranker>,
    candidates: usize,
) -> RerankedRetriever {
    RerankedRetriever {
        inner,
        reranker,
        candidates: candidates.max(1),
    }
}
