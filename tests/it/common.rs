//! Shared helpers of the integration tests: the binary, the shared corpora, temp dirs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The folder of shared benchmark data (`DOCFUSE_SHARED`, else `../shared` beside the repo).
pub fn shared() -> PathBuf {
    let p = std::env::var_os("DOCFUSE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    assert!(
        p.join("bench/corpora/rust-book").is_dir(),
        "shared benchmark data not found at `{}`; set DOCFUSE_SHARED",
        p.display()
    );
    p
}

pub fn rust_book() -> PathBuf {
    shared().join("bench/corpora/rust-book")
}

pub fn cargo_book() -> PathBuf {
    shared().join("bench/corpora/cargo-book")
}

pub fn sample_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-docs")
}

/// Runs the `docfuse` binary with `args` in `cwd`.
pub fn docfuse(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DOCFUSE_LOG")
        .env_remove("DOCFUSE_MODEL_CACHE")
        .env_remove("DOCFUSE_QUERY_CACHE")
        // no resident `docfuse daemon` left behind by a test's hybrid search
        .env("DOCFUSE_DAEMON_IDLE", "0")
        .output()
        .expect("the docfuse binary runs")
}

/// Runs the `docfuse` binary with `args` in `cwd` and extra environment variables.
pub fn docfuse_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_docfuse"));
    c.args(args)
        .current_dir(cwd)
        .env_remove("DOCFUSE_LOG")
        .env_remove("DOCFUSE_MODEL_CACHE")
        .env_remove("DOCFUSE_QUERY_CACHE")
        .env("DOCFUSE_DAEMON_IDLE", "0");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the docfuse binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies a folder tree (files only) into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// An embedder under another identity (as if the model file had changed): same vectors,
/// different identity key.
pub struct Renamed(
    pub std::sync::Arc<dyn docfuse::embed::Embedder>,
    pub docfuse::embed::EmbedderIdentity,
);

impl docfuse::embed::Embedder for Renamed {
    fn identity(&self) -> &docfuse::embed::EmbedderIdentity {
        &self.1
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> docfuse::Result<Vec<f32>> {
        self.0.embed(texts)
    }
}

/// True when the tests run as root (file permissions do not stop root).
pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

/// The uid and gid an unprivileged run uses when the tests run as root (`nobody`).
const NOBODY: u32 = 65534;

/// A `docfuse` command that runs unprivileged: as `nobody` through `setpriv` when the
/// tests run as root, as the current user otherwise.
pub fn user_command(cwd: &Path, args: &[&str]) -> Command {
    let mut c = if is_root() {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
            env!("CARGO_BIN_EXE_docfuse"),
        ]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_docfuse"))
    };
    c.args(args)
        .current_dir(cwd)
        .env_remove("DOCFUSE_LOG")
        .env_remove("DOCFUSE_MODEL_CACHE")
        .env_remove("DOCFUSE_QUERY_CACHE")
        .env("DOCFUSE_DAEMON_IDLE", "0");
    c
}

/// Runs `docfuse` unprivileged (see [`user_command`]).
pub fn docfuse_as_user(cwd: &Path, args: &[&str]) -> Output {
    user_command(cwd, args).output().expect("docfuse runs")
}

/// Runs `docfuse` unprivileged with `input` on stdin (closed after it).
pub fn run_as_user_with_stdin(cwd: &Path, args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = user_command(cwd, args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("docfuse runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(stdin);
    child.wait_with_output().unwrap()
}

/// Hands a tree to the unprivileged user (when running as root), and makes the folders
/// leading to it traversable.
pub fn give_to_user(path: &Path) {
    if !is_root() {
        return;
    }
    for a in path.ancestors().skip(1) {
        if a == Path::new("/") {
            break;
        }
        let mode = std::fs::metadata(a).unwrap().permissions();
        use std::os::unix::fs::PermissionsExt;
        if mode.mode() & 0o001 == 0 {
            std::fs::set_permissions(a, std::fs::Permissions::from_mode(mode.mode() | 0o011))
                .unwrap();
        }
    }
    chown_tree(path);
}

fn chown_tree(path: &Path) {
    let _ = std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY));
    if path.is_dir() && !path.is_symlink() {
        for e in std::fs::read_dir(path).unwrap() {
            chown_tree(&e.unwrap().path());
        }
    }
}

/// Sets the mode of `path`.
pub fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Sets folders of a tree to `dirs` and files to `files`.
pub fn chmod_tree(path: &Path, dirs: u32, files: u32) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            chmod_tree(&e.unwrap().path(), dirs, files);
        }
        chmod(path, dirs);
    } else {
        chmod(path, files);
    }
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// One HTTP/1.1 exchange over a fresh connection: (status, JSON body).
pub fn exchange(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, serde_json::Value) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let body = body.unwrap_or("");
    use std::io::{Read, Write};
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, payload) = raw.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (
        code,
        serde_json::from_str(payload).unwrap_or_else(|e| panic!("{e}: {payload}")),
    )
}

/// The address a `docfuse serve` child announces on stderr ("… on http://ADDR …").
pub fn served_addr(err: &mut impl std::io::BufRead) -> String {
    for _ in 0..20 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(rest) = line.split("http://").nth(1) {
            if let Some(a) = rest.split_whitespace().next() {
                return a.to_string();
            }
        }
    }
    panic!("the server did not say where it listens")
}

/// A minimal MCP client over `docfuse mcp`'s stdio (newline-delimited JSON-RPC), for
/// tests that check raw protocol messages.
pub struct McpClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
    next_id: u64,
}

impl McpClient {
    /// Starts `docfuse mcp --index INDEX EXTRA…` and completes the handshake.
    pub fn start(index: &Path, extra: &[&str]) -> McpClient {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_docfuse"))
            .arg("mcp")
            .arg("--index")
            .arg(index)
            .args(extra)
            .env_remove("DOCFUSE_LOG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("docfuse mcp starts");
        let stdin = child.stdin.take().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut c = McpClient {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        c.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        c.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its whole response message (`result` or `error`)
    /// and the size of the raw line in bytes.
    pub fn request_sized(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> (serde_json::Value, usize) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("a response from docfuse mcp");
            let v: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC on stdout");
            if v["id"] == id {
                return (v, line.len());
            }
        }
    }

    /// Sends a request and returns its response message.
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.request_sized(method, params).0
    }

    /// Calls a tool: (result, raw size in bytes).
    pub fn call(&mut self, tool: &str, args: serde_json::Value) -> (serde_json::Value, usize) {
        let (v, n) = self.request_sized(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        (v["result"].clone(), n)
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// sha256 of every file under `dir`, by `/`-separated relative path.
pub fn tree_hashes(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(
                    rel,
                    docfuse::hashing::sha256_hex(&std::fs::read(&p).unwrap()),
                );
            }
        }
    }
    out
}

/// Writes `text` to `path` and sets its mtime back to `mtime` (an edit that size and mtime
/// alone cannot see when the length is kept).
pub fn write_with_mtime(path: &Path, text: &str, mtime: std::time::SystemTime) {
    std::fs::write(path, text).unwrap();
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// Builds (or refreshes) the index `idx` of root `docs` through the library, with lexical
/// buckets of `bucket_chunks` chunks.
pub fn build_in_buckets(
    idx: &Path,
    docs: &Path,
    bucket_chunks: u64,
    force: bool,
) -> docfuse::write::BuildReport {
    let opts = docfuse::write::BuildOptions {
        bucket_chunks: Some(bucket_chunks),
        force,
        ..docfuse::write::BuildOptions::default()
    };
    let source = docfuse::generation::Source::Roots(vec![docs.to_path_buf()]);
    docfuse::write::build(idx, &source, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("build: {e}"))
}

/// Serves whatever `body` holds at any path, until the test ends; returns the base URL.
pub fn serve_bytes(body: std::sync::Arc<std::sync::Mutex<Vec<u8>>>) -> String {
    serve_bytes_after(body, std::time::Duration::ZERO)
}

/// [`serve_bytes`], each answer sent `delay` after its request came (a slow pack host;
/// requests are answered side by side).
pub fn serve_bytes_after(
    body: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    delay: std::time::Duration,
) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let body = body.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = std::io::Read::read(&mut s, &mut buf);
                std::thread::sleep(delay);
                let b = body.lock().unwrap().clone();
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/gzip\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    b.len()
                );
                let _ = std::io::Write::write_all(&mut s, head.as_bytes());
                let _ = std::io::Write::write_all(&mut s, &b);
            });
        }
    });
    format!("http://{addr}")
}

/// Polls `found` every 200 ms for up to 30 s; panics naming `what` when it never holds.
pub fn eventually(what: &str, mut found: impl FnMut() -> bool) {
    for _ in 0..150 {
        if found() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    panic!("{what}: not within 30 s");
}

/// The test PostgreSQL's URL (`DOCFUSE_TEST_DATABASE_URL`, as `scripts/test` sets from
/// `scripts/pg up`); `None` (the test says so and passes) without one, unless
/// `DOCFUSE_REQUIRE_PG` is set.
pub fn database() -> Option<String> {
    match std::env::var("DOCFUSE_TEST_DATABASE_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("DOCFUSE_REQUIRE_PG").is_none(),
                "DOCFUSE_REQUIRE_PG is set but DOCFUSE_TEST_DATABASE_URL is not"
            );
            eprintln!("skipped: no DOCFUSE_TEST_DATABASE_URL (start one with `scripts/pg up`)");
            None
        }
    }
}

/// Asks `addr` for the quokka page by search (with content) and by passage until `stop`:
/// (generation, text, chunk sha256) of every answer.
pub fn quokka_answers(
    addr: &str,
    stop: &std::sync::atomic::AtomicBool,
) -> Vec<(u64, String, String)> {
    let mut seen = Vec::new();
    let body =
        r#"{"query": "quokka note", "limit": 1, "mode": "lexical", "include_content": true}"#;
    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
        let (code, v) = exchange(addr, "POST", "/v1/search", Some(body));
        assert_eq!(code, 200, "{v}");
        let r = &v["results"][0];
        seen.push((
            v["generation"].as_u64().unwrap(),
            r["content"].as_str().unwrap_or("").to_string(),
            r["evidence"]["chunk_sha256"].as_str().unwrap().to_string(),
        ));
        let (code, v) = exchange(
            addr,
            "GET",
            "/v1/passage?path=quokka.md&start_line=1&end_line=3",
            None,
        );
        assert_eq!(code, 200, "{v}");
        seen.push((
            v["generation"].as_u64().unwrap(),
            v["text"].as_str().unwrap().to_string(),
            String::new(),
        ));
    }
    seen
}

/// Three clients of [`quokka_answers`] on `addr`, until `stop`.
pub fn quokka_clients(
    addr: &str,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<Vec<(u64, String, String)>>> {
    (0..3)
        .map(|_| {
            let (addr, stop) = (addr.to_string(), stop.clone());
            std::thread::spawn(move || quokka_answers(&addr, &stop))
        })
        .collect()
}

/// Every answer of `clients` gives the text of the version its generation published
/// (`version_of`: generation → version, the page saying `version K.`), with one evidence
/// hash per generation and another per version; the load saw at least four generations.
pub fn assert_answers_match_their_generation(
    clients: Vec<std::thread::JoinHandle<Vec<(u64, String, String)>>>,
    version_of: &std::collections::HashMap<u64, u64>,
) {
    let answers: Vec<_> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let mut hashes: std::collections::HashMap<u64, std::collections::HashSet<String>> =
        Default::default();
    for (g, text, sha) in &answers {
        let k = version_of
            .get(g)
            .unwrap_or_else(|| panic!("generation {g} was never published: {version_of:?}"));
        assert!(
            text.contains(&format!("version {k}.")),
            "generation {g} (version {k}) answered with {text:?}"
        );
        if !sha.is_empty() {
            hashes.entry(*g).or_default().insert(sha.clone());
        }
    }
    // one evidence hash per generation, and another for each version
    assert!(hashes.values().all(|h| h.len() == 1), "{hashes:?}");
    let distinct: std::collections::HashSet<_> = hashes.values().flatten().collect();
    assert_eq!(distinct.len(), hashes.len(), "{hashes:?}");
    assert!(
        hashes.len() >= 4,
        "the load saw {} generations",
        hashes.len()
    );
}

/// The test database URL with a schema of its own.
pub fn with_schema(url: &str, name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}schema={name}_{}_{nanos}", std::process::id())
}

/// A page whose one chunk is a list of 30 settings (lists are cut only past four times
/// the chunk budget), longer than MiniLM's 256 word pieces: its last item, the only one
/// about food, is a paraphrase of "where is the pet food stored".
pub fn long_settings_list() -> String {
    let mut list = String::from("# Settings\n\nEvery setting the server reads:\n\n");
    let dull = [
        "network timeout in seconds before a request is abandoned",
        "number of worker threads serving requests",
        "port the listener binds to on start",
        "size of the response cache in megabytes",
        "log level of the request logger",
    ];
    for i in 0..29 {
        list.push_str(&format!(
            "- `SERVER_OPT_{i}`: the {}.\n",
            dull[i % dull.len()]
        ));
    }
    list.push_str(
        "- `PANTRY_DIR`: the cupboard where the cat's kibble and dog biscuits are kept.\n",
    );
    list
}

/// Reads `child`'s stderr (piped) until it says it paused after `step`
/// (`DOCFUSE_TEST_PAUSE_AFTER`); returns the reader of the rest (keep it while the child
/// runs on: a closed pipe fails its next write).
pub fn wait_paused(
    child: &mut std::process::Child,
    step: &str,
) -> std::io::BufReader<std::process::ChildStderr> {
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr piped"));
    let mut line = String::new();
    let want = format!("paused after `{step}`");
    while !line.contains(&want) {
        line.clear();
        let n = std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        assert!(n > 0, "no pause after `{step}`");
    }
    err
}
