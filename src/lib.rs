//! docfuse: a local documentation retriever.
//!
//! Point it at folders of Markdown, MDX or plain text; it cuts them into heading-aware
//! chunks (sections), indexes their projected fields with tantivy, and ranks them with
//! BM25F plus named, explainable score parts.
//!
//! Layers (dependencies point one way, down this list; `ARCHITECTURE.md` is the map and
//! `tests/it/architecture.rs` walks the imports):
//! 1. front ends: [`cli`], [`server`] (HTTP API and MCP server over the retriever API)
//! 2. built on both sides: [`retriever`] (the composable `Retriever` API), [`eval`],
//!    [`pgstore`], [`views`] (handoffs, graph views)
//! 3. the two sides: [`write`] (build and refresh over an `IndexStore`) and [`read`] (an
//!    opened index and what answers a query); neither imports the other
//! 4. a generation's files: [`generation`]
//! 5. ingest, indexes and storage, in this order: [`pack`], [`embed`], [`vector`],
//!    [`lexical`], [`fusion`], [`store`], [`graph`], [`projection`], [`discover`],
//!    [`analysis`], [`chunk`], [`code`] (source files read with tree-sitter), [`repo`] (package
//!    manifests, `CODEOWNERS`)
//! 6. foundation: [`config`], [`dburl`], [`fsio`], [`hashing`], [`error`]
//!
//! ```no_run
//! use docfuse::config::IndexConfig;
//! use docfuse::generation::Source;
//! use docfuse::read::{DocIndex, SearchOptions};
//! use docfuse::write::{build, BuildOptions};
//! # fn main() -> docfuse::Result<()> {
//! let dir = std::path::Path::new(".docfuse");
//! let opts = BuildOptions { config: IndexConfig::default(), ..Default::default() };
//! build(dir, &Source::Roots(vec!["docs".into()]), &opts, &mut |_| {})?;
//! let index = DocIndex::open(dir)?;
//! for hit in index.search("install from source", &SearchOptions::default())?.hits {
//!     println!("{}:{} {}", hit.chunk.path, hit.chunk.start_line, hit.chunk.heading_path.join(" › "));
//! }
//! # Ok(())
//! # }
//! ```

pub mod analysis;
pub mod chunk;
pub mod cli;
pub mod code;
pub mod config;
pub mod dburl;
pub mod discover;
pub mod embed;
pub mod error;
pub mod eval;
pub mod fsio;
pub mod fusion;
pub mod generation;
pub mod graph;
pub mod hashing;
pub mod lexical;
pub mod pack;
pub mod pgstore;
pub mod projection;
pub mod read;
pub mod repo;
pub mod retriever;
pub mod server;
pub mod stamp;
pub mod store;
pub mod vector;
pub mod views;
pub mod write;

pub use error::{Error, Result};
