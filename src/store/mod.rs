//! The index folder on disk: the manifest (single commit point), the file snapshot, and
//! generation folders published atomically.
//!
//! Layout of an index folder `DIR`:
//! - `DIR/manifest.json`: the sealed [`Manifest`]; replacing it atomically publishes a build.
//! - `DIR/gen-NNNNNN/`: one immutable generation: `lexical/` (tantivy, and its bucket list),
//!   `files.json`, `sources/` (one JSONL file of document texts per lexical bucket),
//!   `chunks.json`, and `vectors.f32` + `vectors.json` when it has vectors.
//!   The manifest lists every file of it with its size and sha256.
//!
//! Must not import: `lexical`, `generation`, `write`, `read`, `cli`.

mod atomic;
mod contents;
mod folder;
mod manifest;
mod snapshot;
mod versions;

pub use atomic::{link_or_copy, sync_dir, write_atomic, write_atomic_private};
pub use contents::{check_hashes, check_sizes, list_contents, GenerationFile};
pub use folder::{ensure_index_folder, foreign_entry};
pub use manifest::{
    manifest_generation, read_json as read_manifest_json, CollectionShape, EmbeddingsState,
    Existing, Manifest, PartialFile, SourceSpec, VectorsInfo, MANIFEST_FILE,
};
pub use snapshot::{FileEntry, Snapshot};
pub use versions::{Compatibility, FormatVersions, SCHEMA_VERSION};
