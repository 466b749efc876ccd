//! End-to-end tests of `chunk_document`, one per document shape.

use super::*;

pub(super) fn doc(text: &str, kind: SourceKind) -> SourceDoc {
    SourceDoc {
        rel_path: "doc.md".into(),
        text: text.into(),
        kind,
        title_hint: None,
    }
}

pub(super) fn md(text: &str) -> Vec<Chunk> {
    chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default())
}

/// (id, start_line, end_line) of every chunk.
fn spans(chunks: &[Chunk]) -> Vec<(&str, u32, u32)> {
    chunks
        .iter()
        .map(|c| (c.id.as_str(), c.start_line, c.end_line))
        .collect()
}

fn paths(chunks: &[Chunk]) -> Vec<Vec<&str>> {
    chunks
        .iter()
        .map(|c| c.heading_path.iter().map(String::as_str).collect())
        .collect()
}

#[test]
fn preamble_and_sections_with_exact_lines() {
    let c = md("Intro line\nmore\n\n# One\n\nPara one.\n\n\n## Two\ntext\n\n");
    assert_eq!(
        spans(&c),
        vec![
            ("doc.md#_preamble", 1, 2),
            ("doc.md#one", 4, 6),
            ("doc.md#one/two", 9, 10)
        ]
    );
    assert_eq!(c[0].kind, ChunkKind::Preamble);
    assert!(c[0].heading_path.is_empty());
    assert_eq!(c[1].kind, ChunkKind::Section);
    assert_eq!(c[1].text, "# One\n\nPara one.");
    assert_eq!(c[1].body, "Para one.");
    assert_eq!(c[1].summary, "Para one.");
    assert_eq!(c[2].text, "## Two\ntext");
    assert_eq!(c[0].title, "One");
}

#[test]
fn blank_preamble_is_not_a_chunk() {
    let c = md("\n  \n\t\n# Only\n");
    assert_eq!(spans(&c), vec![("doc.md#only", 4, 4)]);
    assert!(md("").is_empty());
    assert!(md("\n\r\n \r").is_empty());
}

#[test]
fn nested_heading_paths_follow_the_level_stack() {
    let c = md("# A\n## B\n### C\n## D\n#### E\n# F\n### G\n");
    assert_eq!(
        paths(&c),
        // headings without prose of their own are merged into their first child
        vec![vec!["A", "B", "C"], vec!["A", "D", "E"], vec!["F", "G"],]
    );
    assert_eq!(c[1].id, "doc.md#a/d/e");
    assert_eq!(c[2].id, "doc.md#f/g");
    assert_eq!((c[0].start_line, c[1].start_line), (1, 4));
}

#[test]
fn heading_text_is_plain_text() {
    let c = md("## `Rc<T>`, the *Reference-Counted* __Smart__ [Pointer](x)\n\nBody `Rc<T>`.\n");
    assert_eq!(
        c[0].heading_path,
        vec!["Rc<T>, the Reference-Counted Smart Pointer"]
    );
    assert_eq!(c[0].id, "doc.md#rct-the-reference-counted-smart-pointer");
    assert_eq!(c[0].body, "Body Rc<T>.");
    assert_eq!(c[0].symbols, vec!["Rc<T>"]);
}

#[test]
fn setext_headings_start_at_their_text_line() {
    let c = md("Title\n=====\n\nIntro.\n\nSub part\n--------\nmore\n");
    assert_eq!(
        spans(&c),
        vec![("doc.md#title", 1, 4), ("doc.md#title/sub-part", 6, 8)]
    );
    assert_eq!(paths(&c)[1], vec!["Title", "Sub part"]);
    assert_eq!(c[1].text, "Sub part\n--------\nmore");
    assert_eq!(c[1].body, "more");
    assert_eq!(c[0].title, "Title");
}

#[test]
fn hash_lines_in_fences_and_html_blocks_are_not_headings() {
    let text = "# Real\n\n```sh\n# comment\n## also not\n```\n\n<div>\n# inside html\n</div>\n\n~~~\n# tilde\n~~~\n";
    let c = md(text);
    assert_eq!(spans(&c), vec![("doc.md#real", 1, 14)]);
    assert!(c[0].body.contains("# comment\n## also not"));
    assert!(c[0].body.contains("# inside html"));
    assert!(!c[0].body.contains("<div>"));
    assert_eq!(c[0].summary, "");
}

#[test]
fn heading_only_sections_merge_into_their_first_child() {
    // A has no prose: it joins B; B has none either and C is not its child: B stays
    let c = md("# A\n## B\n\n## C\nx\n");
    assert_eq!(spans(&c), vec![("doc.md#a/b", 1, 2), ("doc.md#a/c", 4, 5)]);
    assert_eq!(c[0].text, "# A\n## B");
    assert_eq!(c[0].body, "");
    assert_eq!(c[1].text, "## C\nx");
}

#[test]
fn a_heading_inside_a_box_heads_only_the_box() {
    // a GitBook hint, a stepper of steps and a `:::note` each hold a heading; the text
    // after each box goes on the section the box is in (more pieces of it), and the
    // heading after the stepper is no child of its last step
    let text = "# Channels\n\nIntro.\n\n{% hint style=\"warning\" %}\n#### Early access\nRolling out.\n{% endhint %}\nAfter the hint.\n\n\
                ## Setup\n\nInstall.\n\n{% stepper %}\n{% step %}\n### Create\n\nMake a bot.\n{% endstep %}\n{% step %}\n### Invite\n\nInvite it.\n{% endstep %}\n{% endstepper %}\n\nAfter the steps.\n\n\
                :::note\n## Inside\nnote text\n:::\n\nAfter the note.\n\n#### Later\n\nMore.\n";
    let c = md(text);
    assert_eq!(
        spans(&c),
        vec![
            ("doc.md#channels", 1, 5),
            ("doc.md#channels/early-access", 6, 8),
            ("doc.md#channels~2", 9, 9),
            ("doc.md#channels/setup", 11, 16),
            ("doc.md#channels/setup/create", 17, 21),
            ("doc.md#channels/setup/invite", 22, 26),
            ("doc.md#channels/setup~2", 28, 30),
            ("doc.md#channels/inside", 31, 33),
            ("doc.md#channels/setup~3", 35, 35),
            ("doc.md#channels/setup/later", 37, 39),
        ]
    );
    assert_eq!(c[2].heading_path, ["Channels"]);
    assert_eq!(c[6].heading_path, ["Channels", "Setup"]);
    assert_eq!(c[9].heading_path, ["Channels", "Setup", "Later"]);
    assert!(c[2].body.contains("After the hint"));
    // boxes closing together go on under the outermost one's heading stack; a closer
    // alone on its line (`:::`, `</Tabs>`) stays with its box
    let nested = md("## Install\n\nPick one.\n{% tabs %}\n{% tab %}\n### Linux\n{% hint %}\n#### Note\nx\n{% endhint %}\n{% endtab %}\n{% endtabs %}\nAfter.\n\n<Tabs>\n<TabItem>\n\n### Mac\n\ny\n\n</TabItem>\n</Tabs>\n\nLater.\n");
    assert_eq!(
        spans(&nested),
        vec![
            ("doc.md#install", 1, 5),
            ("doc.md#install/linux/note", 6, 12),
            ("doc.md#install~2", 13, 16),
            ("doc.md#install/mac", 18, 23),
            ("doc.md#install~3", 25, 25),
        ]
    );
    assert_eq!(nested[2].heading_path, ["Install"]);
    // without a heading inside, a box changes nothing; `{% if %}` is no box
    let plain = md("# A\n\n{% hint %}\nx\n{% endhint %}\ny\n\n{% if a %}\n## B\n{% endif %}\nz\n");
    assert_eq!(
        spans(&plain),
        vec![("doc.md#a", 1, 8), ("doc.md#a/b", 9, 11)]
    );
}

#[test]
fn repeated_headings_are_numbered_page_wide_and_summaries_are_anchors() {
    // GitHub numbers a slug's repeats over the whole page, whatever the level: the third
    // `Setup` (an h3 under the second) is `#setup-2`; GitBook writes `#id-1.-install`
    // for `1. Install`; a `<summary>` line of a `<details>` block is an anchor
    let text = "# Guide\n\n## Setup\n\nOne.\n\n## Setup\n\nTwo.\n\n### `Setup`\n\nThree.\n\n\
                ## 1. Install\n\nRun it.\n\n<details>\n<summary>Admin **role**</summary>\n\nAdmins do all.\n\n</details>\n";
    let c = crate::chunk::chunk_document_with_links(
        &doc(text, SourceKind::Markdown),
        &ChunkerConfig::default(),
    );
    let ids: Vec<&str> = c.chunks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "doc.md#guide/setup",
            "doc.md#guide/setup-1",
            "doc.md#guide/setup/setup",
            "doc.md#guide/1-install"
        ]
    );
    let named = |a: &str| {
        c.anchors
            .iter()
            .find(|(x, _)| x == a)
            .map(|(_, s)| s.as_str())
    };
    assert_eq!(named("setup-2"), Some("doc.md#guide/setup/setup"));
    assert_eq!(named("id-1.-install"), Some("doc.md#guide/1-install"));
    assert_eq!(named("admin-role"), Some("doc.md#guide/1-install"));
    // a section's own slug is no alias, and the first `Setup` keeps `#setup`
    assert_eq!(named("setup-1"), None);
    assert_eq!(named("setup"), None);
}

#[test]
fn attr_list_ids_become_anchors() {
    let c = md("# Changelog\n\n### 9.7.0 { id=\"9.7.0\" }\n\nText.\n\n## Nav { id=nav-path .x }\n\nMore.\n");
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["doc.md#changelog/9.7.0", "doc.md#changelog/nav-path"]);
    assert_eq!(c[0].heading_path, ["Changelog", "9.7.0"]);
}

#[test]
fn heading_attributes_become_anchors_and_comments_are_not_indexed() {
    let c = md("# Guide {#top}\n\n## Install { #setup .note }\n\nRun it. <!-- secret-note -->\n<!--\nmore-secret\n-->\nDone.\n\n#### <!-- md:setting config.enabled -->\n\nText.\n");
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    // `Guide` has no prose of its own: it joins `Install`
    assert_eq!(
        ids,
        [
            "doc.md#top/setup",
            "doc.md#top/setup/mdsetting-configenabled"
        ]
    );
    assert_eq!(c[0].heading_path, ["Guide", "Install"]);
    assert_eq!(c[0].title, "Guide");
    assert!(!c[0].body.contains("secret"), "{}", c[0].body);
    assert_eq!(c[0].body, "Run it.\nDone.");
    assert_eq!(
        (c[0].start_line, c[0].end_line),
        (1, 9),
        "comment lines stay in the span"
    );
    assert_eq!(c[1].heading_path[2], "md:setting config.enabled");
}

#[test]
fn a_comment_opener_in_code_nested_in_a_tab_hides_nothing_after_it() {
    // mkdocs content tabs holding fenced diffs (indented 4); the first diff has a `<!--`
    // that never closes in it, as an HTML template diff often does
    let text = "# Upgrade\n\nIntro text.\n\n=== \"base.html\"\n\n    ``` diff\n    -  <!--\n    +  basenew\n    ```\n\n=== \"footer.html\"\n\n    ``` diff\n    +  footerword\n    ```\n\nAfter the tabs, closingword prose. <!-- realcomment -->\n";
    for max_tokens in [8, 256] {
        let c = chunk_document(
            &doc(text, SourceKind::Markdown),
            &ChunkerConfig { max_tokens },
        );
        let all: String = c
            .iter()
            .map(|c| c.body.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for word in ["basenew", "footerword", "closingword"] {
            assert!(
                all.contains(word),
                "{max_tokens}: `{word}` is indexed: {all}"
            );
        }
        assert!(!all.contains("realcomment"), "{all}");
        for ch in &c {
            let lines: Vec<&str> = ch.text.lines().filter(|l| !l.trim().is_empty()).collect();
            assert!(
                !(lines.len() == 1 && lines[0].starts_with("===")),
                "{max_tokens}: a piece of only a tab marker: {:?}",
                ch.text
            );
        }
    }
    // a fence-like line deeper inside a fence is content, not its closer; an unclosed
    // fence nested in an admonition ends with the admonition
    for (text, hidden, kept) in [
        (
            "# A\n\n```markdown\n1. Install:\n    ```sh\n    pip install x\n    ```\n```\n\nProse <!-- hiddenone --> here.\n\n```html\n<!--\n```\n\nAfter code, keptword.\n",
            "hiddenone",
            "keptword",
        ),
        (
            "# B\n\n!!! note\n\n    ```\n    x\n\nProse keptword. <!-- hiddenone -->\n",
            "hiddenone",
            "keptword",
        ),
    ] {
        let c = chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default());
        let all: String = c.iter().map(|c| c.body.as_str()).collect::<Vec<_>>().join("\n");
        assert!(all.contains(kept) && !all.contains(hidden), "{text:?}: {all}");
        let shown: Vec<String> = display::visible_lines(text).into_iter().flatten().collect();
        assert!(!shown.iter().any(|l| l.contains(hidden)), "{shown:?}");
    }
    // the snippet side agrees: lines after the diff are shown
    let shown = display::visible_lines(text);
    assert_eq!(shown[14].as_deref(), Some("    +  footerword"));
    assert_eq!(
        shown[17].as_deref().map(str::trim),
        Some("After the tabs, closingword prose.")
    );
}

#[test]
fn mdx_comments_are_not_indexed() {
    let c = chunk_document(
        &doc("# T\n\nkept {/* dropped-word */} text\n", SourceKind::Mdx),
        &ChunkerConfig::default(),
    );
    assert!(!c[0].body.contains("dropped"), "{}", c[0].body);
    assert_eq!(fields::collapse_ws(&c[0].body), "kept text");
}

#[test]
fn duplicate_headings_get_distinct_ids() {
    let c = md("## Usage\none\n## Usage\ntwo\n## Usage\nthree\n## Usage 2\nfour\n");
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "doc.md#usage",
            "doc.md#usage-1",
            "doc.md#usage-2",
            "doc.md#usage-2-1"
        ]
    );
    assert_eq!(c[1].body, "two");
    assert_eq!(c[1].start_line, 3);
}

#[test]
fn yaml_front_matter_is_skipped_and_read() {
    let text = "---\ntitle: Install Guide\naliases: [setup]\ntags:\n  - cli\n  - setup\n---\n\nIntro\n# Heading\n";
    let c = md(text);
    assert_eq!(
        spans(&c),
        vec![("doc.md#_preamble", 9, 9), ("doc.md#heading", 10, 10)]
    );
    for chunk in &c {
        assert_eq!(chunk.title, "Install Guide");
        assert_eq!(chunk.aliases, vec!["setup", "cli"]);
        assert!(!chunk.text.contains("title:"));
        assert!(!chunk.body.contains("title"));
    }
}

#[test]
fn toml_front_matter_is_skipped_and_read() {
    let c = md("+++\ntitle = \"Config\"\ntags = \"toml\"\n+++\n# Top\nbody\n");
    assert_eq!(spans(&c), vec![("doc.md#top", 5, 6)]);
    assert_eq!(c[0].title, "Config");
    assert_eq!(c[0].aliases, vec!["toml"]);
}

#[test]
fn malformed_front_matter_lines_still_skipped() {
    let c = md("---\ntitle: [oops\n  - : -\n---\n# H1 Title\nx\n");
    assert_eq!(spans(&c), vec![("doc.md#h1-title", 5, 6)]);
    assert_eq!(c[0].title, "H1 Title");
    assert!(c[0].aliases.is_empty());
    // Front matter with no heading after it: no chunk at all.
    assert!(md("---\na: 1\n---\n\n").is_empty());
}

#[test]
fn title_fallbacks() {
    let cfg = ChunkerConfig::default();
    let mut d = doc(
        "---\ntitle: From FM\n---\n# From H1\n",
        SourceKind::Markdown,
    );
    d.title_hint = Some("From hint".into());
    assert_eq!(chunk_document(&d, &cfg)[0].title, "From hint");
    d.title_hint = Some("  ".into());
    assert_eq!(chunk_document(&d, &cfg)[0].title, "From FM");
    d.text = "## Not H1\n# From H1\n".into();
    assert_eq!(chunk_document(&d, &cfg)[0].title, "From H1");
    d.text = "## Only H2\n".into();
    d.rel_path = "guide/install.md".into();
    let c = chunk_document(&d, &cfg);
    assert_eq!(c[0].title, "install");
    assert!(c[0].title_from_stem);
    assert_eq!(c[0].id, "guide/install.md#only-h2");
    // a written title equal to the stem is still written
    d.text = "---\ntitle: install\n---\n## Only H2\n".into();
    let c = chunk_document(&d, &cfg);
    assert_eq!(c[0].title, "install");
    assert!(!c[0].title_from_stem);
}

#[test]
fn bom_is_ignored() {
    let c = md("\u{feff}# Title\nline two\n");
    assert_eq!(spans(&c), vec![("doc.md#title", 1, 2)]);
    assert_eq!(c[0].text, "# Title\nline two");
    let c = md("\u{feff}---\ntitle: T\n---\n# H\n");
    assert_eq!(c[0].title, "T");
    assert_eq!(c[0].start_line, 4);
}

#[test]
fn crlf_line_numbers_and_text() {
    let c = md("Pre\r\n\r\n# A\r\nalpha\r\n\r\n## B\r\n```\r\n# x\r\n```\r\n");
    assert_eq!(
        spans(&c),
        vec![
            ("doc.md#_preamble", 1, 1),
            ("doc.md#a", 3, 4),
            ("doc.md#a/b", 6, 9)
        ]
    );
    assert_eq!(c[1].text, "# A\nalpha");
    assert_eq!(c[2].text, "## B\n```\n# x\n```");
    assert_eq!(c[2].body, "# x");
    assert!(c
        .iter()
        .all(|c| !c.text.contains('\r') && !c.body.contains('\r')));
}

#[test]
fn lone_cr_line_numbers() {
    let c = md("Pre\r\r# A\ralpha\r\rSetext\r---\r```\r# x\r```\r");
    assert_eq!(
        spans(&c),
        vec![
            ("doc.md#_preamble", 1, 1),
            ("doc.md#a", 3, 4),
            ("doc.md#a/setext", 6, 10)
        ]
    );
    assert_eq!(c[1].text, "# A\nalpha");
    assert_eq!(c[2].body, "# x");
    // Mixed endings.
    let c = md("# A\r\nx\ry\n# B\rz");
    assert_eq!(spans(&c), vec![("doc.md#a", 1, 3), ("doc.md#b", 4, 5)]);
}

/// Why the parse copy turns lone CRs into LFs: pulldown-cmark 0.13.6 fed lone CRs sees
/// `# no` inside the fence as a heading (heading starts `[0, 10]`); the normalised copy
/// parses exactly like the LF text.
#[test]
fn parser_on_lone_cr_matches_lf_after_normalisation() {
    use pulldown_cmark::{Event, Parser, Tag};
    let heading_starts = |s: &str| -> Vec<usize> {
        Parser::new_ext(s, cmark::options())
            .into_offset_iter()
            .filter(|(e, _)| matches!(e, Event::Start(Tag::Heading { .. })))
            .map(|(_, r)| r.start)
            .collect()
    };
    let lf = "# A\nx\n```\n# no\n```\n# B\n";
    assert_eq!(heading_starts(lf), vec![0, 19]);
    let cr_doc = doc(&lf.replace('\n', "\r"), SourceKind::Markdown);
    let raw = heading_starts(&cr_doc.text);
    if raw != [0, 19] {
        eprintln!("pulldown-cmark mishandles lone CR: heading starts {raw:?}");
    }
    let prepared = source::Prepared::new(&cr_doc);
    assert_eq!(prepared.parse, lf);
    assert_eq!(heading_starts(&prepared.parse), vec![0, 19]);
}

#[test]
fn mdx_esm_and_jsx() {
    let text = "import { Tabs, Tab } from '@site/tabs'\nexport const meta = {\n  title: 'x',\n}\n\n# Install\n\n<Tabs>\n  <Tab label=\"npm\">\n    Run the installer\n  </Tab>\n</Tabs>\n\nUse <Kbd>Ctrl</Kbd> to copy.\n\n```js\nimport x from 'y'\n```\n";
    let c = chunk_document(&doc(text, SourceKind::Mdx), &ChunkerConfig::default());
    assert_eq!(spans(&c), vec![("doc.md#install", 6, 18)]);
    let body = &c[0].body;
    assert!(body.contains("Run the installer"), "{body}");
    assert!(body.contains("Use Ctrl to copy."), "{body}");
    assert!(
        body.contains("import x from 'y'"),
        "fenced import kept: {body}"
    );
    assert!(!body.contains('<') && !body.contains("Tabs"), "{body}");
    assert_eq!(c[0].summary, "Use Ctrl to copy.");
    // The same text as Markdown keeps the import lines as a preamble.
    let c = md(text);
    assert_eq!(c[0].id, "doc.md#_preamble");
    assert_eq!((c[0].start_line, c[0].end_line), (1, 4));
}

#[test]
fn text_kind_is_one_preamble_cut_at_blank_lines() {
    let mut d = doc(
        "\n# not a heading\nuse snake_case\n\nsecond para\n",
        SourceKind::Text,
    );
    d.rel_path = "notes/a.txt".into();
    let c = chunk_document(&d, &ChunkerConfig::default());
    assert_eq!(spans(&c), vec![("notes/a.txt#_preamble", 2, 5)]);
    assert_eq!(c[0].kind, ChunkKind::Preamble);
    assert_eq!(c[0].body, "# not a heading\nuse snake_case\n\nsecond para");
    assert_eq!(c[0].summary, "# not a heading use snake_case");
    assert_eq!(c[0].symbols, vec!["snake_case"]);
    assert_eq!(c[0].title, "a");
    let c = chunk_document(&d, &ChunkerConfig { max_tokens: 8 });
    assert_eq!(
        spans(&c),
        vec![
            ("notes/a.txt#_preamble", 2, 3),
            ("notes/a.txt#_preamble~2", 5, 5)
        ]
    );
    assert_eq!(c[1].summary, "second para");
}

#[test]
fn fields_body_summary_symbols() {
    let text = "# API\n\nCall `HashMap::new` then use or_insert() on the `Entry`.\nSee Rc::strong_count and isEmpty.\n\n- item with snake_case\n\n```rust\nlet not_a_symbol = 1;\n```\n\n<span>html_inline</span> text\n\nSecond paragraph.\n";
    let c = md(text);
    assert_eq!(c.len(), 1);
    assert_eq!(
        c[0].summary,
        "Call HashMap::new then use or_insert() on the Entry. See Rc::strong_count and isEmpty."
    );
    assert_eq!(
        c[0].symbols,
        vec![
            "HashMap::new",
            "or_insert()",
            "Entry",
            "Rc::strong_count",
            "isEmpty",
            "snake_case",
            "html_inline"
        ]
    );
    assert!(c[0].body.starts_with("Call HashMap::new then use"));
    assert!(c[0].body.contains("let not_a_symbol = 1;"));
    assert!(!c[0].body.contains("API"));
    assert!(!c[0].body.contains("span"));
    assert!(c[0].body.ends_with("Second paragraph."));
}

#[test]
fn symbols_are_capped() {
    let words: Vec<String> = (0..100).map(|i| format!("`sym{i}`")).collect();
    let c = md(&format!("# S\n\n{}\n", words.join(" ")));
    assert_eq!(c[0].symbols.len(), 64);
    assert_eq!(c[0].symbols[63], "sym63");
}

#[test]
fn pathological_inputs_stay_fast_and_sound() {
    let many = "## Same\nx\n".repeat(5000);
    let c = md(&many);
    assert_eq!(c.len(), 5000);
    assert_eq!(c[4999].id, "doc.md#same-4999");
    let ids: std::collections::HashSet<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 5000);
    for text in [
        ">".repeat(20_000),
        "<".repeat(50_000),
        "<a \"".repeat(10_000),
        "- ".repeat(10_000),
        "[".repeat(20_000),
        "*a".repeat(20_000),
        "`".repeat(20_000),
        "{:".repeat(50_000),
        "{: .x ".repeat(10_000),
        format!("{}}}", "{: a=\"".repeat(10_000)),
        format!("---\n{}\n---\n", "[".repeat(20_000)),
        format!("+++\n{}\n+++\n", "a = [".repeat(20_000)),
    ] {
        for kind in [SourceKind::Markdown, SourceKind::Mdx, SourceKind::Text] {
            let chunks = chunk_document(&doc(&text, kind), &ChunkerConfig { max_tokens: 8 });
            assert!(chunks.len() <= 3, "{kind:?}");
            // what is shown of them is read in linear time too, and never panics
            assert_eq!(display::visible_lines(&text).len(), text.lines().count());
        }
    }
}

#[test]
fn jekyll_and_hugo_permalinks_are_routes_of_the_page() {
    let doc = SourceDoc {
        rel_path: "_docs/history.md".into(),
        text: "---\ntitle: History\npermalink: \"/docs/history/\"\nredirect_from:\n  - /docs/changelog/\n  - /history.html\n---\n# H\n\nText.\n".into(),
        kind: SourceKind::Markdown,
        title_hint: None,
    };
    let c = crate::chunk::chunk_document_with_links(&doc, &ChunkerConfig::default());
    assert_eq!(c.routes, ["docs/history", "docs/changelog", "history.html"]);
    let hugo = SourceDoc {
        text: "+++\nurl = \"/about/us/\"\naliases = [\"/old-about/\", \"us\"]\n+++\n# About\n"
            .into(),
        ..doc.clone()
    };
    let c = crate::chunk::chunk_document_with_links(&hugo, &ChunkerConfig::default());
    assert_eq!(c.routes, ["about/us", "old-about"]);
    let pattern = SourceDoc {
        text: "---\npermalink: /:categories/:year/:title/\nurl: https://example.com/x\n---\n# P\n"
            .into(),
        ..doc
    };
    let c = crate::chunk::chunk_document_with_links(&pattern, &ChunkerConfig::default());
    assert!(c.routes.is_empty(), "{:?}", c.routes);
}

#[test]
fn docusaurus_slug_and_id_are_routes_of_the_page() {
    let doc = SourceDoc {
        rel_path: "guide/02-install.mdx".into(),
        text: "---\nslug: /getting-started\nid: install\nsidebar_label: Installing\n---\n# Install\n\nText.\n".into(),
        kind: SourceKind::Mdx,
        title_hint: None,
    };
    let c = crate::chunk::chunk_document_with_links(&doc, &ChunkerConfig::default());
    assert_eq!(c.routes, ["getting-started", "guide/install"]);
    assert_eq!(c.names, ["Install", "Installing"]);
    let rel = SourceDoc {
        text: "---\nslug: setup/\n---\n# S\n".into(),
        ..doc
    };
    let c = crate::chunk::chunk_document_with_links(&rel, &ChunkerConfig::default());
    assert_eq!(
        c.routes,
        ["guide/setup"],
        "a relative slug is under the page's folder"
    );
}

#[test]
fn text_nobody_reads_is_never_a_chunk_of_its_own() {
    // a comment before the first heading joins the section after it
    let c = md(
        "<!--\n  READ THIS BEFORE ADDING A PLATFORM.\n-->\n\n# Deploying\n\nBuild, then upload.\n",
    );
    assert_eq!(spans(&c), vec![("doc.md#deploying", 1, 7)]);
    assert_eq!(c[0].heading_path, vec!["Deploying"]);
    assert!(!c[0].body.contains("READ"), "{}", c[0].body);
    // so does a VitePress `<script setup>`, and its code is not text
    let c = md("<script setup>\nimport { VPTeamMembers } from 'vitepress/theme'\n</script>\n\n# Team\n\nMeet the team.\n\n<style scoped>\n.grid { display: grid; }\n</style>\n");
    assert_eq!(spans(&c), vec![("doc.md#team", 1, 11)]);
    assert!(
        !c[0].body.contains("import") && !c[0].body.contains("grid"),
        "{}",
        c[0].body
    );
    assert!(c[0].body.contains("Meet the team."));
    // a piece of only a comment joins the piece before it, whatever the budget
    let comment: String = (0..40)
        .map(|i| format!("  note line {i} for maintainers\n"))
        .collect();
    let text = format!(
        "# Guide\n\nFirst paragraph of prose.\n\n<!--\n{comment}-->\n\nLast paragraph of prose.\n"
    );
    let c = chunk_document(
        &doc(&text, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 16 },
    );
    assert_eq!(super::proptests::check(&text, &c, 0, true), Ok(()));
    assert!(c.iter().all(|p| !p.body.trim().is_empty()), "{c:#?}");
    assert!(c[0].text.contains("note line 39"), "{}", c[0].text);
}

#[test]
fn a_container_marker_gives_its_title_not_its_kind() {
    let c = md("# Install\n\n::: tip NOTE\nUse the lockfile.\n:::\n\n!!! warning \"Pinning versions\"\n\n    Pin them.\n\n::: code-group\n\n```sh\nnpm i\n```\n\n:::\n");
    let body = &c[0].body;
    assert!(
        body.contains("NOTE") && body.contains("Pinning versions"),
        "{body}"
    );
    assert!(body.contains("Use the lockfile."), "{body}");
    for word in [":::", "tip", "warning", "code-group", "!!!"] {
        assert!(!body.contains(word), "{word} in {body}");
    }
}

#[test]
fn a_page_of_front_matter_only_is_one_chunk_of_its_description() {
    let text = "---\ntitle: Release channels\ndescription: How to pick the beta or nightly channel.\nweight: 3\n---\n";
    let c = chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default());
    assert_eq!(spans(&c), vec![("doc.md#_preamble", 1, 5)]);
    assert_eq!(c[0].title, "Release channels");
    assert_eq!(c[0].body, "How to pick the beta or nightly channel.");
    // a title alone is enough to be found by; neither: no chunk
    let c = chunk_document(
        &doc("+++\ntitle = \"Networking\"\n+++\n", SourceKind::Markdown),
        &ChunkerConfig::default(),
    );
    assert_eq!(
        (c.len(), c[0].title.as_str(), c[0].body.as_str()),
        (1, "Networking", "")
    );
    let c = chunk_document(
        &doc("---\nweight: 3\n---\n", SourceKind::Markdown),
        &ChunkerConfig::default(),
    );
    assert!(c.is_empty());
    // so is a page of front matter and only a script (a VitePress page component)
    let c = chunk_document(
        &doc("---\ntitle: Team\ndescription: Who works on it.\n---\n\n<script setup>\nimport X from './x'\n</script>\n\n<X />\n", SourceKind::Markdown),
        &ChunkerConfig::default(),
    );
    assert_eq!(
        (c.len(), c[0].body.as_str(), c[0].end_line),
        (1, "Who works on it.", 4),
        "{c:#?}"
    );
    // a page with text keeps its front matter out of its chunks
    let c = md("---\ntitle: T\ndescription: D\n---\n# T\n\nBody.\n");
    assert_eq!(spans(&c), vec![("doc.md#t", 5, 7)]);
}

#[test]
fn template_tags_are_markup_not_text_and_code_shortcodes_are_code() {
    let text = "# Role\n\n{{< new-in 0.153.0 />}}\n\nReturns the role.\n\n## Example\n\n\
                {{< code-toggle file=hugo >}}\n# yaml comment\nweight = 1\n{{< /code-toggle >}}\n\n\
                Prose after the block.\n\n> [!NOTE]\n> The sprocket turns.\n\n## Options\n\n\
                {{% include \"/_common/options.md\" %}}\n\n{% highlight ruby %}\n# ruby comment\n{% endhighlight %}\n\n\
                Done {{< ref \"guide/intro.md\" >}} here, at 50{% of it.\n";
    let c = md(text);
    // the `#` lines inside code shortcodes are code, not headings
    assert_eq!(
        paths(&c),
        vec![
            vec!["Role"],
            vec!["Role", "Example"],
            vec!["Role", "Options"]
        ]
    );
    let all: String = c.iter().map(|c| format!("{}\n", c.body)).collect();
    for noise in [
        "new-in",
        "code-toggle",
        "include",
        "NOTE",
        "{{",
        "highlight",
        "ref",
    ] {
        assert!(!all.contains(noise), "{noise} in {all}");
    }
    // a stray `{%` that closes nowhere near stays text
    assert!(all.contains("50{% of it."), "{all}");
    assert!(all.contains("The sprocket turns."), "{all}");
    assert!(
        c[1].body.contains("yaml comment"),
        "code stays code: {}",
        c[1].body
    );
    // what includes and references point at are links of the page
    let targets: Vec<(u32, String)> = links::doc_links(&doc(text, SourceKind::Markdown))
        .into_iter()
        .map(|l| (l.line, l.target))
        .collect();
    assert_eq!(
        targets,
        vec![
            (21, "/_common/options.md".to_string()),
            (27, "guide/intro.md".to_string())
        ]
    );
    // never a snippet: the shown lines drop the tags, and the alert marker is no match line
    let shown = visible_lines("{{< new-in 0.1 />}}\nSee {{% include \"x.md\" %}} this.\n");
    assert_eq!(shown, vec![None, Some("See  this.".to_string())]);
    assert!(is_marker_line("> [!NOTE]") && is_marker_line(">> [!WARNING] "));
    assert!(!is_marker_line("> [!NOTE] inline text") && !is_marker_line("> [link]"));
    // a stray opener whose only closer is inside a later code block hides nothing
    let c = md("Use 50{% if you like.\n\n```jinja\n{% if user %}\n# Hello\n{% endif %}\n```\n\n## Next\nText.\n");
    assert_eq!(paths(&c), vec![vec![], vec!["Next"]]);
    assert!(c[0].body.contains("50{% if you like."), "{}", c[0].body);
    assert!(
        c[0].body.contains("{% if user %}"),
        "code stays code: {}",
        c[0].body
    );
    let c = md("{{< figure src=\"a.png\"\n\n# Real heading\n\nText >}} here.\n");
    assert_eq!(paths(&c)[1], vec!["Real heading"]);
    // a heading of only a shortcode or an image is no title and no heading text
    let c =
        md("# <img src=\"logo.svg\" width=\"200\">\n\nIntro.\n\n## {{< new-in 0.1 >}}\n\nNew.\n");
    assert_eq!(c[0].title, "doc");
    assert!(c.iter().all(|c| !c.body.contains("new-in")), "{c:#?}");
}

#[test]
fn definition_list_terms_name_their_chunk_and_a_long_list_is_cut_between_terms() {
    let mut text = String::from("# Settings\n\n");
    for i in 0..60 {
        let term = if i == 7 {
            "baseURL".to_string()
        } else {
            format!("setting{i}")
        };
        text.push_str(&format!(
            "{term}\n: (`string`) What setting number {i} does to the site, in a sentence of ordinary words.\n\n"
        ));
    }
    let c = md(&text);
    // cut between terms, never inside a term's definition
    assert!(c.len() > 1, "{} chunks", c.len());
    for p in &c {
        let first = p.text.lines().next().unwrap_or("");
        assert!(
            !first.starts_with(':'),
            "a piece starts inside an item: {first}"
        );
    }
    let with = c.iter().find(|p| p.text.contains("baseURL\n")).unwrap();
    assert!(
        with.symbols.iter().any(|s| s == "baseURL"),
        "{:?}",
        with.symbols
    );
    // a term's slug is an anchor of the page (Hugo's autoDefinitionTermID)
    let anchors: Vec<String> = links::doc_links(&doc(&text, SourceKind::Markdown))
        .into_iter()
        .filter(|l| l.form == LinkForm::Anchor)
        .map(|l| l.target)
        .collect();
    assert!(anchors.iter().any(|a| a == "baseurl"), "{anchors:?}");
    // a term of words is no name
    let c = md("# G\n\nShort answer\n: Yes.\n");
    assert!(
        !c[0].symbols.iter().any(|s| s == "Short answer"),
        "{:?}",
        c[0].symbols
    );
    // a page with `:::` containers keeps them: no definition list swallows a marker
    let c = md("# G\n\nSome prose.\n\n::: tip NOTE\nUse it.\n:::\n\nbaseURL\n: the URL.\n");
    assert!(
        c[0].body.contains("NOTE") && !c[0].body.contains("::"),
        "{}",
        c[0].body
    );
}

#[test]
fn a_url_a_template_tag_starts_is_external_not_a_broken_path() {
    let text = "# History\n\n- Fix globbing ([#9762]({{ site.repository }}/issues/9762)).\n- See [the docs]({{ '/docs/history/' | relative_url }}) and [local](other.md).\n";
    let links: Vec<String> = links::doc_links(&doc(text, SourceKind::Markdown))
        .into_iter()
        .filter(|l| l.form == LinkForm::Link)
        .map(|l| l.target)
        .collect();
    assert!(links.iter().all(|t| !t.starts_with("/issues")), "{links:?}");
    // a URL with a scheme: the graph counts it external, not a broken path
    assert!(
        links
            .iter()
            .any(|t| t.starts_with("tpl:") && t.ends_with("/issues/9762")),
        "{links:?}"
    );
    assert!(links.iter().any(|t| t == "other.md"), "{links:?}");
    let c = md(text);
    assert!(
        !c[0].body.contains("repository") && !c[0].body.contains("relative_url"),
        "{}",
        c[0].body
    );
    assert!(
        c[0].body.contains("#9762") && c[0].body.contains("the docs"),
        "{}",
        c[0].body
    );
}

#[test]
fn inline_html_is_hidden_in_what_is_shown_but_not_in_code() {
    let text = "<dl>\n\n<dt class=\"option-term\" id=\"o\"><a href=\"#o\"><code>--offline</code></a></dt>\n<dd class=\"option-desc\"><p>Never touch the network.</p>\n</dd>\n\n```html\n<dt class=\"x\">kept</dt>\n```\n\nProse with `<br>` in code.\n";
    let shown: Vec<Option<String>> = display::visible_lines(text);
    assert_eq!(shown[0], None);
    assert_eq!(shown[2].as_deref(), Some("--offline"));
    assert_eq!(shown[3].as_deref(), Some("Never touch the network."));
    assert_eq!(shown[4], None);
    assert_eq!(shown[7].as_deref(), Some("<dt class=\"x\">kept</dt>"));
    assert_eq!(shown[10].as_deref(), Some("Prose with `<br>` in code."));
    assert_eq!(display::display_line("<td><b>-j</b> N</td>"), "-j N");
}

#[test]
fn liquid_raw_spans_are_literal_text_indexed_and_shown() {
    let text = "# Filters\n\nUse {% raw %}{{ site.movies | where_exp: \"item\", \"x\" }}{% endraw %} in pages.\n\n{% raw %}\nOutput {{ page.quux_title }} as {% if quux_flag %}text{% endif %}.\n{% endraw %}\n\nAfter {{ site.hidden_value }} here.\n";
    let c = chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default());
    let body: String = c
        .iter()
        .map(|c| c.body.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    for kept in ["where_exp", "quux_title", "quux_flag"] {
        assert!(body.contains(kept), "{kept} missing from {body}");
    }
    assert!(
        !body.contains("hidden_value") && !body.contains("raw"),
        "{body}"
    );
    let shown = display::visible_lines(text);
    assert_eq!(
        shown[2].as_deref(),
        Some("Use {{ site.movies | where_exp: \"item\", \"x\" }} in pages.")
    );
    assert_eq!(shown[4], None);
    assert_eq!(
        shown[5].as_deref(),
        Some("Output {{ page.quux_title }} as {% if quux_flag %}text{% endif %}.")
    );
    assert_eq!(shown[6], None);
    assert_eq!(shown[8].as_deref(), Some("After  here."));
}

#[test]
fn kramdown_attribute_lines_are_hidden_and_name_the_heading_anchor() {
    let text = "# Changes\n\n## 4.4.1 / 2025-01-29\n{: #v4-4-1}\n\n{: .note .info}\nWhen defining a collection, set attrzz.\n\n## Plain\n\nText.\n";
    let c = chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default());
    let body: String = c.iter().map(|c| c.body.as_str()).collect();
    assert!(
        body.contains("attrzz") && !body.contains("note") && !body.contains("v4"),
        "{body}"
    );
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.iter().any(|i| i.ends_with("#changes/v4-4-1")),
        "{ids:?}"
    );
    let shown = display::visible_lines(text);
    assert_eq!((shown[3].as_deref(), shown[5].as_deref()), (None, None));
    assert_eq!(display::display_line("{: #v4-4-1}"), "");
}

#[test]
fn a_kramdown_markdown_block_keeps_its_fence_and_attribute_spans_are_hidden() {
    // CommonMark alone reads the fence after `<div markdown="1">` as HTML up to the blank
    // line, and the `## Heading` inside the code sample as a section
    let text = "# Code\n\n<div class=\"code-example\" markdown=\"1\">\n```markdown\nLorem.\n\n## Heading in a sample\n```\n</div>\n\n## Syntax highlighted code blocks\n\nUse backticks.\n[Go](x){: .btnzz }\n\n> {: .newzz }\n> New text.\n";
    let c = chunk_document(&doc(text, SourceKind::Markdown), &ChunkerConfig::default());
    let paths: Vec<String> = c.iter().map(|c| c.heading_path.join(" › ")).collect();
    assert_eq!(
        paths,
        ["Code", "Code › Syntax highlighted code blocks"],
        "{paths:?}"
    );
    let body: String = c.iter().map(|c| c.body.as_str()).collect();
    assert!(!body.contains("btnzz") && !body.contains("newzz"), "{body}");
    assert!(body.contains("New text"), "{body}");
    let shown = display::visible_lines(text);
    assert_eq!(shown[2], None);
    assert_eq!(shown[13].as_deref(), Some("Go"));
    assert_eq!(shown[15], None, "a blockquote line of only its marker");
}

#[test]
fn pymdownx_blocks_are_markers_and_boxes_and_autodoc_names_are_text() {
    // FastAPI's docs: `/// tip | Title` … `///` blocks and `//// tab | …` tabs nesting
    // them; before, a piece ended on the opener and `///` alone made a chunk
    let mut text = String::from(
        "# Files\n\nIntro prose about uploads.\n\n{* ../../docs_src/request_files/tutorial003_an_py310.py hl[11,18:20] *}\n\n",
    );
    for i in 0..6 {
        text.push_str(&format!(
            "//// tab | Python 3.{i}+\n\n/// tip | Technical Details {i}\n\nThe body of tip {i} explains multipart forms and boundaries in detail here.\n\n///\n\n////\n\nProse paragraph {i} after the tab about streaming uploads to disk.\n\n"
        ));
    }
    text.push_str("## Reference\n\n::: fastapi.security.OAuth2PasswordRequestFormStrict\n    options:\n      members: true\n\nA Rust line: /// Returns x\n");
    for max_tokens in [24, 256] {
        let c = chunk_document(
            &doc(&text, SourceKind::Markdown),
            &ChunkerConfig { max_tokens },
        );
        assert_eq!(super::proptests::check(&text, &c, 0, true), Ok(()));
        for ch in &c {
            let lines: Vec<&str> = ch.text.lines().filter(|l| !l.trim().is_empty()).collect();
            let last = lines.last().copied().unwrap_or("");
            assert!(
                !super::markers::is_opener(last),
                "{max_tokens}: a piece ends on an opener: {:?}",
                ch.text
            );
            assert!(
                !lines.iter().all(|l| l.trim().trim_matches('/').is_empty()),
                "{max_tokens}: a piece of only closers: {:?}",
                ch.text
            );
            assert!(
                !ch.body
                    .lines()
                    .any(|l| super::markers::slash_block(l).is_some()),
                "{max_tokens}: a marker line in the body: {:?}",
                ch.body
            );
        }
        let all: String = c
            .iter()
            .map(|c| c.body.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            all.contains("Technical Details 3") && all.contains("Python 3.3+"),
            "{all}"
        );
        assert!(!all.contains("tab |") && !all.contains("tip |"), "{all}");
        assert!(
            all.contains("/// Returns x"),
            "prose is not a marker: {all}"
        );
        // a code include is the site's markup: never indexed, never shown
        assert!(
            !all.contains("tutorial003") && !all.contains("hl["),
            "{all}"
        );
        // the autodoc line stays text: its dotted name is findable
        let refs = c
            .iter()
            .find(|c| c.heading_path.last().is_some_and(|h| h == "Reference"));
        let refs = refs.expect("the Reference section");
        assert!(
            refs.body
                .contains("fastapi.security.OAuth2PasswordRequestFormStrict"),
            "{:?}",
            refs.body
        );
    }
    let shown: Vec<String> = display::visible_lines(&text)
        .into_iter()
        .flatten()
        .collect();
    assert!(
        !shown.iter().any(|l| l.contains("tutorial003")),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|l| l.contains("Technical Details 2")),
        "{shown:?}"
    );
    assert!(super::markers::slash_block("/// note | Title") == Some((3, true)));
    assert!(super::markers::slash_block("////") == Some((4, false)));
    assert!(super::markers::slash_block("/// Returns the value").is_none());
    assert!(super::markers::slash_block("    /// note").is_none());
    assert!(super::markers::slash_block("/// deprecated").is_none());
    assert!(super::markers::slash_block("/// details") == Some((3, true)));
    assert!(super::markers::is_autodoc("::: fastapi.FastAPI"));
    assert!(!super::markers::is_autodoc("::: tip") && !super::markers::is_autodoc(":::"));
    assert_eq!(
        super::markers::marker_title("/// note | Technical Details"),
        Some("Technical Details")
    );
    assert_eq!(
        super::markers::marker_title("//// tab | Python 3.10+"),
        Some("Python 3.10+")
    );
}

#[test]
fn change_logs_are_named_by_their_file_or_folder() {
    for p in [
        "CHANGELOG.md",
        "HISTORY.md",
        "NEWS",
        "CHANGES.rst",
        "docs/release-notes.md",
        "Release_Notes.mdx",
        "whats-new.md",
        "changelog/2024.md",
        "docs/release_notes/v3.md",
        "blog/2020-10-tokio-0-3.md",
        "docs/blog/announcing-vite5.md",
        "_posts/2024-01-02-release.md",
        "content/news/2024.md",
    ] {
        assert!(super::is_changelog(p), "{p}");
    }
    for p in [
        "docs/change-the-registry.md",
        "guide/releasing.md",
        "reference/profiles.md",
        "docs/release-profiles.md",
        "history-of-rust/intro.md",
        "guide/history.md",
        "docs/news.md",
        "docs/releases.md",
        "docs/releases/1.2.md",
        "docs/blog.md",
        "guide/blogging.md",
        "docs/posting-forms.md",
    ] {
        assert!(!super::is_changelog(p), "{p}");
    }
}

#[test]
fn change_log_sections_are_named_by_a_heading_of_their_path() {
    for id in [
        "guide/config.md#configuration/changelog",
        "guide/config.md#configuration/changelog/210~2",
        "reference/unstable.md#stabilized-and-removed-features/edition-2021",
        "README.md#release-notes",
        "README.md#version-20-release-notes",
        "docs/intro.md#whats-new-in-20",
        "docs/intro.md#whats-new-in-version-3",
        "docs/intro.md#whats-new",
        "docs/intro.md#whats-changed",
        "api.md#router/changes-in-v3",
        "api.md#changes-in-version-20",
        "api.md#history-since-120",
        "api.md#version-history",
        "docs/c#/guide.md#release-notes",
        "docs/intro.md#release-notes-for-20",
        "api.md#changes-v3",
        "api.md#changes-20",
    ] {
        assert!(super::is_changelog_section(id), "{id}");
    }
    for id in [
        "reference/unstable.md#unstable-features/script",
        "api.md#router/history",
        "api.md#router/history-1",
        "guide/releasing.md#releases",
        "guide/releasing.md#3-release",
        "guide/releasing.md#release-for-arm64",
        "guide/build.md#rebuild-on-files-changes",
        "guide/http.md#history-of-http2",
        "guide/s3.md#changes-in-s3",
        "deploy.md#deploy/release-in-k8s",
        "migration.md#breaking-changes",
        "docs/new.md#whats-next",
        "docs/news.md#press",
        "docs/c#/whats-new/install.md#install",
        "CHANGELOG.md",
        "profiles.md#release",
        "changelog.md#overview",
    ] {
        assert!(!super::is_changelog_section(id), "{id}");
    }
}
