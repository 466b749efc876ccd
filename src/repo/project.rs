//! The project file, `docfuse.toml` at a root: ownership records and routes.
//!
//! ```toml
//! [[ownership]]
//! path = "src/query"          # a folder or file, root-relative
//! id = "search"               # an alias of the entity at `path`
//! agent_doc = "docs/search.md"  # read first before changing it
//! checks = ["npm run test:search"]
//!
//! [[intent]]                  # and [[change]]: routes a question to paths
//! title = "tune ranking"
//! paths = ["src/query/rank.ts"]
//! summary = "BM25 weights and priors"
//! ```
//!
//! The name follows the tool (as `Cargo.toml`, `pyproject.toml` name theirs); the same
//! file may later hold other settings.

use serde::Deserialize;

/// The project file's name, looked up at each root.
pub const PROJECT_FILE: &str = "docfuse.toml";

/// One `[[ownership]]` record.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnershipRecord {
    /// A folder or file, root-relative, `/`-separated (a trailing `/` is ignored).
    pub path: String,
    /// The unit's name: an alias of the entity at `path`.
    pub id: String,
    /// The document to read first before changing the unit (root-relative path).
    #[serde(default)]
    pub agent_doc: Option<String>,
    /// Checks that override every other source for the unit.
    #[serde(default)]
    pub checks: Vec<String>,
}

/// One `[[intent]]` or `[[change]]` route: a question or change of this title concerns
/// these paths.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub title: String,
    pub paths: Vec<String>,
    #[serde(default)]
    pub summary: String,
}

/// What a project file declares.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Project {
    #[serde(default)]
    pub ownership: Vec<OwnershipRecord>,
    #[serde(default)]
    pub intent: Vec<Route>,
    #[serde(default)]
    pub change: Vec<Route>,
}

impl Project {
    /// The ownership record of `path` (a file or folder, root-relative): the record
    /// whose path is `path` or the nearest folder above it (the longest match).
    pub fn owner_record(&self, path: &str) -> Option<&OwnershipRecord> {
        let path = path.trim_matches('/');
        self.ownership
            .iter()
            .filter(|r| {
                let p = r.path.trim_matches('/');
                p.is_empty() || path == p || path.starts_with(&format!("{p}/"))
            })
            .max_by_key(|r| r.path.trim_matches('/').len())
    }

    /// The record whose `id` is `id` (case-insensitive).
    pub fn record_named(&self, id: &str) -> Option<&OwnershipRecord> {
        self.ownership
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(id.trim()))
    }
}

/// Reads a project file.
///
/// # Errors
/// The TOML error (with its line) or an unknown key, as text.
pub fn read_project(text: &str) -> Result<Project, String> {
    toml::from_str(text).map_err(|e| format!("{PROJECT_FILE}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_routes_read_and_the_nearest_record_owns_a_path() {
        let p = read_project(
            r#"
[[ownership]]
path = "src"
id = "core"

[[ownership]]
path = "src/query/"
id = "search"
agent_doc = "docs/search.md"
checks = ["npm run test:search"]

[[intent]]
title = "tune ranking"
paths = ["src/query/rank.ts"]
"#,
        )
        .unwrap();
        assert_eq!(p.owner_record("src/query/rank.ts").unwrap().id, "search");
        assert_eq!(p.owner_record("src/query").unwrap().id, "search");
        assert_eq!(p.owner_record("src/queryx.ts").unwrap().id, "core");
        assert!(p.owner_record("docs/a.md").is_none());
        assert_eq!(p.record_named("SEARCH").unwrap().path, "src/query/");
        assert_eq!(p.intent[0].paths, ["src/query/rank.ts"]);
        let e = read_project("[[ownership]]\npath = \"x\"\nid = \"y\"\nowner = 1\n").unwrap_err();
        assert!(e.contains("docfuse.toml") && e.contains("owner"), "{e}");
    }
}
