//! The HTTP API (axum on tokio), loopback by default.
//!
//! | route | what |
//! | --- | --- |
//! | `POST /v1/search` | JSON body `{"query", "limit", "mode", "filters": {"path_prefix", "globs", "exclude"}, "explain", "floor", "include_content"}` → the `docfuse search --json` envelope |
//! | `GET /v1/passage` | `?path=&start_line=&end_line=` or `?id=` (and `root=`) → the exact text of an indexed file's lines |
//! | `GET /v1/status` | fresh or stale (and why), counts, the vector side |
//! | `GET /healthz` | `{"status": "ok"|"degraded", "lexical": "up", "vector": "up"|"down", ...}` |
//!
//! Every error is `{"error": {"code", "message"}}` with a 4xx status for a bad request
//! (400 bad input, 403 a path outside the roots, 404 nothing there, 405, 409 a mode the
//! index cannot serve, 413 body too large, 415 not JSON) and a 5xx only for faults (500,
//! 503 `timeout`). Requests are bounded: body size, a per-request timeout, and at most
//! one search per core at a time (the others wait their turn).

use super::ErrorBody;
use crate::retriever::{
    DocfuseRetriever, IndexStatus, Mode, Passage, PassageRequest, PathFilters, RetrieveError,
    RetrieveOptions, SearchEnvelope, SearchResult,
};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Limits of the HTTP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// A request taking longer is answered `503 timeout` (default 10 s). A search already
    /// running on the blocking pool finishes in the background.
    pub request_timeout: Duration,
    /// Largest request body (default 64 KiB); larger is `413`.
    pub max_body_bytes: usize,
    /// Largest `limit` of a search (default 100).
    pub max_limit: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(10),
            max_body_bytes: 64 * 1024,
            max_limit: 100,
        }
    }
}

/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

#[derive(Clone)]
struct AppState {
    retriever: DocfuseRetriever,
    config: HttpConfig,
}

/// The body of `POST /v1/search`. Only `query` is required.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    pub query: String,
    /// 1..=`max_limit`, default 10.
    #[serde(default)]
    pub limit: Option<usize>,
    /// `auto` (default), `lexical`, `vector`, `hybrid`.
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub filters: PathFilters,
    #[serde(default)]
    pub explain: bool,
    /// In [0, 1]; default 1/3 of the best score.
    #[serde(default)]
    pub floor: Option<f32>,
    /// Add each result's `content` (title, heading path, passage text).
    #[serde(default)]
    pub include_content: bool,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// `ok`, or `degraded` when the vector side is down (lexical search still works).
    pub status: &'static str,
    pub lexical: &'static str,
    pub vector: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_reason: Option<String>,
    pub generation: u64,
}

/// The routes over `retriever`, with the limits of `config`.
pub fn router(retriever: DocfuseRetriever, config: HttpConfig) -> Router {
    let state = AppState { retriever, config };
    let routes = Router::new()
        .route("/v1/search", post(search))
        .route("/v1/passage", get(passage))
        .route("/v1/status", get(status))
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    with_limits(routes, &config)
}

/// Adds the body limit and the per-request timeout (answered `503` with the JSON error
/// body) to `routes`.
pub fn with_limits(routes: Router, config: &HttpConfig) -> Router {
    routes
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            config.request_timeout,
            timeout,
        ))
}

/// Serves `app` on `listener` until `shutdown` resolves.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// An error response: a status and the JSON error body.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub ErrorBody);

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError(status, ErrorBody::new(code, message))
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(self.1)).into_response()
    }
}

impl From<RetrieveError> for ApiError {
    fn from(e: RetrieveError) -> Self {
        let status = match e.code() {
            "bad_request" => StatusCode::BAD_REQUEST,
            "forbidden_path" => StatusCode::FORBIDDEN,
            "not_found" => StatusCode::NOT_FOUND,
            "vectors_unavailable" => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError(status, ErrorBody::from(&e))
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r.status() {
            StatusCode::PAYLOAD_TOO_LARGE => Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the server accepts",
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => Self::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as JSON with `Content-Type: application/json`",
            ),
            _ => Self::bad_request(r.body_text()),
        }
    }
}

async fn search(
    State(s): State<AppState>,
    body: Result<Json<SearchRequest>, JsonRejection>,
) -> Result<Json<SearchEnvelope>, ApiError> {
    let Json(req) = body?;
    let options = search_options(&req, &s.config)?;
    let r = s.retriever.search(&req.query, &options).await?;
    Ok(Json(SearchEnvelope {
        query: req.query,
        mode: r.mode.name(),
        degraded: r.degraded,
        generation: r.generation,
        stale: r.stale,
        results: r
            .documents
            .iter()
            .enumerate()
            .map(|(i, d)| SearchResult::from_document(i, d, req.include_content))
            .collect(),
    }))
}

/// Validates a search request into retriever options.
fn search_options(req: &SearchRequest, config: &HttpConfig) -> Result<RetrieveOptions, ApiError> {
    if req.query.trim().is_empty() {
        return Err(ApiError::bad_request("`query` is empty"));
    }
    if req.query.len() > MAX_QUERY_BYTES {
        return Err(ApiError::bad_request(format!(
            "`query` is longer than {MAX_QUERY_BYTES} bytes"
        )));
    }
    let limit = req.limit.unwrap_or(10);
    if !(1..=config.max_limit).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "`limit` must be in 1..={}, got {limit}",
            config.max_limit
        )));
    }
    Ok(RetrieveOptions {
        limit,
        mode: req.mode.unwrap_or(Mode::Auto),
        filters: req.filters.clone(),
        floor: req.floor,
        explain: req.explain,
    })
}

async fn passage(
    State(s): State<AppState>,
    query: Result<Query<PassageRequest>, QueryRejection>,
) -> Result<Json<Passage>, ApiError> {
    let Query(req) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    Ok(Json(s.retriever.read_passage(&req).await?))
}

async fn status(State(s): State<AppState>) -> Result<Json<IndexStatus>, ApiError> {
    Ok(Json(s.retriever.status().await?))
}

async fn healthz(State(s): State<AppState>) -> Json<Health> {
    let vector = s.retriever.vector_health().await;
    Json(Health {
        status: if vector.is_ok() { "ok" } else { "degraded" },
        lexical: "up",
        vector: if vector.is_ok() { "up" } else { "down" },
        vector_reason: vector.err(),
        generation: s.retriever.index().manifest().generation,
    })
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no route `{}`; routes: POST /v1/search, GET /v1/passage, GET /v1/status, GET /healthz",
            uri.path()
        ),
    )
}

async fn method_not_allowed(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("`{method}` is not allowed on `{}`", uri.path()),
    )
}

async fn timeout(State(limit): State<Duration>, req: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!(
                "the request took longer than {} ms; retry, or ask for fewer results",
                limit.as_millis()
            ),
        )
        .into_response(),
    }
}
