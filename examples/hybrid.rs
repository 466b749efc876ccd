//! Hybrid retrieval over the bundled sample docs: the docfuse index fused with a second,
//! toy retriever (an in-memory FAQ), then rendered for a prompt with citations.
//!
//! ```sh
//! cargo run --release --example hybrid -- "how do I limit parallel jobs"
//! ```
//!
//! Uses the MiniLM model when it is provisioned (`bash scripts/provision-models`), else
//! answers lexically and says why.

use docfuse::embed::load_default_embedder;
use docfuse::generation::Source;
use docfuse::retriever::{
    format_retrieved_documents, BoxFuture, Combination, DocfuseRetriever, HybridRetriever,
    RetrieveError, RetrieveOptions, RetrievedDocument, Retriever,
};
use docfuse::write::{build, BuildOptions};
use std::path::Path;

/// A second retriever: FAQ entries that share a word (of 4+ letters) with the query.
struct Faq(Vec<(&'static str, &'static str)>);

impl Retriever for Faq {
    fn retrieve<'a>(
        &'a self,
        query: &'a str,
        options: &'a RetrieveOptions,
    ) -> BoxFuture<'a, Result<Vec<RetrievedDocument>, RetrieveError>> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() >= 4)
            .map(str::to_lowercase)
            .collect();
        let mut hits: Vec<(usize, RetrievedDocument)> = self
            .0
            .iter()
            .enumerate()
            .filter_map(|(i, (q, a))| {
                let text = format!("{q} {a}").to_lowercase();
                let shared = words.iter().filter(|w| text.contains(w.as_str())).count();
                (shared > 0).then(|| {
                    let id = format!("faq#{i}");
                    let content = format!("FAQ › {q}\n\n{a}");
                    (
                        shared,
                        RetrievedDocument::new(
                            id,
                            content,
                            format!("faq:{}-{}", i + 1, i + 1),
                            shared as f32,
                        ),
                    )
                })
            })
            .collect();
        hits.sort_by_key(|h| std::cmp::Reverse(h.0));
        let docs = hits
            .into_iter()
            .map(|(_, d)| d)
            .take(options.limit)
            .collect();
        Box::pin(async move { Ok(docs) })
    }

    fn name(&self) -> &str {
        "faq"
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let query = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let query = if query.is_empty() {
        "how do I limit parallel jobs".to_string()
    } else {
        query
    };

    // Index the sample docs into a temporary folder (with vectors when the model is there).
    let tmp = tempfile::tempdir()?;
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-docs");
    let embedder = load_default_embedder().ok();
    let opts = BuildOptions {
        embedder: embedder.as_deref(),
        ..BuildOptions::default()
    };
    build(tmp.path(), &Source::Roots(vec![docs]), &opts, &mut |_| {})?;
    let index = DocfuseRetriever::open(tmp.path())?;

    let faq = Faq(vec![
        ("Can I run tasks one at a time?", "Yes: pass `--jobs 1`."),
        (
            "Where is the configuration file?",
            "`tasks.toml` at the project root.",
        ),
        (
            "Why is my plugin not loaded?",
            "Check the plugin path in the configuration.",
        ),
    ]);
    // Reciprocal rank fusion: the index counts twice as much as the FAQ.
    let hybrid = HybridRetriever::new(Combination::Rrf { k: 60.0 })
        .with(index, 2.0)
        .with(faq, 1.0);
    let options = RetrieveOptions {
        limit: 5,
        ..RetrieveOptions::default()
    };
    let results = hybrid.retrieve(&query, &options).await?;

    println!("query: {query}\n");
    for (i, d) in results.iter().enumerate() {
        let from: Vec<String> = d
            .metadata
            .fusion
            .iter()
            .map(|p| format!("{} #{}", p.retriever, p.rank))
            .collect();
        println!(
            "{}. {:<40} score {:.4}  ({})",
            i + 1,
            d.source,
            d.score,
            from.join(", ")
        );
        if let Some(why) = &d.metadata.degraded {
            println!("   note: answered lexically: {why}");
        }
    }
    println!(
        "\n--- prompt context (≤ 300 tokens) ---\n{}",
        format_retrieved_documents(&results, 300)
    );
    Ok(())
}
