//! PageRank by power iteration (Page, Brin, Motwani & Winograd, 1999), with the
//! conventions of networkx's `pagerank`: damping 0.85, start vector uniform, dangling
//! nodes' mass spread uniformly, stop when the L1 change is below `n × tol`.

/// Damping factor (the probability of following a link).
pub const DAMPING: f64 = 0.85;
/// Per-node tolerance of the stopping rule (networkx's default).
pub const TOLERANCE: f64 = 1e-6;
/// Iteration cap; reaching it keeps the last iterate.
pub const MAX_ITER: usize = 100;

/// PageRank of `n` nodes over directed `edges` (`from → to`, node indices below `n`;
/// duplicates count once, self-loops are kept as networkx does). Returns `[n]` f64
/// summing to 1; empty for `n = 0`. Deterministic: nodes and edges are visited in
/// index order.
pub fn pagerank(n: usize, edges: &[(u32, u32)]) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let mut unique: Vec<(u32, u32)> = edges
        .iter()
        .copied()
        .filter(|&(a, b)| (a as usize) < n && (b as usize) < n)
        .collect();
    unique.sort_unstable();
    unique.dedup();
    let mut out_degree = vec![0u32; n];
    for &(a, _) in &unique {
        out_degree[a as usize] += 1;
    }
    let uniform = 1.0 / n as f64;
    let mut x = vec![uniform; n];
    for _ in 0..MAX_ITER {
        let dangling: f64 = (0..n).filter(|&i| out_degree[i] == 0).map(|i| x[i]).sum();
        let base = (DAMPING * dangling + (1.0 - DAMPING)) * uniform;
        let mut next = vec![base; n];
        for &(a, b) in &unique {
            next[b as usize] += DAMPING * x[a as usize] / f64::from(out_degree[a as usize]);
        }
        let err: f64 = next.iter().zip(&x).map(|(p, q)| (p - q).abs()).sum();
        x = next;
        if err < n as f64 * TOLERANCE {
            break;
        }
    }
    x
}

/// Canonicality in `[0, 1]` per node: `ln(pr / floor) / ln(max / floor)`, where `floor`
/// is the smallest positive PageRank (the corpus floor): a page nothing links to earns
/// 0, the most linked-to page 1. All zeros when every page ranks the same.
pub fn canonicality(pr: &[f64]) -> Vec<f32> {
    let floor = pr
        .iter()
        .copied()
        .filter(|&p| p > 0.0)
        .fold(f64::INFINITY, f64::min);
    let max = pr.iter().copied().fold(0.0f64, f64::max);
    if !floor.is_finite() || max <= floor * (1.0 + 1e-9) {
        return vec![0.0; pr.len()];
    }
    let span = (max / floor).ln();
    pr.iter()
        .map(|&p| {
            if p <= floor {
                0.0
            } else {
                ((p / floor).ln() / span) as f32
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from networkx 3.x `nx.pagerank(G)` (damping 0.85, tol 1e-6) on the graph
    /// below: `python3 scripts/baselines/pagerank_networkx.py` prints them.
    #[test]
    fn matches_networkx_on_a_small_graph() {
        // 0 → 1, 0 → 2, 1 → 2, 2 → 0, 3 → 2, 4 (dangling), 5 → 4, duplicate 0 → 1.
        let edges = [(0, 1), (0, 2), (1, 2), (2, 0), (3, 2), (5, 4), (0, 1)];
        let pr = pagerank(6, &edges);
        let want = NETWORKX;
        for (i, (got, want)) in pr.iter().zip(want).enumerate() {
            assert!((got - want).abs() < 1e-6, "node {i}: {got} vs {want}");
        }
        assert!((pr.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    const NETWORKX: [f64; 6] = [
        0.336556789392,
        0.176916807466,
        0.356091620087,
        0.033879164403,
        0.062676454248,
        0.033879164403,
    ];

    #[test]
    fn canonicality_is_log_scaled_above_the_floor() {
        let c = canonicality(&[0.1, 0.1, 0.4, 0.2]);
        assert_eq!(c[0], 0.0);
        assert!((c[2] - 1.0).abs() < 1e-6);
        assert!((c[3] - 0.5).abs() < 1e-6, "{c:?}");
        assert_eq!(canonicality(&[0.25; 4]), vec![0.0; 4]);
        assert!(pagerank(0, &[]).is_empty());
    }
}
