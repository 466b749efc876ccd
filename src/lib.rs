//! docfuse: a local documentation retriever.
//!
//! Layers (dependencies point down only):
//! foundation (`error`, `config`, `hashing`) → ingest (`discover`, `chunk`, `analysis`) and
//! storage (`store`) → indexes (`lexical`) → composition (`engine`, `eval`) → front end (`cli`).

pub mod analysis;
pub mod chunk;
