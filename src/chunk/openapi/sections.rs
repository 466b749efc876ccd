//! The sections of a spec and their lines: the `info` preamble, one per described tag,
//! one per operation (path items and operations given as local `$ref`s read where they
//! point; one given as a `$ref` to another file indexed by its path), one per schema.
//! A section runs from its key to the line before the next key (or to the line of the
//! closing token when something precedes that token on its line, as in compact JSON).

use super::super::lines::LineTable;
use super::text::{operation_text, schema_text, Described, Refs};
use super::tree::{Node, Pos};

/// The sections' texts may add up to this many times the file's size (+ 1 MiB).
const MAX_TEXT_FACTOR: usize = 8;

/// The HTTP methods of a path item, in the order OpenAPI lists them.
pub(super) const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// One section before it becomes a chunk; lines 0-based, inclusive.
pub(super) struct Section {
    pub heading_path: Vec<String>,
    pub title: String,
    pub first: usize,
    pub last: usize,
    pub fields: Described,
}

/// A spec's text and tree, and the API title every heading path starts with.
pub(super) struct Spec<'a> {
    pub refs: Refs<'a>,
    pub src: &'a str,
    pub table: &'a LineTable,
    pub title: String,
    /// `title` is the file stem: the spec has no `info.title`.
    pub title_from_stem: bool,
    /// Bytes of section text (bodies and summaries) built so far.
    pub spent: std::cell::Cell<usize>,
}

impl<'a> Spec<'a> {
    fn root(&self) -> &'a Node {
        self.refs.root()
    }

    /// Whether the sections' texts went past [`MAX_TEXT_FACTOR`] × the file (+ 1 MiB): a
    /// long text `$ref`'d from very many operations. Building stops there.
    pub fn over_budget(&self) -> bool {
        self.spent.get() > self.src.len().saturating_mul(MAX_TEXT_FACTOR) + (1 << 20)
    }

    fn push(&self, out: &mut Vec<Section>, s: Section) {
        let cost = s.fields.body.len() + s.fields.summary.len();
        self.spent.set(self.spent.get().saturating_add(cost));
        out.push(s);
    }

    /// Every section, in the order of their first lines.
    pub fn sections(&self) -> Vec<Section> {
        let mut out = Vec::new();
        self.preamble(&mut out);
        self.tags(&mut out);
        for key in ["paths", "webhooks"] {
            self.operations(key, &mut out);
        }
        self.schemas(&mut out);
        out.sort_by_key(|s| s.first);
        out
    }

    fn preamble(&self, out: &mut Vec<Section>) {
        let root = self.root();
        let Some((at, info)) = root.entry("info") else {
            return;
        };
        let mut body = vec![self.title.clone()];
        body.extend(info.str_of("version").map(|v| format!("Version {v}")));
        body.extend(info.str_of("description").map(str::to_string));
        let servers = root.get("servers").map(Node::items).unwrap_or_default();
        body.extend(
            servers
                .iter()
                .filter_map(|s| s.str_of("url"))
                .map(|u| format!("Server: {u}")),
        );
        body.extend(root.str_of("host").map(|h| format!("Host: {h}")));
        let summary = info.str_of("description").unwrap_or(&self.title);
        out.push(Section {
            heading_path: Vec::new(),
            title: self.title.clone(),
            first: at.line,
            last: self.last_line(at.line, next_key(root, "info")),
            fields: Described::new(body.join("\n"), summary, Vec::new()),
        });
    }

    fn tags(&self, out: &mut Vec<Section>) {
        let Some(tags) = self.root().get("tags") else {
            return;
        };
        let items = tags.items();
        for (i, tag) in items.iter().enumerate() {
            let (Some(name), Some(description)) = (tag.str_of("name"), tag.str_of("description"))
            else {
                continue;
            };
            let bound = items.get(i + 1).map_or(tags.end, begin);
            let first = begin(tag).line;
            out.push(Section {
                heading_path: vec![self.title.clone(), name.to_string()],
                title: name.to_string(),
                first,
                last: self.last_line(first, bound),
                fields: Described::new(
                    format!("{name}\n{description}"),
                    description,
                    vec![name.to_string()],
                ),
            });
        }
    }

    /// Every operation of `paths` (or `webhooks`), in source order.
    fn operations(&self, key: &str, out: &mut Vec<Section>) {
        let Some(paths) = self.root().get(key) else {
            return;
        };
        let entries = paths.entries();
        for (i, (path, at, item)) in entries.iter().enumerate() {
            let (item, _) = self.refs.resolve(item);
            if self.over_budget() {
                return;
            }
            if let Some(elsewhere) = item.str_of("$ref") {
                let bound = entries.get(i + 1).map_or(paths.end, |(_, p, _)| *p);
                self.push(out, self.external_item(path, elsewhere, at.line, bound));
                continue;
            }
            let ops = item.entries();
            for (j, (method, at, op)) in ops.iter().enumerate() {
                let method = method.to_ascii_lowercase();
                if !METHODS.contains(&method.as_str()) {
                    continue;
                }
                let bound = ops.get(j + 1).map_or(item.end, |(_, p, _)| *p);
                let label = match key {
                    "webhooks" => format!("{} {path} (webhook)", method.to_ascii_uppercase()),
                    _ => format!("{} {path}", method.to_ascii_uppercase()),
                };
                self.push(out, self.operation(item, op, label, path, at.line, bound));
            }
        }
    }

    fn operation(
        &self,
        item: &'a Node,
        op: &'a Node,
        label: String,
        path: &str,
        first: usize,
        bound: Pos,
    ) -> Section {
        let (op, _) = self.refs.resolve(op);
        let fields = operation_text(&self.refs, item, op, &label, path);
        let mut heading_path = vec![self.title.clone()];
        heading_path.extend(
            op.get("tags")
                .and_then(|t| t.items().first())
                .and_then(Node::as_str)
                .map(str::to_string),
        );
        heading_path.push(label.clone());
        Section {
            heading_path,
            title: operation_title(op).unwrap_or(label),
            first,
            last: self.last_line(first, bound),
            fields,
        }
    }

    /// A path item defined in another file: found by its path only.
    fn external_item(&self, path: &str, elsewhere: &str, first: usize, bound: Pos) -> Section {
        let body = format!("{path}\nDefined in `{elsewhere}` (not read: another file).");
        Section {
            heading_path: vec![self.title.clone(), path.to_string()],
            title: path.to_string(),
            first,
            last: self.last_line(first, bound),
            fields: Described::new(body, "", vec![path.to_string()]),
        }
    }

    /// Every schema component (`components.schemas`, Swagger 2.0 `definitions`).
    fn schemas(&self, out: &mut Vec<Section>) {
        let root = self.root();
        let holder = root
            .get("components")
            .and_then(|c| c.get("schemas"))
            .or_else(|| root.get("definitions"));
        let Some(schemas) = holder else {
            return;
        };
        let entries = schemas.entries();
        for (i, (name, at, schema)) in entries.iter().enumerate() {
            if self.over_budget() {
                return;
            }
            let bound = entries.get(i + 1).map_or(schemas.end, |(_, p, _)| *p);
            self.push(
                out,
                Section {
                    heading_path: vec![self.title.clone(), "Schemas".to_string(), name.clone()],
                    title: name.clone(),
                    first: at.line,
                    last: self.last_line(at.line, bound),
                    fields: schema_text(&self.refs, name, schema),
                },
            );
        }
    }

    /// The last line of an entry starting on line `first` whose next sibling (or
    /// closing token) is at `bound`: the line before `bound`'s when nothing but blanks
    /// (or a block sequence's `-`) precede it on its line, else `bound`'s own line (compact JSON: `…}},"post":{…`);
    /// trailing blank lines left out; never before `first`.
    fn last_line(&self, first: usize, bound: Pos) -> usize {
        let max = self.table.len().saturating_sub(1);
        let shares_line = bound.line <= max
            && self
                .table
                .content(self.src, bound.line)
                .chars()
                .take(bound.col)
                .any(|c| !c.is_whitespace() && c != '-');
        let mut last = match shares_line {
            true => bound.line,
            false => bound.line.saturating_sub(1),
        }
        .min(max);
        while last > first && self.table.content(self.src, last).trim().is_empty() {
            last -= 1;
        }
        last.max(first)
    }
}

/// Where a node's text begins: the earlier of its start and its first key (yaml-rust2
/// marks a block mapping's start at its first `:`, a flow mapping's at its `{`).
fn begin(node: &Node) -> Pos {
    node.entries()
        .first()
        .map_or(node.start, |(_, at, _)| node.start.min(*at))
}

/// Where the top-level entry after `key` starts, or the root's end.
fn next_key(node: &Node, key: &str) -> Pos {
    let entries = node.entries();
    let at = entries.iter().position(|(k, _, _)| k == key);
    at.and_then(|i| entries.get(i + 1))
        .map_or(node.end, |(_, p, _)| *p)
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
