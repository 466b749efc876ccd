//! Front ends for programs and assistants over the [`crate::retriever`] API: an HTTP API
//! ([`http`], axum on tokio) and an MCP server on stdio ([`mcp`], the official `rmcp`
//! SDK). Both open the index once and keep it (and the embedding model) loaded.
//!
//! Must not import: `cli`; sees the engine only through `retriever`. Never prints: the
//! MCP server owns stdout, logs go to stderr through `tracing`.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! `http` (axum: `/v1/search`, `/v1/passage`, `/v1/document`, `/v1/handoff`, `/v1/status`,
//! `POST /v1/refresh` and `/v1/refresh/{job}` for loopback peers only, `/healthz`, JSON
//! errors, Host/Origin guard, body limit, timeout), `listen.rs` (the accept loop: header and
//! idle timeout, connection cap), `jobs.rs` (refresh jobs one at a time
//! on a thread; what a job runs is handed in by `cli`, so the server never imports it) and
//! `mcp` (rmcp on stdio: `search_docs`, `read_passage`, `read_document`, `index_status`,
//! `handoff`; `mcp_schema.rs`: hand-written strict JSON Schemas; `mcp_wire.rs`: stdio
//! framing that answers malformed JSON-RPC with -32700/-32600); sees the engine only
//! through `retriever`; never prints

pub mod http;
pub mod jobs;
pub mod listen;
pub mod mcp;
pub mod mcp_schema;
pub mod mcp_wire;

use crate::retriever::RetrieveError;
use serde::Serialize;

/// The error body of every failed HTTP request and MCP tool call:
/// `{"error": {"code": "...", "message": "..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

/// A stable, machine-readable `code` and a human-readable `message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorDetail {
    /// `bad_request`, `forbidden_path`, `forbidden_host`, `forbidden_remote`, `not_found`, `method_not_allowed`,
    /// `payload_too_large`, `unsupported_media_type`, `vectors_unavailable`, `timeout`,
    /// `overloaded`, `internal`.
    pub code: &'static str,
    pub message: String,
}

impl ErrorBody {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        ErrorBody {
            error: ErrorDetail {
                code,
                message: message.into(),
            },
        }
    }
}

impl From<&RetrieveError> for ErrorBody {
    fn from(e: &RetrieveError) -> Self {
        // a fault of the server is logged; a refusal under load (`overloaded`) is the
        // client's to retry and would flood the log
        if e.code() == "internal" {
            tracing::error!("{e}");
        }
        ErrorBody::new(e.code(), e.to_string())
    }
}
