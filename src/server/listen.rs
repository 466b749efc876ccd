//! Connections of the HTTP API: accepted on a TCP listener, each served by hyper's
//! HTTP/1.1 connection, bounded in number and in how long they may sit idle.
//!
//! - **Header read timeout** ([`ConnLimits::header_read_timeout`], hyper's
//!   `header_read_timeout`): a connection whose request head is not complete within it
//!   is closed. The clock also runs while a kept-alive connection waits for its next
//!   request (hyper ≥ 1.6), so an idle connection is closed after the same time, and a
//!   slow-header (Slowloris) client gets no longer than that per request.
//! - **Connection cap** ([`ConnLimits::max_connections`], clipped to what the process's
//!   open-file limit leaves after [`FD_RESERVE`]): a connection beyond it is answered
//!   `503 overloaded` with `Retry-After: 1` and closed at once, so neither held sockets
//!   nor file descriptors grow with the number of clients.
//! - **Write stall timeout** ([`ConnLimits::write_stall_timeout`], `tokio-io-timeout`):
//!   a connection whose client stops reading, so that writing its answer makes no
//!   progress for that long, is closed; a client that never reads cannot keep a slot.
//! - Shutdown stops accepting and lets open requests finish for up to 2 s.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;

/// File descriptors kept free for everything but connections (index files, the model,
/// a refresh's new generation, the log): the cap is at most the open-file limit minus
/// this, and at least 1/4 of the limit stays free.
pub const FD_RESERVE: u64 = 64;

/// Limits on the connections of the HTTP API (not on requests: see
/// [`super::http::HttpConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Most connections open at once (default 512); see [`ConnLimits::effective_cap`].
    pub max_connections: usize,
    /// Longest wait for a request's complete head, and for the next request on a
    /// kept-alive connection (default 10 s).
    pub header_read_timeout: Duration,
    /// Longest a write of an answer may make no progress because the client does not
    /// read (default 30 s); then the connection is closed.
    pub write_stall_timeout: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            max_connections: 512,
            header_read_timeout: Duration::from_secs(10),
            write_stall_timeout: Duration::from_secs(30),
        }
    }
}

impl ConnLimits {
    /// The cap in force: `max_connections`, lowered when the process's soft open-file
    /// limit (`RLIMIT_NOFILE`) would not leave [`FD_RESERVE`] descriptors (and a quarter
    /// of the limit) for the rest of the server. At least 1.
    pub fn effective_cap(&self) -> usize {
        cap_under(self.max_connections, open_file_limit())
    }
}

/// `wanted` connections (at least 1), at most what an open-file limit leaves after
/// [`FD_RESERVE`] and a quarter of the limit.
fn cap_under(wanted: usize, limit: Option<u64>) -> usize {
    let wanted = wanted.max(1);
    let Some(limit) = limit else {
        return wanted;
    };
    let reserve = FD_RESERVE.max(limit / 4);
    let room = usize::try_from(limit.saturating_sub(reserve)).unwrap_or(usize::MAX);
    wanted.min(room.max(1))
}

/// The soft open-file limit of this process, when the platform says.
fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut l = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes into the struct we own and reads nothing else.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) };
        (rc == 0 && l.rlim_cur != libc::RLIM_INFINITY).then_some(l.rlim_cur)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The answer to a connection over the cap: written without waiting (it fits any
/// socket buffer), then the connection is closed.
const OVER_CAP: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 88\r\n\r\n{\"error\":{\"code\":\"overloaded\",\"message\":\"too many open connections; retry in 1 second\"}}";

/// Serves `app` on `listener` with `limits` until `shutdown` resolves; each request
/// carries its peer's address (`ConnectInfo<SocketAddr>`).
///
/// # Errors
/// None today: accept errors (e.g. `EMFILE`) are logged and retried after a pause.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: ConnLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cap = limits.effective_cap();
    if cap < limits.max_connections {
        tracing::warn!(
            "serving at most {cap} connections at once (asked {}): the open-file limit leaves no more",
            limits.max_connections
        );
    }
    let slots = Arc::new(Semaphore::new(cap));
    let lingering = Arc::new(Semaphore::new(TURNED_AWAY_AT_ONCE));
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and the like: the listener stays; wait for a slot to close
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            turn_away(stream, &lingering);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let svc = app.clone().map_request(
            move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                req
            },
        );
        let mut io = tokio_io_timeout::TimeoutStream::new(stream);
        io.set_write_timeout(Some(limits.write_stall_timeout));
        let io = TokioIo::new(Box::pin(io));
        let conn = http.serve_connection(io, TowerToHyperService::new(svc));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("connection from {peer} ended: {e}");
            }
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(2)) => {
            tracing::warn!("stopping with requests still open");
        }
    }
    Ok(())
}

/// Connections over the cap answered at once; beyond them, one more is closed without
/// an answer (each holds a descriptor for up to [`LINGER`]).
const TURNED_AWAY_AT_ONCE: usize = 32;

/// How long a connection over the cap is kept to read what its client sent after the
/// answer, so closing it does not reset the connection before the client reads the 503.
const LINGER: Duration = Duration::from_secs(1);

/// Answers a connection over the cap with [`OVER_CAP`] and closes it once the client
/// has sent what it meant to (at most [`LINGER`] and 64 KiB later).
fn turn_away(stream: TcpStream, lingering: &Arc<Semaphore>) {
    let Ok(permit) = lingering.clone().try_acquire_owned() else {
        return;
    };
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = stream;
        let answer = async {
            stream.write_all(OVER_CAP).await?;
            stream.shutdown().await?;
            let mut buf = [0u8; 4096];
            let mut left = 64 * 1024usize;
            while left > 0 {
                match stream.read(&mut buf).await? {
                    0 => break,
                    n => left = left.saturating_sub(n),
                }
            }
            Ok::<_, std::io::Error>(())
        };
        let _ = tokio::time::timeout(LINGER, answer).await;
        drop(permit);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_over_cap_answer_says_its_own_length() {
        let text = std::str::from_utf8(OVER_CAP).expect("ascii");
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .and_then(|n| n.parse().ok())
            .expect("a length");
        assert_eq!(len, body.len());
        let v: serde_json::Value = serde_json::from_str(body).expect("JSON");
        assert_eq!(v["error"]["code"], "overloaded");
    }

    #[test]
    fn the_cap_leaves_room_under_the_open_file_limit() {
        assert_eq!(cap_under(512, Some(256)), 192);
        assert_eq!(cap_under(512, Some(20_000)), 512);
        assert_eq!(cap_under(100_000, Some(20_000)), 15_000);
        assert_eq!(cap_under(512, Some(40)), 1);
        assert_eq!(cap_under(0, None), 1);
        assert_eq!(cap_under(7, None), 7);
    }
}
