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

mod text;
mod tree;

use super::ids::{chunk_id, file_stem, path_slug, SlugAllocator};
use super::source::Prepared;
use super::{Chunk, ChunkKind, SourceDoc};
use text::{operation_text, resolve, schema_text, Described};
use tree::Node;

/// File names read as API specs (case-insensitive), besides names ending in
/// [`SPEC_SUFFIXES`].
pub const SPEC_FILES: [&str; 6] = [
    "openapi.json",
    "openapi.yaml",
    "openapi.yml",
    "swagger.json",
    "swagger.yaml",
    "swagger.yml",
];

/// Name endings of API specs (`billing.openapi.yaml`), case-insensitive.
pub const SPEC_SUFFIXES: [&str; 6] = [
    ".openapi.json",
    ".openapi.yaml",
    ".openapi.yml",
    ".swagger.json",
    ".swagger.yaml",
    ".swagger.yml",
];

/// A line longer than this (bytes) marks a minified spec: its operations would all share
/// that line, so each chunk would repeat the whole file. Refused with a hint instead.
const MAX_LINE_BYTES: usize = 20_000;

/// The HTTP methods of a path item, in the order OpenAPI lists them.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Whether a file name is an API spec docfuse reads ([`SPEC_FILES`], or a name ending
/// in one of [`SPEC_SUFFIXES`]), case-insensitive.
pub fn is_spec_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SPEC_FILES.contains(&lower.as_str())
        || SPEC_SUFFIXES
            .iter()
            .any(|s| lower.ends_with(s) && lower.len() > s.len())
}

/// The chunks of a spec, in source order, and the API's title.
///
/// # Errors
/// Why the file is not read as a spec: a YAML/JSON syntax error (with its line), a
/// document that is not OpenAPI 3.x or Swagger 2.0, or a minified spec.
pub(crate) fn spec_chunks(
    doc: &SourceDoc,
    prep: &Prepared<'_>,
) -> Result<(Vec<Chunk>, String), String> {
    let root = load(prep.src)?;
    let title = root
        .get("info")
        .and_then(|i| i.str_of("title"))
        .map(str::to_string)
        .unwrap_or_else(|| file_stem(&doc.rel_path));
    let spec = Spec {
        root: &root,
        prep,
        doc,
        title: title.clone(),
    };
    let mut sections = Vec::new();
    spec.preamble(&mut sections);
    spec.tags(&mut sections);
    for key in ["paths", "webhooks"] {
        spec.operations(key, &mut sections);
    }
    spec.schemas(&mut sections);
    sections.sort_by_key(|s| s.first);
    let mut slugs = SlugAllocator::default();
    let chunks = sections
        .into_iter()
        .map(|s| spec.chunk(s, &mut slugs))
        .collect();
    Ok((chunks, title))
}

/// Whether `text` reads as a spec, as [`spec_chunks`] will read it; `Ok` holds notes on
/// what will be missing (operations that are `$ref`s to other files, not followed).
///
/// # Errors
/// Why it is not read as a spec (see [`spec_chunks`]).
pub fn check(text: &str) -> Result<Vec<String>, String> {
    let root = load(text.strip_prefix('\u{feff}').unwrap_or(text))?;
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
            "{n} path item(s) or operation(s) are `$ref`s to other files, which docfuse does not follow: they are indexed by method and path only; bundle the spec into one file (e.g. `npx @redocly/cli bundle`) to index them whole"
        )],
    })
}

/// The spec's tree: refused when minified, unparsable, or not OpenAPI/Swagger.
fn load(src: &str) -> Result<Node, String> {
    let lines = src
        .split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'));
    if let Some((i, _)) = lines.enumerate().find(|(_, l)| l.len() > MAX_LINE_BYTES) {
        return Err(format!(
            "line {} is longer than {MAX_LINE_BYTES} bytes (a minified spec); pretty-print it, e.g. `jq . spec.json`, to index it by operation",
            i + 1
        ));
    }
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

/// An operation's title: its summary, else its `operationId`, else the first line of its
/// description (cut at a word within 80 characters).
fn operation_title(op: &Node) -> Option<String> {
    if let Some(t) = op.str_of("summary").or_else(|| op.str_of("operationId")) {
        return Some(t.to_string());
    }
    let first = op.str_of("description")?.lines().next()?.trim();
    if first.chars().count() <= 80 {
        return Some(first.to_string());
    }
    let cut: String = first.chars().take(80).collect();
    let words = cut.rsplit_once(' ').map_or(cut.as_str(), |(w, _)| w);
    Some(format!("{words}…"))
}

/// One section before it becomes a chunk; lines 0-based, inclusive.
struct Section {
    heading_path: Vec<String>,
    title: String,
    first: usize,
    last: usize,
    fields: Described,
}

struct Spec<'a> {
    root: &'a Node,
    prep: &'a Prepared<'a>,
    doc: &'a SourceDoc,
    title: String,
}

impl Spec<'_> {
    fn preamble(&self, out: &mut Vec<Section>) {
        let Some((line, info)) = self.root.entry("info") else {
            return;
        };
        let mut body = vec![self.title.clone()];
        body.extend(info.str_of("version").map(|v| format!("Version {v}")));
        body.extend(info.str_of("description").map(str::to_string));
        let servers = self
            .root
            .get("servers")
            .map(Node::items)
            .unwrap_or_default();
        body.extend(
            servers
                .iter()
                .filter_map(|s| s.str_of("url"))
                .map(|u| format!("Server: {u}")),
        );
        body.extend(self.root.str_of("host").map(|h| format!("Host: {h}")));
        let summary = info
            .str_of("description")
            .unwrap_or(&self.title)
            .to_string();
        out.push(Section {
            heading_path: Vec::new(),
            title: self.title.clone(),
            first: line,
            last: self.last_line(line, self.bound_after(self.root, "info")),
            fields: Described {
                body: body.join("\n"),
                summary,
                symbols: Vec::new(),
            },
        });
    }

    fn tags(&self, out: &mut Vec<Section>) {
        let Some(tags) = self.root.get("tags") else {
            return;
        };
        let items = tags.items();
        for (i, tag) in items.iter().enumerate() {
            let (Some(name), Some(description)) = (tag.str_of("name"), tag.str_of("description"))
            else {
                continue;
            };
            let bound = items.get(i + 1).map_or(tags.end_mark, |n| n.line);
            out.push(Section {
                heading_path: vec![self.title.clone(), name.to_string()],
                title: name.to_string(),
                first: tag.line,
                last: self.last_line(tag.line, bound),
                fields: Described {
                    body: format!("{name}\n{description}"),
                    summary: description.to_string(),
                    symbols: vec![name.to_string()],
                },
            });
        }
    }

    /// Every operation of `paths` (or `webhooks`), in source order. A path item or an
    /// operation given as a local `$ref` is read where it points (a path item's
    /// operations at their own lines there).
    fn operations(&self, key: &str, out: &mut Vec<Section>) {
        let Some(paths) = self.root.get(key) else {
            return;
        };
        for (path, _, item) in paths.entries() {
            let (item, _) = resolve(self.root, item);
            let ops = item.entries();
            for (j, (method, line, op)) in ops.iter().enumerate() {
                let method = method.to_ascii_lowercase();
                if !METHODS.contains(&method.as_str()) {
                    continue;
                }
                let (op, _) = resolve(self.root, op);
                let bound = ops.get(j + 1).map_or(item.end_mark, |(_, l, _)| *l);
                let label = match key {
                    "webhooks" => format!("{} {path} (webhook)", method.to_ascii_uppercase()),
                    _ => format!("{} {path}", method.to_ascii_uppercase()),
                };
                let fields = operation_text(self.root, item, op, &label, path);
                let mut heading_path = vec![self.title.clone()];
                heading_path.extend(
                    op.get("tags")
                        .and_then(|t| t.items().first())
                        .and_then(Node::as_str)
                        .map(str::to_string),
                );
                heading_path.push(label.clone());
                out.push(Section {
                    heading_path,
                    title: operation_title(op).unwrap_or(label),
                    first: *line,
                    last: self.last_line(*line, bound),
                    fields,
                });
            }
        }
    }

    /// Every schema component (`components.schemas`, Swagger 2.0 `definitions`).
    fn schemas(&self, out: &mut Vec<Section>) {
        let holder = self
            .root
            .get("components")
            .and_then(|c| c.get("schemas"))
            .or_else(|| self.root.get("definitions"));
        let Some(schemas) = holder else {
            return;
        };
        let entries = schemas.entries();
        for (i, (name, line, schema)) in entries.iter().enumerate() {
            let bound = entries.get(i + 1).map_or(schemas.end_mark, |(_, l, _)| *l);
            out.push(Section {
                heading_path: vec![self.title.clone(), "Schemas".to_string(), name.clone()],
                title: name.clone(),
                first: *line,
                last: self.last_line(*line, bound),
                fields: schema_text(self.root, name, schema),
            });
        }
    }

    /// The line that bounds the top-level entry `key`: the next top-level key's line,
    /// or the root's end.
    fn bound_after(&self, node: &Node, key: &str) -> usize {
        let entries = node.entries();
        let at = entries.iter().position(|(k, _, _)| k == key);
        at.and_then(|i| entries.get(i + 1))
            .map_or(node.end_mark, |(_, l, _)| *l)
    }

    /// The last line of an entry starting at `first` whose next sibling (or closing
    /// token) is on line `bound`: the line before it, less trailing blank and comment
    /// lines, never before `first`.
    fn last_line(&self, first: usize, bound: usize) -> usize {
        let max = self.prep.table.len().saturating_sub(1);
        let mut last = bound.saturating_sub(1).min(max);
        while last > first {
            let line = self.prep.table.content(self.prep.src, last).trim();
            if !line.is_empty() && !line.starts_with('#') {
                break;
            }
            last -= 1;
        }
        last.max(first)
    }

    fn chunk(&self, s: Section, slugs: &mut SlugAllocator) -> Chunk {
        // the API title is left out of ids: it is the same for every section
        let slug = match s.heading_path.split_first() {
            Some((_, rest)) if !rest.is_empty() => path_slug(rest, &[]),
            _ => path_slug(&s.heading_path, &[]),
        };
        let slug = slugs.unique(slug);
        let kind = match s.heading_path.is_empty() {
            true => ChunkKind::Preamble,
            false => ChunkKind::Section,
        };
        let line = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
        Chunk {
            id: chunk_id(&self.doc.rel_path, &slug, 1),
            kind,
            rel_path: self.doc.rel_path.clone(),
            title: s.title,
            heading_path: s.heading_path,
            start_line: line(s.first),
            end_line: line(s.last),
            text: self.prep.table.join(self.prep.src, s.first, s.last),
            body: s.fields.body,
            summary: s.fields.summary,
            symbols: s.fields.symbols,
            aliases: Vec::new(),
            prelude: None,
        }
    }
}

#[cfg(test)]
mod tests;
