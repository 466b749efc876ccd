//! BM25F formulas, pure (Robertson & Zaragoza, 2009, "The Probabilistic Relevance
//! Framework: BM25 and Beyond", Foundations and Trends in IR 3(4), §3.5):
//!
//! ```text
//! tf~(q, d) = Σ_f  w_f · tf(q, f, d) / B_f(d)          B_f(d) = 1 − b + b · len_f(d) / avglen_f
//! score(d)  = Σ_q  IDF(q) · tf~ / (k1 + tf~)
//! IDF(q)    = ln(1 + (N − df(q) + 0.5) / (df(q) + 0.5))   (the non-negative Lucene form)
//! ```
//! df(q) counts chunks where q occurs in any field; N is the number of chunks.

use crate::config::{Bm25fParams, PerField};

/// Inverse document frequency of a term present in `df` of `n` chunks; always ≥ 0.
pub fn idf(n: u64, df: u64) -> f32 {
    let n = n.max(df) as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln() as f32
}

/// Per-field length normalisation `B = 1 − b + b · len / avg` (1 when `avg` is 0).
pub fn length_norm(b: f32, len: f32, avg: f32) -> f32 {
    if avg <= 0.0 {
        return 1.0;
    }
    1.0 - b + b * len / avg
}

/// `tf~ / (k1 + tf~)`: the one saturation of BM25F, in [0, 1).
pub fn saturate(pseudo_tf: f32, k1: f32) -> f32 {
    if pseudo_tf <= 0.0 {
        return 0.0;
    }
    pseudo_tf / (k1 + pseudo_tf)
}

/// Weighted, length-normalised term frequency of one field: `w_f · tf / B_f`.
pub fn field_tf(params: &Bm25fParams, field: usize, tf: f32, len: f32, avg: f32) -> f32 {
    params.weights[field] * tf / length_norm(params.b, len, avg)
}

/// `tf~` summed over all fields.
pub fn pseudo_tf(
    params: &Bm25fParams,
    tf: &PerField<f32>,
    lens: &PerField<f32>,
    avg: &PerField<f32>,
) -> f32 {
    (0..crate::config::FIELDS)
        .filter(|&f| tf[f] > 0.0)
        .map(|f| field_tf(params, f, tf[f], lens[f], avg[f]))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn idf_matches_hand_computation() {
        // ln(1 + (100 - 10 + 0.5) / (10 + 0.5)) = ln(9.6190...) = 2.26374
        assert!((idf(100, 10) - 2.26374).abs() < 1e-4);
        assert!(idf(10, 10) > 0.0);
    }

    #[test]
    fn one_saturation_over_fields_not_a_sum_of_per_field_bm25() {
        let p = Bm25fParams::default();
        let avg = [1.0; crate::config::FIELDS];
        let mut tf = [0.0; crate::config::FIELDS];
        tf[0] = 1.0; // title
        tf[6] = 1.0; // body
        let lens = [1.0; crate::config::FIELDS];
        let bm25f = saturate(pseudo_tf(&p, &tf, &lens, &avg), p.k1);
        // tf~ = 4 + 1 = 5 -> 5 / 6.2
        assert!((bm25f - 5.0 / 6.2).abs() < 1e-6);
        let per_field_sum = saturate(4.0, p.k1) + saturate(1.0, p.k1);
        assert!(bm25f < per_field_sum);
    }

    #[test]
    fn longer_field_scores_lower() {
        let p = Bm25fParams::default();
        let a = field_tf(&p, 6, 1.0, 10.0, 20.0);
        let b = field_tf(&p, 6, 1.0, 40.0, 20.0);
        assert!(a > b);
    }

    proptest! {
        #[test]
        fn score_never_drops_when_a_term_occurs_more_often(
            tf in 0.0f32..50.0, extra in 0.0f32..50.0, len in 1.0f32..500.0,
            avg in 1.0f32..500.0, field in 0usize..crate::config::FIELDS,
        ) {
            let p = Bm25fParams::default();
            let mut a = [0.0; crate::config::FIELDS];
            a[field] = tf;
            let mut b = a;
            b[field] = tf + extra;
            let lens = [len; crate::config::FIELDS];
            let avgs = [avg; crate::config::FIELDS];
            let sa = saturate(pseudo_tf(&p, &a, &lens, &avgs), p.k1);
            let sb = saturate(pseudo_tf(&p, &b, &lens, &avgs), p.k1);
            prop_assert!(sb >= sa);
        }
    }
}
