//! The integration tests, in one binary (as ripgrep keeps them): one module per area,
//! each linking the crate once. `common` holds what they share (the docfuse binary,
//! fixtures, the shared benchmark data).

mod architecture;
mod cli;
mod common;
mod crash;
mod embed;
mod graph;
mod handoff;
mod hybrid;
mod incremental;
mod ingest;
mod install;
mod interfaces;
mod lifecycle;
mod mcp_e2e;
mod openapi;
mod packs;
mod pg;
mod pg_tls;
mod random_trees;
mod refresh;
mod relevance;
mod relevance_kinds;
mod server_http;
mod sources;
