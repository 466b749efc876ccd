//! Vector search: exact (SIMD dot product over the matrix) against HNSW (hnsw_rs,
//! M 16, ef_construction 200, ef_search 128) at 10k and 100k vectors of 384 dimensions,
//! side by side, with HNSW's recall@10 against exact search printed for each size.
//!
//! The vectors are synthetic but shaped like sentence embeddings: 1,000 random unit
//! centres, each point a centre plus noise, L2-normalised (fixed seed, reproducible).
//! `cargo bench --bench vector` runs 10k and 100k; in test mode (`cargo test`) 2k only.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use docfuse::vector::{top_k, HnswIndex, VectorMeta, VectorSet, EF_SEARCH};
use std::hint::black_box;
use std::time::{Duration, Instant};

const DIM: usize = 384;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 20_001) as f32 / 10_000.0 - 1.0
    }
    fn unit(&mut self, around: Option<&[f32]>, noise: f32) -> Vec<f32> {
        let mut v: Vec<f32> = (0..DIM)
            .map(|i| around.map_or(0.0, |c| c[i]) + noise * self.next())
            .collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= n);
        v
    }
}

fn vectors(n: usize, rng: &mut Rng) -> VectorSet {
    let centres: Vec<Vec<f32>> = (0..1000).map(|_| rng.unit(None, 1.0)).collect();
    let data: Vec<f32> = (0..n)
        .flat_map(|i| rng.unit(Some(&centres[i % 1000]), 0.08))
        .collect();
    VectorSet {
        meta: VectorMeta {
            identity: serde_json::Value::Null,
            identity_key: "synthetic".into(),
            dim: DIM,
            hashes: (0..n).map(|i| i.to_string()).collect(),
            tails: Vec::new(),
            window_rule: docfuse::vector::WINDOW_RULE,
            matrix_sha256: String::new(),
            hnsw_sha256: None,
        },
        data,
    }
}

fn bench(c: &mut Criterion) {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if full { &[10_000, 100_000] } else { &[2_000] };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut g = c.benchmark_group("vector_top10");
    g.sample_size(30).measurement_time(Duration::from_secs(3));
    for &n in sizes {
        let set = vectors(n, &mut rng);
        let queries: Vec<Vec<f32>> = (0..100)
            .map(|i| rng.unit(Some(set.row(i * 37 % n)), 0.05))
            .collect();
        let t = Instant::now();
        let hnsw = HnswIndex::build(&set);
        let build_s = t.elapsed().as_secs_f64();
        let mut hit = 0;
        for q in &queries {
            let exact: Vec<u32> = top_k(&set.cosines(q), 10).iter().map(|r| r.0).collect();
            let approx = hnsw.search(q, 10, EF_SEARCH);
            hit += approx.iter().filter(|r| exact.contains(&r.0)).count();
        }
        eprintln!(
            "n = {n}: HNSW recall@10 vs exact = {:.4} (100 queries, ef_search {EF_SEARCH}); HNSW build {build_s:.1} s",
            hit as f64 / 1000.0
        );
        let mut i = 0;
        g.bench_with_input(BenchmarkId::new("exact", n), &n, |b, _| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                black_box(top_k(&set.cosines(&queries[i]), 10))
            })
        });
        g.bench_with_input(BenchmarkId::new("hnsw", n), &n, |b, _| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                black_box(hnsw.search(&queries[i], 10, EF_SEARCH))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
