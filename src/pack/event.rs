//! The service-registry messages `docfuse ingest` takes from NATS, parsed and checked
//! (the design's `docs-pack-subscriber`: `service.register` with the `docs_pack`
//! capability ingests the service's pack, `service.unregister` removes it,
//! `gateway.online` pulls every known pack again).

use super::valid_code;
use serde::Deserialize;

/// A service announces itself: `{"code", "capabilities": [...], "docs_pack_url"}`.
pub const REGISTER: &str = "service.register";
/// A service leaves: `{"code"}`.
pub const UNREGISTER: &str = "service.unregister";
/// The gateway is back: every known pack is pulled again (the payload is not read).
pub const GATEWAY_ONLINE: &str = "gateway.online";
/// The subjects `docfuse ingest` handles.
pub const SUBJECTS: [&str; 3] = [REGISTER, UNREGISTER, GATEWAY_ONLINE];
/// The wildcard `docfuse ingest` subscribes to for [`REGISTER`] and [`UNREGISTER`] (one
/// subscription keeps their order; its other subjects are ignored).
pub const SERVICE_SUBJECTS: &str = "service.*";
/// The capability that says a service serves a docs pack.
pub const DOCS_PACK: &str = "docs_pack";
/// Largest message read, in bytes (a registry message is a few hundred).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// One message, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A service registered; `pack_url` is its docs pack's http(s) URL, `None` when it
    /// has no `docs_pack` capability (nothing to ingest).
    Register {
        code: String,
        pack_url: Option<String>,
    },
    /// A service left: its pack leaves the index.
    Unregister { code: String },
    /// Pull every known pack again.
    GatewayOnline,
}

#[derive(Deserialize)]
struct Register {
    code: String,
    #[serde(default)]
    capabilities: Vec<String>,
    #[serde(default)]
    docs_pack_url: Option<String>,
}

#[derive(Deserialize)]
struct Unregister {
    code: String,
}

/// Parses the message `payload` received on `subject`. Fields other than those named are
/// ignored (a registry message may carry more).
///
/// # Errors
/// A sentence saying what is wrong: an unknown subject, a payload over
/// [`MAX_MESSAGE_BYTES`] or not the JSON of its subject, a repository code that is not
/// valid, a `docs_pack` capability without an http(s) `docs_pack_url`.
pub fn parse(subject: &str, payload: &[u8]) -> Result<Event, String> {
    if payload.len() > MAX_MESSAGE_BYTES {
        return Err(format!(
            "the message is {} bytes, more than the {MAX_MESSAGE_BYTES} accepted",
            payload.len()
        ));
    }
    match subject {
        REGISTER => {
            let m: Register = json(
                payload,
                r#"{"code", "capabilities": [...], "docs_pack_url"}"#,
            )?;
            check_code(&m.code)?;
            if !m.capabilities.iter().any(|c| c == DOCS_PACK) {
                return Ok(Event::Register {
                    code: m.code,
                    pack_url: None,
                });
            }
            let url = m.docs_pack_url.ok_or_else(|| {
                format!(
                    "`{}` has the `{DOCS_PACK}` capability but no `docs_pack_url`",
                    m.code
                )
            })?;
            check_url(&url)?;
            Ok(Event::Register {
                code: m.code,
                pack_url: Some(url),
            })
        }
        UNREGISTER => {
            let m: Unregister = json(payload, r#"{"code"}"#)?;
            check_code(&m.code)?;
            Ok(Event::Unregister { code: m.code })
        }
        GATEWAY_ONLINE => Ok(Event::GatewayOnline),
        other => Err(format!(
            "unknown subject `{}` (subjects: {})",
            other.escape_debug(),
            SUBJECTS.join(", ")
        )),
    }
}

fn json<'a, T: Deserialize<'a>>(payload: &'a [u8], shape: &str) -> Result<T, String> {
    serde_json::from_slice(payload).map_err(|e| format!("the message is not {shape}: {e}"))
}

fn check_code(code: &str) -> Result<(), String> {
    if valid_code(code) {
        return Ok(());
    }
    Err(format!(
        "`{}` is not a repository code (1 to 64 of a-z 0-9 . _ -, starting with a letter or digit)",
        code.chars().take(80).collect::<String>().escape_debug()
    ))
}

/// Only http(s): a message from the bus never makes docfuse read a local file.
fn check_url(url: &str) -> Result<(), String> {
    if super::is_http_url(url) && url.len() <= 2048 {
        return Ok(());
    }
    Err(format!(
        "`docs_pack_url` must be an http(s) URL of at most 2048 bytes, got `{}`",
        super::redacted(url)
            .chars()
            .take(80)
            .collect::<String>()
            .escape_debug()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_register_with_docs_pack_carries_its_url() {
        let m = br#"{"code":"billing","capabilities":["http","docs_pack"],"docs_pack_url":"http://127.0.0.1:9/pack","version":"2"}"#;
        assert_eq!(
            parse(REGISTER, m),
            Ok(Event::Register {
                code: "billing".into(),
                pack_url: Some("http://127.0.0.1:9/pack".into())
            })
        );
        let none = br#"{"code":"billing","capabilities":["http"]}"#;
        assert_eq!(
            parse(REGISTER, none),
            Ok(Event::Register {
                code: "billing".into(),
                pack_url: None
            })
        );
    }

    #[test]
    fn bad_messages_say_what_is_wrong() {
        let cases: [(&str, &[u8], &str); 8] = [
            (REGISTER, b"not json", "is not {\"code\""),
            (REGISTER, br#"{"capabilities":[]}"#, "missing field `code`"),
            (
                REGISTER,
                br#"{"code":"../etc"}"#,
                "is not a repository code",
            ),
            (
                REGISTER,
                br#"{"code":"a","capabilities":["docs_pack"]}"#,
                "no `docs_pack_url`",
            ),
            (
                REGISTER,
                br#"{"code":"a","capabilities":["docs_pack"],"docs_pack_url":"/etc/passwd"}"#,
                "must be an http(s) URL",
            ),
            (
                REGISTER,
                br#"{"code":"a","capabilities":["docs_pack"],"docs_pack_url":" http://h/p"}"#,
                "must be an http(s) URL",
            ),
            (UNREGISTER, br#"{"code":7}"#, "invalid type"),
            ("service.other", b"{}", "unknown subject"),
        ];
        for (subject, payload, want) in cases {
            let e = parse(subject, payload).unwrap_err();
            assert!(e.contains(want), "{subject} {payload:?}: {e}");
        }
        let big = vec![b' '; MAX_MESSAGE_BYTES + 1];
        assert!(parse(REGISTER, &big).unwrap_err().contains("more than"));
        assert_eq!(parse(GATEWAY_ONLINE, b""), Ok(Event::GatewayOnline));
        assert_eq!(
            parse(UNREGISTER, br#"{"code":"billing"}"#),
            Ok(Event::Unregister {
                code: "billing".into()
            })
        );
    }
}
