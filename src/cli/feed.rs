//! Where `ingest`'s registry events come from: a durable JetStream consumer when the NATS
//! server has JetStream (events published while docfuse is down, busy or reconnecting wait
//! in the stream; up to [`IN_HAND`] are in hand, kept alive by progress acks until
//! handled, acknowledged once handled, handed back on a stop, delivered again a minute
//! after a crash — an event older than one of its service already applied is then
//! skipped, by its stream sequence), else plain subscriptions, whose messages the client
//! drops when its buffer is full — each drop the client reports is counted and said.

use crate::pack::event;
use anyhow::Context;
use async_nats::jetstream;
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Name of the stream docfuse creates for the registry subjects when no stream holds them.
pub const STREAM: &str = "DOCFUSE_REGISTRY";

/// How long the stream keeps an event (7 days).
const KEEP: Duration = Duration::from_secs(7 * 24 * 3600);

/// How long an event may be in hand without a word before the server delivers it again
/// (a crashed ingester's event comes back after this), for a consumer docfuse makes.
const ACK_WAIT: Duration = Duration::from_secs(60);

/// [`ACK_WAIT`], or `DOCFUSE_INGEST_ACK_WAIT_S` seconds (1 to 3600; tests make a crashed
/// ingester's events come back sooner).
fn ack_wait() -> Duration {
    std::env::var("DOCFUSE_INGEST_ACK_WAIT_S")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .map_or(ACK_WAIT, Duration::from_secs)
}

/// How long an event handed back on a stop waits in the stream before it is delivered
/// again.
pub const HANDED_BACK_DELAY: Duration = Duration::from_secs(5);

/// Messages held per subject while an event is handled (plain subscriptions).
pub const SUBSCRIPTION_CAPACITY: usize = 1024;

/// Most events in hand at once (received, not yet handled): the JetStream consumer's
/// `max_ack_pending`, and how many `ingest` takes from a plain subscription before it
/// waits for one to be handled.
pub const IN_HAND: usize = 256;

/// One event to handle.
pub struct Incoming {
    pub subject: String,
    pub payload: Vec<u8>,
    /// The JetStream message to acknowledge once handled.
    ack: Option<jetstream::Message>,
}

impl Incoming {
    /// The JetStream stream sequence of the event (`None` for a plain message).
    pub fn sequence(&self) -> Option<u64> {
        let info = self.ack.as_ref()?.info().ok()?;
        Some(info.stream_sequence)
    }

    /// Acknowledges a JetStream event (handled: never delivered again). Plain messages
    /// need none.
    pub async fn ack(&self) {
        self.reply(jetstream::AckKind::Ack).await
    }

    /// Hands a JetStream event back unhandled (a stop): delivered again after
    /// [`HANDED_BACK_DELAY`], to the next ingester of this index (not at once: this
    /// process, still pulling, would be given it again). False for a plain message (it
    /// cannot be handed back).
    pub async fn nak(&self) -> bool {
        self.reply(jetstream::AckKind::Nak(Some(HANDED_BACK_DELAY)))
            .await;
        self.ack.is_some()
    }

    /// Hands a JetStream event back to be delivered again after `delay` (the database
    /// could not be reached); false for a plain message (it cannot be retried).
    pub async fn retry_after(&self, delay: Duration) -> bool {
        self.reply(jetstream::AckKind::Nak(Some(delay))).await;
        self.ack.is_some()
    }

    /// Answers the server and waits for its confirmation (a process that exits right
    /// after still has its answer on the server).
    async fn reply(&self, kind: jetstream::AckKind) {
        if let Some(m) = &self.ack {
            if let Err(e) = m.double_ack_with(kind).await {
                eprintln!(
                    "warning: cannot answer the NATS server for a `{}` event ({e}); it will be delivered again",
                    self.subject
                );
            }
        }
    }

    /// While the returned guard lives, says every `every` (a quarter of the consumer's
    /// ack wait) that the event is still in hand (waiting for its turn, or a long
    /// build), so the server does not deliver it again. Called on the runtime.
    pub fn keep_alive(&self, every: Duration) -> Option<KeepAlive> {
        let m = self.ack.clone()?;
        Some(KeepAlive(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let _ = m.ack_with(jetstream::AckKind::Progress).await;
            }
        })))
    }
}

/// Progress acks of an event in hand; stopped when dropped.
pub struct KeepAlive(tokio::task::JoinHandle<()>);

impl Drop for KeepAlive {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The events of one NATS server, in the order they were published.
pub enum Feed {
    /// A durable JetStream consumer's messages.
    Durable(Box<jetstream::consumer::pull::Stream>),
    /// Plain subscriptions, as one stream.
    Plain(futures::stream::SelectAll<async_nats::Subscriber>),
}

impl Feed {
    /// The next event; `None` when the feed ended (the connection closed for good).
    pub async fn next(&mut self) -> Option<Incoming> {
        match self {
            Feed::Plain(subs) => subs.next().await.map(|m| Incoming {
                subject: m.subject.to_string(),
                payload: m.payload.to_vec(),
                ack: None,
            }),
            Feed::Durable(stream) => loop {
                match stream.next().await? {
                    Ok(m) => {
                        return Some(Incoming {
                            subject: m.subject.to_string(),
                            payload: m.payload.to_vec(),
                            ack: Some(m),
                        })
                    }
                    // missed heartbeats while the server restarts: the stream goes on
                    Err(e) => tracing::debug!("JetStream consumer: {e}"),
                }
            },
        }
    }
}

/// The events and what the banner says about their delivery.
pub struct Subscribed {
    pub feed: Feed,
    pub delivery: String,
    /// The JetStream stream the events come from, as `NAME@CREATED` (its sequences are
    /// comparable only within it); `None` for plain subscriptions.
    pub stream: Option<String>,
    /// How often an event in hand is said to be in progress: a quarter of the
    /// consumer's ack wait.
    pub progress_every: Duration,
    /// The stream's last event's sequence when subscribed (`None`: plain subscriptions).
    pub last_sequence: Option<u64>,
}

/// Connects to `url` and returns the events: from a durable consumer named `durable` when
/// the server has JetStream (on the stream that holds `service.register` when it holds
/// every registry subject and is not a work queue, else a stream [`STREAM`] made for
/// them), else from plain subscriptions. `lost` counts the messages the client reports
/// dropped (plain subscriptions).
///
/// # Errors
/// The server cannot be reached, or a subscription or consumer cannot be made.
pub async fn subscribe(
    url: &str,
    durable: &str,
    lost: Arc<AtomicU64>,
) -> anyhow::Result<Subscribed> {
    let client = connect(url, lost).await?;
    let js = jetstream::new(client.clone());
    let why = match durable_consumer(&js, durable).await {
        Ok(d) => {
            return Ok(Subscribed {
                feed: Feed::Durable(Box::new(d.messages)),
                delivery: format!("JetStream durable consumer `{durable}`: no event is lost"),
                stream: Some(d.stream),
                progress_every: d.ack_wait / 4,
                last_sequence: Some(d.last_sequence),
            })
        }
        Err(e) => format!("{e:#}"),
    };
    // one subscription for a service's register and unregister, so they are handled in
    // the order they were published (two subscriptions would be merged in turns)
    let mut subs = Vec::new();
    for subject in [event::SERVICE_SUBJECTS, event::GATEWAY_ONLINE] {
        subs.push(
            client
                .subscribe(subject)
                .await
                .with_context(|| format!("cannot subscribe to `{subject}`"))?,
        );
    }
    // the subscriptions are on the server before the first message is awaited
    client
        .flush()
        .await
        .context("cannot reach the NATS server")?;
    Ok(Subscribed {
        feed: Feed::Plain(futures::stream::select_all(subs)),
        delivery: format!(
            "plain subscriptions, events dropped while busy are counted; no JetStream consumer ({why}): a server with JetStream (`nats-server -js`) loses none"
        ),
        stream: None,
        progress_every: ACK_WAIT / 4,
        last_sequence: None,
    })
}

async fn connect(url: &str, lost: Arc<AtomicU64>) -> anyhow::Result<async_nats::Client> {
    async_nats::ConnectOptions::new()
        .name("docfuse-ingest")
        .event_callback(move |e| {
            let lost = lost.clone();
            async move {
                match e {
                    async_nats::Event::Connected => eprintln!("docfuse: connected to NATS"),
                    async_nats::Event::Disconnected => {
                        eprintln!("docfuse: disconnected from NATS; reconnecting…")
                    }
                    async_nats::Event::SlowConsumer(_) => {
                        lost.fetch_add(1, Ordering::SeqCst);
                    }
                    other => eprintln!("docfuse: NATS: {other}"),
                }
            }
        })
        // a registry message is a few hundred bytes: a flood while a build runs is held
        // up to this many messages per subject, not the default 65,536
        .subscription_capacity(SUBSCRIPTION_CAPACITY)
        .connect(url)
        .await
        .with_context(|| {
            format!(
                "cannot connect to the NATS server at `{}`\nhint: is nats-server running there? (`nats-server -js -a 127.0.0.1 -p 4222`)",
                crate::pack::redacted_servers(url)
            )
        })
}

/// A durable consumer's messages and what `ingest` needs to know of it.
struct Durable {
    messages: jetstream::consumer::pull::Stream,
    /// The stream's identity, `NAME@CREATED`.
    stream: String,
    /// The consumer's ack wait.
    ack_wait: Duration,
    /// The stream's last event's sequence.
    last_sequence: u64,
}

/// The durable consumer `name` on the stream holding the registry subjects (made when
/// none holds them), delivering the events published from its creation on.
async fn durable_consumer(js: &jetstream::Context, name: &str) -> anyhow::Result<Durable> {
    let mut stream = match js.stream_by_subject(event::REGISTER).await {
        Ok(found) => {
            let stream = js.get_stream(&found).await?;
            usable(stream.cached_info(), &found)?;
            stream
        }
        Err(_) => {
            js.get_or_create_stream(jetstream::stream::Config {
                name: STREAM.into(),
                subjects: event::SUBJECTS.iter().map(|s| s.to_string()).collect(),
                max_age: KEEP,
                storage: jetstream::stream::StorageType::File,
                // a service that publishes its register as a request gets no reply
                // from the stream in the registry's place
                no_ack: true,
                ..Default::default()
            })
            .await?
        }
    };
    let config = jetstream::consumer::pull::Config {
        durable_name: Some(name.into()),
        ack_policy: jetstream::consumer::AckPolicy::Explicit,
        ack_wait: ack_wait(),
        // events of different services are handled side by side; one service's stay in
        // order by `ingest`'s lanes, and by stream sequence when delivered again
        max_ack_pending: IN_HAND as i64,
        deliver_policy: jetstream::consumer::DeliverPolicy::New,
        ..Default::default()
    };
    let mut consumer = stream.get_or_create_consumer(name, config.clone()).await?;
    let had = &consumer.cached_info().config;
    if had.max_ack_pending != config.max_ack_pending || had.ack_wait != config.ack_wait {
        // made by an older docfuse (one event at a time) or with another ack wait: the
        // server updates it in place (its position and pending events are kept)
        match stream.create_consumer(config).await {
            Ok(updated) => consumer = updated,
            Err(e) => tracing::warn!("cannot update the consumer `{name}`: {e}"),
        }
    }
    let ack_wait = consumer.cached_info().config.ack_wait;
    let info = stream.info().await?;
    let identity = format!("{}@{}", info.config.name, info.created);
    let last_sequence = info.state.last_sequence;
    Ok(Durable {
        messages: consumer.messages().await?,
        stream: identity,
        ack_wait,
        last_sequence,
    })
}

/// Why the stream `name` that holds `service.register` cannot be ingested from: it lacks
/// another registry subject, or it is a work queue (acknowledging would take the events
/// from their other readers).
fn usable(info: &jetstream::stream::Info, name: &str) -> anyhow::Result<()> {
    let c = &info.config;
    anyhow::ensure!(
        c.retention != jetstream::stream::RetentionPolicy::WorkQueue,
        "the stream `{name}` holding `{}` is a work queue",
        event::REGISTER
    );
    for subject in event::SUBJECTS {
        anyhow::ensure!(
            c.subjects
                .iter()
                .any(|pattern| subject_matches(pattern, subject)),
            "the stream `{name}` holds `{}` but not `{subject}`",
            event::REGISTER
        );
    }
    Ok(())
}

/// NATS subject matching: `*` stands for one token, a final `>` for one or more.
fn subject_matches(pattern: &str, subject: &str) -> bool {
    let mut tokens = subject.split('.');
    for p in pattern.split('.') {
        match (p, tokens.next()) {
            (">", Some(_)) => return true,
            ("*", Some(_)) => {}
            (p, Some(t)) if p == t => {}
            _ => return false,
        }
    }
    tokens.next().is_none()
}

/// The durable consumer's name for an index: `docfuse-ingest-` and the first 12 hex
/// digits of the sha256 of its URL (password redacted), or of this host's name and the
/// folder's absolute path, so each index ingests every event once.
pub fn durable_name(index: &std::path::Path) -> String {
    let key = match super::pg::is_db(index) {
        true => super::pg::shown_index(index).to_string_lossy().into_owned(),
        false => format!(
            "{}:{}",
            crate::fsio::host_name(),
            crate::write::root_key(index).display()
        ),
    };
    let sha = crate::hashing::sha256_hex(key.as_bytes());
    format!("docfuse-ingest-{}", &sha[..12])
}

#[cfg(test)]
mod tests {
    use super::{durable_name, subject_matches};

    #[test]
    fn one_index_has_one_consumer_name_however_it_is_spelled() {
        let d = tempfile::tempdir().unwrap();
        let here = d.path().join("idx");
        let spelled = d.path().join("x/../idx/./");
        assert_eq!(durable_name(&here), durable_name(&spelled));
        std::fs::create_dir(&here).unwrap();
        assert_eq!(durable_name(&here), durable_name(&spelled));
        assert_ne!(durable_name(&here), durable_name(&d.path().join("other")));
    }

    #[test]
    fn subjects_match_as_nats_matches_them() {
        assert!(subject_matches("service.*", "service.register"));
        assert!(subject_matches("service.>", "service.register"));
        assert!(subject_matches(">", "gateway.online"));
        assert!(subject_matches("gateway.online", "gateway.online"));
        assert!(!subject_matches("service.*", "gateway.online"));
        assert!(!subject_matches("service", "service.register"));
        assert!(!subject_matches("service.*.x", "service.register"));
        assert!(!subject_matches("*", "service.register"));
    }
}
