//! `chunk_document`: plans the sections of a document (preamble, then one per top-level
//! heading with its heading path), cuts them under the token budget and builds chunks.

use super::fields::{collapse_ws, merge, prose_symbols, BlockFields};
use super::ids::{chunk_id, file_stem, path_slug, SlugAllocator};
use super::lines::{line_number, LineTable};
use super::links::{text_links, LinkCollector, RawLink};
use super::markdown::{parse_blocks, Block, BlockKind};
use super::source::Prepared;
use super::split::{pack, prelude_of, split_long_units, units, Layout};
use super::{Chunk, ChunkKind, ChunkerConfig, SourceDoc, SourceKind};
use std::collections::HashMap;

/// Cuts one document into chunks, in source order. Never panics.
pub fn chunk_document(doc: &SourceDoc, cfg: &ChunkerConfig) -> Vec<Chunk> {
    let prep = Prepared::new(doc);
    match doc.kind {
        SourceKind::Text => text_chunks(doc, &prep, cfg),
        SourceKind::Markdown | SourceKind::Mdx => markdown_chunks(doc, &prep, cfg, None).0,
        SourceKind::Nav => Vec::new(),
        SourceKind::OpenApi => spec_chunks(doc, &prep).0,
        SourceKind::Code => super::modules::module_chunks(doc, &prep).0,
        SourceKind::Manifest => super::packages::package_chunks(doc, &prep),
        SourceKind::Project => super::project::project_chunks(doc, &prep).0,
    }
}

/// The chunks and title of an API spec; none, with a warning naming the file and why,
/// when it is not a readable OpenAPI/Swagger document.
fn spec_chunks(doc: &SourceDoc, prep: &Prepared<'_>) -> (Vec<Chunk>, Option<String>) {
    match super::openapi::spec_chunks(doc, prep) {
        Ok((chunks, title)) => (chunks, title),
        Err(why) => {
            tracing::warn!("`{}` is not indexed as an API spec: {why}", doc.rel_path);
            (Vec::new(), None)
        }
    }
}

/// What one parse of a document gives: its chunks, its links as written and whether it
/// is written for agents.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunked {
    pub chunks: Vec<Chunk>,
    pub links: Vec<RawLink>,
    /// Front matter `audience: agent`, or a file named `AGENTS.md` / `CLAUDE.md`.
    pub for_agents: bool,
    /// The names other pages may call it by: its title (front matter or first H1; not
    /// the file-stem fallback) and its front matter `aliases`.
    pub names: Vec<String>,
    /// Routes a site serves it at besides its path, relative to the root without a
    /// leading `/`: Docusaurus front matter `slug` and `id`.
    pub routes: Vec<String>,
    /// Anchors site generators give its headings ([`super::ids::slug_styles`]:
    /// VitePress `#server-proxy` for `## server.proxy`, whose GitHub slug is
    /// `serverproxy`; GitHub's `#setup-2` for a third heading `Setup` at any level) and
    /// its `<summary>` lines, each with the section id it names: `(anchor, section id)`.
    pub anchors: Vec<(String, String)>,
    /// Its MyST targets (`(label)=`, a front-matter `label`, a directive's `:label:` or
    /// `:name:`, `+++ {"label": …}`): labels the whole site may link to as `#label`
    /// (each is in `anchors` with its section, unless it is that section's own slug).
    pub labels: Vec<String>,
    /// The names a source file declares and exports (its module entry's symbols): inline
    /// code in a document that names one mentions the file. Empty for documents.
    pub symbols: Vec<String>,
}

/// [`chunk_document`] and [`super::doc_links`] from one parse, and the document's audience.
pub fn chunk_document_with_links(doc: &SourceDoc, cfg: &ChunkerConfig) -> Chunked {
    let prep = Prepared::new(doc);
    if doc.kind == SourceKind::OpenApi {
        let (chunks, title) = spec_chunks(doc, &prep);
        return Chunked {
            chunks,
            links: Vec::new(),
            for_agents: false,
            names: title.into_iter().collect(),
            routes: Vec::new(),
            anchors: Vec::new(),
            labels: Vec::new(),
            symbols: Vec::new(),
        };
    }
    if matches!(
        doc.kind,
        SourceKind::Code | SourceKind::Manifest | SourceKind::Project
    ) {
        let (chunks, links) = match doc.kind {
            SourceKind::Code => super::modules::module_chunks(doc, &prep),
            SourceKind::Project => super::project::project_chunks(doc, &prep),
            _ => (super::packages::package_chunks(doc, &prep), Vec::new()),
        };
        let names = chunks
            .iter()
            .filter(|c| c.kind == ChunkKind::Package)
            .map(|c| c.title.clone())
            .collect();
        let symbols = chunks
            .iter()
            .filter(|c| c.kind == ChunkKind::Module)
            .flat_map(|c| c.symbols.iter().cloned())
            .collect();
        return Chunked {
            chunks,
            links,
            for_agents: false,
            names,
            routes: Vec::new(),
            anchors: Vec::new(),
            labels: Vec::new(),
            symbols,
        };
    }
    let for_agents = is_agent_doc(&doc.rel_path, prep.fm.audience.as_deref());
    let (chunks, links, anchors) = match doc.kind {
        SourceKind::Text => (text_chunks(doc, &prep, cfg), text_links(&prep), Vec::new()),
        SourceKind::Nav => (Vec::new(), super::nav::nav_links(prep.src), Vec::new()),
        SourceKind::OpenApi | SourceKind::Code | SourceKind::Manifest | SourceKind::Project => {
            (Vec::new(), Vec::new(), Vec::new())
        }
        SourceKind::Markdown | SourceKind::Mdx => {
            let mut links = LinkCollector::new(&prep.parse, &prep.table);
            links.template_links(&prep.includes);
            let (chunks, anchors) = markdown_chunks(doc, &prep, cfg, Some(&mut links));
            (chunks, links.finish(), anchors)
        }
    };
    // the title when it was written (front matter, or an H1 the chunks carry), not
    // the file-stem fallback
    let written = |t: &String| {
        *t != file_stem(&doc.rel_path) || chunks.iter().any(|c| c.heading_path.first() == Some(t))
    };
    let mut names: Vec<String> = prep
        .fm
        .title
        .clone()
        .or_else(|| chunks.first().map(|c| c.title.clone()).filter(written))
        .into_iter()
        .collect();
    names.extend(
        prep.fm
            .names
            .iter()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let routes = routes(&doc.rel_path, &prep.fm);
    Chunked {
        chunks,
        links,
        for_agents,
        names,
        routes,
        anchors,
        labels: prep.targets.iter().map(|(_, l)| l.clone()).collect(),
        symbols: Vec::new(),
    }
}

/// The anchors site generators give a document's headings and `<summary>` lines, each
/// with the section id it names (see [`Chunked::anchors`]), where the anchor is not that
/// section's own slug. Each generator's rule ([`super::ids::slug_styles`]) numbers
/// repeats page-wide, whatever their level (GitHub: `setup`, `setup-1`, `setup-2` for
/// `## Setup`, `## Setup`, ``### `Setup` ``), first anchor kept; a heading with an explicit
/// anchor (`{#id}`, kramdown `{: #id}`) has only that one, its section's own. A
/// `<details>` block's `<summary>Title</summary>` line is an anchor too (GitBook's
/// expandable blocks). A heading merged into its first sub-section names that section.
fn heading_anchors(
    blocks: &[Block],
    prep: &Prepared<'_>,
    chunks: &[Chunk],
) -> Vec<(String, String)> {
    let section_at = |line: usize| -> Option<&str> {
        let l = u32::try_from(line + 1).ok()?;
        let at = chunks
            .partition_point(|c| c.start_line <= l)
            .checked_sub(1)?;
        let c = &chunks[at];
        (l <= c.end_line).then(|| super::ids::section_id(&c.id))
    };
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut push = |anchor: String, section: &str| {
        let own = section.rsplit(['#', '/']).next().unwrap_or(section);
        if !anchor.is_empty() && anchor != own && seen.insert(anchor.clone()) {
            out.push((anchor, section.to_string()));
        }
    };
    let mut numbering: [SlugAllocator; 4] = Default::default();
    for b in blocks {
        let Some(h) = &b.heading else { continue };
        let explicit = h.anchor.is_some()
            || prep
                .heading_attribute_id(b.first_line, b.last_line)
                .is_some();
        let Some(section) = section_at(b.first_line).filter(|_| !explicit) else {
            continue;
        };
        for (k, base) in super::ids::slug_styles(&h.text).into_iter().enumerate() {
            if !base.is_empty() {
                push(numbering[k].unique(base), section);
            }
        }
    }
    // a MyST target names the section of the first text after it (a heading, a paragraph)
    for (line, label) in &prep.targets {
        let next = (line + 1..prep.table.len())
            .find(|&l| !super::lines::is_blank(prep.table.content(&prep.parse, l)));
        if let Some(section) = next.and_then(section_at) {
            push(label.clone(), section);
        }
    }
    for b in blocks.iter().filter(|b| b.kind != BlockKind::FencedCode) {
        for line in b.first_line..=b.last_line {
            let Some(title) = summary_title(prep.table.content(prep.src, line)) else {
                continue;
            };
            if let Some(section) = section_at(line) {
                for base in super::ids::slug_styles(&title) {
                    push(base, section);
                }
            }
        }
    }
    out
}

/// The title of a `<summary>Title</summary>` line, as shown.
fn summary_title(line: &str) -> Option<String> {
    let t = line.trim();
    let open = t.get(..9).filter(|o| o.eq_ignore_ascii_case("<summary>"))?;
    let inner = &t[open.len()..];
    let close = inner.to_ascii_lowercase().find("</summary>")?;
    let title = super::display::display_line(&inner[..close]);
    let title = title.trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// The routes of a page besides its path: its `slug` (absolute from the root, or
/// relative to its folder), its `id` (in place of its file name) and its permalinks
/// (Jekyll, Hugo: absolute from the site root).
fn routes(rel_path: &str, fm: &super::frontmatter::FrontMatter) -> Vec<String> {
    let folder = rel_path.rsplit_once('/').map_or("", |(f, _)| f);
    let under = |name: &str| match folder {
        "" => name.to_string(),
        f => format!("{f}/{name}"),
    };
    let mut out = Vec::new();
    if let Some(slug) = &fm.slug {
        let route = match slug.strip_prefix('/') {
            Some(abs) => abs.trim_end_matches('/').to_string(),
            None => under(slug.trim_end_matches('/')),
        };
        out.push(route);
    }
    if let Some(id) = fm.doc_id.as_deref().filter(|i| !i.contains('/')) {
        out.push(under(id));
    }
    // `permalink: /docs/history/`; one with placeholders (`/:categories/:title/`) is a
    // pattern of the site generator, and one not from the root (`pretty`) a style: no
    // route
    for link in fm
        .permalinks
        .iter()
        .filter(|l| l.starts_with('/') && !l.contains(':'))
    {
        out.push(link.trim_matches('/').to_string());
    }
    out.retain(|r| !r.is_empty());
    out
}

/// File names of agent documentation, exactly (a public page `agents.md` is not one).
pub const AGENT_DOC_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Whether a document is agent documentation: front matter `audience: agent`, or a file
/// named one of [`AGENT_DOC_NAMES`].
pub fn is_agent_doc(rel_path: &str, audience: Option<&str>) -> bool {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    audience == Some("agent") || AGENT_DOC_NAMES.contains(&name)
}

/// A section before budget cutting: 0-based inclusive line range.
struct Section {
    heading_path: Vec<String>,
    /// Explicit anchors (`{#id}`) of the headings of `heading_path`.
    anchors: Vec<Option<String>>,
    /// Something besides headings lies in the section's lines.
    has_prose: bool,
    /// It goes on the last section of the same heading path before it, which a box
    /// with a heading inside interrupted: more pieces of that section, not a new one.
    continues: bool,
    first: usize,
    last: usize,
}

/// What every chunk of one document shares.
struct DocInfo<'a> {
    doc: &'a SourceDoc,
    title: String,
    /// `title` is the file stem (no title hint, front matter title or H1).
    title_from_stem: bool,
    aliases: Vec<String>,
}

fn markdown_chunks(
    doc: &SourceDoc,
    prep: &Prepared<'_>,
    cfg: &ChunkerConfig,
    links: Option<&mut LinkCollector<'_>>,
) -> (Vec<Chunk>, Vec<(String, String)>) {
    let blocks = parse_blocks(prep.src, &prep.parse, &prep.table, &prep.blank, links);
    let first_h1 = blocks
        .iter()
        .filter_map(|b| b.heading.as_ref())
        .find(|h| h.level == 1 && !h.text.is_empty() && !h.stand_in)
        .map(|h| h.text.clone());
    let (title, title_from_stem) = pick_title(doc, prep.fm.title.clone().or(first_h1));
    let info = DocInfo {
        doc,
        title,
        title_from_stem,
        aliases: prep.fm.aliases.clone(),
    };
    let layout = Layout::new(
        &blocks,
        prep.table.len(),
        &prep.blank,
        &prep.parse,
        &prep.table,
        cfg.max_tokens,
    );
    let mut slugs = SlugAllocator::default();
    // per heading path (with anchors): the last section's slug and pieces so far
    let mut pieces: HashMap<PathKey, (String, usize)> = HashMap::new();
    let mut out = Vec::new();
    for section in plan_sections(&blocks, prep) {
        let key = (section.heading_path.clone(), section.anchors.clone());
        let (slug, before) = match pieces.get(&key).filter(|_| section.continues) {
            Some((slug, n)) => (slug.clone(), *n),
            None => (
                slugs.unique(path_slug(&section.heading_path, &section.anchors)),
                0,
            ),
        };
        let section_units = units(section.first, section.last, &prep.blank, &layout);
        let parts = pack(
            &section_units,
            &prep.table,
            cfg.max_tokens,
            &layout,
            &prep.blank,
        );
        let parts = join_empty_parts(&blocks, &layout, prep, parts);
        pieces.insert(key, (slug.clone(), before + parts.len()));
        for (k, ((a, b), fields)) in parts.into_iter().enumerate() {
            let id = chunk_id(&doc.rel_path, &slug, before + k + 1);
            let mut chunk = make_chunk(&info, prep, id, &section.heading_path, (a, b), fields);
            chunk.prelude = prelude_of(&layout, a).map(|(h, e)| prep.table.join(prep.src, h, e));
            out.push(chunk);
        }
    }
    // nothing but front matter, or front matter and only comments or a script (no
    // heading, no text)
    let empty =
        |c: &Chunk| c.heading_path.is_empty() && c.body.trim().is_empty() && c.symbols.is_empty();
    if out.iter().all(empty) {
        if let Some(c) = front_matter_chunk(&info, prep) {
            return (vec![c], Vec::new());
        }
    }
    let anchors = heading_anchors(&blocks, prep, &out);
    (out, anchors)
}

/// The one chunk of a document that has nothing but front matter with a title or a
/// description (a Hugo `_index.md`, a Docusaurus category page): its front matter lines,
/// with the description as body and summary, so the page can be found by what its front
/// matter says. `None` when it has neither.
fn front_matter_chunk(info: &DocInfo<'_>, prep: &Prepared<'_>) -> Option<Chunk> {
    let fm = &prep.fm;
    if fm.lines == 0 || (fm.title.is_none() && fm.description.is_none()) {
        return None;
    }
    let fields = BlockFields {
        body: fm.description.clone().unwrap_or_default(),
        summary: fm.description.clone(),
        symbols: Vec::new(),
    };
    let id = chunk_id(&info.doc.rel_path, super::ids::PREAMBLE_SLUG, 1);
    Some(make_chunk(info, prep, id, &[], (0, fm.lines - 1), fields))
}

/// `parts` of one section with their fields, where a part with nothing to index (only
/// comments, `<script>`/`<style>` elements, link definitions or untitled markers: no
/// body, no symbols) joins the part before it, or, when first, the part after it: no
/// chunk is found, embedded or shown for text nobody reads.
fn join_empty_parts(
    blocks: &[Block],
    layout: &Layout,
    prep: &Prepared<'_>,
    parts: Vec<(usize, usize)>,
) -> Vec<((usize, usize), BlockFields)> {
    let empty = |f: &BlockFields| f.body.trim().is_empty() && f.symbols.is_empty();
    let mut out: Vec<((usize, usize), BlockFields)> = Vec::with_capacity(parts.len());
    // the start of empty parts at the section's head, and their end
    let mut pending: Option<(usize, usize)> = None;
    for (a, b) in parts {
        let a = pending.take().map_or(a, |(pa, _)| pa);
        let fields = part_fields(blocks, layout, prep, (a, b));
        if !empty(&fields) {
            out.push(((a, b), fields));
        } else if let Some(((pa, _), _)) = out.pop() {
            out.push(((pa, b), part_fields(blocks, layout, prep, (pa, b))));
        } else {
            pending = Some((a, b));
        }
    }
    // the whole section is empty: one part (its lines stay covered)
    if let Some((a, b)) = pending {
        out.push(((a, b), part_fields(blocks, layout, prep, (a, b))));
    }
    out
}

/// The fields of lines `a..=b`: those of the blocks starting there, except that rows
/// of a cut table give fields of their own (a piece of a long table is found by its
/// rows and the header it repeats, not by the whole table), and the items of a cut list
/// are parsed on their own (a piece of a long list is found by its items).
fn part_fields(
    blocks: &[Block],
    layout: &Layout,
    prep: &Prepared<'_>,
    (a, b): (usize, usize),
) -> BlockFields {
    let breaks = |i: usize| layout.item_break.get(i).copied().unwrap_or(false);
    // a cut list or paragraph: its pieces are parsed on their own
    let cut_list = |x: &Block| match x.kind {
        BlockKind::List => x.items.iter().any(|&i| breaks(i)),
        BlockKind::Paragraph => (x.first_line + 1..=x.last_line).any(breaks),
        _ => false,
    };
    if blocks
        .iter()
        .any(|x| cut_list(x) && x.first_line <= b && x.last_line >= a)
    {
        return reparsed_fields(prep, a, b);
    }
    let cut_table = |x: &Block| {
        matches!(x.kind, BlockKind::Table { .. })
            && (x.first_line..=x.last_line)
                .any(|i| layout.row_break.get(i).copied().flatten().is_some())
    };
    let whole = blocks
        .iter()
        .filter(|x| x.first_line >= a && x.first_line <= b && !cut_table(x))
        .map(|x| &x.fields);
    let mut fields = merge(whole);
    let rows: Vec<String> = blocks
        .iter()
        .filter(|x| cut_table(x) && x.first_line <= b && x.last_line >= a)
        .flat_map(|x| {
            let header = prelude_of(layout, a).filter(|_| a > x.first_line);
            let lines = header.map_or(0..=0, |(h, e)| h..=e);
            let own = a.max(x.first_line)..=b.min(x.last_line);
            header
                .into_iter()
                .flat_map(move |_| lines.clone())
                .chain(own)
        })
        .map(|i| table_row_text(prep.table.content(prep.src, i)))
        .filter(|t| !t.is_empty())
        .collect();
    if !rows.is_empty() {
        let text = rows.join("\n");
        fields.symbols.extend(prose_symbols(&text));
        fields.body = if fields.body.is_empty() {
            text
        } else {
            format!("{}\n{text}", fields.body)
        };
        if fields.summary.is_none() {
            fields.summary = rows.first().cloned();
        }
    }
    fields
}

/// The fields of lines `a..=b` parsed as a document of their own (a piece of a cut
/// list: its items, and whatever blocks share the piece).
fn reparsed_fields(prep: &Prepared<'_>, a: usize, b: usize) -> BlockFields {
    let (Some(first), Some(last)) = (prep.table.get(a), prep.table.get(b)) else {
        return BlockFields::default();
    };
    let range = first.start..last.end;
    let (Some(src), Some(parse)) = (prep.src.get(range.clone()), prep.parse.get(range)) else {
        return BlockFields::default();
    };
    let table = LineTable::new(parse);
    let blank: Vec<bool> = (0..table.len())
        .map(|i| prep.blank.get(a + i).copied().unwrap_or(true))
        .collect();
    let blocks = parse_blocks(src, parse, &table, &blank, None);
    merge(blocks.iter().map(|x| &x.fields))
}

/// The words of a table row as shown (cells joined by spaces; the `|---|` delimiter
/// row gives nothing).
fn table_row_text(line: &str) -> String {
    let shown = super::display::display_line(line);
    if shown
        .chars()
        .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
    {
        return String::new();
    }
    collapse_ws(&shown.replace('|', " "))
}

/// Preamble (if it has a non-blank line) then one section per top-level heading. A
/// section that is only its heading line and is followed by its first child section is
/// merged into that child (the child's piece starts at the parent's heading): a heading
/// with no prose of its own is never a result on its own. A heading inside a box
/// ([`super::containers`]) heads the text up to the box's end; text after the box, up to
/// the next heading, goes on the section the box is in (a continuation, cut into more
/// pieces of that section).
fn plan_sections(blocks: &[Block], prep: &Prepared<'_>) -> Vec<Section> {
    let n = prep.table.len();
    let heads: Vec<Head<'_>> = blocks
        .iter()
        .filter_map(|b| {
            b.heading.as_ref().map(|h| {
                // `## Title` then `{: #id}` (kramdown): the id is the heading's anchor
                let anchor = h.anchor.as_ref();
                let anchor =
                    anchor.or_else(|| prep.heading_attribute_id(b.first_line, b.last_line));
                (b.first_line, h.level, h.text.as_str(), anchor)
            })
        })
        .collect();
    let mut out = Vec::new();
    let preamble_end = heads.first().map_or(n, |h| h.0);
    if let Some((first, last)) = non_blank_span(&prep.blank, prep.fm.lines, preamble_end) {
        out.push(Section {
            heading_path: Vec::new(),
            anchors: Vec::new(),
            has_prose: has_text(blocks, first, last),
            continues: false,
            first,
            last,
        });
    }
    let starts = section_starts(blocks, prep, &heads);
    for (i, (line, stack, continues)) in starts.iter().enumerate() {
        let end = starts.get(i + 1).map_or(n, |s| s.0).max(line + 1);
        let last = non_blank_span(&prep.blank, *line, end).map_or(*line, |(_, l)| l.max(*line));
        let own = if *continues { *line } else { line + 1 };
        out.push(Section {
            heading_path: stack.iter().map(|&(_, t, _)| t.to_string()).collect(),
            anchors: stack.iter().map(|&(_, _, a)| a.cloned()).collect(),
            has_prose: has_text(blocks, own, last),
            continues: *continues,
            first: *line,
            last,
        });
    }
    merge_heading_only(&mut out);
    out
}

/// A section's heading path with its headings' explicit anchors.
type PathKey = (Vec<String>, Vec<Option<String>>);

/// A heading: its 0-based line, level, text and explicit anchor.
type Head<'a> = (usize, u8, &'a str, Option<&'a String>);

/// The open headings (level, text, anchor), outermost first.
type Stack<'a> = Vec<(u8, &'a str, Option<&'a String>)>;

/// Where each section after the preamble starts (0-based line), its heading stack, and
/// whether it continues a section a box interrupted: every heading starts one, and so
/// does the first block with text after the closer of a box with a heading inside (before
/// the next heading), under the heading stack from before the box (the outermost box's,
/// when several close together).
fn section_starts<'a>(
    blocks: &[Block],
    prep: &Prepared<'_>,
    heads: &[Head<'a>],
) -> Vec<(usize, Stack<'a>, bool)> {
    if heads.is_empty() {
        return Vec::new();
    }
    let boxes = super::containers::spans(prep.src, &prep.table, prep.fm.lines);
    // events in line order: 0 opens a box, 1 is a heading, 2 closes a box
    let mut events: Vec<(usize, u8, usize)> = Vec::new();
    for (k, &(open, close)) in boxes.iter().enumerate() {
        events.push((open, 0, k));
        events.push((close, 2, k));
    }
    events.extend(heads.iter().enumerate().map(|(k, h)| (h.0, 1, k)));
    events.sort_unstable();
    let mut out = Vec::new();
    let mut stack: Stack<'a> = Vec::new();
    // per open box: the heading stack when it opened, and whether a heading is inside
    let mut open: Vec<(Stack<'a>, bool)> = Vec::new();
    for (line, what, k) in events {
        match what {
            0 => open.push((stack.clone(), false)),
            1 => {
                let (_, level, text, anchor) = heads[k];
                while stack.last().is_some_and(|&(l, _, _)| l >= level) {
                    stack.pop();
                }
                stack.push((level, text, anchor));
                open.iter_mut().for_each(|o| o.1 = true);
                out.push((line, stack.clone(), false));
            }
            _ => {
                let Some((before, true)) = open.pop() else {
                    continue;
                };
                stack = before;
                // heads and blocks are in line order
                let next = heads.partition_point(|h| h.0 <= line);
                let end = heads.get(next).map_or(prep.table.len(), |h| h.0);
                // the text after the box: its first block with text (a closer alone, as
                // `:::` or `</Tabs>` are, stays with the box)
                let from = blocks.partition_point(|b| b.first_line < line);
                let start = blocks[from..]
                    .iter()
                    .take_while(|b| b.first_line < end)
                    .find(|b| block_has_text(b))
                    .map(|b| b.first_line);
                // an opener right before the text stays glued to it
                let glued = |s: usize| {
                    (0..s)
                        .rev()
                        .find(|&i| !prep.blank[i])
                        .is_some_and(|i| super::markers::is_opener(prep.table.content(prep.src, i)))
                };
                let Some(start) = start.filter(|&s| !glued(s)) else {
                    continue;
                };
                match out.last_mut() {
                    // boxes closing together (a tab, then its tabs): the outer one's stack
                    Some(last) if last.0 == start && last.2 => last.1 = stack.clone(),
                    Some(last) if last.0 >= start => {}
                    _ => out.push((start, stack.clone(), true)),
                }
            }
        }
    }
    out
}

/// True when a block other than a heading starts in lines `first..=last` and has text
/// to index (not only a comment, a `<script>`/`<style>` element or link definitions).
fn has_text(blocks: &[Block], first: usize, last: usize) -> bool {
    blocks
        .iter()
        .any(|b| (first..=last).contains(&b.first_line) && block_has_text(b))
}

/// A block other than a heading with text to index.
fn block_has_text(b: &Block) -> bool {
    b.heading.is_none() && (!b.fields.body.trim().is_empty() || !b.fields.symbols.is_empty())
}

/// Merges each heading-only section into its first child section (which follows it),
/// and a preamble with nothing parsed in it (only a comment before the first heading)
/// into the section after it.
fn merge_heading_only(sections: &mut Vec<Section>) {
    let mut i = 0;
    while i + 1 < sections.len() {
        let (s, next) = (&sections[i], &sections[i + 1]);
        let heading_only = !s.has_prose;
        let child = next.heading_path.len() > s.heading_path.len()
            && next.heading_path.starts_with(&s.heading_path);
        if heading_only && child {
            sections[i + 1].first = sections[i].first;
            sections.remove(i);
        } else {
            i += 1;
        }
    }
}

/// First and last non-blank line in `from..to`.
fn non_blank_span(blank: &[bool], from: usize, to: usize) -> Option<(usize, usize)> {
    let to = to.min(blank.len());
    let first = (from..to).find(|&i| !blank[i])?;
    let last = (first..to).rev().find(|&i| !blank[i])?;
    Some((first, last))
}

/// Title hint, else `fallback` (front matter, then first H1), else the file stem; and
/// whether it is the file stem for want of a written title.
fn pick_title(doc: &SourceDoc, fallback: Option<String>) -> (String, bool) {
    let written = doc
        .title_hint
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .or(fallback);
    match written {
        Some(t) => (t, false),
        None => (file_stem(&doc.rel_path), true),
    }
}

/// A text document: one preamble, cut at any blank line under the budget.
fn text_chunks(doc: &SourceDoc, prep: &Prepared<'_>, cfg: &ChunkerConfig) -> Vec<Chunk> {
    let Some((first, last)) = non_blank_span(&prep.blank, 0, prep.table.len()) else {
        return Vec::new();
    };
    let (title, title_from_stem) = pick_title(doc, None);
    let info = DocInfo {
        doc,
        title,
        title_from_stem,
        aliases: Vec::new(),
    };
    let layout = Layout::new(
        &[],
        prep.table.len(),
        &prep.blank,
        &prep.parse,
        &prep.table,
        cfg.max_tokens,
    );
    let all_units = split_long_units(
        units(first, last, &prep.blank, &layout),
        &prep.table,
        &prep.blank,
        cfg.max_tokens,
    );
    let slug = path_slug(&[], &[]);
    let mut out = Vec::new();
    for (k, &(a, b)) in pack(
        &all_units,
        &prep.table,
        cfg.max_tokens,
        &layout,
        &prep.blank,
    )
    .iter()
    .enumerate()
    {
        let body = prep.table.join(prep.src, a, b);
        let summary = all_units
            .iter()
            .find(|u| u.0 >= a)
            .map(|&(ua, ub)| collapse_ws(&prep.table.join(prep.src, ua, ub)));
        let symbols = prose_symbols(&body);
        let fields = BlockFields {
            body,
            summary,
            symbols,
        };
        let id = chunk_id(&doc.rel_path, &slug, k + 1);
        out.push(make_chunk(&info, prep, id, &[], (a, b), fields));
    }
    out
}

fn make_chunk(
    info: &DocInfo<'_>,
    prep: &Prepared<'_>,
    id: String,
    heading_path: &[String],
    (first, last): (usize, usize),
    fields: BlockFields,
) -> Chunk {
    let kind = if heading_path.is_empty() {
        ChunkKind::Preamble
    } else {
        ChunkKind::Section
    };
    Chunk {
        id,
        kind,
        rel_path: info.doc.rel_path.clone(),
        title: info.title.clone(),
        title_from_stem: info.title_from_stem,
        heading_path: heading_path.to_vec(),
        start_line: line_number(first),
        end_line: line_number(last),
        text: prep.table.join(prep.src, first, last),
        body: fields.body,
        summary: fields.summary.unwrap_or_default(),
        symbols: fields.symbols,
        aliases: info.aliases.clone(),
        code: String::new(),
        prelude: None,
    }
}
