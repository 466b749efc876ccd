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
    let (creds, rest) = match rest.split_once('@') {
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
fn percent_decoded(s: &str) -> String {
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
