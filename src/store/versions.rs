//! Every version that shapes an index: the folder's schema, the analyser's lexicon, the
//! chunker, the projection, the embedding-input template and the documentation graph's
//! rules. An index written with an
//! older version of any of them is rebuilt by `refresh`; one written by a newer docfuse
//! is refused with "upgrade docfuse" and never overwritten without `--force`.

use serde::{Deserialize, Serialize};

/// On-disk format version of the index folder. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 6;

/// The versions recorded in a manifest (the top-level `*_version` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatVersions {
    pub schema: u32,
    pub lexicon: u32,
    pub chunker: u32,
    pub projection: u32,
    pub input_template: u32,
    /// The graph's rules (link extraction, relation kinds, PageRank settings).
    pub graph: u32,
}

/// How a recorded set of versions compares with this docfuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compatibility {
    Same,
    /// Written by an older docfuse: `what` says which version differs.
    Older(String),
    /// Written by a newer docfuse.
    Newer(String),
}

impl FormatVersions {
    /// The versions this docfuse writes.
    pub fn current() -> Self {
        FormatVersions {
            schema: SCHEMA_VERSION,
            lexicon: crate::analysis::LEXICON_VERSION,
            chunker: crate::chunk::CHUNKER_VERSION,
            projection: crate::projection::PROJECTION_VERSION,
            input_template: crate::projection::INPUT_TEMPLATE_VERSION,
            graph: crate::graph::GRAPH_METRICS_VERSION,
        }
    }

    /// Reads the `*_version` keys of a manifest's JSON; a missing key reads as 0 (an
    /// index older than that key).
    pub fn of_json(value: &serde_json::Value) -> Self {
        let v = |k: &str| {
            value
                .get(k)
                .and_then(serde_json::Value::as_u64)
                .map_or(0, |x| x.min(u32::MAX as u64) as u32)
        };
        FormatVersions {
            schema: v("schema_version"),
            lexicon: v("lexicon_version"),
            chunker: v("chunker_version"),
            projection: v("projection_version"),
            input_template: v("input_template_version"),
            graph: v("graph_metrics_version"),
        }
    }

    fn named(&self) -> [(&'static str, u32); 6] {
        [
            ("index format", self.schema),
            ("lexicon", self.lexicon),
            ("chunker", self.chunker),
            ("projection", self.projection),
            ("embedding input template", self.input_template),
            ("documentation graph", self.graph),
        ]
    }

    /// Compares these (recorded) versions with the current ones. A newer version of any
    /// part makes the whole index newer.
    pub fn compatibility(&self) -> Compatibility {
        let now = FormatVersions::current().named();
        let mut older = None;
        for ((name, found), (_, ours)) in self.named().into_iter().zip(now) {
            if found > ours {
                return Compatibility::Newer(format!(
                    "{name} version {found}, this docfuse knows up to version {ours}"
                ));
            }
            if found < ours && older.is_none() {
                older = Some(format!(
                    "{name} version {found}, this docfuse writes version {ours}"
                ));
            }
        }
        older.map_or(Compatibility::Same, Compatibility::Older)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn older_newer_and_missing_keys() {
        let now = FormatVersions::current();
        assert_eq!(now.compatibility(), Compatibility::Same);
        let mut old = now;
        old.chunker -= 1;
        assert!(
            matches!(old.compatibility(), Compatibility::Older(w) if w.starts_with("chunker version"))
        );
        let mut new = now;
        new.schema += 1;
        new.chunker -= 1;
        assert!(
            matches!(new.compatibility(), Compatibility::Newer(w) if w.contains("index format"))
        );
        let v1 = serde_json::json!({"schema_version": 1, "lexicon_version": 1});
        let f = FormatVersions::of_json(&v1);
        assert_eq!((f.schema, f.chunker), (1, 0));
        assert!(matches!(f.compatibility(), Compatibility::Older(_)));
    }

    #[test]
    fn an_index_without_the_graph_version_is_older() {
        // a manifest of the schema before the graph's rules were recorded: its graph
        // files would otherwise be linked forward unchanged by a refresh
        let mut m = serde_json::to_value(FormatVersions::current()).unwrap();
        let json = serde_json::json!({
            "schema_version": m["schema"].take(),
            "lexicon_version": m["lexicon"].take(),
            "chunker_version": m["chunker"].take(),
            "projection_version": m["projection"].take(),
            "input_template_version": m["input_template"].take(),
        });
        let f = FormatVersions::of_json(&json);
        assert_eq!(f.graph, 0);
        assert!(
            matches!(f.compatibility(), Compatibility::Older(w) if w.starts_with("documentation graph version 0"))
        );
    }
}
