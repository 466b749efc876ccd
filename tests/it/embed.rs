//! The MiniLM embedder on the provisioned model files (`bash scripts/provision-models`).
#![cfg(feature = "embeddings")]

use docfuse::embed::{load_default_embedder, Embedder};
use std::sync::OnceLock;

fn embedder() -> &'static dyn Embedder {
    static E: OnceLock<Box<dyn Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        load_default_embedder()
            .unwrap_or_else(|e| panic!("{e}\n(run `bash scripts/provision-models` first)"))
    })
    .as_ref()
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn reference_similarities_match_sentence_transformers() {
    let e = embedder();
    let texts = [
        "That is a happy person",
        "That is a happy dog",
        "That is a very happy person",
        "Today is a sunny day",
    ];
    let v = e.embed(&texts).unwrap();
    assert_eq!(v.len(), 4 * 384);
    let row = |i: usize| &v[i * 384..(i + 1) * 384];
    let norm: f32 = row(0).iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4, "L2 norm {norm}");
    let got = [
        cos(row(0), row(1)),
        cos(row(0), row(2)),
        cos(row(0), row(3)),
    ];
    eprintln!("cosines: {got:?}");
    for (g, want) in got.iter().zip([0.6945, 0.9429, 0.2568]) {
        assert!((g - want).abs() <= 0.01, "cosine {g} vs reference {want}");
    }
}

#[test]
fn a_vector_does_not_depend_on_its_batch_neighbours() {
    let e = embedder();
    let alone = e.embed(&["How do I run tasks one after another?"]).unwrap();
    let long = "a much longer neighbour text that forces padding ".repeat(20);
    let batched = e
        .embed(&[
            "short",
            "How do I run tasks one after another?",
            long.as_str(),
        ])
        .unwrap();
    assert_eq!(alone.as_slice(), &batched[384..768]);
}

#[test]
fn identity_names_the_model_files_and_settings() {
    let id = embedder().identity();
    assert_eq!(id.model, "all-MiniLM-L6-v2");
    assert_eq!(
        id.model_sha256,
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
    );
    assert_eq!(
        (id.pooling.as_str(), id.max_length, id.dim, id.normalized),
        ("mean", 256, 384, true)
    );
}

/// The folded-model cache (`embed::folded`): written once, used by the next embedder, bit
/// for bit the original model's vectors on both session kinds (one query on all cores, a
/// list on one single-threaded session per core), and never used once its weights change.
#[test]
fn the_folded_model_cache_gives_the_original_vectors_and_is_dropped_when_changed() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("model-cache");
    let long = "Cargo features are a mechanism to express conditional compilation. ".repeat(30);
    let texts = [
        "short",
        "How do I declare an optional dependency?",
        long.as_str(),
    ];
    let query = ["what does the ? operator do"];
    let want = (
        embedder().embed(&texts).unwrap(),
        embedder().embed(&query).unwrap(),
    );
    let writer = load_default_embedder().unwrap();
    assert!(
        writer.prepare_cache(&cache).unwrap(),
        "the cache is written"
    );
    assert!(!writer.prepare_cache(&cache).unwrap(), "and written once");
    let reader = load_default_embedder().unwrap();
    reader.use_cache_dir(&cache);
    let got = (reader.embed(&texts).unwrap(), reader.embed(&query).unwrap());
    assert!(reader.used_cache(), "sessions come from the folded model");
    assert_eq!(got, want);
    // One byte changed in the middle of the weights, same size: the full hash catches it
    // (the probe alone might not), the original model answers, the folder is removed.
    let folder = std::fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // It was made for this CPU and, on x86, holds the weights ONNX Runtime pre-packs
    // (their external-data entries are named `prepacked_…` in the graph).
    let record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("folded.json")).unwrap()).unwrap();
    assert_eq!(record["cpu"], docfuse::embed::folded::cpu_fingerprint());
    let graph = std::fs::read(folder.join(docfuse::embed::folded::GRAPH)).unwrap();
    let prepacked = graph.windows(10).any(|w| w == b"prepacked_");
    assert_eq!(prepacked, docfuse::embed::folded::PREPACKED_WEIGHTS);
    let weights = folder.join(docfuse::embed::folded::WEIGHTS);
    let mut bytes = std::fs::read(&weights).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&weights, &bytes).unwrap();
    drop(bytes);
    assert_eq!(docfuse::embed::folded::damaged(&cache).len(), 1);
    let damaged = load_default_embedder().unwrap();
    damaged.use_cache_dir(&cache);
    let got = (
        damaged.embed(&texts).unwrap(),
        damaged.embed(&query).unwrap(),
    );
    assert!(
        !damaged.used_cache(),
        "a cache that does not check out is not used"
    );
    assert_eq!(got, want);
    assert!(!folder.exists(), "and it is removed");
}
