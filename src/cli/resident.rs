//! `docfuse daemon`: a resident process of docfuse's own that keeps an index folder and
//! its embedding model loaded and answers one-off searches of that index on its socket
//! ([`super::daemon`]), as a running `serve` or `mcp` does.
//!
//! A `docfuse search` that had to load the model itself (no server answered for its
//! index) starts one when it has printed its answer, detached from the terminal: the next
//! searches of that index then cost a few ms of CPU instead of the ~125 ms of loading ONNX
//! Runtime and making a session (`benches/RESULTS.md`). It exits after
//! `DOCFUSE_DAEMON_IDLE` seconds without a search (default 300; `0` never starts one),
//! when its index folder's manifest is gone, or when its socket file is removed or taken
//! over; it follows the index's new generations as a server does. A search with
//! `--no-daemon` or `DOCFUSE_NO_DAEMON=1` neither asks nor starts one; a PostgreSQL index
//! never has one. Unix only.

use super::args::DaemonArgs;
use crate::retriever::DocfuseRetriever;
use std::path::Path;
use std::time::Duration;

/// Seconds a resident waits for a search before it exits; `0` never starts one.
pub const ENV_DAEMON_IDLE: &str = "DOCFUSE_DAEMON_IDLE";

/// The idle timeout when [`ENV_DAEMON_IDLE`] is not set, seconds.
const DEFAULT_IDLE_SECS: u64 = 300;

/// How often a resident checks its index folder, socket and idle time.
const TICK: Duration = Duration::from_millis(500);

/// The idle timeout from [`ENV_DAEMON_IDLE`] (an unparsable value is the default, with a
/// warning).
fn idle_from_env() -> u64 {
    match std::env::var(ENV_DAEMON_IDLE) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            tracing::warn!(
                "{ENV_DAEMON_IDLE}={v:?} is not a number of seconds: using {DEFAULT_IDLE_SECS}"
            );
            DEFAULT_IDLE_SECS
        }),
        Err(_) => DEFAULT_IDLE_SECS,
    }
}

/// Runs the resident for `a.index` until it has been idle for its timeout, its index is
/// removed, or its socket is taken; exits at once (0) when another server answers there.
pub fn run(a: DaemonArgs) -> anyhow::Result<i32> {
    // 0 (which stops a search from starting one) keeps a resident started by hand
    let idle = match a.idle_timeout.unwrap_or_else(idle_from_env) {
        0 => Duration::MAX,
        secs => Duration::from_secs(secs),
    };
    anyhow::ensure!(
        !super::pg::is_db(&a.index),
        "`docfuse daemon` serves a folder index: searches of a PostgreSQL index answer by themselves"
    );
    let retriever = DocfuseRetriever::open(&a.index)?;
    // claim the socket before loading the model: a search arriving meanwhile waits for
    // it instead of starting another resident
    let Some(socket) = super::daemon::listen(&a.index, retriever.clone()) else {
        tracing::info!("no socket for this index (another server holds it, or it cannot be made: see above): not staying");
        return Ok(super::EXIT_OK);
    };
    // a resident that cannot load the model would answer lexically what the search
    // answers with vectors: it does not stay
    match retriever.index().warm_up() {
        Ok(true) => tracing::debug!("resident: model loaded"),
        Ok(false) => anyhow::bail!("the index has no usable vectors: no resident needed"),
        Err(e) => anyhow::bail!("the resident cannot load the model: {e}"),
    }
    let manifest = a.index.join(crate::store::MANIFEST_FILE);
    while socket.idle() < idle && socket.still_bound() && !socket.outdated() && manifest.exists() {
        std::thread::sleep(TICK);
    }
    Ok(super::EXIT_OK)
}

/// Starts a resident `docfuse daemon` for the index folder `index`, detached (its own
/// session, no terminal, output discarded), unless [`ENV_DAEMON_IDLE`] is 0 or a server
/// already answers there. Never waits for it and never fails the search: a resident
/// that cannot start only leaves the next search to load the model again.
#[cfg(unix)]
pub fn start(index: &Path) {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let idle = idle_from_env();
    // no socket can be made (a folder others may enter, a path over the 107 bytes a
    // Unix socket's path holds): none
    let socket = super::daemon::socket_for(index, true).filter(|p| p.as_os_str().len() < 108);
    if idle == 0 || socket.is_none() || super::daemon::answers(index) {
        return;
    }
    let (Ok(exe), Ok(dir)) = (std::env::current_exe(), std::fs::canonicalize(index)) else {
        return;
    };
    let mut c = Command::new(exe);
    c.arg("daemon")
        .arg("--index")
        .arg(dir)
        .arg("--idle-timeout")
        .arg(idle.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // (the search's working folder is kept: a relative DOCFUSE_MODEL_DIR or `./models`
    // is found as the search found it)
    // SAFETY: setsid and close are async-signal-safe and touch no memory of this
    // process; the descriptors closed are the child's copies (a caller's pipe inherited
    // past stdio would keep the caller waiting for the resident's exit)
    unsafe {
        c.pre_exec(|| {
            libc::setsid();
            for fd in 3..1024 {
                libc::close(fd);
            }
            Ok(())
        });
    }
    // not waited for: it outlives this search (which exits now; init reaps it)
    #[allow(clippy::zombie_processes)]
    match c.spawn() {
        Ok(child) => tracing::debug!("started a resident docfuse (pid {})", child.id()),
        Err(e) => tracing::debug!("cannot start a resident docfuse: {e}"),
    }
}

#[cfg(not(unix))]
pub fn start(_index: &Path) {}
