//! A one-off `docfuse search` answered by a running `docfuse serve` or `docfuse mcp` of
//! the same index folder, which holds the model session and the open index already: the
//! search process then loads neither (a new question in hybrid mode costs a few ms of CPU
//! instead of the ~125 ms of loading ONNX Runtime and making a session; `benches/
//! RESULTS.md`).
//!
//! The server listens on a Unix socket named by the sha256 of the index folder's
//! canonical path, in `$XDG_RUNTIME_DIR/docfuse/`, else in `/tmp/docfuse-UID/` (a folder
//! of this user's, mode 0700, checked before every use: a socket another user could have
//! made is never asked nor replaced; the index folder itself may be read-only, and a
//! socket's path is limited to 108 bytes). A search sends its command line and working
//! folder as one JSON line; the server
//! parses it exactly as the command line is parsed, answers if it names this index, and
//! returns the exit code, the text for stdout and for stderr, and the generation that
//! answered. The search prints that only when the generation is the one the index's
//! manifest names now; otherwise — no socket, no server behind it, another index, an
//! older generation, an error, a timeout — it answers by itself, as without a server.
//! `--no-daemon` or `DOCFUSE_NO_DAEMON=1` skips the socket. Unix only.

use super::args::{Cli, Command, SearchArgs};
use crate::retriever::DocfuseRetriever;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The socket of the index folder `index` (which must exist); with `create`, its folder
/// is made when missing. `None` when the folder is not this user's alone.
#[cfg(unix)]
pub fn socket_for(index: &Path, create: bool) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let canonical = std::fs::canonicalize(index).ok()?;
    // SAFETY: getuid has no preconditions and cannot fail
    let uid = unsafe { libc::getuid() };
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("docfuse"),
        None => std::env::temp_dir().join(format!("docfuse-{uid}")),
    };
    if create && !dir.exists() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir);
    }
    let m = std::fs::symlink_metadata(&dir).ok()?;
    if !m.is_dir() || m.uid() != uid || m.mode() & 0o077 != 0 {
        tracing::debug!(
            "`{}` is not a folder of this user's alone: no search socket",
            dir.display()
        );
        return None;
    }
    let name = crate::hashing::sha256_hex(canonical.to_string_lossy().as_bytes());
    Some(dir.join(format!("{}.sock", &name[..32])))
}

/// Set to `1` (or `true`, `yes`, `on`) to never ask a running server.
pub const ENV_NO_DAEMON: &str = "DOCFUSE_NO_DAEMON";

/// Longest wait for a server's answer before answering in-process.
#[cfg(unix)]
const ASK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Longest wait for a server to acknowledge a connection (it does so before reading).
#[cfg(unix)]
const ACK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(300);

/// Largest request a server reads (a command line), bytes.
#[cfg(unix)]
const MAX_REQUEST: u64 = 1 << 20;

/// Requests a server answers at once; more connections are closed (those searches answer
/// in-process).
#[cfg(unix)]
const MAX_ACTIVE: usize = 8;

/// A search's command line, as its process received it.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    v: u32,
    argv: Vec<String>,
    /// The search's working folder (a relative `--index` is resolved from it).
    cwd: PathBuf,
    /// The search's docfuse ([`build_identity`]): a server of another build (started
    /// before an upgrade) does not answer.
    build: String,
    /// The search's settings from the environment ([`ENV_SETTINGS`]): a server started
    /// with others does not answer.
    env: Vec<(String, Option<String>)>,
}

/// Environment variables that change a search's answer: the server answers only a
/// search whose values are its own.
const ENV_SETTINGS: [&str; 4] = [
    "DOCFUSE_MODEL_DIR",
    "DOCFUSE_ORT_DYLIB",
    "DOCFUSE_QUERY_CACHE",
    "DOCFUSE_MODEL_CACHE",
];

fn env_settings() -> Vec<(String, Option<String>)> {
    ENV_SETTINGS
        .iter()
        .map(|k| (k.to_string(), std::env::var(k).ok()))
        .collect()
}

/// This docfuse's build: its version and its executable's size and modification time
/// (an upgrade replaces the file; a running server keeps the identity it started with).
fn build_identity() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok());
    let (len, mtime) = exe.map_or((0, 0), |m| {
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        (m.len(), t)
    });
    format!("{} {len} {mtime}", env!("CARGO_PKG_VERSION"))
}

/// A server's answer.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Reply {
    /// `None`: not answered (another index, an error): the search answers by itself.
    generation: Option<u64>,
    /// The seal of the manifest that answered (a generation number may repeat when an
    /// index is removed and built again).
    seal: String,
    code: i32,
    stdout: String,
    stderr: String,
}

/// Whether `DOCFUSE_NO_DAEMON` turns the socket off.
pub fn disabled() -> bool {
    std::env::var(ENV_NO_DAEMON).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Asks the server of the index folder `index` to answer this process's search; prints
/// its answer and returns the exit code, or `None` when the search should answer by
/// itself.
#[cfg(unix)]
pub fn ask(index: &Path, argv: Vec<String>) -> Option<i32> {
    use std::io::{Read, Write};
    let socket = socket_for(index, false)?;
    if !socket.exists() {
        return None;
    }
    let manifest = crate::store::Manifest::load(index).ok()?;
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).ok()?;
    // a live server acknowledges at once; a stopped one (Ctrl-Z) costs this wait only
    stream.set_read_timeout(Some(ACK_TIMEOUT)).ok()?;
    let mut ack = [0u8; 1];
    stream.read_exact(&mut ack).ok()?;
    stream.set_read_timeout(Some(ASK_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(ASK_TIMEOUT)).ok()?;
    let request = Request {
        v: 1,
        argv,
        cwd: std::env::current_dir().ok()?,
        build: build_identity(),
        env: env_settings(),
    };
    let mut line = serde_json::to_vec(&request).ok()?;
    line.push(b'\n');
    stream.write_all(&line).ok()?;
    stream.shutdown(std::net::Shutdown::Write).ok()?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).ok()?;
    let reply: Reply = serde_json::from_slice(&bytes).ok()?;
    if reply.generation != Some(manifest.generation) || reply.seal != manifest.seal {
        tracing::debug!(
            "the server on `{}` answered generation {:?}, the index is at {}: answering here",
            socket.display(),
            reply.generation,
            manifest.generation
        );
        return None;
    }
    tracing::debug!("answered by the server on `{}`", socket.display());
    if !reply.stderr.is_empty() {
        eprint!("{}", reply.stderr);
    }
    let mut out = std::io::stdout().lock();
    // a closed stdout (`| head`) is not an error, as in-process
    let _ = out
        .write_all(reply.stdout.as_bytes())
        .and_then(|()| out.flush());
    Some(reply.code)
}

/// Whether a live server (one that acknowledges a connection) holds the socket of the
/// index folder `index`.
#[cfg(unix)]
pub fn answers(index: &Path) -> bool {
    use std::io::Read;
    let Some(socket) = socket_for(index, false) else {
        return false;
    };
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(&socket) else {
        return false;
    };
    let mut ack = [0u8; 1];
    stream.set_read_timeout(Some(ACK_TIMEOUT)).is_ok() && stream.read_exact(&mut ack).is_ok()
}

#[cfg(not(unix))]
pub fn ask(_index: &Path, _argv: Vec<String>) -> Option<i32> {
    None
}

/// The socket of a running server; removed when dropped, if it is still the one this
/// server made (another server may have taken the path since).
pub struct Listening {
    path: PathBuf,
    /// (device, inode) of the socket this server bound.
    id: Option<(u64, u64)>,
    /// When this server last answered a search (or made the socket).
    last: std::sync::Arc<std::sync::Mutex<std::time::Instant>>,
    /// Set when a search of another docfuse build asked (this server is out of date).
    outdated: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Listening {
    /// Time since this server last answered a search (or made the socket); requests it
    /// does not answer (another index, build or settings) do not count.
    pub fn idle(&self) -> std::time::Duration {
        self.last
            .lock()
            .map_or(std::time::Duration::ZERO, |t| t.elapsed())
    }

    /// Whether a search of another docfuse build (an upgrade, a rebuild) asked since the
    /// socket was made: a resident then gives way to one of that build.
    pub fn outdated(&self) -> bool {
        self.outdated.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the socket file is still the one this server made (not removed or replaced).
    pub fn still_bound(&self) -> bool {
        self.id.is_some() && file_id(&self.path) == self.id
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if self.id.is_some() && file_id(&self.path) == self.id {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// (device, inode) of the file at `path`.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// A slot of the [`MAX_ACTIVE`] requests answered at once, given back when dropped
/// (also when the answer panicked).
#[cfg(unix)]
struct Slot(std::sync::Arc<std::sync::atomic::AtomicUsize>);

#[cfg(unix)]
impl Slot {
    fn take(active: &std::sync::Arc<std::sync::atomic::AtomicUsize>) -> Option<Slot> {
        use std::sync::atomic::Ordering;
        if active.fetch_add(1, Ordering::AcqRel) >= MAX_ACTIVE {
            active.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Slot(active.clone()))
    }
}

#[cfg(unix)]
impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Answers searches of the index folder `index` on its socket, from `retriever`, on a
/// thread of its own. `None` (logged) when another live server holds the socket or it
/// cannot be made (a read-only index): searches then answer in-process.
#[cfg(unix)]
pub fn listen(index: &Path, retriever: DocfuseRetriever) -> Option<Listening> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    let path = socket_for(index, true)?;
    if path.exists() {
        if UnixStream::connect(&path).is_ok() {
            tracing::info!(
                "another server answers searches on `{}`: not listening there",
                path.display()
            );
            return None;
        }
        // left by a server that died
        let _ = std::fs::remove_file(&path);
    }
    let listener = match UnixListener::bind(&path) {
        Ok(l) => l,
        Err(e) => {
            tracing::info!(
                "cannot listen on `{}` ({e}): searches load the index themselves",
                path.display()
            );
            return None;
        }
    };
    let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
    let id = file_id(&path);
    let own = std::fs::canonicalize(index).unwrap_or_else(|_| index.to_path_buf());
    let server = Server {
        own,
        build: build_identity(),
        env: env_settings(),
    };
    let active = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let last = std::sync::Arc::new(std::sync::Mutex::new(std::time::Instant::now()));
    let outdated = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let marks = Marks {
        last: last.clone(),
        outdated: outdated.clone(),
    };
    let spawned = std::thread::Builder::new()
        .name("docfuse-search-socket".into())
        .spawn(move || loop {
            let stream = match listener.accept() {
                Ok((s, _)) => s,
                Err(e) => {
                    // out of file descriptors, say: wait instead of spinning
                    tracing::debug!("search socket: cannot accept ({e})");
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    continue;
                }
            };
            // over the limit the connection closes: that search answers by itself
            let Some(slot) = Slot::take(&active) else {
                continue;
            };
            let (retriever, server, marks) = (retriever.clone(), server.clone(), marks.clone());
            let _ = std::thread::Builder::new().spawn(move || {
                let _slot = slot;
                serve_one(stream, &retriever, &server, &marks);
            });
        });
    match spawned {
        Ok(_) => Some(Listening {
            path,
            id,
            last,
            outdated,
        }),
        Err(e) => {
            tracing::info!("cannot start the search socket's thread: {e}");
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// What a server records of the requests it gets ([`Listening::idle`],
/// [`Listening::outdated`]).
#[derive(Clone)]
struct Marks {
    last: std::sync::Arc<std::sync::Mutex<std::time::Instant>>,
    outdated: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// What a server checks a request against.
#[derive(Clone)]
struct Server {
    /// The canonical path of its index folder.
    own: PathBuf,
    build: String,
    env: Vec<(String, Option<String>)>,
}

#[cfg(not(unix))]
pub fn listen(_index: &Path, _retriever: DocfuseRetriever) -> Option<Listening> {
    None
}

/// Acknowledges the connection, reads one request from `stream`, answers it, writes the
/// reply.
#[cfg(unix)]
fn serve_one(
    mut stream: std::os::unix::net::UnixStream,
    retriever: &DocfuseRetriever,
    server: &Server,
    marks: &Marks,
) {
    use std::io::{Read, Write};
    let _ = stream.set_read_timeout(Some(ASK_TIMEOUT));
    let _ = stream.set_write_timeout(Some(ASK_TIMEOUT));
    if stream.write_all(b"+").is_err() {
        return;
    }
    let mut bytes = Vec::new();
    if (&mut stream)
        .take(MAX_REQUEST)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return;
    }
    let reply = match serde_json::from_slice::<Request>(&bytes) {
        Ok(r) if r.v == 1 && r.build == server.build && r.env == server.env => {
            answer(r, retriever, &server.own)
        }
        Ok(r) if r.build != server.build => {
            marks
                .outdated
                .store(true, std::sync::atomic::Ordering::Relaxed);
            Reply::default()
        }
        _ => Reply::default(),
    };
    if reply.generation.is_some() {
        if let Ok(mut t) = marks.last.lock() {
            *t = std::time::Instant::now();
        }
    }
    if let Ok(json) = serde_json::to_vec(&reply) {
        let _ = stream.write_all(&json);
    }
}

/// The reply to `request`: answered when it is a search of the index `own` (no
/// `--refresh`), else not.
#[cfg(unix)]
fn answer(request: Request, retriever: &DocfuseRetriever, own: &Path) -> Reply {
    let Some(a) = search_of(request.argv) else {
        return Reply::default();
    };
    let index = request.cwd.join(&a.index);
    if std::fs::canonicalize(&index).ok().as_deref() != Some(own) {
        return Reply::default();
    }
    let (result, stdout, stderr) = super::output::captured(|| super::search::answer(retriever, &a));
    let seal = retriever.index().manifest().seal.clone();
    match result {
        Ok((code, generation)) => Reply {
            generation: Some(generation),
            seal,
            code,
            stdout,
            stderr,
        },
        // the search reports its own errors, in-process
        Err(_) => Reply::default(),
    }
}

/// The search a command line asks for, parsed as the command line is; `None` for any
/// other command, a `--refresh` search or one that does not parse.
fn search_of(argv: Vec<String>) -> Option<SearchArgs> {
    use clap::Parser;
    let argv = super::dashes::query_dashes(super::dashes::negative_values(argv));
    match Cli::try_parse_from(argv).ok()?.command {
        Command::Search(a) if !a.refresh && !a.no_daemon => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        std::iter::once("docfuse")
            .chain(args.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn only_plain_searches_are_answered_for_another_process() {
        let a = search_of(argv(&[
            "search", "--index", "idx", "--json", "-n", "3", "how to",
        ]));
        let a = a.unwrap();
        assert_eq!(
            (a.limit, a.json, a.query.join(" ")),
            (3, true, "how to".into())
        );
        // a dash-led query is read as the command line reads it
        let a = search_of(argv(&["search", "--", "--save-exact"])).unwrap();
        assert_eq!(a.query, ["--save-exact"]);
        assert!(search_of(argv(&["search", "--refresh", "x"])).is_none());
        assert!(search_of(argv(&["search", "--no-daemon", "x"])).is_none());
        assert!(search_of(argv(&["status"])).is_none());
        assert!(search_of(argv(&["search"])).is_none());
    }
}
