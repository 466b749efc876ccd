//! Discovery: walking roots for documentation files and reading them safely.
//!
//! Owns: the file kinds by name (`.md`, `.markdown`, `.mdx`, `.txt`, `mkdocs.yml`, API
//! specs — whether a spec parses is the engine's reading, `generation::read_document`), the walk (ignore rules
//! from `.gitignore`/`.ignore` through the `ignore` crate's matcher, hidden, version-
//! control, dependency and build-output folders skipped by default, symbolic links kept
//! inside their root, each file once by its canonical path, special files never
//! opened), skip counts per reason, and reading with a byte budget, binary detection,
//! UTF-16 and lossy UTF-8 decoding. A bad entry is skipped or decoded with a [`Warning`]
//! naming it; the walk never aborts for one entry, only when a root cannot be listed.
//! Must not import: `chunk` internals beyond `SourceKind`, `lexical`, `store`, `cli`.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! the walk (`walk.rs`: our own over `ignore`'s gitignore matcher; never opens FIFOs or
//! devices, one visit per canonical folder, dependency folders skipped, `--hidden`/`--no-
//! ignore`), reading (`read.rs`: non-blocking open, byte budget — cut at a line end, or at
//! a character when most of the budget is one line —, UTF-16 BOMs, Windows-1252 for files
//! without any UTF-8, binary detection; how a file was read when not exactly is its `note`,
//! kept in `files.json` and listed by `status` as `read_in_part`), the rules (`rules.rs`:
//! file kinds, skipped names), skip counts by reason

mod read;
mod rules;
mod walk;

pub use walk::discover;

pub use read::{open_regular, read_checked, read_text, special_kind, ReadError, ReadText};
pub use rules::{
    kind_of, skip_by_name, SkipReason, Skips, WalkOptions, DEPENDENCY_DIRS, IGNORE_FILES, VCS_DIRS,
};

use crate::chunk::SourceKind;
use std::path::PathBuf;
use std::time::UNIX_EPOCH;

/// A file found under a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    /// Index of the root it was found under, in the order the roots were given.
    pub root: usize,
    /// Canonical absolute path on disk (symbolic links resolved).
    pub path: PathBuf,
    /// Canonical path relative to its canonical root, `/`-separated; a root that is a
    /// file gives its file name.
    pub rel_path: String,
    pub kind: SourceKind,
    /// Size in bytes at discovery.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch (0 when unknown).
    pub mtime_ns: u64,
    /// Status-change time (ctime), nanoseconds since the Unix epoch (0 when unknown).
    pub ctime_ns: u64,
}

/// Something skipped or degraded, with the file it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: PathBuf,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.path.display(), self.message)
    }
}

/// What a walk of the roots found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovery {
    /// Documentation files, sorted by (root, rel_path), each once.
    pub files: Vec<FoundFile>,
    /// Entries skipped with a reason worth naming (special files, links, unreadable…).
    pub warnings: Vec<Warning>,
    /// Skipped entries per reason (hidden, ignored and dependency folders are counted,
    /// not named).
    pub skips: Skips,
    /// Folders under a root whose listing failed: `(root, folder rel_path)`. What they
    /// held is unknown, not gone.
    pub unreadable_dirs: Vec<(usize, String)>,
}

impl Discovery {
    /// True when `rel_path` of `root` lies in a folder that could not be listed.
    pub fn under_unreadable_dir(&self, root: usize, rel_path: &str) -> bool {
        self.unreadable_dirs
            .iter()
            .any(|(r, d)| *r == root && (d.is_empty() || rel_path.starts_with(&format!("{d}/"))))
    }
}

pub(crate) fn found(
    root: usize,
    path: PathBuf,
    rel_path: String,
    kind: SourceKind,
    meta: &std::fs::Metadata,
) -> FoundFile {
    FoundFile {
        root,
        path,
        rel_path,
        kind,
        size: meta.len(),
        mtime_ns: mtime_ns(meta),
        ctime_ns: ctime_ns(meta),
    }
}

/// Status-change time (ctime) of `meta` in nanoseconds since the Unix epoch: it moves on
/// every write, chmod or rename, also when the mtime is set back (0 when unavailable).
#[cfg(unix)]
pub fn ctime_ns(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    (meta.ctime().max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(meta.ctime_nsec().max(0) as u64)
}

/// Status-change time (unknown off Unix: 0).
#[cfg(not(unix))]
pub fn ctime_ns(_: &std::fs::Metadata) -> u64 {
    0
}

/// Modification time of `meta` in nanoseconds since the Unix epoch (0 when unavailable).
pub fn mtime_ns(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        fs::create_dir_all(p.join("guide/deep")).unwrap();
        fs::create_dir_all(p.join(".hidden")).unwrap();
        fs::create_dir_all(p.join("ignored")).unwrap();
        fs::create_dir_all(p.join("node_modules/pkg")).unwrap();
        fs::write(p.join("a.md"), "# A\n").unwrap();
        fs::write(p.join("guide/b.MDX"), "# B\n").unwrap();
        fs::write(p.join("guide/deep/c.txt"), "c\n").unwrap();
        fs::write(p.join("guide/d.markdown"), "# D\n").unwrap();
        fs::write(p.join("guide/e.rs"), "fn main() {}\n").unwrap();
        fs::write(p.join(".hidden/h.md"), "# H\n").unwrap();
        fs::write(p.join("ignored/i.md"), "# I\n").unwrap();
        fs::write(p.join("node_modules/pkg/README.md"), "# dep\n").unwrap();
        fs::write(p.join(".gitignore"), "ignored/\n").unwrap();
        d
    }

    fn rels(d: &Discovery) -> Vec<&str> {
        d.files.iter().map(|f| f.rel_path.as_str()).collect()
    }

    fn walk(p: &Path, opts: WalkOptions) -> Discovery {
        discover(&[p.to_path_buf()], opts).unwrap()
    }

    #[test]
    fn finds_doc_kinds_and_counts_what_it_skips() {
        let d = tree();
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(
            rels(&found),
            [
                "a.md",
                "guide/b.MDX",
                "guide/d.markdown",
                "guide/deep/c.txt"
            ]
        );
        assert_eq!(found.files[1].kind, SourceKind::Mdx);
        assert_eq!(found.files[3].kind, SourceKind::Text);
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
        // .gitignore and .hidden are hidden; node_modules is a dependency folder
        assert_eq!(found.skips.get(&SkipReason::Hidden), Some(&2));
        assert_eq!(found.skips.get(&SkipReason::Ignored), Some(&1));
        assert_eq!(found.skips.get(&SkipReason::DependencyFolder), Some(&1));
    }

    #[test]
    fn hidden_and_no_ignore_walk_what_rg_users_expect() {
        let d = tree();
        fs::create_dir_all(d.path().join(".git")).unwrap();
        fs::write(d.path().join(".git/x.md"), "# git\n").unwrap();
        let all = walk(
            d.path(),
            WalkOptions {
                hidden: true,
                no_ignore: true,
                ..WalkOptions::default()
            },
        );
        assert_eq!(
            rels(&all),
            [
                ".hidden/h.md",
                "a.md",
                "guide/b.MDX",
                "guide/d.markdown",
                "guide/deep/c.txt",
                "ignored/i.md",
                "node_modules/pkg/README.md"
            ]
        );
        assert_eq!(all.skips.get(&SkipReason::VersionControl), Some(&1));
    }

    #[test]
    fn missing_root_is_an_error_naming_it() {
        let err =
            discover(&[PathBuf::from("/no/such/folder")], WalkOptions::default()).unwrap_err();
        assert!(err.to_string().contains("/no/such/folder"), "{err}");
    }

    #[test]
    fn a_file_root_gives_its_name() {
        let d = tree();
        let found = walk(&d.path().join("a.md"), WalkOptions::default());
        assert_eq!(rels(&found), ["a.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_does_not_hang_and_is_reported() {
        let d = tree();
        std::os::unix::fs::symlink(d.path(), d.path().join("guide/loop")).unwrap();
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(found.files.len(), 4);
        assert_eq!(found.skips.get(&SkipReason::Duplicate), Some(&1));
        assert!(
            found.warnings[0].path.ends_with("guide/loop"),
            "{:?}",
            found.warnings
        );
    }

    #[cfg(unix)]
    #[test]
    fn each_file_once_by_its_canonical_path_and_links_that_leave_are_skipped() {
        let d = tree();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "# Secret\n").unwrap();
        let link =
            |to: &Path, name: &str| std::os::unix::fs::symlink(to, d.path().join(name)).unwrap();
        link(&outside.path().join("secret.md"), "leak.md");
        link(outside.path(), "leakdir");
        link(&d.path().join("a.md"), "alias.md");
        // a link to a folder of the same root sorts before it: the real path still wins
        link(&d.path().join("guide"), "free-guide");
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(
            rels(&found),
            [
                "a.md",
                "guide/b.MDX",
                "guide/d.markdown",
                "guide/deep/c.txt"
            ]
        );
        assert_eq!(found.skips.get(&SkipReason::LinkOutsideRoot), Some(&2));
        assert_eq!(found.skips.get(&SkipReason::Duplicate), Some(&2));
        let named: Vec<String> = found
            .warnings
            .iter()
            .map(|w| w.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(named.contains(&"free-guide".to_string()), "{named:?}");
        assert!(named.contains(&"alias.md".to_string()), "{named:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_duplicate_is_named_by_the_path_met_first_also_a_link_sorted_before_its_file() {
        let d = tree();
        std::os::unix::fs::symlink(
            d.path().join("guide/d.markdown"),
            d.path().join("0-link.md"),
        )
        .unwrap();
        let found = walk(d.path(), WalkOptions::default());
        assert!(rels(&found).contains(&"guide/d.markdown"));
        assert_eq!(found.skips.get(&SkipReason::Duplicate), Some(&1));
        let w = found
            .warnings
            .iter()
            .find(|w| w.message.contains("the same file as"))
            .unwrap();
        // the link is met first: the file's own path is the one skipped, named beside it
        assert!(w.path.ends_with("guide/d.markdown"), "{w:?}");
        assert!(w.message.contains("0-link.md"), "{w:?}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_never_opened_and_each_is_named() {
        let d = tree();
        let fifo = |p: PathBuf| {
            let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        };
        fifo(d.path().join("guide/.ignore"));
        fifo(d.path().join("notes.md"));
        std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.md")).unwrap();
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(found.files.len(), 4);
        assert_eq!(found.skips.get(&SkipReason::SpecialFile), Some(&2));
        let warned: Vec<String> = found
            .warnings
            .iter()
            .map(|w| w.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for name in [".ignore", "notes.md", "zero.md"] {
            assert!(warned.contains(&name.to_string()), "{name}: {warned:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_skipped_with_a_warning() {
        use std::os::unix::ffi::OsStrExt;
        let d = tree();
        let bad = d
            .path()
            .join(std::ffi::OsStr::from_bytes(b"bad\xffname.md"));
        fs::write(&bad, "# Bad\n").unwrap();
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(found.files.len(), 4);
        assert_eq!(found.skips.get(&SkipReason::NonUtf8Name), Some(&1));
        assert!(found.warnings[0].message.contains("UTF-8"));
    }

    #[test]
    fn negated_rules_and_nested_ignore_files_apply_innermost_first() {
        let d = tree();
        fs::write(d.path().join(".gitignore"), "*.markdown\nignored/\n").unwrap();
        fs::write(d.path().join("guide/.ignore"), "!d.markdown\nb.*\n").unwrap();
        let found = walk(d.path(), WalkOptions::default());
        assert_eq!(
            rels(&found),
            ["a.md", "guide/d.markdown", "guide/deep/c.txt"]
        );
    }
}
