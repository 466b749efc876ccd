//! `docfuse mcp` end to end: driven by the official MCP Python SDK (installed by this test
//! into the target folder when missing) through initialize, tools/list and every tool on
//! a copy of the cargo book; traversal attempts are refused and a planted secret never
//! appears in any response. A second test speaks raw JSON-RPC to check that stdout
//! carries protocol messages only and that the server exits when stdin closes.
#![cfg(unix)]

use crate::common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The MCP Python SDK version the test installs (pinned: same client, same result).
const MCP_PY: &str = "mcp==2.3.0";

/// A folder where `import mcp` works, installing the SDK there when needed.
fn python_sdk() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-python-2.3.0");
    let importable = |dir: &Path| {
        Command::new("python3")
            .args(["-c", "import mcp, mcp.client.stdio"])
            .env("PYTHONPATH", dir)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !importable(&dir) {
        let out = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-warn-conflicts", "--target"])
            .arg(&dir)
            .arg(MCP_PY)
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "cannot install {MCP_PY} with pip:\n{}",
            stderr(&out)
        );
        assert!(
            importable(&dir),
            "{MCP_PY} installed but `import mcp` fails"
        );
    }
    dir
}

/// A copy of the cargo book indexed lexically, then one indexed file replaced by a
/// symlink to a secret outside the root, and a symlink to it planted at the top.
struct Setup {
    _tmp: tempfile::TempDir,
    index: PathBuf,
    root: PathBuf,
    secret_file: PathBuf,
    secret: String,
}

const LINKED: &str = "appendix/glossary.md";
const CHANGED: &str = "guide/cargo-toml-vs-cargo-lock.md";

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("docs");
    copy_tree(&cargo_book(), &root);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let secret = format!("DOCFUSE-SECRET-{nanos}-do-not-leak");
    let secret_file = tmp.path().join("secret-notes.md");
    std::fs::write(&secret_file, format!("# Secret\n\n{secret}\n")).unwrap();
    let index = tmp.path().join("idx");
    let out = docfuse(
        tmp.path(),
        &[
            "index",
            "--index",
            index.to_str().unwrap(),
            "--no-embeddings",
            root.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "index failed: {}", stderr(&out));
    let changed = root.join(CHANGED);
    let text = std::fs::read_to_string(&changed).unwrap();
    std::fs::write(&changed, format!("new 1\nnew 2\nnew 3\nnew 4\n{text}")).unwrap();
    let linked = root.join(LINKED);
    std::fs::remove_file(&linked).unwrap();
    std::os::unix::fs::symlink(&secret_file, &linked).unwrap();
    std::os::unix::fs::symlink(&secret_file, root.join("planted-link.md")).unwrap();
    Setup {
        _tmp: tmp,
        index,
        root,
        secret_file,
        secret,
    }
}

/// Ajv 8 (the validator strict MCP clients use), installed with npm into the target
/// folder when missing: the folder to put on `NODE_PATH`.
fn ajv() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ajv-8.17.1");
    let modules = dir.join("node_modules");
    if !modules.join("ajv/dist/2020.js").is_file() {
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(&dir)
            .arg("ajv@8.17.1")
            .output()
            .expect("npm runs (Node.js and npm are needed for the strict schema check)");
        assert!(
            out.status.success(),
            "cannot install ajv with npm:\n{}",
            stderr(&out)
        );
    }
    modules
}

#[test]
fn python_sdk_drives_every_tool_and_traversal_never_leaks() {
    let s = setup();
    let sdk = python_sdk();
    let transcript = s.index.with_file_name("transcript.json");
    let server_log = s.index.with_file_name("server-stderr.log");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/e2e_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_docfuse"))
        .args([&s.index, &s.root, &s.secret_file])
        .arg(LINKED)
        .args([&transcript, &server_log])
        .arg(CHANGED)
        .arg(cargo_book().join(CHANGED))
        .env("PYTHONPATH", &sdk)
        .env_remove("DOCFUSE_LOG")
        .output()
        .expect("python3 runs");
    let log = std::fs::read_to_string(&server_log).unwrap_or_default();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}\nserver stderr:\n{log}",
        stdout(&out),
        stderr(&out)
    );
    // Ajv in strict mode compiles every published schema
    let tools = transcript.with_file_name("tools.json");
    let out = Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/check_schemas.cjs"))
        .arg(&tools)
        .env("NODE_PATH", ajv())
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "Ajv (strict) refuses a tool schema:\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    let responses = std::fs::read_to_string(&transcript).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&responses).unwrap();
    let n = parsed.as_array().unwrap().len();
    assert!(n >= 30, "only {n} responses recorded");
    // every refused read is in the transcript, and the secret is nowhere
    assert!(responses.matches("forbidden_path").count() >= 21);
    assert!(
        !responses.contains(&s.secret),
        "the secret leaked into a response"
    );
    assert!(
        !log.contains(&s.secret),
        "the secret leaked into the server log"
    );
    assert!(!stdout(&out).contains(&s.secret) && !stderr(&out).contains(&s.secret));
}

/// Lines of the child's stdout, read on a thread so the test can time out.
fn lines_of(stdout: std::process::ChildStdout) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// `docfuse mcp` on `index` with log level `log`: the child, its stdout lines and stdin.
fn spawn_mcp(
    index: &Path,
    log: &str,
) -> (
    std::process::Child,
    std::sync::mpsc::Receiver<String>,
    std::process::ChildStdin,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["mcp", "--index"])
        .arg(index)
        .env("DOCFUSE_LOG", log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    let stdin = child.stdin.take().unwrap();
    (child, rx, stdin)
}

#[test]
fn stdout_carries_only_json_rpc_and_the_server_exits_on_eof() {
    let s = setup();
    let (mut child, rx, mut stdin) = spawn_mcp(&s.index, "debug");
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"cargo build --release","limit":2}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_passage","arguments":{"path":"../secret-notes.md"}}}"#,
    ];
    let mut lines = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        if i == 1 {
            continue; // a notification has no answer
        }
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer within 30 s");
        lines.push(line);
    }
    drop(stdin);
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the server did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
        lines.push(line);
    }
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    assert!(status.success(), "exit {status:?}; stderr:\n{log}");
    assert_eq!(lines.len(), 4, "{lines:#?}");
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    let v: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[0]["result"]["serverInfo"]["name"], "docfuse");
    assert_eq!(v[1]["result"]["tools"].as_array().unwrap().len(), 5);
    let results = &v[2]["result"]["structuredContent"]["results"];
    assert_eq!(results.as_array().unwrap().len(), 2, "{}", v[2]);
    assert_eq!(v[2]["result"]["isError"], false);
    assert_eq!(v[3]["result"]["isError"], true);
    assert_eq!(
        v[3]["result"]["structuredContent"]["error"]["code"],
        "forbidden_path"
    );
    assert!(!lines.join("\n").contains(&s.secret));
    assert!(!log.contains(&s.secret));
    assert!(!log.is_empty(), "debug logs go to stderr");
}

#[test]
fn malformed_messages_are_answered_as_json_rpc_says_and_logged() {
    let s = setup();
    let (mut child, rx, mut stdin) = spawn_mcp(&s.index, "warn");
    // (message, the error code of its answer, or 0 for a result)
    let exchanges: [(&str, i64); 6] = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
            0,
        ),
        (r#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#, -32700),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"\ud800"}}}"#,
            -32700,
        ),
        (r#"{"jsonrpc":"2.0","id":4,"method":7}"#, -32600),
        (r#"["not", "a", "request"]"#, -32600),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"cargo build --release","limit":1}}}"#,
            0,
        ),
    ];
    let mut answers = Vec::new();
    for (i, (m, _)) in exchanges.iter().enumerate() {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("message {i} got no answer within 30 s: {m}"));
        answers.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
        if i == 0 {
            writeln!(
                stdin,
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
            )
            .unwrap();
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    assert!(status.success(), "{log}");
    for ((m, code), a) in exchanges.iter().zip(&answers) {
        assert_eq!(a["jsonrpc"], "2.0", "{a}");
        if *code == 0 {
            assert!(a.get("result").is_some(), "{m} → {a}");
        } else {
            assert_eq!(a["error"]["code"], *code, "{m} → {a}");
        }
    }
    assert_eq!(answers[1]["id"], serde_json::Value::Null);
    assert_eq!(answers[3]["id"], 4);
    let hits = answers[5]["result"]["structuredContent"]["results"]
        .as_array()
        .unwrap();
    assert_eq!(hits.len(), 1, "the session goes on after bad input");
    assert_eq!(log.matches("answered -32700").count(), 2, "{log}");
    assert_eq!(log.matches("answered -32600").count(), 2, "{log}");
}
