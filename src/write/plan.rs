//! Planning a build: which roots it covers and which it refreshes, and the documents of
//! each — read from disk for refreshed roots, carried over from the previous generation
//! for the others. A file that cannot be read now keeps its last indexed text (it is
//! recorded as partial); a root whose own listing fails stops the build.

use super::options::BuildOptions;
use crate::chunk::SourceDoc;
use crate::discover::{discover, Discovery, ReadError, SkipReason, Skips, Warning};
use crate::error::{Error, Result};
use crate::generation::Previous;
use crate::generation::{absolute, load_jsonl, Loaded, Source};
use crate::store::{FileEntry, PartialFile, SourceSpec};
use std::path::{Path, PathBuf};

/// What a build will index.
pub(super) struct Plan {
    /// When the build began reading its sources, ms since the Unix epoch.
    pub started_unix_ms: u64,
    pub spec: SourceSpec,
    /// Every document: sorted by (root, rel_path) for roots, in file order for a JSONL corpus.
    pub docs: Vec<Loaded>,
    /// Files kept at their last indexed text because they could not be read.
    pub partial: Vec<PartialFile>,
    /// Entries the walk skipped, per reason.
    pub skips: Skips,
    pub warnings: Vec<Warning>,
}

/// Plans a build of `source` over the index whose roots were `prev_roots` (carrying
/// documents over from `previous` when it is usable).
///
/// # Errors
/// [`Error::Root`] for a root that is missing or cannot be listed; [`Error::Config`] when
/// a root of the index has gone and `drop_missing_roots` is not set, or a new index has
/// no root.
pub(super) fn plan(
    index_dir: &Path,
    source: &Source,
    prev_roots: &[String],
    previous: Option<&Previous>,
    opts: &BuildOptions,
) -> Result<Plan> {
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut out = Plan {
        started_unix_ms,
        spec: SourceSpec::Roots { roots: Vec::new() },
        docs: Vec::new(),
        partial: Vec::new(),
        skips: Skips::new(),
        warnings: Vec::new(),
    };
    let requested = match source {
        Source::Jsonl(_) if !opts.drop_roots.is_empty() => {
            return Err(Error::Config(
                "--drop-root: an index of a JSONL corpus has no roots to drop".into(),
            ));
        }
        Source::Jsonl(path) => {
            let abs = absolute(path)?;
            out.docs = load_jsonl(&abs, &mut out.warnings)?;
            out.spec = SourceSpec::Jsonl {
                file: abs.to_string_lossy().into_owned(),
            };
            return Ok(out);
        }
        Source::Roots(r) => r
            .iter()
            .map(|p| absolute(p).map(|p| p.to_string_lossy().into_owned()))
            .collect::<Result<Vec<String>>>()?,
    };
    let mut existing = prev_roots.to_vec();
    drop_named_roots(&mut existing, &opts.drop_roots, &requested)?;
    if let Some(gone) = existing.iter().find(|r| !Path::new(r.as_str()).exists()) {
        if !opts.drop_missing_roots {
            return Err(Error::Config(format!(
                "root `{gone}` of the index is missing\nhint: restore it, or drop it with `docfuse refresh --drop-missing-roots`"
            )));
        }
        existing.retain(|r| Path::new(r.as_str()).exists());
    }
    let packs = root_key(&index_dir.join(crate::pack::PACKS_DIR));
    let walk = opts.config.walk;
    let nests = |inner: &str, outer: &str| nests(inner, outer, walk, &packs);
    let (roots, refreshed) = merge_roots(&existing, &requested, &nests, &mut out.warnings);
    // dropping every root leaves a valid, empty index (the last service unregistered),
    // which a refresh finds fresh; only a new index needs a root
    if roots.is_empty() && opts.drop_roots.is_empty() && previous.is_none() {
        return Err(Error::Config(
            "no root to index\nhint: pass one or more folders".into(),
        ));
    }
    let paths: Vec<PathBuf> = refreshed
        .iter()
        .map(|&i| PathBuf::from(&roots[i]))
        .collect();
    let found = discover(&paths, opts.config.walk)?;
    out.skips = found.skips.clone();
    out.warnings.extend(found.warnings.iter().cloned());
    read_found(&found, &roots, &refreshed, previous, opts, &mut out)?;
    for i in (0..roots.len()).filter(|i| !refreshed.contains(i)) {
        carry_root(&roots[i], i, previous, &mut out)?;
    }
    out.docs
        .sort_by(|a, b| (a.entry.root, &a.entry.rel_path).cmp(&(b.entry.root, &b.entry.rel_path)));
    out.partial
        .sort_by(|a, b| (a.root, &a.path).cmp(&(b.root, &b.path)));
    out.spec = SourceSpec::Roots { roots };
    Ok(out)
}

/// Removes the roots named by `drop` from the index's roots `existing`. A path names a
/// root when it resolves to it (through symlinks while the folder exists; made absolute
/// and cleaned of `.` and `..` once it is gone).
///
/// # Errors
/// [`Error::Config`] when a path is not a root of the index (its roots are listed) or
/// is also given as a root to index.
fn drop_named_roots(
    existing: &mut Vec<String>,
    drop: &[PathBuf],
    requested: &[String],
) -> Result<()> {
    let mut seen = Vec::new();
    for d in drop {
        let key = root_key(d);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let listed = || existing.join("`, `");
        let Some(at) = existing.iter().position(|r| Path::new(r) == key) else {
            return Err(Error::Config(format!(
                "`{}` is not a root of the index\nhint: its roots are `{}`",
                d.display(),
                listed()
            )));
        };
        if requested.iter().any(|r| Path::new(r) == key) {
            return Err(Error::Config(format!(
                "`{}` is given both as a root to index and with --drop-root\nhint: give it once",
                d.display()
            )));
        }
        existing.remove(at);
    }
    Ok(())
}

/// Whether root `inner` is part of root `outer`: inside it, and reached by its walk — no
/// folder on the way is skipped by name (hidden, version control, dependency folders) —
/// and not an unpacked docs pack of the index (under `packs`), which stays a root of its
/// own. A root the outer walk would not reach is never merged into it (its files would
/// silently leave the index).
fn nests(inner: &str, outer: &str, walk: crate::discover::WalkOptions, packs: &Path) -> bool {
    let (inner_p, outer_p) = (Path::new(inner), Path::new(outer));
    if inner == outer || !inner_p.starts_with(outer_p) || inner_p.starts_with(packs) {
        return false;
    }
    let Ok(rest) = inner_p.strip_prefix(outer_p) else {
        return false;
    };
    rest.components().all(|c| {
        let name = c.as_os_str().to_string_lossy();
        crate::discover::skip_by_name(&name, true, walk).is_none()
    })
}

/// The absolute form of `path` as the index records roots: canonical while it exists,
/// else joined to the working directory with `.` and `..` resolved lexically.
pub fn root_key(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let joined = std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    // The deepest folder that still exists, canonical (symlinks resolved), then the rest.
    let mut base = out.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = base.parent() {
        if let Some(name) = base.file_name() {
            rest.push(name.to_os_string());
        }
        base = parent;
        if let Ok(canon) = std::fs::canonicalize(base) {
            return rest.iter().rev().fold(canon, |p, n| p.join(n));
        }
    }
    out
}

/// The build's roots and the indexes of those to refresh. A requested folder inside a
/// root of the index refreshes that root; a requested folder that contains roots of the
/// index replaces them (their files are found again under it); repeated or nested
/// requested folders are merged into the outermost. No request refreshes every root.
fn merge_roots(
    existing: &[String],
    requested: &[String],
    inside: &dyn Fn(&str, &str) -> bool,
    warnings: &mut Vec<Warning>,
) -> (Vec<String>, Vec<usize>) {
    let mut note = |path: &str, message: String| {
        warnings.push(Warning {
            path: PathBuf::from(path),
            message,
        })
    };
    // Requested folders, outermost only, each once.
    let mut wanted: Vec<String> = Vec::new();
    for r in requested {
        if wanted.contains(r) {
            note(r, "given more than once; indexed once".into());
        } else if let Some(outer) = requested.iter().find(|o| inside(r, o)) {
            note(
                r,
                format!("inside root `{outer}`; indexed once, as part of it"),
            );
        } else {
            wanted.push(r.clone());
        }
    }
    let mut roots: Vec<String> = Vec::new();
    for e in existing {
        if let Some(outer) = wanted.iter().find(|w| inside(e, w)) {
            note(
                e,
                format!("a root of the index inside `{outer}`: merged into it"),
            );
        } else {
            roots.push(e.clone());
        }
    }
    let mut refreshed: Vec<usize> = Vec::new();
    for w in &wanted {
        let at = match roots.iter().position(|r| r == w || inside(w, r)) {
            Some(i) => i,
            None => {
                roots.push(w.clone());
                roots.len() - 1
            }
        };
        if !refreshed.contains(&at) {
            refreshed.push(at);
        }
    }
    if requested.is_empty() {
        refreshed = (0..roots.len()).collect();
    }
    refreshed.sort_unstable();
    (roots, refreshed)
}

/// Reads the files found under the refreshed roots; a file that cannot be read, or that
/// sits in a folder that cannot be listed, keeps its previous text when it has one.
fn read_found(
    found: &Discovery,
    roots: &[String],
    refreshed: &[usize],
    previous: Option<&Previous>,
    opts: &BuildOptions,
    out: &mut Plan,
) -> Result<()> {
    let max_bytes = opts.config.max_file_bytes;
    // Size+mtime prove a file unchanged only under the same settings (the byte budget
    // shapes the indexed text) and when a rebuild is not forced.
    let carry_ok =
        !opts.force && previous.is_some_and(|p| p.manifest.config_hash == opts.config.hash());
    let mut seen = std::collections::HashSet::new();
    for f in &found.files {
        let root = refreshed[f.root];
        seen.insert((root, f.rel_path.clone()));
        if let Some(prev) = previous.filter(|_| carry_ok) {
            if let Some(e) = prev.entry(&roots[root], &f.rel_path) {
                if e.record.is_some() && e.unchanged_by_stat(f.size, f.mtime_ns, f.ctime_ns) {
                    out.docs.push(Previous::carry(e, root, f.kind));
                    continue;
                }
            }
        }
        let read = crate::generation::read_document(&f.path, f.kind, max_bytes, &mut out.warnings);
        let (skip, what) = match read {
            Ok(t) => {
                out.docs.push(Loaded {
                    carried: false,
                    doc: SourceDoc {
                        rel_path: f.rel_path.clone(),
                        text: t.text,
                        kind: f.kind,
                        title_hint: None,
                    },
                    entry: FileEntry {
                        root,
                        rel_path: f.rel_path.clone(),
                        size: f.size,
                        mtime_ns: f.mtime_ns,
                        ctime_ns: f.ctime_ns,
                        read_ms: out.started_unix_ms,
                        sha256: t.sha256,
                        chunks: 0,
                        record: None,
                        bucket: None,
                        note: t.note,
                    },
                });
                continue;
            }
            // a file that exists but cannot be read, or a spec that does not parse:
            // its last indexed text is kept
            Err(ReadError::Unreadable(e)) => {
                (SkipReason::Unreadable, format!("cannot read it: {e}"))
            }
            Err(ReadError::InvalidSpec(why)) => (
                SkipReason::InvalidSpec,
                format!("not readable as an API spec: {why}"),
            ),
            Err(other) => {
                let reason = match other {
                    ReadError::Binary(_) => SkipReason::Binary,
                    _ => SkipReason::SpecialFile,
                };
                *out.skips.entry(reason).or_default() += 1;
                out.warnings.push(Warning {
                    path: f.path.clone(),
                    message: other.to_string(),
                });
                continue;
            }
        };
        *out.skips.entry(skip).or_default() += 1;
        keep_or_warn(
            &roots[root],
            root,
            &f.rel_path,
            &f.path,
            &what,
            previous,
            out,
        )?;
    }
    let Some(prev) = previous else {
        return Ok(());
    };
    for &root in refreshed {
        let entries: Vec<&FileEntry> = prev
            .entries_of(&roots[root])
            .filter(|e| !seen.contains(&(root, e.rel_path.clone())))
            .filter(|e| {
                found.under_unreadable_dir(
                    refreshed.iter().position(|&r| r == root).unwrap_or(0),
                    &e.rel_path,
                )
            })
            .collect();
        for e in entries {
            let why = "its folder cannot be listed".to_string();
            out.docs.push(prev.load(e, root)?);
            out.partial.push(PartialFile {
                root,
                path: e.rel_path.clone(),
                reason: why,
            });
        }
    }
    Ok(())
}

/// A file that exists but cannot be read, or does not read as what its name says (an
/// API spec that does not parse), `what` saying which: keep its previous text
/// (partial), or warn.
fn keep_or_warn(
    root_name: &str,
    root: usize,
    rel_path: &str,
    path: &Path,
    what: &str,
    previous: Option<&Previous>,
    out: &mut Plan,
) -> Result<()> {
    match previous.and_then(|p| p.entry(root_name, rel_path).map(|e| (p, e))) {
        Some((prev, e)) => {
            out.docs.push(prev.load(e, root)?);
            out.partial.push(PartialFile {
                root,
                path: rel_path.to_string(),
                reason: what.to_string(),
            });
            out.warnings.push(Warning {
                path: path.to_path_buf(),
                message: format!("{what}; its last indexed text is kept"),
            });
        }
        None => out.warnings.push(Warning {
            path: path.to_path_buf(),
            message: format!("{what}; skipped"),
        }),
    }
    Ok(())
}

/// Carries a root that is not refreshed over from the previous generation, with its
/// partial records.
fn carry_root(name: &str, root: usize, previous: Option<&Previous>, out: &mut Plan) -> Result<()> {
    let Some(prev) = previous else {
        return Ok(());
    };
    let entries: Vec<&FileEntry> = prev.entries_of(name).collect();
    for e in entries {
        out.docs.push(prev.load(e, root)?);
    }
    let old_index = crate::generation::root_names(&prev.manifest.source)
        .iter()
        .position(|r| r == name);
    for p in prev
        .manifest
        .partial
        .iter()
        .filter(|p| Some(p.root) == old_index)
    {
        out.partial.push(PartialFile { root, ..p.clone() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    /// `merge_roots` with the default walk and the index's packs at `/i/packs`.
    fn merge_roots_(
        existing: &[String],
        requested: &[String],
        w: &mut Vec<Warning>,
    ) -> (Vec<String>, Vec<usize>) {
        let walk = crate::discover::WalkOptions::default();
        let n = |a: &str, b: &str| nests(a, b, walk, Path::new("/i/packs"));
        merge_roots(existing, requested, &n, w)
    }

    #[test]
    fn a_root_the_outer_walk_would_not_reach_stays_a_root() {
        let mut w = Vec::new();
        for inner in ["/d/.docfuse/packs/x", "/d/node_modules/p", "/d/a/.git/b"] {
            assert_eq!(
                merge_roots_(&s(&["/d"]), &s(&[inner]), &mut w),
                (s(&["/d", inner]), vec![1]),
                "{inner}"
            );
            assert_eq!(
                merge_roots_(&s(&[inner]), &s(&["/d"]), &mut w),
                (s(&[inner, "/d"]), vec![1]),
                "{inner}"
            );
        }
        assert_eq!(
            merge_roots_(&s(&["/i/packs/x"]), &s(&["/i"]), &mut w),
            (s(&["/i/packs/x", "/i"]), vec![1])
        );
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn roots_are_refreshed_merged_or_added() {
        let mut w = Vec::new();
        // a folder inside a root refreshes the root
        assert_eq!(
            merge_roots_(&s(&["/d"]), &s(&["/d/guide"]), &mut w),
            (s(&["/d"]), vec![0])
        );
        // repeated roots are merged, with a warning
        assert_eq!(
            merge_roots_(&s(&[]), &s(&["/e", "/e"]), &mut w),
            (s(&["/e"]), vec![0])
        );
        assert_eq!(w.len(), 1);
        // a root containing a root of the index replaces it
        assert_eq!(
            merge_roots_(&s(&["/d/guide", "/x"]), &s(&["/d"]), &mut w),
            (s(&["/x", "/d"]), vec![1])
        );
        assert!(w[1].message.contains("merged"), "{w:?}");
        // nested requested roots: the outer one
        assert_eq!(
            merge_roots_(&s(&[]), &s(&["/d", "/d/x"]), &mut w),
            (s(&["/d"]), vec![0])
        );
        // a name prefix is not a folder prefix
        assert_eq!(
            merge_roots_(&s(&["/doc"]), &s(&["/docs"]), &mut w),
            (s(&["/doc", "/docs"]), vec![1])
        );
        // no request: every root
        assert_eq!(
            merge_roots_(&s(&["/a", "/b"]), &[], &mut w),
            (s(&["/a", "/b"]), vec![0, 1])
        );
    }
}
