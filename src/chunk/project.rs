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
//! Paths in a project file are relative to its folder; a nested `docfuse.toml`'s are
//! prefixed with its folder, so every entry names root-relative paths. Each path a
//! record names is a link ([`LinkForm::Code`]): the record `mentions` the files it routes to.

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
    let folder = doc
        .rel_path
        .rsplit_once('/')
        .map_or(String::new(), |(f, _)| format!("{f}/"));
    let spans = record_spans(prep);
    let mut slugs = SlugAllocator::default();
    let mut chunks = Vec::new();
    let mut links = Vec::new();
    for (table, kind) in TABLES {
        let starts: Vec<&(usize, usize)> = spans
            .iter()
            .filter(|(_, t)| TABLES[*t].0 == table)
            .map(|(span, _)| span)
            .collect();
        for (k, record) in records(&project, kind, &folder).into_iter().enumerate() {
            // a record whose header the line scan did not find (a table written inline)
            // is cited at the file's first line
            let (first, last) = starts.get(k).map_or((0, 0), |s| **s);
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

/// The records of one table of `project`, paths prefixed with `folder`.
fn records(project: &Project, kind: ChunkKind, folder: &str) -> Vec<Record> {
    let rooted = |p: &str| format!("{folder}{}", p.trim_matches('/'));
    match kind {
        ChunkKind::Ownership => project
            .ownership
            .iter()
            .map(|r| {
                let path = rooted(&r.path);
                let mut summary = format!("{} owns {path}", r.id);
                let mut paths = vec![path];
                if let Some(doc) = &r.agent_doc {
                    summary.push_str(&format!("; read {} first", rooted(doc)));
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

/// The line span (0-based first, last non-blank) of each `[[table]]` record header the
/// file holds, in source order, with the index of its table in [`TABLES`]. A span ends
/// before the next table header of any kind (`[[…]]` or `[…]`).
fn record_spans(prep: &Prepared<'_>) -> Vec<((usize, usize), usize)> {
    let n = prep.table.len();
    let header = |i: usize| {
        let l = prep.table.content(&prep.parse, i).trim();
        let l = l.split('#').next().unwrap_or("").trim();
        l.starts_with('[').then(|| {
            let name = l.trim_start_matches('[').trim_end_matches(']').trim();
            TABLES.iter().position(|(t, _)| *t == name)
        })
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let Some(Some(t)) = header(i) else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while end < n && header(end).is_none() {
            end += 1;
        }
        let mut last = end - 1;
        while last > i && prep.blank.get(last).copied().unwrap_or(false) {
            last -= 1;
        }
        out.push(((i, last), t));
        i = end;
    }
    out
}
