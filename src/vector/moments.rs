//! The first two moments of a collection of vectors, so a query's cosine statistics
//! over the whole collection come without reading the collection again.
//!
//! For rows `v_1 … v_n` and a query `q`, the cosines are `c_i = q·v_i` (rows and query
//! L2-normalised), so
//!
//! - `mean(c) = q·μ` with `μ = (1/n) Σ v_i`, and
//! - `mean(c²) = qᵀ M q` with `M = (1/n) Σ v_i v_iᵀ` (symmetric: its upper triangle is
//!   kept), so `var(c) = qᵀ M q − (q·μ)²`.
//!
//! A store that searches its vectors elsewhere (PostgreSQL + pgvector returns only the
//! top k) keeps these `[dim]` + `[dim·(dim+1)/2]` f64 numbers beside them, and the
//! calibrated fusion gets the same noise floor as from every cosine.

use super::CosineStats;

/// Format tag of [`Moments::to_bytes`].
const MAGIC: &[u8; 8] = b"dfmom001";

/// `n`, `μ` (`[dim]` f64) and the upper triangle of `M` (`[dim·(dim+1)/2]` f64, row by
/// row: `M[0][0..dim]`, `M[1][1..dim]`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Moments {
    /// Rows summed.
    pub n: u64,
    pub dim: usize,
    mean: Vec<f64>,
    second: Vec<f64>,
}

impl Moments {
    /// The moments of `rows` (each `[dim]` f32; rows of another length are skipped).
    /// Cost: `n · dim · (dim + 1) / 2` multiply-adds (about 0.2 s for 3,000 rows of 384).
    pub fn of<'a>(rows: impl Iterator<Item = &'a [f32]>, dim: usize) -> Moments {
        let mut sum = vec![0f64; dim];
        let mut second = vec![0f64; dim * (dim + 1) / 2];
        let mut row64 = vec![0f64; dim];
        let mut n = 0u64;
        for v in rows.filter(|v| v.len() == dim) {
            n += 1;
            for (d, s) in row64.iter_mut().zip(v) {
                *d = *s as f64;
            }
            let mut at = 0;
            for i in 0..dim {
                sum[i] += row64[i];
                let vi = row64[i];
                let tail = &row64[i..];
                for (m, vj) in second[at..at + tail.len()].iter_mut().zip(tail) {
                    *m += vi * vj;
                }
                at += tail.len();
            }
        }
        let scale = if n > 0 { 1.0 / n as f64 } else { 0.0 };
        sum.iter_mut().for_each(|x| *x *= scale);
        second.iter_mut().for_each(|x| *x *= scale);
        Moments {
            n,
            dim,
            mean: sum,
            second,
        }
    }

    /// Mean and standard deviation of `query`'s cosines with every row (`[dim]` f32,
    /// L2-normalised); the default statistics when there are no rows or the query has
    /// another length.
    pub fn stats(&self, query: &[f32]) -> CosineStats {
        if self.n == 0 || query.len() != self.dim {
            return CosineStats::default();
        }
        let q: Vec<f64> = query.iter().map(|x| *x as f64).collect();
        let mean: f64 = q.iter().zip(&self.mean).map(|(a, b)| a * b).sum();
        let mut sq = 0f64;
        let mut at = 0;
        for i in 0..self.dim {
            let row = &self.second[at..at + self.dim - i];
            // the diagonal once, the terms above it twice (M is symmetric)
            let off: f64 = q[i + 1..].iter().zip(&row[1..]).map(|(a, b)| a * b).sum();
            sq += q[i] * (q[i] * row[0] + 2.0 * off);
            at += self.dim - i;
        }
        let var = (sq - mean * mean).max(0.0);
        CosineStats {
            mean: mean as f32,
            std: var.sqrt() as f32,
            n: self.n as usize,
        }
    }

    /// The moments as bytes: a format tag, `n` (u64), `dim` (u32), then `μ` and `M`'s
    /// upper triangle as little-endian f64.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + 8 * (self.mean.len() + self.second.len()));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.n.to_le_bytes());
        out.extend_from_slice(&(self.dim as u32).to_le_bytes());
        for x in self.mean.iter().chain(&self.second) {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out
    }

    /// Reads [`Moments::to_bytes`]'s output.
    ///
    /// # Errors
    /// A message when the tag, the length or a number is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Moments, String> {
        let bad = |why: &str| format!("vector moments are unreadable: {why}");
        if bytes.len() < 20 || &bytes[..8] != MAGIC {
            return Err(bad("unknown format"));
        }
        let n = u64::from_le_bytes(bytes[8..16].try_into().map_err(|_| bad("length"))?);
        let dim = u32::from_le_bytes(bytes[16..20].try_into().map_err(|_| bad("length"))?) as usize;
        let want = dim + dim * (dim + 1) / 2;
        let body = &bytes[20..];
        if dim == 0 || dim > 65_536 || body.len() != want * 8 {
            return Err(bad(&format!("{} bytes for dimension {dim}", bytes.len())));
        }
        let nums: Vec<f64> = body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        if nums.iter().any(|x| !x.is_finite()) {
            return Err(bad("a number is not finite"));
        }
        let (mean, second) = nums.split_at(dim);
        Ok(Moments {
            n,
            dim,
            mean: mean.to_vec(),
            second: second.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic L2-normalised rows with a shared direction (like sentence vectors:
    /// every cosine positive, a real spread).
    fn rows(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        };
        (0..n)
            .map(|_| {
                let mut v: Vec<f32> = (0..dim)
                    .map(|i| next() + if i < 4 { 0.6 } else { 0.0 })
                    .collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    #[test]
    fn stats_equal_those_of_every_cosine() {
        let data = rows(500, 384, 7);
        let m = Moments::of(data.iter().map(|r| r.as_slice()), 384);
        for q in rows(5, 384, 99) {
            let direct = CosineStats::of(data.iter().map(|r| super::super::dot(r, &q)));
            let got = m.stats(&q);
            assert_eq!(got.n, 500);
            assert!(
                (got.mean - direct.mean).abs() < 1e-5,
                "{got:?} vs {direct:?}"
            );
            assert!((got.std - direct.std).abs() < 1e-5, "{got:?} vs {direct:?}");
            assert!(direct.std > 0.01, "the test rows must spread: {direct:?}");
        }
    }

    #[test]
    fn bytes_round_trip_and_damage_is_refused() {
        let data = rows(20, 16, 3);
        let m = Moments::of(data.iter().map(|r| r.as_slice()), 16);
        let b = m.to_bytes();
        assert_eq!(b.len(), 20 + 8 * (16 + 16 * 17 / 2));
        assert_eq!(Moments::from_bytes(&b).unwrap(), m);
        assert!(Moments::from_bytes(&b[..b.len() - 1]).is_err());
        let mut other = b.clone();
        other[0] = b'x';
        assert!(Moments::from_bytes(&other).is_err());
        let mut nan = b.clone();
        nan[20..28].copy_from_slice(&f64::NAN.to_le_bytes());
        assert!(Moments::from_bytes(&nan).is_err());
    }

    #[test]
    fn no_rows_or_another_length_give_default_stats() {
        let m = Moments::of(std::iter::empty(), 8);
        assert_eq!(m.stats(&[0.5; 8]), CosineStats::default());
        let data = rows(3, 8, 1);
        let m = Moments::of(data.iter().map(|r| r.as_slice()), 8);
        assert_eq!(m.stats(&[0.5; 4]), CosineStats::default());
        assert_eq!(m.stats(&data[0]).n, 3);
    }
}
