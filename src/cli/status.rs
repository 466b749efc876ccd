//! `docfuse status`: freshness of the index against the files on disk.

use super::args::StatusArgs;
use super::output::{print_json, print_line};
use crate::engine::{status, DocIndex};

pub fn run(a: StatusArgs) -> anyhow::Result<i32> {
    let index = DocIndex::open(&a.index)?;
    let s = status(&index, &index.manifest().config)?;
    if a.json {
        print_json(&s)?;
        return Ok(super::EXIT_OK);
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
    ] {
        for p in list.iter().take(20) {
            print_line(&format!("  {label}: {p}"))?;
        }
    }
    if !s.fresh {
        print_line("hint: run `docfuse refresh` to bring it up to date")?;
    }
    Ok(super::EXIT_OK)
}
