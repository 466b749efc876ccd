//! `docfuse pack` and the pack side of `index --pack` / `--drop-root pack:CODE`.

use super::args::PackArgs;
use crate::pack::{code_from_name, Limits, Pack, PACKS_DIR};
use anyhow::Context;
use serde_json::json;
use std::path::{Path, PathBuf};

pub fn run(a: PackArgs) -> anyhow::Result<i32> {
    let root = std::fs::canonicalize(&a.root).map_err(|source| crate::Error::Root {
        path: a.root.clone(),
        source,
    })?;
    let repo = match &a.repo {
        Some(r) => r.clone(),
        None => code_from_name(
            &root
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
        ),
    };
    let m = crate::pack::write(&root, &repo, &a.version, &a.output, Default::default())?;
    let bytes: u64 = m.files.iter().map(|f| f.size).sum();
    if a.json {
        let v = json!({
            "output": a.output,
            "repo": m.repo,
            "version": m.version,
            "created_at": m.created_at,
            "files": m.files.len(),
            "bytes": bytes,
        });
        println!("{v}");
    } else {
        println!(
            "wrote `{}`: repository `{}`, version {}, {} files ({bytes} bytes)",
            a.output.display(),
            m.repo,
            m.version,
            m.files.len()
        );
    }
    Ok(super::EXIT_OK)
}

/// Fetches and verifies the pack at `source` (nothing is written).
pub(super) fn fetch_verified(source: &str, max_pack_bytes: u64) -> anyhow::Result<Pack> {
    let limits = Limits::for_pack_bytes(max_pack_bytes);
    let bytes = crate::pack::fetch(source, &limits)?;
    crate::pack::read(&bytes, &limits).with_context(|| format!("`{source}`"))
}

/// The folder `pack` is unpacked into in `index` (the root it is indexed as).
pub(super) fn dir_of(index: &Path, pack: &Pack) -> PathBuf {
    index.join(PACKS_DIR).join(&pack.manifest.repo)
}

/// Unpacks `pack` into `index` (run under the writer lock); says what it did on stderr.
pub(super) fn install(index: &Path, pack: &Pack) -> crate::error::Result<()> {
    let done = crate::pack::install(pack, &index.join(PACKS_DIR))?;
    eprintln!(
        "pack `{}` version {}: {} files written, {} unchanged, {} removed",
        pack.manifest.repo,
        pack.manifest.version.escape_debug(),
        done.written,
        done.kept,
        done.removed
    );
    Ok(())
}

/// `--drop-root` values with `pack:CODE` resolved to the pack's folder in `index`.
pub(super) fn drop_roots(index: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .map(|r| pack_dir(index, r).unwrap_or_else(|| r.clone()))
        .collect()
}

/// Deletes the unpacked files of the `pack:CODE` roots among `roots` (run under the
/// writer lock, once they left the index).
pub(super) fn remove_dropped(index: &Path, roots: &[PathBuf]) -> crate::error::Result<()> {
    for dir in roots.iter().filter_map(|r| pack_dir(index, r)) {
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(crate::Error::Io {
                    action: "cannot delete",
                    path: dir,
                    source: e,
                })
            }
            _ => {}
        }
    }
    Ok(())
}

/// The folder of `pack:CODE` in `index`, when `root` names a pack.
fn pack_dir(index: &Path, root: &Path) -> Option<PathBuf> {
    let code = root.to_str()?.strip_prefix("pack:")?;
    crate::pack::valid_code(code).then(|| index.join(PACKS_DIR).join(code))
}
