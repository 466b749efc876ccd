//! Tests of budget cutting, a snapshot of a hand-written sample, and real files from the
//! benchmark corpus (skipped when the corpus is absent).

use std::path::{Path, PathBuf};

use super::proptests::{check, front_matter_lines, source_lines};
use super::tests::doc;
use super::*;

const LONG: &str = "## Long
 
First paragraph with `alpha_one` symbol.

Second paragraph here.

```text
fence line one is long enough to matter

fence line two is long enough to matter too
```

Third paragraph mentions beta_two.

- list item

- second item

## After
tail
";

#[test]
fn long_section_is_cut_at_blank_lines_between_blocks() {
    let c = chunk_document(
        &doc(LONG, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 16 },
    );
    let got: Vec<(&str, u32, u32)> = c
        .iter()
        .map(|c| (c.id.as_str(), c.start_line, c.end_line))
        .collect();
    assert_eq!(
        got,
        vec![
            ("doc.md#long", 1, 3),
            // the fence joins the paragraph before it
            ("doc.md#long~2", 5, 11),
            ("doc.md#long~3", 13, 17),
            ("doc.md#after", 19, 20),
        ]
    );
    for part in &c[..3] {
        assert_eq!(part.heading_path, vec!["Long"]);
        assert_eq!(part.kind, ChunkKind::Section);
        assert_eq!(part.title, "doc");
    }
    assert_eq!(c[0].summary, "First paragraph with alpha_one symbol.");
    assert_eq!(c[0].symbols, vec!["alpha_one"]);
    assert!(c[1].text.starts_with("Second paragraph here.\n\n```text"));
    assert_eq!(c[1].summary, "Second paragraph here.");
    // The fence is larger than the budget and stays whole, blank line included, with
    // the paragraph before it.
    assert!(c[1]
        .text
        .ends_with("fence line two is long enough to matter too\n```"));
    assert_eq!(
        c[1].body,
        "Second paragraph here.\nfence line one is long enough to matter\nfence line two is long enough to matter too"
    );
    // The loose list (blank line inside) is not cut either.
    assert_eq!(c[2].summary, "Third paragraph mentions beta_two.");
    assert_eq!(c[2].symbols, vec!["beta_two"]);
    assert!(c[2].body.ends_with("list item\nsecond item"));
    for part in &c {
        let (s, e) = (part.start_line, part.end_line);
        assert!(
            e < 7 || s > 11 || (s <= 7 && e >= 11),
            "part {s}..={e} cuts the fence"
        );
    }
}

#[test]
fn section_within_budget_is_not_cut() {
    let c = chunk_document(&doc(LONG, SourceKind::Markdown), &ChunkerConfig::default());
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].start_line, c[0].end_line), (1, 17));
}

#[test]
fn a_long_table_is_cut_between_rows_and_each_piece_repeats_the_header() {
    let mut text = String::from("# Options\n\nThe options.\n\n| name | meaning |\n|---|---|\n");
    for i in 0..60 {
        text.push_str(&format!("| opt{i} | what option {i} does |\n"));
    }
    let c = chunk_document(
        &doc(&text, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert!(c.len() > 3, "{}", c.len());
    let lines: Vec<&str> = text.lines().collect();
    for (k, piece) in c.iter().enumerate() {
        let (s, e) = (piece.start_line as usize, piece.end_line as usize);
        assert_eq!(
            piece.text,
            lines[s - 1..e].join("\n"),
            "rows keep their own lines"
        );
        if k == 0 {
            assert_eq!(piece.prelude, None);
            continue;
        }
        assert!(lines[s - 1].starts_with("| opt"), "{k} starts on a row");
        assert_eq!(
            piece.prelude.as_deref(),
            Some("| name | meaning |\n|---|---|")
        );
        assert!(piece.body.starts_with("name meaning\n"), "{}", piece.body);
        assert!(
            !piece.body.contains("opt0 "),
            "piece {k} holds only its rows and the header"
        );
    }
    let last = c.last().unwrap();
    assert!(
        last.body.ends_with("opt59 what option 59 does"),
        "{}",
        last.body
    );
}

/// A section of `n` list items (each about 13 tokens); item 7 has a nested item and a
/// fenced block, item `n - 3` alone says `needle_word`.
fn long_list(n: usize, loose: bool) -> String {
    let mut s = String::from("# Vars\n\nThe variables:\n\n");
    for i in 1..=n {
        let word = if i == n - 3 { "needle_word" } else { "plain" };
        s.push_str(&format!(
            "- `VAR_{i}` is set to the {word} value of item {i}.\n"
        ));
        if i == 7 {
            s.push_str("  - nested detail\n\n  ```sh\n  echo $VAR_7\n\n  echo done\n  ```\n");
        }
        if loose {
            s.push('\n');
        }
    }
    s.push_str("\nAfter the list.\n");
    s
}

#[test]
fn a_list_over_four_budgets_is_cut_between_its_top_level_items() {
    for loose in [false, true] {
        let text = long_list(120, loose);
        let lines = source_lines(&text);
        let c = chunk_document(
            &doc(&text, SourceKind::Markdown),
            &ChunkerConfig { max_tokens: 64 },
        );
        assert_eq!(check(&text, &c, 0, true), Ok(()));
        assert!(c.len() > 10, "{} chunks", c.len());
        for part in &c[1..] {
            let first = &lines[part.start_line as usize - 1];
            assert!(
                first.starts_with("- `VAR_") || first == "After the list.",
                "{} starts inside an item: {first:?}",
                part.id
            );
            // each piece holds whole items within the budget (one item is ~13 tokens)
            assert!(
                split::tokens(part.text.len()) <= 64 || part.text.contains("echo"),
                "{}",
                part.id
            );
        }
        // the item with the nested list and fence stays whole in one piece
        let seven = c.iter().find(|p| p.text.contains("`VAR_7` ")).unwrap();
        assert!(seven.text.contains("echo done\n  ```"), "{}", seven.text);
        // a piece's fields are its own items: the needle is in one body only
        let with_needle: Vec<&str> = c
            .iter()
            .filter(|p| p.body.contains("needle_word"))
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(with_needle.len(), 1, "{with_needle:?}");
        let piece = c.iter().find(|p| p.body.contains("needle_word")).unwrap();
        assert!(piece.text.contains("needle_word"));
        assert!(
            piece.symbols.iter().any(|s| s == "VAR_117"),
            "{:?}",
            piece.symbols
        );
        assert!(!c[0].body.contains("needle_word"));
    }
}

#[test]
fn a_list_under_four_budgets_stays_whole() {
    let text = long_list(12, false);
    let c = chunk_document(
        &doc(&text, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert!(split::tokens(text.len()) > 64 && split::tokens(text.len()) <= 4 * 64);
    let list = c.iter().filter(|p| p.text.contains("`VAR_")).count();
    assert_eq!(list, 1, "{:?}", c.iter().map(|p| &p.id).collect::<Vec<_>>());
}

#[test]
fn a_text_document_without_blank_lines_is_cut_between_lines() {
    let text: String = (1..=400)
        .map(|i| format!("line {i} of a log without blank lines\n"))
        .collect();
    let c = chunk_document(
        &doc(&text, SourceKind::Text),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert_eq!(check(&text, &c, 0, true), Ok(()));
    assert!(c.len() > 20, "{} chunks", c.len());
    assert!(
        c.iter().all(|p| split::tokens(p.text.len()) <= 64),
        "a piece over the budget"
    );
    assert!(c.iter().all(|p| p.body == p.text));
    // a short run stays whole
    let short: String = (1..=20)
        .map(|i| format!("line {i} of a short note here\n"))
        .collect();
    let c = chunk_document(
        &doc(&short, SourceKind::Text),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert_eq!(c.len(), 1);
}

/// A Markdown paragraph of many lines and no blank line (a generated listing, a log
/// pasted into a page) over four budgets is cut between its lines, each piece within the
/// budget and under its section's heading; one under four budgets, and a single line of
/// any length, stay whole.
#[test]
fn a_long_markdown_paragraph_is_cut_between_lines() {
    let mut text = String::from("# Log\n\nIntro.\n\n");
    for i in 1..=400 {
        text.push_str(&format!("entry {i} of a listing without blank lines\n"));
    }
    text.push_str("\nAfter.\n");
    let c = chunk_document(
        &doc(&text, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert_eq!(check(&text, &c, 0, true), Ok(()));
    let listing: Vec<_> = c.iter().filter(|p| p.body.contains("entry ")).collect();
    assert!(listing.len() > 20, "{} pieces", listing.len());
    assert!(
        listing.iter().all(|p| split::tokens(p.body.len()) <= 64),
        "a piece over the budget"
    );
    assert!(listing.iter().all(|p| p.heading_path == ["Log"]));
    // the entries in order, each once
    let seen: Vec<&str> = listing
        .iter()
        .flat_map(|p| p.body.lines())
        .filter(|l| l.starts_with("entry "))
        .collect();
    assert_eq!(seen.len(), 400);
    assert_eq!(seen[399], "entry 400 of a listing without blank lines");
    // under four budgets: whole
    let mut short = String::from("# Log\n\n");
    for i in 1..=20 {
        short.push_str(&format!("entry {i} of a short listing\n"));
    }
    let c = chunk_document(
        &doc(&short, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert_eq!(c.len(), 1);
    // one line of 40 budgets: one piece (a passage is whole lines)
    let line = format!("# Wide\n\n{}\n", "word ".repeat(2048));
    let c = chunk_document(
        &doc(&line, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 64 },
    );
    assert_eq!(check(&line, &c, 0, true), Ok(()));
    assert_eq!(c.len(), 1);
}

#[test]
fn unclosed_fence_is_never_cut() {
    let text = "# T\n\nintro\n\n```\na\n\nb\n\nc\n";
    let c = chunk_document(
        &doc(text, SourceKind::Markdown),
        &ChunkerConfig { max_tokens: 1 },
    );
    let got: Vec<(u32, u32)> = c.iter().map(|c| (c.start_line, c.end_line)).collect();
    // the heading stays with the intro, the code with the prose before it
    assert_eq!(got, vec![(1, 10)]);
    assert_eq!(c[0].id, "doc.md#t");
}

const SAMPLE: &str = "\u{feff}---
title: Sample
tags: [demo]
---
Intro before any heading.

# Getting Started

Install with `cargo install`.

## Setup
Setext Child
------------

```sh
# not a heading
```

## Setup

### `HashMap` usage
Use *HashMap::entry*.

# Reference
<div>
# also not a heading
</div>
";

#[test]
fn sample_chunk_list_snapshot() {
    let chunks = chunk_document(
        &doc(SAMPLE, SourceKind::Markdown),
        &ChunkerConfig::default(),
    );
    let rows: Vec<String> = chunks
        .iter()
        .map(|c| {
            format!(
                "{} {:?} {}..={} {:?}",
                c.id, c.kind, c.start_line, c.end_line, c.heading_path
            )
        })
        .collect();
    insta::assert_debug_snapshot!(rows);
    assert!(chunks
        .iter()
        .all(|c| c.title == "Sample" && c.aliases == ["demo"]));
}

/// The Rust-book corpus: under `$DOCFUSE_SHARED`, else `../shared` next to the crate,
/// else `/work/shared`.
fn corpus_dir() -> Option<PathBuf> {
    let roots = [
        std::env::var_os("DOCFUSE_SHARED").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared")),
        Some(PathBuf::from("/work/shared")),
    ];
    let found = roots
        .into_iter()
        .flatten()
        .map(|root| root.join("bench/corpora/rust-book"))
        .find(|dir| dir.is_dir());
    if found.is_none() {
        eprintln!("skipping: the rust-book corpus is absent");
    }
    found
}

#[test]
fn rust_book_rc_chapter() {
    let Some(dir) = corpus_dir() else { return };
    let Ok(text) = std::fs::read_to_string(dir.join("ch15-04-rc.md")) else {
        eprintln!("skipping: ch15-04-rc.md unreadable");
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let line_of = |needle: &str| {
        lines
            .iter()
            .position(|l| *l == needle)
            .map(|i| i as u32 + 1)
    };
    let cloning = line_of("### Cloning to Increase the Reference Count").expect("heading in file");
    let sharing = line_of("### Sharing Data").expect("heading in file");
    let d = SourceDoc {
        rel_path: "ch15-04-rc.md".into(),
        text: text.clone(),
        kind: SourceKind::Markdown,
        title_hint: None,
    };
    let chunks = chunk_document(
        &d,
        &ChunkerConfig {
            max_tokens: 100_000,
        },
    );
    let top = "Rc<T>, the Reference-Counted Smart Pointer";
    let find = |path: &[&str]| {
        chunks
            .iter()
            .find(|c| c.heading_path == path)
            .expect("chunk exists")
    };
    let c = find(&[top, "Cloning to Increase the Reference Count"]);
    assert_eq!(c.start_line, cloning);
    assert_eq!(c.id, "ch15-04-rc.md#rct-the-reference-counted-smart-pointer/cloning-to-increase-the-reference-count");
    assert_eq!(c.title, "ch15-04-rc");
    let s = find(&[top, "Sharing Data"]);
    assert_eq!(s.start_line, sharing);
    let before = (1..cloning)
        .rev()
        .find(|&n| !lines[n as usize - 1].trim().is_empty());
    assert_eq!(Some(s.end_line), before);
    assert!(!s.body.contains("<a id") && !s.body.contains("Old headings"));
    let first = find(&[top]);
    assert_eq!((first.start_line, first.kind), (1, ChunkKind::Section));
    assert!(first.symbols.contains(&"Rc<T>".to_string()));
    assert!(first
        .summary
        .starts_with("In the majority of cases, ownership is clear"));
    assert_eq!(check(&text, &chunks, 0, true), Ok(()));
}

#[test]
fn rust_book_corpus_invariants() {
    let Some(dir) = corpus_dir() else { return };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut checked = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let fm = front_matter_lines(&source_lines(&text));
        for max_tokens in [64, 512] {
            let chunks = chunk_document(
                &doc(&text, SourceKind::Markdown),
                &ChunkerConfig { max_tokens },
            );
            assert_eq!(
                check(&text, &chunks, fm, true),
                Ok(()),
                "{}",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} files");
}
