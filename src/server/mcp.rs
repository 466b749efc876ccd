//! The MCP server (Model Context Protocol, official `rmcp` SDK) on stdio: tools
//! `search_docs`, `read_passage`, `read_document`, `handoff` and `index_status` over one
//! opened index.
//!
//! stdout carries only protocol messages; logs go to stderr. The tools publish plain
//! JSON Schemas ([`super::mcp_schema`]) and read their arguments with the same parser
//! and rules as the HTTP API ([`crate::retriever::search_args`]). Every result (text and
//! structured content together) stays under the response budget. Tool failures (a bad
//! argument, a path outside the roots) are tool results with `isError: true` and the
//! `{"error": {"code", "message"}}` body as structured content, so the assistant sees
//! the reason.

use super::{mcp_schema, ErrorBody};
use crate::chunk::{name_field, printable};
use crate::retriever::{
    fit_contents, fit_response, passage_args, search_args, Budget, DocfuseRetriever, IndexStatus,
    Passage, Retrieval, RetrieveError, SearchEnvelope, SearchResult, STATUS_LIST_CAP,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, JsonObject, ServerCapabilities, ServerConfig,
};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use serde::Serialize;
use serde_json::Value;

/// The MCP server: one opened index, kept loaded between calls.
#[derive(Clone)]
pub struct DocfuseMcp {
    retriever: DocfuseRetriever,
    budget: Budget,
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl DocfuseMcp {
    pub fn new(retriever: DocfuseRetriever, budget: Budget) -> Self {
        DocfuseMcp {
            retriever,
            budget,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "search_docs",
        description = "Search the indexed documentation, and the repository's code when it was indexed with sources. Each result is an entry of a kind: document (a documentation section), module (a source file's entry, or one of its items — function, type, method — with its doc comment and signature; heading path `path › name`), area (a folder of modules, asked for with kinds: its module hits as one result), package (a package manifest with its checks, or a docfuse.toml ownership record), intent or change (a docfuse.toml route naming the paths a question or change concerns); filter with kinds. Returns the best passages, each with its kind, path:line citation (the line that best matches), its line range, heading path, score, id, and whether it matched the query's words (lexical match), followed by the passage texts, all within the response budget (passages that do not fit are cut or left out, and say so). Use read_passage with a result's id to read a whole section, or with a path and lines.",
        input_schema = mcp_schema::search_docs(),
        annotations(title = "Search documentation", read_only_hint = true)
    )]
    async fn search_docs(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.search(Value::Object(args)).await {
            Ok(r) => r,
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "read_passage",
        description = "Read the exact text of an indexed documentation file: give a search result's id (reads its whole section), or a path relative to the indexed root with optional start_line and end_line (1-based, inclusive). Long ranges come in pages that end on a line: the answer says which lines it holds and the start_line of the next page. If the file changed since indexing, the indexed text is returned, marked STALE. Only files inside the indexed roots can be read.",
        input_schema = mcp_schema::read_passage(),
        annotations(title = "Read a passage", read_only_hint = true)
    )]
    async fn read_passage(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.passage(Value::Object(args)).await {
            Ok(r) => r,
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "read_document",
        description = "Read a whole indexed documentation file as its sections (chunks) in file order, each with its id, heading path, line range and text: give a path relative to the indexed root, as in search results. Long documents come in pages: call again with from set to the answer's next_from. A single section larger than a page is cut and marked truncated (read it with read_passage and its lines). If the file changed since indexing, the indexed text is returned, marked STALE.",
        input_schema = mcp_schema::read_document(),
        annotations(title = "Read a document", read_only_hint = true)
    )]
    async fn read_document(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.document(Value::Object(args)).await {
            Ok(r) => r,
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "handoff",
        description = "Before working on a document, folder, source file (module), item (`path#Name`), package manifest or docfuse.toml ownership id: where to start reading (the agent document, the index pages that cover it, the pages that link to or mention it, one link further, the root's index page — each with the relation and the path:line that put it there), what to read before editing (including AGENTS.md and CONTRIBUTING.md that apply), where to edit, which check commands apply (an ownership record's, front matter `checks:`, a test section of AGENTS.md or CONTRIBUTING.md inside the target's package, the package manifest's scripts, the documents above the package, else its package manager's default), and the related folders by imports (what the target imports and what imports it, each with the import that proves it). An unknown target gets the closest indexed paths.",
        input_schema = mcp_schema::handoff(),
        annotations(title = "Handoff", read_only_hint = true)
    )]
    async fn handoff(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.handoff_call(&args).await {
            Ok(r) => r,
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "index_status",
        description = "Tell whether the documentation index is fresh or stale against the files on disk (and why), how many documents and chunks it holds, its roots, and whether semantic (vector) search is available and with which embedder.",
        input_schema = mcp_schema::no_arguments(),
        annotations(title = "Index status", read_only_hint = true)
    )]
    async fn index_status(
        &self,
        Parameters(args): Parameters<JsonObject>,
    ) -> Result<CallToolResult, ErrorData> {
        if let Some(k) = args.keys().next() {
            let e = RetrieveError::InvalidRequest(format!(
                "unknown field `{k}` in index_status; it takes no arguments"
            ));
            return Ok(tool_error(&e));
        }
        Ok(match self.retriever.status().await {
            Ok(s) => {
                let s = s.capped(STATUS_LIST_CAP);
                structured(status_text(&s), &s)
            }
            Err(e) => tool_error(&e),
        })
    }
}

impl DocfuseMcp {
    async fn handoff_call(&self, args: &JsonObject) -> Result<CallToolResult, RetrieveError> {
        if let Some(k) = args
            .keys()
            .find(|k| !matches!(k.as_str(), "target" | "caveats"))
        {
            return Err(RetrieveError::InvalidRequest(format!(
                "unknown field `{k}` in handoff; it takes `target` and `caveats`"
            )));
        }
        let target = match args.get("target") {
            Some(Value::String(t)) if !crate::analysis::is_blank(t) => t.clone(),
            _ => {
                return Err(RetrieveError::InvalidRequest(
                    "`target` must be a non-empty string: a document path, folder, section id, title or alias".into(),
                ))
            }
        };
        let caveats = match args.get("caveats") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(RetrieveError::InvalidRequest(
                    "`caveats` must be a boolean".into(),
                ))
            }
        };
        let h = self.retriever.handoff(&target, caveats).await?;
        Ok(structured(h.text_lines().join("\n"), &h))
    }

    async fn search(&self, args: Value) -> Result<CallToolResult, RetrieveError> {
        let req = search_args(
            &args,
            mcp_schema::SEARCH_FIELDS,
            "search_docs",
            mcp_schema::SEARCH_DEFAULT_LIMIT,
        )?;
        let r = self.retriever.search(&req.query, &req.options).await?;
        let budget = self.budget.bytes();
        let render = |keep: usize, allowance: usize| {
            let result = search_result(&req.query, &r, keep, allowance, self.budget.tokens);
            let size = result_size(&result);
            (result, size)
        };
        Ok(fit_response(r.documents.len(), budget, render))
    }

    async fn passage(&self, args: Value) -> Result<CallToolResult, RetrieveError> {
        let req = &passage_args(&args, "read_passage")?;
        let r = &self.retriever;
        within_budget(self.budget.bytes(), |n| async move {
            let p = r.read_passage_page(req, n).await?;
            Ok(structured(passage_text(&p), &p))
        })
        .await
    }

    async fn document(&self, args: Value) -> Result<CallToolResult, RetrieveError> {
        let req = &crate::retriever::document_args(&args, "read_document")?;
        let r = &self.retriever;
        within_budget(self.budget.bytes(), |n| async move {
            let d = r.read_document(req, n).await?;
            Ok(structured(document_text(&d), &d))
        })
        .await
    }
}

/// The first result `read(allowance)` gives that fits in `budget` bytes: the text goes
/// out twice (text content and structured content), so the allowance starts at 2/5 of
/// the budget less 2 KiB and shrinks in proportion until it fits (or is 256 bytes).
async fn within_budget<F, Fut>(budget: usize, mut read: F) -> Result<CallToolResult, RetrieveError>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Result<CallToolResult, RetrieveError>>,
{
    let mut allowance = budget.saturating_sub(2048) * 2 / 5;
    loop {
        let result = read(allowance.max(1)).await?;
        let size = result_size(&result);
        if size <= budget || allowance <= 256 {
            return Ok(result);
        }
        allowance = allowance * budget / size * 9 / 10;
    }
}

/// The `search_docs` result with passages fitted into `allowance` bytes (in the text and
/// in the structured content alike).
fn search_result(
    query: &str,
    r: &Retrieval,
    keep: usize,
    allowance: usize,
    tokens: usize,
) -> CallToolResult {
    let docs = &r.documents[..keep.min(r.documents.len())];
    let contents = fit_contents(docs, allowance / 2);
    let results = docs
        .iter()
        .zip(contents.iter().cloned())
        .enumerate()
        .map(|(i, (d, c))| SearchResult::from_document(i, d, false).with_content(true, c))
        .collect();
    let envelope = SearchEnvelope::of(query, r, results);
    let mut text = format!(
        "{} passage(s) for {:?} (mode {})",
        envelope.results.len(),
        query,
        envelope.mode
    );
    if let Some(why) = &r.degraded {
        text.push_str(&format!("; answered lexically: {why}"));
    }
    if r.stale {
        text.push_str("; the index is stale (see index_status)");
    }
    for s in &envelope.results {
        text.push_str(&format!("\n{}", result_line(s)));
    }
    if let Some(note) = &envelope.note {
        text.push_str(&format!("\n{note}"));
    }
    let mut left_out = 0;
    for (s, c) in envelope.results.iter().zip(&contents) {
        match c {
            Some(c) => text.push_str(&format!(
                "\n\n[{}] {}:{} (lines {}-{})\n{c}",
                s.rank,
                printable(&s.path),
                s.match_line,
                s.start_line,
                s.end_line
            )),
            None => left_out += 1,
        }
    }
    let cut = contents
        .iter()
        .flatten()
        .filter(|c| c.ends_with(crate::retriever::CUT_MARK))
        .count();
    if envelope.results_left_out > 0 {
        text.push_str(&format!(
            "\n\n({} more result(s) left out to stay under {tokens} tokens: ask for a smaller limit or narrow the query with path_prefix or globs)",
            envelope.results_left_out
        ));
    }
    if left_out + cut > 0 {
        text.push_str(&format!(
            "\n\n({} passage(s) cut and {left_out} left out to stay under {tokens} tokens: read them with read_passage and their id)",
            cut
        ));
    }
    structured(text, &envelope)
}

/// One numbered line of a result list.
fn result_line(s: &SearchResult) -> String {
    let heading = name_field(&if s.heading_path.is_empty() {
        s.title.clone()
    } else {
        s.heading_path.join(" › ")
    });
    let mut stale = s.stale_reason.as_ref().map_or(String::new(), |r| {
        format!(" · STALE: {r} (text as indexed)")
    });
    if s.confidence == crate::graph::Confidence::Fuzzy {
        stale.push_str(" · confidence: fuzzy (reached through a fuzzy relation)");
    }
    // the kind, for an index with code: documents stay as they were
    let kind = match s.kind {
        "document" => String::new(),
        k => format!("[{k}] "),
    };
    format!(
        "{}. {kind}{}:{} · {} · lines {}-{} · score {:.3} · lexical match: {} · id: {}{stale}",
        s.rank,
        printable(&s.path),
        s.match_line,
        heading,
        s.start_line,
        s.end_line,
        s.score,
        if s.lexical_match { "yes" } else { "no" },
        s.id
    )
}

fn passage_text(p: &Passage) -> String {
    let heading = if p.heading_path.is_empty() {
        String::new()
    } else {
        format!(" · {}", name_field(&p.heading_path.join(" › ")))
    };
    let page = match p.next_start_line {
        Some(next) => format!(
            "\nThis page holds lines {}-{} of {}-{}; for the next page call read_passage with start_line={next}{}",
            p.start_line,
            p.end_line,
            p.start_line,
            p.range_end_line,
            if p.range_end_line < p.total_lines {
                format!(" and end_line={}", p.range_end_line)
            } else {
                String::new()
            }
        ),
        None if p.truncated => format!(
            "\nLine {} is longer than one page: it was cut (ends with …); its rest is not served",
            p.end_line
        ),
        None => String::new(),
    };
    let stale = p
        .stale_reason
        .as_ref()
        .map_or(String::new(), |r| format!("\nSTALE: {r}"));
    format!(
        "{} (of {} lines){heading}{page}{stale}\n\n{}",
        printable(&p.source),
        p.total_lines,
        p.text
    )
}

fn document_text(d: &crate::retriever::Document) -> String {
    let shown = d.chunks.len();
    let mut text = format!(
        "{} (root {}): sections {}-{} of {}",
        printable(&d.path),
        d.root,
        d.from + 1,
        d.from + shown,
        d.total_chunks
    );
    if let Some(next) = d.next_from {
        text.push_str(&format!(
            "; for the next page call read_document with from={next}"
        ));
    }
    if let Some(r) = &d.stale_reason {
        text.push_str(&format!("\nSTALE: {r}"));
    }
    for c in &d.chunks {
        let cut = if c.truncated {
            " (cut: read the rest with read_passage)"
        } else {
            ""
        };
        let heading = if c.heading_path.is_empty() {
            "(before the first heading)".to_string()
        } else {
            name_field(&c.heading_path.join(" › "))
        };
        text.push_str(&format!(
            "\n\n## {} · {}:{}-{}{cut}\n{}",
            heading,
            printable(&d.path),
            c.start_line,
            c.end_line,
            c.text
        ));
    }
    text
}

fn status_text(s: &IndexStatus) -> String {
    let st = &s.status;
    let mut text = format!(
        "{}: {} documents, {} chunks, generation {}",
        if st.fresh { "fresh" } else { "stale" },
        st.documents,
        st.chunks,
        st.generation
    );
    for r in &st.reasons {
        text.push_str(&format!("\n  {r}"));
    }
    for p in &st.read_in_part {
        text.push_str(&format!("\n  read in part: {p}"));
    }
    let v = &s.vectors;
    text.push_str(&match (&v.model, v.usable, &v.reason) {
        (Some(m), true, _) => format!(
            "\nembedder: {m} ({}-d), {} chunks embedded{}; vector and hybrid search available",
            v.dim.unwrap_or(0),
            v.embedded,
            v.store
                .as_deref()
                .map(|st| format!(", searched in {st}"))
                .unwrap_or_default()
        ),
        (m, _, reason) => format!(
            "\nembedder: {}; lexical search only ({})",
            m.as_deref().unwrap_or("none"),
            reason.as_deref().unwrap_or("no vectors")
        ),
    });
    text.push_str(&format!("\nroots: {}", s.roots.join(", ")));
    text
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DocfuseMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("docfuse", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "docfuse searches a local documentation index. Call search_docs with a question or keywords; each result has a path:line citation and an id. Call read_passage with an id to read the whole section (long sections come in pages), or with a path and lines. index_status says whether the index is fresh. Results marked STALE come from files changed since indexing: their text is the indexed one.",
            )
    }
}

/// A successful result: `text` for the model, `value` as structured content.
fn structured<T: Serialize>(text: String, value: &T) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = serde_json::to_value(value).ok();
    r
}

/// Bytes of a tool result as it goes out (its JSON).
fn result_size(r: &CallToolResult) -> usize {
    serde_json::to_vec(r).map_or(usize::MAX, |b| b.len())
}

/// A tool-level error the assistant can read.
fn tool_error(e: &RetrieveError) -> CallToolResult {
    let body = ErrorBody::from(e);
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
        "error ({}): {}",
        body.error.code, body.error.message
    ))]);
    r.structured_content = serde_json::to_value(&body).ok();
    r
}

/// Serves MCP on stdin/stdout until the client closes stdin; a client gone before the
/// handshake (`docfuse mcp < /dev/null`) is a quiet, successful end. The model is loaded
/// in the background at start so the first vector query is fast.
///
/// # Errors
/// When the protocol fails after it started, or the service task fails.
pub async fn serve_stdio(retriever: DocfuseRetriever, budget: Budget) -> std::io::Result<()> {
    let warm = retriever.clone();
    tokio::spawn(async move {
        if let Err(why) = warm.vector_health().await {
            // an index built lexical on purpose (--no-embeddings) is not a problem to report
            if !warm.index().lexical_by_choice() {
                tracing::warn!("vector search unavailable, answering lexically: {why}");
            }
        }
    });
    let (sdk_in, sdk_out, wire) = super::mcp_wire::wire(tokio::io::stdin(), tokio::io::stdout());
    let service = match DocfuseMcp::new(retriever, budget)
        .serve((sdk_in, sdk_out))
        .await
    {
        Ok(s) => s,
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), wire).await;
            return Ok(());
        }
        Err(e) => return Err(std::io::Error::other(e)),
    };
    service.waiting().await.map_err(std::io::Error::other)?;
    // every answer written; a client that keeps stdin open after the session ended is
    // not waited for
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), wire).await;
    Ok(())
}
