//! Fusion of a lexical and a vector ranking into one. Pure and deterministic: ranked
//! candidates in, fused ranking out, ties broken by the candidate key.
//!
//! Three methods:
//! - calibrated convex combination (the default): `α · lex / lex_scale + (1 − α) ·
//!   max(0, cos − floor) / (1 − floor)`, where `floor` is the query's noise level over
//!   the collection (mean + `noise` standard deviations of its cosines, Bruch et al.'s
//!   theoretical-min-max normalisation with a measured minimum) and `lex_scale` the
//!   largest lexical score; a cosine at the noise level adds nothing, so noise is never
//!   stretched into a full share;
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
    /// Calibrated convex combination with lexical weight `alpha` in [0, 1]; the vector
    /// side counts from `noise` standard deviations above the query's mean cosine.
    Calibrated {
        alpha: f32,
        noise: f32,
        /// Normalise the lexical side by its theoretical maximum for the query (else by
        /// the best candidate's score).
        #[serde(default)]
        tmm: bool,
    },
    /// Reciprocal rank fusion with constant `k` (default 60) and per-list weights.
    Rrf {
        k: f32,
        lexical_weight: f32,
        vector_weight: f32,
    },
    /// Convex combination with lexical weight `alpha` in [0, 1], each side min-max
    /// normalised over the candidates.
    Convex { alpha: f32 },
}

/// What calibrated fusion needs to know about one query.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Calibration {
    /// Mean and standard deviation of the query's cosines over the collection.
    pub cosine_mean: f32,
    pub cosine_std: f32,
    /// Vectors those statistics were taken over.
    pub vectors: usize,
    /// The highest lexical score the query could reach (every term saturated in a
    /// title, heading or path field).
    pub lexical_bound: f32,
}

/// Under this many vectors the cosine statistics are not trusted: [`NOISE_PRIOR`]
/// stands for the noise level.
pub const MIN_VECTORS_FOR_STATS: usize = 50;

/// The cosine at or below which a vector says nothing, when the collection is too small
/// to measure it (unrelated texts score about 0–0.15 with MiniLM-class sentence models).
pub const NOISE_PRIOR: f32 = 0.15;

impl Calibration {
    /// The noise level of the query's cosines: `mean + noise · std`, or [`NOISE_PRIOR`]
    /// for a small collection.
    pub fn floor(&self, noise: f32) -> f32 {
        if self.vectors < MIN_VECTORS_FOR_STATS {
            NOISE_PRIOR
        } else {
            (self.cosine_mean + noise * self.cosine_std).clamp(-1.0, 0.99)
        }
    }

    /// How many standard deviations `cosine` stands above the query's mean cosine; 0
    /// for a collection under [`MIN_VECTORS_FOR_STATS`] vectors or without spread.
    pub fn z(&self, cosine: f32) -> f32 {
        if self.vectors < MIN_VECTORS_FOR_STATS || self.cosine_std <= f32::EPSILON {
            0.0
        } else {
            (cosine - self.cosine_mean) / self.cosine_std
        }
    }
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
    /// False for a chunk that has no vector yet (pending embedding): the vector side
    /// adds nothing for it.
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
/// normalise to 0. A side a candidate is absent from (no lexical match, no vector)
/// contributes nothing to it.
pub fn fuse(candidates: &[Candidate], fusion: &Fusion, calibration: &Calibration) -> Vec<Fused> {
    let max_lex = candidates.iter().map(|c| c.lexical).fold(0.0f32, f32::max);
    let lex = |c: &Candidate| {
        if max_lex > 0.0 {
            c.lexical / max_lex
        } else {
            0.0
        }
    };
    let mut out: Vec<Fused> = match *fusion {
        Fusion::Calibrated { alpha, noise, tmm } => {
            let floor = calibration.floor(noise);
            let bound = calibration.lexical_bound;
            candidates
                .iter()
                .map(|c| {
                    let v = if c.has_vector {
                        ((c.cosine - floor) / (1.0 - floor)).max(0.0)
                    } else {
                        0.0
                    };
                    let l = if tmm && bound > 0.0 {
                        (c.lexical / bound).min(1.0)
                    } else {
                        lex(c)
                    };
                    fused(c.key, alpha * l, (1.0 - alpha) * v)
                })
                .collect()
        }
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
                    0.0
                };
                fused(c.key, l, v)
            })
            .collect(),
        Fusion::Convex { alpha } => {
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
                    let l = lex(c);
                    let v = if !c.has_vector {
                        0.0
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
    fn a_side_a_candidate_is_absent_from_adds_nothing() {
        let mut pending = c(3, 10.0, Some(1), 0.0, None);
        pending.has_vector = false;
        let cands = [
            c(1, 2.0, Some(2), 0.9, Some(1)),
            c(2, 1.0, Some(3), 0.8, Some(2)),
            pending,
        ];
        for f in [Fusion::Convex { alpha: 0.4 }, CAL, RRF] {
            let out = fuse(&cands, &f, &stats());
            let p = out.iter().find(|x| x.key == 3).unwrap();
            assert_eq!(p.vector_part, 0.0, "{f:?}");
            assert!(p.lexical_part > 0.0);
        }
    }

    const CAL: Fusion = Fusion::Calibrated {
        alpha: 0.4,
        noise: 2.0,
        tmm: false,
    };

    /// A collection whose cosines for the query sit around 0.1 ± 0.05.
    fn stats() -> Calibration {
        Calibration {
            cosine_mean: 0.1,
            cosine_std: 0.05,
            vectors: 1000,
            lexical_bound: 10.0,
        }
    }

    #[test]
    fn calibrated_noise_adds_nothing_and_an_exact_rare_match_wins() {
        // near-noise cosines (floor 0.2) add nothing, however the candidates spread
        let noise = [
            c(1, 0.0, None, 0.083, Some(1)),
            c(2, 0.0, None, 0.05, Some(2)),
            c(3, 0.0, None, 0.04, Some(3)),
        ];
        assert!(fuse(&noise, &CAL, &stats()).iter().all(|f| f.score == 0.0));
        // min-max gives the best noise the whole vector share
        assert!(fuse(&noise, &Fusion::Convex { alpha: 0.4 }, &stats())[0].score > 0.5);
        // the only chunk with the rare term beats one that matches nothing but is a
        // little closer in cosine
        let cands = [
            c(1, 8.0, Some(1), 0.162, Some(2)),
            c(2, 0.0, None, 0.185, Some(1)),
        ];
        assert_eq!(fuse(&cands, &CAL, &stats())[0].key, 1);
        // a small collection uses the prior noise level
        let small = Calibration {
            vectors: 3,
            ..stats()
        };
        assert_eq!(small.floor(2.0), NOISE_PRIOR);
        assert!((stats().floor(2.0) - 0.2).abs() < 1e-6);
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
        let f = fuse(&cands, &RRF, &stats());
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
        let f = fuse(&cands, &Fusion::Convex { alpha: 0.5 }, &stats());
        let by_key = |k| f.iter().find(|x| x.key == k).unwrap().score;
        assert!((by_key(1) - (0.5 * 1.0 + 0.5 * 0.5)).abs() < 1e-6);
        assert!((by_key(2) - 0.5).abs() < 1e-6);
        assert!((by_key(3) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn one_side_empty_gives_the_other_sides_order() {
        let cands = [c(1, 0.0, None, 0.1, Some(2)), c(2, 0.0, None, 0.9, Some(1))];
        let keys: Vec<u64> = fuse(&cands, &Fusion::Convex { alpha: 0.7 }, &stats())
            .iter()
            .map(|f| f.key)
            .collect();
        assert_eq!(keys, [2, 1]);
        let keys: Vec<u64> = fuse(&cands, &RRF, &stats()).iter().map(|f| f.key).collect();
        assert_eq!(keys, [2, 1]);
    }

    proptest! {
        #[test]
        fn no_duplicates_no_nan(scores in proptest::collection::vec((0.0f32..20.0, -1.0f32..1.0), 0..40), alpha in 0.0f32..1.0) {
            let cands: Vec<Candidate> = scores.iter().enumerate()
                .map(|(i, (l, v))| c(i as u64, *l, (*l > 1.0).then_some(i as u32 + 1), *v, Some(i as u32 + 1)))
                .collect();
            for f in [RRF, Fusion::Convex { alpha }, Fusion::Calibrated { alpha, noise: 2.0, tmm: true }] {
                let out = fuse(&cands, &f, &stats());
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
