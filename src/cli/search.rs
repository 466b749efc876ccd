//! `docfuse search`: rank sections for a question.

use super::args::SearchArgs;
use super::output::{print_json, print_line};
use crate::engine::{snippet, DocIndex, SearchOptions};
use crate::lexical::Hit;
use serde::Serialize;

/// One result in `--json` output.
#[derive(Serialize)]
struct JsonResult<'a> {
    rank: usize,
    id: &'a str,
    path: &'a str,
    start_line: u32,
    end_line: u32,
    heading_path: &'a [String],
    title: &'a str,
    score: f32,
    snippet: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a crate::lexical::Explain>,
}

pub fn run(a: SearchArgs) -> anyhow::Result<i32> {
    let query = a.query.join(" ");
    let index = DocIndex::open(&a.index)?;
    let mut opts = SearchOptions {
        limit: a.limit,
        explain: a.explain,
        ..SearchOptions::default()
    };
    if let Some(f) = a.floor {
        anyhow::ensure!(
            (0.0..=1.0).contains(&f),
            "`--floor` must be in [0, 1], got {f}"
        );
        opts.params.floor = f;
    }
    let hits = index.search(&query, &opts)?;
    if a.json {
        let results: Vec<JsonResult> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| json_result(i, h))
            .collect();
        print_json(&serde_json::json!({ "query": query, "results": results }))?;
    } else {
        print_text(&hits)?;
    }
    Ok(if hits.is_empty() {
        super::EXIT_NO_HITS
    } else {
        super::EXIT_OK
    })
}

fn json_result(i: usize, h: &Hit) -> JsonResult<'_> {
    let c = &h.chunk;
    JsonResult {
        rank: i + 1,
        id: &c.id,
        path: &c.path,
        start_line: c.start_line,
        end_line: c.end_line,
        heading_path: &c.heading_path,
        title: &c.title,
        score: round3(h.score),
        snippet: snippet(&c.text, &h.matched_terms),
        explain: h.explain.as_ref(),
    }
}

fn print_text(hits: &[Hit]) -> anyhow::Result<()> {
    if hits.is_empty() {
        eprintln!("no results");
    }
    for h in hits {
        let c = &h.chunk;
        let heading = if c.heading_path.is_empty() {
            c.title.clone()
        } else {
            c.heading_path.join(" › ")
        };
        print_line(&format!(
            "{}:{}  {}  ({:.3})",
            c.path, c.start_line, heading, h.score
        ))?;
        print_line(&format!("    {}", snippet(&c.text, &h.matched_terms)))?;
        if let Some(e) = &h.explain {
            print_line(&format!(
                "    score {:.3} = lexical {:.3} × aboutness {:.3} + exact_id {:.3} + exact_path {:.3} + exact_symbol {:.3}",
                e.score, e.lexical, e.aboutness, e.exact_id, e.exact_path, e.exact_symbol
            ))?;
            for t in &e.terms {
                let fields: Vec<String> = t
                    .fields
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {:.3} (tf {:.1}, len {:.0})",
                            f.field, f.contribution, f.tf, f.length
                        )
                    })
                    .collect();
                print_line(&format!(
                    "      {:<20} idf {:.3} tf~ {:.3} → {:.3}: {}",
                    t.term,
                    t.idf,
                    t.pseudo_tf,
                    t.contribution,
                    fields.join(", ")
                ))?;
            }
        }
    }
    Ok(())
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}
