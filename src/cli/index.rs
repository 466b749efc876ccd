//! `docfuse index`: build the index.

use super::args::IndexArgs;
use super::output::{print_json, print_line};
use crate::config::{Field, IndexConfig};
use crate::engine::{build, BuildOptions, Phase, Source};
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};

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
    let opts = BuildOptions {
        config,
        embedder: embedder.as_deref(),
    };
    let bar = ProgressBar::new(0);
    let mut phase = None;
    let report = build(&a.index, &source, &opts, &mut |p| {
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            bar.reset();
            bar.set_style(style(p.phase));
        }
        bar.set_length(p.total);
        bar.set_position(p.done);
    });
    bar.finish_and_clear();
    let report =
        report.with_context(|| format!("cannot build the index at `{}`", a.index.display()))?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if a.json {
        print_json(&serde_json::json!({
            "index": a.index,
            "generation": report.generation,
            "documents": report.documents,
            "chunks": report.chunks,
            "embedded": report.embedded,
            "reused": report.reused,
            "vectors": embedder.is_some(),
            "warnings": report.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            "elapsed_ms": report.elapsed_ms,
        }))?;
    } else {
        let vectors = match &embedder {
            Some(_) => format!(", {} embedded, {} reused", report.embedded, report.reused),
            None => ", lexical only".into(),
        };
        print_line(&format!(
            "indexed {} documents into {} chunks{vectors} in {} ms → `{}` (generation {}{})",
            report.documents,
            report.chunks,
            report.elapsed_ms,
            a.index.display(),
            report.generation,
            match report.warnings.len() {
                0 => String::new(),
                n => format!(", {n} warning(s)"),
            }
        ))?;
    }
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

/// The default embedder, or `None` with a warning saying why indexing goes on lexically.
fn load_embedder() -> Option<Box<dyn crate::embed::Embedder>> {
    match crate::embed::load_default_embedder() {
        Ok(e) => Some(e),
        Err(e) => {
            eprintln!("warning: {e}\nwarning: building a lexical-only index");
            None
        }
    }
}

fn style(phase: Phase) -> ProgressStyle {
    let template = match phase {
        Phase::Indexing => "{spinner} indexing {pos}/{len} documents [{elapsed}] {wide_bar}",
        Phase::Embedding => {
            "{spinner} embedding {pos}/{len} chunks, {per_sec}, eta {eta} {wide_bar}"
        }
    };
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
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
