//! Who owns a handoff's target, read from the root at handoff time (as package checks
//! are): the project file's `[[ownership]]` record of the target (its id, agent document
//! and checks; [`crate::repo::Project`]) and the `CODEOWNERS` rule that owns it
//! ([`crate::repo::Owners`]; looked up at `.github/`, the root, `docs/` and `.gitlab/`,
//! GitHub's order, the first found).

use std::path::Path;

use serde::Serialize;

use crate::repo::{read_codeowners, read_project, Owners, Project, PROJECT_FILE};

/// Where `CODEOWNERS` is looked up, in order.
pub const CODEOWNERS_PATHS: [&str; 4] = [
    ".github/CODEOWNERS",
    "CODEOWNERS",
    "docs/CODEOWNERS",
    ".gitlab/CODEOWNERS",
];

/// A file larger than this is not read.
const MAX_BYTES: u64 = 1 << 20;

/// The ownership sources of one root.
#[derive(Default)]
pub(super) struct Ownership {
    pub project: Option<Project>,
    /// The rules and the file's root-relative path.
    pub codeowners: Option<(Owners, &'static str)>,
}

/// A target's owners by `CODEOWNERS`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnersView {
    pub owners: Vec<String>,
    /// The rule's pattern as written.
    pub pattern: String,
    /// `path:line` of the rule.
    pub source: String,
}

/// A target's `[[ownership]]` record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OwnershipView {
    pub id: String,
    /// The record's path (the unit it owns).
    pub path: String,
    pub agent_doc: Option<String>,
    pub source: &'static str,
    /// What in the record names nothing indexed (its agent document is not an indexed
    /// file; its path holds no indexed file), each as a sentence; set by the handoff.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Ownership {
    /// Reads `docfuse.toml` and the first `CODEOWNERS` under `root`; a file that is
    /// missing, too large or not regular is passed over, one that does not parse is too,
    /// with a warning naming it.
    pub fn load(root: &Path) -> Ownership {
        let read = |rel: &str| -> Option<String> {
            let path = root.join(rel);
            let meta = std::fs::symlink_metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > MAX_BYTES {
                return None;
            }
            String::from_utf8(crate::fsio::read_regular(&path).ok()?).ok()
        };
        let project = read(PROJECT_FILE).and_then(|t| match read_project(&t) {
            Ok(p) => Some(p),
            Err(e) => {
                tracing::warn!("{e}; its ownership records are not used");
                None
            }
        });
        let codeowners = CODEOWNERS_PATHS
            .iter()
            .find_map(|rel| read(rel).map(|t| (read_codeowners(&t), *rel)));
        Ownership {
            project,
            codeowners,
        }
    }

    /// The `CODEOWNERS` rule that owns `path` (a folder when `is_dir`).
    pub fn owners_of(&self, path: &str, is_dir: bool) -> Option<OwnersView> {
        let (owners, file) = self.codeowners.as_ref()?;
        let rule = owners.owner_of(path, is_dir)?;
        Some(OwnersView {
            owners: rule.owners.clone(),
            pattern: rule.pattern.clone(),
            source: format!("{file}:{}", rule.line),
        })
    }

    /// The `[[ownership]]` record of `path`.
    pub fn record_of(&self, path: &str) -> Option<OwnershipView> {
        let r = self.project.as_ref()?.owner_record(path)?;
        Some(OwnershipView {
            id: r.id.clone(),
            path: r.path.trim_matches('/').to_string(),
            agent_doc: r.agent_doc.clone(),
            source: PROJECT_FILE,
            warnings: Vec::new(),
        })
    }

    /// The path of the record named `id` (an ownership id used as a handoff target).
    pub fn path_named(&self, id: &str) -> Option<String> {
        let r = self.project.as_ref()?.record_named(id)?;
        Some(r.path.trim_matches('/').to_string())
    }

    /// The record's checks for `path`, if its record declares any.
    pub fn checks_of(&self, path: &str) -> Vec<String> {
        self.project
            .as_ref()
            .and_then(|p| p.owner_record(path))
            .map(|r| r.checks.clone())
            .unwrap_or_default()
    }
}
