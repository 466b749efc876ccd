//! `docfuse embed-worker --index postgres://…`: embeds the inputs a database index's
//! writer queued, batch by batch, until stopped (or, with `--once`, until nothing is
//! waiting). Any number run at once, on any hosts with the model: each batch is claimed
//! with `FOR UPDATE SKIP LOCKED` ([`crate::pgstore::embed_batch`]). A lost connection is
//! tried again every `--poll` seconds (so is a first connection, without `--once`);
//! Ctrl-C or SIGTERM stops after the batch at hand (a worker killed mid-batch loses that
//! batch only: rolled back, taken by another worker).

use super::args::EmbedWorkerArgs;
use crate::embed::Embedder;
use crate::pgstore::{self, PgLocation};
use anyhow::Context;
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub fn run(a: EmbedWorkerArgs) -> anyhow::Result<i32> {
    let url = a.index.to_string_lossy().to_string();
    anyhow::ensure!(
        super::pg::is_db(&a.index),
        "embed-worker works on a PostgreSQL index: `{url}` is not a postgres:// URL\nhint: a folder index embeds in its own `docfuse refresh`"
    );
    let loc = PgLocation::parse(&url)?;
    let embedder = crate::embed::load_embedder(a.threads.map(|t| t as usize)).context(
        "cannot load the embedding model\nhint: run `bash scripts/provision-models` on this host",
    )?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(work(&a, &loc, embedder.as_ref()))
}

/// What a worker did.
#[derive(Default)]
struct Tally {
    embedded: u64,
    started: Option<Instant>,
}

impl Tally {
    fn per_second(&self) -> f64 {
        let s = self.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
        match s > 0.0 {
            true => self.embedded as f64 / s,
            false => 0.0,
        }
    }
}

async fn work(
    a: &EmbedWorkerArgs,
    loc: &PgLocation,
    embedder: &dyn Embedder,
) -> anyhow::Result<i32> {
    let key = embedder.identity().key();
    let model = embedder.identity().model.clone();
    let poll = Duration::from_secs_f64(a.poll.clamp(0.1, 3600.0));
    // Ctrl-C or SIGTERM: noted at once, acted on between batches (a batch is finished)
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let stopped = std::sync::Arc::new(AtomicBool::new(false));
    let (stopper, flag) = (stop.clone(), stopped.clone());
    tokio::spawn(async move {
        super::serve::shutdown_signal().await;
        flag.store(true, Ordering::SeqCst);
        stopper.notify_one();
    });
    let pause = || async {
        tokio::select! {
            () = stop.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    };
    let mut client = loop {
        match session(loc).await {
            Ok(c) => break c,
            Err(e) if !a.once && pgstore::is_transient(&e) => {
                note(&format!(
                    "warning: {e}; trying again in {:.1} s",
                    poll.as_secs_f64()
                ));
                pause().await;
                if stopped.load(Ordering::SeqCst) {
                    return Ok(super::EXIT_OK);
                }
            }
            Err(e) => return Err(e.into()),
        }
    };
    let counts = pgstore::queue_counts(&client, loc, &key).await?;
    note(&format!(
        "embed-worker: {} input(s) waiting for {model} in `{}`",
        counts.waiting, loc.shown
    ));
    if counts.other_embedder > 0 {
        note(&format!(
            "warning: {} queued input(s) are for another embedder than this host's {model}; a worker with that model takes them",
            counts.other_embedder
        ));
    }
    let mut tally = Tally {
        started: Some(Instant::now()),
        ..Tally::default()
    };
    let mut embed = |texts: &[&str]| embedder.embed(texts);
    while !stopped.load(Ordering::SeqCst) {
        let batch = pgstore::embed_batch(
            &mut client,
            loc,
            (&key, embedder.dim()),
            a.batch as usize,
            &mut embed,
        )
        .await;
        match batch {
            Ok(0) if a.once => break,
            Ok(0) => {}
            Ok(n) => {
                tally.embedded += n as u64;
                say_batch(a.json, n, &tally);
                continue;
            }
            Err(e) if pgstore::is_transient(&e) || client.is_closed() => {
                note(&format!(
                    "warning: {e}; trying again in {:.1} s",
                    poll.as_secs_f64()
                ));
            }
            Err(e) => return Err(e.into()),
        }
        pause().await;
        if client.is_closed() && !stopped.load(Ordering::SeqCst) {
            match session(loc).await {
                Ok(c) => client = c,
                Err(e) => note(&format!("warning: {e}")),
            }
        }
    }
    let waiting = match client.is_closed() {
        true => None,
        false => pgstore::queue_counts(&client, loc, &key)
            .await
            .ok()
            .map(|c| c.waiting),
    };
    say_done(a.json, &tally, waiting);
    Ok(super::EXIT_OK)
}

/// A worker's connection: the schema checked, the claim's idle limit set.
async fn session(loc: &PgLocation) -> crate::Result<tokio_postgres::Client> {
    let client = pgstore::connect(loc).await?;
    pgstore::check(&client, loc).await?;
    pgstore::prepare_worker(&client, loc).await?;
    Ok(client)
}

/// A line on stderr; a closed stderr (`… 2>&1 | head`) is not an error.
fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn say_batch(json: bool, n: usize, tally: &Tally) {
    match json {
        true => {
            let _ = super::output::print_json_line(
                &json!({"embedded": n, "total": tally.embedded, "per_second": round1(tally.per_second())}),
            );
        }
        false => note(&format!(
            "embedded {n} input(s): {} in all, {:.1}/s",
            tally.embedded,
            tally.per_second()
        )),
    }
}

fn say_done(json: bool, tally: &Tally, waiting: Option<u64>) {
    let seconds = tally.started.map_or(0.0, |t| t.elapsed().as_secs_f64());
    match json {
        true => {
            let _ = super::output::print_json_line(
                &json!({"done": true, "total": tally.embedded, "seconds": round1(seconds), "per_second": round1(tally.per_second()), "waiting": waiting}),
            );
        }
        false => note(&format!(
            "embed-worker: embedded {} input(s) in {seconds:.1} s ({:.1}/s); {} waiting",
            tally.embedded,
            tally.per_second(),
            waiting.map_or("unknown".into(), |w| w.to_string())
        )),
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}
