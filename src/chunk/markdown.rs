//! Markdown structure: walks pulldown-cmark's offset iterator over the parse copy and
//! returns the top-level blocks (line ranges, heading level and plain text, fields).
//! Only top-level headings start sections; `#` lines inside fences or HTML blocks are
//! not headings because the parser says so.

use std::ops::Range;

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::cmark::{options, options_for};
use super::fields::{collapse_ws, heading_symbols, BlockFields, FieldsBuilder, MAX_SYMBOLS};
use super::lines::LineTable;
use super::links::LinkCollector;
use super::markers::marker_title;

/// A top-level heading: level 1–6, plain text (inline code text kept, markup and
/// attributes dropped) and its explicit anchor (`{#id}` or `{ id="id" }`), if any.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Heading {
    pub level: u8,
    pub text: String,
    pub anchor: Option<String>,
    /// `text` stands in for a heading with no text of its own (`## <Badge />`): it names
    /// the section, never the document.
    pub stand_in: bool,
}

/// One top-level block of the document.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    /// 0-based first line.
    pub first_line: usize,
    /// 0-based last non-blank line (>= first_line).
    pub last_line: usize,
    pub heading: Option<Heading>,
    pub fields: BlockFields,
    pub kind: BlockKind,
    /// For a list: the 0-based first line of each top-level item, in order.
    pub items: Vec<usize>,
}

/// What a top-level block is, as far as cutting sections goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum BlockKind {
    /// A fenced code block: a piece of a section made only of these stays with the
    /// prose before it.
    FencedCode,
    /// A table; `header_end` is its 0-based delimiter row (the header ends there): a long
    /// table is cut between rows, each piece repeating the header.
    Table { header_end: usize },
    /// A list: a long list is cut between its top-level items.
    List,
    /// A paragraph: a long one (lines with no blank line between them: a generated
    /// listing, a log, a wall of text) is cut between its lines.
    Paragraph,
    #[default]
    Other,
}

/// Top-level blocks of `parse` in order. `blank` flags blank lines of `parse`; `src` is
/// the source the parse copy was made from (same offsets).
pub(crate) fn parse_blocks(
    src: &str,
    parse: &str,
    table: &LineTable,
    blank: &[bool],
    mut links: Option<&mut LinkCollector<'_>>,
) -> Vec<Block> {
    let mut walker = Walker {
        src,
        parse,
        table,
        blank,
        depth: 0,
        in_heading: false,
        in_code: false,
        open: None,
        blocks: Vec::new(),
    };
    for (event, range) in Parser::new_ext(parse, options_for(parse)).into_offset_iter() {
        if let Some(l) = links.as_deref_mut() {
            l.event(&event, &range);
        }
        walker.event(event, range);
    }
    walker.close();
    walker.blocks
}

struct Open {
    range: Range<usize>,
    heading: Option<Heading>,
    /// The text of the definition-list term being read, and the names terms gave so far
    /// (`baseURL`, `--force`): symbols of the block, as a heading's names are.
    term: Option<String>,
    names: Vec<String>,
    fields: FieldsBuilder,
    kind: BlockKind,
    items: Vec<usize>,
}

struct Walker<'t> {
    src: &'t str,
    parse: &'t str,
    table: &'t LineTable,
    blank: &'t [bool],
    depth: usize,
    in_heading: bool,
    in_code: bool,
    open: Option<Open>,
    blocks: Vec<Block>,
}

impl Walker<'_> {
    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        if self.depth == 0 {
            self.close();
            self.open = Some(Open {
                range: range.clone(),
                heading: None,
                term: None,
                names: Vec::new(),
                fields: FieldsBuilder::default(),
                kind: BlockKind::Other,
                items: Vec::new(),
            });
        }
        let Some(open) = self.open.as_mut() else {
            return;
        };
        match event {
            Event::Start(tag) => {
                self.depth += 1;
                match tag {
                    Tag::Heading {
                        level, id, attrs, ..
                    } if self.depth == 1 => {
                        // `{#id}`, or attr_list's `{ id="id" }` (Python-Markdown, mkdocs)
                        let attr_id = attrs.iter().find(|(k, _)| k.as_ref() == "id");
                        let attr_id = attr_id.and_then(|(_, v)| v.as_deref());
                        let anchor = id
                            .as_deref()
                            .or(attr_id)
                            .map(|i| i.trim_matches(['"', '\'']));
                        open.heading = Some(Heading {
                            level: level as u8,
                            text: String::new(),
                            anchor: anchor.map(str::to_string).filter(|i| !i.is_empty()),
                            stand_in: false,
                        });
                        self.in_heading = true;
                    }
                    Tag::CodeBlock(k) => {
                        self.in_code = true;
                        if self.depth == 1 && matches!(k, pulldown_cmark::CodeBlockKind::Fenced(_))
                        {
                            open.kind = BlockKind::FencedCode;
                        }
                    }
                    Tag::Table(_) if self.depth == 1 => {
                        // the delimiter row is the line after the head row
                        let head = self.table.line_of(range.start);
                        open.kind = BlockKind::Table {
                            header_end: head + 1,
                        };
                    }
                    Tag::List(_) | Tag::DefinitionList if self.depth == 1 => {
                        open.kind = BlockKind::List
                    }
                    // a definition list's items start at their terms
                    Tag::Item | Tag::DefinitionListTitle
                        if self.depth == 2 && open.kind == BlockKind::List =>
                    {
                        open.items.push(self.table.line_of(range.start));
                    }
                    Tag::DefinitionListTitle => open.term = Some(String::new()),
                    Tag::Paragraph => {
                        if self.depth == 1 {
                            open.kind = BlockKind::Paragraph;
                        }
                        open.fields.paragraph_start()
                    }
                    _ => {}
                }
            }
            Event::End(end) => {
                match end {
                    TagEnd::Heading(_) if self.depth == 1 => self.in_heading = false,
                    TagEnd::DefinitionListTitle => {
                        let term = open.term.take().unwrap_or_default();
                        for name in heading_symbols(&collapse_ws(&term)) {
                            if !open.names.iter().any(|n| n == name) {
                                open.names.push(name.to_string());
                            }
                        }
                    }
                    TagEnd::CodeBlock => self.in_code = false,
                    TagEnd::Paragraph => open.fields.paragraph_end(),
                    _ => {}
                }
                if let Some(newline) = separator_after(end) {
                    open.fields.separator(newline);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            leaf => leaf_event(open, leaf, self.in_heading, self.in_code),
        }
        if self.depth == 0 {
            self.close();
        }
    }

    /// Finishes the open block, if any.
    fn close(&mut self) {
        let Some(open) = self.open.take() else { return };
        let first = self.table.line_of(open.range.start);
        let end = open.range.end.max(open.range.start + 1) - 1;
        let mut last = self.table.line_of(end).max(first);
        while last > first && self.blank.get(last).copied().unwrap_or(true) {
            last -= 1;
        }
        let heading = open.heading.map(|h| {
            let mut text = collapse_ws(&h.text);
            if text.is_empty() {
                // A heading that is only a comment (`#### <!-- md:setting x.y -->`): its
                // comment says what the section is about.
                text = collapse_ws(&comment_text(self.table.content(self.src, first)));
            }
            let mut stand_in = false;
            if text.is_empty() {
                // Only markup (`## <Badge text="beta" />`): the components it shows stand
                // for it in the heading path, never an empty entry (template tags, blanked
                // in the parse copy, and plain HTML such as `<img>` give nothing)
                text = stand_in_text(self.table.content(self.parse, first));
                stand_in = !text.is_empty();
            }
            Heading {
                level: h.level,
                text,
                anchor: h.anchor,
                stand_in,
            }
        });
        // an empty heading (`#` alone) names nothing: its lines stay in the section
        // before it, which a reader sees them under
        let heading = heading.filter(|h| !h.text.is_empty());
        let mut fields = open.fields.finish();
        let named = heading.as_ref().map(|h| heading_symbols(&h.text));
        let terms = open.names.iter().map(String::as_str);
        for (i, sym) in named.into_iter().flatten().chain(terms).enumerate() {
            if !fields.symbols.iter().any(|x| x == sym) {
                fields
                    .symbols
                    .insert(i.min(fields.symbols.len()), sym.to_string());
            }
        }
        fields.symbols.truncate(MAX_SYMBOLS);
        self.blocks.push(Block {
            first_line: first,
            last_line: last,
            heading,
            fields,
            kind: open.kind,
            items: open.items,
        });
    }
}

/// Feeds a non-tag event to the open block.
fn leaf_event(open: &mut Open, event: Event<'_>, in_heading: bool, in_code: bool) {
    if let (Some(term), Event::Text(t) | Event::Code(t)) = (open.term.as_mut(), &event) {
        term.push_str(t);
    }
    let heading = open.heading.as_mut().filter(|_| in_heading);
    let f = &mut open.fields;
    match (event, heading) {
        (Event::Text(t), Some(h)) => {
            h.text.push_str(&t);
            f.symbol_text(&t);
        }
        (Event::Code(c), Some(h)) => {
            // a MyST role before the code span (`{myst:directive}`): markup, not text
            strip_trailing_role(&mut h.text);
            h.text.push_str(&c);
            f.code_span(&c, false);
        }
        (Event::SoftBreak | Event::HardBreak, Some(h)) => h.text.push(' '),
        (Event::Text(t), None) if in_code => f.code_block_text(&t),
        // a container marker line gives its title, not `:::`, `!!!` and its kind
        (Event::Text(t), None) if marker_title(&t).is_some() => {
            f.text(marker_title(&t).unwrap_or_default());
        }
        (Event::Text(t) | Event::InlineMath(t) | Event::DisplayMath(t), None) => f.text(&t),
        (Event::Code(c), None) => f.code_span(&c, true),
        (Event::Html(h), None) => f.html_block(&h),
        (Event::SoftBreak | Event::HardBreak, None) => f.line_break(),
        _ => {}
    }
}

/// `text` without the MyST role name it ends with (`The {ref}` → `The `), if any.
fn strip_trailing_role(text: &mut String) {
    if let Some(at) = text.rfind('{') {
        let tail = format!("{}`", &text[at..]);
        if super::display::role_len(&tail) == Some(tail.len() - 1) {
            text.truncate(at);
        }
    }
}

/// The text inside the HTML comments of a line (`<!-- a -->` → `a`).
fn comment_text(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("<!--") {
        let after = &rest[start + 4..];
        let end = after.find("-->").unwrap_or(after.len());
        out.push_str(&after[..end]);
        out.push(' ');
        rest = after.get(end + 3..).unwrap_or("");
    }
    out
}

/// The text the chunker gives a heading written as `source` (its Markdown: inline code
/// kept, emphasis, entities and backslash escapes resolved, inline HTML and `{#id}`
/// attributes dropped), white space collapsed: `` `Rc<T>` `` → `Rc<T>`,
/// `Option&lt;T&gt;` → `Option<T>`. Empty when nothing visible is left.
pub fn heading_text(source: &str) -> String {
    let source = super::display::strip_roles(source);
    let line = format!("# {}", source.replace(['\n', '\r'], " "));
    let mut text = String::new();
    let mut inside = false;
    for event in Parser::new_ext(&line, options()) {
        match event {
            Event::Start(Tag::Heading { .. }) => inside = true,
            Event::End(TagEnd::Heading(_)) => inside = false,
            Event::Text(t) | Event::Code(t) if inside => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak if inside => text.push(' '),
            _ => {}
        }
    }
    collapse_ws(&text)
}

/// What stands for a heading of only markup: its text outside tags and the text a
/// component shows (`## <Badge text="beta" />` → `beta`), else the names of the
/// components it shows (`## <Foo />` → `Foo`; capitalised tag names, as JSX writes
/// components), else nothing (`# <img src="logo.svg">`).
fn stand_in_text(line: &str) -> String {
    let raw = raw_heading_text(line);
    let text = collapse_ws(&super::fields::strip_tags(&raw));
    if !text.is_empty() {
        return text;
    }
    let names: Vec<&str> = raw
        .split('<')
        .skip(1)
        .filter_map(|t| {
            let name = t.split(|c: char| !c.is_alphanumeric() && c != '.').next()?;
            name.starts_with(|c: char| c.is_ascii_uppercase())
                .then_some(name)
        })
        .collect();
    names.join(" ")
}

/// The source of an ATX heading line without its `#` marks, closing `#`s and `{…}`
/// attributes (`## <Foo /> {#foo}` → `<Foo />`); a setext heading's line as it is.
fn raw_heading_text(line: &str) -> String {
    let line = super::display::strip_heading_attributes(line);
    let t = line.trim();
    let Some(rest) = t.strip_prefix('#') else {
        return t.to_string();
    };
    let mut t = rest.trim_start_matches('#').trim();
    let closed = t.trim_end_matches('#');
    if closed.len() < t.len() && (closed.is_empty() || closed.ends_with(' ')) {
        t = closed.trim_end();
    }
    t.to_string()
}

/// The separator a closing tag adds to the body: `Some(true)` newline, `Some(false)` space.
fn separator_after(end: TagEnd) -> Option<bool> {
    match end {
        TagEnd::TableCell => Some(false),
        TagEnd::Paragraph
        | TagEnd::Heading(_)
        | TagEnd::BlockQuote(_)
        | TagEnd::CodeBlock
        | TagEnd::HtmlBlock
        | TagEnd::List(_)
        | TagEnd::Item
        | TagEnd::FootnoteDefinition
        | TagEnd::Table
        | TagEnd::TableHead
        | TagEnd::TableRow
        | TagEnd::DefinitionList
        | TagEnd::DefinitionListTitle
        | TagEnd::DefinitionListDefinition
        | TagEnd::MetadataBlock(_) => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::lines::is_blank;

    fn blocks(text: &str) -> Vec<Block> {
        let t = LineTable::new(text);
        let blank: Vec<bool> = (0..t.len()).map(|i| is_blank(t.content(text, i))).collect();
        parse_blocks(text, text, &t, &blank, None)
    }

    fn summary(b: &Block) -> (usize, usize, Option<(u8, &str)>) {
        (
            b.first_line,
            b.last_line,
            b.heading.as_ref().map(|h| (h.level, h.text.as_str())),
        )
    }

    #[test]
    fn a_heading_of_only_markup_keeps_its_source_as_text() {
        let text = "## <Badge text=\"beta\" />\n\n## <Foo /> ##\n\n## [](#x) {#anchor}\n\n## `<Bar />` comp\n\n##\n\n# <img src=\"logo.svg\" width=\"200\">\n\n## <span>Real</span> <Tag />\n";
        let got: Vec<_> = blocks(text)
            .iter()
            .filter_map(|b| b.heading.as_ref().map(|h| (h.text.clone(), h.stand_in)))
            .collect();
        let want = [
            ("beta", true),
            ("Foo", true),
            ("[](#x)", true),
            ("<Bar /> comp", false),
            // `##` alone and `# <img …>` name nothing: no heading, no section of their own
            ("Real", false),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|(t, s)| (t.to_string(), *s)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn top_level_blocks_and_headings() {
        let text =
            "# *Hello* `Rc<T>`\n\npara\nmore\n\n```\n# not\n\n```\n\nSetext\n---\n\n> # quoted\n";
        let all = blocks(text);
        let got: Vec<_> = all.iter().map(summary).collect();
        assert_eq!(
            got,
            vec![
                (0, 0, Some((1, "Hello Rc<T>"))),
                (2, 3, None),
                (5, 8, None),
                (10, 11, Some((2, "Setext"))),
                (13, 13, None),
            ]
        );
    }

    #[test]
    fn html_block_hides_hash_lines_and_tags() {
        let b = blocks("<div>\n# not a heading\n</div>\n\n## Real\n");
        assert_eq!(b.len(), 2);
        assert!(b[0].heading.is_none());
        assert_eq!((b[0].first_line, b[0].last_line), (0, 2));
        assert_eq!(b[0].fields.body.trim(), "# not a heading");
        assert_eq!(b[1].heading.as_ref().map(|h| h.text.as_str()), Some("Real"));
    }

    #[test]
    fn list_range_excludes_trailing_blank_lines() {
        let b = blocks("- a\n\n- b\n\n\npara\n");
        assert_eq!((b[0].first_line, b[0].last_line), (0, 2));
        assert_eq!((b[1].first_line, b[1].last_line), (5, 5));
    }

    #[test]
    fn rule_is_its_own_block() {
        let b = blocks("a\n\n***\n\nb\n");
        let lines: Vec<_> = b.iter().map(|b| (b.first_line, b.last_line)).collect();
        assert_eq!(lines, vec![(0, 0), (2, 2), (4, 4)]);
    }
}
