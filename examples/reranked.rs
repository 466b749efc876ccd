//! Reranking: the docfuse index's top 20 candidates re-scored by a caller-supplied
//! reranker (here, a toy that rewards passages containing every query word), with path
//! filters applied before the cut.
//!
//! ```sh
//! cargo run --release --example reranked -- "environment variables for a task"
//! ```

use docfuse::generation::Source;
use docfuse::read::Mode;
use docfuse::retriever::{
    format_retrieved_documents, DocfuseRetriever, FnReranker, PathFilters, RerankedRetriever,
    RetrieveOptions, RetrievedDocument, Retriever,
};
use docfuse::write::{build, BuildOptions};
use std::path::Path;

/// Share of the query's words found in the passage, plus a little of the first-stage
/// confidence to break ties.
fn coverage(query: &str, doc: &RetrievedDocument) -> f32 {
    let text = doc.content.to_lowercase();
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let found = words.iter().filter(|w| text.contains(w.as_str())).count();
    found as f32 / words.len().max(1) as f32 + 0.1 * doc.metadata.relative_score
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let query = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    let query = if query.is_empty() {
        "environment variables for a task".to_string()
    } else {
        query
    };

    let tmp = tempfile::tempdir()?;
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-docs");
    build(
        tmp.path(),
        &Source::Roots(vec![docs]),
        &BuildOptions::default(),
        &mut |_| {},
    )?;
    let index = DocfuseRetriever::open(tmp.path())?;

    let reranked = RerankedRetriever::new(index, FnReranker(coverage), 20);
    let options = RetrieveOptions {
        limit: 3,
        mode: Mode::Lexical,
        floor: Some(0.0),
        filters: PathFilters {
            globs: vec!["**/*.md".into()],
            ..PathFilters::default()
        },
        ..RetrieveOptions::default()
    };
    let results = reranked.retrieve(&query, &options).await?;
    println!("query: {query}\n");
    for (i, d) in results.iter().enumerate() {
        let first = d
            .metadata
            .first_stage
            .expect("reranked documents keep their first stage");
        println!(
            "{}. {:<34} rerank {:.3}  (first stage: #{} at {:.3})",
            i + 1,
            d.source,
            d.score,
            first.rank,
            first.score
        );
    }
    println!("\n{}", format_retrieved_documents(&results, 250));
    Ok(())
}
