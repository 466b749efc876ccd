//! The documentation graph of a generation: every document's links as written
//! (`links.json`, in snapshot order; a refresh carries the entries of documents it does
//! not read again) and the resolved graph with PageRank (`graph.json`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::source::Loaded;
use crate::error::{Error, Result};
use crate::graph::{DocLinks, Graph, GraphDoc, GRAPH_FILE, GRAPH_METRICS_VERSION};
use crate::store::write_atomic;

/// Every document's links as written, in the generation folder.
pub const LINKS_FILE: &str = "links.json";

#[derive(Serialize, Deserialize)]
struct LinksFile {
    /// The link extraction rules' version (the graph's).
    graph_metrics_version: u32,
    /// Per document in snapshot order.
    documents: Vec<DocLinks>,
}

/// The links of a generation's documents in snapshot order; `None` when the file is
/// missing, unreadable or of another version (the caller extracts them again).
/// Their chunk fingerprints (`DocLinks::bodies`) are not read
/// (`generation::with_fingerprints` adds them).
pub fn previous_links(gen_dir: &Path) -> Option<Vec<DocLinks>> {
    let bytes = crate::fsio::read_regular(gen_dir.join(LINKS_FILE)).ok()?;
    let file: LinksFile = serde_json::from_slice(&bytes).ok()?;
    (file.graph_metrics_version == GRAPH_METRICS_VERSION).then_some(file.documents)
}

/// Writes `links.json` and `graph.json` for `docs` (snapshot order, chunk counts set),
/// whose chunk ids are `chunks` in ordinal order. Returns the graph.
///
/// # Errors
/// [`Error::Io`] when a file cannot be written.
pub fn write_graph(
    gen_dir: &Path,
    docs: &[Loaded],
    links: Vec<DocLinks>,
    chunks: &[(String, String)],
    roots: &[String],
) -> Result<Graph> {
    let mut first = 0usize;
    let mut nodes = Vec::with_capacity(docs.len());
    for (d, l) in docs.iter().zip(&links) {
        let n = d.entry.chunks as usize;
        let ids = chunks.get(first..first + n).unwrap_or(&[]);
        first += n;
        let mut sections: Vec<String> = ids
            .iter()
            .map(|(id, _)| crate::chunk::section_id(id).to_string())
            .collect();
        sections.dedup();
        nodes.push(GraphDoc {
            root: d.entry.root,
            path: &d.entry.rel_path,
            sections,
            links: l,
        });
    }
    let graph = Graph::build_in(&nodes, &root_dirs(roots, docs));
    drop(nodes);
    let file = LinksFile {
        graph_metrics_version: GRAPH_METRICS_VERSION,
        documents: links,
    };
    let json = serde_json::to_vec(&file).map_err(|e| Error::Config(format!("links: {e}")))?;
    write_atomic(&gen_dir.join(LINKS_FILE), &json)?;
    let json = serde_json::to_vec(&graph).map_err(|e| Error::Config(format!("graph: {e}")))?;
    write_atomic(&gen_dir.join(GRAPH_FILE), &json)?;
    let ranks = PageRanks {
        graph_metrics_version: GRAPH_METRICS_VERSION,
        pagerank: graph.pagerank.clone(),
        chunks: docs.iter().map(|d| d.entry.chunks).collect(),
        for_agents: file.documents.iter().map(|l| l.for_agents).collect(),
        code: kind_flags(docs, |k| {
            matches!(
                k,
                crate::chunk::SourceKind::Code | crate::chunk::SourceKind::Manifest
            )
        }),
        routes: kind_flags(docs, |k| k == crate::chunk::SourceKind::Project),
        changelog: nonempty(
            docs.iter()
                .map(|d| d.is_prose() && crate::chunk::is_changelog(&d.entry.rel_path))
                .collect(),
        ),
        changelog_sections: changelog_sections(docs, chunks),
    };
    let json = serde_json::to_vec(&ranks).map_err(|e| Error::Config(format!("pagerank: {e}")))?;
    write_atomic(&gen_dir.join(PAGERANK_FILE), &json)?;
    Ok(graph)
}

/// The ordinals of the chunks of documents (Markdown, MDX, text; not source code, specs
/// or project files) that lie in a change-log section (`chunk::is_changelog_section`).
fn changelog_sections(docs: &[Loaded], chunks: &[(String, String)]) -> Vec<u64> {
    let mut out = Vec::new();
    let mut first = 0usize;
    for d in docs {
        let n = d.entry.chunks as usize;
        if d.is_prose() {
            let ids = chunks.get(first..first + n).unwrap_or(&[]);
            out.extend(
                ids.iter()
                    .enumerate()
                    .filter(|(_, (id, _))| crate::chunk::is_changelog_section(id))
                    .map(|(i, _)| (first + i) as u64),
            );
        }
        first += n;
    }
    out
}

/// Each root's folder for resolving links across roots: the root itself, or for a file
/// root (its one document is named as the root's last part) the root's parent. Read from
/// the documents, not the disk, so a database index's reader (whose roots are another
/// machine's paths) resolves the links as its writer did.
fn root_dirs(roots: &[String], docs: &[Loaded]) -> Vec<String> {
    roots
        .iter()
        .enumerate()
        .map(|(i, root)| {
            let root = root.replace('\\', "/");
            let mut of_root = docs.iter().filter(|d| d.entry.root == i);
            let name = root.rsplit('/').next().unwrap_or("");
            let file_root = match (of_root.next(), of_root.next()) {
                (Some(d), None) => d.entry.rel_path == name,
                _ => false,
            };
            match (file_root, root.rsplit_once('/')) {
                (true, Some((parent, _))) => parent.to_string(),
                _ => root,
            }
        })
        .collect()
}

/// PageRank per document and each document's chunk count, in snapshot order: all a
/// search needs for canonicality, without the relations.
#[derive(Serialize, Deserialize)]
struct PageRanks {
    graph_metrics_version: u32,
    pagerank: Vec<f64>,
    chunks: Vec<u32>,
    /// Per document: written for agents.
    #[serde(default)]
    for_agents: Vec<bool>,
    /// Per document: a module or package entry (source file, manifest); empty when no
    /// document is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    code: Vec<bool>,
    /// Per document: a project file (`docfuse.toml`), whose entries are ownership
    /// records and routes; empty when no document is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    routes: Vec<bool>,
    /// Per document: a change log (`chunk::is_changelog`); empty when no document is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    changelog: Vec<bool>,
    /// The ordinals of the chunks in a change-log section of a page
    /// (`chunk::is_changelog_section`), ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    changelog_sections: Vec<u64>,
}

/// Per document: whether its source kind passes `is`; empty when none does (an index of
/// documents).
fn kind_flags(docs: &[Loaded], is: impl Fn(crate::chunk::SourceKind) -> bool) -> Vec<bool> {
    nonempty(docs.iter().map(|d| is(d.doc.kind)).collect())
}

/// `flags`, or empty when none is set.
fn nonempty(flags: Vec<bool>) -> Vec<bool> {
    if flags.iter().any(|c| *c) {
        flags
    } else {
        Vec::new()
    }
}

/// The small file a search reads for canonicality.
pub const PAGERANK_FILE: &str = "pagerank.json";

/// The canonicality of each chunk's page (`[0, 1]`), whether it is written for agents,
/// and its roles (a module or package, a route, a change log: its page's or its
/// section's), by ordinal (`[chunks]` each); `None` when the generation has no PageRank
/// of this version or its shape does not match.
pub fn chunk_priors(gen_dir: &Path, chunks: u64) -> Option<crate::lexical::PagePriors> {
    let bytes = crate::fsio::read_regular(gen_dir.join(PAGERANK_FILE)).ok()?;
    let r: PageRanks = serde_json::from_slice(&bytes).ok()?;
    if r.graph_metrics_version != GRAPH_METRICS_VERSION
        || r.pagerank.len() != r.chunks.len()
        || r.for_agents.len() != r.chunks.len()
    {
        return None;
    }
    let per_doc = crate::graph::pagerank::canonicality(&r.pagerank);
    let mut out = crate::lexical::PagePriors::default();
    for ((c, n), agent) in per_doc.iter().zip(&r.chunks).zip(&r.for_agents) {
        out.canonicality
            .extend(std::iter::repeat_n(*c, *n as usize));
        out.for_agents
            .extend(std::iter::repeat_n(*agent, *n as usize));
    }
    out.code = per_chunk(&r.code, &r.chunks);
    out.routes = per_chunk(&r.routes, &r.chunks);
    out.changelog = per_chunk(&r.changelog, &r.chunks);
    mark(&mut out.changelog, &r.changelog_sections, chunks);
    mark(
        &mut out.template,
        &super::copies::template_ordinals(gen_dir),
        chunks,
    );
    (out.canonicality.len() as u64 == chunks).then_some(out)
}

/// Sets `flags[ord]` for each of `ords` below `chunks`, first giving an empty `flags`
/// (no chunk set) its `chunks` entries.
fn mark(flags: &mut Vec<bool>, ords: &[u64], chunks: u64) {
    if flags.is_empty() && ords.iter().any(|o| *o < chunks) {
        *flags = vec![false; chunks as usize];
    }
    for o in ords {
        if let Some(f) = usize::try_from(*o).ok().and_then(|o| flags.get_mut(o)) {
            *f = true;
        }
    }
}

/// Per-document `flags` spread over each document's `chunks`; empty when the shapes
/// differ or no flag is set.
fn per_chunk(flags: &[bool], chunks: &[u32]) -> Vec<bool> {
    if flags.len() != chunks.len() || !flags.iter().any(|c| *c) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (flag, n) in flags.iter().zip(chunks) {
        out.extend(std::iter::repeat_n(*flag, *n as usize));
    }
    out
}

/// The chunk count of each document (snapshot order) from `pagerank.json`; `None` when
/// it is missing, unreadable or of another version.
pub fn chunk_counts(gen_dir: &Path) -> Option<Vec<u32>> {
    let bytes = crate::fsio::read_regular(gen_dir.join(PAGERANK_FILE)).ok()?;
    let r: PageRanks = serde_json::from_slice(&bytes).ok()?;
    (r.graph_metrics_version == GRAPH_METRICS_VERSION).then_some(r.chunks)
}

/// The graph files of a generation (all three are kept together).
const GRAPH_FILES: [&str; 3] = [LINKS_FILE, GRAPH_FILE, PAGERANK_FILE];

/// Whether a new generation's graph files would equal the previous generation's: the same
/// documents in the same order with the same links (and audience; the words of their
/// chunks, `DocLinks::bodies`, do not count), and the same chunk ids
/// (so the same sections for anchors and the same chunk counts). Then a refresh links
/// them instead of resolving, ranking and writing them again.
pub fn graph_unchanged(
    previous: &super::previous::Previous,
    previous_links: Option<&[DocLinks]>,
    previous_chunks: &[(String, String)],
    docs: &[Loaded],
    links: &[DocLinks],
    chunks: &[(String, String)],
) -> bool {
    let has_files = GRAPH_FILES
        .iter()
        .all(|f| previous.manifest.contents.iter().any(|c| c.path == *f));
    let same_docs = previous.snapshot.files.len() == docs.len()
        && previous
            .snapshot
            .files
            .iter()
            .zip(docs)
            .all(|(o, d)| o.root == d.entry.root && o.rel_path == d.entry.rel_path);
    let same_links = previous_links.is_some_and(|p| {
        p.len() == links.len() && p.iter().zip(links).all(|(a, b)| a.same_graph(b))
    });
    has_files
        && same_docs
        && same_links
        && previous_chunks.len() == chunks.len()
        && previous_chunks.iter().zip(chunks).all(|(a, b)| a.0 == b.0)
}

/// Links the previous generation's graph files into `gen_dir`, returning their manifest
/// records (their recorded sha256 holds for the links).
pub fn link_graph(
    previous: &super::previous::Previous,
    gen_dir: &Path,
) -> Result<Vec<crate::store::GenerationFile>> {
    let mut out = Vec::new();
    for name in GRAPH_FILES {
        crate::store::link_or_copy(&previous.gen_dir.join(name), &gen_dir.join(name))?;
        out.extend(
            previous
                .manifest
                .contents
                .iter()
                .find(|c| c.path == name)
                .cloned(),
        );
    }
    Ok(out)
}

/// The graph of a generation: `Ok(None)` when the generation has none of this version
/// (written by an older docfuse), `Err` naming the problem when `graph.json` is there but
/// unreadable.
pub fn load_graph(gen_dir: &Path) -> std::result::Result<Option<Graph>, String> {
    let path = gen_dir.join(GRAPH_FILE);
    let bytes = match crate::fsio::read_regular(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    let g: Graph = serde_json::from_slice(&bytes)
        .map_err(|e| format!("`{}` does not parse: {e}", path.display()))?;
    Ok((g.graph_metrics_version == GRAPH_METRICS_VERSION).then_some(g))
}
