//! `ingest`'s event loop: an intake task on the runtime takes every event delivered in
//! hand at once (its progress acks start there, so an event waiting behind a long build
//! is not delivered again); the loop puts them in lanes (up to [`IN_HAND`]), fetches
//! their packs side by side ([`Lanes`]), and applies each once its pack is fetched and
//! every earlier event of its service is applied. A JetStream event is acknowledged once
//! applied; one delivered again that is older than its service's last applied event is
//! skipped ([`crate::pack::Applied`]).

use super::feed::{Feed, Incoming, KeepAlive, IN_HAND};
use super::ingest::{Handled, Ingest, Outcome, RETRY_AFTER, VECTOR_CHECK};
use super::lanes::{Lane, Lanes};
use crate::pack::event::{self, Event};
use crate::pack::Pack;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;

/// One event in hand.
pub(super) struct InHand {
    m: Incoming,
    parsed: Result<Event, String>,
    /// What the fetch of a register's pack brought (`None`: not fetched yet, or no pack).
    fetched: Option<anyhow::Result<Pack>>,
    /// Progress acks while the event waits and while it is handled.
    alive: Option<KeepAlive>,
}

/// A fetch that ended: the event's arrival number and its pack.
type Fetched = (u64, anyhow::Result<Pack>);

/// An event the intake task took, with its progress acks running.
type Received = (Incoming, Option<KeepAlive>);

/// Takes every event of `feed` in hand as it is delivered, until `quit` or the feed ends
/// (then the receiver ends); returns the feed (to hand back what it still holds).
fn intake(
    rt: &tokio::runtime::Runtime,
    mut feed: Feed,
    every: std::time::Duration,
    quit: std::sync::Arc<tokio::sync::Notify>,
) -> (mpsc::Receiver<Received>, tokio::task::JoinHandle<Feed>) {
    let (tx, rx) = mpsc::channel(IN_HAND);
    let task = rt.spawn(async move {
        loop {
            let m = tokio::select! {
                biased;
                () = quit.notified() => break,
                m = feed.next() => m,
            };
            let Some(m) = m else { break };
            let alive = m.keep_alive(every);
            if tx.send((m, alive)).await.is_err() {
                break;
            }
        }
        feed
    });
    (rx, task)
}

/// What the event loop woke up for.
enum Next {
    Message(Box<Received>),
    Fetched(Fetched),
    /// The events ended.
    Ended,
    /// Time to look for vectors from embedding workers.
    Tick,
}

impl Ingest<'_> {
    /// Handles each message until `stop` resolves (false) or the subscriptions end
    /// (true; the events in hand are applied first).
    pub(super) fn listen(
        &self,
        rt: &tokio::runtime::Runtime,
        feed: Feed,
        every: std::time::Duration,
        stop: &tokio::sync::Notify,
    ) -> bool {
        // with embedding left to workers, their vectors are published as they arrive
        let checks = super::pg::is_db(&self.a.index) && self.a.max_chunks.is_some();
        let mut due = tokio::time::Instant::now() + VECTOR_CHECK;
        let (tx, mut fetched) = mpsc::unbounded_channel::<Fetched>();
        let quit = std::sync::Arc::new(tokio::sync::Notify::new());
        let (mut incoming, task) = intake(rt, feed, every, quit.clone());
        let mut lanes: Lanes<InHand> = Lanes::new(self.a.fetches as usize);
        let mut ended = false;
        loop {
            self.apply_ready(rt, &mut lanes);
            if self.stopped.load(Ordering::SeqCst) {
                break;
            }
            if ended && lanes.len() == 0 {
                return true;
            }
            self.start_fetches(rt, &mut lanes, &tx);
            let room = lanes.len() < IN_HAND && !ended;
            let check = checks.then_some(due);
            let next = rt.block_on(async {
                tokio::select! {
                    biased;
                    () = stop.notified() => None,
                    Some(f) = fetched.recv() => Some(Next::Fetched(f)),
                    m = incoming.recv(), if room => Some(m.map_or(Next::Ended, |m| Next::Message(Box::new(m)))),
                    () = tick(check) => Some(Next::Tick),
                }
            });
            match next {
                None => break,
                // the events in hand are still applied (their acks may fail: then the
                // server delivers them again)
                Some(Next::Ended) => ended = true,
                Some(Next::Tick) => {
                    self.publish_vectors();
                    due = tokio::time::Instant::now() + VECTOR_CHECK;
                }
                Some(Next::Fetched((id, pack))) => {
                    if let Some(h) = lanes.fetched(id) {
                        h.fetched = Some(pack);
                    }
                }
                Some(Next::Message(m)) => {
                    let (m, alive) = *m;
                    self.take_in(rt, m, alive, &mut lanes);
                }
            }
        }
        quit.notify_one();
        let feed = rt.block_on(task).ok();
        self.hand_back(rt, incoming, feed, &mut lanes);
        false
    }

    /// Takes `m` in hand in its service's lane (another `service.*` subject is not ours:
    /// acknowledged and ignored).
    fn take_in(
        &self,
        rt: &tokio::runtime::Runtime,
        m: Incoming,
        alive: Option<KeepAlive>,
        lanes: &mut Lanes<InHand>,
    ) {
        if !event::SUBJECTS.contains(&m.subject.as_str()) {
            // heartbeats and the like
            tracing::debug!("ignored a message on `{}`", m.subject);
            rt.block_on(m.ack());
            return;
        }
        let parsed = event::parse(m.subject.as_str(), &m.payload);
        let (lane, fetch) = match &parsed {
            Ok(Event::Register { code, pack_url }) => {
                (Lane::Service(code.clone()), pack_url.is_some())
            }
            Ok(Event::Unregister { code }) => (Lane::Service(code.clone()), false),
            Ok(Event::GatewayOnline) => (Lane::All, false),
            // reported when its turn comes; it changes no service
            Err(_) => (Lane::Service(String::new()), false),
        };
        let h = InHand {
            m,
            parsed,
            fetched: None,
            alive,
        };
        // delivered again after a newer event of its service was applied: not fetched
        if self.skip_stale(rt, &h) {
            return;
        }
        lanes.push(lane, fetch, h);
    }

    /// Starts the fetches the lanes have slots for, each on the blocking pool; its pack
    /// comes back through `tx`.
    fn start_fetches(
        &self,
        rt: &tokio::runtime::Runtime,
        lanes: &mut Lanes<InHand>,
        tx: &mpsc::UnboundedSender<Fetched>,
    ) {
        for id in lanes.start_fetches() {
            let Some(Ok(Event::Register {
                pack_url: Some(url),
                ..
            })) = lanes.get(id).map(|h| &h.parsed)
            else {
                continue;
            };
            let (url, fetcher, tx) = (url.clone(), self.fetcher(), tx.clone());
            rt.spawn_blocking(move || {
                // a panic is a failed fetch (reported), never a service stuck for ever
                let fetch = std::panic::AssertUnwindSafe(|| fetcher.fetch(&url));
                let pack = std::panic::catch_unwind(fetch).unwrap_or_else(|_| {
                    Err(anyhow::anyhow!(
                        "docfuse failed while fetching the pack (a bug: please report it)"
                    ))
                });
                let _ = tx.send((id, pack));
            });
        }
    }

    /// Applies every event whose turn it is, oldest first, until none is ready or a
    /// stop was asked for.
    fn apply_ready(&self, rt: &tokio::runtime::Runtime, lanes: &mut Lanes<InHand>) {
        while !self.stopped.load(Ordering::SeqCst) {
            let Some((_, h)) = lanes.take_ready() else {
                return;
            };
            self.apply(rt, h);
            self.say_lost();
        }
    }

    /// Applies one event (skipped when older than its service's last applied one), then
    /// acknowledges it, or hands it back to be tried again when the database is away.
    fn apply(&self, rt: &tokio::runtime::Runtime, h: InHand) {
        if self.skip_stale(rt, &h) {
            return;
        }
        let seen = self.sequence_of(&h);
        let InHand {
            m,
            parsed,
            fetched,
            alive,
        } = h;
        let handled = self.guarded(m.subject.as_str(), "", parsed, fetched);
        drop(alive);
        if handled == Handled::DatabaseAway && rt.block_on(m.retry_after(RETRY_AFTER)) {
            // the event waits in the stream; a later one of its service applied meanwhile
            // makes it older than the index, and it is then skipped
            eprintln!(
                "docfuse: `{}` is tried again in {} s, once the database answers",
                m.subject,
                RETRY_AFTER.as_secs()
            );
            return;
        }
        // only an event that took effect makes older ones stale (an older event after
        // a failed newer one is still applied)
        if let (Some((stream, seq, code)), Handled::Applied) = (seen, handled) {
            self.record_applied(&stream, &code, seq);
        }
        // handled (or reported and skipped): not delivered again
        rt.block_on(m.ack());
    }

    /// The stream, stream sequence and service of a JetStream event of one service.
    fn sequence_of(&self, h: &InHand) -> Option<(String, u64, String)> {
        let code = match &h.parsed {
            Ok(Event::Register { code, .. } | Event::Unregister { code }) => code,
            _ => return None,
        };
        Some((self.stream.clone()?, h.m.sequence()?, code.clone()))
    }

    /// Whether `h` is older than its service's last applied event (delivered again after
    /// a newer one was applied): then it is said, acknowledged and not applied.
    fn skip_stale(&self, rt: &tokio::runtime::Runtime, h: &InHand) -> bool {
        let Some((stream, seq, code)) = self.sequence_of(h) else {
            return false;
        };
        if !self.applied.borrow().is_stale(&stream, &code, seq) {
            return false;
        }
        let why = "older than the event of this service already applied: skipped";
        self.say(&h.m.subject, Outcome::nothing(code, why));
        rt.block_on(h.m.ack());
        true
    }

    /// Records that the event `seq` of `code` is applied (a failure to write it is a
    /// warning: an older event delivered again would then be applied again).
    fn record_applied(&self, stream: &str, code: &str, seq: u64) {
        let mut applied = self.applied.borrow_mut();
        applied.record(stream, code, seq);
        let packs = self.folder.join(crate::pack::PACKS_DIR);
        if let Err(e) = crate::pack::record_applied(&packs, &applied) {
            eprintln!("warning: {e}");
        }
    }

    /// Hands back every event in hand, taken by the intake or still in the feed (a
    /// stop), all at once within [`HAND_BACK_WITHIN`]: a JetStream event is delivered
    /// again a few seconds later, to the next start; a plain message cannot be handed
    /// back, so each is counted and said as lost.
    fn hand_back(
        &self,
        rt: &tokio::runtime::Runtime,
        mut incoming: mpsc::Receiver<Received>,
        feed: Option<Feed>,
        lanes: &mut Lanes<InHand>,
    ) {
        let mut held: Vec<Incoming> = lanes.drain().into_iter().map(|h| h.m).collect();
        incoming.close();
        while let Ok((m, _)) = incoming.try_recv() {
            held.push(m);
        }
        if let Some(mut feed) = feed {
            let wait = std::time::Duration::from_millis(300);
            while let Ok(Some(m)) =
                rt.block_on(async { tokio::time::timeout(wait, feed.next()).await })
            {
                held.push(m);
            }
        }
        let answered = rt.block_on(async {
            let naks = futures::future::join_all(held.iter().map(|m| m.nak()));
            tokio::time::timeout(HAND_BACK_WITHIN, naks).await
        });
        let lost = match answered {
            Ok(handed) => handed.iter().filter(|&&h| !h).count(),
            Err(_) => 0,
        };
        if lost > 0 {
            self.lost_on_stop(lost);
        }
    }
}

/// Longest a stop waits for the NATS server to take back the events in hand (those it
/// did not confirm are delivered again after the ack wait).
const HAND_BACK_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Resolves at `due`, never without it (events in between do not put it off).
async fn tick(due: Option<tokio::time::Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
