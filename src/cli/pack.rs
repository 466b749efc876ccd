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

/// Where the pack at `source` comes from, as recorded: an http(s) URL as given, a file
/// as its absolute path.
pub(super) fn source_of(source: &str) -> String {
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return source.to_string();
    }
    std::fs::canonicalize(source).map_or_else(|_| source.to_string(), |p| p.display().to_string())
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

/// Unpacks `pack` into `index` (run under the writer lock) and records `from` as where
/// it comes from (what `ingest` pulls again); says what it did on stderr.
pub(super) fn install(index: &Path, pack: &Pack, from: Option<&str>) -> crate::error::Result<()> {
    let packs = index.join(PACKS_DIR);
    let done = crate::pack::install(pack, &packs)?;
    if let Some(from) = from {
        crate::pack::record_source(&packs, &pack.manifest.repo, from)?;
    }
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

/// Deletes the unpacked files of the `pack:CODE` roots among `roots`, and their recorded
/// sources (run under the writer lock, once they left the index).
pub(super) fn remove_dropped(index: &Path, roots: &[PathBuf]) -> crate::error::Result<()> {
    let packs = index.join(PACKS_DIR);
    for dir in roots.iter().filter_map(|r| pack_dir(index, r)) {
        if let Some(code) = dir.file_name().and_then(|c| c.to_str()) {
            crate::pack::forget_source(&packs, code)?;
        }
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
