//! A YAML or JSON document as a tree whose every node knows where it is, from
//! `yaml-rust2`'s marked events (JSON is read as YAML 1.2 flow style). The events are
//! pulled one at a time (yaml-rust2's own loader recurses once per nesting level, so a
//! deeply nested file would overflow the stack before any cap applied).

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// At most this many nodes (aliases counted at each use): a document of more is refused
/// (an alias bomb would otherwise expand without end).
const MAX_NODES: usize = 2_000_000;
/// At most this many bytes of scalar text (aliases counted at each use).
const MAX_TEXT_BYTES: usize = 64 << 20;
/// At most this deep a nesting (deeper is refused: the tree is walked recursively).
const MAX_DEPTH: usize = 256;

/// A place in the text: 0-based line and 0-based column in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    fn of(mark: Marker) -> Pos {
        Pos {
            line: mark.line().saturating_sub(1),
            col: mark.col(),
        }
    }
}

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Where the node starts.
    pub start: Pos,
    /// Where the token that ends it is: a collection's closing `}`/`]` in flow style, the
    /// next token (or the end of the text) in block style; a scalar's own start.
    pub end: Pos,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar as written (quotes removed; `null`, numbers and booleans as text).
    Scalar(String),
    Seq(Vec<Node>),
    /// Entries in source order: key, where the key starts, the value.
    Map(Vec<(String, Pos, Node)>),
}

impl Node {
    /// The value under `key`, for a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, n)| n)
    }

    /// The value under `key` and where the key starts.
    pub fn entry(&self, key: &str) -> Option<(Pos, &Node)> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, at, n)| (*at, n)),
            _ => None,
        }
    }

    /// The scalar text of `key`, trimmed, when it is a non-empty scalar.
    pub fn str_of(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// This node's scalar text, trimmed, when it is a non-empty scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(s) if !s.trim().is_empty() => Some(s.trim()),
            _ => None,
        }
    }

    /// A mapping's entries (empty for anything else).
    pub fn entries(&self) -> &[(String, Pos, Node)] {
        match &self.value {
            Value::Map(e) => e,
            _ => &[],
        }
    }

    /// The non-empty scalar items of the sequence under `key` (`required`, `enum`).
    pub fn strings(&self, key: &str) -> impl Iterator<Item = &str> {
        self.get(key)
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(Node::as_str)
    }

    /// A sequence's items (empty for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(s) => s,
            _ => &[],
        }
    }

    /// The node at a local JSON pointer (`#/components/schemas/Pet`, RFC 6901 escapes).
    pub fn pointer(&self, reference: &str) -> Option<&Node> {
        let path = reference.strip_prefix('#')?;
        let mut node = self;
        for raw in path.split('/').skip(1) {
            let part = raw.replace("~1", "/").replace("~0", "~");
            node = match &node.value {
                Value::Map(_) => node.get(&part)?,
                Value::Seq(items) => items.get(part.parse::<usize>().ok()?)?,
                Value::Scalar(_) => return None,
            };
        }
        Some(node)
    }
}

/// Parses `text` (YAML, or JSON) into its first document.
///
/// # Errors
/// A message naming the line of a syntax error, or saying the text is empty or too
/// large or deep.
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder::default();
    while builder.root.is_none() {
        let (ev, mark) = parser
            .next_token()
            .map_err(|e| format!("line {}: {}", e.marker().line(), e.info()))?;
        if ev == Event::StreamEnd {
            break;
        }
        builder.handle(ev, Pos::of(mark))?;
    }
    builder
        .root
        .ok_or_else(|| "the file holds no document".to_string())
}

/// `text` with each `\uD83D\uDC4D`-style escaped surrogate pair (how JSON writes a
/// character outside the Basic Multilingual Plane, e.g. an emoji) replaced by the
/// character itself, and a lone escaped surrogate by `\uFFFD` (yaml-rust2 refuses both;
/// JSON parsers accept them); lines are unchanged. An escaped backslash (`\\u…`) is
/// left alone.
pub(crate) fn join_surrogate_escapes(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match (hex4(b, i + 1), hex4(b, i + 7)) {
            (Some(hi @ 0xD800..=0xDBFF), Some(lo @ 0xDC00..=0xDFFF))
                if b.get(i + 6) == Some(&b'\\') =>
            {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                out.push_str(&text[copied..i]);
                out.push(char::from_u32(c).unwrap_or('\u{fffd}'));
                i += 12;
                copied = i;
            }
            (Some(0xD800..=0xDFFF), _) => {
                out.push_str(&text[copied..i]);
                out.push_str("\\uFFFD");
                i += 6;
                copied = i;
            }
            // any other escape: skip the escaped character (so `\\\\` is one escape)
            _ => i += 2,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    std::borrow::Cow::Owned(out)
}

/// The value of `\uXXXX` whose `u` is at `at`.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    if b.get(at) != Some(&b'u') {
        return None;
    }
    let digits = std::str::from_utf8(b.get(at + 1..at + 5)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

enum Frame {
    Seq(Node),
    /// The mapping so far and the key waiting for its value.
    Map(Node, Option<(String, Pos)>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: std::collections::HashMap<usize, Node>,
    /// Anchor ids of the open collections, innermost last.
    open_anchors: Vec<usize>,
    root: Option<Node>,
    nodes: usize,
    bytes: usize,
}

impl Builder {
    fn handle(&mut self, ev: Event, at: Pos) -> Result<(), String> {
        match ev {
            Event::Scalar(v, style, anchor, _) => {
                let text = match (style, v.as_str()) {
                    (TScalarStyle::Plain, "~") => String::new(),
                    _ => v,
                };
                let len = text.len();
                let node = leaf(at, Value::Scalar(text));
                self.remember(anchor, &node)?;
                self.insert(node, (1, len))
            }
            Event::Alias(id) => {
                let known = self.anchors.get(&id);
                let size = known.map(size).unwrap_or_default();
                self.check_budget(size)?;
                if self.stack.len() + known.map_or(0, depth) > MAX_DEPTH {
                    return Err(format!(
                        "nested deeper than {MAX_DEPTH} levels (aliases expanded)"
                    ));
                }
                let node = known
                    .cloned()
                    .ok_or_else(|| format!("line {}: unknown alias", at.line + 1))?;
                self.insert(node, size)
            }
            Event::SequenceStart(anchor, _) => {
                self.open(Frame::Seq(leaf(at, Value::Seq(vec![]))), anchor)
            }
            Event::MappingStart(anchor, _) => {
                self.open(Frame::Map(leaf(at, Value::Map(vec![])), None), anchor)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(at),
            _ => Ok(()),
        }
    }

    /// Refuses what would take the tree past [`MAX_NODES`] or [`MAX_TEXT_BYTES`].
    fn check_budget(&self, (nodes, bytes): (usize, usize)) -> Result<(), String> {
        if self.nodes.saturating_add(nodes) > MAX_NODES {
            return Err(format!("more than {MAX_NODES} nodes (aliases expanded)"));
        }
        if self.bytes.saturating_add(bytes) > MAX_TEXT_BYTES {
            return Err(format!(
                "more than {} MiB of text (aliases expanded)",
                MAX_TEXT_BYTES >> 20
            ));
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame, anchor: usize) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.stack.push(frame);
        self.open_anchors.push(anchor);
        Ok(())
    }

    fn close(&mut self, at: Pos) -> Result<(), String> {
        let anchor = self.open_anchors.pop().unwrap_or(0);
        let mut node = match self.stack.pop() {
            Some(Frame::Seq(n) | Frame::Map(n, _)) => n,
            None => return Ok(()),
        };
        node.end = if at.line < node.start.line {
            node.start
        } else {
            at
        };
        self.remember(anchor, &node)?;
        self.insert(node, (1, 0))
    }

    /// Keeps a copy of an anchored node for its aliases, counted in the budget.
    fn remember(&mut self, anchor: usize, node: &Node) -> Result<(), String> {
        if anchor > 0 {
            let (nodes, bytes) = size(node);
            self.check_budget((nodes, bytes))?;
            self.nodes += nodes;
            self.bytes += bytes;
            self.anchors.insert(anchor, node.clone());
        }
        Ok(())
    }

    /// Adds `node` (counting `(nodes, bytes)`) to the open collection, or makes it the
    /// root.
    fn insert(&mut self, node: Node, (nodes, bytes): (usize, usize)) -> Result<(), String> {
        self.check_budget((nodes, bytes))?;
        self.nodes += nodes;
        self.bytes += bytes;
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq(seq)) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
            }
            Some(Frame::Map(map, pending)) => match pending.take() {
                None => *pending = Some((key_text(&node), node.start)),
                Some((key, key_at)) => {
                    if let Value::Map(entries) = &mut map.value {
                        entries.push((key, key_at, node));
                    }
                }
            },
        }
        Ok(())
    }
}

fn leaf(at: Pos, value: Value) -> Node {
    Node {
        start: at,
        end: at,
        value,
    }
}

/// A key as text: a scalar's own text; a complex key (a collection) gives "".
fn key_text(node: &Node) -> String {
    match &node.value {
        Value::Scalar(s) => s.clone(),
        _ => String::new(),
    }
}

/// Levels of nesting under `node` (0 for a scalar).
fn depth(node: &Node) -> usize {
    match &node.value {
        Value::Scalar(_) => 0,
        Value::Seq(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Map(entries) => 1 + entries.iter().map(|(_, _, n)| depth(n)).max().unwrap_or(0),
    }
}

/// Nodes and bytes of scalar text in `node`, itself included.
fn size(node: &Node) -> (usize, usize) {
    let add = |(a, b): (usize, usize), (c, d): (usize, usize)| (a + c, b + d);
    match &node.value {
        Value::Scalar(s) => (1, s.len()),
        Value::Seq(items) => items.iter().map(size).fold((1, 0), add),
        Value::Map(entries) => entries
            .iter()
            .map(|(k, _, n)| add(size(n), (0, k.len())))
            .fold((1, 0), add),
    }
}
