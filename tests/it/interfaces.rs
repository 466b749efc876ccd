//! What assistants and programs get back, on every interface at once: the same
//! validation (and wording) on CLI, HTTP, MCP and the library; responses under the
//! budget with pages that end on a line; the line that matched; the Host/Origin guard;
//! snippets without comments or link syntax; language names as terms.

use crate::common;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use common::*;
use docfuse::retriever::{Budget, DocfuseRetriever, PassageRequest, PathFilters, RetrieveOptions};
use docfuse::server::http::{router, HttpConfig};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use tower::ServiceExt;

/// A docs folder with `files` (path, text) indexed lexically into `DIR/idx`.
fn indexed(files: &[(&str, String)]) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("docs");
    for (p, text) in files {
        let path = root.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let o = docfuse(
        t.path(),
        &["index", "--index", "idx", "--no-embeddings", "docs"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idx = t.path().join("idx");
    (t, idx)
}

fn sample() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let o = docfuse(
        t.path(),
        &[
            "index",
            "--index",
            "idx",
            "--no-embeddings",
            sample_docs().to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let idx = t.path().join("idx");
    (t, idx)
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One HTTP request on the router: (status, JSON body, body size).
fn http(idx: &Path, config: HttpConfig, req: Request<Body>) -> (StatusCode, Value, usize) {
    let app = router(DocfuseRetriever::open(idx).unwrap(), config);
    rt().block_on(async {
        let resp = app.oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, v, bytes.len())
    })
}

/// The JSON answer to a search of `q` from the CLI (run in `dir`, index `idx` there) and
/// from HTTP.
fn cli_and_http_json(dir: &Path, idx: &Path, q: &str) -> [Value; 2] {
    let cli = stdout(&docfuse(dir, &["search", "--index", "idx", "--json", q]));
    let (_, h, _) = http(idx, HttpConfig::default(), post(&json!({"query": q})));
    [serde_json::from_str(&cli).unwrap(), h]
}

fn post(body: &Value) -> Request<Body> {
    Request::builder()
        .header(axum::http::header::HOST, "localhost")
        .method(Method::POST)
        .uri("/v1/search")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn get(uri: &str) -> Request<Body> {
    Request::builder()
        .header(axum::http::header::HOST, "localhost")
        .uri(uri)
        .body(Body::empty())
        .unwrap()
}

/// One validation case: the CLI flags, the JSON arguments (same for HTTP and MCP), the
/// library options, and what every interface must say.
struct Case {
    name: &'static str,
    cli: Vec<String>,
    json: Value,
    library: (String, RetrieveOptions),
    says: &'static str,
}

fn cases() -> Vec<Case> {
    let long = "x".repeat(40_000);
    let opts = |f: &dyn Fn(&mut RetrieveOptions)| {
        let mut o = RetrieveOptions::default();
        f(&mut o);
        o
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        Case {
            name: "empty query",
            cli: s(&["--", ""]),
            json: json!({"query": ""}),
            library: (String::new(), opts(&|_| {})),
            says: "`query` is empty",
        },
        Case {
            name: "blank query",
            cli: s(&["--", "   "]),
            json: json!({"query": "   "}),
            library: ("   ".into(), opts(&|_| {})),
            says: "`query` is empty",
        },
        Case {
            name: "invisible query",
            cli: s(&["--", "\u{200b}\u{2060}\u{feff} \u{1}"]),
            json: json!({"query": "\u{200b}\u{2060}\u{feff} \u{1}"}),
            library: ("\u{200b}\u{2060}\u{feff} \u{1}".into(), opts(&|_| {})),
            says: "`query` is empty",
        },
        Case {
            name: "long query",
            cli: vec!["--".into(), long.clone()],
            json: json!({"query": long}),
            library: (long.clone(), opts(&|_| {})),
            says: "at most 32768 bytes",
        },
        Case {
            name: "limit 0",
            cli: s(&["--limit", "0", "tasks"]),
            json: json!({"query": "tasks", "limit": 0}),
            library: ("tasks".into(), opts(&|o| o.limit = 0)),
            says: "`limit` must be an integer in 1..=100, got 0",
        },
        Case {
            name: "limit 101",
            cli: s(&["--limit", "101", "tasks"]),
            json: json!({"query": "tasks", "limit": 101}),
            library: ("tasks".into(), opts(&|o| o.limit = 101)),
            says: "`limit` must be an integer in 1..=100, got 101",
        },
        Case {
            name: "floor 1.5",
            cli: s(&["--floor", "1.5", "tasks"]),
            json: json!({"query": "tasks", "floor": 1.5}),
            library: ("tasks".into(), opts(&|o| o.floor = Some(1.5))),
            says: "`floor` must be a number in [0, 1], got 1.5",
        },
        Case {
            name: "bad glob",
            cli: s(&["--glob", "a/[b", "tasks"]),
            json: json!({"query": "tasks", "globs": ["a/[b"]}),
            library: (
                "tasks".into(),
                opts(&|o| {
                    o.filters = PathFilters {
                        globs: vec!["a/[b".into()],
                        ..Default::default()
                    }
                }),
            ),
            says: "bad glob `a/[b`",
        },
        Case {
            name: "unknown mode",
            cli: s(&["--mode", "fast", "tasks"]),
            json: json!({"query": "tasks", "mode": "fast"}),
            library: ("tasks".into(), opts(&|_| {})),
            says: "`mode` must be one of auto, lexical, vector, hybrid",
        },
    ]
}

#[test]
fn one_validation_same_outcome_and_wording_on_cli_http_mcp_and_library() {
    let (t, idx) = sample();
    let lib = DocfuseRetriever::open(&idx).unwrap();
    let mut mcp = McpClient::start(&idx, &[]);
    for c in cases() {
        // CLI: exit 2 and the message
        let mut args = vec!["search".to_string(), "--index".into(), "idx".into()];
        args.extend(c.cli.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = docfuse(t.path(), &refs);
        assert_eq!(o.status.code(), Some(2), "{}: CLI exit", c.name);
        assert!(
            stderr(&o).contains(c.says),
            "{}: CLI says {}",
            c.name,
            stderr(&o)
        );
        // HTTP: 400 bad_request and the message
        let mut body = c.json.clone();
        if let Some(g) = body.get("globs").cloned() {
            body.as_object_mut().unwrap().remove("globs");
            body["filters"] = json!({"globs": g});
        }
        let (status, v, _) = http(&idx, HttpConfig::default(), post(&body));
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{}: HTTP status {v}",
            c.name
        );
        assert_eq!(v["error"]["code"], "bad_request");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(c.says),
            "{}: HTTP says {v}",
            c.name
        );
        // MCP: a tool error with the same body
        let (r, _) = mcp.call("search_docs", c.json.clone());
        assert_eq!(r["isError"], true, "{}: MCP {r}", c.name);
        assert_eq!(r["structuredContent"]["error"]["code"], "bad_request");
        let msg = r["structuredContent"]["error"]["message"].as_str().unwrap();
        assert!(msg.contains(c.says), "{}: MCP says {msg}", c.name);
        // library (a mode is typed there: nothing to refuse)
        if c.name != "unknown mode" {
            let (q, o) = &c.library;
            let e = lib.search_blocking(q, o).unwrap_err();
            assert_eq!(e.code(), "bad_request");
            assert!(
                e.to_string().contains(c.says),
                "{}: library says {e}",
                c.name
            );
        }
    }
    // valid arguments as clients send them: 3.0 is an integer; "3" is refused by name
    let (r, _) = mcp.call(
        "search_docs",
        json!({"query": "tasks", "limit": 3.0, "mode": "lexical"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["structuredContent"]["results"]
            .as_array()
            .unwrap()
            .len()
            .min(3),
        r["structuredContent"]["results"].as_array().unwrap().len()
    );
    let (r, _) = mcp.call("search_docs", json!({"query": "tasks", "limit": "3"}));
    assert!(
        r["structuredContent"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`limit` must be an integer in 1..=100, got \"3\""),
        "{r}"
    );
    let (r, _) = mcp.call("search_docs", json!({"query": 5}));
    assert_eq!(
        r["structuredContent"]["error"]["message"],
        "`query` must be a string, got a number"
    );
    // an end_line past the end of the file is clamped
    let (r, _) = mcp.call(
        "read_passage",
        json!({"path": "guide/parallel.md", "start_line": 1, "end_line": 100000}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        r["structuredContent"]["end_line"],
        r["structuredContent"]["total_lines"]
    );
}

#[test]
fn the_same_query_gives_the_same_answer_on_every_interface() {
    let (t, idx) = sample();
    let q = "stop running tasks with a keyboard shortcut";
    let cli: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", q],
    )))
    .unwrap();
    let (_, http_v, _) = http(&idx, HttpConfig::default(), post(&json!({"query": q})));
    let mut mcp = McpClient::start(&idx, &[]);
    let (r, _) = mcp.call("search_docs", json!({"query": q, "limit": 10}));
    let lib = DocfuseRetriever::open(&idx)
        .unwrap()
        .search_blocking(q, &RetrieveOptions::default())
        .unwrap();
    let lib_ids: Vec<String> = lib.documents.iter().map(|d| d.id.clone()).collect();
    assert!(!lib_ids.is_empty());
    assert_eq!(result_ids(&cli), lib_ids);
    assert_eq!(result_ids(&http_v), lib_ids);
    assert_eq!(result_ids(&r["structuredContent"]), lib_ids);
    assert_eq!(
        cli["results"][0]["match_line"],
        http_v["results"][0]["match_line"]
    );
}

/// A page `n` lines long, one section starting at line 5.
fn long_section(n: usize) -> String {
    let mut s = String::from("# Big\n\nIntro.\n\n## Long part\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "filler line {i} with some ordinary words to make it longer\n"
        ));
    }
    s
}

#[test]
fn every_response_stays_under_the_budget_and_pages_end_on_a_line() {
    let big = long_section(3000);
    // more passages than the budget holds (a section is cut into pieces of about the
    // chunk budget: a paragraph of many lines is cut between its lines)
    let mut files = vec![("big.md", big.clone()), ("other.md", long_section(400))];
    for name in ["more1.md", "more2.md", "more3.md", "more4.md", "more5.md"] {
        files.push((name, long_section(100)));
    }
    let (_t, idx) = indexed(&files);
    let budget = Budget { tokens: 1_000 };
    let max = budget.bytes();
    // MCP: read the 3,000-line section by id, page by page
    let mut mcp = McpClient::start(&idx, &["--max-response-tokens", "1000"]);
    let (r, n) = mcp.call(
        "search_docs",
        json!({"query": "filler ordinary words", "limit": 20}),
    );
    assert!(n <= max, "search_docs: {n} bytes > {max}");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("to stay under 1000 tokens"),
        "{r}"
    );
    let id = r["structuredContent"]["results"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (mut r, n) = mcp.call("read_passage", json!({"id": id}));
    assert!(n <= max, "read_passage: {n} bytes");
    let lines: Vec<&str> = big.lines().collect();
    let mut text = String::new();
    let mut pages = 1;
    let section_end = r["structuredContent"]["range_end_line"].as_u64().unwrap();
    loop {
        let p = &r["structuredContent"];
        let (a, b) = (
            p["start_line"].as_u64().unwrap() as usize,
            p["end_line"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            p["text"],
            lines[a - 1..b].join("\n"),
            "a page is whole lines"
        );
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(p["text"].as_str().unwrap());
        let Some(next) = p["next_start_line"].as_u64() else {
            break;
        };
        assert_eq!(next as usize, b + 1);
        assert!(r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&format!("start_line={next}")));
        let (r2, n) = mcp.call(
            "read_passage",
            json!({"id": id, "start_line": next, "end_line": section_end}),
        );
        assert!(n <= max, "page {pages}: {n} bytes");
        r = r2;
        pages += 1;
    }
    assert!(pages > 5, "{pages} pages");
    assert_eq!(
        text,
        lines[4..].join("\n"),
        "the pages make the whole section"
    );
    // MCP: the whole of other.md as its sections, page by page, each page under the budget
    let other = long_section(400);
    let other_lines: Vec<&str> = other.lines().collect();
    let (mut from, mut pages, mut last_end) = (0u64, 0, 0usize);
    loop {
        let (r, n) = mcp.call("read_document", json!({"path": "other.md", "from": from}));
        assert!(n <= max, "read_document page {pages}: {n} bytes");
        assert_eq!(r["isError"], false, "{r}");
        let d = &r["structuredContent"];
        for c in d["chunks"].as_array().unwrap() {
            let (a, b) = (
                c["start_line"].as_u64().unwrap() as usize,
                c["end_line"].as_u64().unwrap() as usize,
            );
            assert!(a > last_end, "sections in order: {c}");
            last_end = b;
            let lines = other_lines[a - 1..b].join("\n");
            let text = c["text"].as_str().unwrap();
            match text.strip_suffix('…') {
                Some(kept) if c["truncated"] == true => assert!(lines.starts_with(kept)),
                _ => assert_eq!(text, lines),
            }
        }
        pages += 1;
        match d["next_from"].as_u64() {
            Some(next) => {
                assert!(r["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("from={next}")));
                from = next;
            }
            None => break,
        }
    }
    assert_eq!(
        last_end,
        other_lines.len(),
        "every section, to the last line"
    );
    let (r, _) = mcp.call("read_document", json!({"path": "../other.md"}));
    assert_eq!(
        r["structuredContent"]["error"]["code"], "forbidden_path",
        "{r}"
    );
    let (_, n) = mcp.call("index_status", json!({}));
    assert!(n <= max);
    // HTTP: search with contents, and a page of the passage
    let cfg = HttpConfig {
        budget,
        ..HttpConfig::default()
    };
    let (status, v, n) = http(
        &idx,
        cfg.clone(),
        post(&json!({"query": "filler ordinary words", "limit": 20, "include_content": true})),
    );
    assert_eq!(status, StatusCode::OK);
    assert!(n <= max, "HTTP search: {n} bytes");
    assert!(
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["content_note"].is_string()),
        "{v}"
    );
    let (status, v, n) = http(&idx, cfg, get("/v1/passage?path=big.md"));
    assert_eq!(status, StatusCode::OK);
    assert!(
        n <= max && v["next_start_line"].is_u64(),
        "{n} {}",
        v["next_start_line"]
    );
}

#[test]
fn results_cite_the_line_that_matched_on_every_interface() {
    let mut far = long_section(1500);
    far.push_str("the zyzzyva-token is here\n");
    let mut table = String::from("# Options\n\n| name | meaning |\n|---|---|\n");
    for i in 0..40 {
        table.push_str(&format!("| opt{i} | plain option {i} |\n"));
    }
    table.push_str("| quokka-flag | the rare one |\n");
    let cjk = "# 概要\n\nはじめに。\n\n東京都の説明です。\n".to_string();
    let long_line = format!(
        "# Long\n\n{} needle-term {}\n",
        "word ".repeat(280),
        "tail ".repeat(100)
    );
    let (t, idx) = indexed(&[
        ("far.md", far),
        ("table.md", table),
        ("cjk.md", cjk),
        ("long.md", long_line),
    ]);
    let expect = [
        ("zyzzyva-token", "far.md", 1507),
        ("quokka-flag", "table.md", 45),
        ("東京都", "cjk.md", 5),
    ];
    let mut mcp = McpClient::start(&idx, &[]);
    for (q, path, line) in expect {
        let v: Value = serde_json::from_str(&stdout(&docfuse(
            t.path(),
            &["search", "--index", "idx", "--json", q],
        )))
        .unwrap();
        assert_eq!(
            (
                v["results"][0]["path"].as_str(),
                v["results"][0]["match_line"].as_u64()
            ),
            (Some(path), Some(line)),
            "{q}: {v}"
        );
        let text = stdout(&docfuse(t.path(), &["search", "--index", "idx", q]));
        assert!(text.starts_with(&format!("{path}:{line} ")), "{q}: {text}");
        let (_, h, _) = http(&idx, HttpConfig::default(), post(&json!({"query": q})));
        assert_eq!(h["results"][0]["match_line"], line, "{q}");
        let (r, _) = mcp.call("search_docs", json!({"query": q}));
        assert!(
            r["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&format!("1. {path}:{line} ")),
            "{q}: {r}"
        );
    }
    // a long line: the snippet is a window around the term
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "needle-term"],
    )))
    .unwrap();
    let snippet = v["results"][0]["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("needle-term") && snippet.chars().count() <= 200,
        "{snippet}"
    );
}

#[test]
fn a_foreign_host_or_origin_is_refused_without_document_text() {
    let (_t, idx) = sample();
    let with = |pairs: &[(&str, &str)]| {
        let mut b = Request::builder().uri("/v1/passage?path=guide/parallel.md");
        for (k, v) in pairs {
            b = b.header(*k, *v);
        }
        http(&idx, HttpConfig::default(), b.body(Body::empty()).unwrap())
    };
    for bad in [
        vec![("host", "evil.example")],
        vec![("host", "evil.example:7700")],
        vec![
            ("host", "127.0.0.1:7700"),
            ("origin", "https://evil.example"),
        ],
    ] {
        let (status, v, _) = with(&bad);
        assert_eq!(status, StatusCode::FORBIDDEN, "{bad:?}");
        assert_eq!(v["error"]["code"], "forbidden_host");
        assert!(!v.to_string().contains("--jobs"), "no document text: {v}");
    }
    // two Host headers, or none on an HTTP/1.1 request, is a bad request (RFC 9112 §3.2)
    for bad in [vec![("host", "localhost"), ("host", "127.0.0.1")], vec![]] {
        let (status, v, _) = with(&bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}: {v}");
        assert_eq!(v["error"]["code"], "bad_host");
        assert!(!v.to_string().contains("--jobs"), "no document text: {v}");
    }
    let (status, _, _) = with(&[("host", "localhost:7700")]);
    assert_eq!(status, StatusCode::OK);
    let (status, v, _) = with(&[
        ("host", "localhost:7700"),
        ("origin", "http://localhost:7700"),
    ]);
    assert_eq!(status, StatusCode::OK, "{v}");
    let cfg = HttpConfig {
        allowed_hosts: vec!["docs.example".into()],
        ..HttpConfig::default()
    };
    let req = Request::builder()
        .uri("/healthz")
        .header("host", "docs.example")
        .body(Body::empty())
        .unwrap();
    assert_eq!(http(&idx, cfg, req).0, StatusCode::OK);
    // 413 names the limit
    let big = json!({"query": "x".repeat(70_000)});
    let (status, v, _) = http(&idx, HttpConfig::default(), post(&big));
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 65536 bytes"),
        "{v}"
    );
}

#[test]
fn comments_link_definitions_and_heading_attributes_are_neither_indexed_nor_shown() {
    let page = "# Install {#setup}\n\nRun the [installer][inst] first. <!-- zqcommentone -->\n<!--\nzqmultiline\n-->\n\n[inst]: https://example.com/zqdownloadurl\n".to_string();
    let mdx = "# Notes\n\nVisible words {/* zqmdxcomment */} here.\n".to_string();
    let (t, idx) = indexed(&[("install.md", page), ("notes.mdx", mdx)]);
    for hidden in [
        "zqcommentone",
        "zqmultiline",
        "zqmdxcomment",
        "zqdownloadurl",
    ] {
        let o = docfuse(t.path(), &["search", "--index", "idx", "--json", hidden]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{hidden} is not indexed: {}",
            stdout(&o)
        );
    }
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "installer"],
    )))
    .unwrap();
    let top = &v["results"][0];
    assert_eq!(top["id"], "install.md#setup", "{top}");
    assert_eq!(top["heading_path"], json!(["Install"]));
    assert_eq!(top["snippet"], "Run the installer first.");
    let (_, h, _) = http(
        &idx,
        HttpConfig::default(),
        post(&json!({"query": "installer"})),
    );
    assert_eq!(h["results"][0]["snippet"], "Run the installer first.");
}

#[test]
fn language_names_are_terms_of_their_own() {
    let (t, idx) = indexed(&[
        (
            "c.md",
            "# C notes\n\nA lone c here, and c again: c.\n".into(),
        ),
        (
            "cpp.md",
            "# Modern code\n\nFeatures of C++17 and templates.\n".into(),
        ),
        (
            "cs.md",
            "# Dotnet\n\nWrite it in C# or F# on .NET.\n".into(),
        ),
        ("node.md", "# Server\n\nRun it on node.js.\n".into()),
    ]);
    for (q, first) in [
        ("C++", "cpp.md"),
        ("C#", "cs.md"),
        ("F#", "cs.md"),
        (".NET", "cs.md"),
        ("node.js", "node.md"),
    ] {
        let v: Value = serde_json::from_str(&stdout(&docfuse(
            t.path(),
            &["search", "--index", "idx", "--json", "--", q],
        )))
        .unwrap();
        let paths: Vec<&str> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths.first(), Some(&first), "{q}: {paths:?}");
        assert!(
            !paths.contains(&"c.md"),
            "{q} must not match a lone c: {paths:?}"
        );
    }
    let _ = idx;
}

#[test]
fn mcp_with_stdin_closed_before_the_handshake_exits_quietly() {
    let (t, _idx) = sample();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["mcp", "--index", "idx"])
        .current_dir(t.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stdout.is_empty() && o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = PassageRequest::default();
}

#[test]
fn group_is_read_the_same_way_on_every_interface() {
    let mut page = String::from("# Guide\n\n## Frobnicating\n\n");
    for i in 0..12 {
        page.push_str(&format!(
            "Paragraph {i}: to frobnicate a widget, call the frobnicate command with the widget's name and wait for the frobnicator to answer with its status line.\n\n"
        ));
    }
    let (t, idx) = indexed(&[
        ("guide.md", page),
        ("other.md", "# Other\n\nOne frobnicate mention.\n".into()),
    ]);
    let q = "frobnicate widget";
    let lib = DocfuseRetriever::open(&idx).unwrap();
    let mut mcp = McpClient::start(&idx, &[]);
    for group in [true, false] {
        let mut args = vec!["search", "--index", "idx", "--json", "-n", "10"];
        if !group {
            args.push("--chunks");
        }
        args.push(q);
        let cli: Value = serde_json::from_str(&stdout(&docfuse(t.path(), &args))).unwrap();
        let (_, http_v, _) = http(
            &idx,
            HttpConfig::default(),
            post(&json!({"query": q, "limit": 10, "group": group})),
        );
        let (r, _) = mcp.call(
            "search_docs",
            json!({"query": q, "limit": 10, "group": group}),
        );
        let opts = RetrieveOptions {
            limit: 10,
            group,
            ..Default::default()
        };
        let lib_ids: Vec<String> = lib
            .search_blocking(q, &opts)
            .unwrap()
            .documents
            .iter()
            .map(|d| d.id.clone())
            .collect();
        assert_eq!(result_ids(&cli), lib_ids, "group {group}");
        assert_eq!(result_ids(&http_v), lib_ids, "group {group}");
        assert_eq!(
            result_ids(&r["structuredContent"]),
            lib_ids,
            "group {group}"
        );
        let guide = lib_ids.iter().filter(|i| i.starts_with("guide.md")).count();
        if group {
            assert_eq!(guide, 1, "one result per section: {lib_ids:?}");
        } else {
            assert!(guide > 1, "raw chunks: {lib_ids:?}");
        }
    }
    // a group that is not a boolean names the parameter
    let (status, v, _) = http(
        &idx,
        HttpConfig::default(),
        post(&json!({"query": q, "group": "no"})),
    );
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("group"),
        "{v}"
    );
    let (r, _) = mcp.call("search_docs", json!({"query": q, "group": "no"}));
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("group"), "{r}");
}

/// The ids of a search envelope's results, in order.
fn result_ids(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_line_longer_than_a_page_is_cut_and_said_to_be() {
    use docfuse::retriever::PassageRequest;
    let line = "word ".repeat(60_000) + "needleinhugeline"; // 300 KB: over one page
    let (_t, idx) = indexed(&[("huge.md", format!("# Huge\n\n{line}\n"))]);
    let r = DocfuseRetriever::open(&idx).unwrap();
    let p = r
        .read_passage_blocking(&PassageRequest {
            path: Some("huge.md".into()),
            start_line: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert!(p.truncated, "a cut line is truncation");
    assert_eq!(
        p.next_start_line, None,
        "no next page: the range ends at that line"
    );
    assert!(p.text.ends_with('…') && p.text.len() < line.len());
    let mut mcp = McpClient::start(&idx, &[]);
    let (v, _) = mcp.call("read_passage", json!({"path": "huge.md", "start_line": 3}));
    assert!(
        v.to_string().contains("longer than one page"),
        "{}",
        &v.to_string()[..300]
    );
}

#[test]
fn a_question_whose_words_no_passage_holds_says_so_on_every_interface() {
    let (t, idx) = indexed(&[
        (
            "deploy.md",
            "# What is the deploy step\n\nIt is the step that uploads the build.\n".into(),
        ),
        (
            "cache.md",
            "# The cache\n\nWhat the cache holds is the last build of each page.\n".into(),
        ),
    ]);
    let q = "what is the capital of France";
    // JSON (CLI and HTTP): the missing words, and no result counted as a lexical match
    for v in &cli_and_http_json(t.path(), &idx, q) {
        assert_eq!(v["missing_words"], json!(["capital", "france"]), "{v}");
        assert!(
            v["note"].as_str().unwrap().contains("may not cover"),
            "the JSON says it as the text does: {v}"
        );
        let results = v["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{v}");
        assert!(results.iter().all(|r| r["lexical_match"] == false), "{v}");
    }
    // text (CLI): a note on stderr and every result marked
    let o = docfuse(t.path(), &["search", "--index", "idx", q]);
    assert!(
        stderr(&o).contains("No passage contains `capital`, `france`"),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let heads: Vec<&str> = out.lines().filter(|l| !l.starts_with("    ")).collect();
    assert!(
        heads
            .iter()
            .all(|l| l.ends_with("[only common words match]")),
        "{heads:?}"
    );
    // MCP: the same note in the text
    let mut mcp = McpClient::start(&idx, &[]);
    let (r, _) = mcp.call("search_docs", json!({"query": q}));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("No passage contains `capital`, `france`"),
        "{text}"
    );
    // one word found, one not: named, and the results that hold the found word match
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &[
            "search",
            "--index",
            "idx",
            "--json",
            "what is the cache of France",
        ],
    )))
    .unwrap();
    assert_eq!(v["missing_words"], json!(["france"]), "{v}");
    assert_eq!(v["results"][0]["path"], "cache.md", "{v}");
    // a compound with one part in no passage is named as written, not by its part
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "cache_qzxv build"],
    )))
    .unwrap();
    assert_eq!(v["missing_words"], json!(["cache_qzxv"]), "{v}");
    assert_eq!(v["results"][0]["lexical_match"], true, "{v}");
    // every word found: nothing said, field left out
    let o = docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "deploy step"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v.get("missing_words").is_none() && v.get("note").is_none(),
        "{v}"
    );
    let o = docfuse(t.path(), &["search", "--index", "idx", "deploy step"]);
    assert!(!stderr(&o).contains("No passage"), "{}", stderr(&o));
    // a question of stop words only: they are its words, results match them
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "what is it"],
    )))
    .unwrap();
    assert!(v.get("missing_words").is_none(), "{v}");
    assert_eq!(v["results"][0]["lexical_match"], true, "{v}");
}

#[test]
fn under_path_filters_a_word_only_other_files_hold_is_missing_on_every_interface() {
    // several files and chunks before and after the filtered folder, so a chunk's file is
    // found by its ordinal, not by luck
    let long = |w: &str| {
        (1..=3)
            .map(|i| format!("## Part {i}\n\nThe {w} part {i} is described here.\n"))
            .collect::<String>()
    };
    let (t, idx) = indexed(&[
        ("a/intro.md", format!("# Intro\n\n{}", long("intro"))),
        (
            "b/deploy.md",
            "# Deploy\n\nThe deploy step uploads the build.\n".into(),
        ),
        ("b/notes.md", format!("# Notes\n\n{}", long("note"))),
        (
            "c/cache.md",
            "# Cache\n\nThe cache holds the last build of a page.\n".into(),
        ),
        ("d/zebra.md", format!("# Zebra\n\n{}", long("zebra"))),
    ]);
    let q = "cache the build";
    let json_of = |args: &[&str]| -> Value {
        let mut a = vec!["search", "--index", "idx", "--json"];
        a.extend_from_slice(args);
        serde_json::from_str(&stdout(&docfuse(t.path(), &a))).unwrap()
    };
    // no filter: every word is held somewhere
    let v = json_of(&[q]);
    assert!(v.get("missing_words").is_none(), "{v}");
    // under b/: `cache` is only in c/, so it is missing there (CLI, HTTP, MCP alike)
    let v = json_of(&["--path-prefix", "b/", q]);
    let (_, h, _) = http(
        &idx,
        HttpConfig::default(),
        post(&json!({"query": q, "filters": {"path_prefix": "b/"}})),
    );
    let mut mcp = McpClient::start(&idx, &[]);
    let (r, _) = mcp.call("search_docs", json!({"query": q, "path_prefix": "b/"}));
    for v in [&v, &h] {
        assert_eq!(v["missing_words"], json!(["cache"]), "{v}");
        assert!(v["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["path"].as_str().unwrap().starts_with("b/")));
    }
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("No passage the filters keep contains `cache`"),
        "{text}"
    );
    // the same with globs and excludes, on files before and after the held one
    let v = json_of(&["--glob", "d/*.md", "--glob", "a/*.md", q]);
    assert_eq!(v["missing_words"], json!(["cache", "build"]), "{v}");
    let v = json_of(&["--exclude", "c/**", q]);
    assert_eq!(v["missing_words"], json!(["cache"]), "{v}");
    // a filter that keeps the file holding the word: nothing missing
    let v = json_of(&["--glob", "c/*.md", q]);
    assert!(v.get("missing_words").is_none(), "{v}");
}

#[test]
fn a_cjk_question_is_not_told_its_bigrams_are_missing() {
    let (t, _idx) = indexed(&[
        ("tokyo.md", "# 東京\n\n東京の説明です。\n".into()),
        ("weather.md", "# 天気\n\n明日の天気は晴れ。\n".into()),
    ]);
    // 東京の天気 is searched as 東京, 京の, の天, 天気: the two words are found, the two
    // bigrams across them are in no passage and are no words of the question
    let v: Value = serde_json::from_str(&stdout(&docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "東京の天気"],
    )))
    .unwrap();
    assert!(v.get("missing_words").is_none(), "{v}");
    assert!(!v["results"].as_array().unwrap().is_empty(), "{v}");
}

/// A lone CJK character is found inside the bigrams that hold it, first (`口号`) or
/// second (`端口`, `服务`), on every interface that searches; a CJK word none of whose
/// bigrams any passage holds is missing as written; a folded word is reported as the
/// reader wrote it, lower-cased (`äöü`, not its folded `aou`).
#[test]
fn a_lone_cjk_character_is_found_and_missing_words_keep_the_readers_spelling() {
    let (t, idx) = indexed(&[
        ("zh.md", "# 配置\n\n修改端口号后需要重启服务。\n".into()),
        ("de.md", "# Umlaute\n\nDie Größe der Datei.\n".into()),
    ]);
    let search = |q: &str| -> (i32, Value) {
        let o = docfuse(t.path(), &["search", "--index", "idx", "--json", "--", q]);
        let v = serde_json::from_str(&stdout(&o)).unwrap_or(Value::Null);
        (o.status.code().unwrap_or(-1), v)
    };
    for q in ["口", "务", "端"] {
        let (code, v) = search(q);
        assert_eq!(code, 0, "{q}: {v}");
        assert_eq!(v["results"][0]["path"], json!("zh.md"), "{q}: {v}");
        assert!(v.get("missing_words").is_none(), "{q}: {v}");
        let (_, h, _) = http(&idx, HttpConfig::default(), post(&json!({"query": q})));
        assert_eq!(h["results"][0]["path"], json!("zh.md"), "{q}: {h}");
    }
    let (code, v) = search("口 数据库");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["missing_words"], json!(["数据库"]), "{v}");
    let (code, v) = search("数据库");
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["missing_words"], json!(["数据库"]), "{v}");
    let (code, v) = search("ÄÖÜ äöü");
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["missing_words"], json!(["äöü"]), "{v}");
    let (_, h, _) = http(
        &idx,
        HttpConfig::default(),
        post(&json!({"query": "Größe ÄÖÜ"})),
    );
    assert_eq!(h["missing_words"], json!(["äöü"]), "{h}");
}

/// Asking for many results under a small budget must not trade the best results' text
/// for a longer list of bare results (Hugo docs: `limit: 100` gave 37 results, no text).
#[test]
fn a_long_result_list_keeps_the_text_of_the_best_results() {
    let names: Vec<String> = (0..120).map(|i| format!("p{i}.md")).collect();
    let files: Vec<(&str, String)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let text = format!(
                "# Topic {i}\n\nThe widget sprocket of page {i}. {}\n",
                "More words about the widget and how it turns. ".repeat(12)
            );
            (n.as_str(), text)
        })
        .collect();
    let (_t, idx) = indexed(&files);
    let budget = Budget { tokens: 2_000 };
    let mut mcp = McpClient::start(&idx, &["--max-response-tokens", "2000"]);
    let (r, n) = mcp.call(
        "search_docs",
        json!({"query": "widget sprocket", "limit": 100}),
    );
    assert!(n <= budget.bytes(), "{n} bytes");
    let results = r["structuredContent"]["results"].as_array().unwrap();
    assert!(results.len() >= 3, "{}", results.len());
    let with_text = results.iter().filter(|r| r["content"].is_string()).count();
    assert!(
        results[0]["content"].is_string() && with_text >= 2,
        "{with_text} of {} results with text: {r}",
        results.len()
    );
    let (status, v, n) = http(
        &idx,
        HttpConfig {
            budget,
            ..HttpConfig::default()
        },
        post(&json!({"query": "widget sprocket", "limit": 100, "include_content": true})),
    );
    assert_eq!(status, StatusCode::OK);
    assert!(n <= budget.bytes(), "{n} bytes");
    assert!(v["results"][0]["content"].is_string(), "{v}");
}

#[test]
fn a_pasted_stack_trace_is_searched_on_its_message_on_every_interface() {
    let (t, idx) = indexed(&[
        (
            "internals.md",
            "# Transport internals\n\n`send` calls `handle_request`, which reads the \
             response in `_receive_event`.\n"
                .into(),
        ),
        (
            "timeouts.md",
            "# Timeouts\n\nA `ReadTimeout` is raised when the read operation timed out.\n".into(),
        ),
    ]);
    let q = "Traceback (most recent call last):\n  File \"/x/_client.py\", line 9, in send\n    \
             return self.handle_request(request)\n  File \"/x/_http11.py\", line 3, in \
             _receive_event\n    data = self._read()\nhttpx.ReadTimeout: The read operation \
             timed out";
    let want = "httpx.ReadTimeout: The read operation timed out";
    for v in &cli_and_http_json(t.path(), &idx, q) {
        assert_eq!(v["searched_as"], want, "{v}");
        assert_eq!(v["results"][0]["path"], "timeouts.md", "{v}");
    }
    let o = docfuse(t.path(), &["search", "--index", "idx", q]);
    assert!(
        stderr(&o).contains(&format!("searched as: {want}")),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).starts_with("timeouts.md"), "{}", stdout(&o));
    let mut mcp = McpClient::start(&idx, &[]);
    let (r, _) = mcp.call("search_docs", json!({"query": q}));
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(want), "{text}");
    let first = text.find("timeouts.md").expect("timeouts.md is a result");
    assert!(
        text.find("internals.md").is_none_or(|other| first < other),
        "{text}"
    );
}
