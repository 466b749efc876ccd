//! A handoff's last source of checks: the package that holds the target. The nearest
//! package manifest in the target's folder or above it (within its root) gives its
//! scripts that are checks (`package.json`), else its package manager's default
//! (`cargo test`, `npm test` by the lockfile present, `pytest`, `go test ./...`).

use crate::repo::{read_package, ChecksSource, MANIFEST_NAMES};
use std::io::Read;
use std::path::Path;

/// A manifest larger than this is not read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// At most this many names of a folder are looked at for a lockfile.
const MAX_SIBLINGS: usize = 10_000;

/// The checks of the package holding a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PackageChecks {
    /// The manifest's path relative to the root.
    pub manifest: String,
    /// The package's name (the manifest's, else its folder's).
    pub package: String,
    /// `(command, 1-based line of the manifest it comes from)`.
    pub checks: Vec<(String, u32)>,
    /// `package_scripts` or `package_manager_default`.
    pub from: &'static str,
}

/// The checks of the nearest package manifest at or above `rel_path` (a folder when
/// `is_dir`) under `root_dir`; `None` when no manifest there parses. A manifest that does
/// not parse is skipped with a warning and the search goes on above it.
pub(super) fn package_checks(
    root_dir: &Path,
    rel_path: &str,
    is_dir: bool,
) -> Option<PackageChecks> {
    let mut dir = if is_dir {
        rel_path.trim_matches('/').to_string()
    } else {
        rel_path
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string())
    };
    let root_name = root_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let folder = root_dir.join(&dir);
        for name in MANIFEST_NAMES {
            let rel = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            if let Some(found) = read_checks(&folder, name, &rel, &root_name) {
                return Some(found);
            }
        }
        if dir.is_empty() {
            return None;
        }
        dir = dir
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_string());
    }
}

fn read_checks(folder: &Path, name: &str, rel: &str, root_name: &str) -> Option<PackageChecks> {
    let path = folder.join(name);
    // a regular file only: never a FIFO, a device or a link leading elsewhere
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(&path)
        .ok()?
        .take(MAX_MANIFEST_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let siblings: Vec<String> = std::fs::read_dir(folder)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .take(MAX_SIBLINGS)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let names: Vec<&str> = siblings.iter().map(String::as_str).collect();
    let p = match read_package(rel, &text, &names, root_name) {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!("`{rel}`: {why}; its checks are not used");
            return None;
        }
    };
    let line_of = |script: &str| {
        let key = format!("\"{script}\"");
        text.lines()
            .position(|l| l.contains(&key))
            .map_or(1, |i| i as u32 + 1)
    };
    let (from, checks) = match p.checks_source {
        ChecksSource::PackageScripts => (
            "package_scripts",
            p.checks
                .iter()
                .map(|c| (c.command.clone(), line_of(&c.name)))
                .collect(),
        ),
        ChecksSource::ManagerDefault => (
            "package_manager_default",
            p.checks.iter().map(|c| (c.command.clone(), 1)).collect(),
        ),
    };
    Some(PackageChecks {
        manifest: p.manifest,
        package: p.name,
        checks,
        from,
    })
}
