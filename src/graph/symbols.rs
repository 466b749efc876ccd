//! `mentions` by symbol: inline code in a document (`parseConfig()`,
//! `RetryPolicy.delay`) that names what a source file of its root exports. The first
//! identifier of the code that at most [`MAX_DECLARERS`] files export gives the
//! relation: `observed` when one file exports it, `fuzzy` for each when a few do; a name
//! many files export (`new`, `run`) names none of them.

use std::collections::HashMap;

use super::relation::{Confidence, GraphDoc, Relation, RelationKind};
use crate::chunk::{symbol_segments, RawLink};

/// Most files a name may be exported by and still be a mention of each.
pub const MAX_DECLARERS: usize = 3;

/// Shortest name that can be a mention (`id`, `io` name too much).
const MIN_NAME: usize = 3;

/// The files (document numbers) that export each name, per root.
pub(super) struct Declared {
    by_name: HashMap<(usize, String), Vec<u32>>,
}

impl Declared {
    pub(super) fn of(docs: &[GraphDoc<'_>]) -> Declared {
        let mut by_name: HashMap<(usize, String), Vec<u32>> = HashMap::new();
        for (i, d) in docs.iter().enumerate() {
            for s in &d.links.symbols {
                let files = by_name.entry((d.root, s.clone())).or_default();
                if files.last() != Some(&(i as u32)) {
                    files.push(i as u32);
                }
            }
        }
        Declared { by_name }
    }

    /// The `mentions` relations of inline code `link` of document `from`.
    pub(super) fn mentions(
        &self,
        docs: &[GraphDoc<'_>],
        from: u32,
        link: &RawLink,
    ) -> Vec<Relation> {
        let root = docs[from as usize].root;
        let found = symbol_segments(&link.target)
            .filter(|s| s.chars().count() >= MIN_NAME)
            .filter_map(|s| self.by_name.get(&(root, s.to_string())))
            .find(|files| files.len() <= MAX_DECLARERS);
        let Some(files) = found else {
            return Vec::new();
        };
        let confidence = match files.len() {
            1 => Confidence::Observed,
            _ => Confidence::Fuzzy,
        };
        files
            .iter()
            .map(|&to| Relation {
                from,
                to,
                kind: RelationKind::Mentions,
                confidence,
                line: link.line,
                section: None,
                in_code_block: false,
            })
            .collect()
    }
}
