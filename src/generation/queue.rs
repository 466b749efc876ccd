//! The embedding queue of a writer folder (`embed-queue.jsonl`): the embedding inputs of
//! the last build that have no vector yet — chunks the run's limits left out, or all of
//! them when the writer embeds nothing itself (`--max-chunks 0`) — each with its
//! embedding hash. A database writer publishes it with the generation; embedding workers
//! (`docfuse embed-worker`) take inputs from the database's copy, and the writer's next
//! build finds their vectors by hash.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name of the queue in the index folder.
pub const QUEUE_FILE: &str = "embed-queue.jsonl";

/// One input waiting for a vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    /// sha256(embedder identity key, input): the hash its vector is stored under.
    pub hash: String,
    /// The exact text to embed (a chunk's embedding input or one of its tail windows).
    pub input: String,
}

/// Replaces the queue of the index folder `index_dir` with `items` (removes it when
/// there are none).
///
/// # Errors
/// [`Error::Io`] naming the file that could not be written or removed.
pub fn write_queue(index_dir: &Path, items: &[Queued]) -> Result<()> {
    let path = index_dir.join(QUEUE_FILE);
    if items.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::io("remove", &path, e))
            }
            _ => Ok(()),
        };
    }
    let mut bytes = Vec::new();
    for q in items {
        bytes.extend(serde_json::to_vec(q).unwrap_or_default());
        bytes.push(b'\n');
    }
    crate::store::write_atomic(&path, &bytes)
}

/// The queue of the index folder `index_dir` (empty without one; a line that does not
/// parse is left out).
pub fn read_queue(index_dir: &Path) -> Vec<Queued> {
    let Ok(bytes) = crate::fsio::read_regular(index_dir.join(QUEUE_FILE)) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_round_trips_and_an_empty_one_leaves_no_file() {
        let d = tempfile::tempdir().unwrap();
        let items = vec![
            Queued {
                hash: "a".into(),
                input: "line one\nline \"two\"".into(),
            },
            Queued {
                hash: "b".into(),
                input: String::new(),
            },
        ];
        write_queue(d.path(), &items).unwrap();
        assert_eq!(read_queue(d.path()), items);
        write_queue(d.path(), &[]).unwrap();
        assert!(!d.path().join(QUEUE_FILE).exists());
        assert!(read_queue(d.path()).is_empty());
    }
}
