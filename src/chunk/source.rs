//! Source preparation: strips a BOM, builds the line table, finds front matter and
//! builds the copy handed to the Markdown parser. The copy has the same byte length and
//! line structure as the source: front matter and MDX `import`/`export` lines are
//! replaced by spaces, and every lone `\r` becomes `\n`; in Markdown, comments and
//! template tags (`templates`) are blanked too and code shortcodes become fences.

use super::fences::{
    closes_fence, fenced_lines, opens_fence, skip_code_span, FenceLine, NestedFence,
};
use super::frontmatter::{self, FrontMatter};
use super::lines::{is_blank, LineTable};
use super::{kramdown, myst, templates};
use super::{SourceDoc, SourceKind};

/// A document ready to be cut into chunks.
pub(crate) struct Prepared<'a> {
    /// The source text without its BOM.
    pub src: &'a str,
    /// The copy handed to the parser (same offsets as `src`).
    pub parse: String,
    pub table: LineTable,
    /// Per line: blank in the parse copy (front matter and MDX ESM lines are blank).
    pub blank: Vec<bool>,
    pub fm: FrontMatter,
    /// What include and reference template tags point at: (1-based line, target).
    pub includes: Vec<(u32, String)>,
    /// Ids set by kramdown attribute lines (`{: #id}`): (0-based line, id).
    pub attribute_ids: Vec<(usize, String)>,
    /// Ids set by an attribute list at the end of a heading line (`## Title {: #id }`,
    /// Python-Markdown's attr_list as mkdocs writes it): (0-based line, id).
    pub heading_ids: Vec<(usize, String)>,
    /// MyST targets (`(label)=`, `+++ {"label": …}`): (0-based line, label); each names
    /// what follows it.
    pub targets: Vec<(usize, String)>,
}

impl Prepared<'_> {
    /// The id a kramdown attribute line right after 0-based line `line` sets, if any.
    pub fn attribute_id_after(&self, line: usize) -> Option<&String> {
        // pushed in line order: a binary search, not a scan per heading
        let at = self
            .attribute_ids
            .binary_search_by_key(&(line + 1), |(l, _)| *l)
            .ok()?;
        Some(&self.attribute_ids[at].1)
    }

    /// The id an attribute list at the end of heading line `line` (0-based) sets, if any.
    pub fn attribute_id_on(&self, line: usize) -> Option<&String> {
        let at = self
            .heading_ids
            .binary_search_by_key(&line, |(l, _)| *l)
            .ok()?;
        Some(&self.heading_ids[at].1)
    }

    /// A heading's anchor set by kramdown or attr_list markup: on its own line
    /// ([`Self::attribute_id_on`] `first`) or on the line after it
    /// ([`Self::attribute_id_after`] `last`).
    pub fn heading_attribute_id(&self, first: usize, last: usize) -> Option<&String> {
        self.attribute_id_on(first)
            .or_else(|| self.attribute_id_after(last))
    }
}

impl<'a> Prepared<'a> {
    pub fn new(doc: &'a SourceDoc) -> Self {
        let src = doc.text.strip_prefix('\u{feff}').unwrap_or(&doc.text);
        let table = LineTable::new(src);
        let fm = match doc.kind {
            SourceKind::Text
            | SourceKind::Nav
            | SourceKind::OpenApi
            | SourceKind::Code
            | SourceKind::Manifest
            | SourceKind::Project => FrontMatter::default(),
            _ => frontmatter::extract(src, &table),
        };
        let mut blanked = vec![false; table.len()];
        blanked.iter_mut().take(fm.lines).for_each(|b| *b = true);
        if doc.kind == SourceKind::Mdx {
            mark_mdx_esm(src, &table, fm.lines, &mut blanked);
        }
        let mut parse = parse_copy(src, &table, &blanked);
        let markdown = matches!(doc.kind, SourceKind::Markdown | SourceKind::Mdx);
        if markdown {
            fence_code_shortcodes(&mut parse, &table);
        }
        // Blank lines are those of the copy with comments: a comment line belongs to
        // its section's lines (and its chunk), it is only not parsed, so never indexed.
        let blank = (0..table.len())
            .map(|i| is_blank(table.content(&parse, i)))
            .collect();
        let mut marks = if markdown {
            blank_comments(&mut parse, &table, doc.kind == SourceKind::Mdx)
        } else {
            Marks::default()
        };
        if markdown {
            let lines = (0..table.len()).map(|i| table.content(src, i));
            marks.targets.extend(myst::option_labels(lines));
            // a page label names what follows the front matter
            if let Some(label) = fm.target.clone().filter(|_| fm.lines > 0) {
                marks.targets.push((fm.lines - 1, label));
            }
            marks.targets.sort();
        }
        Prepared {
            src,
            parse,
            table,
            blank,
            fm,
            includes: marks.includes,
            attribute_ids: marks.attribute_ids,
            heading_ids: marks.heading_ids,
            targets: marks.targets,
        }
    }
}

/// Builds the parse copy: blanked lines become spaces, lone `\r` becomes `\n`.
fn parse_copy(src: &str, table: &LineTable, blanked: &[bool]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut prev_end = 0;
    for i in 0..table.len() {
        let Some(line) = table.get(i) else { break };
        push_terminator(&mut out, src.get(prev_end..line.start).unwrap_or(""));
        let content = table.content(src, i);
        if blanked.get(i).copied().unwrap_or(false) {
            out.extend(std::iter::repeat_n(' ', content.len()));
        } else {
            out.push_str(content);
        }
        prev_end = line.end;
    }
    push_terminator(&mut out, src.get(prev_end..).unwrap_or(""));
    out
}

fn push_terminator(out: &mut String, term: &str) {
    out.push_str(if term == "\r" { "\n" } else { term });
}

/// Rewrites the code shortcodes of the parse copy as fences
/// ([`templates::code_shortcodes_as_fences`]), lines inside real fences untouched.
fn fence_code_shortcodes(parse: &mut String, table: &LineTable) {
    if !parse.contains("highlight") && !parse.contains("code") {
        return;
    }
    let mut lines: Vec<String> = (0..table.len())
        .map(|i| table.content(parse, i).to_string())
        .collect();
    let in_fence = fenced_lines(lines.iter().map(String::as_str));
    let before = lines.clone();
    templates::code_shortcodes_as_fences(&mut lines, &in_fence);
    for (i, (new, old)) in lines.iter().zip(&before).enumerate() {
        if new != old {
            if let Some(r) = table.get(i) {
                parse.replace_range(r.start..r.start + old.len(), new);
            }
        }
    }
}

/// Replaces HTML comments (`<!-- … -->`, over several lines too), template tags
/// (`{{< … >}}`, `{{% … %}}`, `{% … %}`: [`templates`]) and, in MDX, MDX comments
/// (`{/* … */}`) with spaces in the parse copy (line ends kept), outside fenced code (at
/// any indent: a `<!--` in a code sample inside an admonition must not hide the rest of
/// the document) and inline code spans: comments and template markup are never indexed.
/// The text between Liquid's `{% raw %}` and `{% endraw %}` is literal and kept; a
/// kramdown attribute list (`{: .note}`, [`kramdown`]) is blanked, and so are the tag
/// lines of a `markdown="1"` element, in Markdown only.
/// Returns what include and reference tags point at, with their 1-based lines, and the
/// ids kramdown attribute lines set, with their 0-based lines.
fn blank_comments(parse: &mut String, table: &LineTable, mdx: bool) -> Marks {
    let mut marks = Marks::default();
    let mut bytes = std::mem::take(parse).into_bytes();
    let mut fence: Option<NestedFence> = None;
    let mut open: Option<&'static [u8]> = None;
    // inside `{% raw %}` … `{% endraw %}`: literal text, kept
    let mut raw = false;
    // open kramdown `markdown="1"` elements, by name
    let mut md_blocks: Vec<String> = Vec::new();
    // a Pandoc title block (`% Title` lines from the first line on, a field continued on
    // indented lines) is no MyST comment
    let title_block = (0..table.len())
        .take_while(|&i| {
            table.get(i).is_some_and(|l| {
                let line = &bytes[l.start..l.end];
                let continued = i > 0 && line.starts_with(b" ") && !is_blank_bytes(line);
                line.starts_with(b"%") || continued
            })
        })
        .count();
    for i in 0..table.len() {
        let Some(line) = table.get(i) else { break };
        let text = std::str::from_utf8(&bytes[line.start..line.end]).unwrap_or("");
        if open.is_none() {
            if let Some(f) = fence {
                match f.at(text) {
                    FenceLine::Inside => continue,
                    FenceLine::Closes => {
                        fence = None;
                        continue;
                    }
                    FenceLine::Leaves => fence = None,
                }
            }
            if let Some(f) = NestedFence::open(text) {
                fence = Some(f);
                continue;
            }
            if !mdx && !raw && kramdown_markup(text, &mut marks, &mut md_blocks, i) {
                bytes[line.start..line.end].fill(b' ');
                continue;
            }
            if !raw && myst_markup(text, i < title_block, &mut marks, i) {
                bytes[line.start..line.end].fill(b' ');
                continue;
            }
        }
        // an ATX heading line (its `{: #id }` is the heading's anchor)
        let heading_line = bytes[line.start..line.end]
            .iter()
            .find(|b| **b != b' ')
            .is_some_and(|b| *b == b'#');
        let mut k = line.start;
        while k < line.end {
            if raw {
                match templates::endraw_on_line(&bytes, k, line.end) {
                    Some((at, end)) => {
                        bytes[at..end].fill(b' ');
                        raw = false;
                        k = end;
                    }
                    None => k = line.end,
                }
                continue;
            }
            if let Some(close) = open {
                match find(&bytes[k..line.end], close) {
                    Some(at) => {
                        let end = k + at + close.len();
                        bytes[k..end].fill(b' ');
                        k = end;
                        open = None;
                    }
                    None => {
                        bytes[k..line.end].fill(b' ');
                        k = line.end;
                    }
                }
                continue;
            }
            match bytes[k] {
                b'`' => k = skip_code_span(&bytes[..line.end], k),
                b'<' if bytes[k..line.end].starts_with(b"<!--") => {
                    bytes[k..k + 4].fill(b' ');
                    k += 4;
                    open = Some(b"-->");
                }
                b'{' if !mdx && bytes[k..line.end].starts_with(b"{:") => {
                    match kramdown::span_len_at(&bytes[k..line.end]) {
                        Some(n) => {
                            // `## Title {: #id }`: the id is the heading's anchor
                            let ends_line = is_blank_bytes(&bytes[k + n..line.end]);
                            if ends_line && heading_line {
                                let span = String::from_utf8_lossy(&bytes[k..k + n]);
                                if let Some(id) = kramdown::span_id(&span) {
                                    marks.heading_ids.push((i, id));
                                }
                            }
                            bytes[k..k + n].fill(b' ');
                            k += n;
                        }
                        None => k += 1,
                    }
                }
                b'{' if mdx && bytes[k..line.end].starts_with(b"{/*") => {
                    bytes[k..k + 3].fill(b' ');
                    k += 3;
                    open = Some(b"*/}");
                }
                b'{' => match templates::tag_at(&bytes, k) {
                    Some((close, end)) => {
                        let raw_tag = (end <= line.end)
                            .then(|| templates::raw_tag(&bytes[k..end]))
                            .flatten();
                        if let Some(opens) = raw_tag {
                            raw = opens;
                            bytes[k..end].fill(b' ');
                            k = end;
                            continue;
                        }
                        let tag = String::from_utf8_lossy(&bytes[k..end]);
                        if let Some(target) = templates::pointed_target(&tag) {
                            marks.includes.push((i as u32 + 1, target));
                        }
                        let own = (end <= line.end)
                            .then(|| templates::site_root_path(&tag))
                            .flatten()
                            .filter(|p| p.len() <= end - k);
                        if let Some(path) = own {
                            // `{{ site.baseurl }}/docs/x/`: a path of this site, the tag's
                            // own path (if any) written at its end
                            bytes[k..end].fill(b' ');
                            bytes[end - path.len()..end].copy_from_slice(path.as_bytes());
                            k = end;
                            continue;
                        }
                        if templates::prefixes_a_url(&bytes, k, end) {
                            // `({{ site.repository }}/issues/9)`: the URL is the site
                            // generator's to make; a placeholder scheme keeps it external
                            // (a tag running on to the next line: its first line's part)
                            templates::fill_placeholder_scheme(&mut bytes[k..end.min(line.end)]);
                            if end > line.end {
                                open = Some(close);
                            }
                            k = end.min(line.end);
                            continue;
                        }
                        let opener = end.min(line.end).min(k + 2);
                        bytes[k..opener].fill(b' ');
                        k = opener;
                        open = Some(close);
                    }
                    None => k += 1,
                },
                _ => k += 1,
            }
        }
    }
    // Only ASCII bytes were replaced, by spaces, each of a whole character: still UTF-8.
    *parse = String::from_utf8(bytes).unwrap_or_default();
    marks
}

/// Whether line `i` (`text`) is kramdown markup of its own: an attribute line (its id
/// kept in `marks`) or the opening or closing tag line of a `markdown="1"` element.
fn kramdown_markup(text: &str, marks: &mut Marks, md_blocks: &mut Vec<String>, i: usize) -> bool {
    if kramdown::is_attribute_line(text) {
        if let Some(id) = kramdown::attribute_id(text) {
            marks.attribute_ids.push((i, id));
        }
        return true;
    }
    if let Some(name) = kramdown::markdown_block_open(text) {
        md_blocks.push(name);
        return true;
    }
    if md_blocks
        .last()
        .is_some_and(|n| kramdown::closes_block(text, n))
    {
        md_blocks.pop();
        return true;
    }
    false
}

/// Whether `line` holds only white space.
fn is_blank_bytes(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Whether line `i` (`text`) is MyST block markup of its own: a target `(label)=` (its
/// label kept in `marks`), a comment `% …` (not in a Pandoc title block, `title`), or a
/// block break `+++` (with JSON metadata, whose `label` is a target too).
fn myst_markup(text: &str, title: bool, marks: &mut Marks, i: usize) -> bool {
    if let Some(label) = myst::target(text) {
        marks.targets.push((i, label.to_string()));
        return true;
    }
    if let Some(meta) = myst::block_break(text) {
        if let Some(label) = myst::break_label(meta) {
            marks.targets.push((i, label));
        }
        return true;
    }
    !title && myst::is_comment(text)
}

/// What blanking the parse copy found: include targets, kramdown attribute ids and MyST
/// targets.
#[derive(Default)]
struct Marks {
    includes: Vec<(u32, String)>,
    attribute_ids: Vec<(usize, String)>,
    heading_ids: Vec<(usize, String)>,
    targets: Vec<(usize, String)>,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Marks MDX ESM lines: a top-level line starting with `import ` or `export ` outside a
/// fenced code block, plus its continuation lines while brackets stay open (never past a
/// blank line).
fn mark_mdx_esm(src: &str, table: &LineTable, from: usize, blanked: &mut [bool]) {
    let mut fence: Option<(u8, usize)> = None;
    let mut open_brackets: i64 = 0;
    for (i, slot) in blanked.iter_mut().enumerate().skip(from) {
        let line = table.content(src, i);
        if let Some(f) = fence {
            if closes_fence(line, f) {
                fence = None;
            }
            continue;
        }
        if open_brackets > 0 && !is_blank(line) {
            *slot = true;
            open_brackets += bracket_balance(line);
            continue;
        }
        open_brackets = 0;
        if let Some(f) = opens_fence(line) {
            fence = Some(f);
        } else if line.starts_with("import ") || line.starts_with("export ") {
            *slot = true;
            open_brackets = bracket_balance(line);
        }
    }
}

fn bracket_balance(line: &str) -> i64 {
    line.bytes()
        .map(|b| match b {
            b'{' | b'(' | b'[' => 1,
            b'}' | b')' | b']' => -1,
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str, kind: SourceKind) -> SourceDoc {
        SourceDoc {
            rel_path: "a.md".into(),
            text: text.into(),
            kind,
            title_hint: None,
        }
    }

    #[test]
    fn parse_copy_keeps_offsets_and_normalises_lone_cr() {
        let d = doc("\u{feff}a\rb\r\nc\n\rd", SourceKind::Markdown);
        let p = Prepared::new(&d);
        assert_eq!(p.src, "a\rb\r\nc\n\rd");
        assert_eq!(p.parse, "a\nb\r\nc\n\nd");
        assert_eq!(p.parse.len(), p.src.len());
        assert_eq!(p.table.len(), 5);
    }

    #[test]
    fn comments_are_blanked_outside_code() {
        let text = "a <!-- x --> b\n<!--\nhidden\n-->\n`<!-- code -->` {/* mdx */}\n```\n<!-- fenced -->\n```\n";
        let d = doc(text, SourceKind::Markdown);
        let md = Prepared::new(&d);
        let lines: Vec<&str> = (0..md.table.len())
            .map(|i| md.table.content(&md.parse, i))
            .collect();
        assert_eq!(lines[0], "a            b");
        assert!(lines[1..4].iter().all(|l| l.trim().is_empty()), "{lines:?}");
        assert_eq!(lines[4], "`<!-- code -->` {/* mdx */}");
        assert_eq!(lines[6], "<!-- fenced -->");
        assert_eq!(md.parse.len(), text.len());
        let d = doc(text, SourceKind::Mdx);
        let mdx = Prepared::new(&d);
        assert_eq!(
            mdx.table.content(&mdx.parse, 4),
            "`<!-- code -->`            "
        );
    }

    #[test]
    fn front_matter_is_blanked() {
        let d = doc("---\ntitle: é\n---\n# T\n", SourceKind::Markdown);
        let p = Prepared::new(&d);
        assert_eq!(p.parse, "   \n         \n   \n# T\n");
        assert_eq!(p.blank, vec![true, true, true, false]);
        assert_eq!(p.fm.title.as_deref(), Some("é"));
    }

    #[test]
    fn text_kind_has_no_front_matter() {
        let d = doc("---\ntitle: x\n---\n", SourceKind::Text);
        let p = Prepared::new(&d);
        assert_eq!(p.fm.lines, 0);
        assert_eq!(p.parse, d.text);
    }

    #[test]
    fn mdx_esm_lines_blanked_outside_fences_only() {
        let text = "import A from 'a'\nexport const m = {\n  x: 1,\n}\n# H\n```\nimport B\n```\n  import C\nexport default X\ntext\n";
        let mdx = doc(text, SourceKind::Mdx);
        let p = Prepared::new(&mdx);
        let blanked: Vec<usize> = (0..p.table.len()).filter(|&i| p.blank[i]).collect();
        assert_eq!(blanked, vec![0, 1, 2, 3, 9]);
        assert_eq!(p.parse.len(), text.len());
        // Markdown keeps them.
        let md = doc(text, SourceKind::Markdown);
        let p = Prepared::new(&md);
        assert!(p.blank.iter().all(|b| !b));
    }

    #[test]
    fn fence_detection() {
        assert_eq!(opens_fence("```rust"), Some((b'`', 3)));
        assert_eq!(opens_fence("   ~~~~"), Some((b'~', 4)));
        assert_eq!(opens_fence("    ```"), None);
        let f = NestedFence::open("        ``` diff").unwrap();
        assert_eq!(f.at("        ```"), FenceLine::Closes);
        assert_eq!(f.at("        ``` x"), FenceLine::Inside);
        assert_eq!(
            f.at("            ```"),
            FenceLine::Inside,
            "4 deeper: content"
        );
        assert_eq!(f.at(""), FenceLine::Inside);
        assert_eq!(f.at("    prose"), FenceLine::Leaves, "its container ended");
        // a top-level fence: an indented fence-like line is content, and no line leaves it
        let top = NestedFence::open("```markdown").unwrap();
        assert_eq!(top.at("    ```sh"), FenceLine::Inside);
        assert_eq!(top.at("    ```"), FenceLine::Inside);
        assert_eq!(top.at("```"), FenceLine::Closes);
        assert_eq!(opens_fence("``` a`b"), None);
        assert_eq!(opens_fence("``"), None);
        assert!(closes_fence("````  ", (b'`', 3)));
        assert!(!closes_fence("``", (b'`', 3)));
        assert!(!closes_fence("~~~", (b'`', 3)));
    }

    #[test]
    fn a_pandoc_title_block_is_text_and_later_percent_lines_are_comments() {
        let text = "% Title\n  continued\n% Author\n\n# H\n\n% a comment\n%Y | year\n";
        let d = doc(text, SourceKind::Markdown);
        let p = Prepared::new(&d);
        let line = |i: usize| p.table.content(&p.parse, i).to_string();
        assert_eq!(
            (line(0), line(1), line(2)),
            ("% Title".into(), "  continued".into(), "% Author".into())
        );
        assert!(line(6).trim().is_empty(), "{:?}", line(6));
        assert_eq!(line(7), "%Y | year");
    }

    #[test]
    fn a_tab_indents_a_fence_to_the_next_multiple_of_four_columns() {
        // CommonMark's tab stop: a tab is 4 columns, so a top-level fence line after a
        // tab is indented code, and a nested one is read as spaces would be
        assert_eq!(opens_fence("\t```"), None);
        assert_eq!(opens_fence("  \t```"), None);
        let f = NestedFence::open("\t```sh").unwrap();
        assert_eq!(f, NestedFence::open("    ```sh").unwrap());
        assert_eq!(f.at("\t```"), FenceLine::Closes);
        assert_eq!(f.at("    ```"), FenceLine::Closes);
        assert_eq!(f.at("\t\t```"), FenceLine::Inside, "4 deeper: content");
        assert_eq!(f.at("  prose"), FenceLine::Leaves);
        assert_eq!(f.at("\tcode"), FenceLine::Inside);
        let lines = ["- item", "", "\t```", "\t# comment", "\t```", "after"];
        assert_eq!(
            fenced_lines(lines.into_iter()),
            [false, false, true, true, true, false]
        );
    }
}
