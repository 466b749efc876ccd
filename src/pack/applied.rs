//! Which registry event each service's state in the index came from
//! (`INDEX/packs/.events.json`): the JetStream stream sequence of the last event of each
//! repository code that `docfuse ingest` applied, and which stream those numbers are of.
//! An event delivered again after a newer one of its service was applied (the ingester
//! stopped while holding it, or the database was away) is older than what the index
//! holds, and is skipped rather than applied over it.

use super::PackError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file, inside the packs folder (a code never starts with `.`).
pub const APPLIED_FILE: &str = ".events.json";

/// The last applied event of each service, as stream sequences.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The stream the sequences are of (its name and creation time): numbers of another
    /// stream, or of one deleted and made again, say nothing.
    pub stream: String,
    /// Repository code → stream sequence of its last applied event.
    pub sequences: BTreeMap<String, u64>,
}

impl Applied {
    /// Whether the event `seq` of `code` (from `stream`) is older than one already
    /// applied.
    pub fn is_stale(&self, stream: &str, code: &str, seq: u64) -> bool {
        self.stream == stream && self.sequences.get(code).is_some_and(|&s| seq <= s)
    }

    /// Forgets the sequences of `stream` beyond `last`, its last event's sequence (a
    /// number no event of the stream has: a file written by hand, or of a stream purged
    /// and made again within the same second), which would skip every later event of
    /// their service; returns the codes forgotten.
    pub fn forget_beyond(&mut self, stream: &str, last: u64) -> Vec<String> {
        if self.stream != stream {
            return Vec::new();
        }
        let beyond: Vec<String> = self
            .sequences
            .iter()
            .filter(|(_, &s)| s > last)
            .map(|(c, _)| c.clone())
            .collect();
        for c in &beyond {
            self.sequences.remove(c);
        }
        beyond
    }

    /// Records the event `seq` of `code` as applied (a newer one stays); the numbers of
    /// another stream are forgotten first.
    pub fn record(&mut self, stream: &str, code: &str, seq: u64) {
        if self.stream != stream {
            self.stream = stream.to_string();
            self.sequences.clear();
        }
        let at = self.sequences.entry(code.to_string()).or_default();
        *at = (*at).max(seq);
    }
}

fn file_of(packs_dir: &Path) -> PathBuf {
    packs_dir.join(APPLIED_FILE)
}

/// The recorded sequences; empty when there is no file or it cannot be read as them (a
/// warning: nothing is then skipped).
pub fn applied(packs_dir: &Path) -> Applied {
    let path = file_of(packs_dir);
    let bytes = match crate::fsio::read_regular(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Applied::default(),
        Err(e) => {
            tracing::warn!("cannot read `{}`: {e}", path.display());
            return Applied::default();
        }
    };
    serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        tracing::warn!(
            "`{}` is not what docfuse wrote ({e}); ignored",
            path.display()
        );
        Applied::default()
    })
}

/// Writes `applied` atomically.
///
/// # Errors
/// [`PackError::Io`] when the folder or the file cannot be written.
pub fn record_applied(packs_dir: &Path, applied: &Applied) -> Result<(), PackError> {
    std::fs::create_dir_all(packs_dir).map_err(|e| PackError::io("cannot create", packs_dir, e))?;
    let mut bytes = serde_json::to_vec_pretty(applied).unwrap_or_default();
    bytes.push(b'\n');
    Ok(crate::store::write_atomic(&file_of(packs_dir), &bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_stale_only_against_a_newer_one_of_its_service_in_the_same_stream() {
        let mut a = Applied::default();
        assert!(!a.is_stale("S@1", "svc", 5));
        a.record("S@1", "svc", 7);
        a.record("S@1", "svc", 6);
        assert!(a.is_stale("S@1", "svc", 7));
        assert!(a.is_stale("S@1", "svc", 3));
        assert!(!a.is_stale("S@1", "svc", 8));
        assert!(!a.is_stale("S@1", "other", 3));
        // the stream was made again: its numbers start over
        assert!(!a.is_stale("S@2", "svc", 3));
        a.record("S@2", "svc", 3);
        assert_eq!(a.sequences.len(), 1);
        assert!(a.is_stale("S@2", "svc", 2));
        // a number past the stream's last event says nothing
        a.record("S@2", "odd", 99_999);
        assert!(a.forget_beyond("S@1", 10).is_empty());
        assert_eq!(a.forget_beyond("S@2", 10), ["odd"]);
        assert!(!a.is_stale("S@2", "odd", 5));
        assert!(a.is_stale("S@2", "svc", 2));
    }

    #[test]
    fn sequences_survive_a_restart_and_a_damaged_file_skips_nothing() {
        let d = tempfile::tempdir().unwrap();
        let mut a = Applied::default();
        a.record("S@1", "svc", 9);
        record_applied(d.path(), &a).unwrap();
        assert_eq!(applied(d.path()), a);
        std::fs::write(d.path().join(APPLIED_FILE), b"{not json").unwrap();
        assert_eq!(applied(d.path()), Applied::default());
    }
}
