//! docfuse: a local documentation retriever.
//!
//! Point it at folders of Markdown, MDX or plain text; it cuts them into heading-aware
//! chunks (sections), indexes their projected fields with tantivy, and ranks them with
//! BM25F plus named, explainable score parts.
//!
//! Layers (dependencies point one way, down this list):
//! 1. foundation: [`error`], [`config`], [`hashing`]
//! 2. ingest and storage: [`discover`], [`chunk`], [`analysis`], [`projection`], [`store`]
//! 3. indexes: [`lexical`]
//! 4. composition: [`engine`], [`eval`], [`retriever`] (the composable `Retriever` API:
//!    hybrid and reranked retrievers, prompt formatting with citations)
//! 5. front ends: [`cli`], [`server`] (HTTP API and MCP server over the retriever API)
//!
//! ```no_run
//! use docfuse::config::IndexConfig;
//! use docfuse::engine::{build, BuildOptions, DocIndex, SearchOptions, Source};
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
pub mod config;
pub mod dburl;
pub mod discover;
pub mod embed;
pub mod engine;
pub mod error;
pub mod eval;
pub mod fsio;
pub mod fusion;
pub mod graph;
pub mod hashing;
pub mod lexical;
pub mod pack;
pub mod pgstore;
pub mod projection;
pub mod retriever;
pub mod server;
pub mod store;
pub mod vector;

pub use error::{Error, Result};
