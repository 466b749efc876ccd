//! `postgres://USER[:PASSWORD]@HOST:PORT/DB[?schema=NAME&…]`: parsed, checked, shown
//! with its password redacted, and keyed for the local caches.

use crate::error::{Error, Result};
use std::str::FromStr;

/// The schema docfuse's tables live in when the URL names none.
pub const DEFAULT_SCHEMA: &str = "docfuse";

/// True when `s` is a PostgreSQL URL (`postgres://` or `postgresql://`), not a folder.
pub fn is_database_url(s: &str) -> bool {
    let lower = s.get(..13).unwrap_or(s).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// A PostgreSQL index store's address.
#[derive(Clone)]
pub struct PgLocation {
    /// Connection settings (the URL without `schema=`).
    pub(super) config: tokio_postgres::Config,
    /// The schema holding docfuse's tables (`[a-z_][a-z0-9_]*`, at most 63 bytes).
    pub schema: String,
    /// The URL with its password replaced by `***`: what messages show.
    pub shown: String,
}

impl std::fmt::Debug for PgLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PgLocation {
    /// Parses a `postgres://…` URL; `schema=NAME` chooses the schema (default
    /// [`DEFAULT_SCHEMA`]), the other parameters (`sslmode`, `connect_timeout`, …) are
    /// libpq's, as `tokio-postgres` reads them.
    ///
    /// # Errors
    /// [`Error::Database`] naming the redacted URL when it does not parse or the schema
    /// name is not a plain lowercase identifier.
    pub fn parse(url: &str) -> Result<PgLocation> {
        let shown = redacted(url);
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut schema = DEFAULT_SCHEMA.to_string();
        let mut rest = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("schema", v)) => schema = v.to_string(),
                _ => rest.push(pair),
            }
        }
        if !valid_schema(&schema) {
            return Err(Error::Database(format!(
                "`{shown}`: schema `{schema}` is not a plain identifier\nhint: use lowercase letters, digits and `_` (at most 63), starting with a letter or `_`"
            )));
        }
        let url = if rest.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", rest.join("&"))
        };
        let mut config = tokio_postgres::Config::from_str(&url).map_err(|e| {
            Error::Database(format!(
                "`{shown}` is not a PostgreSQL URL docfuse can use: {e}\nhint: postgres://USER[:PASSWORD]@HOST:PORT/DB[?schema=NAME]"
            ))
        })?;
        config.application_name("docfuse");
        Ok(PgLocation {
            config,
            schema,
            shown,
        })
    }

    /// A key naming this database and schema, not its password: sha256 of the redacted
    /// URL and the schema (the local caches' folder names).
    pub fn cache_key(&self) -> String {
        let text = format!("{}\n{}", self.shown, self.schema);
        crate::hashing::sha256_hex(text.as_bytes())[..16].to_string()
    }

    /// A table's name qualified by the schema (`"docfuse".chunks`).
    pub(super) fn table(&self, name: &str) -> String {
        format!("\"{}\".{name}", self.schema)
    }
}

fn valid_schema(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    first_ok
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `url` with the password of its user info (and any `password=` parameter) replaced
/// by `***`.
pub fn redacted(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some(p) => p,
        None => return url.to_string(),
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_folders() {
        assert!(is_database_url("postgres://u@h/db"));
        assert!(is_database_url("PostgreSQL://u@h/db"));
        assert!(!is_database_url("./postgres://x"));
        assert!(!is_database_url(".docfuse"));
    }

    #[test]
    fn passwords_never_shown() {
        assert_eq!(
            redacted("postgres://ann:s3cr:et@db:5432/docs?schema=a"),
            "postgres://ann:***@db:5432/docs?schema=a"
        );
        assert_eq!(
            redacted("postgres://db/docs?user=a&password=hunter2"),
            "postgres://db/docs?user=a&password=***"
        );
        assert_eq!(redacted("postgres://ann@db/docs"), "postgres://ann@db/docs");
        let loc = PgLocation::parse("postgres://ann:pw@127.0.0.1:5/docs?schema=team_a").unwrap();
        assert_eq!(loc.schema, "team_a");
        assert!(!format!("{loc:?}").contains("pw"));
    }

    #[test]
    fn bad_schema_and_url_are_errors_without_password() {
        let e = PgLocation::parse("postgres://a:pw@h/db?schema=Drop;Table")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("not a plain identifier") && !e.contains("pw"),
            "{e}"
        );
        let e = PgLocation::parse("postgres://a:pw@h:notaport/db")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("not a PostgreSQL URL") && !e.contains(":pw"),
            "{e}"
        );
    }
}
