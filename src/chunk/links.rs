//! What a document's text points at, as written: link destinations (inline, reference,
//! autolinks, HTML `<a href>`), and path-shaped words in inline code, prose and fenced
//! code. Nothing here knows which files are indexed: `graph` resolves the targets.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Parser, Tag, TagEnd};
use serde::{Deserialize, Serialize};

use super::cmark::{options, options_for};
use super::lines::LineTable;
use super::source::Prepared;
use super::{SourceDoc, SourceKind};

/// Longest target kept, in bytes (longer ones are data, not references).
const MAX_TARGET: usize = 512;

/// At most this many raw links per document (a generated page of links stays bounded;
/// the build warns about a page that reaches it).
pub const MAX_LINKS: usize = 20_000;

/// How a target was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkForm {
    /// A Markdown link (inline, reference, autolink) or an HTML `<a href>`.
    Link,
    /// A path-shaped word in inline code.
    Code,
    /// A path-shaped word in prose.
    Text,
    /// A path-shaped word inside a fenced or indented code block: kept for handoffs,
    /// never a ranking signal.
    Fence,
    /// An HTML `id` (or `<a name>`) the page defines: not a link, but a valid `#anchor`
    /// of the page besides its headings.
    Anchor,
    /// An emphasised (`*Title*`, `**Title**`) or quoted (`"Title"`, `“Title”`) phrase
    /// that starts with a capital letter: it may name a page by its title or alias.
    Phrase,
    /// What a source file imports, as written (`crate::config`, `../config`, `.util`,
    /// `example.com/m/store`): resolved by the language's rules
    /// ([`crate::code::import_targets`]).
    Import,
    /// A Rust child module declared without a body (`mod search;`): its own file.
    ChildModule,
    /// Inline code that names code (`parseConfig()`, `RetryPolicy.delay`,
    /// `load_fixtures`): a mention of the module that declares one of its names, in an
    /// index with sources ([`is_symbol_shaped`]).
    Symbol,
}

/// The reference definitions of a Markdown text (`[label]: target`, at any indent),
/// one per line.
fn reference_definitions(text: &str) -> String {
    text.lines()
        .map(str::trim_start)
        .filter(|l| {
            l.starts_with('[')
                && !l.starts_with("[^")
                && l.find("]:").is_some_and(|i| {
                    i > 1 && !l[1..i].contains(']') && !l[i + 2..].trim().is_empty()
                })
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Longest phrase kept, in bytes and in words.
const MAX_PHRASE: usize = 80;
const MAX_PHRASE_WORDS: usize = 8;

/// Whether `text` may be a page's title: one line of two to [`MAX_PHRASE_WORDS`] words
/// and at most [`MAX_PHRASE`] bytes, starting with a capital letter (a single word —
/// `*Note*`, an admonition's `"Tip"` — is too often not a title to keep).
fn phrase_shaped(text: &str) -> bool {
    let t = text.trim();
    let words = t.split_whitespace().count();
    t.len() <= MAX_PHRASE
        && !t.contains('\n')
        && (2..=MAX_PHRASE_WORDS).contains(&words)
        && t.chars().next().is_some_and(char::is_uppercase)
}

/// The quoted phrases of prose `text` (straight or curly double quotes), with their byte
/// offset in `text`.
fn quoted(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, char)> = None;
    for (i, c) in text.char_indices() {
        match (open, c) {
            (None, '"' | '“') => {
                open = Some((i + c.len_utf8(), if c == '“' { '”' } else { '"' }))
            }
            (Some((start, close)), c) if c == close => {
                out.push((start, &text[start..i]));
                open = None;
            }
            _ => {}
        }
    }
    out
}

/// One target as written in a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawLink {
    /// 1-based line of the source where the target is written.
    pub line: u32,
    pub form: LinkForm,
    /// The destination or word as written (`../guide/index.md#install`, `src/lib.rs`).
    pub target: String,
}

/// The targets of `doc` in source order (at most [`MAX_LINKS`]). Plain-text documents have no
/// links; their path-shaped words count as prose.
pub fn doc_links(doc: &SourceDoc) -> Vec<RawLink> {
    let prepared = Prepared::new(doc);
    match doc.kind {
        SourceKind::Text => return text_links(&prepared),
        SourceKind::Nav => return super::nav::nav_links(prepared.src),
        SourceKind::OpenApi | SourceKind::Code | SourceKind::Manifest | SourceKind::Project => {
            return Vec::new()
        }
        SourceKind::Markdown | SourceKind::Mdx => {}
    }
    let mut links = LinkCollector::new(&prepared.parse, &prepared.table);
    links.template_links(&prepared.includes);
    let opts = options_for(&prepared.parse);
    for (event, range) in Parser::new_ext(&prepared.parse, opts).into_offset_iter() {
        links.event(&event, &range);
    }
    links.finish()
}

/// The path-shaped words of a plain-text document.
pub(crate) fn text_links(prepared: &Prepared<'_>) -> Vec<RawLink> {
    let mut out = Vec::new();
    words(prepared.src, 0, &prepared.table, LinkForm::Text, &mut out);
    out.truncate(MAX_LINKS);
    out
}

/// Gathers the targets of a Markdown document from the parser's events (the chunker's
/// one parse feeds it).
pub(crate) struct LinkCollector<'a> {
    parse: &'a str,
    table: &'a LineTable,
    code_block: bool,
    /// The text of an indented code block so far, and its first line (0-based): mkdocs
    /// admonitions and content tabs (`!!! note` + an indented body) are Markdown that
    /// CommonMark reads as indented code, so its links are read again as Markdown.
    indented: Option<(usize, String)>,
    /// Consecutive text events joined (pulldown-cmark splits "docs/_index.md" at an
    /// unmatched `_`): start offset, end offset, text, form.
    prose: Option<(usize, usize, String, LinkForm)>,
    /// The text of the outermost emphasis or strong span so far, its start offset and
    /// how deep the spans are nested.
    emphasis: Option<(usize, String)>,
    emphasis_depth: u32,
    /// How deep inside link text the parse is.
    link_depth: u32,
    /// A definition-list term being read (its start offset and text): its slug is an
    /// anchor of the page (Hugo's `autoDefinitionTermID`: `#publishdir`).
    term: Option<(usize, String)>,
    /// The document's reference definitions (`[x]: target` lines), read on the first
    /// indented block that needs them.
    definitions: Option<String>,
    out: Vec<RawLink>,
}

impl<'a> LinkCollector<'a> {
    pub fn new(parse: &'a str, table: &'a LineTable) -> Self {
        LinkCollector {
            parse,
            table,
            code_block: false,
            indented: None,
            prose: None,
            emphasis: None,
            emphasis_depth: 0,
            link_depth: 0,
            term: None,
            definitions: None,
            out: Vec::new(),
        }
    }

    /// Feeds one event of the parse copy (`range`: its byte range).
    pub fn event(&mut self, event: &Event<'_>, range: &std::ops::Range<usize>) {
        if self.out.len() >= MAX_LINKS {
            return;
        }
        if let Some((_, so_far)) = self.emphasis.as_mut() {
            match event {
                Event::Text(t) | Event::Code(t) => so_far.push_str(t),
                Event::SoftBreak | Event::HardBreak => so_far.push(' '),
                _ => {}
            }
        }
        match event {
            Event::Start(Tag::Link { .. }) => self.link_depth += 1,
            Event::End(TagEnd::Link) => self.link_depth = self.link_depth.saturating_sub(1),
            Event::Start(Tag::DefinitionListTitle) => {
                self.term = Some((range.start, String::new()))
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, so_far)) = self.term.as_mut() {
                    so_far.push_str(t);
                }
            }
            Event::End(TagEnd::DefinitionListTitle) => {
                if let Some((at, term)) = self.term.take() {
                    let slug = super::ids::slugify(&term);
                    if !term.trim().is_empty() {
                        let line = self.table.line_of(at) as u32 + 1;
                        push(&mut self.out, line, LinkForm::Anchor, &slug);
                    }
                }
            }
            _ => {}
        }
        if let (Event::Text(text), None) = (event, &self.indented) {
            let form = if self.code_block {
                LinkForm::Fence
            } else {
                LinkForm::Text
            };
            match self.prose.as_mut() {
                Some((_, end, so_far, f)) if *end == range.start && *f == form => {
                    so_far.push_str(text);
                    *end = range.end;
                }
                _ => {
                    self.flush_prose();
                    let at = text_offset(self.parse, range, text);
                    self.prose = Some((at, range.end, text.to_string(), form));
                }
            }
            return;
        }
        self.flush_prose();
        let line = |at: usize| self.table.line_of(at) as u32 + 1;
        match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) if *link_type != LinkType::Email => {
                push(&mut self.out, line(range.start), LinkForm::Link, dest_url);
                // bold link text names its link's page already: no phrase of it
                if let Some((at, _)) = self.emphasis.as_mut() {
                    *at = usize::MAX;
                }
            }
            Event::Start(Tag::Emphasis | Tag::Strong) if !self.code_block => {
                self.emphasis_depth += 1;
                if self.emphasis_depth == 1 {
                    // emphasis inside link text names the link's page already
                    let at = if self.link_depth > 0 {
                        usize::MAX
                    } else {
                        range.start
                    };
                    self.emphasis = Some((at, String::new()));
                }
            }
            Event::End(TagEnd::Emphasis | TagEnd::Strong) if self.emphasis_depth > 0 => {
                self.emphasis_depth -= 1;
                if self.emphasis_depth == 0 {
                    if let Some((at, text)) = self.emphasis.take() {
                        if at != usize::MAX && phrase_shaped(&text) {
                            push(&mut self.out, line(at), LinkForm::Phrase, &text);
                        }
                    }
                }
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                self.code_block = true;
                if matches!(kind, CodeBlockKind::Indented) {
                    self.indented = Some((self.table.line_of(range.start), String::new()));
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                self.code_block = false;
                if let Some((first, text)) = self.indented.take() {
                    self.indented_links(first, &text);
                }
            }
            Event::Text(text) if self.indented.is_some() => {
                if let Some((_, body)) = self.indented.as_mut() {
                    body.push_str(text);
                }
            }
            Event::Code(code) => {
                let word = code.trim();
                if keeps(word) {
                    push(&mut self.out, line(range.start), LinkForm::Code, word);
                } else if is_symbol_shaped(word) {
                    push(&mut self.out, line(range.start), LinkForm::Symbol, word);
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for (off, href) in hrefs(html) {
                    push(&mut self.out, line(range.start + off), LinkForm::Link, href);
                }
                if !self.code_block {
                    for (off, id) in html_ids(html) {
                        push(&mut self.out, line(range.start + off), LinkForm::Anchor, id);
                    }
                }
            }
            _ => {}
        }
    }

    /// The links of an indented block's text read as Markdown (its lines start at 0-based
    /// line `first` of the document).
    fn indented_links(&mut self, first: usize, text: &str) {
        // the block's reference links use the document's definitions: append them (after
        // the block's own lines, so its line numbers hold)
        let lines = text.lines().count();
        let defs = self
            .definitions
            .get_or_insert_with(|| reference_definitions(self.parse))
            .clone();
        let text = if defs.is_empty() {
            text.to_string()
        } else {
            format!("{text}\n\n{defs}")
        };
        let text = text.as_str();
        let table = LineTable::new(text);
        let mut nested = LinkCollector::new(text, &table);
        nested.definitions = Some(defs.clone());
        for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
            nested.event(&event, &range);
        }
        // only what the block's own lines hold (the appended definitions are not its text)
        for mut l in nested
            .finish()
            .into_iter()
            .filter(|l| l.line as usize <= lines)
        {
            l.line += first as u32;
            if self.out.len() < MAX_LINKS {
                self.out.push(l);
            }
        }
    }

    /// Scans the joined text events for path-shaped words.
    fn flush_prose(&mut self) {
        if let Some((at, _, text, form)) = self.prose.take() {
            if may_name_a_document(&text) {
                words(&text, at, self.table, form, &mut self.out);
            }
            if form == LinkForm::Text {
                for (off, phrase) in quoted(&text) {
                    if phrase_shaped(phrase) && self.out.len() < MAX_LINKS {
                        let line = self.table.line_of(at + off) as u32 + 1;
                        push(&mut self.out, line, LinkForm::Phrase, phrase);
                    }
                }
            }
        }
    }

    /// Adds what the document's include and reference template tags point at
    /// ([`Prepared::includes`]) as links.
    pub fn template_links(&mut self, includes: &[(u32, String)]) {
        self.out
            .extend(includes.iter().map(|(line, target)| RawLink {
                line: *line,
                form: LinkForm::Link,
                target: target.clone(),
            }));
    }

    pub fn finish(mut self) -> Vec<RawLink> {
        self.flush_prose();
        self.out.sort_by_key(|l| l.line);
        self.out.truncate(MAX_LINKS);
        self.out
    }
}

/// Cheap test before the word scan: some `.` is followed by an indexed extension (or
/// one of an API spec or `mkdocs.yml`, whose names [`keeps`] then checks).
fn may_name_a_document(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'.' && {
            let rest = &b[i + 1..];
            let starts =
                |p: &[u8]| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p);
            starts(b"md")
                || starts(b"txt")
                || starts(b"markdown")
                || starts(b"json")
                || starts(b"yaml")
                || starts(b"yml")
        }
    })
}

fn push(out: &mut Vec<RawLink>, line: u32, form: LinkForm, target: &str) {
    let target = target.trim();
    if target.is_empty() || target.len() > MAX_TARGET {
        return;
    }
    out.push(RawLink {
        line,
        form,
        target: target.to_string(),
    });
}

/// Where `text` starts in the parse copy: its event range when the text is verbatim,
/// else the range start (escapes and entities shift it).
fn text_offset(parse: &str, range: &std::ops::Range<usize>, text: &str) -> usize {
    match parse.get(range.clone()) {
        Some(s) => s.find(text).map_or(range.start, |i| range.start + i),
        None => range.start,
    }
}

/// Path-shaped words of `text` (starting at byte `at` of the source).
fn words(text: &str, at: usize, table: &LineTable, form: LinkForm, out: &mut Vec<RawLink>) {
    let mut start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let part_of_word = !c.is_whitespace()
            && !matches!(
                c,
                '`' | '"' | '\'' | '(' | ')' | '<' | '>' | '[' | ']' | ',' | ';' | '|' | '*'
            );
        match (part_of_word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = text[s..i].trim_end_matches(['.', ':', '!', '?']);
                if keeps(word) && out.len() < MAX_LINKS {
                    let line = table.line_of(at + s) as u32 + 1;
                    push(out, line, form, word);
                }
                start = None;
            }
            _ => {}
        }
    }
}

/// A path-shaped word is kept only when it can name an indexed file: its extension is
/// one docfuse indexes (`guide/setup.md`, `notes.txt`, `api/openapi.yaml`), or a source file
/// or package manifest an index with sources holds (`src/lib.rs`, `Cargo.toml`: a mention of
/// the module or package; in an index without them it names nothing and is no relation);
/// "e.g." and `1.5` are not files.
fn keeps(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    is_path_shaped(word) && SourceKind::of_file_name_with_sources(name).is_some()
}

/// Inline code that names code: identifiers joined by `::`, `.` or `->`, with an
/// optional call `()` (`parseConfig()`, `Foo::bar`, `load_fixtures`); at most 100 bytes.
/// It must look like code, not like a word: two or more identifiers, a call, an `_`, or a
/// lower-to-upper case hump (`RetryPolicy`, `parseConfig`). A plain word in backticks
/// (`tokens`, `Lattice`), a command (`cargo build`), a flag (`dry-run`) or an expression
/// is not.
pub(crate) fn is_symbol_shaped(word: &str) -> bool {
    let call = word.ends_with("()");
    let w = word.strip_suffix("()").unwrap_or(word);
    if w.is_empty() || w.len() > 100 {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let segments: Vec<&str> = w
        .split(|c: char| !ident(c))
        .filter(|s| !s.is_empty())
        .collect();
    let separators: Vec<&str> = w.split(ident).filter(|s| !s.is_empty()).collect();
    let well_formed = separators.len() + 1 == segments.len()
        && segments.iter().all(|s| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
        && separators.iter().all(|s| matches!(*s, "::" | "." | "->"));
    let hump = w
        .chars()
        .zip(w.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    well_formed
        && segments.iter().any(|s| s.chars().count() >= 3)
        && (segments.len() > 1 || call || w.contains('_') || hump)
}

/// The identifiers of symbol-shaped inline code ([`is_symbol_shaped`]), in order:
/// `Foo::bar()` → `Foo`, `bar`.
pub fn symbol_segments(word: &str) -> impl Iterator<Item = &str> {
    let w = word.strip_suffix("()").unwrap_or(word);
    w.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|s| !s.is_empty())
}

/// A word that may name a file: no spaces or scheme, at least one `/` or a file
/// extension of 1–5 ASCII alphanumerics after a non-empty stem (`src/lib.rs`,
/// `config.md`, `docs/`), and not a number (`1.5`) or a Rust path (`std::fs`).
pub(crate) fn is_path_shaped(word: &str) -> bool {
    if word.is_empty() || word.len() > MAX_TARGET || word.contains("://") || word.contains("::") {
        return false;
    }
    if word.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    let has_ext = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    });
    let slash = word.trim_matches('/').contains('/');
    has_ext || slash
}

/// Link targets in an HTML (or MDX) fragment, with their byte offsets: `href` of `<a …>`,
/// `to` (or `href`) of a JSX `<Link …>` (Docusaurus, Next.js), and `href` of any other
/// component (Starlight's `<LinkCard href>`, `<LinkButton href>`).
fn hrefs(html: &str) -> Vec<(usize, &str)> {
    tag_values(html, |original, rest| {
        if tag_opens(rest, "a") {
            &["href"]
        } else if tag_opens(rest, "link") {
            &["to", "href"]
        } else if original.starts_with(|c: char| c.is_ascii_uppercase()) {
            &["href"]
        } else {
            &[]
        }
    })
}

/// The `id` attributes of HTML or JSX tags (and `<a name>`), with their offsets: the
/// anchors a page defines besides its headings (`<dt id="opt-x">`, `<a name="top">`).
fn html_ids(html: &str) -> Vec<(usize, &str)> {
    tag_values(html, |_, rest| {
        if tag_opens(rest, "a") {
            &["id", "name"]
        } else if rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            &["id"]
        } else {
            &[]
        }
    })
}

/// For each tag of `html`, the value of the first attribute `pick` names for it (`pick`
/// sees what follows the `<`, as written and lower-cased), with its offset.
fn tag_values(
    html: &str,
    pick: impl Fn(&str, &str) -> &'static [&'static str],
) -> Vec<(usize, &str)> {
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find('<') {
        let tag_start = from + i;
        let tag_end = lower[tag_start..]
            .find('>')
            .map_or(lower.len(), |j| tag_start + j);
        let rest = &lower[tag_start + 1..];
        let names = pick(html.get(tag_start + 1..).unwrap_or(""), rest);
        if let Some(v) = names
            .iter()
            .find_map(|n| super::inline_html::attribute(html, &lower, tag_start..tag_end, n))
        {
            out.push(v);
        }
        from = tag_end.max(tag_start + 1);
        if from >= lower.len() {
            break;
        }
    }
    out
}

/// Whether `rest` (what follows a `<`, lower-cased) starts the tag `name` with attributes.
fn tag_opens(rest: &str, name: &str) -> bool {
    rest.strip_prefix(name)
        .and_then(|r| r.bytes().next())
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(text: &str) -> Vec<(u32, LinkForm, String)> {
        let doc = SourceDoc {
            rel_path: "guide/a.md".into(),
            text: text.into(),
            kind: SourceKind::Markdown,
            title_hint: None,
        };
        doc_links(&doc)
            .into_iter()
            .map(|l| (l.line, l.form, l.target))
            .collect()
    }

    #[test]
    fn inline_code_that_names_code_is_a_symbol_link() {
        for w in [
            "parseConfig()",
            "Foo::bar",
            "RetryPolicy.delay",
            "load_fixtures",
            "self->x_y",
        ] {
            assert!(is_symbol_shaped(w), "{w}");
        }
        for w in [
            "cargo build",
            "a + b",
            "x",
            "Vec<T>",
            "--force",
            "1.5",
            "a::::b",
            "src/x",
        ] {
            assert!(!is_symbol_shaped(w), "{w}");
        }
        assert_eq!(
            symbol_segments("Foo::bar()").collect::<Vec<_>>(),
            ["Foo", "bar"]
        );
        let got = md("# A\n\nUse `parseConfig()` or `guide/b.md`.\n\n```\nnot_inline()\n```\n");
        assert_eq!(
            got,
            [
                (3, LinkForm::Symbol, "parseConfig()".to_string()),
                (3, LinkForm::Code, "guide/b.md".to_string())
            ]
        );
    }

    #[test]
    fn inline_reference_auto_and_html_links_with_lines() {
        let got = md("# A\n\nSee [b](b.md#install) and [ref][r].\n\n<https://example.com/x>\n\n<p>go <a class=\"x\" href='../c.md'>c</a> <Link to=\"/e\">e</Link></p>\n\n[r]: sub/d.md\n");
        assert_eq!(
            got,
            vec![
                (3, LinkForm::Link, "b.md#install".to_string()),
                (3, LinkForm::Link, "sub/d.md".to_string()),
                (5, LinkForm::Link, "https://example.com/x".to_string()),
                (7, LinkForm::Link, "../c.md".to_string()),
                (7, LinkForm::Link, "/e".to_string()),
            ]
        );
    }

    #[test]
    fn a_components_href_is_a_link_and_an_elements_other_attributes_are_not() {
        let got = md("# A\n\n<LinkCard title=\"Go\" href=\"/guides/x/\" />\n\n<div data-href=\"/no\">z</div>\n");
        assert_eq!(got, vec![(3, LinkForm::Link, "/guides/x/".to_string())]);
    }

    #[test]
    fn path_words_in_code_prose_and_fences() {
        let got = md("# A\n\nEdit `src/config.md` or docs/setup.md, not `src/lib.rs`.\n\n```sh\ncat notes/todo.txt docs/\n```\n");
        assert_eq!(
            got,
            vec![
                (3, LinkForm::Code, "src/config.md".to_string()),
                (3, LinkForm::Text, "docs/setup.md".to_string()),
                (3, LinkForm::Code, "src/lib.rs".to_string()),
                (6, LinkForm::Fence, "notes/todo.txt".to_string()),
            ]
        );
    }

    #[test]
    fn emphasised_and_quoted_capitalised_phrases_may_name_pages() {
        let got = md("# A\n\nRead *Specifying Dependencies* and **The *Manifest* Format**,\nthen \"Build Scripts\" or “Cargo Targets”.\n\nNot *emphasis*, \"lower case\", *A very long phrase of more than eight words in it*.\n\n```\n*Not In Code*\n```\n");
        assert_eq!(
            got,
            vec![
                (3, LinkForm::Phrase, "Specifying Dependencies".to_string()),
                (3, LinkForm::Phrase, "The Manifest Format".to_string()),
                (4, LinkForm::Phrase, "Build Scripts".to_string()),
                (4, LinkForm::Phrase, "Cargo Targets".to_string()),
            ]
        );
    }

    #[test]
    fn reference_links_in_admonitions_use_the_documents_definitions() {
        let got =
            md("# A\n\n!!! note\n    See [one][ra] and **[Bold Page](b.md)**.\n\n[ra]: c.md#x\n");
        assert_eq!(
            got,
            vec![
                (4, LinkForm::Link, "c.md#x".to_string()),
                (4, LinkForm::Link, "b.md".to_string()),
            ],
            "bold link text is no phrase"
        );
    }

    #[test]
    fn definitions_appended_to_a_block_never_become_its_lines() {
        // a dangling `[label]:` line, then tabs with indented fences: nothing may be
        // found past the block, and the document's definitions still serve it
        let got = md("# A\n\nUse it when\n[building your project]:\n\n=== \"Tab\"\n\n    See [x][ra].\n\n    ``` yaml\n    a: b\n    ```\n\n[ra]: ../c/creating.md\n[rb]: ../d/change.md\n");
        assert_eq!(
            got,
            vec![(8, LinkForm::Link, "../c/creating.md".to_string())]
        );
    }

    #[test]
    fn phrases_keep_wrapped_words_and_code_and_skip_link_text() {
        let got = md("# A\n\nRead *Specifying\nDependencies* and *The `Cargo.toml` Format*; [**Bold Page**](b.md).\n");
        assert_eq!(
            got,
            vec![
                (3, LinkForm::Phrase, "Specifying Dependencies".to_string()),
                // a manifest's name in code may be a package's (no relation without sources)
                (4, LinkForm::Code, "Cargo.toml".to_string()),
                (4, LinkForm::Phrase, "The Cargo.toml Format".to_string()),
                (4, LinkForm::Link, "b.md".to_string()),
            ]
        );
    }

    #[test]
    fn front_matter_email_and_non_paths_are_not_links() {
        let got = md("---\ntitle: see x/y.md\n---\n# A\n\nMail <me@example.com>, e.g. Cargo.toml, version 1.5, `std::fs`, `--jobs`.\n");
        // `std::fs` may name code (a symbol link, a relation only to a module that
        // exports `std` or `fs`), never a file
        assert_eq!(got, [(6, LinkForm::Symbol, "std::fs".to_string())]);
    }

    #[test]
    fn links_in_mkdocs_admonitions_and_tabs_are_links() {
        let got = md("# A\n\n!!! note \"Read\"\n\n    See [b](b.md) and\n    [c](sub/c.md#x).\n\n=== \"Tab\"\n\n    ```sh\n    cat d.md\n    ```\n");
        assert_eq!(
            got,
            vec![
                (5, LinkForm::Link, "b.md".to_string()),
                (6, LinkForm::Link, "sub/c.md#x".to_string()),
                (11, LinkForm::Fence, "d.md".to_string()),
            ]
        );
    }

    #[test]
    fn a_path_with_an_underscore_is_one_word() {
        let got = md("# A\n\nEdit docs/_index.md and ~x/notes.md next.\n");
        assert_eq!(
            got,
            vec![
                (3, LinkForm::Text, "docs/_index.md".to_string()),
                (3, LinkForm::Text, "~x/notes.md".to_string()),
            ]
        );
    }

    #[test]
    fn path_shapes() {
        for yes in ["src/lib.rs", "config.md", "docs/a/", "a/b", "index.mdx"] {
            assert!(is_path_shaped(yes), "{yes}");
        }
        for no in [
            "1.5",
            "std::fs",
            "http://x.org/a",
            "a b",
            ".md",
            "/",
            "docs/",
            "x.toolongext",
        ] {
            assert!(!is_path_shaped(no), "{no}");
        }
    }
}
