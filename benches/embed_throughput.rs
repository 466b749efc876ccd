//! Embedding throughput of docfuse's MiniLM embedder (fastembed + ort, int8, one text per
//! call) on real chunk texts, for `scripts/bench-embed`, which runs the same texts through
//! Python `onnxruntime` with the same model file and tokenizer and reports the ratio.
//!
//! `cargo bench --bench embed_throughput -- TEXTS.jsonl` (one JSON string per line) prints
//! `{"texts": N, "seconds": S, "chunks_per_s": R}`. Without a file (as under `cargo test`)
//! it embeds three sample sentences and exits.

use docfuse::embed::load_default_embedder;
use std::time::Instant;

fn main() {
    let file = std::env::args().skip(1).find(|a| !a.starts_with("--"));
    let texts: Vec<String> = match &file {
        Some(f) => std::fs::read_to_string(f)
            .expect("read the texts file")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("a JSON string per line"))
            .collect(),
        None => ["a", "b c", "d e f"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    };
    let e =
        load_default_embedder().expect("the model is provisioned (bash scripts/provision-models)");
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    e.embed(&refs[..1]).expect("warm-up");
    let t = Instant::now();
    let v = e.embed(&refs).expect("embed");
    let s = t.elapsed().as_secs_f64();
    assert_eq!(v.len(), texts.len() * e.dim());
    println!(
        "{}",
        serde_json::json!({"texts": texts.len(), "seconds": s, "chunks_per_s": texts.len() as f64 / s})
    );
}
