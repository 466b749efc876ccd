//! Where `ingest`'s registry events come from: a durable JetStream consumer when the NATS
//! server has JetStream (events published while docfuse is down, busy or reconnecting wait
//! in the stream and are acknowledged one by one once handled; one not acknowledged is
//! delivered again), else plain subscriptions, whose messages the client drops when its
//! buffer is full — each drop the client reports is counted and said.

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

/// How long an event may be in hand before the server delivers it again: longer than a
/// build of a large pack (a redelivery of an event still being handled is only wasted
/// work: handling is idempotent by content hash).
const ACK_WAIT: Duration = Duration::from_secs(30 * 60);

/// Messages held per subject while an event is handled (plain subscriptions).
pub const SUBSCRIPTION_CAPACITY: usize = 1024;

/// One event to handle.
pub struct Incoming {
    pub subject: String,
    pub payload: Vec<u8>,
    /// The JetStream message to acknowledge once handled.
    ack: Option<jetstream::Message>,
}

impl Incoming {
    /// Acknowledges a JetStream event (handled: never delivered again). Plain messages
    /// need none.
    pub async fn ack(&self) {
        if let Some(m) = &self.ack {
            if let Err(e) = m.ack().await {
                eprintln!(
                    "warning: cannot acknowledge a `{}` event ({e}); it will be delivered again",
                    self.subject
                );
            }
        }
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

    /// What the banner says about delivery.
    pub fn describe(&self) -> &'static str {
        match self {
            Feed::Durable(_) => "JetStream durable consumer: no event is lost",
            Feed::Plain(_) => {
                "plain subscriptions (no JetStream on the server: start it with `-js` so no event is lost; drops are counted)"
            }
        }
    }
}

/// Connects to `url` and returns the events: from a durable consumer named `durable` when
/// the server has JetStream (on the stream that holds `service.register`, else a stream
/// [`STREAM`] made for the registry subjects), else from plain subscriptions. `lost`
/// counts the messages the client reports dropped (plain subscriptions).
///
/// # Errors
/// The server cannot be reached, or a subscription or consumer cannot be made.
pub async fn subscribe(url: &str, durable: &str, lost: Arc<AtomicU64>) -> anyhow::Result<Feed> {
    let client = connect(url, lost).await?;
    let js = jetstream::new(client.clone());
    match durable_consumer(&js, durable).await {
        Ok(stream) => return Ok(Feed::Durable(Box::new(stream))),
        Err(e) => tracing::info!("no JetStream consumer ({e:#}): plain subscriptions"),
    }
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
    Ok(Feed::Plain(futures::stream::select_all(subs)))
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

/// The durable consumer `name` on the stream holding the registry subjects (made when
/// none holds them), delivering the events published from its creation on.
async fn durable_consumer(
    js: &jetstream::Context,
    name: &str,
) -> anyhow::Result<jetstream::consumer::pull::Stream> {
    let stream = match js.stream_by_subject(event::REGISTER).await {
        Ok(found) => js.get_stream(found).await?,
        Err(_) => {
            js.get_or_create_stream(jetstream::stream::Config {
                name: STREAM.into(),
                subjects: event::SUBJECTS.iter().map(|s| s.to_string()).collect(),
                max_age: KEEP,
                storage: jetstream::stream::StorageType::File,
                ..Default::default()
            })
            .await?
        }
    };
    let consumer = stream
        .get_or_create_consumer(
            name,
            jetstream::consumer::pull::Config {
                durable_name: Some(name.into()),
                ack_policy: jetstream::consumer::AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                deliver_policy: jetstream::consumer::DeliverPolicy::New,
                ..Default::default()
            },
        )
        .await?;
    Ok(consumer.messages().await?)
}

/// The durable consumer's name for an index: `docfuse-ingest-` and the first 12 hex
/// digits of the sha256 of its folder (absolute) or URL (password redacted), so each
/// index ingests every event once.
pub fn durable_name(index: &std::path::Path) -> String {
    let key = match super::pg::is_db(index) {
        true => super::pg::shown_index(index),
        false => std::path::absolute(index).unwrap_or_else(|_| index.to_path_buf()),
    };
    let sha = crate::hashing::sha256_hex(key.to_string_lossy().as_bytes());
    format!("docfuse-ingest-{}", &sha[..12])
}
