//! An index folder's generations on disk, as both the write pipeline and the read side
//! see them: what a generation holds (file snapshot, chunk list, indexed sources, links,
//! graph and PageRank) — names, formats, readers and writers of those files —, the sources
//! a build reads (roots, JSONL), the writer lock and the readers' registry that keep a
//! generation in use from being deleted.
//!
//! Each file imports only files after it in this order (a test checks it): `export`,
//! `relations`, `copies`, `previous`, `source`, `jsonl`, `docread`, `lock`, `readers`, `queue`.
//!
//! Must not import: `write`, `read`, `views`, `retriever`, `cli`, `server`, `pgstore`.
//! Imports ingest (`discover`, `chunk`), storage (`store`) and indexes (`lexical`,
//! `graph`, `vector`).

mod copies;
mod docread;
mod export;
mod jsonl;
mod lock;
mod previous;
mod queue;
mod readers;
mod relations;
mod source;

pub use copies::{with_fingerprints, write_copies, COPIES_FILE};
pub use docread::read_document;
pub use export::{chunk_keys, export, ChunkKey, Exported, ExportedChunk, ExportedDoc};
pub use jsonl::read_jsonl;
pub use lock::{
    acquire as acquire_writer_lock, acquire_named as acquire_named_lock,
    holder as writer_lock_holder, LockWait, WriterLock, LOCK_FILE,
};
pub use previous::{
    generation_dirs, previous_chunks, read_snapshot, root_names, vectors_in, Previous, CHUNKS_FILE,
    FILES_FILE,
};
pub use queue::{read_queue, write_queue, Queued, QUEUE_FILE};
pub use readers::{in_use as reader_in_use, register as register_reader, ReaderMark, READERS_DIR};
pub use relations::{
    chunk_counts, chunk_priors, graph_unchanged, link_graph, load_graph, previous_links,
    write_graph, LINKS_FILE, PAGERANK_FILE,
};
pub use source::{
    absolute, load_jsonl, read_record, sources_name, write_sources, Loaded, Source, SOURCES_DIR,
};

/// Default index folder, relative to the current folder.
pub const DEFAULT_INDEX_DIR: &str = ".docfuse";
