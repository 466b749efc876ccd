//! `docfuse index`: build the index.

use super::args::IndexArgs;
use super::output::{print_json, print_line};
use crate::config::{Field, IndexConfig};
use crate::engine::{build, Source};
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};

pub fn run(a: IndexArgs) -> anyhow::Result<i32> {
    let config = config_from(&a)?;
    let source = match &a.jsonl {
        Some(f) => Source::Jsonl(f.clone()),
        None => Source::Roots(a.roots.clone()),
    };
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} indexing {pos}/{len} documents [{elapsed}] {wide_bar}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let report = build(&a.index, &source, &config, &mut |done, total| {
        bar.set_length(total);
        bar.set_position(done);
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
            "warnings": report.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            "elapsed_ms": report.elapsed_ms,
        }))?;
    } else {
        print_line(&format!(
            "indexed {} documents into {} chunks in {} ms → `{}` (generation {}{})",
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
