//! The walk of one root: folders in name order, ignore rules per folder (read only from
//! regular files, non-blocking), symbolic links resolved and kept inside the root, each
//! file once by its canonical path. Folders reached only through a symbolic link are
//! walked after every real folder, so a file's own path always wins over a link's.

use super::read::special_kind;
use super::rules::{kind_of, skip_by_name, SkipReason, WalkOptions, IGNORE_FILES};
use super::{found, Discovery, Warning};
use crate::error::{Error, Result};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Ignore rules in force in a folder: those of its ancestors, outermost first.
type Rules = Vec<Arc<Gitignore>>;

/// A folder to walk: its path as reached, its canonical path, the rules in force above
/// it, and whether it was reached through a symbolic link.
struct Pending {
    path: PathBuf,
    canon: PathBuf,
    rules: Rules,
    via_link: Option<PathBuf>,
}

/// Walks the folder `root` (index `i` among the roots) into `out`.
///
/// # Errors
/// [`Error::Root`] when the root itself cannot be listed.
pub(super) fn walk_root(
    i: usize,
    root: &Path,
    opts: WalkOptions,
    out: &mut Discovery,
) -> Result<()> {
    let canon_root = root.canonicalize().map_err(|source| Error::Root {
        path: root.to_path_buf(),
        source,
    })?;
    let mut walk = Walk {
        root_index: i,
        root: root.to_path_buf(),
        canon_root: canon_root.clone(),
        opts,
        out,
        visited: HashMap::new(),
        files: HashMap::new(),
        links_met: false,
        deferred: Vec::new(),
    };
    let rules = if opts.no_ignore {
        Vec::new()
    } else {
        ancestor_rules(&canon_root, walk.out)
    };
    // The root's own listing must succeed: a refresh must not publish a root as empty
    // because it could not be read.
    std::fs::read_dir(root).map_err(|source| Error::Root {
        path: root.to_path_buf(),
        source,
    })?;
    walk.folder(Pending {
        path: root.to_path_buf(),
        canon: canon_root,
        rules,
        via_link: None,
    });
    while !walk.deferred.is_empty() {
        let next = walk.deferred.remove(0);
        walk.folder(next);
    }
    Ok(())
}

struct Walk<'a> {
    root_index: usize,
    root: PathBuf,
    canon_root: PathBuf,
    opts: WalkOptions,
    out: &'a mut Discovery,
    /// Canonical folders already walked, with the path they were walked under.
    visited: HashMap<PathBuf, PathBuf>,
    /// Canonical files already found, with the path each was first met under, once a
    /// symbolic link led to a file.
    files: HashMap<PathBuf, PathBuf>,
    /// Whether a symbolic link led to a file yet.
    links_met: bool,
    /// Folders reached through a symbolic link, walked after the real ones.
    deferred: Vec<Pending>,
}

impl Walk<'_> {
    fn warn(&mut self, path: &Path, reason: SkipReason, message: String) {
        *self.out.skips.entry(reason).or_default() += 1;
        self.out.warnings.push(Warning {
            path: path.to_path_buf(),
            message,
        });
    }

    fn count(&mut self, reason: SkipReason) {
        *self.out.skips.entry(reason).or_default() += 1;
    }

    fn folder(&mut self, dir: Pending) {
        if let Some(first) = self.visited.get(&dir.canon) {
            let msg = format!(
                "the same folder as `{}` (a symbolic link); indexed once, there",
                first.display()
            );
            self.warn(&dir.path, SkipReason::Duplicate, msg);
            return;
        }
        self.visited.insert(dir.canon.clone(), dir.path.clone());
        let entries = match std::fs::read_dir(&dir.path) {
            Ok(rd) => rd,
            Err(e) => return self.unreadable_dir(&dir.path, &e.to_string()),
        };
        let mut names: Vec<(std::ffi::OsString, std::fs::FileType)> = Vec::new();
        for e in entries {
            match e.and_then(|e| Ok((e.file_name(), e.file_type()?))) {
                Ok(pair) => names.push(pair),
                Err(err) => return self.unreadable_dir(&dir.path, &err.to_string()),
            }
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut rules = dir.rules.clone();
        if !self.opts.no_ignore {
            if let Some(g) = folder_rules(&dir.path, self.out) {
                rules.push(Arc::new(g));
            }
        }
        let mut subfolders = Vec::new();
        for (name, ftype) in names {
            let path = dir.path.join(&name);
            let Some(name) = name.to_str() else {
                let msg =
                    "the name is not valid UTF-8 (it could not be cited or read back); skipped"
                        .into();
                self.warn(&path, SkipReason::NonUtf8Name, msg);
                continue;
            };
            if let Some(sub) = self.entry(&path, name, ftype, &rules, dir.via_link.as_deref()) {
                subfolders.push(sub);
            }
        }
        for sub in subfolders {
            self.folder(sub);
        }
    }

    fn unreadable_dir(&mut self, path: &Path, err: &str) {
        let rel = rel_path(&self.root, path);
        self.out.unreadable_dirs.push((self.root_index, rel));
        let msg = format!(
            "cannot list this folder: {err}; the files it had keep their last indexed text"
        );
        self.warn(path, SkipReason::Unreadable, msg);
    }

    /// Handles one entry; returns a real subfolder to walk next.
    fn entry(
        &mut self,
        path: &Path,
        name: &str,
        ftype: std::fs::FileType,
        rules: &Rules,
        via_link: Option<&Path>,
    ) -> Option<Pending> {
        let (meta, linked) = if ftype.is_symlink() {
            match std::fs::metadata(path) {
                Ok(m) => (m, true),
                Err(e) => {
                    let msg = format!("a broken symbolic link ({e}); skipped");
                    self.warn(path, SkipReason::BrokenLink, msg);
                    return None;
                }
            }
        } else {
            match std::fs::symlink_metadata(path) {
                Ok(m) => (m, false),
                Err(e) => {
                    self.warn(
                        path,
                        SkipReason::Unreadable,
                        format!("cannot stat, skipped: {e}"),
                    );
                    return None;
                }
            }
        };
        let is_dir = meta.is_dir();
        if let Some(reason) = skip_by_name(name, is_dir, self.opts) {
            self.count(reason);
            return None;
        }
        if is_ignored(rules, path, is_dir) {
            self.count(SkipReason::Ignored);
            return None;
        }
        let through_link = linked || via_link.is_some();
        let (canon, rel) = if through_link {
            match path.canonicalize() {
                Ok(c) if c.starts_with(&self.canon_root) => {
                    let rel = rel_path(&self.canon_root, &c);
                    (c, rel)
                }
                Ok(_) => {
                    let msg = "a symbolic link that leaves the root; skipped".into();
                    self.warn(path, SkipReason::LinkOutsideRoot, msg);
                    return None;
                }
                Err(e) => {
                    self.warn(
                        path,
                        SkipReason::BrokenLink,
                        format!("cannot resolve, skipped: {e}"),
                    );
                    return None;
                }
            }
        } else {
            let rel = rel_path(&self.root, path);
            (self.canon_root.join(&rel), rel)
        };
        if is_dir {
            let pending = Pending {
                path: path.to_path_buf(),
                canon,
                rules: rules.clone(),
                via_link: if linked {
                    Some(path.to_path_buf())
                } else {
                    via_link.map(Path::to_path_buf)
                },
            };
            if linked {
                self.deferred.push(pending);
                return None;
            }
            return Some(pending);
        }
        if !meta.is_file() {
            let msg = format!("{}, never opened; skipped", special_kind(meta.file_type()));
            self.warn(path, SkipReason::SpecialFile, msg);
            return None;
        }
        let kind = kind_of(Path::new(name), self.opts)?;
        if let Some(first) = self.met_before(&canon, path, through_link) {
            // named by the path it was first met under (a link sorted before its target
            // is met first; its canonical path would name the skipped file itself)
            let msg = format!(
                "the same file as `{}` (through a symbolic link); indexed once",
                first.display()
            );
            self.warn(path, SkipReason::Duplicate, msg);
            return None;
        }
        self.out
            .files
            .push(found(self.root_index, canon, rel, kind, &meta));
        None
    }

    /// The path the file at canonical path `canon` was first met under, if it was met
    /// before (else it is recorded as met under `path`). A file reached by its own path
    /// alone cannot be met twice, so the files met are only recorded (from those found so
    /// far) once a symbolic link leads to a file.
    fn met_before(&mut self, canon: &Path, path: &Path, through_link: bool) -> Option<PathBuf> {
        if through_link && !self.links_met {
            self.links_met = true;
            let (root, root_path) = (self.root_index, &self.root);
            self.files = self
                .out
                .files
                .iter()
                .filter(|f| f.root == root)
                .map(|f| (f.path.clone(), root_path.join(&f.rel_path)))
                .collect();
        }
        if !self.links_met {
            return None;
        }
        match self.files.entry(canon.to_path_buf()) {
            std::collections::hash_map::Entry::Occupied(e) => Some(e.get().clone()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(path.to_path_buf());
                None
            }
        }
    }
}

/// `path` relative to `root`, `/`-separated.
pub(super) fn rel_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

/// True when the innermost rule that matches `path` ignores it.
fn is_ignored(rules: &Rules, path: &Path, is_dir: bool) -> bool {
    for g in rules.iter().rev() {
        let m = g.matched(path, is_dir);
        if m.is_ignore() {
            return true;
        }
        if m.is_whitelist() {
            return false;
        }
    }
    false
}

/// The ignore rules of the folders above `root`, up to the nearest one holding `.git`
/// (none when the root is not inside a repository), outermost first.
fn ancestor_rules(root: &Path, out: &mut Discovery) -> Rules {
    let Some(top) = root.ancestors().skip(1).find(|a| a.join(".git").exists()) else {
        return Vec::new();
    };
    let mut dirs: Vec<&Path> = root
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(top))
        .collect();
    dirs.reverse();
    dirs.into_iter()
        .filter_map(|d| folder_rules(d, out))
        .map(Arc::new)
        .collect()
}

/// The rules of `dir`'s `.gitignore` and `.ignore` (the latter wins), if any. A rules
/// file that is not a regular file is never opened (a FIFO would block) and is named
/// in a warning.
fn folder_rules(dir: &Path, out: &mut Discovery) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for name in IGNORE_FILES {
        let path = dir.join(name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let text = match super::read::open_regular(&path).and_then(|mut f| {
            let mut s = String::new();
            f.by_ref()
                .take(1 << 20)
                .read_to_string(&mut s)
                .map(|_| s)
                .map_err(|e| super::read::ReadError::Unreadable(e.to_string()))
        }) {
            Ok(t) => t,
            Err(e) => {
                let reason = if meta.file_type().is_file() || meta.file_type().is_symlink() {
                    SkipReason::Unreadable
                } else {
                    SkipReason::SpecialFile
                };
                *out.skips.entry(reason).or_default() += 1;
                out.warnings.push(Warning {
                    path,
                    message: format!("ignore rules not read: {e}"),
                });
                continue;
            }
        };
        for line in text.lines() {
            if builder.add_line(Some(path.clone()), line).is_ok() {
                any = true;
            }
        }
    }
    if !any {
        return None;
    }
    builder.build().ok()
}

/// Walks `roots` and returns the documentation files and what was skipped.
///
/// # Errors
/// [`Error::Root`] when a root does not exist or cannot be listed.
pub fn discover(roots: &[PathBuf], opts: WalkOptions) -> Result<Discovery> {
    let mut out = Discovery::default();
    for (i, root) in roots.iter().enumerate() {
        let meta = std::fs::metadata(root).map_err(|source| Error::Root {
            path: root.clone(),
            source,
        })?;
        if meta.is_dir() {
            walk_root(i, root, opts, &mut out)?;
        } else {
            push_root_file(i, root, &meta, opts, &mut out);
        }
    }
    out.files
        .sort_by(|a, b| (a.root, &a.rel_path).cmp(&(b.root, &b.rel_path)));
    Ok(out)
}

fn push_root_file(
    i: usize,
    root: &Path,
    meta: &std::fs::Metadata,
    opts: WalkOptions,
    out: &mut Discovery,
) {
    let warn = |out: &mut Discovery, reason: SkipReason, message: String| {
        *out.skips.entry(reason).or_default() += 1;
        out.warnings.push(Warning {
            path: root.to_path_buf(),
            message,
        });
    };
    if !meta.is_file() {
        let kind = special_kind(meta.file_type());
        return warn(
            out,
            SkipReason::SpecialFile,
            format!("{kind}, never opened; skipped"),
        );
    }
    let Some(kind) = kind_of(root, opts) else {
        let also = if opts.sources {
            ", source file (.rs, .ts, .tsx, .js, .jsx, .py, .go, …) or package manifest"
        } else {
            ""
        };
        out.warnings.push(Warning {
            path: root.to_path_buf(),
            message: format!("not a .md, .markdown, .mdx, .txt, mkdocs.yml or OpenAPI spec (openapi.json|yaml, swagger.json|yaml, *.openapi.yaml, …) file{also}; skipped"),
        });
        return;
    };
    let Some(name) = root.file_name().and_then(|n| n.to_str()) else {
        return warn(
            out,
            SkipReason::NonUtf8Name,
            "the name is not valid UTF-8; skipped".into(),
        );
    };
    let canon = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    out.files
        .push(found(i, canon, name.to_string(), kind, meta));
}
