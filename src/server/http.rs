//! The HTTP API (axum on tokio), loopback by default.
//!
//! | route | what |
//! | --- | --- |
//! | `POST /v1/search` | JSON body `{"query", "limit", "mode", "filters": {"path_prefix", "globs", "exclude"}, "explain", "floor", "include_content"}` → the `docfuse search --json` envelope |
//! | `GET /v1/passage` | `?path=&start_line=&end_line=` or `?id=` (and `root=`) → a page of an indexed file's lines |
//! | `GET /v1/document` | `?path=` (and `root=`, `from=`) → a page of a document's chunks in file order |
//! | `GET /v1/handoff` | `?target=` (a document path, folder, section id, title or alias) and `caveats=true` → where to start reading, what to read before editing, where to edit, which checks apply |
//! | `GET /v1/status` | fresh or stale (and why), counts, the vector side |
//! | `POST /v1/refresh` | from this machine only (a loopback peer, no `Forwarded`/`X-Forwarded-For`/`X-Real-IP` header): starts a refresh job of the index (one at a time, through the writer lock; a request while one waits to start joins it) → `202 {"job", "status"}` |
//! | `GET /v1/refresh/{job}` | from this machine only: `{"job", "status": "queued"|"running"|"done"|"failed", "report"|"error"}` |
//! | `GET /healthz` | `{"status": "ok"|"degraded"|"failing", "index": "up"|"gone", "lexical": "up", "vector": "up"|"down", ...}` (503 when failing) |
//!
//! Every error is `{"error": {"code", "message"}}` with a 4xx status for a bad request
//! (400 bad input, 403 a path outside the roots or a foreign Host/Origin, 404 nothing
//! there, 405, 409 a mode the index cannot serve, 413 body too large, 415 not JSON) and a
//! 5xx for faults and load (500, 503 `timeout`, 503 `overloaded` with `Retry-After`).
//! Requests are bounded: body size, a per-request timeout, at most one search per core
//! at a time with at most `max_queued` more waiting (one more is refused at once; a
//! hybrid search first embeds its query in a lane of its own, one per core, whose queue
//! has the same bound), and
//! every response under the response budget. A request whose `Host` is not the server's own name, or whose
//! `Origin` is another site, is refused (DNS rebinding: a web page must not read the
//! docs through the developer's browser).

use super::jobs::{JobView, RefreshJobs, KEPT_JOBS};
pub use super::listen::{serve_connections, ConnLimits};
use super::ErrorBody;
use crate::retriever::{
    fit_contents, fit_response, passage_args, search_args, Budget, DocfuseRetriever, IndexStatus,
    Passage, RetrieveError, SearchEnvelope, SearchResult,
};
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Limits of the HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// A request taking longer is answered `503 timeout` (default 10 s). A search already
    /// running on the blocking pool finishes in the background.
    pub request_timeout: Duration,
    /// Largest request body (default 64 KiB); larger is `413`.
    pub max_body_bytes: usize,
    /// Every response stays under this budget (default 10,000 tokens ≈ 40 KB).
    pub budget: Budget,
    /// Host names (without port) a request's `Host` and `Origin` may name; `localhost`,
    /// `127.0.0.1` and `::1` always may.
    pub allowed_hosts: Vec<String>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_timeout: Duration::from_secs(10),
            max_body_bytes: 64 * 1024,
            budget: Budget::default(),
            allowed_hosts: Vec::new(),
        }
    }
}

/// The fields of `POST /v1/search`.
pub const SEARCH_FIELDS: &[&str] = &[
    "query",
    "limit",
    "mode",
    "filters",
    "explain",
    "floor",
    "include_content",
    "group",
    "agent",
];

/// Default `limit` of `POST /v1/search`.
pub const SEARCH_DEFAULT_LIMIT: usize = 10;

#[derive(Clone)]
struct AppState {
    retriever: DocfuseRetriever,
    config: Arc<HttpConfig>,
    refresh: Option<RefreshJobs>,
}

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Health {
    /// `ok`; `degraded` when the vector side is down (lexical search still works);
    /// `failing` (HTTP 503) when the index folder is gone from disk.
    pub status: &'static str,
    /// `up`, or `gone` when the index folder (its manifest) was deleted or moved: the
    /// server answers from what it loaded until it is restarted on a built index.
    pub index: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_reason: Option<String>,
    pub lexical: &'static str,
    pub vector: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vector_reason: Option<String>,
    pub generation: u64,
}

/// The routes over `retriever`, with the limits of `config` (no refresh jobs:
/// `POST /v1/refresh` says it is not enabled).
pub fn router(retriever: DocfuseRetriever, config: HttpConfig) -> Router {
    router_with(retriever, config, None)
}

/// [`router`], with `POST /v1/refresh` running `refresh` jobs.
pub fn router_with(
    retriever: DocfuseRetriever,
    config: HttpConfig,
    refresh: Option<RefreshJobs>,
) -> Router {
    let config = Arc::new(config);
    let state = AppState {
        retriever,
        config: config.clone(),
        refresh,
    };
    let routes = Router::new()
        .route("/v1/search", post(search))
        .route("/v1/passage", get(passage))
        .route("/v1/document", get(document))
        .route("/v1/handoff", get(handoff))
        .route("/v1/status", get(status))
        .route("/v1/refresh", post(refresh_submit))
        .route("/v1/refresh/{job}", get(refresh_get))
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state);
    with_limits(routes, &config)
}

/// Adds the Host/Origin check, the body limit and the per-request timeout (answered
/// `503` with the JSON error body) to `routes`.
pub fn with_limits(routes: Router, config: &HttpConfig) -> Router {
    let hosts: Arc<Vec<String>> = Arc::new(allowed_hosts(&config.allowed_hosts));
    routes
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            config.request_timeout,
            timeout,
        ))
        .layer(axum::middleware::from_fn_with_state(
            config.max_body_bytes,
            body_limit_message,
        ))
        .layer(axum::middleware::from_fn_with_state(hosts, host_guard))
}

/// Serves `app` on `listener` until `shutdown` resolves, with the default
/// [`ConnLimits`] (each request knows its peer's address: `POST /v1/refresh` answers
/// loopback peers only).
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_connections(listener, app, ConnLimits::default(), shutdown).await
}

/// An error response: a status, the JSON error body and, for a request refused under
/// load, the `Retry-After` delay in seconds (RFC 9110 §10.2.3).
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub ErrorBody, pub Option<u64>);

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError(status, ErrorBody::new(code, message), None)
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self.2 {
            Some(s) => {
                (self.0, [(header::RETRY_AFTER, s.to_string())], Json(self.1)).into_response()
            }
            None => (self.0, Json(self.1)).into_response(),
        }
    }
}

impl From<RetrieveError> for ApiError {
    fn from(e: RetrieveError) -> Self {
        let status = match e.code() {
            "bad_request" => StatusCode::BAD_REQUEST,
            "forbidden_path" => StatusCode::FORBIDDEN,
            "not_found" => StatusCode::NOT_FOUND,
            "vectors_unavailable" => StatusCode::CONFLICT,
            "overloaded" => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let retry_after = match e {
            RetrieveError::Overloaded { retry_after_s, .. } => Some(retry_after_s),
            _ => None,
        };
        ApiError(status, ErrorBody::from(&e), retry_after)
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
            _ => Self::bad_request(format!(
                "the request body is not valid JSON: {}",
                r.body_text()
            )),
        }
    }
}

/// A JSON response, and its size in bytes.
fn sized<T: Serialize>(v: T) -> (T, usize) {
    let n = serde_json::to_vec(&v).map_or(usize::MAX, |b| b.len());
    (v, n)
}

async fn search(
    State(s): State<AppState>,
    body: Result<Json<Value>, JsonRejection>,
) -> Result<Json<SearchEnvelope>, ApiError> {
    let Json(body) = body?;
    let req = search_args(
        &body,
        SEARCH_FIELDS,
        "the request body",
        SEARCH_DEFAULT_LIMIT,
    )?;
    let r = s.retriever.search(&req.query, &req.options).await?;
    let budget = s.config.budget.bytes();
    let envelope = |keep: usize, allowance: usize| {
        let docs = &r.documents[..keep];
        let contents = if req.include_content {
            fit_contents(docs, allowance)
        } else {
            vec![None; docs.len()]
        };
        let results = docs
            .iter()
            .zip(contents)
            .enumerate()
            .map(|(i, (d, c))| {
                SearchResult::from_document(i, d, false).with_content(req.include_content, c)
            })
            .collect();
        sized(SearchEnvelope::of(&req.query, &r, results))
    };
    Ok(Json(fit_response(r.documents.len(), budget, envelope)))
}

/// `GET /v1/passage` query parameters as the JSON arguments `passage_args` reads: line
/// numbers and root as numbers when they are digits.
fn passage_value(params: &HashMap<String, String>) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in params {
        let numeric = matches!(k.as_str(), "start_line" | "end_line" | "root" | "from");
        let value = match v.parse::<u64>() {
            Ok(n) if numeric => Value::from(n),
            _ => Value::from(v.clone()),
        };
        m.insert(k.clone(), value);
    }
    Value::Object(m)
}

async fn passage(
    State(s): State<AppState>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<Passage>, ApiError> {
    let Query(params) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    let req = passage_args(&passage_value(&params), "the query string")?;
    let r = &s.retriever;
    within_budget(s.config.budget.bytes(), |n| r.read_passage_page(&req, n)).await
}

/// The first page `read(allowance)` gives whose JSON fits in `budget` bytes: the text
/// allowance starts at 4/5 of the budget less 2 KiB (JSON escaping can grow text; the
/// other fields need room) and shrinks in proportion until it fits (or is 256 bytes).
async fn within_budget<T, F, Fut>(budget: usize, mut read: F) -> Result<Json<T>, ApiError>
where
    T: Serialize,
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::retriever::RetrieveError>>,
{
    let mut allowance = budget.saturating_sub(2048) * 4 / 5;
    loop {
        let (page, size) = sized(read(allowance.max(1)).await?);
        if size <= budget || allowance <= 256 {
            return Ok(Json(page));
        }
        allowance = allowance * budget / size * 9 / 10;
    }
}

async fn document(
    State(s): State<AppState>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<crate::retriever::Document>, ApiError> {
    let Query(params) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    let req = crate::retriever::document_args(&passage_value(&params), "the query string")?;
    let r = &s.retriever;
    within_budget(s.config.budget.bytes(), |n| r.read_document(&req, n)).await
}

async fn handoff(
    State(s): State<AppState>,
    query: Result<Query<HashMap<String, String>>, QueryRejection>,
) -> Result<Json<crate::retriever::Handoff>, ApiError> {
    let Query(params) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    if let Some(k) = params
        .keys()
        .find(|k| !matches!(k.as_str(), "target" | "caveats"))
    {
        return Err(ApiError::bad_request(format!(
            "unknown parameter `{k}`; /v1/handoff takes `target` and `caveats`"
        )));
    }
    let target = params
        .get("target")
        .filter(|t| !crate::analysis::is_blank(t))
        .ok_or_else(|| {
            ApiError::bad_request(
                "missing `target`: a document path, folder, section id, title or alias",
            )
        })?;
    let caveats = match params.get("caveats").map(String::as_str) {
        None | Some("false") | Some("0") => false,
        Some("true") | Some("1") | Some("") => true,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`caveats` must be true or false, got `{other}`"
            )))
        }
    };
    Ok(Json(s.retriever.handoff(target, caveats).await?))
}

async fn status(State(s): State<AppState>) -> Result<Json<IndexStatus>, ApiError> {
    Ok(Json(
        s.retriever
            .status()
            .await?
            .capped(crate::retriever::STATUS_LIST_CAP),
    ))
}

/// The refresh jobs, for a request from this machine.
fn refresh_jobs<'a>(s: &'a AppState, req: &Request) -> Result<&'a RefreshJobs, ApiError> {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    // a proxy on this machine connects from loopback on behalf of others: a forwarded
    // request is not from this machine
    let forwarded = ["forwarded", "x-forwarded-for", "x-real-ip"]
        .iter()
        .any(|h| req.headers().contains_key(*h));
    if !peer.is_some_and(is_loopback) || forwarded {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_remote",
            "refresh jobs are started only from this machine (a loopback address, not through a proxy)",
        ));
    }
    s.refresh.as_ref().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "this server runs no refresh jobs",
        )
    })
}

/// Loopback, also as an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`).
fn is_loopback(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        v4 => v4.is_loopback(),
    }
}

async fn refresh_submit(
    State(s): State<AppState>,
    req: Request,
) -> Result<(StatusCode, Json<JobView>), ApiError> {
    let jobs = refresh_jobs(&s, &req)?.clone();
    let body = axum::body::to_bytes(req.into_body(), s.config.max_body_bytes)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the server accepts",
            )
        })?;
    if !body.iter().all(u8::is_ascii_whitespace) {
        match serde_json::from_slice::<Value>(&body) {
            Ok(Value::Object(m)) if m.is_empty() => {}
            _ => {
                return Err(ApiError::bad_request(
                    "POST /v1/refresh takes no fields: send no body or `{}`",
                ))
            }
        }
    }
    Ok((StatusCode::ACCEPTED, Json(jobs.submit())))
}

async fn refresh_get(
    State(s): State<AppState>,
    Path(job): Path<String>,
    req: Request,
) -> Result<Json<JobView>, ApiError> {
    let jobs = refresh_jobs(&s, &req)?;
    let id: u64 = job
        .parse()
        .map_err(|_| ApiError::bad_request(format!("`{job}` is not a job number")))?;
    jobs.get(id).map(Json).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no refresh job {id} (the last {KEPT_JOBS} are kept)"),
        )
    })
}

async fn healthz(State(s): State<AppState>) -> (StatusCode, Json<Health>) {
    let vector = s.retriever.vector_health().await;
    let gone = s.retriever.index_gone();
    let code = if gone.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    let status = match (&gone, &vector) {
        (Some(_), _) => "failing",
        (None, Ok(())) => "ok",
        (None, Err(_)) => "degraded",
    };
    let health = Health {
        status,
        index: if gone.is_some() { "gone" } else { "up" },
        index_reason: gone,
        lexical: "up",
        vector: if vector.is_ok() { "up" } else { "down" },
        vector_reason: vector.err(),
        generation: s.retriever.index().generation(),
    };
    (code, Json(health))
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!(
            "no route `{}`; routes: POST /v1/search, GET /v1/passage, GET /v1/document, GET /v1/handoff, GET /v1/status, POST /v1/refresh, GET /v1/refresh/{{job}}, GET /healthz",
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

/// Names the limit in a `413`: "larger than 65536 bytes".
async fn body_limit_message(State(limit): State<usize>, req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let resp = next.run(req).await;
    if resp.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return resp;
    }
    let size = declared.map_or(String::new(), |n| format!(" ({n} bytes)"));
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
        format!("the request body{size} is larger than {limit} bytes, the most this server accepts (`--max-body-bytes`)"),
    )
    .into_response()
}

/// The host names always allowed, plus `extra`, lowercased, without brackets.
fn allowed_hosts(extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(
        extra
            .iter()
            .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase()),
    );
    // each name once (the bound address may repeat one), in the order given
    let mut seen = std::collections::HashSet::new();
    v.retain(|h| seen.insert(h.clone()));
    v
}

/// The host name of a `Host` value or an origin's authority: port and brackets removed.
fn host_name(authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("").to_string();
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.contains(':') => {
            h.to_string()
        }
        _ => a,
    }
}

/// Why `headers` are refused, if they are: a `Host` that is not an allowed name, or an
/// `Origin` of another site.
fn foreign(headers: &HeaderMap, hosts: &[String]) -> Option<String> {
    if let Some(h) = headers.get(header::HOST) {
        let name = h.to_str().map(host_name).unwrap_or_default();
        if !hosts.contains(&name) {
            return Some(format!(
                "Host `{}` is not this server's name; allowed: {} (add one with `--allow-host`)",
                name,
                hosts.join(", ")
            ));
        }
    }
    if let Some(o) = headers.get(header::ORIGIN) {
        let origin = o.to_str().unwrap_or("");
        let authority = origin.split_once("://").map(|(_, rest)| rest).unwrap_or("");
        let name = host_name(authority.split('/').next().unwrap_or(""));
        if !hosts.contains(&name) {
            return Some(format!(
                "requests from the web origin `{}` are refused (cross-site access to local docs)",
                origin.chars().take(100).collect::<String>()
            ));
        }
    }
    None
}

/// Why a request's `Host` is malformed, if it is: more than one `Host` header, or none on
/// an HTTP/1.1 request without an authority in its target (RFC 9112 §3.2: a server
/// answers either with 400).
fn bad_host(req: &Request) -> Option<String> {
    let n = req.headers().get_all(header::HOST).iter().count();
    if n > 1 {
        return Some(format!(
            "a request carries one Host header; this one carries {n}"
        ));
    }
    if n == 0 && req.version() == axum::http::Version::HTTP_11 && req.uri().authority().is_none() {
        return Some("an HTTP/1.1 request carries a Host header; this one has none".into());
    }
    None
}

async fn host_guard(State(hosts): State<Arc<Vec<String>>>, req: Request, next: Next) -> Response {
    if let Some(why) = bad_host(&req) {
        return ApiError::new(StatusCode::BAD_REQUEST, "bad_host", why).into_response();
    }
    match foreign(req.headers(), &hosts) {
        Some(why) => ApiError::new(StatusCode::FORBIDDEN, "forbidden_host", why).into_response(),
        None => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn an_overloaded_search_is_a_503_with_retry_after_and_the_error_shape() {
        let e = RetrieveError::Overloaded {
            queued: 64,
            retry_after_s: 1,
        };
        let resp = ApiError::from(e).into_response();
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "1");
        let other = ApiError::from(RetrieveError::NotFound("x".into())).into_response();
        assert_eq!(other.status(), StatusCode::NOT_FOUND);
        assert!(other.headers().get(header::RETRY_AFTER).is_none());
    }

    #[test]
    fn only_the_servers_own_names_and_origins_pass() {
        let hosts = allowed_hosts(&["docs.internal".into()]);
        for ok in [
            vec![("host", "127.0.0.1:7700")],
            vec![("host", "localhost")],
            vec![("host", "[::1]:7700")],
            vec![
                ("host", "Docs.Internal:80"),
                ("origin", "https://docs.internal"),
            ],
            vec![("origin", "http://localhost:7700")],
            vec![],
        ] {
            assert_eq!(foreign(&headers(&ok), &hosts), None, "{ok:?}");
        }
        for bad in [
            vec![("host", "evil.example")],
            vec![("host", "evil.example:7700")],
            vec![
                ("host", "127.0.0.1:7700"),
                ("origin", "https://evil.example"),
            ],
            vec![("host", "localhost"), ("origin", "null")],
        ] {
            assert!(foreign(&headers(&bad), &hosts).is_some(), "{bad:?}");
        }
    }
}
