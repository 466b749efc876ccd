//! `docfuse mcp`: the MCP server on stdin/stdout (see [`crate::server::mcp`]). stdout
//! carries only protocol messages; everything else goes to stderr.

use super::args::McpArgs;
use crate::retriever::DocfuseRetriever;
use anyhow::Context;
use std::time::Duration;

pub fn run(a: McpArgs) -> anyhow::Result<i32> {
    let budget = budget_of(a.max_response_tokens)?;
    let retriever = DocfuseRetriever::open(&a.index)?;
    // one-off searches of this index folder are answered here (`super::daemon`)
    let _socket = match a.database {
        false => super::daemon::listen(&a.index, retriever.clone()),
        true => None,
    };
    if a.watch.watch {
        super::refresh::watch_in_background(&a.index, a.watch.debounce_ms)?;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let outcome = rt.block_on(crate::server::mcp::serve_stdio(retriever, budget));
    rt.shutdown_timeout(Duration::from_secs(1));
    outcome.context("the MCP server stopped")?;
    Ok(super::EXIT_OK)
}

/// A response budget from `--max-response-tokens`.
///
/// # Errors
/// When it is under [`crate::retriever::MIN_RESPONSE_TOKENS`].
pub fn budget_of(tokens: usize) -> anyhow::Result<crate::retriever::Budget> {
    let min = crate::retriever::MIN_RESPONSE_TOKENS;
    anyhow::ensure!(
        tokens >= min,
        "`--max-response-tokens` must be at least {min}, got {tokens}"
    );
    Ok(crate::retriever::Budget { tokens })
}
