//! Path filters: a prefix and include/exclude globs over a document's root-relative path,
//! and the kinds of entry (`document`, `module`, `package`) a result may be.

use super::RetrieveError;
use crate::chunk::EntryKind;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

/// Which paths a query may return (all conditions must hold; empty means no filter).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PathFilters {
    /// The root-relative path starts with this string, e.g. `guide/` or `ch15-`.
    pub path_prefix: Option<String>,
    /// The path matches at least one of these globs (`*` stays within one folder, `**`
    /// crosses folders), e.g. `guide/*.md`, `**/install*`.
    pub globs: Vec<String>,
    /// The path matches none of these globs.
    pub exclude: Vec<String>,
    /// The result is an entry of one of these kinds (`document`, `module`, `package`;
    /// [`crate::chunk::EntryKind`]); empty: any.
    pub kinds: Vec<String>,
}

impl PathFilters {
    /// True when nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.path_prefix.as_deref().is_none_or(str::is_empty)
            && self.globs.is_empty()
            && self.exclude.is_empty()
            && self.kinds.is_empty()
    }
}

/// Compiled [`PathFilters`].
#[derive(Debug, Clone, Default)]
pub struct PathFilter {
    prefix: Option<String>,
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
    kinds: Vec<EntryKind>,
}

/// Most globs in one filter (a guard against pathological requests).
const MAX_GLOBS: usize = 64;

impl PathFilter {
    /// Compiles `filters`.
    ///
    /// # Errors
    /// [`RetrieveError::InvalidRequest`] naming the glob that does not parse, or when
    /// there are more than 64 globs, or naming a kind that is none of
    /// [`EntryKind::ALL`].
    pub fn compile(filters: &PathFilters) -> Result<Self, RetrieveError> {
        let mut kinds = Vec::new();
        for k in &filters.kinds {
            let kind = EntryKind::parse(k).ok_or_else(|| {
                let names: Vec<&str> = EntryKind::ALL.iter().map(|k| k.name()).collect();
                RetrieveError::InvalidRequest(format!(
                    "unknown kind `{k}`: the kinds are {}",
                    names.join(", ")
                ))
            })?;
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        if kinds.contains(&EntryKind::Area) && kinds.contains(&EntryKind::Module) {
            return Err(RetrieveError::InvalidRequest(
                "kinds `area` and `module` exclude each other: an area result is the module hits of a folder; ask for one of them".into(),
            ));
        }
        Ok(PathFilter {
            prefix: filters.path_prefix.clone().filter(|p| !p.is_empty()),
            include: globset(&filters.globs, "globs")?,
            exclude: globset(&filters.exclude, "exclude")?,
            kinds,
        })
    }

    /// True when no condition is set.
    pub fn is_empty(&self) -> bool {
        self.prefix.is_none()
            && self.include.is_none()
            && self.exclude.is_none()
            && self.kinds.is_empty()
    }

    /// Whether an entry of `kind` passes the kind condition (a module entry does when
    /// areas are asked for: [`Self::areas`]).
    pub fn matches_kind(&self, kind: EntryKind) -> bool {
        self.kinds.is_empty()
            || self.kinds.contains(&kind)
            || (kind == EntryKind::Module && self.areas())
    }

    /// Whether a file at `path` may hold entries of the kinds asked for: the kinds of its
    /// entries by its name ([`EntryKind::of_path`]; the project file holds packages,
    /// intents and changes). For what is missing from the passages the filters keep.
    pub fn matches_path_kind(&self, path: &str) -> bool {
        if self.kinds.is_empty() {
            return true;
        }
        if path == crate::repo::PROJECT_FILE {
            return [EntryKind::Package, EntryKind::Intent, EntryKind::Change]
                .into_iter()
                .any(|k| self.matches_kind(k));
        }
        self.matches_kind(EntryKind::of_path(path))
    }

    /// Whether areas are asked for: module hits are then reported as the folders that
    /// hold them, one result per folder.
    pub fn areas(&self) -> bool {
        self.kinds.contains(&EntryKind::Area)
    }

    /// Whether `path` (root-relative, `/`-separated) passes the path conditions.
    pub fn matches(&self, path: &str) -> bool {
        self.prefix.as_deref().is_none_or(|p| path.starts_with(p))
            && self.include.as_ref().is_none_or(|g| g.is_match(path))
            && !self.exclude.as_ref().is_some_and(|g| g.is_match(path))
    }
}

fn globset(globs: &[String], what: &str) -> Result<Option<GlobSet>, RetrieveError> {
    if globs.is_empty() {
        return Ok(None);
    }
    if globs.len() > MAX_GLOBS {
        return Err(RetrieveError::InvalidRequest(format!(
            "at most {MAX_GLOBS} `{what}` patterns, got {}",
            globs.len()
        )));
    }
    let mut set = GlobSetBuilder::new();
    for g in globs {
        let glob = GlobBuilder::new(g)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                RetrieveError::InvalidRequest(format!("bad glob `{g}` in `{what}`: {e}"))
            })?;
        set.add(glob);
    }
    set.build()
        .map(Some)
        .map_err(|e| RetrieveError::InvalidRequest(format!("bad `{what}` patterns: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(prefix: Option<&str>, globs: &[&str], exclude: &[&str]) -> PathFilter {
        PathFilter::compile(&PathFilters {
            path_prefix: prefix.map(str::to_string),
            globs: globs.iter().map(|s| s.to_string()).collect(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            kinds: Vec::new(),
        })
        .unwrap()
    }

    #[test]
    fn kinds_keep_the_entries_of_those_kinds() {
        let f = |kinds: &[&str]| {
            PathFilter::compile(&PathFilters {
                kinds: kinds.iter().map(|s| s.to_string()).collect(),
                ..PathFilters::default()
            })
        };
        let m = f(&["module"]).unwrap();
        assert!(!m.is_empty());
        assert!(m.matches_kind(EntryKind::Module) && m.matches("guide/a.md"));
        assert!(!m.matches_kind(EntryKind::Document) && !m.matches_kind(EntryKind::Package));
        let dp = f(&["Document", "package"]).unwrap();
        assert!(dp.matches_kind(EntryKind::Document) && dp.matches_kind(EntryKind::Package));
        assert!(!dp.matches_kind(EntryKind::Module));
        let a = f(&["area"]).unwrap();
        assert!(a.areas() && a.matches_kind(EntryKind::Module) && a.matches_kind(EntryKind::Area));
        assert!(!a.matches_kind(EntryKind::Document) && !m.areas());
        let e = f(&["area", "module"]).unwrap_err().to_string();
        assert!(e.contains("exclude each other"), "{e}");
        let e = f(&["areas", "module"]).unwrap_err().to_string();
        assert!(
            e.contains("unknown kind `areas`")
                && e.contains("document, module, area, package, intent, change"),
            "{e}"
        );
    }

    #[test]
    fn prefix_globs_and_excludes_combine() {
        assert!(f(None, &[], &[]).is_empty());
        let p = f(Some("guide/"), &[], &[]);
        assert!(p.matches("guide/install.md") && !p.matches("index.md"));
        let g = f(None, &["guide/*.md"], &[]);
        assert!(g.matches("guide/install.md"));
        assert!(!g.matches("guide/deep/x.md"), "`*` stays in one folder");
        assert!(!g.matches("guide/plugins.mdx"));
        let deep = f(None, &["**/x.md"], &["guide/deep/**"]);
        assert!(deep.matches("a/x.md") && deep.matches("x.md"));
        assert!(!deep.matches("guide/deep/x.md"));
        let both = f(Some("commands/"), &["**/cargo-b*.md"], &[]);
        assert!(both.matches("commands/cargo-build.md"));
        assert!(!both.matches("guide/cargo-build.md"));
    }

    #[test]
    fn bad_globs_are_bad_requests() {
        let e = PathFilter::compile(&PathFilters {
            globs: vec!["a/[b".into()],
            ..PathFilters::default()
        })
        .unwrap_err();
        assert_eq!(e.code(), "bad_request");
        assert!(e.to_string().contains("a/[b"), "{e}");
    }
}
