//! `postgres://USER[:PASSWORD]@HOST:PORT/DB[?schema=NAME&…]`: parsed, checked, shown
//! with its password redacted, and keyed for the local caches.

pub use crate::dburl::{is_database_url, redacted};
use crate::error::{Error, Result};
use std::str::FromStr;

/// Seconds a connection attempt may take unless the URL's `connect_timeout` says.
pub const CONNECT_TIMEOUT_SECS: u64 = 10;

/// The schema docfuse's tables live in when the URL names none.
pub const DEFAULT_SCHEMA: &str = "docfuse";

/// A PostgreSQL index store's address.
#[derive(Clone)]
pub struct PgLocation {
    /// Connection settings (the URL without `schema=` and the TLS parameters).
    pub(super) config: tokio_postgres::Config,
    /// What TLS the connection asks for (`sslmode`, `sslrootcert`).
    pub(super) tls: super::tls::TlsPolicy,
    /// The schema holding docfuse's tables (`[a-z_][a-z0-9_]*`, at most 63 bytes).
    pub schema: String,
    /// The URL with its password replaced by `***`: what messages show.
    pub shown: String,
    /// sha256 of the whole URL (password and TLS parameters included): two locations
    /// with the same one connect the same way.
    pub(super) fingerprint: String,
}

impl std::fmt::Debug for PgLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PgLocation {
    /// Parses a `postgres://…` URL; `schema=NAME` chooses the schema (default
    /// [`DEFAULT_SCHEMA`]); `sslmode` and `sslrootcert` mean what they mean to libpq
    /// (see [`super::tls`]); the other parameters (`connect_timeout`, `options`, …) are
    /// libpq's, as `tokio-postgres` reads them.
    ///
    /// # Errors
    /// [`Error::Database`] naming the redacted URL when it does not parse or the schema
    /// name is not a plain lowercase identifier.
    pub fn parse(url: &str) -> Result<PgLocation> {
        let url = &lowercase_scheme(url);
        let shown = redacted(url);
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut schema = DEFAULT_SCHEMA.to_string();
        let mut rest = Vec::new();
        let mut named = false;
        let (mut sslmode, mut rootcert) = (None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some(("sslmode", v)) => sslmode = Some(crate::dburl::percent_decoded(v)),
                Some(("sslrootcert", v)) => rootcert = Some(crate::dburl::percent_decoded(v)),
                Some((k @ ("sslcert" | "sslkey" | "sslpassword"), _)) => {
                    return Err(Error::Database(format!(
                        "`{shown}`: client certificates (`{k}`) are not supported yet\nhint: authenticate with a password (in the URL or PGPASSWORD)"
                    )))
                }
                Some(("schema", _)) if named => {
                    return Err(Error::Database(format!(
                        "`{shown}` names `schema` twice\nhint: give one `schema=NAME`"
                    )))
                }
                Some(("schema", v)) => {
                    schema = v.to_string();
                    named = true;
                }
                _ => rest.push(pair),
            }
        }
        if reserved_schema(&schema) {
            return Err(Error::Database(format!(
                "`{shown}`: schema `{schema}` belongs to PostgreSQL or to everyone, not to docfuse\nhint: name a schema of docfuse's own, e.g. `?schema=docs`"
            )));
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
        let (tls, mode) =
            super::tls::TlsPolicy::from_params(sslmode.as_deref(), rootcert.as_deref())
                .map_err(|why| Error::Database(format!("`{shown}`: {why}")))?;
        config.ssl_mode(mode);
        // as libpq: the password from PGPASSWORD when the URL has none, and a bounded
        // connection attempt unless the URL sets one
        if config.get_password().is_none() {
            if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
                config.password(pw.as_encoded_bytes());
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(CONNECT_TIMEOUT_SECS));
        }
        Ok(PgLocation {
            config,
            tls,
            schema,
            shown,
            fingerprint: crate::hashing::sha256_hex(url.as_bytes()),
        })
    }

    /// A key naming this database and schema however the URL spells them (not its
    /// password): sha256 of the hosts, ports, user, database and schema (the local
    /// caches' folder names).
    pub fn cache_key(&self) -> String {
        let c = &self.config;
        let text = format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{}",
            c.get_hosts(),
            c.get_ports(),
            c.get_user(),
            c.get_dbname(),
            self.schema
        );
        crate::hashing::sha256_hex(text.as_bytes())[..16].to_string()
    }

    /// A table's name qualified by the schema (`"docfuse".chunks`).
    pub(super) fn table(&self, name: &str) -> String {
        format!("\"{}\".{name}", self.schema)
    }
}

/// `PostgreSQL://…` as `postgresql://…` (tokio-postgres reads lowercase schemes only).
fn lowercase_scheme(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
        None => url.to_string(),
    }
}

/// PostgreSQL's own schemas and `public`, shared by every user of the database.
fn reserved_schema(s: &str) -> bool {
    s.starts_with("pg_") || s == "information_schema" || s == "public"
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
        // tokio-postgres reads credentials up to the first `@`, past `/` and `?`
        assert_eq!(
            redacted("postgres://ann:pa/ss@db/docs"),
            "postgres://ann:***@db/docs"
        );
        assert_eq!(
            redacted("postgres://ann:p?ss@db/docs"),
            "postgres://ann:***@db/docs"
        );
        assert_eq!(
            redacted("postgres://db/docs?user=a&pass%77ord=x"),
            "postgres://db/docs?user=a&pass%77ord=***"
        );
        let loc = PgLocation::parse("postgres://ann:pw@127.0.0.1:5/docs?schema=team_a").unwrap();
        assert_eq!(loc.schema, "team_a");
        assert!(!format!("{loc:?}").contains("pw"));
    }

    #[test]
    fn one_cache_key_however_the_url_is_spelled() {
        let a = PgLocation::parse("postgres://ann:pw@db:5432/docs").unwrap();
        let b = PgLocation::parse("postgresql://ann@db:5432/docs?schema=docfuse").unwrap();
        assert_eq!(a.cache_key(), b.cache_key());
        let c = PgLocation::parse("postgres://ann@db:5432/docs?schema=other").unwrap();
        assert_ne!(a.cache_key(), c.cache_key());
    }

    #[test]
    fn twice_named_and_shared_schemas_are_refused() {
        for url in [
            "postgres://a@h/db?schema=x&schema=y",
            "postgres://a@h/db?schema=public",
            "postgres://a@h/db?schema=pg_catalog",
            "postgres://a@h/db?schema=information_schema",
        ] {
            assert!(PgLocation::parse(url).is_err(), "{url}");
        }
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
