//! Ranking metrics over the gains of a ranked list (see [`super::judge::gains`]).
//!
//! Definitions follow trec_eval: nDCG@k with linear graded gains and a log2(rank + 1)
//! discount (Järvelin & Kekäläinen, 2002, "Cumulated gain-based evaluation of IR
//! techniques"), the ideal ranking built from all judged grades; recall@k over the judged
//! relevant items; reciprocal rank of the first relevant item within k.

use serde::Serialize;

/// nDCG@k of `gains` (in rank order) against the judged grades `ideal` (any order).
/// 0 when nothing is judged relevant.
pub fn ndcg_at(gains: &[u32], ideal: &[u32], k: usize) -> f64 {
    let dcg = |g: &mut dyn Iterator<Item = u32>| -> f64 {
        g.take(k)
            .enumerate()
            .map(|(i, g)| g as f64 / ((i + 2) as f64).log2())
            .sum()
    };
    let mut sorted: Vec<u32> = ideal.iter().copied().filter(|g| *g > 0).collect();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let idcg = dcg(&mut sorted.into_iter());
    if idcg == 0.0 {
        return 0.0;
    }
    dcg(&mut gains.iter().copied()) / idcg
}

/// Share of the `relevant` judged items found in the first `k` gains.
pub fn recall_at(gains: &[u32], relevant: usize, k: usize) -> f64 {
    if relevant == 0 {
        return 0.0;
    }
    gains.iter().take(k).filter(|g| **g > 0).count() as f64 / relevant as f64
}

/// 1 / rank of the first relevant item within the first `k`, else 0.
pub fn mrr_at(gains: &[u32], k: usize) -> f64 {
    gains
        .iter()
        .take(k)
        .position(|g| *g > 0)
        .map_or(0.0, |p| 1.0 / (p + 1) as f64)
}

/// Metrics of one query, or their means over a question set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub ndcg10: f64,
    pub recall1: f64,
    pub recall5: f64,
    pub recall10: f64,
    pub recall100: f64,
    pub mrr10: f64,
    /// 1 when no relevant item is in the top 10 (its mean: the share of such queries).
    pub no_hit10: f64,
}

impl Metrics {
    /// All metrics of one ranked list.
    pub fn of(gains: &[u32], ideal: &[u32]) -> Metrics {
        let relevant = ideal.iter().filter(|g| **g > 0).count();
        let mrr10 = mrr_at(gains, 10);
        Metrics {
            ndcg10: ndcg_at(gains, ideal, 10),
            recall1: recall_at(gains, relevant, 1),
            recall5: recall_at(gains, relevant, 5),
            recall10: recall_at(gains, relevant, 10),
            recall100: recall_at(gains, relevant, 100),
            mrr10,
            no_hit10: if mrr10 == 0.0 { 1.0 } else { 0.0 },
        }
    }

    /// The mean of each metric (all zero for an empty list).
    pub fn mean(all: &[Metrics]) -> Metrics {
        let n = all.len().max(1) as f64;
        let sum = |f: fn(&Metrics) -> f64| all.iter().map(f).sum::<f64>() / n;
        Metrics {
            ndcg10: sum(|m| m.ndcg10),
            recall1: sum(|m| m.recall1),
            recall5: sum(|m| m.recall5),
            recall10: sum(|m| m.recall10),
            recall100: sum(|m| m.recall100),
            mrr10: sum(|m| m.mrr10),
            no_hit10: sum(|m| m.no_hit10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn ndcg_hand_computed() {
        // gains 0,2,0,1 ; ideal 2,1
        // DCG = 2/log2(3) + 1/log2(5) = 1.2618595 + 0.4306766 = 1.6925361
        // IDCG = 2/log2(2) + 1/log2(3) = 2 + 0.630930 = 2.630930
        let n = ndcg_at(&[0, 2, 0, 1], &[2, 1], 10);
        assert!((n - 1.6925361 / 2.6309298).abs() < 1e-6, "{n}");
        assert!(close(ndcg_at(&[2, 1], &[1, 2], 10), 1.0));
        assert!(close(ndcg_at(&[0, 0], &[1], 10), 0.0));
        // a relevant item beyond the cut does not count
        assert!(close(ndcg_at(&[0, 1], &[1], 1), 0.0));
    }

    #[test]
    fn recall_and_mrr_hand_computed() {
        let g = [0, 0, 1, 0, 1, 0];
        assert!(close(recall_at(&g, 3, 5), 2.0 / 3.0));
        assert!(close(recall_at(&g, 3, 2), 0.0));
        assert!(close(mrr_at(&g, 10), 1.0 / 3.0));
        assert!(close(mrr_at(&g, 2), 0.0));
        let m = Metrics::of(&g, &[1, 1, 1]);
        assert_eq!(m.no_hit10, 0.0);
        assert_eq!(Metrics::of(&[0], &[1]).no_hit10, 1.0);
    }

    #[test]
    fn mean_averages_each_metric() {
        let a = Metrics::of(&[1], &[1]);
        let b = Metrics::of(&[0], &[1]);
        let m = Metrics::mean(&[a, b]);
        assert!(close(m.mrr10, 0.5) && close(m.recall1, 0.5) && close(m.no_hit10, 0.5));
    }
}
