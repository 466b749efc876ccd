//! The MCP server (Model Context Protocol, official `rmcp` SDK) on stdio: tools
//! `search_docs`, `read_passage` and `index_status` over one opened index.
//!
//! stdout carries only protocol messages; logs go to stderr. Tool failures (a bad
//! argument, a path outside the roots) are tool results with `isError: true` and the
//! `{"error": {"code", "message"}}` body as structured content, so the assistant sees
//! the reason.

use super::ErrorBody;
use crate::retriever::{
    format_retrieved_documents, DocfuseRetriever, Mode, PassageRequest, PathFilters, RetrieveError,
    RetrieveOptions, SearchEnvelope, SearchResult,
};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most passages one `search_docs` call returns.
pub const MAX_RESULTS: u32 = 50;
/// Budget of the passage text in a `search_docs` answer, in tokens (≈ bytes / 4).
pub const SEARCH_TEXT_TOKENS: usize = 6000;

/// Arguments of `search_docs`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDocsArgs {
    /// The question or keywords, e.g. "how do I publish a crate" or "HashMap entry".
    pub query: String,
    /// Most passages to return, 1 to 50 (default 5).
    #[serde(default)]
    pub limit: Option<u32>,
    /// auto (default: hybrid when the index has usable vectors, else lexical), lexical
    /// (BM25F word matching), vector (semantic similarity) or hybrid (both fused).
    #[serde(default)]
    pub mode: Option<ModeArg>,
    /// Only passages whose path (relative to the indexed root) starts with this, e.g. "guide/".
    #[serde(default)]
    pub path_prefix: Option<String>,
    /// Only passages whose path matches one of these globs, e.g. ["commands/*.md"]
    /// (`*` stays within a folder, `**` crosses folders).
    #[serde(default)]
    pub globs: Option<Vec<String>>,
}

/// A search mode.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    Auto,
    Lexical,
    Vector,
    Hybrid,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Auto => Mode::Auto,
            ModeArg::Lexical => Mode::Lexical,
            ModeArg::Vector => Mode::Vector,
            ModeArg::Hybrid => Mode::Hybrid,
        }
    }
}

/// Arguments of `read_passage`: `id`, or `path` with an optional line range.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadPassageArgs {
    /// A result id from search_docs, e.g. "guide/install.md#install/from-source". Reads
    /// that chunk's lines (override with start_line/end_line).
    #[serde(default)]
    pub id: Option<String>,
    /// A file path relative to the indexed root, as shown in search results, e.g.
    /// "guide/install.md". Paths outside the indexed roots are refused.
    #[serde(default)]
    pub path: Option<String>,
    /// First line to read, 1-based (default: the chunk's first line, or 1).
    #[serde(default)]
    pub start_line: Option<u32>,
    /// Last line to read, inclusive (default: the chunk's last line when only an id is
    /// given, else the end of the file; at most 2000 lines are returned).
    #[serde(default)]
    pub end_line: Option<u32>,
    /// Root number when several indexed roots hold the same path (default: the first).
    #[serde(default)]
    pub root: Option<u32>,
}

/// The MCP server: one opened index, kept loaded between calls.
#[derive(Clone)]
pub struct DocfuseMcp {
    retriever: DocfuseRetriever,
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl DocfuseMcp {
    pub fn new(retriever: DocfuseRetriever) -> Self {
        DocfuseMcp {
            retriever,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "search_docs",
        description = "Search the indexed documentation. Returns the best passages (sections), each with its heading path, its path:start-end line range, its score, its id, and whether it matched the query's words lexically (lexical_match), followed by the passage texts (cut to about 6000 tokens in total). Use read_passage with a result's id or path and lines to read more.",
        annotations(title = "Search documentation", read_only_hint = true)
    )]
    async fn search_docs(
        &self,
        Parameters(args): Parameters<SearchDocsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.search(args).await {
            Ok(r) => r,
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "read_passage",
        description = "Read the exact text of an indexed documentation file: give a search result's id (reads that section), or a path relative to the indexed root with optional start_line and end_line (1-based, inclusive). Returns the lines with their path:start-end. Only files inside the indexed roots can be read.",
        annotations(title = "Read a passage", read_only_hint = true)
    )]
    async fn read_passage(
        &self,
        Parameters(args): Parameters<ReadPassageArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let req = PassageRequest {
            id: args.id,
            path: args.path,
            root: args.root.map(|r| r as usize),
            start_line: args.start_line,
            end_line: args.end_line,
        };
        Ok(match self.retriever.read_passage(&req).await {
            Ok(p) => {
                let heading = if p.heading_path.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", p.heading_path.join(" › "))
                };
                let more = if p.truncated {
                    format!(
                        " (cut at line {}; ask for the next lines with start_line)",
                        p.end_line
                    )
                } else {
                    String::new()
                };
                let stale = p
                    .stale_reason
                    .as_ref()
                    .map_or(String::new(), |r| format!("\nSTALE: {r}"));
                let text = format!(
                    "{} (of {} lines){heading}{more}{stale}\n\n{}",
                    p.source, p.total_lines, p.text
                );
                structured(text, &p)
            }
            Err(e) => tool_error(&e),
        })
    }

    #[tool(
        name = "index_status",
        description = "Tell whether the documentation index is fresh or stale against the files on disk (and why), how many documents and chunks it holds, its roots, and whether semantic (vector) search is available and with which embedder.",
        annotations(title = "Index status", read_only_hint = true)
    )]
    async fn index_status(&self) -> Result<CallToolResult, ErrorData> {
        Ok(match self.retriever.status().await {
            Ok(s) => {
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
                let v = &s.vectors;
                text.push_str(&match (&v.model, v.usable, &v.reason) {
                    (Some(m), true, _) => format!(
                        "\nembedder: {m} ({}-d), {} chunks embedded; vector and hybrid search available",
                        v.dim.unwrap_or(0),
                        v.embedded
                    ),
                    (m, _, reason) => format!(
                        "\nembedder: {}; lexical search only ({})",
                        m.as_deref().unwrap_or("none"),
                        reason.as_deref().unwrap_or("no vectors")
                    ),
                });
                text.push_str(&format!("\nroots: {}", s.roots.join(", ")));
                structured(text, &s)
            }
            Err(e) => tool_error(&e),
        })
    }
}

impl DocfuseMcp {
    async fn search(&self, args: SearchDocsArgs) -> Result<CallToolResult, RetrieveError> {
        if args.query.trim().is_empty() {
            return Err(RetrieveError::InvalidRequest("`query` is empty".into()));
        }
        let limit = args.limit.unwrap_or(5);
        if !(1..=MAX_RESULTS).contains(&limit) {
            return Err(RetrieveError::InvalidRequest(format!(
                "`limit` must be in 1..={MAX_RESULTS}, got {limit}"
            )));
        }
        let options = RetrieveOptions {
            limit: limit as usize,
            mode: args.mode.map_or(Mode::Auto, Mode::from),
            filters: PathFilters {
                path_prefix: args.path_prefix,
                globs: args.globs.unwrap_or_default(),
                exclude: Vec::new(),
            },
            ..RetrieveOptions::default()
        };
        let r = self.retriever.search(&args.query, &options).await?;
        let envelope = SearchEnvelope {
            query: args.query.clone(),
            mode: r.mode.name(),
            degraded: r.degraded.clone(),
            generation: r.generation,
            stale: r.stale,
            results: r
                .documents
                .iter()
                .enumerate()
                .map(|(i, d)| SearchResult::from_document(i, d, true))
                .collect(),
        };
        let mut text = format!(
            "{} passage(s) for {:?} (mode {})",
            envelope.results.len(),
            args.query,
            envelope.mode
        );
        if let Some(why) = &r.degraded {
            text.push_str(&format!("; answered lexically: {why}"));
        }
        for s in &envelope.results {
            let heading = if s.heading_path.is_empty() {
                s.title.clone()
            } else {
                s.heading_path.join(" › ")
            };
            let stale = s.stale_reason.as_ref().map_or(String::new(), |r| {
                format!(" · STALE: {r} (text as indexed)")
            });
            text.push_str(&format!(
                "\n{}. {}:{}-{} · {} · score {:.3} · lexical match: {} · id: {}{stale}",
                s.rank,
                s.path,
                s.start_line,
                s.end_line,
                heading,
                s.score,
                if s.lexical_match { "yes" } else { "no" },
                s.id
            ));
        }
        if !envelope.results.is_empty() && envelope.results.iter().all(|s| !s.lexical_match) {
            text.push_str(
                "\nNo passage contains the query's words: these are semantic neighbours only.",
            );
        }
        let passages = format_retrieved_documents(&r.documents, SEARCH_TEXT_TOKENS);
        if !passages.is_empty() {
            text.push_str("\n\n");
            text.push_str(&passages);
        }
        Ok(structured(text, &envelope))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DocfuseMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("docfuse", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "docfuse searches a local documentation index. Call search_docs with a question or keywords; each result has a path:start-end citation and an id. Call read_passage with an id (or a path and lines) to read a whole section. index_status says whether the index is fresh.",
            )
    }
}

/// A successful result: `text` for the model, `value` as structured content.
fn structured<T: Serialize>(text: String, value: &T) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = serde_json::to_value(value).ok();
    r
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

/// Serves MCP on stdin/stdout until the client closes stdin. The model is loaded in the
/// background at start so the first vector query is fast.
///
/// # Errors
/// When the protocol cannot start (stdin closed before `initialize`) or the service task
/// fails.
pub async fn serve_stdio(retriever: DocfuseRetriever) -> std::io::Result<()> {
    let warm = retriever.clone();
    tokio::spawn(async move {
        if let Err(why) = warm.vector_health().await {
            tracing::info!("vector search unavailable: {why}");
        }
    });
    let service = DocfuseMcp::new(retriever)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    service.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
