//! Approximate nearest neighbours with `hnsw_rs` (Malkov & Yashunin, 2018, "Efficient and
//! robust approximate nearest neighbor search using Hierarchical Navigable Small World
//! graphs"), for collections above [`HNSW_MIN_VECTORS`]. Built with each generation and
//! dumped beside the vectors; reloaded on open after its files' sha256 are checked.

use super::exact::dot;
use super::store::VectorSet;
use crate::error::{Error, Result};
use anndists::dist::Distance;
use hnsw_rs::prelude::{AnnT, Hnsw, HnswIo};
use std::path::Path;

/// Collections with at least this many vectors get an HNSW graph; smaller ones are
/// searched exactly. Measured (`cargo bench --bench vector`, 384-d): exact top-10 takes
/// 0.47 ms at 10k and 7.9 ms at 100k vectors, HNSW 2.2 ms and 2.1 ms (recall@10 1.0):
/// the lines cross between 30k and 50k.
pub const HNSW_MIN_VECTORS: usize = 50_000;
/// File basename of the dumped graph (`hnsw.hnsw.graph`, `hnsw.hnsw.data`).
pub const HNSW_BASENAME: &str = "hnsw";
/// Neighbours per node (M).
const MAX_NB_CONNECTION: usize = 16;
const MAX_LAYER: usize = 16;
const EF_CONSTRUCTION: usize = 200;
/// Default `ef_search`: candidate list size at query time (≥ k).
pub const EF_SEARCH: usize = 128;

/// Cosine distance `1 − a·b` for L2-normalised vectors, clamped at 0: anndists' `DistDot`
/// asserts `1 − dot ≥ 0` and panics when rounding puts a dot product above 1 (a query
/// equal to an indexed vector).
#[derive(Debug, Default, Clone, Copy)]
pub struct CosineDistance;

impl Distance<f32> for CosineDistance {
    fn eval(&self, va: &[f32], vb: &[f32]) -> f32 {
        (1.0 - dot(va, vb)).max(0.0)
    }
}

/// A loaded HNSW graph over a vector set's rows.
pub struct HnswIndex {
    hnsw: Hnsw<'static, f32, CosineDistance>,
}

/// The two files `file_dump` writes.
pub fn hnsw_files(dir: &Path) -> [std::path::PathBuf; 2] {
    [
        dir.join(format!("{HNSW_BASENAME}.hnsw.graph")),
        dir.join(format!("{HNSW_BASENAME}.hnsw.data")),
    ]
}

impl HnswIndex {
    /// Builds a graph over every row that has a vector (tail rows included).
    pub fn build(set: &VectorSet) -> HnswIndex {
        let n = set.rows().max(1);
        let hnsw = Hnsw::new(
            MAX_NB_CONNECTION,
            n,
            MAX_LAYER,
            EF_CONSTRUCTION,
            CosineDistance,
        );
        let rows: Vec<(&[f32], usize)> = (0..set.rows())
            .filter(|&i| !set.meta.hashes[i].is_empty())
            .map(|i| (set.row(i), i))
            .collect();
        hnsw.parallel_insert_slice(&rows);
        HnswIndex { hnsw }
    }

    /// Writes the graph into `dir`.
    ///
    /// # Errors
    /// [`Error::Io`] when hnsw_rs cannot write its files.
    pub fn dump(&self, dir: &Path) -> Result<()> {
        let written = self.hnsw.file_dump(dir, HNSW_BASENAME).map_err(|e| {
            Error::io(
                "write HNSW graph into",
                dir,
                std::io::Error::other(e.to_string()),
            )
        })?;
        if written != HNSW_BASENAME {
            return Err(Error::io(
                "write HNSW graph into",
                dir,
                std::io::Error::other(format!("hnsw_rs chose basename `{written}`")),
            ));
        }
        Ok(())
    }

    /// Reloads the graph from `dir` (its files must have been verified by the caller).
    /// hnsw_rs checks the distance name recorded in the dump against [`CosineDistance`].
    ///
    /// # Errors
    /// [`Error::Corrupt`] when hnsw_rs refuses or panics on the files.
    pub fn load(dir: &Path) -> Result<HnswIndex> {
        let owned = dir.to_path_buf();
        let loaded = std::panic::catch_unwind(move || {
            // The graph borrows its loader: keep the (small) loader for the process lifetime.
            let io: &'static HnswIo = Box::leak(Box::new(HnswIo::new(&owned, HNSW_BASENAME)));
            io.load_hnsw_with_dist::<f32, CosineDistance>(CosineDistance)
                .map_err(|e| e.to_string())
        });
        match loaded {
            Ok(Ok(hnsw)) => Ok(HnswIndex { hnsw }),
            Ok(Err(e)) => Err(Error::corrupt(dir, format!("HNSW graph: {e}"))),
            Err(_) => Err(Error::corrupt(dir, "HNSW graph files are damaged")),
        }
    }

    /// The `k` rows nearest to `query` as `(row, cosine)`, best first (ties by row),
    /// searching with `ef_search` candidates.
    pub fn search(&self, query: &[f32], k: usize, ef_search: usize) -> Vec<(u32, f32)> {
        let mut out: Vec<(u32, f32)> = self
            .hnsw
            .search(query, k, ef_search.max(k))
            .into_iter()
            .map(|n| (n.d_id as u32, 1.0 - n.distance))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::VectorMeta;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
        v.iter_mut().for_each(|a| *a /= n);
        v
    }

    fn set(n: usize, dim: usize) -> VectorSet {
        VectorSet {
            meta: VectorMeta {
                identity: serde_json::Value::Null,
                identity_key: "k".into(),
                dim,
                hashes: (0..n).map(|i| format!("h{i}")).collect(),
                tails: Vec::new(),
                window_rule: crate::vector::WINDOW_RULE,
                matrix_sha256: String::new(),
                hnsw_sha256: None,
            },
            data: (0..n).flat_map(|i| unit(i as u64 + 1, dim)).collect(),
        }
    }

    #[test]
    fn a_query_equal_to_an_indexed_vector_finds_it_first_without_panicking() {
        let s = set(500, 32);
        let h = HnswIndex::build(&s);
        for row in [0usize, 17, 499] {
            let got = h.search(s.row(row), 5, 64);
            assert_eq!(got[0].0 as usize, row);
            assert!(got[0].1 > 0.999);
        }
    }

    #[test]
    fn dump_and_reload_give_the_same_answers_and_garbage_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let s = set(300, 16);
        let h = HnswIndex::build(&s);
        h.dump(d.path()).unwrap();
        let r = HnswIndex::load(d.path()).unwrap();
        let q = unit(12345, 16);
        assert_eq!(h.search(&q, 10, 64), r.search(&q, 10, 64));
        for f in hnsw_files(d.path()) {
            std::fs::write(f, b"garbage").unwrap();
        }
        assert!(HnswIndex::load(d.path()).is_err());
    }

    #[test]
    fn a_chunks_tail_rows_answer_for_it_once_exact_or_through_the_graph() {
        let dim = 16;
        let mut s = set(300, dim);
        for j in 0..3u64 {
            s.meta.hashes.push(format!("t{j}"));
            s.meta.tails.push(5);
            s.data.extend(unit(9001 + j, dim));
        }
        let q = unit(9002, dim);
        let exact = tempfile::tempdir().unwrap();
        s.clone().write(exact.path()).unwrap();
        let graph = tempfile::tempdir().unwrap();
        HnswIndex::build(&s).dump(graph.path()).unwrap();
        let shas = hnsw_files(graph.path())
            .iter()
            .map(|f| crate::hashing::sha256_hex(&std::fs::read(f).unwrap()))
            .collect();
        s.meta.hnsw_sha256 = Some(shas);
        s.write(graph.path()).unwrap();
        for dir in [exact.path(), graph.path()] {
            let v = crate::vector::VectorSearch::open(dir).unwrap();
            let top = v.top(&q, 10, 64);
            assert_eq!(top[0].0, 5, "{top:?}");
            assert!(top[0].1 > 0.999 && (v.cosine(5, &q) - top[0].1).abs() < 1e-6);
            let mut ords: Vec<u32> = top.iter().map(|t| t.0).collect();
            ords.sort_unstable();
            ords.dedup();
            assert_eq!(ords.len(), 10, "one place per chunk: {top:?}");
        }
    }
}
