//! `docfuse search`: rank sections for a question.

use super::args::SearchArgs;
use super::output::{print_json, print_line};
use crate::engine::{snippet, DocIndex, Hit, HitExplain, SearchOptions};
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
    /// Whether any query term matched the chunk lexically.
    lexical_match: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<&'a HitExplain>,
}

pub fn run(a: SearchArgs) -> anyhow::Result<i32> {
    let query = a.query.join(" ");
    let index = DocIndex::open(&a.index)?;
    let mut opts = SearchOptions {
        limit: a.limit,
        explain: a.explain,
        mode: a.mode,
        ..SearchOptions::default()
    };
    if let Some(f) = a.floor {
        anyhow::ensure!(
            (0.0..=1.0).contains(&f),
            "`--floor` must be in [0, 1], got {f}"
        );
        opts.params.floor = f;
    }
    let resp = index.search(&query, &opts)?;
    if let Some(why) = &resp.degraded {
        eprintln!("note: answering lexically: {why}");
    }
    if a.json {
        let results: Vec<JsonResult> = resp
            .hits
            .iter()
            .enumerate()
            .map(|(i, h)| json_result(i, h))
            .collect();
        print_json(&serde_json::json!({
            "query": query,
            "mode": resp.mode.name(),
            "degraded": resp.degraded,
            "generation": index.manifest().generation,
            "results": results,
        }))?;
    } else {
        print_text(&resp.hits)?;
    }
    Ok(if resp.hits.is_empty() {
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
        lexical_match: !h.matched_terms.is_empty(),
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
            print_explain(e)?;
        }
    }
    Ok(())
}

fn print_explain(x: &HitExplain) -> anyhow::Result<()> {
    if let Some(f) = &x.fusion {
        let rank = |r: Option<u32>| r.map_or("-".to_string(), |r| r.to_string());
        print_line(&format!(
            "    fused = lexical part {:.3} (score {:.3}, rank {}) + vector part {:.3} (cosine {:.3}, rank {}) + exact bonus {:.3}",
            f.lexical_part, f.lexical_score, rank(f.lexical_rank), f.vector_part, f.cosine, rank(f.vector_rank), f.exact_bonus
        ))?;
    }
    let e = &x.lexical;
    print_line(&format!(
        "    lexical {:.3} = bm25f {:.3} × aboutness {:.3} + exact_id {:.3} + exact_path {:.3} + exact_symbol {:.3}",
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
    Ok(())
}

fn round3(x: f32) -> f32 {
    (x * 1000.0).round() / 1000.0
}
