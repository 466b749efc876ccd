//! Source code read with tree-sitter: a file's language by its name, the items it declares
//! at top level (and the methods of its types), each with its signature (not its body),
//! its doc comment and its lines, the module's own doc comment, and what each body says
//! (its identifiers, comments and string literals) for a field of its own, and what it
//! imports (as written: resolving a path to a file is the caller's).
//!
//! The parse is tree-sitter's, with the maintained grammar crates (Rust, TypeScript and
//! TSX, JavaScript and JSX, Python, Go); nothing here ranks or indexes. A file that does not
//! parse cleanly still yields what the parser recovered (tree-sitter is error-tolerant),
//! and its error count is reported.
//!
//! Must not import anything of docfuse but `error`: it sits beside `chunk` in the ingest
//! layer.

mod extract;
mod imports;
mod language;

pub use extract::{
    read_module, Import, ImportKind, Item, ItemKind, Module, MAX_BODY_BYTES, MAX_SIGNATURE_CHARS,
};
pub use imports::{import_targets, Files, MAX_GO_FILES};
pub use language::Language;

#[cfg(test)]
mod tests;
