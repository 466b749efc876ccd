//! `imports` relations: a source file's imports resolved to the indexed files of its
//! root by the language's rules ([`crate::code::import_targets`]).

use std::collections::HashMap;

use super::relation::{Confidence, GraphDoc, Relation, RelationKind};
use crate::chunk::{LinkForm, RawLink};
use crate::code::{import_targets, Files, Import, ImportKind, Language};

/// The indexed files of each root, sorted, with their document numbers, and the Go
/// modules their `go.mod` files declare.
pub(super) struct Repo<'a> {
    roots: HashMap<usize, Root<'a>>,
}

#[derive(Default)]
struct Root<'a> {
    paths: Vec<&'a str>,
    docs: HashMap<&'a str, u32>,
    /// (folder, module path) of each `go.mod`.
    go_modules: Vec<(&'a str, &'a str)>,
}

impl<'a> Repo<'a> {
    pub(super) fn of(docs: &'a [GraphDoc<'a>]) -> Repo<'a> {
        let mut roots: HashMap<usize, Root<'a>> = HashMap::new();
        for (i, d) in docs.iter().enumerate() {
            let r = roots.entry(d.root).or_default();
            r.paths.push(d.path);
            r.docs.insert(d.path, i as u32);
            let name = d.path.rsplit('/').next().unwrap_or(d.path);
            if name == "go.mod" {
                if let Some(module) = d.links.names.first() {
                    let dir = d.path.rsplit_once('/').map_or("", |(dir, _)| dir);
                    r.go_modules.push((dir, module.as_str()));
                }
            }
        }
        for r in roots.values_mut() {
            r.paths.sort_unstable();
        }
        Repo { roots }
    }
}

/// The `imports` relations of one import `link` of document `from`.
pub(super) fn relations(
    repo: &Repo<'_>,
    docs: &[GraphDoc<'_>],
    from: u32,
    link: &RawLink,
) -> Vec<Relation> {
    let doc = &docs[from as usize];
    let (Some(language), Some(root)) = (Language::of_path(doc.path), repo.roots.get(&doc.root))
    else {
        return Vec::new();
    };
    let import = Import {
        target: link.target.clone(),
        kind: match link.form {
            LinkForm::ChildModule => ImportKind::ChildModule,
            _ => ImportKind::Path,
        },
        line: link.line,
    };
    let files = Files {
        paths: &root.paths,
        go_modules: &root.go_modules,
    };
    import_targets(doc.path, language, &import, &files)
        .iter()
        .filter_map(|p| root.docs.get(p.as_str()))
        .map(|&to| Relation {
            from,
            to,
            kind: RelationKind::Imports,
            confidence: Confidence::Observed,
            line: link.line,
            section: None,
            in_code_block: false,
        })
        .collect()
}
