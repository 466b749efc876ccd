//! `docfuse handoff`: where to start before working on a document or folder.

use super::args::HandoffArgs;
use super::output::{print_json, print_line};
use crate::read::DocIndex;
use crate::views::handoff_for_entity;

pub fn run(a: HandoffArgs) -> anyhow::Result<i32> {
    let index = DocIndex::open(&a.index)?;
    let h = handoff_for_entity(&index, &a.target, a.caveats)?;
    if a.json {
        print_json(&h)?;
        return Ok(super::EXIT_OK);
    }
    for line in h.text_lines() {
        print_line(&line)?;
    }
    Ok(super::EXIT_OK)
}
