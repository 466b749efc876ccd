//! The index folder on disk: the manifest (single commit point), the file snapshot, and
//! generation folders published atomically.
//!
//! Layout of an index folder `DIR`:
//! - `DIR/manifest.json`: the sealed [`Manifest`]; replacing it atomically publishes a build.
//! - `DIR/gen-NNNNNN/`: one immutable generation: `lexical/` (tantivy) and `files.json`.
//!
//! Must not import: `lexical`, `engine`, `cli`.

mod atomic;
mod manifest;
mod snapshot;

pub use atomic::write_atomic;
pub use manifest::{
    CollectionShape, Manifest, SourceSpec, VectorsInfo, MANIFEST_FILE, SCHEMA_VERSION,
};
pub use snapshot::{FileEntry, Snapshot};
