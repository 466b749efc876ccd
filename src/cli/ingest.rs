//! `docfuse ingest --nats URL`: the design's docs-pack subscriber. Subscribes to
//! `service.register`, `service.unregister` and `gateway.online` and runs one refresh
//! job per event through the writer lock: a pack registered is fetched, verified and
//! indexed as `pack:CODE` (unchanged files are not read or embedded again), an
//! unregistered one is dropped with its files, `gateway.online` (and the start) pulls
//! every known pack again. Packs are fetched `--fetches` at a time while jobs run one
//! after another, each service's in the order its events were published
//! ([`super::ingest_loop`]). A bad message is reported with its subject and skipped;
//! async-nats reconnects (forever, backing off up to 4 s) when the server goes away.

use super::args::IngestArgs;
use super::build_run::{report_line, Vectors};
use super::job::{is_no_index, run_job, Job, Recorded};
use super::pack::Fetcher;
use crate::pack::event::{self, Event};
use crate::pack::Pack;
use crate::write::BuildReport;
use anyhow::Context;
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub fn run(a: IngestArgs) -> anyhow::Result<i32> {
    let db = super::pg::is_db(&a.index);
    let wanted = if db {
        super::pg::wants_vectors(&a.index)?.unwrap_or(true) && !a.no_embeddings
    } else {
        match Recorded::load(&a.index) {
            Ok(rec) => rec.wanted && !a.no_embeddings,
            Err(e) if is_no_index(&e) => !a.no_embeddings,
            Err(e) => return Err(e),
        }
    };
    // where packs are unpacked and their sources recorded: the index folder, or for a
    // database this host's writer folder of it
    let folder = match db {
        true => super::pg::writer_folder(&a.index)?,
        false => a.index.clone(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // a folder of documents given as the index: refused before its lock file is made
    crate::store::ensure_index_folder(&folder)?;
    // one ingester per index: two would share the durable consumer, each taking some of a
    // service's events, and could apply them out of order
    let _folder_lock = hold_ingest_lock(&folder)?;
    let _db_lock = match db {
        true => Some(rt.block_on(super::pg::hold_ingester_lock(&a.index))?),
        false => None,
    };
    let lost = std::sync::Arc::new(AtomicU64::new(0));
    let durable = super::feed::durable_name(&a.index);
    let subscribed = rt.block_on(super::feed::subscribe(&a.nats, &durable, lost.clone()))?;
    let feed = subscribed.feed;
    // Ctrl-C or SIGTERM is caught on the runtime's thread, said at once ("stopping"), and
    // stops the loop once the event at hand is done
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let stopped = std::sync::Arc::new(AtomicBool::new(false));
    let (stopper, flag) = (stop.clone(), stopped.clone());
    rt.spawn(async move {
        super::serve::shutdown_signal().await;
        flag.store(true, Ordering::SeqCst);
        stopper.notify_one();
    });
    let vectors = Vectors::load(wanted);
    eprintln!(
        "docfuse: ingesting into `{}` from {} ({}; {}); Ctrl-C stops after the event at hand",
        super::pg::shown_index(&a.index).display(),
        crate::pack::redacted_servers(&a.nats),
        event::SUBJECTS.join(", "),
        subscribed.delivery
    );
    let mut applied = crate::pack::applied(&folder.join(crate::pack::PACKS_DIR));
    if let (Some(stream), Some(last)) = (&subscribed.stream, subscribed.last_sequence) {
        for code in applied.forget_beyond(stream, last) {
            eprintln!("warning: `{code}`'s last applied event in `{}` is past the stream's last event ({last}): forgotten, its next event is applied", crate::pack::APPLIED_FILE);
        }
    }
    let ingest = Ingest {
        a: &a,
        folder,
        vectors,
        stopped,
        lost,
        said_lost: AtomicU64::new(0),
        vectors_published: std::cell::Cell::new(None),
        stream: subscribed.stream,
        applied: std::cell::RefCell::new(applied),
    };
    ingest.guarded(
        event::GATEWAY_ONLINE,
        "start",
        Ok(Event::GatewayOnline),
        None,
    );
    let ended = ingest.listen(&rt, feed, subscribed.progress_every, &stop);
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    anyhow::ensure!(
        !ended,
        "the NATS events ended (the connection was closed, or the JetStream consumer was deleted)\nhint: start `docfuse ingest` again (a supervisor restarting it on failure keeps ingestion going)"
    );
    Ok(super::EXIT_OK)
}

/// The lock file of `ingest` in the index folder (or a database's writer folder).
pub const INGEST_LOCK: &str = "ingest.lock";

/// Takes the ingester lock of `folder` (made if missing): the writer lock's mechanism
/// on [`INGEST_LOCK`], held while the returned guard lives (the system releases it when
/// the process ends, also when killed).
///
/// # Errors
/// Another `docfuse ingest` of this folder holds it; the folder or file cannot be made.
fn hold_ingest_lock(folder: &std::path::Path) -> anyhow::Result<crate::generation::WriterLock> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create `{}`", folder.display()))?;
    let wait = crate::generation::LockWait::No;
    match crate::generation::acquire_named_lock(folder, INGEST_LOCK, wait, &mut |_| {}) {
        Err(crate::Error::Locked { holder, .. }) => anyhow::bail!(
            "another `docfuse ingest` ({holder}) is ingesting into `{}`: one ingester per index, or they would take each other's events\nhint: stop the other one first",
            folder.display()
        ),
        other => Ok(other?),
    }
}

pub(super) struct Ingest<'a> {
    pub(super) a: &'a IngestArgs,
    /// The folder holding the unpacked packs (`a.index`, or a database's writer folder).
    pub(super) folder: PathBuf,
    vectors: Vectors,
    /// Set on Ctrl-C or SIGTERM: no further event or pack is started.
    pub(super) stopped: std::sync::Arc<AtomicBool>,
    /// Messages the NATS client reported dropping (plain subscriptions), and how many of
    /// them were said.
    lost: std::sync::Arc<AtomicU64>,
    said_lost: AtomicU64,
    /// When workers' vectors were last published (or tried), and how many embedded inputs
    /// the queue still counted after it (inputs no chunk needs any more: not a reason to
    /// publish again).
    vectors_published: std::cell::Cell<Option<(std::time::Instant, u64)>>,
    /// The JetStream stream the events come from (`NAME@CREATED`; `None`: plain
    /// subscriptions, which deliver nothing twice).
    pub(super) stream: Option<String>,
    /// The stream sequence of each service's last applied event.
    pub(super) applied: std::cell::RefCell<crate::pack::Applied>,
}

impl Ingest<'_> {
    /// Publishes the vectors embedding workers made since the last publish: a refresh
    /// job of every root, which finds them by hash and embeds nothing itself. At once
    /// when the queue has nothing else waiting, else at most every [`VECTOR_BATCHING`]
    /// (a publish makes every server sync; a failed one is not tried again sooner).
    pub(super) fn publish_vectors(&self) {
        let key = self.vectors.embedder.as_ref().map(|e| e.identity().key());
        let counts = || super::pg::queue_counts(&self.a.index, key.as_deref().unwrap_or(""));
        let now = match counts() {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!("the embedding queue cannot be read: {e}");
                return;
            }
        };
        let (recent, settled) = match self.vectors_published.get() {
            Some((t, n)) => (t.elapsed() < VECTOR_BATCHING, n),
            None => (false, 0),
        };
        if now.embedded <= settled || (now.waiting > 0 && recent) {
            return;
        }
        let job = Job {
            max_chunks: self.a.max_chunks,
            ..Job::default()
        };
        let result = run_job(&self.a.index, &job, &self.vectors);
        let left = counts().map_or(now.embedded, |c| c.embedded);
        self.vectors_published
            .set(Some((std::time::Instant::now(), left)));
        // said as the pseudo-subject `vectors` (no service)
        self.say(
            "vectors",
            Outcome {
                code: None,
                version: None,
                result: result.map(|r| Done::Built(Box::new(r))),
            },
        );
    }

    /// Says that `n` events in hand at a stop were not handled and cannot be handed back
    /// (plain subscriptions): lost, as the client's drops are.
    pub(super) fn lost_on_stop(&self, n: usize) {
        let total = self.lost.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
        eprintln!(
            "warning: {n} event(s) in hand were not handled at the stop and cannot be handed back (plain subscriptions)\nhint: give nats-server JetStream (`-js`) and they are delivered again; `gateway.online` pulls every known pack"
        );
        if self.a.json {
            let _ = super::output::print_json_line(&json!({"lost": n, "lost_total": total}));
        }
    }

    /// Says how many events the NATS client dropped since the last time, and pulls every
    /// known pack again (a dropped register of a known pack is caught up; one of a new
    /// pack is not: it comes with the service's next register or `gateway.online`).
    pub(super) fn say_lost(&self) {
        let lost = self.lost.load(Ordering::SeqCst);
        let before = self.said_lost.swap(lost, Ordering::SeqCst);
        if lost == before {
            return;
        }
        eprintln!(
            "warning: the NATS client dropped {} event(s) while one was handled ({lost} in all): its buffer of {} per subject was full\nhint: give nats-server JetStream (`-js`) and no event is lost; pulling every known pack again",
            lost - before,
            super::feed::SUBSCRIPTION_CAPACITY
        );
        if self.a.json {
            let _ =
                super::output::print_json_line(&json!({"lost": lost - before, "lost_total": lost}));
        }
        self.guarded(
            event::GATEWAY_ONLINE,
            "events lost",
            Ok(Event::GatewayOnline),
            None,
        );
    }

    /// [`Ingest::handle`]; a panic while handling one event is reported and the service
    /// goes on with the next.
    pub(super) fn guarded(
        &self,
        subject: &str,
        why: &str,
        parsed: Result<Event, String>,
        fetched: Option<anyhow::Result<Pack>>,
    ) -> Handled {
        let run = std::panic::AssertUnwindSafe(|| self.handle(subject, why, parsed, fetched));
        match std::panic::catch_unwind(run) {
            Ok(h) => h,
            Err(_) => {
                eprintln!("error: {subject}: docfuse failed while handling it (a bug: please report it); skipped");
                Handled::Failed
            }
        }
    }

    /// Handles one message (`why` says what a pull is for when no message came;
    /// `fetched`, a register's pack when it was fetched already); says what happened,
    /// never fails.
    fn handle(
        &self,
        subject: &str,
        why: &str,
        parsed: Result<Event, String>,
        fetched: Option<anyhow::Result<Pack>>,
    ) -> Handled {
        let outcomes = match parsed {
            Err(e) => vec![Outcome::failed(None, anyhow::anyhow!(e))],
            Ok(Event::Register { code, pack_url }) => vec![self.register(code, pack_url, fetched)],
            Ok(Event::Unregister { code }) => vec![self.unregister(code)],
            Ok(Event::GatewayOnline) => self.pull_all(),
        };
        let subject = if why.is_empty() {
            subject.to_string()
        } else {
            format!("{subject} ({why})")
        };
        let unreachable = outcomes.iter().any(|o| {
            o.result.as_ref().err().is_some_and(|e| {
                e.downcast_ref::<crate::Error>()
                    .is_some_and(crate::pgstore::is_unreachable)
            })
        });
        let failed = outcomes.iter().any(|o| o.result.is_err());
        for o in outcomes {
            self.say(&subject, o);
        }
        match (unreachable, failed) {
            (true, _) => Handled::DatabaseAway,
            (false, true) => Handled::Failed,
            (false, false) => Handled::Applied,
        }
    }

    fn register(
        &self,
        code: String,
        url: Option<String>,
        fetched: Option<anyhow::Result<Pack>>,
    ) -> Outcome {
        let Some(url) = url else {
            return Outcome::nothing(code, "no docs_pack capability: nothing to ingest");
        };
        let fetched = fetched.unwrap_or_else(|| self.fetcher().fetch(&url));
        self.pull(code, &url, fetched)
    }

    /// How this ingester fetches packs (its limits and allowed hosts).
    pub(super) fn fetcher(&self) -> Fetcher {
        Fetcher {
            limits: (self.a.max_pack_bytes, self.a.max_packs_total_bytes),
            allow_hosts: self.a.allow_pack_host.clone(),
            timeout: std::time::Duration::from_secs_f64(self.a.fetch_timeout),
        }
    }

    /// Indexes the pack of `code` fetched (and verified) from `url`.
    fn pull(&self, code: String, url: &str, fetched: anyhow::Result<Pack>) -> Outcome {
        let version = fetched.as_ref().ok().map(|p| p.manifest.version.clone());
        let run = || -> anyhow::Result<BuildReport> {
            let pack = fetched?;
            anyhow::ensure!(
                pack.manifest.repo == code,
                "the pack at `{}` is the repository `{}`, not `{code}`: refused",
                crate::pack::redacted(url),
                pack.manifest.repo
            );
            let job = Job {
                pack: Some((&pack, url)),
                max_chunks: self.a.max_chunks,
                ..Job::default()
            };
            run_job(&self.a.index, &job, &self.vectors)
        };
        let r = run();
        self.queue_replaced();
        Outcome {
            version,
            ..Outcome::of(code, r)
        }
    }

    fn unregister(&self, code: String) -> Outcome {
        match self.indexed(&code) {
            Err(e) => return Outcome::failed(Some(code), e),
            Ok(false) => return self.forget(code),
            Ok(true) => {}
        }
        let job = Job {
            drop_roots: vec![PathBuf::from(format!("pack:{code}"))],
            max_chunks: self.a.max_chunks,
            ..Job::default()
        };
        let r = run_job(&self.a.index, &job, &self.vectors);
        self.queue_replaced();
        Outcome::of(code, r)
    }

    /// A job published (or tried to): the queue is the new generation's, and the inputs
    /// counted as needed by no chunk after the last vector publish are gone from it.
    fn queue_replaced(&self) {
        let kept = self.vectors_published.get().map(|(t, _)| (t, 0));
        self.vectors_published.set(kept);
    }

    /// Whether the pack `code` is a root of the index (none: false): of the database's
    /// published roots for a database (this host's writer folder may be behind it).
    fn indexed(&self, code: &str) -> anyhow::Result<bool> {
        let roots = if super::pg::is_db(&self.a.index) {
            super::pg::database_roots(&self.a.index)?
        } else {
            match Recorded::load(&self.folder) {
                Ok(rec) => match rec.spec {
                    crate::store::SourceSpec::Roots { roots } => roots,
                    crate::store::SourceSpec::Jsonl { .. } => Vec::new(),
                },
                Err(e) if is_no_index(&e) => return Ok(false),
                Err(e) => return Err(e),
            }
        };
        let dir = std::fs::canonicalize(&self.folder)
            .unwrap_or_else(|_| self.folder.clone())
            .join(crate::pack::PACKS_DIR)
            .join(code);
        Ok(roots.iter().any(|r| std::path::Path::new(r) == dir))
    }

    /// A pack that is not in the index (its first build failed): its unpacked files and
    /// recorded source are removed under the writer lock, so it is not pulled again.
    fn forget(&self, code: String) -> Outcome {
        let run = || -> anyhow::Result<bool> {
            if !self.known()?.contains_key(&code) {
                return Ok(false);
            }
            let _lock = crate::generation::acquire_writer_lock(&self.folder, true, &mut |_| {})?;
            let roots = [PathBuf::from(format!("pack:{code}"))];
            super::pack::PackSteps::new(&self.folder, None, &roots).after()?;
            Ok(true)
        };
        match run() {
            Ok(true) => Outcome::nothing(
                code,
                "not in the index: its unpacked files and source removed",
            ),
            Ok(false) => {
                let e =
                    anyhow::anyhow!("unknown repository `{code}`: no pack of it is in the index");
                Outcome::failed(Some(code), e)
            }
            Err(e) => Outcome::failed(Some(code), e),
        }
    }

    /// Pulls every pack whose source is recorded: fetched `--fetches` at a time, each
    /// indexed as soon as it is fetched (at most `--fetches` fetched packs wait in
    /// memory); none is started after a stop.
    fn pull_all(&self) -> Vec<Outcome> {
        let known = match self.known() {
            Ok(k) => std::sync::Mutex::new(k.into_iter()),
            Err(e) => return vec![Outcome::failed(None, e)],
        };
        let fetcher = self.fetcher();
        let (tx, rx) = std::sync::mpsc::sync_channel(0);
        let mut outcomes = Vec::new();
        let stopped = &*self.stopped;
        std::thread::scope(|s| {
            for _ in 0..self.a.fetches.max(1) {
                let (tx, known, fetcher) = (tx.clone(), &known, &fetcher);
                s.spawn(move || loop {
                    let next = known.lock().ok().and_then(|mut k| k.next());
                    let Some((code, url)) = next else { break };
                    if stopped.load(Ordering::SeqCst) {
                        break;
                    }
                    let fetched = fetcher.fetch(&url);
                    if tx.send((code, url, fetched)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for (code, url, fetched) in rx.iter() {
                outcomes.push(self.pull(code, &url, fetched));
                if self.stopped.load(Ordering::SeqCst) {
                    break;
                }
            }
            // a fetcher waiting to hand over its pack gets an error and ends
            drop(rx);
        });
        outcomes
    }

    /// The packs of the index and where they came from.
    fn known(&self) -> anyhow::Result<crate::pack::Sources> {
        let packs = self.folder.join(crate::pack::PACKS_DIR);
        Ok(crate::pack::sources(&packs)?)
    }

    /// The index as reports name it (a database URL without its password).
    fn shown(&self) -> PathBuf {
        super::pg::shown_index(&self.a.index)
    }

    pub(super) fn say(&self, subject: &str, o: Outcome) {
        let code = o.code.as_deref();
        if self.a.json {
            let mut v = json!({"subject": subject, "code": code, "ok": o.result.is_ok()});
            if let Some(version) = &o.version {
                v["version"] = json!(version);
            }
            match &o.result {
                Ok(Done::Built(r)) => {
                    v["report"] = super::build_run::report_json(&self.shown(), r, &self.vectors)
                }
                Ok(Done::Nothing(why)) => v["note"] = json!(why),
                Err(e) => v["error"] = json!(format!("{e:#}")),
            }
            let _ = super::output::print_json_line(&v);
        } else if let Ok(d) = &o.result {
            let what = match d {
                Done::Built(r) => report_line(&self.shown(), r, &self.vectors),
                Done::Nothing(why) => why.to_string(),
            };
            let _ =
                super::output::print_line(&format!("{subject} `{}`: {what}", code.unwrap_or("")));
        }
        if let Err(e) = &o.result {
            let code = code.map(|c| format!(" `{c}`")).unwrap_or_default();
            eprintln!(
                "error: {subject}{code}: {}; skipped",
                super::output::error_text(e)
            );
        }
    }
}

/// How long an event that failed because the database could not be reached waits in the
/// stream before it is tried again.
pub(super) const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// How often an ingester that leaves embedding to workers looks for their vectors.
pub(super) const VECTOR_CHECK: std::time::Duration = std::time::Duration::from_secs(10);
/// While workers are still embedding, their vectors are published at most this often.
const VECTOR_BATCHING: std::time::Duration = std::time::Duration::from_secs(60);

/// What handling one event came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handled {
    /// Done: the index holds what the event asked for.
    Applied,
    /// Reported and skipped: not tried again (the index is as before).
    Failed,
    /// The database could not be reached: worth trying again.
    DatabaseAway,
}

/// What handling one event for one repository did.
pub(super) struct Outcome {
    code: Option<String>,
    /// The version of the pack fetched (said with `--json`).
    version: Option<String>,
    result: anyhow::Result<Done>,
}

pub(super) enum Done {
    Built(Box<BuildReport>),
    Nothing(&'static str),
}

impl Outcome {
    fn of(code: String, r: anyhow::Result<BuildReport>) -> Outcome {
        Outcome {
            code: Some(code),
            version: None,
            result: r.map(|r| Done::Built(Box::new(r))),
        }
    }

    pub(super) fn nothing(code: String, why: &'static str) -> Outcome {
        Outcome {
            code: Some(code),
            version: None,
            result: Ok(Done::Nothing(why)),
        }
    }

    fn failed(code: Option<String>, e: anyhow::Error) -> Outcome {
        Outcome {
            code,
            version: None,
            result: Err(e),
        }
    }
}
