//! The HTTP API: every route and error case called on the router directly
//! (`tower::ServiceExt::oneshot`, no socket), plus `docfuse serve` over a real loopback
//! socket. Runs on a lexical-only index of the cargo book.

use crate::common;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use common::*;
use docfuse::retriever::DocfuseRetriever;
use docfuse::server::http::{router, with_limits, HttpConfig};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use tower::ServiceExt;

/// The cargo book indexed without embeddings, once per test binary.
fn cargo_index() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("server_http/cargo-book-lexical");
        let _ = std::fs::remove_dir_all(&dir);
        let out = docfuse(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &[
                "index",
                "--index",
                dir.to_str().unwrap(),
                "--no-embeddings",
                cargo_book().to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        dir
    })
}

fn app() -> Router {
    let retriever = DocfuseRetriever::open(cargo_index()).unwrap();
    router(retriever, HttpConfig::default())
}

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let ctype = resp.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(
        ctype.as_ref().and_then(|c| c.to_str().ok()),
        Some("application/json"),
        "every answer is JSON ({status})"
    );
    let v = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, v)
}

fn post(uri: &str, body: impl Into<String>) -> Request<Body> {
    Request::builder()
        .header(axum::http::header::HOST, "localhost")
        .method(Method::POST)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.into()))
        .unwrap()
}

fn get(uri: &str) -> Request<Body> {
    Request::builder()
        .header(axum::http::header::HOST, "localhost")
        .uri(uri)
        .body(Body::empty())
        .unwrap()
}

/// Asserts the stable error shape `{"error": {"code", "message"}}` and returns the code.
fn error_code(v: &Value) -> &str {
    let e = v["error"]
        .as_object()
        .unwrap_or_else(|| panic!("no error object: {v}"));
    assert_eq!(e.len(), 2, "only code and message: {v}");
    assert!(!e["message"].as_str().unwrap().is_empty());
    assert_eq!(v.as_object().unwrap().len(), 1, "{v}");
    e["code"].as_str().unwrap()
}

#[tokio::test]
async fn search_answers_the_cli_json_shape_with_the_same_values() {
    let app = app();
    let (status, v) = send(
        &app,
        post("/v1/search", r#"{"query": "publish a crate", "limit": 3}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["mode"], "lexical");
    assert_eq!(v["generation"], 1);
    assert!(v["degraded"].as_str().unwrap().contains("without vectors"));
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["path"], "reference/publishing.md");
    assert_eq!(results[0]["heading_path"][0], "Publishing on crates.io");
    assert_eq!(results[0]["rank"], 1);
    assert_eq!(results[0]["lexical_match"], true);
    assert!(results[0].get("content").is_none() && results[0].get("explain").is_none());
    let cli = docfuse(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &[
            "search",
            "--json",
            "--limit",
            "3",
            "--index",
            cargo_index().to_str().unwrap(),
            "publish a crate",
        ],
    );
    let cli: Value = serde_json::from_str(&stdout(&cli)).unwrap();
    assert_eq!(
        v, cli,
        "HTTP and `docfuse search --json` give the same JSON"
    );
}

#[tokio::test]
async fn filters_apply_before_the_top_k_cut() {
    let app = app();
    let query = |filters: Value| {
        json!({"query": "build the package", "limit": 5, "mode": "lexical", "filters": filters})
            .to_string()
    };
    let (_, all) = send(&app, post("/v1/search", query(json!({})))).await;
    let reference_in_top5 = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().unwrap().starts_with("reference/"))
        .count();
    assert!(
        reference_in_top5 < 5,
        "the test needs a query whose top 5 is mixed"
    );
    let (status, v) = send(
        &app,
        post("/v1/search", query(json!({"path_prefix": "reference/"}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 5, "{v}");
    assert!(
        paths.iter().all(|p| p.starts_with("reference/")),
        "{paths:?}"
    );
    let (_, v) = send(
        &app,
        post(
            "/v1/search",
            query(json!({"globs": ["commands/cargo-b*.md"], "exclude": ["**/cargo-bench.md"]})),
        ),
    )
    .await;
    let paths: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(!paths.is_empty());
    assert!(
        paths
            .iter()
            .all(|p| p.starts_with("commands/cargo-b") && *p != "commands/cargo-bench.md"),
        "{paths:?}"
    );
}

#[tokio::test]
async fn search_explains_and_includes_content_on_request() {
    let app = app();
    let body = r#"{"query": "cargo build release profile", "limit": 2, "explain": true, "include_content": true, "floor": 0}"#;
    let (status, v) = send(&app, post("/v1/search", body)).await;
    assert_eq!(status, StatusCode::OK);
    let r = &v["results"][0];
    assert!(r["explain"]["terms"].as_array().unwrap().len() >= 3, "{r}");
    assert!(r["explain"]["k1"].as_f64().unwrap() > 0.0);
    let content = r["content"].as_str().unwrap();
    let heading = r["heading_path"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .as_str()
        .unwrap();
    assert!(
        content.contains(heading),
        "content starts with the heading path: {content}"
    );
}

#[tokio::test]
async fn bad_search_requests_are_4xx_with_the_error_shape() {
    let app = app();
    let cases: Vec<(Request<Body>, StatusCode, &str)> = vec![
        (
            post("/v1/search", "{not json"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"limit": 3}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "x", "limt": 3}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "   "}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "x", "limit": 0}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "x", "limit": 101}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "x", "mode": "fuzzy"}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post("/v1/search", r#"{"query": "x", "floor": 2}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post(
                "/v1/search",
                r#"{"query": "x", "filters": {"globs": ["a/[b"]}}"#,
            ),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post(
                "/v1/search",
                r#"{"query": "x", "filters": {"prefix": "a"}}"#,
            ),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post(
                "/v1/search",
                format!(r#"{{"query": "{}"}}"#, "x".repeat(40_000)),
            ),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            post(
                "/v1/search",
                format!(r#"{{"query": "{}"}}"#, "x".repeat(70_000)),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
        ),
        (
            Request::builder()
                .header(axum::http::header::HOST, "localhost")
                .method(Method::POST)
                .uri("/v1/search")
                .body(Body::from(r#"{"query": "x"}"#))
                .unwrap(),
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
        ),
        (
            post("/v1/search", r#"{"query": "x", "mode": "hybrid"}"#),
            StatusCode::CONFLICT,
            "vectors_unavailable",
        ),
        (
            get("/v1/search"),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (
            post("/v1/status", "{}"),
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (get("/v2/search"), StatusCode::NOT_FOUND, "not_found"),
        (get("/"), StatusCode::NOT_FOUND, "not_found"),
    ];
    for (req, want_status, want_code) in cases {
        let what = format!("{} {}", req.method(), req.uri());
        let (status, v) = send(&app, req).await;
        assert_eq!(status, want_status, "{what}: {v}");
        assert_eq!(error_code(&v), want_code, "{what}: {v}");
    }
}

fn file_lines(rel: &str, start: usize, end: usize) -> String {
    let text = std::fs::read_to_string(cargo_book().join(rel)).unwrap();
    text.lines()
        .skip(start - 1)
        .take(end + 1 - start)
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn passages_are_exact_by_path_and_by_id() {
    let app = app();
    let (status, v) = send(&app, get("/v1/passage?path=faq.md&start_line=3&end_line=6")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["text"], file_lines("faq.md", 3, 6));
    assert_eq!(
        (v["start_line"].as_u64(), v["end_line"].as_u64()),
        (Some(3), Some(6))
    );
    assert_eq!(v["source"], "faq.md:3-6");
    assert_eq!(v["heading_path"][0], "Frequently Asked Questions");
    assert!(v["total_lines"].as_u64().unwrap() > 100);
    assert_eq!(v["truncated"], false);

    let (_, s) = send(
        &app,
        post("/v1/search", r#"{"query": "publish a crate", "limit": 1}"#),
    )
    .await;
    let top = &s["results"][0];
    let id = top["id"].as_str().unwrap();
    let uri = format!("/v1/passage?id={}", id.replace('#', "%23"));
    let (status, v) = send(&app, get(&uri)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["id"], top["id"]);
    assert_eq!(v["heading_path"], top["heading_path"]);
    let (a, b) = (
        top["start_line"].as_u64().unwrap(),
        top["end_line"].as_u64().unwrap(),
    );
    // an id reads its whole section: from the chunk's first line, at least to its last
    let end = v["end_line"].as_u64().unwrap();
    assert_eq!(v["start_line"].as_u64(), Some(a));
    assert!(end >= b, "{v}");
    assert_eq!(
        v["text"],
        file_lines("reference/publishing.md", a as usize, end as usize)
    );
}

/// Every page of `GET /v1/document` for `path` under `app`, following `next_from`.
async fn document_pages(app: &Router, path: &str) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut from = 0;
    loop {
        let (status, v) = send(app, get(&format!("/v1/document?path={path}&from={from}"))).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(v["from"].as_u64(), Some(from));
        let next = v["next_from"].as_u64();
        pages.push(v);
        match next {
            Some(n) => from = n,
            None => return pages,
        }
    }
}

#[tokio::test]
async fn a_document_reads_as_its_chunks_in_order_within_the_budget() {
    let path = "reference/manifest.md";
    for (app, budget_tokens) in [
        (app(), None),
        (
            router(
                DocfuseRetriever::open(cargo_index()).unwrap(),
                HttpConfig {
                    budget: docfuse::retriever::Budget { tokens: 1500 },
                    ..HttpConfig::default()
                },
            ),
            Some(1500usize),
        ),
    ] {
        let pages = document_pages(&app, path).await;
        let total = pages[0]["total_chunks"].as_u64().unwrap() as usize;
        let chunks: Vec<&Value> = pages
            .iter()
            .flat_map(|p| p["chunks"].as_array().unwrap())
            .collect();
        assert_eq!(chunks.len(), total, "every chunk once");
        assert!(total > 10, "{total}");
        let mut last_end = 0;
        for c in &chunks {
            let (a, b) = (
                c["start_line"].as_u64().unwrap() as usize,
                c["end_line"].as_u64().unwrap() as usize,
            );
            assert!(a > last_end, "in file order, not overlapping: {c}");
            last_end = b;
            let lines = file_lines(path, a, b);
            if c["truncated"] == true {
                let text = c["text"].as_str().unwrap();
                let kept = text.strip_suffix('…').expect("a cut chunk ends with …");
                assert!(lines.starts_with(kept), "the beginning of {}", c["id"]);
            } else {
                assert_eq!(c["text"], lines, "exact lines of {}", c["id"]);
            }
            assert!(c["id"].as_str().unwrap().starts_with(path));
        }
        assert_eq!(chunks[0]["heading_path"][0], "The Manifest Format");
        if let Some(t) = budget_tokens {
            assert!(pages.len() > 1, "a small budget pages the document");
            for p in &pages {
                let n = serde_json::to_vec(p).unwrap().len();
                assert!(n <= t * 4, "page of {n} bytes over a {t}-token budget");
            }
        }
    }

    let app = app();
    for (uri, status, code) in [
        (
            "/v1/document?path=../secret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/document?path=no/such.md",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        ("/v1/document", StatusCode::BAD_REQUEST, "bad_request"),
        (
            "/v1/document?path=faq.md&from=99999",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/document?path=faq.md&from=-1",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/document?path=faq.md&start_line=3",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ] {
        let (s, v) = send(&app, get(uri)).await;
        assert_eq!((s, error_code(&v)), (status, code), "{uri}: {v}");
    }
}

#[tokio::test]
async fn bad_passage_requests_are_refused_with_the_right_status() {
    let app = app();
    let cases = [
        (
            "/v1/passage?path=../secret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=guide/../../secret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=%2e%2e%2fsecret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=%252e%252e%252fsecret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=/etc/passwd",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=..%5Csecret.md",
            StatusCode::FORBIDDEN,
            "forbidden_path",
        ),
        (
            "/v1/passage?path=no/such.md",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "/v1/passage?path=FILES.sha256",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "/v1/passage?id=nope%23nothing",
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        ("/v1/passage", StatusCode::BAD_REQUEST, "bad_request"),
        (
            "/v1/passage?path=faq.md&start_line=abc",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/passage?path=faq.md&start_line=0",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/passage?path=faq.md&start_line=9&end_line=3",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/passage?path=faq.md&start_line=99999",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "/v1/passage?path=faq.md&lines=1-3",
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
    ];
    for (uri, want_status, want_code) in cases {
        let (status, v) = send(&app, get(uri)).await;
        assert_eq!(status, want_status, "{uri}: {v}");
        assert_eq!(error_code(&v), want_code, "{uri}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(!message.contains("root:x:0:0"), "no file content in errors");
    }
}

#[tokio::test]
async fn status_and_health_report_the_index_and_the_vector_side() {
    let app = app();
    let (status, v) = send(&app, get("/v1/status")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["fresh"], true);
    assert_eq!(v["documents"], 100);
    assert!(v["chunks"].as_u64().unwrap() > 1000);
    assert_eq!(v["reasons"], json!([]));
    assert_eq!(v["vectors"]["present"], false);
    assert_eq!(v["vectors"]["usable"], false);
    assert!(v["roots"][0].as_str().unwrap().ends_with("cargo-book"));
    let (status, v) = send(&app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["status"], "degraded");
    assert_eq!(v["lexical"], "up");
    assert_eq!(v["vector"], "down");
    assert!(v["vector_reason"]
        .as_str()
        .unwrap()
        .contains("without vectors"));
}

#[tokio::test]
async fn a_damaged_index_is_a_500_not_a_4xx() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let out = docfuse(
        tmp.path(),
        &[
            "index",
            "--index",
            dir.to_str().unwrap(),
            "--no-embeddings",
            sample_docs().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let app = router(DocfuseRetriever::open(&dir).unwrap(), HttpConfig::default());
    let gen = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("gen-"))
        .unwrap();
    std::fs::write(gen.path().join("files.json"), b"{\"files\": []}").unwrap();
    let (status, v) = send(&app, get("/v1/status")).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{v}");
    assert_eq!(error_code(&v), "internal");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("files.json"));
}

#[tokio::test]
async fn a_slow_request_is_a_503_timeout_with_the_error_shape() {
    let slow = Router::new().route(
        "/slow",
        axum::routing::get(|| async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            "late"
        }),
    );
    let cfg = HttpConfig {
        request_timeout: Duration::from_millis(50),
        ..HttpConfig::default()
    };
    let (status, v) = send(&with_limits(slow, &cfg), get("/slow")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(error_code(&v), "timeout");
}

#[test]
fn docfuse_serve_answers_over_a_loopback_socket_and_stops_on_sigterm() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["serve", "--addr", "127.0.0.1:0", "--index"])
        .arg(cargo_index())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    for _ in 0..10 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(rest) = line.split("http://").nth(1) {
            addr = rest.split_whitespace().next().map(str::to_string);
            break;
        }
    }
    let addr = addr.expect("the server says where it listens");
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let (code, v) = exchange(
        &addr,
        "POST",
        "/v1/search",
        Some(r#"{"query": "workspace members", "limit": 4}"#),
    );
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 4);
    assert!(v["results"][0]["path"].as_str().unwrap().ends_with(".md"));
    let (code, v) = exchange(&addr, "GET", "/healthz", None);
    assert_eq!((code, v["lexical"].as_str()), (200, Some("up")));
    let (code, v) = exchange(
        &addr,
        "GET",
        "/v1/passage?path=%2e%2e/%2e%2e/etc/passwd",
        None,
    );
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (403, Some("forbidden_path"))
    );
    let (code, _) = exchange(&addr, "POST", "/v1/search", Some("{"));
    assert_eq!(code, 400);
    let killed = std::process::Command::new("kill")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful stop on SIGTERM: {status:?}");
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopping"), "{rest}");
}

#[cfg(feature = "embeddings")]
#[tokio::test]
async fn hybrid_index_answers_hybrid_and_is_healthy() {
    let (_tmp, dir) = sample_index();
    let app = router(DocfuseRetriever::open(&dir).unwrap(), HttpConfig::default());
    let (status, v) = send(&app, get("/healthz")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (v["status"].as_str(), v["vector"].as_str()),
        (Some("ok"), Some("up")),
        "{v}"
    );
    let (status, v) = send(
        &app,
        post(
            "/v1/search",
            r#"{"query": "run tasks one after another", "limit": 3}"#,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["mode"], "hybrid");
    assert_eq!(v["degraded"], Value::Null);
    assert_eq!(v["results"][0]["path"], "guide/parallel.md");
    let (status, v) = send(&app, get("/v1/status")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["vectors"]["usable"], true);
    assert_eq!(v["vectors"]["model"], "all-MiniLM-L6-v2");
}

/// `req` as if it came from `peer`.
fn from_peer(mut req: Request<Body>, peer: &str) -> Request<Body> {
    let addr: std::net::SocketAddr = peer.parse().unwrap();
    req.extensions_mut()
        .insert(axum::extract::ConnectInfo(addr));
    req
}

#[tokio::test]
async fn refresh_jobs_answer_only_loopback_peers_and_take_no_fields() {
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = runs.clone();
    let jobs = docfuse::server::jobs::RefreshJobs::start(Box::new(move || {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(json!({"generation": 7}))
    }))
    .unwrap();
    let retriever = DocfuseRetriever::open(cargo_index()).unwrap();
    let with_jobs =
        docfuse::server::http::router_with(retriever, HttpConfig::default(), Some(jobs));
    for peer in [
        "10.1.2.3:5000",
        "[2001:db8::1]:5000",
        "[::ffff:10.0.0.1]:80",
    ] {
        let (status, v) = send(&with_jobs, from_peer(post("/v1/refresh", ""), peer)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{peer}");
        assert_eq!(error_code(&v), "forbidden_remote");
        let (status, _) = send(&with_jobs, from_peer(get("/v1/refresh/1"), peer)).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{peer}");
    }
    // no peer address known: refused too
    let (status, _) = send(&with_jobs, post("/v1/refresh", "")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // through a proxy on this machine: refused
    for h in ["forwarded", "x-forwarded-for", "x-real-ip"] {
        let mut req = from_peer(post("/v1/refresh", ""), "127.0.0.1:9");
        req.headers_mut().insert(h, "203.0.113.7".parse().unwrap());
        let (status, v) = send(&with_jobs, req).await;
        assert_eq!(
            (status, error_code(&v)),
            (StatusCode::FORBIDDEN, "forbidden_remote"),
            "{h}"
        );
    }
    let (status, v) = send(
        &with_jobs,
        from_peer(post("/v1/refresh", r#"{"roots": []}"#), "127.0.0.1:9"),
    )
    .await;
    assert_eq!(
        (status, error_code(&v)),
        (StatusCode::BAD_REQUEST, "bad_request")
    );
    assert_eq!(
        runs.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing ran yet"
    );
    for (peer, body) in [
        ("127.0.0.1:9", ""),
        ("[::1]:9", "{}"),
        ("[::ffff:127.0.0.1]:9", " "),
    ] {
        let (status, v) = send(&with_jobs, from_peer(post("/v1/refresh", body), peer)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{peer}: {v}");
        assert!(v["job"].as_u64().unwrap() >= 1, "{v}");
        assert!(["queued", "running", "done"].contains(&v["status"].as_str().unwrap()));
    }
    let mut last = Value::Null;
    for _ in 0..200 {
        let (status, v) = send(&with_jobs, from_peer(get("/v1/refresh/1"), "127.0.0.1:9")).await;
        assert_eq!(status, StatusCode::OK);
        last = v;
        if last["status"] == "done" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        last,
        json!({"job": 1, "status": "done", "report": {"generation": 7}})
    );
    let (status, v) = send(&with_jobs, from_peer(get("/v1/refresh/999"), "127.0.0.1:9")).await;
    assert_eq!(
        (status, error_code(&v)),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let (status, _) = send(&with_jobs, from_peer(get("/v1/refresh/x"), "127.0.0.1:9")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // a server without refresh jobs says so
    let (status, v) = send(&app(), from_peer(post("/v1/refresh", ""), "127.0.0.1:9")).await;
    assert_eq!(
        (status, error_code(&v)),
        (StatusCode::NOT_FOUND, "not_found")
    );
}

/// A temp folder with `docs/a.md` ("Alpha") indexed lexically as `idx`.
fn alpha_index() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    std::fs::create_dir_all(p.join("docs")).unwrap();
    std::fs::write(p.join("docs/a.md"), "# Alpha\n\nThe first page.\n").unwrap();
    let o = docfuse(p, &["index", "--no-embeddings", "--index", "idx", "docs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    tmp
}

#[test]
fn post_refresh_on_docfuse_serve_refreshes_and_the_server_follows() {
    let tmp = alpha_index();
    let p = tmp.path();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["serve", "--addr", "127.0.0.1:0", "--index", "idx"])
        .current_dir(p)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let addr = served_addr(&mut err);
    std::fs::write(
        p.join("docs/b.md"),
        "# Bravo\n\nA zeppelin page written while serving.\n",
    )
    .unwrap();
    let (code, v) = exchange(&addr, "POST", "/v1/refresh", None);
    assert_eq!(code, 202, "{v}");
    let job = v["job"].as_u64().unwrap();
    let mut done = Value::Null;
    for _ in 0..300 {
        let (code, v) = exchange(&addr, "GET", &format!("/v1/refresh/{job}"), None);
        assert_eq!(code, 200, "{v}");
        if matches!(v["status"].as_str(), Some("done" | "failed")) {
            done = v;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(done["status"], "done", "{done}");
    assert_eq!(done["report"]["files"]["added"], 1, "{done}");
    let generation = done["report"]["generation"].as_u64().unwrap();
    assert_eq!(generation, 2, "{done}");
    // the server answers from the new generation
    let mut found = Value::Null;
    for _ in 0..50 {
        let (code, v) = exchange(
            &addr,
            "POST",
            "/v1/search",
            Some(r#"{"query": "zeppelin"}"#),
        );
        assert_eq!(code, 200, "{v}");
        if v["generation"] == generation {
            found = v;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(found["results"][0]["path"], "b.md", "{found}");
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn a_path_held_by_two_roots_needs_its_root_on_every_read() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    for (d, text) in [("a", "alpha apples"), ("b", "bravo bananas")] {
        std::fs::create_dir_all(p.join(d)).unwrap();
        std::fs::write(
            p.join(d).join("README.md"),
            format!("# Readme\n\nThis is {text}.\n"),
        )
        .unwrap();
    }
    let o = docfuse(p, &["index", "--no-embeddings", "--index", "idx", "a", "b"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let app = router(
        DocfuseRetriever::open(&p.join("idx")).unwrap(),
        HttpConfig::default(),
    );
    let (status, v) = send(&app, post("/v1/search", r#"{"query": "bananas"}"#)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["results"][0]["root"], 1, "{v}");
    assert_eq!(v["results"][0]["path"], "README.md", "{v}");
    for route in ["/v1/passage?path=README.md", "/v1/document?path=README.md"] {
        let (status, v) = send(&app, get(route)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{route}: {v}");
        assert_eq!(error_code(&v), "bad_request");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("several roots (0, 1)"), "{msg}");
        let (status, v) = send(&app, get(&format!("{route}&root=9"))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{route}: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains("there is no root 9: the index has 2"), "{msg}");
        let (status, v) = send(&app, get(&format!("{route}&root=1"))).await;
        assert_eq!(status, StatusCode::OK, "{route}: {v}");
        assert_eq!(v["root"], 1, "{v}");
        assert!(v.to_string().contains("bravo bananas"), "{v}");
    }
}

#[cfg(feature = "embeddings")]
#[tokio::test]
async fn made_up_words_get_no_results_and_neighbours_are_flagged() {
    let (_tmp, dir) = sample_index();
    let app = router(DocfuseRetriever::open(&dir).unwrap(), HttpConfig::default());
    let (status, v) = send(&app, post("/v1/search", r#"{"query": "zxqv florbnik"}"#)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert_eq!(v["results"], serde_json::json!([]), "{v}");
    // no word of the question is in the docs, but its meaning is: neighbours, flagged
    let (status, v) = send(
        &app,
        post("/v1/search", r#"{"query": "abort ongoing work"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
    assert_eq!(v["semantic_neighbours_only"], true, "{v}");
    // words that are there: not flagged
    let (_, v) = send(
        &app,
        post("/v1/search", r#"{"query": "cancel running tasks"}"#),
    )
    .await;
    assert!(v.get("semantic_neighbours_only").is_none(), "{v}");
    // symbols are searched as written (no 400): none of these docs holds a rocket
    let (status, v) = send(&app, post("/v1/search", r#"{"query": "🚀"}"#)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        (v["mode"].as_str(), &v["results"]),
        (Some("lexical"), &json!([])),
        "{v}"
    );
}

/// The sample docs indexed with vectors in a new temporary folder (kept while the
/// returned guard lives), and the index folder.
fn sample_index() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("idx");
    let out = docfuse(
        tmp.path(),
        &[
            "index",
            "--index",
            dir.to_str().unwrap(),
            sample_docs().to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}\n(run `bash scripts/provision-models`)",
        stderr(&out)
    );
    (tmp, dir)
}

/// Serves `app()` over a loopback socket with `limits` on a runtime of its own; returns
/// the address and a sender that stops it.
fn served(
    limits: docfuse::server::http::ConnLimits,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let stop = async {
                let _ = rx.await;
            };
            docfuse::server::http::serve_connections(listener, app(), limits, stop)
                .await
                .unwrap();
        });
    });
    (addr_rx.recv().unwrap(), tx)
}

/// Reads until the server closes the connection (or `within` passes: `None`).
fn closed_within(s: &mut std::net::TcpStream, within: Duration) -> Option<Vec<u8>> {
    s.set_read_timeout(Some(within)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Some(got),
            Err(_) => return None,
        }
    }
}

const HEALTH: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

#[test]
fn idle_and_slow_header_connections_are_closed_after_the_header_timeout() {
    use std::io::Write;
    use std::net::TcpStream;
    let (addr, _stop) = served(docfuse::server::http::ConnLimits {
        max_connections: 64,
        header_read_timeout: Duration::from_millis(500),
        ..Default::default()
    });
    // sends nothing
    let mut silent = TcpStream::connect(addr).unwrap();
    // sends half a request head, then a byte at a time
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.")
        .unwrap();
    // a kept-alive connection after its answer
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(HEALTH).unwrap();
    let started = std::time::Instant::now();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(150));
        let _ = slow.write_all(b"0");
    }
    for (name, s) in [
        ("silent", &mut silent),
        ("slow", &mut slow),
        ("kept", &mut kept),
    ] {
        let got = closed_within(s, Duration::from_secs(5))
            .unwrap_or_else(|| panic!("the {name} connection was not closed within 5 s"));
        let text = String::from_utf8_lossy(&got);
        if name == "kept" {
            assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        } else {
            assert!(!text.contains("200 OK"), "{name}: {text}");
        }
    }
    assert!(started.elapsed() < Duration::from_secs(4));
}

#[test]
fn a_client_that_never_reads_its_answers_loses_its_connection_after_the_write_timeout() {
    use std::io::Write;
    use std::net::TcpStream;
    let (addr, _stop) = served(docfuse::server::http::ConnLimits {
        max_connections: 1,
        header_read_timeout: Duration::from_secs(60),
        write_stall_timeout: Duration::from_millis(500),
    });
    // pipelined requests for a large page (≈ 160 KB of JSON each), never read: the
    // socket buffers fill and the server's write stalls
    let mut stalled = TcpStream::connect(addr).unwrap();
    stalled
        .set_write_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let request = b"GET /v1/document?path=reference/config.md HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    let started = std::time::Instant::now();
    for _ in 0..2000 {
        if stalled.write_all(request).is_err() {
            break;
        }
    }
    // the one slot is taken until the stalled connection is closed; then a new client
    // is served
    let served_again = loop {
        let mut next = TcpStream::connect(addr).unwrap();
        next.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .unwrap();
        let got = closed_within(&mut next, Duration::from_secs(5)).unwrap_or_default();
        if String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200") {
            break started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the stalled connection still holds the only slot after 20 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    eprintln!("served again {served_again:?} after the stall began");
    drop(stalled);
}

#[test]
fn connections_over_the_cap_are_answered_503_and_the_server_goes_on() {
    use std::io::Write;
    use std::net::TcpStream;
    let (addr, _stop) = served(docfuse::server::http::ConnLimits {
        max_connections: 2,
        header_read_timeout: Duration::from_millis(800),
        ..Default::default()
    });
    let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut third = TcpStream::connect(addr).unwrap();
    third.write_all(HEALTH).unwrap();
    let got = closed_within(&mut third, Duration::from_secs(5)).expect("answered and closed");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 503"), "{text}");
    assert!(text.contains("Retry-After: 1"), "{text}");
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    let v: Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["error"]["code"], "overloaded");
    // the held ones time out, and their slots serve new clients
    std::thread::sleep(Duration::from_millis(1200));
    drop(held);
    let mut next = TcpStream::connect(addr).unwrap();
    next.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let got = closed_within(&mut next, Duration::from_secs(5)).expect("answered");
    assert!(String::from_utf8_lossy(&got).starts_with("HTTP/1.1 200"));
}

/// Polls `GET /healthz` at `addr` until `done` holds (up to 20 s); the last answer.
fn health_until(addr: &str, done: impl Fn(u16, &Value) -> bool) -> (u16, Value) {
    let started = std::time::Instant::now();
    loop {
        let (code, v) = exchange(addr, "GET", "/healthz", None);
        if done(code, &v) || started.elapsed() > Duration::from_secs(20) {
            return (code, v);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn health_follows_a_model_installed_later_and_an_index_folder_deleted() {
    let (tmp, dir) = sample_index();
    // served with the model folder empty: degraded, lexical answers
    let models = tmp.path().join("models/all-MiniLM-L6-v2");
    std::fs::create_dir_all(&models).unwrap();
    let (addr, _kill) = serve_with(&dir, &[("DOCFUSE_MODEL_DIR", models.as_path())]);
    let (code, v) = exchange(&addr, "GET", "/healthz", None);
    assert_eq!((code, v["status"].as_str()), (200, Some("degraded")), "{v}");
    assert!(
        v["vector_reason"].as_str().unwrap().contains("not found"),
        "{v}"
    );
    // the model is installed while the server runs: healthy without a restart
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    copy_tree(&real, &models);
    let (code, v) = health_until(&addr, |c, v| c == 200 && v["status"] == "ok");
    assert_eq!((code, v["status"].as_str()), (200, Some("ok")), "{v}");
    assert_eq!(v["index"], "up");
    // the index folder is deleted: failing, and status is not fresh, saying why
    std::fs::remove_dir_all(&dir).unwrap();
    let (code, v) = exchange(&addr, "GET", "/healthz", None);
    assert_eq!(
        (code, v["status"].as_str(), v["index"].as_str()),
        (503, Some("failing"), Some("gone")),
        "{v}"
    );
    assert!(
        v["index_reason"].as_str().unwrap().contains("is gone"),
        "{v}"
    );
    let (code, v) = exchange(&addr, "GET", "/v1/status", None);
    assert!(code == 200 || code == 500, "{code} {v}");
    if code == 200 {
        assert_eq!(v["fresh"], false, "{v}");
        assert!(v["reasons"][0].as_str().unwrap().contains("is gone"), "{v}");
    } else {
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no docfuse index"),
            "{v}"
        );
    }
}

#[test]
fn health_follows_an_onnx_runtime_library_repaired_while_serving() {
    let (tmp, dir) = sample_index();
    // a library that looks like one (ELF magic) but does not load: dlopen fails
    let ort_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/onnxruntime");
    let real = std::fs::read_dir(&ort_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so"))
        })
        .expect("run `bash scripts/provision-models`");
    let broken = tmp.path().join("libonnxruntime.so");
    let mut bytes = b"\x7fELF".to_vec();
    bytes.resize(4096, 0);
    std::fs::write(&broken, bytes).unwrap();
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/all-MiniLM-L6-v2");
    let (addr, _kill) = serve_with(
        &dir,
        &[
            ("DOCFUSE_MODEL_DIR", models.as_path()),
            ("DOCFUSE_ORT_DYLIB", broken.as_path()),
        ],
    );
    let (code, v) = exchange(&addr, "GET", "/healthz", None);
    assert_eq!((code, v["status"].as_str()), (200, Some("degraded")), "{v}");
    assert!(
        v["vector_reason"]
            .as_str()
            .unwrap()
            .contains("cannot load the ONNX Runtime library"),
        "{v}"
    );
    // the library is repaired while the server runs: hybrid again without a restart
    std::fs::copy(&real, &broken).unwrap();
    let (code, v) = health_until(&addr, |c, v| c == 200 && v["status"] == "ok");
    assert_eq!((code, v["status"].as_str()), (200, Some("ok")), "{v}");
}

/// A served process: its stderr stays open while the guard lives (a closed pipe would
/// fail the server's log writes), and the process is killed when dropped.
type Served = (KillOnDrop, BufReader<std::process::ChildStderr>);

/// `docfuse serve` of `dir` on a free loopback port with `env`: its address and the
/// guard that keeps it.
fn serve_with(dir: &Path, env: &[(&str, &Path)]) -> (String, Served) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"));
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--index"])
        .arg(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.stderr(std::process::Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let guard = KillOnDrop(child);
    (served_addr(&mut err), (guard, err))
}

/// Kills a child process when dropped (also when a test panics).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A one-off `docfuse search` of a folder a `docfuse serve` holds is answered by that
/// server (model and index loaded), with the very output it would print by itself; it
/// answers by itself when the server is gone or asked not to.
#[test]
fn a_one_off_search_is_answered_by_the_running_server_with_the_same_output() {
    let (tmp, dir) = sample_index();
    let runtime = tempfile::tempdir().unwrap();
    let rt = runtime.path().to_str().unwrap();
    let idx = dir.to_str().unwrap();
    let search = |extra: &[&str], log: &str| {
        let mut args = vec!["search", "--index", idx];
        args.extend_from_slice(extra);
        docfuse_env(
            tmp.path(),
            &args,
            &[("XDG_RUNTIME_DIR", rt), ("DOCFUSE_LOG", log)],
        )
    };
    // a search answered by this process: right, and not by a server
    let answered_here = || {
        let o = search(&["--json", "parallel jobs"], "docfuse=debug");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(!err.contains("answered by the server"), "{err}");
    };
    let (_addr, mut served) = serve_with(&dir, &[("XDG_RUNTIME_DIR", runtime.path())]);
    for extra in [
        &["--json", "--mode", "hybrid", "run tasks in parallel"][..],
        &["--explain", "parallel jobs"],
        &["--json", "zxqv florbnik"],
    ] {
        let by_server = search(extra, "docfuse=debug");
        assert!(
            stderr(&by_server).contains("answered by the server"),
            "{extra:?}: {}",
            stderr(&by_server)
        );
        let mut alone_args = extra.to_vec();
        alone_args.insert(0, "--no-daemon");
        let alone = search(&alone_args, "off");
        assert_eq!(by_server.status.code(), alone.status.code(), "{extra:?}");
        assert_eq!(stdout(&by_server), stdout(&alone), "{extra:?}");
        assert!(!stdout(&alone).is_empty() || alone.status.code() == Some(1));
    }
    // a search with other settings than the server's is not answered by it
    let o = docfuse_env(
        tmp.path(),
        &["search", "--index", idx, "parallel jobs"],
        &[
            ("XDG_RUNTIME_DIR", rt),
            ("DOCFUSE_LOG", "docfuse=debug"),
            ("DOCFUSE_QUERY_CACHE", "off"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("answered by the server"),
        "{}",
        stderr(&o)
    );
    // a stopped server (Ctrl-Z) costs a moment, not the answer
    let pid = served.0 .0.id().to_string();
    let signal = |s: &str| std::process::Command::new("kill").args([s, &pid]).status();
    assert!(signal("-STOP").unwrap().success());
    let started = std::time::Instant::now();
    answered_here();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(signal("-CONT").unwrap().success());
    // the server gone without a word (its socket left behind): answered here
    served.0 .0.kill().unwrap();
    served.0 .0.wait().unwrap();
    answered_here();
    // a socket folder others may enter is never used
    std::fs::set_permissions(
        runtime.path().join("docfuse"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (_addr, _served) = serve_with(&dir, &[("XDG_RUNTIME_DIR", runtime.path())]);
    answered_here();
}

/// Whether process `pid` runs (a zombie, left for a parent that does not reap, does not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// The running `docfuse daemon` processes of the index folder `idx`.
fn residents(idx: &str) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
            running(pid) && args.contains(&&b"daemon"[..]) && args.contains(&idx.as_bytes())
        })
        .collect()
}

/// Asserts that, within 30 s, a search run by `search` is answered by a resident.
fn answers_soon(search: &dyn Fn() -> std::process::Output) {
    assert!(
        eventually(Duration::from_secs(30), || stderr(&search())
            .contains("answered by the server")),
        "the resident never answered"
    );
}

/// Waits up to `limit` for `done`.
fn eventually(limit: Duration, done: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// A hybrid search that had to load the model leaves a resident `docfuse daemon` behind
/// (unless `DOCFUSE_DAEMON_IDLE=0`): the next search is answered by it with the output it
/// would print by itself, and it exits when its index is removed or when idle.
#[test]
fn a_hybrid_search_leaves_a_resident_that_answers_the_next_and_exits_when_idle_or_removed() {
    let runtime = tempfile::tempdir().unwrap();
    let rt = runtime.path().to_str().unwrap();
    let search = |tmp: &Path, idx: &str, extra: &[&str], idle: &str| {
        let mut args = vec!["search", "--index", idx];
        args.extend_from_slice(extra);
        let env = [
            ("XDG_RUNTIME_DIR", rt),
            ("DOCFUSE_LOG", "docfuse=debug"),
            ("DOCFUSE_DAEMON_IDLE", idle),
        ];
        docfuse_env(tmp, &args, &env)
    };
    let started = |o: &std::process::Output| -> Option<u32> {
        let err = stderr(o);
        let at = err.find("started a resident docfuse (pid ")?;
        let rest = &err[at + "started a resident docfuse (pid ".len()..];
        rest.split(')').next()?.parse().ok()
    };
    let (tmp, dir) = sample_index();
    let idx = dir.to_str().unwrap();
    // turned off: none is started, nor by a lexical search
    let o = search(tmp.path(), idx, &["parallel jobs"], "0");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(started(&o), None, "{}", stderr(&o));
    let o = search(
        tmp.path(),
        idx,
        &["--mode", "lexical", "parallel jobs"],
        "30",
    );
    assert_eq!(started(&o), None, "{}", stderr(&o));
    // a hybrid search that loads the model (a question not asked before: the query-vector
    // cache does not hold it) starts one; it answers the next searches, as they would
    let o = search(tmp.path(), idx, &["--json", "jobs side by side"], "30");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pid = started(&o).expect("a resident was started");
    let query = ["--json", "--mode", "hybrid", "run tasks in parallel"];
    let by_resident = || search(tmp.path(), idx, &query, "30");
    answers_soon(&by_resident);
    // searches answered in-process meanwhile (a new question each) start no second one
    for q in ["first new question", "second new question"] {
        let o = search(tmp.path(), idx, &["--no-daemon", q], "30");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(residents(canonical.to_str().unwrap()), vec![pid]);
    let o = by_resident();
    assert_eq!(started(&o), None, "one resident is enough: {}", stderr(&o));
    let mut alone_args = query.to_vec();
    alone_args.insert(0, "--no-daemon");
    let alone = search(tmp.path(), idx, &alone_args, "30");
    assert_eq!(stdout(&o), stdout(&alone));
    assert!(running(pid));
    // its index removed: it exits
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        eventually(Duration::from_secs(10), || !running(pid)),
        "the resident outlived its index"
    );
    // idle for its timeout: it exits
    let (tmp, dir) = sample_index();
    let idx = dir.to_str().unwrap();
    let o = search(tmp.path(), idx, &["parallel jobs"], "2");
    let pid = started(&o).expect("a resident was started");
    answers_soon(&|| search(tmp.path(), idx, &["--json", "parallel jobs"], "2"));
    assert!(running(pid), "it answered, so it runs");
    assert!(
        eventually(Duration::from_secs(20), || !running(pid)),
        "the resident stayed past its idle timeout"
    );
    // asked by another docfuse build (an upgrade): it gives way at once, whatever its
    // idle timeout, so that the new build's search can start its own
    let (tmp, dir) = sample_index();
    let idx = dir.to_str().unwrap();
    let o = search(tmp.path(), idx, &["parallel jobs"], "300");
    let pid = started(&o).expect("a resident was started");
    answers_soon(&|| search(tmp.path(), idx, &["parallel jobs"], "300"));
    let other = tmp.path().join("docfuse-upgraded");
    std::fs::copy(env!("CARGO_BIN_EXE_docfuse"), &other).unwrap();
    let upgraded = || {
        let o = std::process::Command::new(&other)
            .args(["search", "--index", idx, "parallel jobs"])
            .env("XDG_RUNTIME_DIR", rt)
            .env("DOCFUSE_DAEMON_IDLE", "0")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    upgraded();
    // a search that gets no acknowledgement within 300 ms (a loaded machine) answers by
    // itself without asking; the next search of the new build asks again
    assert!(
        eventually(Duration::from_secs(20), || {
            if running(pid) {
                upgraded();
            }
            !running(pid)
        }),
        "the resident of the older build stayed"
    );
}

/// A refresh published while the server runs: a one-off search answers from the new
/// generation (the server's, once it follows, or its own).
#[test]
fn a_one_off_search_after_a_refresh_answers_the_new_generation() {
    let tmp = alpha_index();
    let p = tmp.path();
    let runtime = tempfile::tempdir().unwrap();
    let rt = runtime.path().to_str().unwrap();
    let (_addr, _served) = serve_with(&p.join("idx"), &[("XDG_RUNTIME_DIR", runtime.path())]);
    let env = [("XDG_RUNTIME_DIR", rt), ("DOCFUSE_LOG", "docfuse=debug")];
    let o = docfuse_env(p, &["search", "--index", "idx", "first page"], &env);
    assert!(
        stderr(&o).contains("answered by the server"),
        "{}",
        stderr(&o)
    );
    std::fs::write(p.join("docs/b.md"), "# Bravo\n\nA zeppelin page.\n").unwrap();
    let o = docfuse(p, &["refresh", "--index", "idx"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = docfuse_env(p, &["search", "--index", "idx", "--json", "zeppelin"], &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["generation"], 2, "{v}");
    assert_eq!(v["results"][0]["path"], "b.md", "{v}");
}

/// Issue 42, the folder store: while refreshes publish new text, a server's answers
/// (search with content, passages) carry the generation whose text they give.
#[test]
fn answers_name_the_generation_whose_text_they_give_while_refreshes_go_on() {
    let t = tempfile::tempdir().unwrap();
    let (docs, dir) = (t.path().join("docs"), t.path().join("index"));
    std::fs::create_dir_all(&docs).unwrap();
    let page = |k: u64| format!("# Quokka\n\nThe quokka note says version {k}.\n");
    let generation_of = |o: std::process::Output| -> u64 {
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["generation"].as_u64().unwrap()
    };
    std::fs::write(docs.join("quokka.md"), page(0)).unwrap();
    let (d, i) = (docs.to_str().unwrap(), dir.to_str().unwrap());
    let first = generation_of(docfuse(
        t.path(),
        &["index", "--json", "--no-embeddings", "--index", i, d],
    ));
    let mut version_of = std::collections::HashMap::from([(first, 0u64)]);
    let (addr, _served) = serve_with(&dir, &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients = quokka_clients(&addr, &stop);
    for k in 1..=5 {
        std::fs::write(docs.join("quokka.md"), page(k)).unwrap();
        let g = generation_of(docfuse(t.path(), &["refresh", "--json", "--index", i]));
        version_of.insert(g, k);
        std::thread::sleep(std::time::Duration::from_millis(400));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert_answers_match_their_generation(clients, &version_of);
}
