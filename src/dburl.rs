//! PostgreSQL URLs as `--index` values: told from folders and shown without their
//! password. Foundation: imports nothing of docfuse, so every layer (the folder store
//! refusing a URL, `pgstore`, the CLI) uses the one rule.

/// True when `s` is a PostgreSQL URL (`postgres://` or `postgresql://`), not a folder.
pub fn is_database_url(s: &str) -> bool {
    let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// `url` with the password of its user info (and any `password=` parameter, its name
/// percent-decoded) replaced by `***`. The user info is what tokio-postgres reads as
/// credentials: everything before the first `@` after the scheme, even past a `/` or
/// `?`.
pub fn redacted(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some(p) => p,
        None => return url.to_string(),
    };
    // tokio-postgres reads the credentials up to the first `@`; a password holding an
    // unencoded `@` is cut there, so everything up to the last `@` is hidden
    let (creds, rest) = match rest.rsplit_once('@') {
        Some((c, r)) => (Some(c), r),
        None => (None, rest),
    };
    let creds = match creds {
        Some(c) => match c.split_once(':') {
            Some((name, _)) => format!("{name}:***@"),
            None => format!("{c}@"),
        },
        None => String::new(),
    };
    let rest = match rest.split_once('?') {
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if percent_decoded(k).eq_ignore_ascii_case("password") => {
                        format!("{k}=***")
                    }
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
        None => rest.to_string(),
    };
    format!("{scheme}://{creds}{rest}")
}

/// `%XX` sequences decoded (invalid ones kept as they are).
pub(crate) fn percent_decoded(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// True when an `--index` value looks like a URL rather than a folder: a scheme and `:/`
/// (`postgres:/…`, `pgsql://…`, `postgres+ssl://…`), or `postgres` with credentials, after
/// leading blanks — a misspelled database URL must never become a folder named after it.
pub fn looks_like_url(s: &str) -> bool {
    let t = s.trim_start();
    let scheme_len = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
        .unwrap_or(t.len());
    let schemed = scheme_len > 1
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && t[scheme_len..].starts_with(":/");
    let pg = t.len() >= 8 && t[..8].eq_ignore_ascii_case("postgres") && t.contains('@');
    schemed || pg || is_database_url(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_with_an_unencoded_at_is_hidden_whole() {
        assert_eq!(
            redacted("postgres://docfuse:Tr0ub@dorSECRET@127.0.0.1:1/db"),
            "postgres://docfuse:***@127.0.0.1:1/db"
        );
    }

    #[test]
    fn misspelled_urls_are_not_folders() {
        for s in [
            "postgres:/docfuse:pw@127.0.0.1:1/db",
            "postgres//docfuse:pw@127.0.0.1:1/db",
            "pgsql://a@h/db",
            "postgres+ssl://a@h/db",
            " postgres://a@h/db",
        ] {
            assert!(looks_like_url(s), "{s}");
        }
        for s in [
            ".docfuse",
            "/tmp/postgres-docs",
            "docs/index",
            "C:relative",
            "x",
        ] {
            assert!(!looks_like_url(s), "{s}");
        }
    }
}
