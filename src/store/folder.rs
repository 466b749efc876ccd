//! Whether a folder may hold an index: an index folder, an empty one, or one holding only
//! what docfuse writes there. A folder of documents given as `--index` is refused before
//! anything is written into it.

use std::path::Path;

/// Names docfuse writes at the top of an index folder (besides `gen-NNNNNN/` folders and
/// dot-files, its temporary and probe files).
const INDEX_ENTRIES: [&str; 13] = [
    super::MANIFEST_FILE,
    "writer.lock",
    "ingest.lock",
    "readers",
    "query-vectors",
    "packs",
    "model-cache",
    "embed-queue.jsonl",
    "embed-cache.bin",
    // what file systems and file managers put in any folder
    "lost+found",
    "Thumbs.db",
    "desktop.ini",
    "@eaDir",
];

/// The first entry (by name) of the existing folder `dir` that docfuse did not write,
/// when `dir` holds no manifest: `dir` is then not an index folder but, say, a folder
/// of documents. `None` for a missing or empty folder, an index folder, or one holding
/// only an index's files (a first build that stopped before publishing).
pub fn foreign_entry(dir: &Path) -> Option<String> {
    if dir.join(super::MANIFEST_FILE).exists() {
        return None;
    }
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !n.starts_with('.') && !n.starts_with("gen-") && !INDEX_ENTRIES.contains(&n.as_str())
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

/// Refuses `dir` as an index folder when it holds other files and no index
/// ([`foreign_entry`]), before anything is written into it.
///
/// # Errors
/// [`crate::Error::NotAnIndexFolder`] naming the first such entry.
pub fn ensure_index_folder(dir: &Path) -> crate::Result<()> {
    match foreign_entry(dir) {
        Some(entry) => Err(crate::Error::NotAnIndexFolder {
            dir: dir.to_path_buf(),
            entry,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_documents_is_not_an_index_folder() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(foreign_entry(&t.path().join("missing")), None);
        assert_eq!(foreign_entry(t.path()), None);
        // what a first build that stopped leaves
        std::fs::create_dir(t.path().join("gen-000001")).unwrap();
        std::fs::write(t.path().join("writer.lock"), "").unwrap();
        std::fs::write(t.path().join(".manifest.json.tmp"), "").unwrap();
        assert_eq!(foreign_entry(t.path()), None);
        std::fs::write(t.path().join("intro.md"), "# Intro\n").unwrap();
        std::fs::create_dir(t.path().join("guide")).unwrap();
        assert_eq!(foreign_entry(t.path()).as_deref(), Some("guide"));
        // an index folder may hold anything beside its manifest
        std::fs::write(t.path().join(MANIFEST_FILE_NAME), "{}").unwrap();
        assert_eq!(foreign_entry(t.path()), None);
    }

    const MANIFEST_FILE_NAME: &str = super::super::MANIFEST_FILE;
}
