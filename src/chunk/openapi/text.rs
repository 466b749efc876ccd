//! The field texts of an operation or a schema: what a reader of the spec would read
//! about it, with `$ref`s resolved (local JSON pointers, chains followed).

use super::tree::Node;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// `$ref` chains longer than this are left unresolved (a cycle, or a mistake).
const MAX_REF_HOPS: usize = 16;
/// A section's body is cut after this many bytes (a body is for ranking: BM25F
/// normalises by length and the embedder reads 256 word pieces; the full text stays in
/// the section's lines).
const MAX_BODY_BYTES: usize = 16 * 1024;
/// How deep schema names are gathered (`items`, `allOf`/`oneOf`/`anyOf`, properties).
const MAX_SCHEMA_DEPTH: usize = 3;

/// Body, summary and symbols of one section.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Described {
    pub body: String,
    pub summary: String,
    pub symbols: Vec<String>,
}

impl Described {
    /// Body (cut at [`MAX_BODY_BYTES`], on a character boundary), summary (cut the same
    /// way) and symbols without empties or repeats.
    pub fn new(body: String, summary: &str, symbols: Vec<String>) -> Described {
        Described {
            body: cut(body),
            summary: clip(summary).to_string(),
            symbols: dedup(symbols),
        }
    }
}

/// `s` up to [`MAX_BODY_BYTES`] (on a character boundary), before it is copied: a long
/// text `$ref`'d from many places is not copied whole for each.
pub(crate) fn clip(s: &str) -> &str {
    let mut at = s.len().min(MAX_BODY_BYTES);
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

fn cut(mut s: String) -> String {
    let keep = clip(&s).len();
    s.truncate(keep);
    s
}

/// A spec's tree with its local `$ref`s resolved once each.
pub(crate) struct Refs<'a> {
    root: &'a Node,
    pointers: RefCell<HashMap<String, Option<&'a Node>>>,
}

impl<'a> Refs<'a> {
    pub fn new(root: &'a Node) -> Refs<'a> {
        Refs {
            root,
            pointers: RefCell::new(HashMap::new()),
        }
    }

    pub fn root(&self) -> &'a Node {
        self.root
    }

    /// The node a `$ref` chain starting at `node` ends on (itself without `$ref`), and
    /// the name of the component it refers to first, as written there
    /// (`#/components/schemas/Pet` → `Pet`).
    pub fn resolve(&self, node: &'a Node) -> (&'a Node, Option<String>) {
        let mut at = node;
        let mut name = None;
        for _ in 0..MAX_REF_HOPS {
            let Some(r) = at.str_of("$ref") else {
                return (at, name);
            };
            if name.is_none() {
                name = r
                    .rsplit('/')
                    .next()
                    .map(|n| n.replace("~1", "/").replace("~0", "~"));
            }
            match self.pointer(r) {
                Some(next) => at = next,
                None => return (at, name),
            }
        }
        (at, name)
    }

    fn pointer(&self, r: &str) -> Option<&'a Node> {
        if let Some(found) = self.pointers.borrow().get(r) {
            return *found;
        }
        let found = self.root.pointer(r);
        self.pointers.borrow_mut().insert(r.to_string(), found);
        found
    }
}

/// How a schema reads in one phrase: its component name, `array of X`, its type, or
/// the names of its `allOf`/`oneOf`/`anyOf` parts; names found are added to `names`.
fn schema_phrase<'a>(
    refs: &Refs<'a>,
    schema: &'a Node,
    names: &mut Vec<String>,
    depth: usize,
) -> String {
    let (schema, name) = refs.resolve(schema);
    if let Some(n) = name {
        names.push(n.clone());
        return n;
    }
    if depth >= MAX_SCHEMA_DEPTH {
        return schema.str_of("type").unwrap_or("").to_string();
    }
    if let Some(items) = schema.get("items") {
        return format!("array of {}", schema_phrase(refs, items, names, depth + 1));
    }
    for (key, joiner) in [("allOf", " and "), ("oneOf", " or "), ("anyOf", " or ")] {
        let parts: Vec<String> = schema
            .get(key)
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .map(|p| schema_phrase(refs, p, names, depth + 1))
            .filter(|p| !p.is_empty())
            .collect();
        if !parts.is_empty() {
            return parts.join(joiner);
        }
    }
    let ty = schema.str_of("type").unwrap_or("");
    match schema.str_of("format") {
        Some(f) if !ty.is_empty() => format!("{ty} ({f})"),
        _ => ty.to_string(),
    }
}

/// The text of operation `op` of path item `item`, labelled `GET /path`.
pub(crate) fn operation_text<'a>(
    refs: &Refs<'a>,
    item: &'a Node,
    op: &'a Node,
    label: &str,
    path: &str,
) -> Described {
    let mut lines = vec![label.to_string()];
    let mut names = Vec::new();
    let summary = op
        .str_of("summary")
        .or_else(|| op.str_of("description"))
        .unwrap_or("");
    lines.extend(op.str_of("summary").map(|t| clip(t).to_string()));
    lines.extend(op.str_of("description").map(|t| clip(t).to_string()));
    // what the path item says of the resource, for all its operations
    lines.extend(
        ["summary", "description"]
            .iter()
            .filter_map(|k| item.str_of(k))
            .map(|t| clip(t).to_string()),
    );
    if op.str_of("deprecated") == Some("true") {
        lines.push("Deprecated.".to_string());
    }
    let mut symbols: Vec<String> = op
        .str_of("operationId")
        .map(str::to_string)
        .into_iter()
        .collect();
    symbols.push(path.to_string());
    symbols.extend(
        path.split('/')
            .map(|s| s.trim_matches(|c| c == '{' || c == '}'))
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    // path-level parameters first, then the operation's own
    let params: Vec<&Node> = [item, op]
        .iter()
        .flat_map(|n| n.get("parameters").map(Node::items).unwrap_or_default())
        .collect();
    if !params.is_empty() {
        lines.push("Parameters:".to_string());
    }
    for p in params {
        let (p, _) = refs.resolve(p);
        let Some(name) = p.str_of("name") else {
            continue;
        };
        symbols.push(name.to_string());
        let mut head = format!("{name} ({}", p.str_of("in").unwrap_or("?"));
        if p.str_of("required") == Some("true") {
            head.push_str(", required");
        }
        head.push(')');
        let ty = p
            .get("schema")
            .map(|s| schema_phrase(refs, s, &mut names, 0))
            .or_else(|| p.str_of("type").map(str::to_string))
            .unwrap_or_default();
        lines.push(join_parts(&[
            &head,
            &ty,
            p.str_of("description").unwrap_or(""),
        ]));
    }
    if let Some(body) = op.get("requestBody") {
        let (body, _) = refs.resolve(body);
        let schemas = content_schemas(refs, body, &mut names);
        lines.push(join_parts(&[
            "Request body:",
            body.str_of("description").unwrap_or(""),
            &schemas,
        ]));
    }
    if let Some(responses) = op.get("responses") {
        lines.push("Responses:".to_string());
        for (code, _, r) in responses.entries() {
            let (r, _) = refs.resolve(r);
            let mut schemas = content_schemas(refs, r, &mut names);
            if let Some(s) = r.get("schema") {
                schemas = schema_phrase(refs, s, &mut names, 0);
            }
            lines.push(join_parts(&[
                &format!("{code}:"),
                r.str_of("description").unwrap_or(""),
                &schemas,
            ]));
        }
    }
    symbols.extend(names);
    Described::new(lines.join("\n"), summary, symbols)
}

/// The schemas of a request body or response's `content` (OpenAPI 3), one phrase each,
/// with their media types.
fn content_schemas<'a>(refs: &Refs<'a>, holder: &'a Node, names: &mut Vec<String>) -> String {
    let Some(content) = holder.get("content") else {
        return String::new();
    };
    let mut seen = HashSet::new();
    let mut out: Vec<String> = Vec::new();
    for (media, _, m) in content.entries() {
        let phrase = m
            .get("schema")
            .map(|s| schema_phrase(refs, s, names, 0))
            .unwrap_or_default();
        let part = join_parts(&[media, &phrase]);
        if seen.insert(part.clone()) {
            out.push(part);
        }
    }
    out.join("; ")
}

/// The text of schema component `name`.
pub(crate) fn schema_text<'a>(refs: &Refs<'a>, name: &str, schema: &'a Node) -> Described {
    let mut names = Vec::new();
    let mut lines = vec![format!("{name} schema")];
    let description = schema.str_of("description").unwrap_or("");
    lines.extend(schema.str_of("description").map(|t| clip(t).to_string()));
    let shape = schema_phrase(refs, schema, &mut names, 0);
    if !shape.is_empty() && shape != name {
        lines.push(format!("Type: {shape}"));
    }
    let required: HashSet<&str> = schema.strings("required").collect();
    let mut symbols = vec![name.to_string()];
    let props = schema
        .get("properties")
        .map(Node::entries)
        .unwrap_or_default();
    if !props.is_empty() {
        lines.push("Properties:".to_string());
    }
    for (prop, _, p) in props {
        symbols.push(prop.clone());
        let req = if required.contains(&prop.as_str()) {
            ", required"
        } else {
            ""
        };
        let ty = schema_phrase(refs, p, &mut names, 1);
        let (p, _) = refs.resolve(p);
        lines.push(join_parts(&[
            &format!("{prop} ({ty}{req})"),
            p.str_of("description").unwrap_or(""),
        ]));
    }
    let values: Vec<&str> = schema.strings("enum").collect();
    if !values.is_empty() {
        lines.push(format!("Values: {}", values.join(", ")));
    }
    symbols.extend(names);
    Described::new(lines.join("\n"), description, symbols)
}

/// The non-empty parts joined by ` — ` (the first by a space when it ends with `:`).
fn join_parts(parts: &[&str]) -> String {
    let kept: Vec<&str> = parts
        .iter()
        .map(|p| clip(p.trim()))
        .filter(|p| !p.is_empty())
        .collect();
    let mut out = String::new();
    for (i, p) in kept.iter().enumerate() {
        if i > 0 {
            out.push_str(if kept[i - 1].ends_with(':') {
                " "
            } else {
                " — "
            });
        }
        out.push_str(p);
    }
    out
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| !s.is_empty() && seen.insert(s.clone()));
    v
}
