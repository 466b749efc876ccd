//! `docfuse serve`: the HTTP API on a loopback address (see [`crate::server::http`]).

use super::args::ServeArgs;
use crate::retriever::DocfuseRetriever;
use crate::server::http::{router_with, serve_connections, ConnLimits, HttpConfig};
use crate::server::jobs::RefreshJobs;
use anyhow::Context;
use std::time::Duration;

pub fn run(a: ServeArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        a.addr.ip().is_loopback() || a.allow_remote,
        "refusing to listen on `{}`: not a loopback address, and the API has no authentication\nhint: use 127.0.0.1, or pass `--allow-remote` behind a proxy that authenticates",
        a.addr
    );
    anyhow::ensure!(a.timeout_ms > 0, "`--timeout-ms` must be positive");
    anyhow::ensure!(
        a.header_timeout_ms > 0,
        "`--header-timeout-ms` must be positive"
    );
    anyhow::ensure!(
        a.write_timeout_ms > 0,
        "`--write-timeout-ms` must be positive"
    );
    let limits = ConnLimits {
        max_connections: a.max_connections,
        header_read_timeout: Duration::from_millis(a.header_timeout_ms),
        write_stall_timeout: Duration::from_millis(a.write_timeout_ms),
    };
    let budget = super::mcp::budget_of(a.max_response_tokens)?;
    let retriever = DocfuseRetriever::open(&a.index)?.with_max_queued(a.max_queued);
    // one-off searches of this index folder are answered here (`super::daemon`)
    let _socket = match a.database {
        None => super::daemon::listen(&a.index, retriever.clone()),
        Some(_) => None,
    };
    if a.watch.watch {
        super::refresh::watch_in_background(&a.index, a.watch.debounce_ms)?;
    }
    let mut hosts = a.allow_host.clone();
    if !a.addr.ip().is_unspecified() {
        hosts.push(a.addr.ip().to_string());
    }
    // a database's jobs write to it, from this host's writer folder
    let jobs = Some(refresh_jobs(a.database.as_ref().unwrap_or(&a.index))?);
    let config = HttpConfig {
        request_timeout: Duration::from_millis(a.timeout_ms),
        max_body_bytes: a.max_body_bytes,
        budget,
        allowed_hosts: hosts,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let outcome = rt.block_on(async {
        if let Err(why) = retriever.vector_health().await {
            eprintln!("note: vector search unavailable, answering lexically: {why}");
        }
        let listener = tokio::net::TcpListener::bind(a.addr)
            .await
            .with_context(|| {
                format!(
                    "cannot listen on `{}`\nhint: another server may hold that port: pick another with `--addr 127.0.0.1:PORT` (port 0 picks a free one)",
                    a.addr
                )
            })?;
        let local = listener.local_addr()?;
        let refresh = if jobs.is_some() {
            ", POST /v1/refresh from this machine"
        } else {
            ""
        };
        eprintln!(
            "docfuse: serving `{}` on http://{local} (POST /v1/search, GET /v1/passage, GET /v1/document, GET /v1/handoff, GET /v1/status{refresh}, GET /healthz); Ctrl-C stops",
            a.index.display()
        );
        serve_connections(
            listener,
            router_with(retriever, config, jobs),
            limits,
            shutdown_signal(),
        )
            .await
            .context("the HTTP server failed")
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    outcome?;
    Ok(super::EXIT_OK)
}

/// The jobs of `POST /v1/refresh`: a refresh of every root of `index` (a folder, or a
/// database URL) with its recorded settings (the model loaded by the first job that
/// needs it, then kept).
fn refresh_jobs(index: &std::path::Path) -> anyhow::Result<RefreshJobs> {
    let index = index.to_path_buf();
    let shown = super::pg::shown_index(&index);
    let vectors = std::sync::OnceLock::new();
    let run = move || -> Result<serde_json::Value, String> {
        let error = |e: anyhow::Error| super::output::error_text(&e);
        let wanted = match super::pg::is_db(&index) {
            true => super::pg::wants_vectors(&index)
                .map_err(error)?
                .unwrap_or(true),
            false => super::job::Recorded::load(&index).map_err(error)?.wanted,
        };
        let vectors = vectors.get_or_init(|| super::build_run::Vectors::load(wanted));
        let job = super::job::Job::default();
        let report = super::job::run_job(&index, &job, vectors).map_err(error)?;
        let v = super::build_run::report_json(&shown, &report, vectors);
        eprintln!(
            "docfuse: refresh job: {}",
            super::build_run::report_line(&shown, &report, vectors)
        );
        Ok(v)
    };
    RefreshJobs::start(Box::new(run)).context("cannot start the refresh jobs thread")
}

/// Resolves on Ctrl-C or SIGTERM.
pub(super) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    eprintln!("docfuse: stopping");
}
