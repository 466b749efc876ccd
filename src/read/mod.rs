//! The read side: an opened index and everything that answers a query over it.
//!
//! Each file imports only files after it in this order (a test checks it): `verify`, `status`,
//! `focus` (the part of a query to search: a pasted trace's message, a long query's window),
//! `frames` (stack-trace lines) → `index` ([`DocIndex`]: holds the parts) → `hybrid` (the modes and
//! their fusion over the parts) → `freshness`, `proximity`, `vectors` (vector side and query
//! embedder), `remote` (a vector store attached to a folder), `symbols` (queries of symbols,
//! matched as written) → `opened` (the generation: manifest, lexical index, snapshot) →
//! `query_cache`, `hit` (options in, hits out), `matchline`.
//!
//! Must not import: `write`, `views`, `retriever`, `cli`, `server`, `pgstore`. Imports
//! `generation` (the files of a published generation), the indexes (`lexical`, `embed`,
//! `vector`, `graph`), `fusion` and `store`.

mod focus;
mod frames;
mod freshness;
mod hit;
mod hybrid;
mod index;
mod matchline;
mod opened;
mod proximity;
mod query_cache;
mod remote;
mod status;
mod symbols;
mod vectors;
mod verify;

pub use focus::{focus, Focused, MAX_QUERY_BYTES, WINDOW_WORDS};
pub use freshness::{FileChecks, FileState, Freshness};
pub use hit::{
    FusionExplain, Hit, HitExplain, Mode, ProximityExplain, RelationView, SearchOptions,
    SearchResponse, DEFAULT_FUSION,
};
pub use hybrid::FUSION_DEPTH;
pub use index::DocIndex;
pub use matchline::{best_line, snippet_at, MatchLine, TermWeights, SNIPPET_CHARS};
pub use opened::{shown_path, shown_paths, OpenGeneration};
pub use query_cache::{QueryCache, QUERY_CACHE_DIR};
pub use remote::{attach, EmbedderInfo, RemoteAnswer, RemoteVectors};
pub use status::{index_gone, stale, status, status_now, Status};
pub use symbols::{is_symbol_query, operators_in};
pub use vectors::{PreparedQuery, VectorPart, VectorSide};
pub use verify::{verify, Verification};
