//! The project file (`docfuse.toml`, [`crate::repo::Project`]) as chunks: one entry per
//! record, over the record's lines, so a query for an ownership id, or a question an
//! intent or change route answers, finds the record (`docfuse.toml:12`).
//!
//! - `[[ownership]]` → an [`ChunkKind::Ownership`] entry titled by its id: the unit's
//!   declared entry (its path, agent document and checks), of entry kind `package` (the
//!   seed projects a record as a declared package; a handoff by its id answers for the
//!   entity at its path);
//! - `[[intent]]` / `[[change]]` → a [`ChunkKind::Intent`] / [`ChunkKind::Change`] entry
//!   titled by the route's title, its summary and paths.
//!
//! A project file is read at a root only (as handoffs read it); its paths are
//! root-relative. Each path a record names is a link ([`LinkForm::Code`]), at the record's
//! first line: the record `mentions` the files it routes to (a folder names no file).

use super::ids::SlugAllocator;
use super::lines::line_number;
use super::links::{LinkForm, RawLink};
use super::source::Prepared;
use super::{Chunk, ChunkKind, SourceDoc};
use crate::repo::{read_project, Project};

/// The record tables of a project file, as `[[table]]` headers name them.
const TABLES: [(&str, ChunkKind); 3] = [
    ("ownership", ChunkKind::Ownership),
    ("intent", ChunkKind::Intent),
    ("change", ChunkKind::Change),
];

/// The chunks of a project file, one per record in source order, and the paths its
/// records name as links; none, with a warning naming the file and why, when it does not
/// read as a project file.
pub(super) fn project_chunks(doc: &SourceDoc, prep: &Prepared<'_>) -> (Vec<Chunk>, Vec<RawLink>) {
    let project = match read_project(&prep.parse) {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!("`{}` is not indexed as a project file: {why}", doc.rel_path);
            return (Vec::new(), Vec::new());
        }
    };
    // handoffs read the project file of a root only: one elsewhere is not a project file
    if doc.rel_path.contains('/') {
        tracing::warn!(
            "`{}`: a project file is read at a root only; not indexed",
            doc.rel_path
        );
        return (Vec::new(), Vec::new());
    }
    let spans = record_spans(prep);
    let mut slugs = SlugAllocator::default();
    let mut chunks = Vec::new();
    let mut links = Vec::new();
    for ((table, kind), starts) in TABLES.into_iter().zip(&spans) {
        for (k, record) in records(&project, kind).into_iter().enumerate() {
            let (first, last) = starts.get(k).copied().unwrap_or((0, 0));
            let slug = slugs.unique(format!("_{table}/{}", super::ids::slugify(&record.title)));
            for p in &record.paths {
                links.push(RawLink {
                    line: line_number(first),
                    form: LinkForm::Code,
                    target: p.clone(),
                });
            }
            chunks.push(record.chunk(doc, prep, kind, slug, first, last));
        }
    }
    chunks.sort_by_key(|c| c.start_line);
    (chunks, links)
}

/// One record, ready to be a chunk.
struct Record {
    title: String,
    summary: String,
    body: String,
    /// Root-relative paths it names (its path or routes, its agent document).
    paths: Vec<String>,
}

impl Record {
    fn chunk(
        self,
        doc: &SourceDoc,
        prep: &Prepared<'_>,
        kind: ChunkKind,
        slug: String,
        first: usize,
        last: usize,
    ) -> Chunk {
        let mut symbols = vec![self.title.clone()];
        symbols.extend(self.paths.iter().cloned());
        Chunk {
            id: super::ids::chunk_id(&doc.rel_path, &slug, 1),
            kind,
            rel_path: doc.rel_path.clone(),
            title: self.title.clone(),
            title_from_stem: false,
            heading_path: vec![self.title.clone()],
            start_line: line_number(first),
            end_line: line_number(last),
            text: prep.table.join(prep.src, first, last),
            body: self.body,
            summary: self.summary,
            symbols,
            aliases: Vec::new(),
            code: String::new(),
            prelude: None,
        }
    }
}

/// The records of one table of `project`.
fn records(project: &Project, kind: ChunkKind) -> Vec<Record> {
    let rooted = |p: &str| p.trim_matches('/').to_string();
    match kind {
        ChunkKind::Ownership => project
            .ownership
            .iter()
            .map(|r| {
                // what the record says, in its own words: no generated verb that every
                // record would match
                let path = rooted(&r.path);
                let mut summary = format!("{}: {path}", r.id);
                let mut paths = vec![path];
                if let Some(doc) = &r.agent_doc {
                    summary.push_str(&format!("; agent document {}", rooted(doc)));
                    paths.push(rooted(doc));
                }
                let mut body = summary.clone();
                for c in &r.checks {
                    body.push_str(&format!("\ncheck: {c}"));
                }
                Record {
                    title: r.id.clone(),
                    summary,
                    body,
                    paths,
                }
            })
            .collect(),
        _ => {
            let routes = if kind == ChunkKind::Intent {
                &project.intent
            } else {
                &project.change
            };
            routes
                .iter()
                .map(|r| {
                    let paths: Vec<String> = r.paths.iter().map(|p| rooted(p)).collect();
                    let summary = super::fields::collapse_ws(&r.summary);
                    let body = format!("{summary}\npaths: {}", paths.join(", "));
                    Record {
                        title: r.title.clone(),
                        summary,
                        body: body.trim().to_string(),
                        paths,
                    }
                })
                .collect()
        }
    }
}

/// Where each record of a project file is written, per table in source order, from the
/// TOML parser's byte spans (a header inside a multi-line string, a quoted table name or
/// an inline array of tables are read as TOML reads them).
#[derive(serde::Deserialize, Default)]
struct Spans {
    #[serde(default)]
    ownership: Vec<toml::Spanned<toml::Table>>,
    #[serde(default)]
    intent: Vec<toml::Spanned<toml::Table>>,
    #[serde(default)]
    change: Vec<toml::Spanned<toml::Table>>,
}

/// The line span (0-based first, last non-blank) of each record, per table of
/// [`TABLES`]: a `[[table]]` record from its header line to the line before the next
/// record's header (the parser's span of such a table is its header), an inline one
/// (`ownership = [{…}]`) over its `{…}`.
fn record_spans(prep: &Prepared<'_>) -> [Vec<(usize, usize)>; 3] {
    let spans: Spans = toml::from_str(&prep.parse).unwrap_or_default();
    let tables = [&spans.ownership, &spans.intent, &spans.change];
    let header = |r: &toml::Spanned<toml::Table>| {
        prep.parse
            .get(r.span())
            .is_some_and(|t| t.trim_start().starts_with("[["))
    };
    let mut starts: Vec<usize> = tables
        .iter()
        .flat_map(|t| t.iter().filter(|r| header(r)))
        .map(|r| prep.table.line_of(r.span().start))
        .collect();
    starts.sort_unstable();
    let end = prep.table.len().saturating_sub(1);
    tables.map(|records| {
        records
            .iter()
            .map(|r| {
                let first = prep.table.line_of(r.span().start);
                let mut last = if header(r) {
                    let next = starts.partition_point(|&s| s <= first);
                    starts.get(next).map_or(end, |n| n.saturating_sub(1))
                } else {
                    prep.table.line_of(r.span().end.saturating_sub(1))
                };
                while last > first && prep.blank.get(last).copied().unwrap_or(true) {
                    last -= 1;
                }
                (first, last.max(first))
            })
            .collect()
    })
}
