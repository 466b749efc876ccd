//! pgvector's HNSW against exact search at 100k vectors: recall@10 and latency per
//! `hnsw.ef_search`, and the exact (sequential scan) latency as the baseline, in one run.
//!
//! The collection: the real MiniLM vectors of a folder index (`--index`, e.g. the Rust
//! book's 1,600 chunks) plus synthetic clustered unit vectors (1,000 centres + noise, fixed
//! seed) up to `--n`. Queries: the dev questions embedded with the local model (real
//! query vectors), else real chunk vectors. Exact top-10 is computed here by dot product.
//!
//! ```sh
//! cargo run --release --example pgvector_recall -- postgres://docfuse@127.0.0.1:PORT/docfuse \
//!   --index /tmp/rb --queries ../shared/bench/corpora/rust-book/queries.dev.jsonl --n 100000
//! ```

use docfuse::pgstore::{block_on, connect, PgLocation};
use std::time::Instant;

const DIM: usize = 384;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: pgvector_recall URL [--index DIR] [--queries FILE] [--n N]")?;
    let n: usize = arg("--n")
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(100_000);
    let mut data = real_vectors(arg("--index").as_deref());
    let real = data.len() / DIM;
    let queries = query_vectors(arg("--queries").as_deref(), &data);
    synthetic(&mut data, n.saturating_sub(real));
    let count = data.len() / DIM;
    eprintln!(
        "{count} vectors ({real} real), {} queries",
        queries.len() / DIM
    );
    let exact: Vec<Vec<i32>> = queries.chunks(DIM).map(|q| top10(&data, q)).collect();
    let loc = PgLocation::parse(&format!("{url}?schema=bench_recall"))?;
    block_on(async {
        let c = connect(&loc).await?;
        let db = |e: tokio_postgres::Error| docfuse::Error::Database(e.to_string());
        c.batch_execute(
            "DROP SCHEMA IF EXISTS bench_recall CASCADE; CREATE SCHEMA bench_recall;
             CREATE TABLE bench_recall.v (id integer PRIMARY KEY, e vector(384) NOT NULL);",
        )
        .await
        .map_err(db)?;
        let t = Instant::now();
        for (b, rows) in data.chunks(DIM * 2000).enumerate() {
            let ids: Vec<i32> = (0..rows.len() / DIM)
                .map(|i| (b * 2000 + i) as i32)
                .collect();
            let texts: Vec<String> = rows.chunks(DIM).map(text).collect();
            c.execute(
                "INSERT INTO bench_recall.v SELECT i, e::vector FROM unnest($1::int[], $2::text[]) AS t(i, e)",
                &[&ids, &texts],
            )
            .await
            .map_err(db)?;
        }
        let load_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        c.batch_execute(
            "SET maintenance_work_mem = '2GB';
             CREATE INDEX ON bench_recall.v USING hnsw (e vector_cosine_ops) WITH (m = 16, ef_construction = 64);",
        )
        .await
        .map_err(db)?;
        let build_s = t.elapsed().as_secs_f64();
        println!("pgvector HNSW (m 16, ef_construction 64) over {count} vectors ({real} real MiniLM chunk vectors, the rest synthetic clustered), {} queries; load {load_s:.1} s, index build {build_s:.1} s\n", exact.len());
        println!("| search | recall@10 vs exact | p50 ms | p95 ms |\n| --- | ---: | ---: | ---: |");
        for ef in [40, 100, 200] {
            c.batch_execute(&format!("SET hnsw.ef_search = {ef}"))
                .await
                .map_err(db)?;
            let (recall, p50, p95) = measure(&c, &queries, &exact).await?;
            println!("| HNSW, ef_search {ef} | {recall:.3} | {p50:.2} | {p95:.2} |");
        }
        c.batch_execute("SET enable_indexscan = off")
            .await
            .map_err(db)?;
        let (recall, p50, p95) = measure(&c, &queries, &exact).await?;
        println!("| exact (sequential scan) | {recall:.3} | {p50:.2} | {p95:.2} |");
        c.batch_execute("DROP SCHEMA bench_recall CASCADE")
            .await
            .map_err(db)?;
        Ok(())
    })?;
    Ok(())
}

async fn measure(
    c: &tokio_postgres::Client,
    queries: &[f32],
    exact: &[Vec<i32>],
) -> docfuse::Result<(f64, f64, f64)> {
    let mut ms = Vec::new();
    let mut hits = 0usize;
    for (q, want) in queries.chunks(DIM).zip(exact) {
        let t = Instant::now();
        let rows = c
            .query(
                "SELECT id FROM bench_recall.v ORDER BY e <=> $1::text::vector LIMIT 10",
                &[&text(q)],
            )
            .await
            .map_err(|e| docfuse::Error::Database(e.to_string()))?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        hits += rows
            .iter()
            .filter(|r| want.contains(&r.get::<_, i32>(0)))
            .count();
    }
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    Ok((hits as f64 / (10 * exact.len()) as f64, at(0.5), at(0.95)))
}

fn text(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// Ids of the 10 largest dot products (unit vectors: cosine), ties by id.
fn top10(data: &[f32], q: &[f32]) -> Vec<i32> {
    let mut s: Vec<(f32, i32)> = data
        .chunks(DIM)
        .enumerate()
        .map(|(i, v)| (v.iter().zip(q).map(|(a, b)| a * b).sum(), i as i32))
        .collect();
    s.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    s.into_iter().take(10).map(|(_, i)| i).collect()
}

fn real_vectors(index: Option<&str>) -> Vec<f32> {
    let Some(dir) = index.map(std::path::Path::new) else {
        return Vec::new();
    };
    let Ok(m) = docfuse::store::Manifest::load(dir) else {
        eprintln!(
            "no folder index at {}: synthetic vectors only",
            dir.display()
        );
        return Vec::new();
    };
    match docfuse::vector::VectorSet::read(&dir.join(&m.generation_dir)) {
        Ok(v) => (0..v.len())
            .filter(|&i| v.has_vector(i))
            .flat_map(|i| v.row(i).to_vec())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The dev questions embedded by the local model; else every 16th real vector.
fn query_vectors(file: Option<&str>, real: &[f32]) -> Vec<f32> {
    let texts: Vec<String> = file
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter_map(|v| v["query"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let (false, Ok(e)) = (texts.is_empty(), docfuse::embed::load_default_embedder()) {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        if let Ok(v) = e.embed(&refs) {
            return v;
        }
    }
    real.chunks(DIM).step_by(16).flatten().copied().collect()
}

/// Appends `n` unit vectors around 1,000 random centres (xorshift, fixed seed).
fn synthetic(out: &mut Vec<f32>, n: usize) {
    let mut s: u64 = 0x9e3779b97f4a7c15;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f32 / (1u64 << 53) as f32 * 2.0 - 1.0
    };
    let centres: Vec<f32> = (0..1000 * DIM).map(|_| next()).collect();
    for i in 0..n {
        let c = &centres[(i % 1000) * DIM..(i % 1000 + 1) * DIM];
        let mut v: Vec<f32> = c.iter().map(|x| x + 0.35 * next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        v.iter_mut().for_each(|x| *x /= norm);
        out.extend(v);
    }
}
