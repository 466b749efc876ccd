//! Exact search: dot products over a contiguous `[n, dim]` f32 matrix.

/// Dot product of two equal-length slices (cosine for L2-normalised vectors). Eight
/// independent accumulators let the compiler vectorise the loop (SIMD).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; 8];
    let chunks = a.len() / 8;
    for i in 0..chunks {
        let (x, y) = (&a[i * 8..i * 8 + 8], &b[i * 8..i * 8 + 8]);
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for i in chunks * 8..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// The `k` highest of `scores` as `(row, score)`, best first; ties by row (stable).
pub fn top_k(scores: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut idx: Vec<(u32, f32)> = scores
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_finite())
        .map(|(i, s)| (i as u32, *s))
        .collect();
    let by = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if idx.len() > k {
        idx.select_nth_unstable_by(k, by);
        idx.truncate(k);
    }
    idx.sort_by(by);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_naive_sum_for_odd_lengths() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn top_k_is_sorted_and_breaks_ties_by_row() {
        let s = [0.1, 0.9, 0.5, 0.9, f32::NAN, 0.3];
        assert_eq!(top_k(&s, 3), [(1, 0.9), (3, 0.9), (2, 0.5)]);
        assert_eq!(top_k(&s, 10).len(), 5);
    }
}
