//! What the walk indexes and what it skips, by name: documentation file kinds, hidden
//! entries, version-control folders, dependency and build-output folders.

use crate::chunk::SourceKind;
use serde::{Deserialize, Serialize};

pub use crate::config::WalkOptions;
use std::path::Path;

/// Folders of version-control systems: never walked.
pub const VCS_DIRS: [&str; 6] = [".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"];

/// Folders that hold other projects' files (dependencies, virtual environments) or a
/// build's copies of the sources: skipped unless `no_ignore`.
pub const DEPENDENCY_DIRS: [&str; 17] = [
    "node_modules",
    "bower_components",
    "jspm_packages",
    "vendor",
    "target",
    ".venv",
    "venv",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    "_build",
    ".docusaurus",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".yarn",
];

/// Files that hold ignore rules, read in every walked folder unless `no_ignore`.
pub const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Why an entry under a root was not indexed. Counted per reason in build reports and
/// `status --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A hidden file or folder (walk with `--hidden` to include).
    Hidden,
    /// Excluded by a `.gitignore` or `.ignore` rule.
    Ignored,
    /// A dependency or build-output folder (`node_modules`, `target`, …).
    DependencyFolder,
    /// A version-control folder (`.git`, …).
    VersionControl,
    /// A FIFO, socket or device: never opened.
    SpecialFile,
    /// A symbolic link whose target lies outside its root.
    LinkOutsideRoot,
    /// A symbolic link whose target does not exist.
    BrokenLink,
    /// A file or folder already indexed under another path (a symbolic link to it).
    Duplicate,
    /// A name that is not valid UTF-8.
    NonUtf8Name,
    /// A file or folder that could not be read (permissions, I/O error).
    Unreadable,
    /// Binary content (or UTF-16 without a byte-order mark).
    Binary,
    /// An API spec file (`openapi.yaml`, …) that does not read as OpenAPI/Swagger
    /// (syntax error, no version field, minified, cut by the byte budget).
    InvalidSpec,
}

impl SkipReason {
    /// Stable snake_case name, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            SkipReason::Hidden => "hidden",
            SkipReason::Ignored => "ignored",
            SkipReason::DependencyFolder => "dependency_folder",
            SkipReason::VersionControl => "version_control",
            SkipReason::SpecialFile => "special_file",
            SkipReason::LinkOutsideRoot => "link_outside_root",
            SkipReason::BrokenLink => "broken_link",
            SkipReason::Duplicate => "duplicate",
            SkipReason::NonUtf8Name => "non_utf8_name",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Binary => "binary",
            SkipReason::InvalidSpec => "invalid_spec",
        }
    }
}

/// Skipped entries per reason (a skipped folder counts once, not its contents).
pub type Skips = std::collections::BTreeMap<SkipReason, u64>;

/// The kind of a path by its file name (`mkdocs.yml`, `openapi.yaml`, …) or extension
/// (case-insensitive), or `None` if docfuse ignores it; with `opts.sources`, source
/// files and package manifests too.
pub fn kind_of(path: &Path, opts: WalkOptions) -> Option<SourceKind> {
    let name = path.file_name()?.to_str()?;
    if opts.sources {
        SourceKind::of_file_name_with_sources(name)
    } else {
        SourceKind::of_file_name(name)
    }
}

/// Why a folder entry named `name` is skipped by name alone, if it is.
pub fn skip_by_name(name: &str, is_dir: bool, opts: WalkOptions) -> Option<SkipReason> {
    if is_dir && VCS_DIRS.contains(&name) {
        return Some(SkipReason::VersionControl);
    }
    if !opts.hidden && name.starts_with('.') {
        return Some(SkipReason::Hidden);
    }
    if is_dir && !opts.no_ignore && DEPENDENCY_DIRS.contains(&name) {
        return Some(SkipReason::DependencyFolder);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_vcs_hidden_and_dependency_folders() {
        let d = WalkOptions::default();
        let all = WalkOptions {
            hidden: true,
            no_ignore: true,
            sources: true,
        };
        assert_eq!(
            skip_by_name(".git", true, all),
            Some(SkipReason::VersionControl)
        );
        assert_eq!(skip_by_name(".notes", true, d), Some(SkipReason::Hidden));
        assert_eq!(skip_by_name(".notes", true, all), None);
        assert_eq!(
            skip_by_name("node_modules", true, d),
            Some(SkipReason::DependencyFolder)
        );
        assert_eq!(skip_by_name("node_modules", true, all), None);
        assert_eq!(skip_by_name("node_modules", false, d), None);
        assert_eq!(skip_by_name("guide", true, d), None);
    }
}
