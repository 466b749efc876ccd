//! OpenAPI 3.x and Swagger 2.0 specs (`openapi.json`, `openapi.yaml`, `swagger.json`, …)
//! as documentation: one section per operation (heading path: API title › tag ›
//! `METHOD /path`; title: its summary; symbols: `operationId`, path, path segments,
//! parameter and schema names; body: summary, description, parameters, request body and
//! responses with schema names resolved through `$ref`), one per tag with a description,
//! one per schema component, and the `info` block as the preamble. Lines are the
//! operation's own in the file: from its method key to the line before the next key.
//!
//! Read with `yaml-rust2` (JSON is YAML 1.2): a spec that does not parse, is not
//! OpenAPI/Swagger, or is minified onto a few huge lines gives an error naming why.

mod sections;
mod text;
mod tree;

use super::ids::{chunk_id, file_stem, path_slug, SlugAllocator};
pub use super::kinds::{is_spec_file_name, SPEC_FILES, SPEC_SUFFIXES};
use super::lines::LineTable;
use super::source::Prepared;
use super::{Chunk, ChunkKind, SourceDoc};
use sections::{Section, Spec};
use text::Refs;
use tree::Node;

/// The sections' lines may repeat at most this many bytes of the file beyond its own
/// length: more means several operations share lines (a minified or compact spec), whose
/// every section would carry the same long lines.
const MAX_REPEATED_BYTES: usize = 64 * 1024;

/// The chunks of a spec, in source order, and the API's title when it has one
/// (`info.title`).
///
/// # Errors
/// Why the file is not read as a spec (see [`check`]).
pub(crate) fn spec_chunks(
    doc: &SourceDoc,
    prep: &Prepared<'_>,
) -> Result<(Vec<Chunk>, Option<String>), String> {
    let root = load(prep.src)?;
    let spec = spec_of(&root, prep.src, &prep.table, &doc.rel_path);
    let sections = checked_sections(&spec)?;
    let mut slugs = SlugAllocator::default();
    let chunks = sections
        .into_iter()
        .map(|s| chunk(&spec, &doc.rel_path, s, &mut slugs))
        .collect();
    Ok((chunks, title_of(&root).map(str::to_string)))
}

/// Whether `text` reads as a spec, as [`spec_chunks`] will read it; `Ok` holds notes on
/// what will be missing (path items and operations that are `$ref`s to other files).
///
/// # Errors
/// Why it is not read as a spec: a YAML/JSON syntax error (with its line), a document
/// that is not OpenAPI 3.x or Swagger 2.0 (no top-level `openapi`/`swagger`), too large
/// or deep a tree, or sections that would repeat the same lines (a minified spec).
pub fn check(text: &str) -> Result<Vec<String>, String> {
    let src = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = load(src)?;
    let table = LineTable::new(src);
    checked_sections(&spec_of(&root, src, &table, ""))?;
    let external = ["paths", "webhooks"]
        .iter()
        .filter_map(|k| root.get(k))
        .flat_map(|paths| paths.entries().iter().map(|(_, _, item)| item))
        .flat_map(|item| {
            let own = item.str_of("$ref").into_iter();
            let ops = item
                .entries()
                .iter()
                .filter_map(|(_, _, op)| op.str_of("$ref"));
            own.chain(ops)
                .filter(|r| !r.starts_with('#'))
                .collect::<Vec<_>>()
        })
        .count();
    Ok(match external {
        0 => Vec::new(),
        n => vec![format!(
            "{n} path item(s) or operation(s) are `$ref`s to other files, which docfuse does not follow: they are found by their path and method only; bundle the spec into one file (e.g. `npx @redocly/cli bundle`) to index them whole"
        )],
    })
}

/// The spec's tree: refused when unparsable or not OpenAPI/Swagger.
fn load(src: &str) -> Result<Node, String> {
    let root = tree::parse(&tree::join_surrogate_escapes(src))?;
    if ["openapi", "swagger"]
        .iter()
        .all(|k| root.str_of(k).is_none())
    {
        return Err(
            "no top-level `openapi` or `swagger` version field (not an OpenAPI document)".into(),
        );
    }
    Ok(root)
}

fn title_of(root: &Node) -> Option<&str> {
    root.get("info").and_then(|i| i.str_of("title"))
}

fn spec_of<'a>(root: &'a Node, src: &'a str, table: &'a LineTable, rel_path: &str) -> Spec<'a> {
    Spec {
        refs: Refs::new(root),
        src,
        table,
        title: title_of(root).map_or_else(|| file_stem(rel_path), str::to_string),
        title_from_stem: title_of(root).is_none(),
        spent: std::cell::Cell::new(0),
    }
}

/// The sections, refused when their lines would repeat more than [`MAX_REPEATED_BYTES`]
/// of the file.
fn checked_sections(spec: &Spec<'_>) -> Result<Vec<Section>, String> {
    let sections = spec.sections();
    if spec.over_budget() {
        return Err(format!(
            "its sections' texts would add up to more than {} bytes (a long text `$ref`'d from very many places); not indexed",
            spec.spent.get()
        ));
    }
    let total: usize = sections
        .iter()
        .map(|s| spec.table.joined_len(s.first, s.last))
        .sum();
    if total > spec.src.len() + MAX_REPEATED_BYTES {
        return Err(format!(
            "its {} sections share lines (a minified or compact spec: {total} bytes of section text from a {}-byte file); pretty-print it, e.g. `jq . spec.json`, to index it by operation",
            sections.len(),
            spec.src.len()
        ));
    }
    Ok(sections)
}

fn chunk(spec: &Spec<'_>, rel_path: &str, s: Section, slugs: &mut SlugAllocator) -> Chunk {
    // the API title is left out of ids: it is the same for every section
    let slug = match s.heading_path.split_first() {
        Some((_, rest)) if !rest.is_empty() => path_slug(rest, &[]),
        _ => path_slug(&s.heading_path, &[]),
    };
    let kind = if s.heading_path.is_empty() {
        ChunkKind::Preamble
    } else {
        ChunkKind::Section
    };
    let line = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
    Chunk {
        id: chunk_id(rel_path, &slugs.unique(slug), 1),
        kind,
        rel_path: rel_path.to_string(),
        title_from_stem: spec.title_from_stem,
        title: s.title,
        heading_path: s.heading_path,
        start_line: line(s.first),
        end_line: line(s.last),
        text: spec.table.join(spec.src, s.first, s.last),
        body: s.fields.body,
        summary: s.fields.summary,
        symbols: s.fields.symbols,
        aliases: Vec::new(),
        code: String::new(),
        prelude: None,
    }
}

#[cfg(test)]
mod tests;
