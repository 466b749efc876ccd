//! A YAML or JSON document as a tree whose every node knows its lines, from
//! `yaml-rust2`'s marked events (JSON is read as YAML 1.2 flow style).

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;
use yaml_rust2::scanner::TScalarStyle;

/// At most this many nodes (aliases counted at each use): a document of more is refused
/// (an alias bomb would otherwise expand without end).
const MAX_NODES: usize = 2_000_000;
/// At most this deep a nesting (deeper is refused: the tree is walked recursively).
const MAX_DEPTH: usize = 256;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// 0-based line where the node starts.
    pub line: usize,
    /// 0-based line of the token that ends it: a collection's closing `}`/`]` in flow
    /// style, the next token (or the end of the text) in block style; a scalar's own line.
    pub end_mark: usize,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar as written (quotes removed; `null`, numbers and booleans as text).
    Scalar(String),
    Seq(Vec<Node>),
    /// Entries in source order: key, the 0-based line of the key, the value.
    Map(Vec<(String, usize, Node)>),
}

impl Node {
    /// The value under `key`, for a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, n)| n)
    }

    /// The value under `key` and the line of the key.
    pub fn entry(&self, key: &str) -> Option<(usize, &Node)> {
        match &self.value {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, line, n)| (*line, n)),
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
    pub fn entries(&self) -> &[(String, usize, Node)] {
        match &self.value {
            Value::Map(e) => e,
            _ => &[],
        }
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
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, false)
        .map_err(|e| format!("line {}: {}", e.marker().line(), e.info()))?;
    if let Some(e) = builder.error {
        return Err(e);
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
    Map(Node, Option<(String, usize)>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: std::collections::HashMap<usize, Node>,
    /// Anchor ids of the open collections, innermost last.
    open_anchors: Vec<usize>,
    root: Option<Node>,
    nodes: usize,
    error: Option<String>,
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() || self.root.is_some() {
            return;
        }
        if let Err(e) = self.handle(ev, mark.line().saturating_sub(1)) {
            self.error = Some(e);
        }
    }
}

impl Builder {
    fn handle(&mut self, ev: Event, line: usize) -> Result<(), String> {
        match ev {
            Event::Scalar(v, style, anchor, _) => {
                let text = match (style, v.as_str()) {
                    (TScalarStyle::Plain, "~") => String::new(),
                    _ => v,
                };
                let node = leaf(line, Value::Scalar(text));
                self.remember(anchor, &node);
                self.insert(node, 1)
            }
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| format!("line {}: unknown alias", line + 1))?;
                let n = count(&node);
                self.insert(node, n)
            }
            Event::SequenceStart(anchor, _) => {
                self.open(Frame::Seq(leaf(line, Value::Seq(vec![]))), anchor)
            }
            Event::MappingStart(anchor, _) => {
                self.open(Frame::Map(leaf(line, Value::Map(vec![])), None), anchor)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(line),
            _ => Ok(()),
        }
    }

    fn open(&mut self, frame: Frame, anchor: usize) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.stack.push(frame);
        self.open_anchors.push(anchor);
        Ok(())
    }

    fn close(&mut self, line: usize) -> Result<(), String> {
        let anchor = self.open_anchors.pop().unwrap_or(0);
        let mut node = match self.stack.pop() {
            Some(Frame::Seq(n)) | Some(Frame::Map(n, _)) => n,
            None => return Ok(()),
        };
        node.end_mark = line.max(node.line);
        self.remember(anchor, &node);
        self.insert(node, 1)
    }

    fn remember(&mut self, anchor: usize, node: &Node) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
    }

    /// Adds `node` (counting `n` nodes) to the open collection, or makes it the root.
    fn insert(&mut self, node: Node, n: usize) -> Result<(), String> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(format!("more than {MAX_NODES} nodes (aliases expanded)"));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq(seq)) => {
                if let Value::Seq(items) = &mut seq.value {
                    items.push(node);
                }
            }
            Some(Frame::Map(map, pending)) => match pending.take() {
                None => *pending = Some((key_text(&node), node.line)),
                Some((key, key_line)) => {
                    if let Value::Map(entries) = &mut map.value {
                        entries.push((key, key_line, node));
                    }
                }
            },
        }
        Ok(())
    }
}

fn leaf(line: usize, value: Value) -> Node {
    Node {
        line,
        end_mark: line,
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

fn count(node: &Node) -> usize {
    1 + match &node.value {
        Value::Scalar(_) => 0,
        Value::Seq(items) => items.iter().map(count).sum(),
        Value::Map(entries) => entries.iter().map(|(_, _, n)| count(n)).sum(),
    }
}
