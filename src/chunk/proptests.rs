//! Property tests: arbitrary Markdown-ish documents never panic and always give ordered,
//! non-overlapping chunks that cover every non-blank line outside front matter exactly
//! once, with unique ids and exact source text.

use std::collections::HashSet;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use super::tests::doc;
use super::*;

/// Source lines of `text` (BOM stripped), split independently of `LineTable`.
pub(super) fn source_lines(text: &str) -> Vec<String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<String> = normalised.split('\n').map(str::to_string).collect();
    if normalised.is_empty() || normalised.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// Lines taken by front matter, by the documented rule.
pub(super) fn front_matter_lines(lines: &[String]) -> usize {
    let closers: &[&str] = match lines.first().map(|l| l.trim_end()) {
        Some("---") => &["---", "..."],
        Some("+++") => &["+++"],
        _ => return 0,
    };
    lines
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, l)| closers.contains(&l.trim_end()))
        .map_or(0, |(i, _)| i + 1)
}

fn blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace())
}

/// Checks invariants (b), (d), (e) and, when `coverage`, (c). Returns an error message.
pub(super) fn check(
    text: &str,
    chunks: &[Chunk],
    fm_lines: usize,
    coverage: bool,
) -> Result<(), String> {
    let lines = source_lines(text);
    let mut ids = HashSet::new();
    let mut cover = vec![0usize; lines.len()];
    let mut prev_end = 0u32;
    for c in chunks {
        let (s, e) = (c.start_line as usize, c.end_line as usize);
        if s == 0 || s > e || e > lines.len() || c.start_line <= prev_end {
            return Err(format!("bad range {s}..={e} after {prev_end} in {}", c.id));
        }
        prev_end = c.end_line;
        if !ids.insert(c.id.clone()) {
            return Err(format!("duplicate id {}", c.id));
        }
        if c.text != lines[s - 1..e].join("\n") {
            return Err(format!("text mismatch in {}: {:?}", c.id, c.text));
        }
        if blank(&lines[s - 1]) || blank(&lines[e - 1]) || s <= fm_lines {
            return Err(format!(
                "chunk {} starts/ends on a blank or front-matter line",
                c.id
            ));
        }
        cover[s - 1..e].iter_mut().for_each(|n| *n += 1);
    }
    if coverage {
        for (i, line) in lines.iter().enumerate().skip(fm_lines) {
            if !blank(line) && cover[i] != 1 {
                return Err(format!("line {} covered {} times", i + 1, cover[i]));
            }
        }
    }
    Ok(())
}

const SHAPES: &[&str] = &[
    "# Title",
    "## Sub `code`",
    "### Deep",
    "#",
    "Para text with snake_case",
    "more *text* here",
    "",
    "",
    "   ",
    "\t",
    "```",
    "```rust",
    "~~~",
    "---",
    "===",
    "+++",
    "title: x",
    "- item",
    "1. item",
    "> quote",
    "> # quoted heading",
    "    indented",
    "<div>",
    "</div>",
    "<!-- c -->",
    "[ref]: http://x",
    "| a | b |",
    "|---|---|",
    "Ünï ✓ text",
    "<Note>",
    "import a from 'b'",
    "export const x = {",
    "}",
];
/// Mostly LF, sometimes CRLF or lone CR.
const ENDINGS: &[&str] = &["\n", "\n", "\n", "\r\n", "\r"];

fn markdownish() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::collection::vec((0..SHAPES.len(), 0..ENDINGS.len()), 0..40),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, final_ending)| {
            let mut s = if bom {
                "\u{feff}".to_string()
            } else {
                String::new()
            };
            let n = lines.len();
            for (i, (shape, ending)) in lines.into_iter().enumerate() {
                s.push_str(SHAPES[shape]);
                if i + 1 < n || final_ending {
                    s.push_str(ENDINGS[ending]);
                }
            }
            s
        })
}

/// Lines of admonition, tab and container documents (mkdocs, Docusaurus).
const CONTAINER_SHAPES: &[&str] = &[
    "!!! note \"Title\"",
    "??? tip",
    "???+ warning \"Open\"",
    "=== \"Tab A\"",
    "    Indented body line with words.",
    "    - indented item",
    "",
    "",
    "Plain paragraph of prose here.",
    ":::note",
    ":::tip Title",
    ":::",
    "/// tip | Title",
    "///",
    "//// tab | Python",
    "////",
    "::: pkg.module.Name",
    "## Heading",
    "```",
    "{% hint style=\"info\" %}",
    "{% endhint %}",
    "<Tabs>",
    "</Tabs>",
];

fn containerish() -> impl Strategy<Value = String> {
    prop::collection::vec(0..CONTAINER_SHAPES.len(), 0..40).prop_map(|lines| {
        lines
            .into_iter()
            .map(|i| CONTAINER_SHAPES[i])
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Lines of list documents: items, nested items, continuations and fences in items.
const LIST_SHAPES: &[&str] = &[
    "- item with some words in it",
    "* star item with words",
    "1. numbered item with words",
    "2) other numbered item",
    "  continuation line of the item",
    "  - nested item",
    "    - deeper nested item",
    "  ```",
    "  code inside an item",
    "",
    "",
    "Paragraph between lists.",
    "## Heading",
];

fn listish() -> impl Strategy<Value = String> {
    prop::collection::vec(0..LIST_SHAPES.len(), 0..80).prop_map(|lines| {
        let mut s: String = lines
            .into_iter()
            .map(|i| LIST_SHAPES[i])
            .collect::<Vec<_>>()
            .join("\n");
        s.push('\n');
        s
    })
}

/// 1-based line spans (first, last non-blank) of the top-level list items of `text`,
/// as pulldown-cmark parses it (an oracle independent of the chunker's own walk).
fn top_level_items(text: &str) -> Vec<(usize, usize)> {
    use pulldown_cmark::{Event, Parser, Tag};
    let line_of = |off: usize| text[..off].matches('\n').count() + 1;
    let mut depth = 0usize;
    let mut list_at_top = false;
    let mut out = Vec::new();
    for (event, range) in Parser::new_ext(text, crate::chunk::cmark::options()).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    list_at_top = matches!(tag, Tag::List(_));
                }
                if depth == 1 && list_at_top && matches!(tag, Tag::Item) {
                    let body = text[range.clone()].trim_end();
                    out.push((
                        line_of(range.start),
                        line_of(range.start + body.len().max(1) - 1),
                    ));
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out
}

/// True for an admonition, tab or container opener line.
fn opener(line: &str) -> bool {
    let t = line.trim_start();
    ["!!! ", "??? ", "???+ ", "=== \""]
        .iter()
        .any(|p| t.starts_with(p))
        || (t.starts_with(":::") && !t.trim_start_matches(':').trim().is_empty())
            && !super::markers::is_autodoc(t)
        || super::markers::slash_block(line).is_some_and(|(_, opens)| opens)
}

fn run(text: &str, kind: SourceKind, max_tokens: usize) -> Vec<Chunk> {
    chunk_document(&doc(text, kind), &ChunkerConfig { max_tokens })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        // Failing seeds go to src/chunk/proptests.proptest-regressions.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn markdown_invariants(text in markdownish(), max_tokens in 0usize..80) {
        let fm = front_matter_lines(&source_lines(&text));
        let chunks = run(&text, SourceKind::Markdown, max_tokens);
        prop_assert_eq!(check(&text, &chunks, fm, true), Ok(()));
        for c in &chunks {
            prop_assert!(c.id.starts_with("doc.md#"));
            prop_assert_eq!(c.kind == ChunkKind::Preamble, c.heading_path.is_empty());
        }
    }

    #[test]
    fn text_invariants(text in markdownish(), max_tokens in 0usize..80) {
        let chunks = run(&text, SourceKind::Text, max_tokens);
        prop_assert_eq!(check(&text, &chunks, 0, true), Ok(()));
        prop_assert!(chunks.iter().all(|c| c.body == c.text));
    }

    #[test]
    fn mdx_invariants(text in markdownish(), max_tokens in 0usize..80) {
        let fm = front_matter_lines(&source_lines(&text));
        let chunks = run(&text, SourceKind::Mdx, max_tokens);
        // ESM lines count as blank for MDX, so coverage is not checked here.
        prop_assert_eq!(check(&text, &chunks, fm, false), Ok(()));
    }

    #[test]
    fn no_piece_ends_on_a_marker_or_parts_a_marker_from_its_body(text in containerish(), max_tokens in 0usize..40) {
        let chunks = run(&text, SourceKind::Markdown, max_tokens);
        prop_assert_eq!(check(&text, &chunks, 0, true), Ok(()));
        let lines = source_lines(&text);
        let in_code = fence_lines(&lines);
        let chunk_of = |line: usize| chunks.iter().position(|c| (c.start_line as usize..=c.end_line as usize).contains(&line));
        for c in &chunks {
            let last = c.end_line as usize;
            // the next line of the same section (a heading starts another one)
            let next = (last..lines.len())
                .find(|&i| !blank(&lines[i]))
                .filter(|&i| !lines[i].starts_with('#'));
            if opener(&lines[last - 1]) && !in_code[last - 1] {
                prop_assert!(next.is_none(), "{} ends on the marker line {last}: {:?}", c.id, lines[last - 1]);
            }
        }
        for (i, l) in lines.iter().enumerate() {
            if !opener(l) || in_code[i] {
                continue;
            }
            let body = (i + 1..lines.len())
                .find(|&j| !blank(&lines[j]))
                .filter(|&j| !lines[j].starts_with('#'));
            if let Some(body) = body {
                prop_assert_eq!(chunk_of(i + 1), chunk_of(body + 1), "marker at line {} and its body at {}", i + 1, body + 1);
            }
        }
    }

    #[test]
    fn no_cut_falls_inside_a_top_level_list_item(text in listish(), max_tokens in 0usize..30) {
        let chunks = run(&text, SourceKind::Markdown, max_tokens);
        prop_assert_eq!(check(&text, &chunks, 0, true), Ok(()));
        for (first, last) in top_level_items(&text) {
            for c in &chunks {
                let (s, e) = (c.start_line as usize, c.end_line as usize);
                prop_assert!(!(first < s && s <= last), "{} starts at {s} inside the item {first}..={last}", c.id);
                prop_assert!(!(first <= e && e < last), "{} ends at {e} inside the item {first}..={last}", c.id);
            }
        }
    }

    #[test]
    fn one_parse_gives_the_chunks_and_links_of_two(text in markdownish(), max_tokens in 0usize..80) {
        for kind in [SourceKind::Markdown, SourceKind::Mdx, SourceKind::Text] {
            let d = doc(&text, kind);
            let cfg = ChunkerConfig { max_tokens };
            let one = crate::chunk::chunk_document_with_links(&d, &cfg);
            prop_assert_eq!(one.chunks, chunk_document(&d, &cfg));
            prop_assert_eq!(one.links, crate::chunk::doc_links(&d));
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "(?s).{0,300}", max_tokens in 0usize..40) {
        for kind in [SourceKind::Markdown, SourceKind::Mdx, SourceKind::Text] {
            let chunks = run(&text, kind, max_tokens);
            prop_assert_eq!(check(&text, &chunks, 0, false), Ok(()));
        }
    }
}

/// Lines inside fenced code (a marker there is code, not a marker).
fn fence_lines(lines: &[String]) -> Vec<bool> {
    let mut open = false;
    lines
        .iter()
        .map(|l| {
            let fence = l.trim_start().starts_with("```");
            let inside = open || fence;
            if fence {
                open = !open;
            }
            inside
        })
        .collect()
}

#[test]
fn checker_finds_front_matter() {
    let lines = source_lines("---\r\na: 1\r\n...\r\nx");
    assert_eq!(lines, vec!["---", "a: 1", "...", "x"]);
    assert_eq!(front_matter_lines(&lines), 3);
    assert_eq!(front_matter_lines(&source_lines("+++\n+++")), 2);
    assert_eq!(front_matter_lines(&source_lines("---\nx")), 0);
}
