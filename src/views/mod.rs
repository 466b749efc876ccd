//! Features built on both sides of the engine: handoffs (what to read and run before
//! changing a part of the repository) and graph views (a generation's relations, page by
//! page, for `docfuse graph` and the handoff's evidence).
//!
//! Must not import: `retriever`, `cli`, `server`, `pgstore`. Imports `read` (an opened
//! index), `generation`, the indexes (`graph`, `lexical`, `analysis`, `chunk`) and `repo`
//! (the package manifest that gives a handoff its checks when no document does).

mod graph;
mod handoff;
mod ownership;
mod package_checks;
mod related;

pub use graph::{
    graph_summary, page_relations, BrokenLinkView, BrokenView, GraphPage, GraphSummary,
    PageRelations,
};
pub use handoff::{
    handoff_for_entity, Caveats, Check, Handoff, HandoffEntry, HandoffEvidence, HandoffMetadata,
    HandoffTarget, Tier,
};
pub use ownership::{OwnersView, OwnershipView, CODEOWNERS_PATHS};
pub use related::{RelatedArea, MAX_RELATED};
