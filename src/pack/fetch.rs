//! Getting a pack's bytes: a local file, or an HTTP(S) URL fetched with `ureq` (a
//! timeout for the whole call, the size limit enforced while reading).

use super::{Limits, PackError};
use std::io::Read;
use std::path::Path;

/// The bytes of the pack at `source`: an `http://` or `https://` URL, else a file path.
///
/// # Errors
/// [`PackError::Fetch`] when the URL cannot be fetched (connection, status other than
/// 2xx, timeout); [`PackError::Io`] when the file cannot be read;
/// [`PackError::Refused`] when it is larger than `limits.max_pack_bytes`.
pub fn fetch(source: &str, limits: &Limits) -> Result<Vec<u8>, PackError> {
    let too_big = || {
        PackError::Refused(format!(
            "`{}` is larger than the limit of {} bytes",
            redacted(source),
            limits.max_pack_bytes
        ))
    };
    if is_http_url(source) {
        return fetch_url(source, limits, too_big);
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
    too_big: impl Fn() -> PackError,
) -> Result<Vec<u8>, PackError> {
    let fail = |reason: String| PackError::Fetch {
        url: redacted(url),
        reason: reason.replace(url, &redacted(url)),
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(limits.timeout))
        .build()
        .into();
    let mut resp = agent.get(url).call().map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    resp.body_mut()
        .as_reader()
        .take(limits.max_pack_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
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
