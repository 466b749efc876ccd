//! Source files as chunks: one module entry (the file's header — its doc comment and
//! imports, up to its first item) and one passage per declared item (function, type,
//! method, …), read with tree-sitter ([`crate::code`]).
//!
//! An item's passage runs from its doc comment to its last line, or to the line before
//! the next item when one starts inside it (a class's header up to its first method),
//! so the passages of a file never share a line. Its fields: heading path
//! `[path, name]`, body the doc comment and signature, symbols its name, `code` what its
//! body says (identifiers, comments, string literals; its own BM25F field, weighted
//! low). The module entry's symbols are the names the file exports.

use super::ids::SlugAllocator;
use super::lines::line_number;
use super::links::{LinkForm, RawLink};
use super::source::Prepared;
use super::{Chunk, ChunkKind, SourceDoc};
use crate::code::{read_module, ImportKind, Item, Language, Module};

/// Most item passages one file gives; further items are folded into its module entry
/// (a generated file can declare tens of thousands).
pub const MAX_ITEMS: usize = 2_000;

/// Slug of a module entry's chunk (`src/lib.rs#_module`).
pub(crate) const MODULE_SLUG: &str = "_module";

/// The chunks of a source file: its module entry first, then its items in source
/// order; and its imports as links ([`LinkForm::Import`], [`LinkForm::ChildModule`]). A
/// file in no language docfuse reads, or whose grammar cannot be loaded, is one module
/// entry over all its lines.
pub(super) fn module_chunks(doc: &SourceDoc, prep: &Prepared<'_>) -> (Vec<Chunk>, Vec<RawLink>) {
    let lines = prep.table.len();
    if lines == 0 || prep.blank.iter().all(|b| *b) {
        return (Vec::new(), Vec::new());
    }
    // the parse copy: the same bytes with a lone `\r` as `\n`, so tree-sitter's rows
    // are the line table's lines
    let module = match Language::of_path(&doc.rel_path).map(|l| read_module(l, &prep.parse)) {
        Some(Ok(m)) => m,
        Some(Err(why)) => {
            tracing::warn!("`{}`: {why}; indexed as one passage", doc.rel_path);
            return (vec![whole_file(doc, prep)], Vec::new());
        }
        None => return (vec![whole_file(doc, prep)], Vec::new()),
    };
    let links = module
        .imports
        .iter()
        .take(super::MAX_LINKS)
        .map(|i| RawLink {
            line: i.line,
            form: match i.kind {
                ImportKind::Path => LinkForm::Import,
                ImportKind::ChildModule => LinkForm::ChildModule,
            },
            target: i.target.clone(),
        })
        .collect();
    let file = Ctx { doc, prep };
    let mut items: Vec<&Item> = module.items.iter().collect();
    items.sort_by_key(|i| (i.doc_line, i.start_line));
    let (kept, folded) = items.split_at(items.len().min(MAX_ITEMS));
    let mut slugs = SlugAllocator::default();
    slugs.unique(MODULE_SLUG.to_string());
    let mut out: Vec<Chunk> = Vec::with_capacity(kept.len() + 1);
    let mut next_free = 0usize; // first 0-based line no passage holds yet
    for (k, item) in kept.iter().enumerate() {
        let first = (item.doc_line.max(1) - 1) as usize;
        if first < next_free || first >= lines {
            // starts on a line an earlier item holds (`const a = 1, b = 2;`)
            if let Some(prev) = out.last_mut() {
                fold_into(prev, item);
            }
            continue;
        }
        let mut last = (item.end_line.max(item.doc_line) - 1) as usize;
        if let Some(next) = kept.get(k + 1) {
            let next_first = (next.doc_line.max(1) - 1) as usize;
            if next_first > first && next_first <= last {
                last = next_first - 1;
            }
        }
        let last = file.trim_end(first, last.min(lines - 1));
        out.push(file.item_chunk(item, &mut slugs, (first, last)));
        next_free = last + 1;
    }
    let header_end = kept
        .first()
        .map_or(lines, |i| (i.doc_line.max(1) - 1) as usize);
    // a header of blank lines only: the entry stands on the first item's first line
    let first_item = kept.first().map(|i| (i.doc_line.max(1) - 1) as usize);
    let header_end = match (0..header_end).all(|l| prep.blank.get(l).copied().unwrap_or(true)) {
        true => first_item.map_or(header_end, |f| f.min(lines - 1) + 1),
        false => header_end,
    };
    let mut entry = file.module_chunk(&module, header_end);
    for item in folded {
        fold_into(&mut entry, item);
    }
    let gaps = file.gap_text(&out, header_end);
    if !gaps.is_empty() {
        entry.code.push('\n');
        entry.code.push_str(&gaps);
    }
    out.insert(0, entry);
    (out, links)
}

/// Most bytes of the lines outside every passage a module entry's `code` field takes.
const MAX_GAP_BYTES: usize = 64 * 1024;

struct Ctx<'a, 'p> {
    doc: &'a SourceDoc,
    prep: &'a Prepared<'p>,
}

impl Ctx<'_, '_> {
    /// `last` moved back over blank lines, not before `first`.
    fn trim_end(&self, first: usize, mut last: usize) -> usize {
        while last > first && self.prep.blank.get(last).copied().unwrap_or(false) {
            last -= 1;
        }
        last
    }

    fn base(&self, kind: ChunkKind, id: String, (first, last): (usize, usize)) -> Chunk {
        Chunk {
            id,
            kind,
            rel_path: self.doc.rel_path.clone(),
            title: file_name(&self.doc.rel_path).to_string(),
            title_from_stem: true,
            heading_path: vec![self.doc.rel_path.clone()],
            start_line: line_number(first),
            end_line: line_number(last),
            text: self.prep.table.join(self.prep.src, first, last),
            body: String::new(),
            summary: String::new(),
            symbols: Vec::new(),
            aliases: Vec::new(),
            code: String::new(),
            prelude: None,
        }
    }

    /// The text of the lines no passage holds — after the header and outside every item
    /// passage in `items` (an `impl` header and its attributes, a re-export, a test
    /// block's call): the module entry's `code` field takes it (at most
    /// [`MAX_GAP_BYTES`]), so every word of a file is found somewhere.
    fn gap_text(&self, items: &[Chunk], header_end: usize) -> String {
        let lines = self.prep.table.len();
        let mut covered = vec![false; lines];
        covered.iter_mut().take(header_end).for_each(|c| *c = true);
        for c in items {
            let (first, last) = (
                (c.start_line as usize).saturating_sub(1),
                (c.end_line as usize).saturating_sub(1),
            );
            covered
                .iter_mut()
                .take(last + 1)
                .skip(first)
                .for_each(|c| *c = true);
        }
        let mut out = String::new();
        for (l, _) in covered.iter().enumerate().filter(|(_, c)| !**c) {
            let text = self.prep.table.content(self.prep.src, l).trim();
            if text.is_empty() {
                continue;
            }
            if out.len() + text.len() + 1 > MAX_GAP_BYTES {
                break;
            }
            out.push_str(text);
            out.push('\n');
        }
        out.trim_end().to_string()
    }

    /// The module entry: lines from the first up to the line before the first item
    /// (the first line alone when an item starts there).
    fn module_chunk(&self, module: &Module, header_end: usize) -> Chunk {
        let last = match header_end {
            0 => 0,
            n => self.trim_end(0, n - 1),
        };
        // from its first non-blank line
        let first = (0..=last)
            .find(|&l| !self.prep.blank.get(l).copied().unwrap_or(false))
            .unwrap_or(last);
        let id = super::ids::chunk_id(&self.doc.rel_path, MODULE_SLUG, 1);
        let mut c = self.base(ChunkKind::Module, id, (first, last));
        c.body = module.doc.trim().to_string();
        c.summary = first_paragraph(&module.doc);
        let mut symbols = Names::default();
        let mut others = Vec::new();
        for item in &module.items {
            if item.exported {
                symbols.push(&item.name);
            } else {
                others.push(item.name.as_str());
            }
        }
        c.symbols = symbols.0;
        // the header's own words (comments between the doc and the imports) count too
        let imports = module.imports.iter().map(|i| i.target.as_str());
        let header = std::iter::once(c.text.as_str()).filter(|_| header_end > 0);
        c.code = others
            .into_iter()
            .chain(imports)
            .chain(header)
            .collect::<Vec<_>>()
            .join("\n");
        c
    }

    fn item_chunk(&self, item: &Item, slugs: &mut SlugAllocator, lines: (usize, usize)) -> Chunk {
        let slug = slugs.unique(item_slug(&item.name));
        let id = super::ids::chunk_id(&self.doc.rel_path, &slug, 1);
        let mut c = self.base(ChunkKind::Item, id, lines);
        c.heading_path.push(item.name.clone());
        c.body = item_body(item);
        c.summary = first_paragraph(&item.doc);
        let mut names = Names::default();
        names.push(&item.name);
        c.symbols = names.0;
        c.code = item.body.clone();
        c
    }
}

/// A file read as one passage (no grammar for it): a module entry over all its lines.
fn whole_file(doc: &SourceDoc, prep: &Prepared<'_>) -> Chunk {
    let ctx = Ctx { doc, prep };
    let last = ctx.trim_end(0, prep.table.len().saturating_sub(1));
    let id = super::ids::chunk_id(&doc.rel_path, MODULE_SLUG, 1);
    let mut c = ctx.base(ChunkKind::Module, id, (0, last));
    c.code = c.text.clone();
    c
}

/// Adds an item that has no passage of its own to `chunk`'s symbols and code.
fn fold_into(chunk: &mut Chunk, item: &Item) {
    if !chunk.symbols.contains(&item.name) {
        chunk.symbols.push(item.name.clone());
    }
    for part in [
        item.doc.as_str(),
        item.signature.as_str(),
        item.body.as_str(),
    ] {
        if !part.is_empty() {
            if !chunk.code.is_empty() {
                chunk.code.push('\n');
            }
            chunk.code.push_str(part);
        }
    }
}

/// An item's body field: its doc comment, a blank line, its signature.
fn item_body(item: &Item) -> String {
    match item.doc.trim() {
        "" => item.signature.clone(),
        doc => format!("{doc}\n\n{}", item.signature),
    }
}

/// The slug of an item's passage: its name with `::` as `.`, characters other than
/// letters, digits, `_`, `-` and `.` dropped (`Parser::parse` → `Parser.parse`).
fn item_slug(name: &str) -> String {
    let s: String = name
        .replace("::", ".")
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    if s.is_empty() || s == MODULE_SLUG {
        "item".to_string()
    } else {
        s
    }
}

/// Names without repeats, in order; a qualified name (`Parser::parse`, `Parser.parse`)
/// brings its last segment too.
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    fn push(&mut self, name: &str) {
        let last = name
            .rsplit("::")
            .next()
            .and_then(|n| n.rsplit('.').next())
            .unwrap_or(name);
        for n in [name, last] {
            if !n.is_empty() && !self.0.iter().any(|x| x == n) {
                self.0.push(n.to_string());
            }
        }
    }
}

fn first_paragraph(text: &str) -> String {
    let t = text.trim();
    let end = t.find("\n\n").unwrap_or(t.len());
    super::fields::collapse_ws(&t[..end])
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
