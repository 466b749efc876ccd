//! Fusion of a lexical and a vector ranking into one. Pure and deterministic: ranked
//! candidates in, fused ranking out, ties broken by the candidate key.
//!
//! Two methods:
//! - reciprocal rank fusion (Cormack, Clarke & Büttcher, 2009, "Reciprocal Rank Fusion
//!   outperforms Condorcet and individual Rank Learning Methods"):
//!   `Σ_lists w / (k + rank)`, a list where the candidate is absent contributes 0;
//! - convex combination of normalised scores (Bruch, Gai & Ingber, 2023, "An Analysis of
//!   Fusion Functions for Hybrid Retrieval", ACM TOIS): `α · lex/max_lex + (1 − α) ·
//!   (cos − min_cos)/(max_cos − min_cos)`, min and max over the candidates, lexical
//!   minimum 0 (BM25F's theoretical minimum).
//!
//! Must not import anything but `serde`: it sits above the indexes and below the engine.

use serde::{Deserialize, Serialize};

/// How to fuse.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum Fusion {
    /// Reciprocal rank fusion with constant `k` (default 60) and per-list weights.
    Rrf {
        k: f32,
        lexical_weight: f32,
        vector_weight: f32,
    },
    /// Convex combination with lexical weight `alpha` in [0, 1].
    Convex { alpha: f32 },
}

/// One candidate: its true scores on both sides and its rank in each list it is in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Stable key (chunk ordinal): the tie-break.
    pub key: u64,
    /// Lexical score (0 when no query term matched).
    pub lexical: f32,
    /// 1-based rank in the lexical list, if in it.
    pub lexical_rank: Option<u32>,
    /// Cosine with the query.
    pub cosine: f32,
    /// 1-based rank in the vector list, if in it.
    pub vector_rank: Option<u32>,
    /// False for a chunk that has no vector yet (pending embedding): its lexical side then
    /// stands in for the vector side, so it is ranked as in lexical search, not buried.
    pub has_vector: bool,
}

/// A fused result with the contribution of each side (`score = lexical_part + vector_part`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fused {
    pub key: u64,
    pub score: f32,
    pub lexical_part: f32,
    pub vector_part: f32,
}

/// Fuses `candidates`, best first. Never produces NaN: empty or constant score ranges
/// normalise to 0.
pub fn fuse(candidates: &[Candidate], fusion: &Fusion) -> Vec<Fused> {
    let mut out: Vec<Fused> = match *fusion {
        Fusion::Rrf {
            k,
            lexical_weight,
            vector_weight,
        } => candidates
            .iter()
            .map(|c| {
                let rr = |rank: Option<u32>, w: f32| rank.map_or(0.0, |r| w / (k + r as f32));
                let l = rr(c.lexical_rank, lexical_weight);
                let v = if c.has_vector {
                    rr(c.vector_rank, vector_weight)
                } else {
                    rr(c.lexical_rank, vector_weight)
                };
                fused(c.key, l, v)
            })
            .collect(),
        Fusion::Convex { alpha } => {
            let max_lex = candidates.iter().map(|c| c.lexical).fold(0.0f32, f32::max);
            let (lo, hi) = candidates
                .iter()
                .filter(|c| c.has_vector)
                .map(|c| c.cosine)
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), x| {
                    (a.min(x), b.max(x))
                });
            candidates
                .iter()
                .map(|c| {
                    let l = if max_lex > 0.0 {
                        c.lexical / max_lex
                    } else {
                        0.0
                    };
                    let v = if !c.has_vector {
                        l
                    } else if hi > lo {
                        (c.cosine - lo) / (hi - lo)
                    } else {
                        0.0
                    };
                    fused(c.key, alpha * l, (1.0 - alpha) * v)
                })
                .collect()
        }
    };
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    out
}

fn fused(key: u64, lexical_part: f32, vector_part: f32) -> Fused {
    Fused {
        key,
        score: lexical_part + vector_part,
        lexical_part,
        vector_part,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(key: u64, lexical: f32, lr: Option<u32>, cosine: f32, vr: Option<u32>) -> Candidate {
        Candidate {
            key,
            lexical,
            lexical_rank: lr,
            cosine,
            vector_rank: vr,
            has_vector: true,
        }
    }

    #[test]
    fn a_chunk_without_a_vector_is_ranked_by_its_lexical_side() {
        let mut pending = c(3, 10.0, Some(1), 0.0, None);
        pending.has_vector = false;
        let cands = [
            c(1, 2.0, Some(2), 0.9, Some(1)),
            c(2, 1.0, Some(3), 0.8, Some(2)),
            pending,
        ];
        let f = fuse(&cands, &Fusion::Convex { alpha: 0.4 });
        assert_eq!(f[0].key, 3);
        assert!((f[0].score - 1.0).abs() < 1e-6);
    }

    const RRF: Fusion = Fusion::Rrf {
        k: 60.0,
        lexical_weight: 1.0,
        vector_weight: 1.0,
    };

    #[test]
    fn rrf_hand_computed_and_one_sided_candidates_get_only_their_side() {
        let cands = [
            c(1, 5.0, Some(1), 0.2, None),
            c(2, 0.0, None, 0.9, Some(1)),
            c(3, 3.0, Some(2), 0.8, Some(2)),
        ];
        let f = fuse(&cands, &RRF);
        assert_eq!(f[0].key, 3);
        assert!((f[0].score - (1.0 / 62.0 + 1.0 / 62.0)).abs() < 1e-7);
        // keys 1 and 2 tie at 1/61: key order breaks the tie
        assert_eq!((f[1].key, f[2].key), (1, 2));
        assert_eq!(f[1].vector_part, 0.0);
    }

    #[test]
    fn convex_normalises_each_side() {
        let cands = [
            c(1, 10.0, Some(1), 0.5, Some(2)),
            c(2, 0.0, None, 0.7, Some(1)),
            c(3, 5.0, Some(2), 0.3, None),
        ];
        let f = fuse(&cands, &Fusion::Convex { alpha: 0.5 });
        let by_key = |k| f.iter().find(|x| x.key == k).unwrap().score;
        assert!((by_key(1) - (0.5 * 1.0 + 0.5 * 0.5)).abs() < 1e-6);
        assert!((by_key(2) - 0.5).abs() < 1e-6);
        assert!((by_key(3) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn one_side_empty_gives_the_other_sides_order() {
        let cands = [c(1, 0.0, None, 0.1, Some(2)), c(2, 0.0, None, 0.9, Some(1))];
        let keys: Vec<u64> = fuse(&cands, &Fusion::Convex { alpha: 0.7 })
            .iter()
            .map(|f| f.key)
            .collect();
        assert_eq!(keys, [2, 1]);
        let keys: Vec<u64> = fuse(&cands, &RRF).iter().map(|f| f.key).collect();
        assert_eq!(keys, [2, 1]);
    }

    proptest! {
        #[test]
        fn no_duplicates_no_nan(scores in proptest::collection::vec((0.0f32..20.0, -1.0f32..1.0), 0..40), alpha in 0.0f32..1.0) {
            let cands: Vec<Candidate> = scores.iter().enumerate()
                .map(|(i, (l, v))| c(i as u64, *l, (*l > 1.0).then_some(i as u32 + 1), *v, Some(i as u32 + 1)))
                .collect();
            for f in [RRF, Fusion::Convex { alpha }] {
                let out = fuse(&cands, &f);
                prop_assert_eq!(out.len(), cands.len());
                let mut keys: Vec<u64> = out.iter().map(|x| x.key).collect();
                keys.sort();
                keys.dedup();
                prop_assert_eq!(keys.len(), cands.len());
                prop_assert!(out.iter().all(|x| x.score.is_finite()));
                prop_assert!(out.windows(2).all(|w| w[0].score >= w[1].score));
            }
        }
    }
}
