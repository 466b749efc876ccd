//! The install story: a `docfuse` copied onto the PATH (as `cargo install --path .` puts
//! it in `~/.cargo/bin`) finds the model in the user-level folder that
//! `scripts/provision-models --user` fills, from any folder; without it, it says once on
//! stderr what is missing, where it looked and the one command that fixes it.
#![cfg(all(unix, feature = "embeddings"))]

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A home with a `bin/docfuse` copy far from the checkout (none of its ancestors holds a
/// `models/` folder) and, when `with_model`, the checkout's provisioned models under
/// `~/.local/share/docfuse/models`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(with_model: bool) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("home/.cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_docfuse"), bin.join("docfuse")).unwrap();
        if with_model {
            let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
            let user = dir.path().join("home/.local/share/docfuse");
            std::fs::create_dir_all(&user).unwrap();
            std::os::unix::fs::symlink(&models, user.join("models")).unwrap();
        }
        copy_dir(&sample_docs(), &dir.path().join("work/docs"));
        Home { dir }
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(self.dir.path().join("home/.cargo/bin/docfuse"));
        c.args(args)
            .current_dir(self.dir.path().join("work"))
            .env("HOME", self.dir.path().join("home"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("DOCFUSE_MODEL_DIR")
            .env_remove("DOCFUSE_ORT_DYLIB")
            .env_remove("DOCFUSE_LOG")
            .env_remove("DOCFUSE_QUERY_CACHE");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("the copied docfuse runs")
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest: PathBuf = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_docfuse_on_the_path_finds_the_user_level_model_from_any_folder() {
    let home = Home::new(true);
    let o = home.run(&["index", "docs"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = home.run(
        &["search", "--json", "--mode", "hybrid", "stop running tasks"],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert!(v["degraded"].is_null(), "{v}");
    // XDG_DATA_HOME, when set (absolute), is where the user-level folder is
    let xdg = home.dir.path().join("xdg");
    std::fs::create_dir_all(xdg.join("docfuse")).unwrap();
    std::fs::rename(
        home.dir.path().join("home/.local/share/docfuse/models"),
        xdg.join("docfuse/models"),
    )
    .unwrap();
    let o = home.run(
        &["search", "--json", "--mode", "hybrid", "stop running tasks"],
        &[("XDG_DATA_HOME", xdg.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // the model gone after the index was embedded: status says why vector search is off
    // and what fixes it (a refresh is not needed), and the index is still fresh
    let o = home.run(&["status", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = v["model_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains("provision-models --user"), "{v}");
    assert_eq!(v["fresh"], true, "{v}");
    let o = home.run(&["status"], &[]);
    assert!(stdout(&o).contains("new searches use it"), "{}", stdout(&o));
}

#[test]
fn without_the_model_every_interface_says_once_what_fixes_it() {
    let home = Home::new(false);
    let o = home.run(&["index", "docs"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let fix = "scripts/provision-models --user";
    // CLI search: answers lexically, one note on stderr naming the fix and the places
    let o = home.run(&["search", "stop running tasks"], &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches(fix).count(), 1, "{err}");
    assert!(err.contains(".local/share/docfuse/models"), "{err}");
    // status: says the model is unavailable now, with the fix
    let o = home.run(&["status", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let why = v["model_unavailable"].as_str().unwrap_or_default();
    assert!(why.contains(fix), "{v}");
    // MCP: the server says it on stderr at start, once; stdout stays protocol only
    let err = mcp_session_stderr(&home);
    assert_eq!(err.matches(fix).count(), 1, "{err}");
    assert!(err.contains("answering lexically"), "{err}");
}

/// Runs `docfuse mcp` (the copy on the PATH), makes the handshake and one search, and
/// returns what it wrote on stderr.
fn mcp_session_stderr(home: &Home) -> String {
    use std::io::{BufRead, Write};
    let mut child = Command::new(home.dir.path().join("home/.cargo/bin/docfuse"))
        .arg("mcp")
        .current_dir(home.dir.path().join("work"))
        .env("HOME", home.dir.path().join("home"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("DOCFUSE_MODEL_DIR")
        .env_remove("DOCFUSE_ORT_DYLIB")
        .env_remove("DOCFUSE_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
    writeln!(stdin, "{init}").unwrap();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"stop running tasks"}}}"#;
    writeln!(stdin, "{call}").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":2"), "{line}");
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&o.stderr).into_owned()
}
