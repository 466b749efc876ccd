//! `docfuse chunks`: dump the indexed chunks as JSON Lines.

use super::args::ChunksArgs;
use super::output::print_line;
use crate::read::DocIndex;

pub fn run(a: ChunksArgs) -> anyhow::Result<i32> {
    let index = DocIndex::open(&a.index)?;
    for c in index.lexical().all_chunks()? {
        print_line(&serde_json::to_string(&c)?)?;
    }
    Ok(super::EXIT_OK)
}
