//! What a refresh reads of the published generation besides its manifest and snapshot —
//! the chunk list and the documents' links, several megabytes of JSON on a large site —
//! read on a second thread while the roots are walked.

use crate::generation::previous_chunks;
use crate::generation::{previous_links, with_fingerprints};
use crate::graph::DocLinks;
use std::path::PathBuf;
use std::thread::JoinHandle;

/// The published generation's chunk list and links, each `None` when missing or
/// unreadable (as [`previous_chunks`] and [`previous_links`] say).
#[derive(Default)]
pub(super) struct Prefetched {
    pub chunks: Option<Vec<(String, String)>>,
    pub links: Option<Vec<DocLinks>>,
}

/// A read of a generation folder under way.
pub(super) struct Prefetch {
    gen_dir: PathBuf,
    handle: Option<JoinHandle<Prefetched>>,
}

fn read(gen_dir: &std::path::Path) -> Prefetched {
    Prefetched {
        chunks: previous_chunks(gen_dir),
        links: previous_links(gen_dir).map(|l| with_fingerprints(gen_dir, l)),
    }
}

impl Prefetch {
    /// Starts reading the generation folder `gen_dir` on a thread of its own (when no
    /// thread can be started, [`Prefetch::take`] reads it). Dropped untaken, the thread
    /// finishes on its own and what it read is discarded.
    pub fn start(gen_dir: PathBuf) -> Self {
        let dir = gen_dir.clone();
        let handle = std::thread::Builder::new()
            .name("docfuse-prefetch".into())
            .spawn(move || read(&dir))
            .ok();
        Prefetch { gen_dir, handle }
    }

    /// What was read, waiting for the thread to end (read here when it could not run).
    pub fn take(self) -> Prefetched {
        match self.handle.map(JoinHandle::join) {
            Some(Ok(read)) => read,
            _ => read(&self.gen_dir),
        }
    }
}
