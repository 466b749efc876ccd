//! `docfuse status`: freshness of the index against the files on disk.

use super::args::StatusArgs;
use super::output::{print_json, print_line};
use crate::read::{status_now, DocIndex, Status};

pub fn run(a: StatusArgs) -> anyhow::Result<i32> {
    let index = DocIndex::open(&a.index)?;
    // Compare the embedder with the vectors too (this loads the model), and ask an
    // attached store (a database index) whether it answers: an outage is reported
    // apart from staleness.
    let usable = index.vector_usable();
    let mut s = status_now(&index)?;
    let outage = match (&usable, index.remote_vectors()) {
        (Err(why), Some(r)) if r.has_vectors() => Some(why.clone()),
        _ => None,
    };
    // why searches are lexical although the index is not lexical by choice: any reason
    // (another embedder, no model, damaged vectors, a database outage), as the text says
    // and as `/v1/status` says in `vectors.reason`
    let unavailable = match &usable {
        Err(why) if !index.lexical_by_choice() => Some(why.clone()),
        _ => None,
    };
    if unavailable.is_some() {
        s.vectors_usable = false;
    }
    // a database's embedding queue: inputs waiting for workers, vectors waiting for the
    // writer's next publish
    let queue = a.database.as_ref().and_then(|url| {
        let key = s.embedder.as_ref().map_or("", |e| e.identity_key.as_str());
        super::pg::queue_counts(url, key).ok()
    });
    if a.json {
        let mut v = serde_json::to_value(&s)?;
        v["vector_search_unavailable"] = serde_json::json!(unavailable);
        if let Some(q) = &queue {
            v["embedding_queue"] = serde_json::to_value(q)?;
        }
        print_json(&v)?;
        return Ok(exit(&a, s.fresh));
    }
    if let Some(why) = &outage {
        print_line(&format!("vector search unavailable: {why}"))?;
    }
    let state = if s.fresh { "fresh" } else { "stale" };
    print_line(&format!(
        "{state}: {} documents, {} chunks, generation {}",
        s.documents, s.chunks, s.generation
    ))?;
    for r in &s.reasons {
        print_line(&format!("  {r}"))?;
    }
    for (label, list) in [
        ("added", &s.added),
        ("changed", &s.changed),
        ("removed", &s.removed),
        ("unreadable", &s.unreadable),
        ("partial", &s.partial),
        ("read in part", &s.read_in_part),
    ] {
        for p in list.iter().take(20) {
            print_line(&format!("  {label}: {}", super::output::printable(p)))?;
        }
        if list.len() > 20 {
            print_line(&format!("  … and {} more {label}", list.len() - 20))?;
        }
    }
    if s.touched > 0 {
        print_line(&format!(
            "  {} file(s) touched (same content); `docfuse refresh` records their new times",
            s.touched
        ))?;
    }
    if !s.skipped.is_empty() {
        let parts: Vec<String> = s
            .skipped
            .iter()
            .map(|(k, n)| format!("{n} {}", k.replace('_', " ")))
            .collect();
        print_line(&format!("  skipped at the last walk: {}", parts.join(", ")))?;
    }
    print_line(&format!(
        "vector search: {}",
        vector_line(&index, &s, usable.as_ref().err())
    ))?;
    if let Some(q) = queue.filter(|q| q.waiting + q.embedded + q.other_embedder > 0) {
        print_line(&format!(
            "embedding queue: {} input(s) waiting for `docfuse embed-worker`, {} embedded and waiting for the writer's next refresh{}",
            q.waiting,
            q.embedded,
            match q.other_embedder {
                0 => String::new(),
                n => format!(", {n} for another embedder"),
            }
        ))?;
        if q.waiting > 0 {
            let url = a.database.as_deref().unwrap_or(&a.index);
            print_line(&format!(
                "hint: run `docfuse embed-worker --index {}` on hosts with the model; the writer's next refresh publishes their vectors",
                crate::pgstore::redacted(&url.to_string_lossy())
            ))?;
        }
    }
    if s.model_unavailable.is_some() && !s.fresh {
        print_line("hint: install the model (see above), then run `docfuse refresh`")?;
    } else if s.model_unavailable.is_some() {
        print_line(
            "hint: install the model (see above); new searches use it (restart a running `serve` or `mcp`)",
        )?;
    } else if !s.fresh {
        print_line("hint: run `docfuse refresh` to bring it up to date")?;
    }
    Ok(exit(&a, s.fresh))
}

/// Whether a search can use vectors now, and if not why: `usable (model, N dims)`,
/// `off (…)` for a lexical-only index, `unavailable: why; searches are lexical`.
fn vector_line(index: &DocIndex, s: &Status, unusable: Option<&String>) -> String {
    if index.lexical_by_choice() {
        return "off (the index was built with --no-embeddings); searches are lexical".into();
    }
    match (unusable, &s.embedder) {
        (None, Some(e)) if s.vectors_usable || index.remote_vectors().is_none() => {
            let pending = match s.pending {
                0 => String::new(),
                n => format!("; {n} chunk(s) without a vector are found lexically only"),
            };
            format!("usable ({}, {} dims){pending}", e.model, e.dim)
        }
        _ if s.vectors_missing.is_some() => {
            "unavailable: the index has no vectors yet (see above); searches are lexical".into()
        }
        (Some(why), _) => format!("unavailable: {why}; searches are lexical"),
        (None, _) => "unavailable; searches are lexical".into(),
    }
}

/// 1 for a stale index under `--exit-code`, else 0.
fn exit(a: &StatusArgs, fresh: bool) -> i32 {
    if a.exit_code && !fresh {
        super::EXIT_NO_HITS
    } else {
        super::EXIT_OK
    }
}
