//! Getting a pack's bytes: a local file, or an HTTP(S) URL fetched with `ureq` (a
//! timeout for the whole call, the size limit enforced while reading).
//!
//! **Address policy**: a pack URL is fetched only from a public address. Every host of
//! the request and of each redirect (at most [`MAX_REDIRECTS`]) is resolved by
//! [`PolicyResolver`], which refuses loopback, private (RFC 1918, unique-local `fc00::/7`,
//! shared `100.64/10`), link-local, unspecified, broadcast and multicast addresses unless
//! the host is on the allow-list (`--allow-pack-host`): an event on the bus cannot make
//! the ingester probe the machine's own ports or its network. A refusal names the policy
//! and the address, never whether a port answered.

use super::{Limits, PackError};
use std::io::Read;
use std::net::IpAddr;
use std::path::Path;

/// Redirects followed for a pack URL (each to a host the policy allows).
pub const MAX_REDIRECTS: u32 = 5;

/// Hosts (names or IP addresses, as written in the URL, case-insensitive) a pack URL may
/// name even when they resolve to a loopback or private address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchPolicy {
    pub allow_hosts: Vec<String>,
}

impl FetchPolicy {
    fn allows(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.allow_hosts.iter().any(|h| {
            h.trim_start_matches('[')
                .trim_end_matches(']')
                .eq_ignore_ascii_case(host)
        })
    }
}

/// Why `ip` is not a public address (`None` when it is).
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() || (o[0] == 100 && (o[1] & 0xc0) == 64) {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_unspecified() || o[0] == 0 {
                Some("unspecified")
            } else if v4.is_broadcast() || v4.is_multicast() || o[0] >= 240 {
                Some("broadcast, multicast or reserved")
            } else if (o[0] == 198 && (o[1] & 0xfe) == 18)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
            {
                Some("private")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return non_public(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            // IPv4-compatible `::a.b.c.d` and NAT64 `64:ff9b::a.b.c.d` carry an IPv4
            // address a gateway may reach
            let embedded = std::net::Ipv4Addr::new(
                (seg[6] >> 8) as u8,
                seg[6] as u8,
                (seg[7] >> 8) as u8,
                seg[7] as u8,
            );
            if (seg[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified())
                || seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
            {
                return non_public(IpAddr::V4(embedded));
            }
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if (seg[0] & 0xfe00) == 0xfc00 {
                Some("private")
            } else if (seg[0] & 0xffc0) == 0xfe80 || (seg[0] & 0xffc0) == 0xfec0 {
                Some("link-local")
            } else if v6.is_multicast() {
                Some("broadcast or multicast")
            } else {
                None
            }
        }
    }
}

/// A `ureq` resolver that applies [`FetchPolicy`] to every address a host resolves to.
#[derive(Debug)]
struct PolicyResolver {
    policy: FetchPolicy,
    inner: ureq::unversioned::resolver::DefaultResolver,
}

impl ureq::unversioned::resolver::Resolver for PolicyResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default();
        if self.policy.allows(host) {
            return Ok(addrs);
        }
        if let Some((ip, kind)) = addrs
            .iter()
            .find_map(|a| non_public(a.ip()).map(|k| (a.ip(), k)))
        {
            return Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "refused by the pack URL policy: `{host}` is a {kind} address ({ip}); packs are fetched from public addresses only\nhint: allow this host with `--allow-pack-host {host}`"
                ),
            )));
        }
        Ok(addrs)
    }
}

/// The bytes of the pack at `source`: an `http://` or `https://` URL, else a file path.
///
/// # Errors
/// [`PackError::Fetch`] when the URL cannot be fetched (connection, status other than
/// 2xx, timeout); [`PackError::Io`] when the file cannot be read;
/// [`PackError::Refused`] when it is larger than `limits.max_pack_bytes`.
pub fn fetch(source: &str, limits: &Limits, policy: &FetchPolicy) -> Result<Vec<u8>, PackError> {
    let too_big = || {
        PackError::Refused(format!(
            "`{}` is larger than the limit of {} bytes",
            redacted(source),
            limits.max_pack_bytes
        ))
    };
    if is_http_url(source) {
        return fetch_url(source, limits, policy, too_big);
    }
    if source.contains("://") {
        return Err(PackError::Refused(format!(
            "`{}` is neither an http(s) URL nor a file",
            redacted(source)
        )));
    }
    let path = Path::new(source);
    let meta = std::fs::metadata(path).map_err(|e| PackError::io("cannot open", path, e))?;
    if !meta.is_file() {
        return Err(PackError::Refused(format!(
            "`{source}` is not a regular file"
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| PackError::io("cannot open", path, e))?;
    let mut bytes = Vec::new();
    file.take(limits.max_pack_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| PackError::io("cannot read", path, e))?;
    if bytes.len() as u64 > limits.max_pack_bytes {
        return Err(too_big());
    }
    Ok(bytes)
}

fn fetch_url(
    url: &str,
    limits: &Limits,
    policy: &FetchPolicy,
    too_big: impl Fn() -> PackError,
) -> Result<Vec<u8>, PackError> {
    let fail = |reason: String| PackError::Fetch {
        url: redacted(url),
        reason: reason.replace(url, &redacted(url)),
    };
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(limits.timeout))
        .max_redirects(MAX_REDIRECTS)
        // no proxy from the environment: through a proxy the target is never resolved
        // here, so the address policy could not see it
        .proxy(None)
        .build();
    let resolver = PolicyResolver {
        policy: policy.clone(),
        inner: Default::default(),
    };
    let agent = ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::new(),
        resolver,
    );
    let timed_out = || {
        format!(
            "no whole answer within {} s (the fetch timeout)",
            limits.timeout.as_secs_f64()
        )
    };
    let mut resp = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Timeout(_) => fail(timed_out()),
        e => fail(e.to_string()),
    })?;
    let mut bytes = Vec::new();
    resp.body_mut()
        .as_reader()
        .take(limits.max_pack_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::TimedOut => fail(timed_out()),
            _ => fail(e.to_string()),
        })?;
    if bytes.len() as u64 > limits.max_pack_bytes {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Whether `source` is an `http://` or `https://` URL (scheme in any case, nothing before
/// it: ` http://…` is a file name). The one test of every place that tells URLs from files.
pub fn is_http_url(source: &str) -> bool {
    let scheme = source
        .split_once("://")
        .map(|(s, _)| s.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https"))
}

/// A server list (`nats://a:b@h1:4222,c:d@h2:4222`, schemes optional) with every user
/// information replaced by `***@`.
pub fn redacted_servers(list: &str) -> String {
    list.split(',')
        .map(|s| {
            if s.contains("://") {
                redacted(s)
            } else {
                redacted(&format!("x://{s}"))["x://".len()..].to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `url` with its user information (`user:password@`) replaced by `***@` (any scheme:
/// also `nats://user:pw@host`); text that is not a URL as it is.
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_not_shown() {
        assert_eq!(
            super::redacted("https://user:pw@h.example:8/p@x?q"),
            "https://***@h.example:8/p@x?q"
        );
        assert_eq!(super::redacted("http://h/a@b"), "http://h/a@b");
        assert_eq!(
            super::redacted("nats://u:p@127.0.0.1:4222"),
            "nats://***@127.0.0.1:4222"
        );
        assert_eq!(
            super::redacted_servers("nats://a:b@h1:1,c:secret@h2:2,h3:3"),
            "nats://***@h1:1,***@h2:2,h3:3"
        );
    }

    #[test]
    fn loopback_private_and_link_local_addresses_are_not_public() {
        let kind = |a: &str| non_public(a.parse().unwrap());
        assert_eq!(kind("127.0.0.1"), Some("loopback"));
        assert_eq!(kind("127.8.9.10"), Some("loopback"));
        assert_eq!(kind("::1"), Some("loopback"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("loopback"));
        assert_eq!(kind("10.1.2.3"), Some("private"));
        assert_eq!(kind("172.16.0.1"), Some("private"));
        assert_eq!(kind("192.168.1.1"), Some("private"));
        assert_eq!(kind("100.64.0.1"), Some("private"));
        assert_eq!(kind("fd12::1"), Some("private"));
        assert_eq!(kind("169.254.169.254"), Some("link-local"));
        assert_eq!(kind("fe80::1"), Some("link-local"));
        assert_eq!(kind("0.0.0.0"), Some("unspecified"));
        assert_eq!(kind("224.0.0.1"), Some("broadcast, multicast or reserved"));
        assert_eq!(kind("240.1.2.3"), Some("broadcast, multicast or reserved"));
        assert_eq!(kind("198.18.0.1"), Some("private"));
        assert_eq!(kind("64:ff9b::a9fe:a9fe"), Some("link-local"));
        assert_eq!(kind("::10.0.0.1"), Some("private"));
        assert_eq!(kind("fec0::1"), Some("link-local"));
        assert_eq!(kind("64:ff9b::5db8:d822"), None);
        assert_eq!(kind("93.184.216.34"), None);
        assert_eq!(kind("172.32.0.1"), None);
        assert_eq!(kind("2606:4700::1111"), None);
        let p = FetchPolicy {
            allow_hosts: vec!["127.0.0.1".into(), "Docs.Internal".into(), "[::1]".into()],
        };
        assert!(p.allows("127.0.0.1") && p.allows("docs.internal") && p.allows("[::1]"));
        assert!(!p.allows("localhost"));
    }

    #[test]
    fn a_loopback_url_is_refused_by_policy_without_a_connection() {
        // a listener that records whether anyone connected
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        for url in [
            format!("http://127.0.0.1:{port}/pack.tar.gz"),
            format!("http://localhost:{port}/pack.tar.gz"),
            format!("http://user:pw@[::1]:{port}/p"),
        ] {
            let e = fetch(&url, &Limits::default(), &FetchPolicy::default()).unwrap_err();
            let text = e.to_string();
            assert!(text.contains("pack URL policy"), "{text}");
            assert!(text.contains("loopback"), "{text}");
            assert!(text.contains("--allow-pack-host"), "{text}");
            assert!(!text.contains("pw@"), "{text}");
        }
        assert!(listener.accept().is_err(), "nobody connected");
        // a closed port and an open one look the same: both refused before connecting
        let closed = fetch(
            "http://127.0.0.1:1/p",
            &Limits::default(),
            &FetchPolicy::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(!closed.contains("Connection refused"), "{closed}");
        // allow-listed: fetched (and here the listener is not an HTTP server: it times
        // out or fails, which is a fetch error, not a policy one)
        let allowed = FetchPolicy {
            allow_hosts: vec!["127.0.0.1".into()],
        };
        let limits = Limits {
            timeout: std::time::Duration::from_millis(300),
            ..Limits::default()
        };
        let e = fetch("http://127.0.0.1:1/p", &limits, &allowed).unwrap_err();
        assert!(!e.to_string().contains("policy"), "{e}");
    }

    #[test]
    fn a_host_that_never_answers_is_a_timeout_said_in_seconds() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/pack", listener.local_addr().unwrap());
        let limits = Limits {
            timeout: std::time::Duration::from_millis(400),
            ..Limits::default()
        };
        let policy = FetchPolicy {
            allow_hosts: vec!["127.0.0.1".into()],
        };
        // the connection is taken and never answered
        let e = fetch(&url, &limits, &policy).unwrap_err().to_string();
        assert!(e.contains("no whole answer within 0.4 s"), "{e}");
        drop(listener);
    }

    #[test]
    fn a_redirect_to_a_host_the_policy_refuses_is_not_followed() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for s in listener.incoming().take(2) {
                let Ok(mut s) = s else { continue };
                let mut buf = [0u8; 2048];
                let _ = std::io::Read::read(&mut s, &mut buf);
                let head = format!(
                    "HTTP/1.1 302 Found\r\nLocation: http://localhost:{port}/secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = std::io::Write::write_all(&mut s, head.as_bytes());
            }
        });
        let allowed = FetchPolicy {
            allow_hosts: vec!["127.0.0.1".into()],
        };
        let e = fetch(
            &format!("http://127.0.0.1:{port}/p"),
            &Limits::default(),
            &allowed,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("pack URL policy") && e.contains("`localhost`"),
            "{e}"
        );
    }

    #[test]
    fn only_a_leading_http_scheme_makes_a_url() {
        for url in ["http://h/p", "HTTPS://h/p"] {
            assert!(super::is_http_url(url), "{url}");
        }
        for not in [
            " http://h/p",
            "file:///etc/passwd",
            "ftp://h/p",
            "h/http://x",
            "pack.tar.gz",
        ] {
            assert!(!super::is_http_url(not), "{not}");
        }
    }
}
