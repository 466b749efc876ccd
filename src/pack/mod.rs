//! Docs packs: a repository's documentation as one `.tar.gz` — `pack.json` (repository
//! code, version, creation time, every file with its size and sha256) and the files under
//! `docs/` — written by `docfuse pack`, fetched, verified whole and unpacked into the
//! index folder (`INDEX/packs/CODE/`, updated in place) by `docfuse index --pack`.
//!
//! A pack is refused whole, before anything is written, when an entry is not a regular
//! file or folder (a symlink, a hard link, a device), a path is absolute, has `..`, a
//! backslash or a NUL byte, a file is missing from `pack.json` or listed but absent, a
//! size or sha256 differs, or a limit is passed.
//! Must not import: `generation`, `write`, `read`, `cli`, `server` (packs sit beside discovery).
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! docs packs: `write.rs` (a folder's documentation, walked by `discover`, as `pack.json` +
//! `docs/…` in a `.tar.gz`, entries with mtime 0), `fetch.rs` (a file or an HTTP(S) URL
//! through `ureq`, size-limited, timed out), `read.rs` (the whole pack verified in memory
//! before anything is written — `pack.json` first, then each entry's type, path and listed
//! size before its bytes are read, then the sha256s — and unpacked in place into
//! `INDEX/packs/CODE/`: same bytes untouched, changed files renamed over, dropped ones
//! deleted); `sources.rs` (`INDEX/packs/.sources.json`: where each pack came from, so
//! `ingest` can pull every known pack again), `event.rs` (the NATS messages
//! `service.register`/`service.unregister`/`gateway.online` parsed and checked: codes,
//! http(s) URLs only, size); knows nothing of the engine: `cli` fetches and verifies, then
//! the build runs the unpacking under the writer lock (`BuildOptions::hooks`) and indexes
//! the folder as a root

mod applied;
pub mod event;
mod fetch;
mod read;
mod sources;
mod write;

pub use applied::{applied, record_applied, Applied, APPLIED_FILE};
pub use fetch::{fetch, is_http_url, non_public, redacted, redacted_servers, FetchPolicy};
pub use read::{install, read, Installed, Pack};
pub use sources::{forget_source, record_source, sources, Sources, SOURCES_FILE};
pub use write::write;

use serde::{Deserialize, Serialize};

/// Name of the manifest inside a pack.
pub const MANIFEST_FILE: &str = "pack.json";
/// Folder of the documentation files inside a pack.
pub const DOCS_DIR: &str = "docs";
/// Version of the pack layout written and read.
pub const PACK_FORMAT: u32 = 1;
/// Folder of the index that holds unpacked packs, one folder per repository code.
pub const PACKS_DIR: &str = "packs";

/// `pack.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackManifest {
    /// [`PACK_FORMAT`].
    pub format: u32,
    /// Repository code: 1 to 64 of `a-z 0-9 . _ -`, starting with a letter or digit.
    pub repo: String,
    pub version: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// Every file, sorted by path.
    pub files: Vec<PackFile>,
}

/// One file of a pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackFile {
    /// `/`-separated, relative to the pack's `docs/` folder.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Lowercase hex sha256 of the bytes.
    pub sha256: String,
}

/// Limits on a pack being read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes of the compressed pack (default 64 MiB).
    pub max_pack_bytes: u64,
    /// Most bytes of all its files, unpacked (default 512 MiB).
    pub max_unpacked_bytes: u64,
    /// Most times its files may be larger, unpacked, than the compressed pack (default
    /// 32: gzip shrinks documentation 3–10×, a decompression bomb by hundreds), with
    /// [`MIN_UNPACKED_ALLOWANCE`] allowed whatever the ratio.
    pub max_ratio: u64,
    /// Most bytes every pack of an index may take on disk together (default 4 GiB).
    pub max_total_bytes: u64,
    /// Most files (default 100,000).
    pub max_files: usize,
    /// A fetch over HTTP(S) taking longer fails (default 60 s).
    pub timeout: std::time::Duration,
}

/// Bytes a pack may always unpack to, whatever [`Limits::max_ratio`] says (a small pack
/// of a few files compresses poorly or very well without being a bomb).
pub const MIN_UNPACKED_ALLOWANCE: u64 = 4 << 20;

impl Limits {
    /// Bytes a pack of `compressed` bytes may unpack to: the smaller of
    /// `max_unpacked_bytes` and `max_ratio` × `compressed` (at least
    /// [`MIN_UNPACKED_ALLOWANCE`]).
    pub fn unpacked_budget(&self, compressed: u64) -> u64 {
        let by_ratio = compressed
            .saturating_mul(self.max_ratio)
            .max(MIN_UNPACKED_ALLOWANCE);
        self.max_unpacked_bytes.min(by_ratio)
    }

    /// The default limits with packs up to `max_pack_bytes`, which may unpack to 16 times
    /// that (at most 512 MiB): a small limit also bounds what a gzip bomb can unpack.
    pub fn for_pack_bytes(max_pack_bytes: u64) -> Limits {
        let d = Limits::default();
        Limits {
            max_pack_bytes,
            max_unpacked_bytes: max_pack_bytes.saturating_mul(16).min(d.max_unpacked_bytes),
            ..d
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pack_bytes: 64 << 20,
            max_unpacked_bytes: 512 << 20,
            max_ratio: 32,
            max_total_bytes: 4 << 30,
            max_files: 100_000,
            timeout: std::time::Duration::from_secs(60),
        }
    }
}

/// Why a pack cannot be written, fetched or read.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    #[error("pack refused: {0}")]
    Refused(String),
    #[error("cannot fetch the pack from `{url}`: {reason}")]
    Fetch { url: String, reason: String },
    #[error("{what} `{path}`: {source}")]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The record of pack sources is damaged.
    #[error("{0}")]
    Sources(String),
    #[error(transparent)]
    Discover(#[from] crate::Error),
}

impl PackError {
    fn io(what: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        PackError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<PackError> for crate::Error {
    fn from(e: PackError) -> Self {
        match e {
            PackError::Io { what, path, source } => crate::Error::Io {
                action: what,
                path,
                source,
            },
            PackError::Discover(e) => e,
            other => crate::Error::Config(other.to_string()),
        }
    }
}

/// Whether `code` is a valid repository code.
pub fn valid_code(code: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c);
    (1..=64).contains(&code.len())
        && code.chars().all(ok)
        && code.starts_with(|c: char| c.is_ascii_alphanumeric())
}

/// A repository code made from a folder name: lowercased, other characters as `-`.
pub fn code_from_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    s = s.trim_start_matches(['.', '_', '-']).to_string();
    if s.is_empty() {
        "docs".into()
    } else {
        s
    }
}

/// Checks a pack-relative path: `/`-separated normal components only.
fn check_rel(path: &str) -> Result<(), PackError> {
    let refuse = |why: &str| PackError::Refused(format!("path `{}` {why}", path.escape_debug()));
    if path.is_empty() {
        return Err(refuse("is empty"));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(refuse("has a NUL byte or a backslash"));
    }
    if path.starts_with('/') {
        return Err(refuse("is absolute"));
    }
    for part in path.split('/') {
        match part {
            "" | "." => return Err(refuse("has an empty or `.` component")),
            ".." => return Err(refuse("leaves its root (`..`)")),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
