//! A handoff's last source of checks: the package that holds the target. The nearest
//! folder at or above the target (within its root) with a package manifest gives them:
//! a manifest's scripts that are checks (`package.json`) first, else the package
//! manager's default of a `Cargo.toml`, `pyproject.toml` or `go.mod` there, else that of
//! the `package.json` (`npm test`, `pnpm test`… by the lockfile present).

use crate::repo::{read_package, ChecksSource, Package, MANIFEST_NAMES};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// A manifest larger than this is not read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Lockfiles that name a package manager.
const LOCKFILES: [&str; 7] = [
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lockb",
    "bun.lock",
    "package-lock.json",
    "uv.lock",
    "poetry.lock",
];

/// The checks of the package holding a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PackageChecks {
    /// The manifest's path relative to the root.
    pub manifest: String,
    /// `(command, 1-based line of the manifest it comes from)`.
    pub checks: Vec<(String, u32)>,
    /// `package_scripts` or `package_manager_default`.
    pub from: &'static str,
}

/// The checks of the package at or above `rel_path` (a folder when `is_dir`) under
/// `root_dir`; `None` when no manifest there parses, or when `rel_path` is not a plain
/// relative path. Only folders inside the root (after resolving links) are read, and a
/// manifest is opened only when it is a regular file, not through a link. A manifest
/// that does not parse is passed over with a warning.
pub(super) fn package_checks(
    root_dir: &Path,
    rel_path: &str,
    is_dir: bool,
) -> Option<PackageChecks> {
    let rel = Path::new(rel_path.trim_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let root = root_dir.canonicalize().ok()?;
    let root_name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut dir: PathBuf = if is_dir {
        rel.to_path_buf()
    } else {
        rel.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    loop {
        if let Some(found) = checks_in(&root, &dir, &root_name) {
            return Some(found);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// The checks of the manifests in folder `dir` (relative to `root`), by the order the
/// module doc gives.
fn checks_in(root: &Path, dir: &Path, root_name: &str) -> Option<PackageChecks> {
    let folder = root.join(dir).canonicalize().ok()?;
    if !folder.starts_with(root) {
        return None;
    }
    let mut found: Vec<(Package, String)> = Vec::new();
    let mut lockfiles: Option<Vec<String>> = None;
    for name in MANIFEST_NAMES {
        let Some(text) = read_regular(&folder.join(name)) else {
            continue;
        };
        let rel = dir.join(name).to_string_lossy().replace('\\', "/");
        // looked up once per folder, and only when it has a manifest
        let lockfiles = lockfiles.get_or_insert_with(|| lockfiles_at_or_above(root, dir));
        let locks: Vec<&str> = lockfiles.iter().map(String::as_str).collect();
        match read_package(&rel, &text, &locks, root_name) {
            Ok(p) => found.push((p, text)),
            Err(why) => tracing::warn!("`{rel}`: {why}; its checks are not used"),
        }
    }
    let rank = |p: &Package| match (p.checks_source, p.manifest.ends_with("package.json")) {
        (ChecksSource::PackageScripts, _) => 0,
        (_, false) => 1,
        (_, true) => 2,
    };
    let (p, text) = found.into_iter().min_by_key(|(p, _)| rank(p))?;
    let (from, checks) = match p.checks_source {
        ChecksSource::PackageScripts => (
            "package_scripts",
            p.checks
                .iter()
                .map(|c| (c.command.clone(), script_line(&text, &c.name)))
                .collect(),
        ),
        ChecksSource::ManagerDefault => (
            "package_manager_default",
            p.checks.iter().map(|c| (c.command.clone(), 1)).collect(),
        ),
    };
    Some(PackageChecks {
        manifest: p.manifest,
        checks,
        from,
    })
}

/// The lockfiles of the nearest folder at or above `dir` (within `root`) that has any:
/// a workspace's lockfile sits at its root, above its members' manifests.
fn lockfiles_at_or_above(root: &Path, dir: &Path) -> Vec<String> {
    let mut d = dir.to_path_buf();
    loop {
        let here: Vec<String> = LOCKFILES
            .iter()
            .filter(|l| std::fs::symlink_metadata(root.join(&d).join(l)).is_ok_and(|m| m.is_file()))
            .map(|l| l.to_string())
            .collect();
        if !here.is_empty() || !d.pop() {
            return here;
        }
    }
}

/// The 1-based line of script `name` in a `package.json`: the first `"name":` after the
/// `"scripts"` key (1 when not found).
fn script_line(text: &str, name: &str) -> u32 {
    let key = format!("\"{name}\"");
    let scripts = text
        .lines()
        .position(|l| l.contains("\"scripts\""))
        .unwrap_or(0);
    text.lines()
        .enumerate()
        .skip(scripts)
        .find(|(_, l)| {
            l.contains(&key)
                && l[l.find(&key).unwrap_or(0) + key.len()..]
                    .trim_start()
                    .starts_with(':')
        })
        .map_or(1, |(i, _)| i as u32 + 1)
}

/// The text of `path` when it is a regular file of at most [`MAX_MANIFEST_BYTES`],
/// opened without following a link (and without blocking on a FIFO).
fn read_regular(path: &Path) -> Option<String> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = opts.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_MANIFEST_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}
