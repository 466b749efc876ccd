//! `docfuse index`: build the index (on an existing index: refresh the given roots).

use super::args::IndexArgs;
use super::build_run::{load_embedder, print_report, run_build};
use crate::config::{Field, IndexConfig};
use crate::engine::Source;
use anyhow::{bail, Context};

pub fn run(a: IndexArgs) -> anyhow::Result<i32> {
    let config = config_from(&a)?;
    let source = match &a.jsonl {
        Some(f) => Source::Jsonl(f.clone()),
        None => Source::Roots(a.roots.clone()),
    };
    check_sources(&source)?;
    let embedder = if a.no_embeddings {
        None
    } else {
        load_embedder()
    };
    let opts = a.run.build_options(config, embedder.as_deref());
    let report = run_build(&a.index, &source, &opts)?;
    print_report(&a.index, &report, embedder.is_some(), a.json)?;
    Ok(super::EXIT_OK)
}

/// Fails early, before a model is loaded, when a root or the JSONL file is missing.
fn check_sources(source: &Source) -> anyhow::Result<()> {
    let paths = match source {
        Source::Roots(r) => r.clone(),
        Source::Jsonl(f) => vec![f.clone()],
    };
    for p in paths {
        std::fs::metadata(&p).map_err(|source| crate::Error::Root {
            path: p.clone(),
            source,
        })?;
    }
    Ok(())
}

fn config_from(a: &IndexArgs) -> anyhow::Result<IndexConfig> {
    let mut c = IndexConfig::default();
    if let Some(n) = a.max_tokens {
        c.chunker.max_tokens = n;
    }
    if let Some(k1) = a.k1 {
        c.bm25f.k1 = k1;
    }
    if let Some(b) = a.b {
        c.bm25f.b = b;
    }
    if let Some(n) = a.hnsw_min_vectors {
        c.hnsw_min_vectors = n;
    }
    if let Some(n) = a.max_file_bytes {
        c.max_file_bytes = n;
    }
    if let Some(spec) = &a.weights {
        for pair in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let Some((name, w)) = pair.split_once('=') else {
                bail!("`--weights`: expected FIELD=W, got `{pair}`");
            };
            let field = Field::ALL
                .into_iter()
                .find(|f| f.name() == name.trim())
                .with_context(|| format!("`--weights`: unknown field `{name}` (fields: title, headings, path, symbols, aliases, summary, body)"))?;
            c.bm25f.weights[field.index()] = w
                .trim()
                .parse()
                .with_context(|| format!("`--weights`: `{w}` is not a number"))?;
        }
    }
    c.validate()?;
    Ok(c)
}
