//! Handoffs: what an assistant about to work on a document or a folder should read first,
//! where it may edit and which checks apply — answered from the documentation graph,
//! the agent documents (`AGENTS.md`, `CLAUDE.md`, `CONTRIBUTING.md`) and front matter.

use std::collections::BTreeSet;

use serde::Serialize;

use super::graph::GraphContext;
use crate::chunk::{front_matter, printable, SourceDoc, SourceKind};
use crate::error::{Error, Result};
use crate::graph::{is_index_page, Confidence, RelationKind};
use crate::read::DocIndex;

/// Most entries in `start_here`.
pub const MAX_START_HERE: usize = 10;
/// Most entries the covers and mentions tiers of `start_here` contribute each.
const MAX_PER_TIER: usize = 5;
/// Most entries of the link-hop tier (one link away is weaker evidence).
const MAX_HOPS: usize = 3;
/// Most checks listed.
const MAX_CHECKS: usize = 20;
/// Longest handoff target accepted, in bytes (as a search query).
pub const MAX_TARGET_BYTES: usize = 4096;

/// What the handoff is about.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandoffTarget {
    /// `document`, `module` (a source file), `package` (a package manifest), `area` (a
    /// folder) or `section` (a section of a document, or an item of a module).
    pub kind: &'static str,
    pub root: usize,
    /// The document's path, or the folder (`""` for a root), relative to the root.
    pub path: String,
    /// The section id, for a section target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// What was asked for, as given.
    pub asked: String,
    /// How the request was matched: `path`, `folder`, `section id` or `title or alias`.
    pub matched_by: &'static str,
}

/// Why a page is in a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The area's agent documentation (`AGENTS.md`/`CLAUDE.md` in the folder or above).
    AgentDoc,
    /// An index page that covers the target.
    Covers,
    /// A page that links to or mentions the target.
    Mentions,
    /// One link away from a covering or mentioning page.
    LinkHop,
    /// The root's index page.
    RootIndex,
    /// Contribution rules (`CONTRIBUTING.md` in the folder or above).
    Contributing,
}

/// One page to read, with the relation that put it there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandoffEntry {
    pub path: String,
    pub tier: Tier,
    /// The relation and its evidence, e.g. `links_to guide/x.md at SUMMARY.md:4`.
    pub why: String,
    /// `path:line` where the relation is written (empty for folder layout).
    pub evidence: String,
    /// The page's canonicality in `[0, 1]` (order within a tier).
    pub canonicality: f32,
    pub confidence: Confidence,
    /// sha256 of the file as indexed.
    pub sha256: String,
    /// The document's place in the snapshot (several roots can hold the same path).
    #[serde(skip)]
    doc: usize,
}

/// A command that checks work on the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub command: String,
    /// `path:line` it was read from.
    pub source: String,
    /// `front_matter` (the target's `checks:`), `agent_doc` or `contributing` (the
    /// front matter `checks:` or a shell block under a test/check heading of an
    /// `AGENTS.md`/`CLAUDE.md` or `CONTRIBUTING.md` that applies); when those declare
    /// none, `package_scripts` (the nearest package manifest's check scripts) or
    /// `package_manager_default` (its package manager's test command).
    pub from: &'static str,
}

/// The target's own file as indexed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandoffEvidence {
    pub path: String,
    pub sha256: String,
}

/// What only `--caveats` adds: what may make the answer incomplete.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Caveats {
    /// The index is stale (files changed since the last refresh), with the reasons.
    pub stale: Vec<String>,
    /// Chunks still waiting for their vectors.
    pub pending_embeddings: u64,
    /// Files skipped at the last walk, by reason.
    pub skipped_files: std::collections::BTreeMap<String, u64>,
    /// No `AGENTS.md`/`CLAUDE.md` applies to the target.
    pub no_agent_doc: bool,
}

/// A handoff: where to start, what to read before editing, where to edit, which checks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Handoff {
    pub target: HandoffTarget,
    pub edit_roots: Vec<String>,
    pub start_here: Vec<HandoffEntry>,
    pub read_before_editing: Vec<HandoffEntry>,
    pub checks: Vec<Check>,
    /// The areas (folders) whose files the target imports or that import it, with the
    /// import that proves each ([`super::related`]); empty for a target no import
    /// touches.
    pub related: Vec<super::related::RelatedArea>,
    /// Who owns the target by `CODEOWNERS`, if a rule does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owners: Option<super::ownership::OwnersView>,
    /// The `docfuse.toml` `[[ownership]]` record of the target, if one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ownership: Option<super::ownership::OwnershipView>,
    /// What the target is, as ids: `entity_id` (`module:src/a.ts`, `area:src`,
    /// `document:…`, `package:…`), `kind`, `checks_source`, `confidence`, `area_id`,
    /// `package_id` (the nearest package manifest at or above it).
    pub metadata: HandoffMetadata,
    /// How each field was derived.
    pub explain: std::collections::BTreeMap<&'static str, String>,
    /// The target's files as indexed (a folder lists its documents, at most 20).
    pub evidence: Vec<HandoffEvidence>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveats: Option<Caveats>,
}

/// The handoff for `target`: a document path, a folder, a section id (`path#slugs`) or a
/// document's title or alias; `caveats` adds what may make it incomplete.
///
/// # Errors
/// [`Error::NotFound`] naming the closest indexed paths for an unknown target; an index
/// without a graph (see [`super::graph_summary`]); a file that cannot be read.
pub fn handoff_for_entity(index: &DocIndex, target: &str, caveats: bool) -> Result<Handoff> {
    let ctx = GraphContext::load(index)?;
    let t = resolve_target(index, &ctx, target)?;
    let docs = target_docs(&ctx, &t);
    let folder = match t.kind {
        "area" => t.path.clone(),
        _ => parent_folder(&t.path).to_string(),
    };
    let own = index
        .root_dir(t.root)
        .map(|r| super::ownership::Ownership::load(std::path::Path::new(r)))
        .unwrap_or_default();
    let mut ownership = own.record_of(&t.path);
    if let Some(o) = ownership.as_mut() {
        o.warnings = record_warnings(&ctx, t.root, o);
    }
    let owners = own.owners_of(&t.path, t.kind == "area");
    let mut agent_docs = applicable(&ctx, t.root, &folder, &crate::chunk::AGENT_DOC_NAMES);
    // the ownership record's agent document comes first
    if let Some(d) = ownership
        .as_ref()
        .and_then(|o| o.agent_doc.as_deref())
        .and_then(|p| ctx.find(p))
    {
        agent_docs.retain(|&a| a != d);
        agent_docs.insert(0, d);
    }
    let contributing = applicable(&ctx, t.root, &folder, &["CONTRIBUTING.md"]);
    let start_here = start_here(&ctx, &t, &docs, &agent_docs);
    let mut read_before: Vec<HandoffEntry> = start_here
        .iter()
        .filter(|e| e.tier != Tier::AgentDoc)
        .take(2)
        .cloned()
        .collect();
    for &d in agent_docs.iter().chain(&contributing) {
        let tier = if contributing.contains(&d) {
            Tier::Contributing
        } else {
            Tier::AgentDoc
        };
        if !read_before.iter().any(|e| e.doc == d) {
            read_before.push(entry(
                &ctx,
                d,
                tier,
                "applies to the folder and below".into(),
                String::new(),
            ));
        }
    }
    let sources: Vec<(usize, &'static str)> = agent_docs
        .iter()
        .map(|&d| (d, "agent_doc"))
        .chain(contributing.iter().map(|&d| (d, "contributing")))
        .collect();
    let record_checks = own.checks_of(&t.path);
    let checks = if record_checks.is_empty() {
        checks(index, &ctx, &t, &sources)?
    } else {
        record_checks
            .into_iter()
            .take(MAX_CHECKS)
            .map(|command| Check {
                command,
                source: crate::repo::PROJECT_FILE.to_string(),
                from: "ownership",
            })
            .collect()
    };
    let metadata = metadata_of(index, &t, &checks);
    let mut explain = std::collections::BTreeMap::new();
    explain.insert(
        "edit_roots",
        match t.kind {
            "area" => "the folder itself".to_string(),
            _ => "the document's own path".to_string(),
        },
    );
    explain.insert(
        "start_here",
        "the agent document of the folder or above, then the index pages that cover the target, then the pages that link to or mention it, then one link away from those, then the root's index page; the more canonical page (PageRank) first within a tier".to_string(),
    );
    explain.insert(
        "read_before_editing",
        "the first two pages to start from that are not agent documents, and every AGENTS.md, CLAUDE.md and CONTRIBUTING.md in the folder or above".to_string(),
    );
    explain.insert(
        "checks",
        "the target's front matter `checks:`, then the commands of shell blocks under a heading about tests or checks in the applicable agent documents; when they declare none, the check scripts of the nearest package manifest (package.json, Cargo.toml, pyproject.toml, go.mod) at or above the target, else its package manager's default".to_string(),
    );
    let related = super::related::related_areas(&ctx, &docs.iter().copied().collect());
    explain.insert(
        "related",
        "the folders whose files the target imports (`imports`) and whose files import it (`imported_by`), most imports first, each with the first import that proves it".to_string(),
    );
    let evidence = docs
        .iter()
        .take(20)
        .map(|&d| HandoffEvidence {
            path: ctx.snapshot.files[d].rel_path.clone(),
            sha256: ctx.snapshot.files[d].sha256.clone(),
        })
        .collect();
    let caveats = if caveats {
        Some(caveats_of(index, agent_docs.is_empty())?)
    } else {
        None
    };
    Ok(Handoff {
        edit_roots: vec![match t.kind {
            "area" if t.path.is_empty() => ".".to_string(),
            "area" => format!("{}/", t.path),
            _ => t.path.clone(),
        }],
        target: t,
        start_here,
        read_before_editing: read_before,
        checks,
        related,
        owners,
        ownership,
        metadata,
        explain,
        evidence,
        caveats,
    })
}

/// Finds what `asked` names.
fn resolve_target(index: &DocIndex, ctx: &GraphContext, asked: &str) -> Result<HandoffTarget> {
    if asked.len() > MAX_TARGET_BYTES {
        return Err(Error::NotFound(format!(
            "a handoff target of {} bytes: give a path, folder, section id, title or alias of at most {} bytes",
            asked.len(),
            MAX_TARGET_BYTES
        )));
    }
    let clean = asked.trim().trim_start_matches("./");
    if crate::analysis::is_blank(clean) {
        return Err(Error::NotFound(
            "an empty handoff target: give a document path, a folder (`.` for the whole root), a section id, or a title or alias".into(),
        ));
    }
    let clean = if clean == "." { "" } else { clean };
    let make = |kind, root, path: &str, section: Option<String>, matched_by| HandoffTarget {
        kind,
        root,
        path: path.to_string(),
        section,
        asked: asked.to_string(),
        matched_by,
    };
    if let Some(d) = ctx.find(clean) {
        let f = &ctx.snapshot.files[d];
        return Ok(make(
            entry_kind(&f.rel_path),
            f.root,
            &f.rel_path,
            None,
            "path",
        ));
    }
    if let Some((path, _)) = clean.split_once('#') {
        if let Some(d) = ctx.find(path) {
            let f = &ctx.snapshot.files[d];
            let chunks =
                crate::generation::previous_chunks(&index.generation_dir()).unwrap_or_default();
            let anchors = crate::generation::previous_links(&index.generation_dir())
                .and_then(|mut l| (d < l.len()).then(|| std::mem::take(&mut l[d].anchors)))
                .unwrap_or_default();
            if let Some((id, how)) = section_named(&chunks, &f.rel_path, clean, &anchors) {
                return Ok(make("section", f.root, &f.rel_path, Some(id), how));
            }
        }
    }
    let folder = clean.trim_end_matches('/');
    let in_folder = |p: &str| folder.is_empty() || p.starts_with(&format!("{folder}/"));
    if let Some(f) = ctx.snapshot.files.iter().find(|f| in_folder(&f.rel_path)) {
        return Ok(make("area", f.root, folder, None, "folder"));
    }
    // an ownership record's id (`docfuse.toml` `[[ownership]] id`)
    if let Some(t) = by_ownership_id(index, ctx, clean) {
        return Ok(HandoffTarget {
            asked: asked.to_string(),
            ..t
        });
    }
    // a page's title or alias, by the rule the graph's mentions use
    let named = crate::generation::previous_links(&index.generation_dir())
        .map(|links| crate::graph::named_documents(&links, clean))
        .unwrap_or_default();
    let doc = match named.as_slice() {
        [d] => Some(*d),
        [_, _, ..] => {
            let pages: Vec<String> = named.iter().map(|&d| ctx.path(d as u32)).collect();
            return Err(Error::NotFound(format!(
                "`{clean}` is the title or alias of {} pages: {}; give the path",
                pages.len(),
                pages.join(", ")
            )));
        }
        // else the lexical exact-id part (ids, aliases as `search` finds them)
        [] => by_title_or_alias(index, clean)?.and_then(|d| d_index(ctx, &d)),
    };
    if let Some(f) = doc.and_then(|d| ctx.snapshot.files.get(d)) {
        return Ok(make(
            entry_kind(&f.rel_path),
            f.root,
            &f.rel_path,
            None,
            "title or alias",
        ));
    }
    let close = ctx.closest(clean);
    let hint = if close.is_empty() {
        String::new()
    } else {
        format!("; closest: {}", close.join(", "))
    };
    Err(Error::NotFound(format!(
        "`{asked}` names no indexed document, folder, section, alias or ownership id{hint}"
    )))
}

/// The section of document `path` that `asked` (`path#…`) names: its full section id, an
/// anchor equal to the last slug of a section (as links write it, any case), or an anchor
/// another site generator gives one of its headings (`anchors`, [`crate::graph::DocLinks::anchors`]).
fn section_named(
    chunks: &[(String, String)],
    path: &str,
    asked: &str,
    anchors: &[(String, String)],
) -> Option<(String, &'static str)> {
    let (_, anchor) = asked.split_once('#')?;
    let prefix = format!("{path}#");
    let sections: Vec<&str> = chunks
        .iter()
        .map(|(id, _)| crate::chunk::section_id(id))
        .filter(|id| id.starts_with(&prefix))
        .collect();
    // an item as its heading path writes it (`lattice.rs#Lattice::viterbi`), whose id
    // joins with `.` (`lattice.rs#Lattice.viterbi`)
    let dotted = asked.replace("::", ".");
    if let Some(id) = sections.iter().find(|id| **id == asked || **id == dotted) {
        return Some((id.to_string(), "section id"));
    }
    crate::graph::section_for_anchor(sections.iter().copied(), anchor)
        .map(|id| (id.to_string(), "anchor"))
        .or_else(|| {
            let anchor = anchor.to_lowercase();
            anchors
                .iter()
                .find(|(a, _)| a.to_lowercase() == anchor)
                .map(|(_, id)| (id.clone(), "anchor"))
        })
}

fn d_index(ctx: &GraphContext, path: &(usize, String)) -> Option<usize> {
    ctx.snapshot
        .files
        .iter()
        .position(|f| f.root == path.0 && f.rel_path == path.1)
}

/// The document whose title, id or alias the text names exactly (the lexical exact-id
/// part, as `search` uses it).
fn by_title_or_alias(index: &DocIndex, text: &str) -> Result<Option<(usize, String)>> {
    if text.is_empty() {
        return Ok(None);
    }
    let opts = crate::read::SearchOptions {
        mode: crate::read::Mode::Lexical,
        limit: 5,
        explain: true,
        ..crate::read::SearchOptions::default()
    };
    let hits = index.search(text, &opts)?.hits;
    let named = hits.into_iter().find(|h| {
        let exact_id = h.explain.as_ref().is_some_and(|e| e.lexical.exact_id > 0.0);
        exact_id || h.chunk.title.eq_ignore_ascii_case(text)
    });
    Ok(named.map(|h| (h.chunk.root, h.chunk.path)))
}

/// The documents the target covers: itself, or every document of the folder.
fn target_docs(ctx: &GraphContext, t: &HandoffTarget) -> Vec<usize> {
    ctx.snapshot
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.root == t.root)
        .filter(|(_, f)| match t.kind {
            "area" => t.path.is_empty() || f.rel_path.starts_with(&format!("{}/", t.path)),
            _ => f.rel_path == t.path,
        })
        .map(|(i, _)| i)
        .collect()
}

fn parent_folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(f, _)| f)
}

/// Documents named one of `names` (exactly: `AGENTS.md`, not a public page `agents.md`)
/// in `folder` or a folder above it, nearest first.
fn applicable(ctx: &GraphContext, root: usize, folder: &str, names: &[&str]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut dir = Some(folder.to_string());
    while let Some(d) = dir {
        for (i, f) in ctx.snapshot.files.iter().enumerate() {
            let name = f.rel_path.rsplit('/').next().unwrap_or(&f.rel_path);
            if f.root == root && parent_folder(&f.rel_path) == d && names.contains(&name) {
                out.push(i);
            }
        }
        dir = if d.is_empty() {
            None
        } else {
            Some(parent_folder(&d).to_string())
        };
    }
    out
}

fn entry(ctx: &GraphContext, d: usize, tier: Tier, why: String, evidence: String) -> HandoffEntry {
    let f = &ctx.snapshot.files[d];
    HandoffEntry {
        path: ctx.path(d as u32),
        doc: d,
        tier,
        why,
        evidence,
        canonicality: ctx.canonicality_of(d),
        confidence: Confidence::Observed,
        sha256: f.sha256.clone(),
    }
}

/// The ranked tiers of pages to start from.
fn start_here(
    ctx: &GraphContext,
    t: &HandoffTarget,
    docs: &[usize],
    agent_docs: &[usize],
) -> Vec<HandoffEntry> {
    let inside: BTreeSet<usize> = docs.iter().copied().collect();
    let mut seen: BTreeSet<usize> = inside.clone();
    let mut out: Vec<HandoffEntry> = Vec::new();
    let path = |d: u32| ctx.path(d);
    // 1. the agent document
    // an area's own agent document is listed too; a document is not its own start
    let agent = agent_docs
        .iter()
        .copied()
        .find(|a| t.kind == "area" || !inside.contains(a));
    if let Some(a) = agent {
        seen.insert(a);
        let name = ctx.path(a as u32);
        let name = name.rsplit('/').next().unwrap_or(&name);
        let why = if crate::chunk::AGENT_DOC_NAMES.contains(&name) {
            "the agent document of the folder".to_string()
        } else {
            format!(
                "the agent document of its ownership record ({})",
                crate::repo::PROJECT_FILE
            )
        };
        out.push(entry(ctx, a, Tier::AgentDoc, why, String::new()));
    }
    // 2. covering index pages; 3. pages linking to or mentioning the target
    let tier = |kinds: &[RelationKind],
                tier: Tier,
                out: &mut Vec<HandoffEntry>,
                seen: &mut BTreeSet<usize>| {
        let mut found: Vec<HandoffEntry> = Vec::new();
        for r in &ctx.graph.relations {
            let from = r.from as usize;
            if !kinds.contains(&r.kind)
                || !inside.contains(&(r.to as usize))
                || inside.contains(&from)
            {
                continue;
            }
            if found.iter().any(|e| e.doc == from) || seen.contains(&from) {
                continue;
            }
            let kind = serde_json::to_value(r.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            let evidence = if r.line > 0 {
                format!("{}:{}", path(r.from), r.line)
            } else {
                String::new()
            };
            let mut why = format!("{kind} {}", r.section.clone().unwrap_or_else(|| path(r.to)));
            if r.in_code_block {
                why.push_str(" (in a code block)");
            }
            let mut e = entry(ctx, from, tier, why, evidence);
            e.confidence = r.confidence;
            found.push(e);
        }
        take_ranked(found, MAX_PER_TIER, out, seen);
    };
    if t.kind == "area" {
        // a folder's own index pages cover it
        for (i, f) in ctx.snapshot.files.iter().enumerate() {
            if f.root == t.root
                && parent_folder(&f.rel_path) == t.path
                && is_index_page(&f.rel_path)
            {
                let why = "the folder's index page".to_string();
                out.push(entry(ctx, i, Tier::Covers, why, String::new()));
            }
        }
    }
    tier(&[RelationKind::Covers], Tier::Covers, &mut out, &mut seen);
    tier(
        &[RelationKind::LinksTo, RelationKind::Mentions],
        Tier::Mentions,
        &mut out,
        &mut seen,
    );
    // 4. one links_to hop from those
    // a site's nav links every page: hopping from it would list the whole site
    let is_nav = |d: usize| kind_of(&ctx.snapshot.files[d].rel_path) == SourceKind::Nav;
    let anchors: Vec<usize> = out
        .iter()
        .filter(|e| matches!(e.tier, Tier::Covers | Tier::Mentions) && !is_nav(e.doc))
        .map(|e| e.doc)
        .collect();
    let mut hops: Vec<HandoffEntry> = Vec::new();
    for r in &ctx.graph.relations {
        let (from, to) = (r.from as usize, r.to as usize);
        if r.kind != RelationKind::LinksTo
            || !r.ranks()
            || !anchors.contains(&from)
            || seen.contains(&to)
        {
            continue;
        }
        if hops.iter().any(|e| e.doc == to) {
            continue;
        }
        let why = format!("linked from {}", path(r.from));
        hops.push(entry(
            ctx,
            to,
            Tier::LinkHop,
            why,
            format!("{}:{}", path(r.from), r.line),
        ));
    }
    take_ranked(hops, MAX_HOPS, &mut out, &mut seen);
    // 5. the root's index page
    let root_index = ctx
        .snapshot
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.root == t.root && !f.rel_path.contains('/') && is_index_page(&f.rel_path)
        })
        .map(|(i, _)| i)
        .max_by(|&a, &b| {
            ctx.canonicality_of(a)
                .total_cmp(&ctx.canonicality_of(b))
                .then(b.cmp(&a))
        });
    // the root's index page always has a place
    out.truncate(MAX_START_HERE - 1);
    if let Some(i) = root_index {
        if !out.iter().any(|e| e.doc == i) && !inside.contains(&i) {
            out.push(entry(
                ctx,
                i,
                Tier::RootIndex,
                "the root's index page".into(),
                String::new(),
            ));
        }
    }
    out
}

/// Appends the `limit` most canonical of `found` (ties by path) to `out`, marking them
/// seen.
fn take_ranked(
    mut found: Vec<HandoffEntry>,
    limit: usize,
    out: &mut Vec<HandoffEntry>,
    seen: &mut BTreeSet<usize>,
) {
    found.sort_by(|a, b| {
        b.canonicality
            .total_cmp(&a.canonicality)
            .then(a.path.cmp(&b.path))
    });
    for e in found.into_iter().take(limit) {
        seen.insert(e.doc);
        out.push(e);
    }
}

/// The checks that apply, the most specific source first: the target's front matter
/// `checks:`; then the agent and contributing documents that apply from inside the
/// package that holds the target (their front matter `checks:`, then the commands of
/// shell blocks under a test/check heading); then that package's own check scripts; then
/// the documents above the package (a root `CONTRIBUTING.md` speaks for the root's
/// package, not for `bindings/node/package.json`'s); then the package manager's default.
fn checks(
    index: &DocIndex,
    ctx: &GraphContext,
    t: &HandoffTarget,
    sources: &[(usize, &'static str)],
) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    if t.kind != "area" {
        if let Some(text) = index.indexed_text(t.root, &t.path)? {
            out.extend(front_matter_checks(&t.path, &text, "front_matter"));
        }
    }
    let (package_dir, package) = package_checks_of(index, t);
    let inside = |path: &str| {
        package_dir
            .as_deref()
            .is_none_or(|dir| dir.is_empty() || path.starts_with(&format!("{dir}/")))
    };
    let (inner, outer): (Vec<_>, Vec<_>) = sources
        .iter()
        .partition(|(d, _)| inside(&ctx.snapshot.files[*d].rel_path));
    out.extend(document_checks(index, ctx, &inner)?);
    let scripts = package.iter().any(|c| c.from == "package_scripts");
    if out.is_empty() && scripts {
        out.extend(package.iter().cloned());
    }
    if out.is_empty() {
        out.extend(document_checks(index, ctx, &outer)?);
    }
    if out.is_empty() {
        out.extend(package);
    }
    let mut seen = BTreeSet::new();
    out.retain(|c| seen.insert(c.command.clone()));
    out.truncate(MAX_CHECKS);
    Ok(out)
}

/// The checks the documents `sources` declare: front matter `checks:`, then the commands
/// of shell blocks under a test/check heading.
fn document_checks(
    index: &DocIndex,
    ctx: &GraphContext,
    sources: &[&(usize, &'static str)],
) -> Result<Vec<Check>> {
    let mut out = Vec::new();
    for &&(d, from) in sources {
        let f = &ctx.snapshot.files[d];
        let Some(text) = index.indexed_text(f.root, &f.rel_path)? else {
            continue;
        };
        out.extend(front_matter_checks(&f.rel_path, &text, from));
        for (line, command) in shell_checks(&text) {
            out.push(Check {
                command,
                source: format!("{}:{line}", f.rel_path),
                from,
            });
        }
    }
    Ok(out)
}

/// The folder of the package that holds the target (`""` at the root) and its checks
/// ([`super::package_checks`]): read from the root folder on disk (a JSONL index has
/// none).
fn package_checks_of(index: &DocIndex, t: &HandoffTarget) -> (Option<String>, Vec<Check>) {
    let Some(root) = index.root_dir(t.root).map(std::path::Path::new) else {
        return (None, Vec::new());
    };
    if !root.is_dir() {
        return (None, Vec::new());
    }
    let Some(found) = super::package_checks::package_checks(root, &t.path, t.kind == "area") else {
        return (None, Vec::new());
    };
    let dir = found
        .manifest
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string());
    let checks = found
        .checks
        .into_iter()
        .map(|(command, line)| Check {
            command,
            source: format!("{}:{line}", found.manifest),
            from: found.from,
        })
        .collect();
    (Some(dir), checks)
}

/// The front matter `checks:` of a document, each cited at the line that holds it.
fn front_matter_checks(path: &str, text: &str, from: &'static str) -> Vec<Check> {
    let fm = front_matter(&SourceDoc {
        rel_path: path.to_string(),
        text: text.to_string(),
        kind: kind_of(path),
        title_hint: None,
    });
    fm.checks
        .into_iter()
        .map(|command| {
            let line = text
                .lines()
                .position(|l| l.contains(command.as_str()))
                .map_or(1, |i| i + 1);
            Check {
                source: format!("{path}:{line}"),
                command,
                from,
            }
        })
        .collect()
}

/// A handoff's ids: see [`Handoff::metadata`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HandoffMetadata {
    pub entity_id: String,
    pub kind: &'static str,
    /// Where the first check came from (`ownership`, `front_matter`, `agent_doc`,
    /// `contributing`, `package_scripts`, `package_manager_default`), `none` without one.
    pub checks_source: &'static str,
    /// `observed` for a target named by path, folder, section id or ownership id;
    /// `fuzzy` for one found by title or alias.
    pub confidence: &'static str,
    pub area_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package_id: Option<String>,
}

fn metadata_of(index: &DocIndex, t: &HandoffTarget, checks: &[Check]) -> HandoffMetadata {
    let id =
        |kind: &str, path: &str| format!("{kind}:{}", if path.is_empty() { "." } else { path });
    let area = match t.kind {
        "area" => t.path.clone(),
        _ => parent_folder(&t.path).to_string(),
    };
    let package_id = index
        .root_dir(t.root)
        .filter(|r| std::path::Path::new(r).is_dir())
        .and_then(|r| {
            super::package_checks::package_checks(
                std::path::Path::new(r),
                &t.path,
                t.kind == "area",
            )
        })
        .map(|p| id("package", &p.manifest));
    HandoffMetadata {
        entity_id: match t.kind {
            "section" => format!(
                "{}:{}",
                entry_kind(&t.path),
                t.section.as_deref().unwrap_or(&t.path)
            ),
            kind => id(kind, &t.path),
        },
        kind: t.kind,
        checks_source: checks.first().map_or("none", |c| c.from),
        confidence: if t.matched_by == "title or alias" {
            "fuzzy"
        } else {
            "observed"
        },
        area_id: id("area", &area),
        package_id,
    }
}

/// The target an ownership record's `id` names: its path, as a file or a folder; a
/// record whose path holds no indexed file is a declared package (the seed's rule), so
/// a handoff by its id still answers with its agent document and checks.
fn by_ownership_id(index: &DocIndex, ctx: &GraphContext, id: &str) -> Option<HandoffTarget> {
    let mut declared = None;
    for (root, _) in ctx
        .snapshot
        .files
        .iter()
        .map(|f| (f.root, ()))
        .collect::<BTreeSet<_>>()
    {
        let dir = index.root_dir(root)?;
        let own = super::ownership::Ownership::load(std::path::Path::new(dir));
        let Some(path) = own.path_named(id) else {
            continue;
        };
        let file = ctx
            .snapshot
            .files
            .iter()
            .find(|f| f.root == root && f.rel_path == path);
        let in_folder = |p: &str| path.is_empty() || p.starts_with(&format!("{path}/"));
        let kind = match file {
            Some(f) => entry_kind(&f.rel_path),
            None if ctx
                .snapshot
                .files
                .iter()
                .any(|f| f.root == root && in_folder(&f.rel_path)) =>
            {
                "area"
            }
            // a declared package, unless another root's record names an indexed path
            None => {
                declared.get_or_insert((root, path));
                continue;
            }
        };
        return Some(HandoffTarget {
            kind,
            root,
            path,
            section: None,
            asked: id.to_string(),
            matched_by: "ownership id",
        });
    }
    declared.map(|(root, path)| HandoffTarget {
        kind: "package",
        root,
        path,
        section: None,
        asked: id.to_string(),
        matched_by: "ownership id",
    })
}

/// What an ownership record names that the index does not hold: its agent document (not
/// an indexed file: left out of start here), its path (no indexed file at or under it).
fn record_warnings(
    ctx: &GraphContext,
    root: usize,
    o: &super::ownership::OwnershipView,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(doc) = o.agent_doc.as_deref().filter(|d| ctx.find(d).is_none()) {
        out.push(format!(
            "agent_doc `{doc}` is not an indexed file; it is not in start here"
        ));
    }
    let under =
        |p: &str| o.path.is_empty() || p == o.path || p.starts_with(&format!("{}/", o.path));
    if !ctx
        .snapshot
        .files
        .iter()
        .any(|f| f.root == root && under(&f.rel_path))
    {
        out.push(format!(
            "path `{}` holds no indexed file: the record is a declared package",
            o.path
        ));
    }
    out
}

/// The entry kind of an indexed file as a handoff names it.
fn entry_kind(path: &str) -> &'static str {
    crate::chunk::EntryKind::of_path(path).name()
}

fn kind_of(path: &str) -> SourceKind {
    let name = path.rsplit('/').next().unwrap_or(path);
    SourceKind::of_file_name(name).unwrap_or(SourceKind::Markdown)
}

/// Commands of fenced `sh`/`bash`/`shell`/`zsh`/`console` blocks under a heading that
/// mentions tests or checks (and its sub-headings), with their 1-based lines: `$ `
/// prompts dropped (in a `console` block only prompted lines are commands, the rest is
/// output), comments skipped, `\` continuations joined, front matter skipped.
pub(crate) fn shell_checks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // the level of the test/check heading whose section we are in
    let mut checks_level: Option<usize> = None;
    let mut fence: Option<(String, Option<bool>)> = None;
    let mut pending: Option<(usize, String)> = None;
    let skip = front_matter_lines(text);
    for (i, line) in text.lines().enumerate().skip(skip) {
        let trimmed = line.trim();
        if let Some((marker, shell)) = &fence {
            let closes = trimmed.starts_with(marker.as_str())
                && trimmed
                    .trim_start_matches(marker.as_str())
                    .trim()
                    .is_empty();
            if closes {
                fence = None;
                out.extend(pending.take());
                continue;
            }
            let Some(console) = *shell else { continue };
            if checks_level.is_none() {
                continue;
            }
            let prompted = trimmed.strip_prefix("$ ");
            let cmd = match (console, prompted, pending.is_some()) {
                (_, _, true) => trimmed,
                (true, Some(c), false) => c,
                (true, None, false) => continue,
                (false, p, false) => p.unwrap_or(trimmed),
            }
            .trim();
            let part = cmd.trim_end_matches('\\').trim_end();
            match pending.as_mut() {
                Some((_, so_far)) => {
                    so_far.push(' ');
                    so_far.push_str(part);
                }
                None if !cmd.is_empty() && !cmd.starts_with('#') => {
                    pending = Some((i + 1, part.to_string()));
                }
                None => {}
            }
            if !cmd.ends_with('\\') {
                out.extend(pending.take());
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let ch = trimmed.chars().next().unwrap_or('`');
            let run: String = trimmed.chars().take_while(|&c| c == ch).collect();
            let info = trimmed[run.len()..].trim().to_lowercase();
            let lang = info
                .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                .next()
                .unwrap_or("");
            let shell = match lang {
                "sh" | "bash" | "shell" | "zsh" => Some(false),
                "console" | "shell-session" => Some(true),
                _ => None,
            };
            fence = Some((run, shell));
            continue;
        }
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && trimmed[level..].starts_with([' ', '\t']) {
            let heading = trimmed[level..].trim().to_lowercase();
            let about_checks = heading.split(|c: char| !c.is_alphanumeric()).any(|word| {
                word == "ci"
                    || ["test", "check", "lint", "verif"]
                        .iter()
                        .any(|w| word.starts_with(w))
            });
            checks_level = match checks_level {
                Some(l) if level > l => Some(l),
                _ if about_checks => Some(level),
                _ => None,
            };
        }
    }
    out
}

/// Lines of a YAML (`---`) or TOML (`+++`) front matter block at the start of `text`.
fn front_matter_lines(text: &str) -> usize {
    let mut lines = text.lines();
    let marker = match lines.next().map(str::trim_end) {
        Some(m @ ("---" | "+++")) => m,
        _ => return 0,
    };
    lines
        .position(|l| l.trim_end() == marker || (marker == "---" && l.trim_end() == "..."))
        .map_or(0, |p| p + 2)
}

fn caveats_of(index: &DocIndex, no_agent_doc: bool) -> Result<Caveats> {
    let s = crate::read::status(index)?;
    Ok(Caveats {
        stale: if s.fresh {
            Vec::new()
        } else {
            s.reasons.clone()
        },
        pending_embeddings: s.pending,
        skipped_files: s.skipped.clone(),
        no_agent_doc,
    })
}

impl Handoff {
    /// The handoff as lines for a person (`docfuse handoff`, the MCP tool's text).
    pub fn text_lines(&self) -> Vec<String> {
        let h = self;
        let t = &h.target;
        let mut out = vec![format!(
            "handoff for {} `{}` (matched by {})",
            t.kind,
            printable(t.section.as_deref().unwrap_or(&t.path)),
            t.matched_by
        )];
        out.push(format!("edit: {}", h.edit_roots.join(", ")));
        out.push("start here:".into());
        out.extend(
            h.start_here
                .iter()
                .enumerate()
                .map(|(i, e)| entry_line(i, e)),
        );
        if h.start_here.is_empty() {
            out.push("  (nothing links to, covers or mentions it)".into());
        }
        out.push("read before editing:".into());
        out.extend(
            h.read_before_editing
                .iter()
                .enumerate()
                .map(|(i, e)| entry_line(i, e)),
        );
        out.push("checks:".into());
        out.extend(
            h.checks
                .iter()
                .map(|c| format!("  {}   ({})", printable(&c.command), printable(&c.source))),
        );
        if h.checks.is_empty() {
            out.push(
                "  none declared (front matter `checks:`, a test section in AGENTS.md, or a package manifest)".into(),
            );
        }
        if let Some(o) = &h.ownership {
            out.push(format!(
                "ownership: {} ({} in {})",
                printable(&o.id),
                printable(if o.path.is_empty() { "." } else { &o.path }),
                o.source
            ));
            for w in &o.warnings {
                out.push(format!("  warning: {}", printable(w)));
            }
        }
        if let Some(o) = &h.owners {
            out.push(format!(
                "owners: {}   ({} {})",
                printable(&o.owners.join(" ")),
                printable(&o.source),
                printable(&o.pattern)
            ));
        }
        if !h.related.is_empty() {
            out.push("related (by imports):".into());
            out.extend(h.related.iter().map(|r| {
                let verb = match r.direction {
                    "imports" => "imports from",
                    _ => "imported by",
                };
                format!(
                    "  {verb} {}/  ({} imports; e.g. {})",
                    printable(&r.area),
                    r.imports,
                    printable(&r.evidence)
                )
            }));
        }
        if let Some(c) = &h.caveats {
            out.push("caveats:".into());
            for r in &c.stale {
                out.push(format!("  stale: {}", printable(r)));
            }
            if c.pending_embeddings > 0 {
                out.push(format!(
                    "  {} chunks wait for their vectors",
                    c.pending_embeddings
                ));
            }
            for (why, n) in &c.skipped_files {
                out.push(format!("  {n} files skipped ({})", why.replace('_', " ")));
            }
            if c.no_agent_doc {
                out.push("  no AGENTS.md or CLAUDE.md applies".into());
            }
        }
        out
    }
}

fn entry_line(i: usize, e: &HandoffEntry) -> String {
    let tier = serde_json::to_value(e.tier)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut line = format!(
        "  {}. {}  [{tier}] {}",
        i + 1,
        printable(&e.path),
        printable(&e.why)
    );
    if !e.evidence.is_empty() {
        line.push_str(&format!(" at {}", printable(&e.evidence)));
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn console_output_subheadings_and_front_matter() {
        let text = "---\n# not a heading: testing\n---\n# Agents\n\n## Testing\n\n### Before you push\n\n```console\n$ make test\nok: 3 passed\n```\n\n## Style\n\n```sh\nvale .\n```\n";
        assert_eq!(
            super::shell_checks(text),
            vec![(11, "make test".to_string())]
        );
    }

    #[test]
    fn shell_blocks_under_test_headings_are_checks() {
        let text = "# Agents\n\n## Testing\n\n```sh\n$ cargo test\n# a comment\ncargo clippy\n```\n\n```rust\nfn x() {}\n```\n\n## Style\n\n```sh\nrustfmt\n```\n";
        assert_eq!(
            super::shell_checks(text),
            vec![
                (6, "cargo test".to_string()),
                (8, "cargo clippy".to_string())
            ]
        );
    }
}
