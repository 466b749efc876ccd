//! `docfuse search`: rank sections for a question.

use super::args::SearchArgs;
use super::output::{print_json, print_line};
use crate::engine::{snippet, DocIndex, Hit, HitExplain, SearchOptions};
use crate::retriever::{SearchEnvelope, SearchResult};

pub fn run(a: SearchArgs) -> anyhow::Result<i32> {
    let query = a.query.join(" ");
    if a.refresh {
        super::refresh::refresh_before_search(&a.index)?;
    }
    let index = DocIndex::open(&a.index)?;
    let mut opts = SearchOptions {
        limit: a.limit as usize,
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
    // A lexical-only index (built with --no-embeddings) answers lexically by choice: no note.
    if let Some(why) = resp
        .degraded
        .as_ref()
        .filter(|_| index.manifest().vectors.is_some())
    {
        eprintln!("note: answering lexically: {why}");
    }
    let notes: Vec<Option<String>> = resp
        .hits
        .iter()
        .map(|h| {
            index
                .file_state(h.chunk.root, &h.chunk.path)
                .ok()
                .and_then(|s| s.note())
        })
        .collect();
    if a.json {
        let results: Vec<SearchResult> = resp
            .hits
            .iter()
            .zip(&notes)
            .enumerate()
            .map(|(i, (h, note))| SearchResult {
                stale_reason: note.clone(),
                ..SearchResult::from_hit(i, h)
            })
            .collect();
        print_json(&SearchEnvelope {
            query,
            mode: resp.mode.name(),
            degraded: resp.degraded,
            generation: index.manifest().generation,
            stale: index.stale(),
            results,
        })?;
    } else {
        print_text(&resp.hits, &notes)?;
    }
    Ok(if resp.hits.is_empty() {
        super::EXIT_NO_HITS
    } else {
        super::EXIT_OK
    })
}

fn print_text(hits: &[Hit], notes: &[Option<String>]) -> anyhow::Result<()> {
    if hits.is_empty() {
        eprintln!("no results");
    }
    for (h, note) in hits.iter().zip(notes) {
        let c = &h.chunk;
        let heading = if c.heading_path.is_empty() {
            c.title.clone()
        } else {
            c.heading_path.join(" › ")
        };
        let mark = note
            .as_ref()
            .map_or(String::new(), |n| format!("  [{n}: text as indexed]"));
        print_line(&format!(
            "{}:{}  {}  ({:.3}){mark}",
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
