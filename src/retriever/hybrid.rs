//! Hybrid retrieval: any number of weighted retrievers queried concurrently, their lists
//! fused into one, de-duplicated by document id.
//!
//! Two combinations, generalising [`crate::fusion`] (two lists) to N lists:
//! - reciprocal rank fusion (Cormack, Clarke & Büttcher, 2009): `Σ_lists w / (k + rank)`;
//! - normalised scores (Bruch, Gai & Ingber, 2023): `Σ_lists w · (s − min)/(max − min)`,
//!   min and max over that list (a list whose scores are all equal gives each 1).
//!
//! A list where a document is absent contributes 0. Ties break by id: same input, same
//! output.

use super::filter::PathFilter;
use super::{
    set_relative_scores, BoxFuture, FusionPart, RetrieveError, RetrieveOptions, RetrievedDocument,
    Retriever,
};
use std::collections::HashMap;
use std::sync::Arc;

/// How member lists are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Combination {
    /// Reciprocal rank fusion with constant `k` (60 in the paper).
    Rrf { k: f32 },
    /// Weighted sum of min-max normalised scores.
    NormalizedScores,
}

/// A fused key with its score and each list's part (`score = Σ parts`).
#[derive(Debug, Clone, PartialEq)]
pub struct FusedItem {
    pub key: String,
    pub score: f32,
    /// `(list index, 1-based rank, the list's score, contribution)`.
    pub parts: Vec<(usize, u32, f32, f32)>,
}

/// Fuses `lists` (each `(weight, [(key, score)] best first)`), best first, ties by key.
/// A key repeated within one list counts at its first (best) place only. Pure and
/// deterministic; never NaN for finite inputs.
pub fn fuse_lists(lists: &[(f32, Vec<(String, f32)>)], combination: Combination) -> Vec<FusedItem> {
    let mut by_key: HashMap<&str, FusedItem> = HashMap::new();
    for (li, (weight, list)) in lists.iter().enumerate() {
        let (lo, hi) = list
            .iter()
            .map(|(_, s)| *s)
            .filter(|s| s.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
        let mut seen = std::collections::HashSet::new();
        for (i, (key, score)) in list.iter().enumerate() {
            if !seen.insert(key.as_str()) {
                continue;
            }
            let rank = i as u32 + 1;
            let contribution = weight
                * match combination {
                    Combination::Rrf { k } => 1.0 / (k + rank as f32),
                    Combination::NormalizedScores if !score.is_finite() => 0.0,
                    Combination::NormalizedScores if hi > lo => (score - lo) / (hi - lo),
                    Combination::NormalizedScores => 1.0,
                };
            let item = by_key.entry(key.as_str()).or_insert_with(|| FusedItem {
                key: key.clone(),
                score: 0.0,
                parts: Vec::new(),
            });
            item.score += contribution;
            item.parts.push((li, rank, *score, contribution));
        }
    }
    let mut out: Vec<FusedItem> = by_key.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
    out
}

struct Member {
    retriever: Arc<dyn Retriever>,
    weight: f32,
}

/// Fuses any number of weighted retrievers (like `createHybridRetriever`).
///
/// Each member is asked for `max(limit, depth)` documents with the caller's options
/// (filters included; the fused list is filtered again by path for members that ignore
/// them), the lists are fused with the [`Combination`], and the best `limit` are kept.
/// A fused document carries the metadata of the first member (in member order) that
/// returned it, its fused score, and one [`FusionPart`] per member list that had it.
pub struct HybridRetriever {
    members: Vec<Member>,
    combination: Combination,
    depth: usize,
    name: String,
}

impl HybridRetriever {
    /// No members yet; add them with [`HybridRetriever::with`]. Candidate depth 50.
    pub fn new(combination: Combination) -> Self {
        HybridRetriever {
            members: Vec::new(),
            combination,
            depth: 50,
            name: "hybrid".into(),
        }
    }

    /// Adds a member with weight `weight` (≥ 0).
    pub fn with(mut self, retriever: impl Retriever + 'static, weight: f32) -> Self {
        self.members.push(Member {
            retriever: Arc::new(retriever),
            weight: weight.max(0.0),
        });
        self
    }

    /// Adds a shared member.
    pub fn with_shared(mut self, retriever: Arc<dyn Retriever>, weight: f32) -> Self {
        self.members.push(Member {
            retriever,
            weight: weight.max(0.0),
        });
        self
    }

    /// Each member contributes at least this many candidates (default 50).
    pub fn depth(mut self, depth: usize) -> Self {
        self.depth = depth.max(1);
        self
    }

    /// The name recorded when this hybrid is itself a member of another composition.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    async fn run(
        &self,
        query: &str,
        options: &RetrieveOptions,
    ) -> Result<Vec<RetrievedDocument>, RetrieveError> {
        let filter = super::validate_search(query, options)?;
        if self.members.is_empty() {
            return Ok(Vec::new());
        }
        let member_opts = options.with_limit(options.limit.max(self.depth).min(super::MAX_LIMIT));
        let lists = futures::future::try_join_all(
            self.members
                .iter()
                .map(|m| m.retriever.retrieve(query, &member_opts)),
        )
        .await?;
        Ok(self.merge(lists, &filter, options.limit))
    }

    fn merge(
        &self,
        lists: Vec<Vec<RetrievedDocument>>,
        filter: &PathFilter,
        limit: usize,
    ) -> Vec<RetrievedDocument> {
        let keyed: Vec<(f32, Vec<(String, f32)>)> = self
            .members
            .iter()
            .zip(&lists)
            .map(|(m, docs)| {
                let keys = docs.iter().map(|d| (d.id.clone(), d.score)).collect();
                (m.weight, keys)
            })
            .collect();
        let mut first: HashMap<&str, &RetrievedDocument> = HashMap::new();
        for d in lists.iter().flatten() {
            first.entry(d.id.as_str()).or_insert(d);
        }
        let mut out: Vec<RetrievedDocument> = fuse_lists(&keyed, self.combination)
            .into_iter()
            .filter_map(|f| {
                let mut d = (*first.get(f.key.as_str())?).clone();
                d.score = f.score;
                d.metadata.fusion = f
                    .parts
                    .iter()
                    .map(|&(li, rank, score, contribution)| FusionPart {
                        retriever: self.members[li].retriever.name().to_string(),
                        rank,
                        score,
                        contribution,
                    })
                    .collect();
                Some(d)
            })
            .filter(|d| {
                filter.is_empty()
                    || (filter.matches(d.filter_path()) && filter.matches_kind(d.entry_kind()))
            })
            .take(limit)
            .collect();
        set_relative_scores(&mut out);
        out
    }
}

impl Retriever for HybridRetriever {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        Box::pin(self.run(query, options))
    }

    fn name(&self) -> &str {
        &self.name
    }
}

/// A [`HybridRetriever`] of `members` (`(retriever, weight)`) combined with `combination`.
pub fn create_hybrid_retriever(
    members: Vec<(Arc<dyn Retriever>, f32)>,
    combination: Combination,
) -> HybridRetriever {
    members
        .into_iter()
        .fold(HybridRetriever::new(combination), |h, (r, w)| {
            h.with_shared(r, w)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn list(items: &[(&str, f32)]) -> Vec<(String, f32)> {
        items.iter().map(|(k, s)| (k.to_string(), *s)).collect()
    }

    #[test]
    fn rrf_over_three_lists_is_hand_computed() {
        let lists = vec![
            (1.0, list(&[("a", 9.0), ("b", 5.0)])),
            (1.0, list(&[("b", 0.9), ("c", 0.8)])),
            (2.0, list(&[("c", 3.0)])),
        ];
        let f = fuse_lists(&lists, Combination::Rrf { k: 60.0 });
        let score = |k: &str| f.iter().find(|x| x.key == k).unwrap().score;
        assert!((score("a") - 1.0 / 61.0).abs() < 1e-7);
        assert!((score("b") - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-7);
        assert!((score("c") - (1.0 / 62.0 + 2.0 / 61.0)).abs() < 1e-7);
        assert_eq!(
            f.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(),
            ["c", "b", "a"]
        );
        assert_eq!(
            f[0].parts,
            vec![(1, 2, 0.8, 1.0 / 62.0), (2, 1, 3.0, 2.0 / 61.0)]
        );
    }

    #[test]
    fn normalised_scores_use_each_lists_range_and_equal_scores_give_one() {
        let lists = vec![
            (0.5, list(&[("a", 10.0), ("b", 6.0), ("c", 2.0)])),
            (0.5, list(&[("c", 0.7)])),
        ];
        let f = fuse_lists(&lists, Combination::NormalizedScores);
        let score = |k: &str| f.iter().find(|x| x.key == k).unwrap().score;
        assert!((score("a") - 0.5).abs() < 1e-6);
        assert!((score("b") - 0.25).abs() < 1e-6);
        assert!((score("c") - 0.5).abs() < 1e-6);
        // a and c tie at 0.5: the key breaks the tie
        assert_eq!(f[0].key, "a");
        assert_eq!(f[1].key, "c");
    }

    proptest! {
        #[test]
        fn no_duplicates_sorted_finite(
            lists in proptest::collection::vec(
                (0.0f32..3.0, proptest::collection::vec((0u8..20, -5.0f32..5.0), 0..15)),
                0..5,
            ),
            rrf in any::<bool>(),
        ) {
            let lists: Vec<(f32, Vec<(String, f32)>)> = lists
                .into_iter()
                .map(|(w, l)| (w, l.into_iter().map(|(k, s)| (format!("d{k}"), s)).collect()))
                .collect();
            let c = if rrf { Combination::Rrf { k: 60.0 } } else { Combination::NormalizedScores };
            let out = fuse_lists(&lists, c);
            let mut keys: Vec<&str> = out.iter().map(|x| x.key.as_str()).collect();
            let n = keys.len();
            keys.sort();
            keys.dedup();
            prop_assert_eq!(keys.len(), n);
            let distinct: std::collections::HashSet<&str> =
                lists.iter().flat_map(|(_, l)| l.iter().map(|(k, _)| k.as_str())).collect();
            prop_assert_eq!(n, distinct.len());
            prop_assert!(out.iter().all(|x| x.score.is_finite()));
            prop_assert!(out.windows(2).all(|w| w[0].score >= w[1].score));
        }
    }
}
