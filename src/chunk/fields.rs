//! Per-block field texts: `body` (plain text, no HTML), the first paragraph (`summary`)
//! and `symbols` (inline code spans and identifier-like prose words), plus merging the
//! fields of the blocks of one chunk.

use std::collections::HashSet;

/// Most symbols kept per chunk.
pub(crate) const MAX_SYMBOLS: usize = 64;

/// Finished fields of one top-level block.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BlockFields {
    pub body: String,
    pub summary: Option<String>,
    pub symbols: Vec<String>,
}

/// Accumulates the fields of one block from parser events.
#[derive(Debug, Default)]
pub(crate) struct FieldsBuilder {
    body: String,
    prose: String,
    para: Option<String>,
    summary: Option<String>,
    symbols: SymbolSet,
    /// Inside a `<script>` or `<style>` element: its closing tag.
    raw_element: Option<&'static str>,
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle` (ASCII) in
/// `hay`.
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    (0..h.len().saturating_sub(n.len()).saturating_add(1))
        .filter(|_| h.len() >= n.len())
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// Offset of the first `<tag` in `hay` that opens that element (followed by white
/// space, `>` or `/`; not `<scripts` or `<StyleGuide`).
fn find_element(hay: &str, tag: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = find_ascii_ci(&hay[from..], tag) {
        let i = from + at;
        match hay.as_bytes().get(i + tag.len()) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'/') => return Some(i),
            _ => from = i + tag.len(),
        }
    }
    None
}

impl FieldsBuilder {
    /// Prose text (paragraphs, list items, table cells, link text…).
    pub fn text(&mut self, t: &str) {
        self.body.push_str(t);
        self.prose.push_str(t);
        if let Some(p) = self.para.as_mut() {
            p.push_str(t);
        }
    }

    /// Text that feeds symbols only (a heading's own text).
    pub fn symbol_text(&mut self, t: &str) {
        self.prose.push_str(t);
    }

    /// An inline code span; `in_body` is false for a heading's own code spans.
    pub fn code_span(&mut self, code: &str, in_body: bool) {
        if in_body {
            self.body.push_str(code);
            if let Some(p) = self.para.as_mut() {
                p.push_str(code);
            }
        }
        self.flush_prose();
        self.symbols.push(code.trim());
    }

    /// Contents of a fenced or indented code block: body only.
    pub fn code_block_text(&mut self, t: &str) {
        self.body.push_str(t);
    }

    /// An HTML (or JSX) block fragment: tags dropped, text between them kept; the
    /// contents of `<script>` and `<style>` elements (code, not text: a VitePress page's
    /// `<script setup>`, a `<style>` for a component) are dropped.
    pub fn html_block(&mut self, html: &str) {
        let mut kept = String::new();
        let mut rest = html;
        while !rest.is_empty() {
            if let Some(close) = self.raw_element {
                match find_ascii_ci(rest, close) {
                    Some(at) => {
                        rest = &rest[at + close.len()..];
                        self.raw_element = None;
                    }
                    None => rest = "",
                }
                continue;
            }
            let open = ["<script", "<style"]
                .iter()
                .filter_map(|tag| find_element(rest, tag).map(|at| (at, *tag)))
                .min();
            match open {
                Some((at, tag)) => {
                    kept.push_str(&rest[..at]);
                    rest = &rest[at..];
                    self.raw_element = Some(if tag == "<script" {
                        "</script>"
                    } else {
                        "</style>"
                    });
                }
                None => {
                    kept.push_str(rest);
                    rest = "";
                }
            }
        }
        let text = strip_tags(&kept);
        self.body.push_str(&text);
        self.prose.push_str(&text);
        self.prose.push(' ');
    }

    /// A soft or hard line break.
    pub fn line_break(&mut self) {
        self.body.push('\n');
        self.prose.push(' ');
        if let Some(p) = self.para.as_mut() {
            p.push(' ');
        }
    }

    /// A separator between cells, items, blocks…; `newline` chooses `\n` over a space.
    pub fn separator(&mut self, newline: bool) {
        self.body.push(if newline { '\n' } else { ' ' });
        self.prose.push(' ');
    }

    /// A paragraph starts: captured as summary when none was found yet.
    pub fn paragraph_start(&mut self) {
        if self.summary.is_none() && self.para.is_none() {
            self.para = Some(String::new());
        }
    }

    /// A paragraph ends: an empty one (e.g. only inline HTML) is not a summary.
    pub fn paragraph_end(&mut self) {
        if let Some(p) = self.para.take() {
            let p = collapse_ws(&p);
            if !p.is_empty() {
                self.summary = Some(p);
            }
        }
    }

    pub fn finish(mut self) -> BlockFields {
        self.flush_prose();
        BlockFields {
            body: self.body,
            summary: self.summary,
            symbols: self.symbols.items,
        }
    }

    fn flush_prose(&mut self) {
        for word in self.prose.split_whitespace() {
            if let Some(sym) = identifier_like(word) {
                self.symbols.push(sym);
            }
        }
        self.prose.clear();
    }
}

/// Ordered set of symbols capped at [`MAX_SYMBOLS`].
#[derive(Debug, Default)]
pub(crate) struct SymbolSet {
    items: Vec<String>,
    seen: HashSet<String>,
}

impl SymbolSet {
    pub fn push(&mut self, s: &str) {
        if s.is_empty() || self.items.len() >= MAX_SYMBOLS || self.seen.contains(s) {
            return;
        }
        self.seen.insert(s.to_string());
        self.items.push(s.to_string());
    }

    pub fn into_vec(self) -> Vec<String> {
        self.items
    }
}

/// Fields of one chunk from the fields of its blocks, in order.
pub(crate) fn merge<'a>(blocks: impl IntoIterator<Item = &'a BlockFields>) -> BlockFields {
    let mut body = String::new();
    let mut summary = None;
    let mut symbols = SymbolSet::default();
    for b in blocks {
        body.push_str(&b.body);
        body.push('\n');
        if summary.is_none() {
            summary.clone_from(&b.summary);
        }
        b.symbols.iter().for_each(|s| symbols.push(s));
    }
    BlockFields {
        body: tidy_body(&body),
        summary,
        symbols: symbols.into_vec(),
    }
}

/// Trims line ends, drops empty lines, normalises any `\r` to line breaks.
pub(crate) fn tidy_body(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    for line in body.split(['\n', '\r']) {
        let line = line.trim_end();
        if !line.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(line);
        }
    }
    out
}

/// Whitespace runs collapsed to one space, trimmed.
pub(crate) fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Symbols of plain prose (used for text documents).
pub(crate) fn prose_symbols(text: &str) -> Vec<String> {
    let mut set = SymbolSet::default();
    text.split_whitespace()
        .filter_map(identifier_like)
        .for_each(|s| set.push(s));
    set.into_vec()
}

/// The names a heading gives its section as symbols, when the heading is how reference
/// pages title an option or a setting:
/// - one dotted name (`server.proxy`, `build.rollupOptions`, `import.meta.env`,
///   `Cargo.toml`; each part starts with a letter and has two characters or more — in
///   prose a dotted word is too often an abbreviation or a version: `i.e.`, `v1.2`);
/// - command-line options, when the heading starts with one: `--offline`,
///   `--filter <package_selector>` (`--filter`), `-r, --recursive` (both), `--out=<dir>`;
/// - one identifier (`nodeLinker`, `ERR_PNPM_PEER_DEP_ISSUES`, `useState()`: see
///   [`identifier_like`]).
///
/// Empty for any other heading (`Using server.proxy`, `Proxy`, `--`).
pub(crate) fn heading_symbols(heading: &str) -> Vec<&str> {
    let h = heading.trim();
    let separators = |c: char| c.is_whitespace() || matches!(c, ',' | '|' | '/');
    let first = h.split(separators).next().unwrap_or("");
    if option_name(first).is_some() {
        let mut out: Vec<&str> = Vec::new();
        for name in h.split(separators).filter_map(option_name) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
        return out;
    }
    if h.contains(char::is_whitespace) {
        return Vec::new();
    }
    let w = trim_word(h);
    let parts: Vec<&str> = w.split('.').collect();
    let named = |p: &&str| {
        p.len() >= 2
            && p.chars().next().is_some_and(char::is_alphabetic)
            && p.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '-'))
    };
    let dotted = parts.len() >= 2 && parts.iter().all(named);
    // one identifier in a code shape: snake_case, SCREAMING_CASE, lowerCamel, `f()`; a
    // capitalised word with an inner capital (`TypeScript`, `GitHub`, `macOS` aside) is
    // a name of a thing, not of an option
    let code_shape = w.contains('_')
        || w.ends_with("()")
        || w.contains("::")
        || w.chars().next().is_some_and(char::is_lowercase) && identifier_like(w).is_some();
    if dotted || (!w.contains('.') && code_shape && identifier_like(w).is_some()) {
        vec![w]
    } else {
        Vec::new()
    }
}

/// The option a heading token names: `--name` or `-n` (a letter after the dashes, then
/// letters, digits, `-`, `_`), without a `=value` or `[=value]` tail.
fn option_name(token: &str) -> Option<&str> {
    let t = token.split(['=', '[']).next().unwrap_or("");
    let name = t.strip_prefix("--").or_else(|| t.strip_prefix('-'))?;
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    ok.then_some(t)
}

const EDGE_PUNCT: &[char] = &[
    ',', '.', ';', ':', '"', '\'', '!', '?', '*', '[', ']', '{', '}',
];

/// The identifier inside a whitespace-delimited word, if it looks like one: contains
/// `_` or `::`, or a lowercase letter followed later by an uppercase one, or ends `()`.
pub(crate) fn identifier_like(word: &str) -> Option<&str> {
    let w = trim_word(word);
    if w.contains("://") || !w.chars().any(char::is_alphanumeric) {
        return None;
    }
    let is_ident = w.contains('_') || w.contains("::") || inner_capital(w) || w.ends_with("()");
    is_ident.then_some(w)
}

/// A lowercase letter followed later, within the same alphanumeric run, by an uppercase
/// one (`HashMap`, `isEmpty`; not `Reference-Counted`).
fn inner_capital(w: &str) -> bool {
    w.split(|c: char| !c.is_alphanumeric()).any(|run| {
        run.char_indices()
            .find(|(_, c)| c.is_lowercase())
            .is_some_and(|(i, _)| run[i..].chars().any(char::is_uppercase))
    })
}

/// Strips surrounding punctuation, keeping a trailing `()` call marker.
fn trim_word(word: &str) -> &str {
    let mut w = word.trim_start_matches(|c| EDGE_PUNCT.contains(&c) || c == '(' || c == ')');
    loop {
        let t = w.trim_end_matches(|c| EDGE_PUNCT.contains(&c));
        if t.ends_with("()") && t.len() > 2 {
            return t;
        }
        match t.strip_suffix([')', '(']) {
            Some(shorter) => w = shorter,
            None => return t,
        }
    }
}

/// Text of an HTML/JSX fragment without tags, comments or `{…}` inside tags.
pub(crate) fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(pos) = rest.find('<') {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos..];
        match tag_len(tail) {
            Some(n) => {
                let tag = tail.get(..n).unwrap_or(tail);
                for value in shown_attributes(tag) {
                    out.push(' ');
                    out.push_str(value);
                    out.push(' ');
                }
                rest = tail.get(n..).unwrap_or("");
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Attributes of an MDX component whose values the page shows as text: a card's or an
/// aside's `title`, a tab's `label`, a link card's `description`, a badge's `text`. Not
/// `caption`: the Rust book's `<Listing caption>` indexed lowered its hybrid MRR@10
/// 0.8807 → 0.8683 (lexical 0.8029 → 0.7927) on the dev set.
const SHOWN_ATTRIBUTES: [&str; 4] = ["title", "label", "description", "text"];

/// The values of [`SHOWN_ATTRIBUTES`] of `tag` when it opens a component (a capitalised
/// name, as JSX writes them: `<Card title="Delights">`); none for an HTML element, whose
/// `title` is a tooltip.
fn shown_attributes(tag: &str) -> Vec<&str> {
    if !tag[1..].starts_with(|c: char| c.is_ascii_uppercase()) {
        return Vec::new();
    }
    let lower = tag.to_ascii_lowercase();
    SHOWN_ATTRIBUTES
        .iter()
        .filter_map(|name| super::inline_html::attribute(tag, &lower, 0..tag.len(), name))
        .map(|(_, v)| v)
        .filter(|v| !v.trim().is_empty())
        .collect()
}

/// Byte length of the tag or comment `s` starts with (`s` starts with `<`); a tag runs
/// to the first `>` outside quotes and braces (to the end when unclosed).
fn tag_len(s: &str) -> Option<usize> {
    let next = s[1..].chars().next()?;
    if s.starts_with("<!--") {
        return Some(s.find("-->").map_or(s.len(), |i| i + 3));
    }
    if !(next.is_alphabetic() || matches!(next, '/' | '!' | '?' | '>')) {
        return None;
    }
    let (mut quote, mut braces) = (None, 0usize);
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '{') => braces += 1,
            (None, '}') => braces = braces.saturating_sub(1),
            (None, '>') if braces == 0 => return Some(i + 1),
            _ => {}
        }
    }
    Some(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifier_rules() {
        let ids: Vec<&str> = "Use HashMap, or_insert() and Rc::strong_count. (see foo()). \
             iPhone README Rust Reference-Counted _ e.g. https://x.org/a_b `x` plain() x::y: \"snake_case\""
            .split_whitespace()
            .filter_map(identifier_like)
            .collect();
        assert_eq!(
            ids,
            vec![
                "HashMap",
                "or_insert()",
                "Rc::strong_count",
                "foo()",
                "iPhone",
                "plain()",
                "x::y",
                "snake_case"
            ]
        );
    }

    #[test]
    fn strip_tags_keeps_text() {
        assert_eq!(
            strip_tags("<Note type=\"a>b\">Hi <b>there</b></Note>"),
            "Hi there"
        );
        assert_eq!(strip_tags("<X a={x > 1}/>ok <!-- c --> 1 < 2"), "ok  1 < 2");
        assert_eq!(strip_tags("<div\n"), "");
        assert_eq!(strip_tags("<"), "<");
        assert_eq!(strip_tags("a <é> b"), "a  b");
        // a component's shown attributes are text; an HTML element's title is a tooltip
        assert_eq!(
            collapse_ws(&strip_tags(
                "<Card title=\"Delights\" icon=\"star\">x</Card> <TabItem value=\"npm\" label=\"npm i\"> <a title=\"tip\">y</a>"
            )),
            "Delights x npm i y"
        );
    }

    #[test]
    fn builder_collects_fields() {
        let mut b = FieldsBuilder::default();
        b.paragraph_start();
        b.text("Call ");
        b.code_span(" Vec::new ", true);
        b.text(" then or_");
        b.text("insert.");
        b.line_break();
        b.text("Done");
        b.paragraph_end();
        b.separator(true);
        b.paragraph_start();
        b.text("second");
        b.paragraph_end();
        b.separator(true);
        b.code_block_text("let snake_var = 1;\n");
        let f = b.finish();
        assert_eq!(
            f.summary.as_deref(),
            Some("Call Vec::new then or_insert. Done")
        );
        assert_eq!(f.symbols, vec!["Vec::new", "or_insert"]);
        assert_eq!(
            tidy_body(&f.body),
            "Call  Vec::new  then or_insert.\nDone\nsecond\nlet snake_var = 1;"
        );
    }

    #[test]
    fn a_heading_naming_an_option_or_a_setting_gives_its_symbols() {
        let none: &[&str] = &[];
        for (h, want) in [
            ("server.proxy", &["server.proxy"][..]),
            (" build.rollupOptions ", &["build.rollupOptions"]),
            ("import.meta.env", &["import.meta.env"]),
            ("Cargo.toml", &["Cargo.toml"]),
            ("--offline", &["--offline"]),
            ("--filter <package_selector>", &["--filter"]),
            ("-r, --recursive", &["-r", "--recursive"]),
            ("--save-dev, -D", &["--save-dev", "-D"]),
            ("--out=<dir>", &["--out"]),
            ("--color[=<when>]", &["--color"]),
            ("nodeLinker", &["nodeLinker"]),
            ("ERR_PNPM_PEER_DEP_ISSUES", &["ERR_PNPM_PEER_DEP_ISSUES"]),
            ("useState()", &["useState()"]),
            ("TypeScript", none),
            ("GitHub", none),
            ("`resolve.alias`", none),
            ("v1.2", none),
            ("1.2.3", none),
            ("i.e.", none),
            ("Using server.proxy", none),
            ("Using --offline", none),
            ("Proxy", none),
            ("a..b", none),
            ("--", none),
            ("-1 means no limit", none),
            ("--- rules", none),
        ] {
            assert_eq!(heading_symbols(h), want, "{h:?}");
        }
    }

    #[test]
    fn script_and_style_contents_are_not_text() {
        let mut f = FieldsBuilder::default();
        for frag in [
            "<script setup>\n",
            "import { VPTeamMembers } from 'vitepress/theme'\n",
            "</script>\n",
            "<p>Meet the <b>team</b></p>\n",
            "<STYLE scoped>.grid { display: grid; }</style><ScriptEditor>kept words</ScriptEditor>\n",
        ] {
            f.html_block(frag);
        }
        let body = f.finish().body;
        assert_eq!(collapse_ws(&body), "Meet the team kept words");
    }

    #[test]
    fn merge_dedups_and_caps() {
        let a = BlockFields {
            body: "a \n\n".into(),
            summary: None,
            symbols: vec!["x".into()],
        };
        let many: Vec<String> = (0..100)
            .map(|i| format!("s{i}"))
            .chain(["x".into()])
            .collect();
        let b = BlockFields {
            body: "b".into(),
            summary: Some("p".into()),
            symbols: many,
        };
        let m = merge([&a, &b]);
        assert_eq!(m.body, "a\nb");
        assert_eq!(m.summary.as_deref(), Some("p"));
        assert_eq!(m.symbols.len(), MAX_SYMBOLS);
        assert_eq!(m.symbols[0], "x");
        assert_eq!(m.symbols[1], "s0");
    }
}
