//! The line of a passage that best matches a query, and a snippet around the match.
//!
//! A line scores the sum of the weights (IDF) of the distinct query terms it holds, a
//! term of four letters or more also matching longer words by prefix at half weight (as
//! the lexical ranking does). Heading lines do not compete: a result shows its heading
//! path already, so the match line is one of the passage's own lines. The best line is
//! the highest-scoring one, the first of equals; a passage whose lines match no query
//! term (its heading may) gives its first line of prose. The snippet
//! is that line with markup removed, cut to a window around the first matched term.

use crate::analysis::{fold, for_each_term};
use crate::chunk::visible_lines_of;

/// Longest snippet, in characters.
pub const SNIPPET_CHARS: usize = 200;

/// How far, in characters, a snippet's cut end moves to fall between two words.
const WORD_SNAP: usize = 24;

/// Query terms with their weights (IDF), as the lexical run scored them.
pub type TermWeights = [(String, f32)];

/// Where a passage best matches.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchLine {
    /// 1-based line number in the file.
    pub line: u32,
    /// Index of that line in the passage (0 for its first line).
    pub offset: usize,
    /// Its score (0 when no term matched).
    pub score: f32,
}

/// Score of one line for `weights`.
fn line_score(line: &str, weights: &TermWeights) -> f32 {
    let mut seen = vec![0.0f32; weights.len()];
    // a symbol (`?.`, `=>`: no letter or digit) is matched as written
    for (i, (q, w)) in weights.iter().enumerate() {
        if !q.chars().any(char::is_alphanumeric) && !q.is_empty() && line.contains(q.as_str()) {
            seen[i] = *w;
        }
    }
    for_each_term(line, |t| {
        for (i, (q, w)) in weights.iter().enumerate() {
            let s = if t == q {
                *w
            } else if q.chars().count() >= 4 && t.starts_with(q.as_str()) {
                w * 0.5
            } else {
                0.0
            };
            if s > seen[i] {
                seen[i] = s;
            }
        }
    });
    seen.iter().sum()
}

/// The best-matching line of `text` (a passage whose first line is file line
/// `start_line`); hidden lines (comments, link definitions) never match, nor do heading
/// lines when `markdown` (a plain-text document's `#` lines are text).
pub fn best_line(text: &str, start_line: u32, weights: &TermWeights, markdown: bool) -> MatchLine {
    let mut best = MatchLine {
        line: start_line,
        offset: 0,
        score: 0.0,
    };
    let mut first_prose = None;
    // the best heading line, for words found in headings only
    let mut best_heading = MatchLine {
        line: start_line,
        offset: 0,
        score: 0.0,
    };
    let lines = visible_lines_of(text, markdown);
    // fences as the chunker reads them: a ```` fence holds a ``` one; a tab before a
    // fence (in a list item) indents it as four spaces do
    let fenced = crate::chunk::fenced_lines(lines.iter().map(|l| l.as_deref().unwrap_or("")));
    let front = front_matter_lines(text, start_line);
    let mut in_text_key = false;
    // inside a TOML multi-line string (`"""`/`'''`) opened on a text key's line
    let mut open_quote: Option<&str> = None;
    let mut first_key = None;
    for (i, line) in lines.iter().enumerate() {
        let Some(line) = line else { continue };
        if i < front {
            // a page of front matter only: its description (or summary) is its text, the
            // title is shown with the result already, the other keys are settings
            let t = line.trim();
            if i == 0 || i + 1 == front {
                continue;
            }
            if first_key.is_none() && !t.is_empty() {
                first_key = Some(i);
            }
            let continues = open_quote.is_some() || line.starts_with([' ', '\t']) || t.is_empty();
            if let Some(q) = open_quote {
                if t.contains(q) {
                    open_quote = None;
                }
            } else if !continues {
                in_text_key = is_text_key(t);
                open_quote = ["\"\"\"", "'''"]
                    .into_iter()
                    .find(|q| in_text_key && t.matches(q).count() == 1);
            }
            if !in_text_key {
                continue;
            }
            let s = line_score(line, weights);
            if first_prose.is_none() && !t.is_empty() {
                first_prose = Some(i);
            }
            if s > best.score {
                best = MatchLine {
                    line: start_line.saturating_add(i as u32),
                    offset: i,
                    score: s,
                };
            }
            continue;
        }
        let trimmed = line.trim_start();
        let in_fence = fenced.get(i).copied().unwrap_or(false);
        let marker = markdown && crate::chunk::is_marker_line(line);
        if first_prose.is_none() && !in_fence && !marker && is_prose(trimmed) {
            first_prose = Some(i);
        }
        // a heading line is shown with every result (its heading path): the line that
        // says more is one of the passage's own
        let next = lines.get(i + 1).and_then(|l| l.as_deref());
        // so is a container marker line (`::: tip`, `!!! note "Title"`): it says what
        // kind of box follows, the box's lines say what it is about
        let heading =
            markdown && !in_fence && (is_heading(line, next) || crate::chunk::is_marker_line(line));
        let s = if weights.is_empty() || heading {
            0.0
        } else {
            line_score(line, weights)
        };
        if heading && !weights.is_empty() {
            let h = line_score(line, weights);
            if h > best_heading.score {
                best_heading = MatchLine {
                    line: start_line.saturating_add(i as u32),
                    offset: i,
                    score: h,
                };
            }
        }
        if s > best.score {
            best = MatchLine {
                line: start_line.saturating_add(i as u32),
                offset: i,
                score: s,
            };
        }
    }
    if best.score == 0.0 && best_heading.score > 0.0 {
        // the words are in a heading only (`## Usage` over a body that never says it):
        // the heading is where a reader lands; the snippet is the first line of text
        // under it (the heading is shown with the result already)
        return MatchLine {
            offset: first_prose.unwrap_or(best_heading.offset),
            ..best_heading
        };
    }
    if best.score == 0.0 {
        // a page of front matter without a description: its first key (the title), never
        // the fence
        let i = first_prose.or(first_key).unwrap_or(0);
        best.line = start_line.saturating_add(i as u32);
        best.offset = i;
    }
    best
}

/// How many lines of a passage are front matter (fences included): a passage that starts
/// at line 1 with `---` or `+++` is the chunk of a page that has nothing else (other chunks
/// never hold front matter lines). 0 otherwise.
fn front_matter_lines(text: &str, start_line: u32) -> usize {
    // the raw lines: display hides a `+++` line (a MyST block break elsewhere)
    let mut lines = text.lines().map(str::trim_end);
    let fence = match lines.next() {
        Some(f @ ("---" | "+++")) if start_line == 1 => f,
        _ => return 0,
    };
    lines
        .position(|l| l == fence || (fence == "---" && l == "..."))
        .map_or(0, |close| close + 2)
}

/// A front matter line setting the page's text: `description:`, `summary:` (YAML) or
/// `description =` (TOML), any case.
fn is_text_key(line: &str) -> bool {
    let key = line
        .split([':', '='])
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(['"', '\'']);
    key.eq_ignore_ascii_case("description") || key.eq_ignore_ascii_case("summary")
}

/// A Markdown heading line: ATX (up to 3 spaces, 1 to 6 `#`, then a space or the end:
/// not `#hashtag` or `#!/bin/sh`), a setext heading's text (the next line is only `=` or
/// only `-`), or a setext underline.
fn is_heading(line: &str, next: Option<&str>) -> bool {
    let underline = |l: &str| {
        let t = l.trim();
        let indent = l.len() - l.trim_start().len();
        indent <= 3
            && !t.is_empty()
            && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
    };
    let indent = line.len() - line.trim_start().len();
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    let atx = indent <= 3
        && (1..=6).contains(&hashes)
        && t[hashes..].chars().next().is_none_or(char::is_whitespace);
    atx || underline(line) || (!t.is_empty() && next.is_some_and(underline))
}

fn is_prose(trimmed: &str) -> bool {
    // a thematic break, a setext underline or a table's delimiter row is structure
    let rule = trimmed.chars().all(|c| " -=*_|:".contains(c));
    !trimmed.is_empty()
        && !rule
        && !trimmed.starts_with('#')
        && !trimmed.starts_with("<!--")
        && !trimmed.starts_with("import ")
        && !trimmed.starts_with("export ")
}

/// A one-line snippet of line `offset` of `text`: markup dropped when it is Markdown
/// (`markdown`; see [`crate::chunk::visible_lines`]), white space collapsed, and, when longer than
/// [`SNIPPET_CHARS`] characters, a window around the first matched query term with `…`
/// at the cut ends.
pub fn snippet_at(text: &str, offset: usize, weights: &TermWeights, markdown: bool) -> String {
    let shown = visible_lines_of(text, markdown)
        .into_iter()
        .nth(offset)
        .flatten()
        .unwrap_or_default();
    let line: String = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return line;
    }
    let at = first_term_at(&line, weights).unwrap_or(0);
    let half = SNIPPET_CHARS / 2;
    let mut start = at.saturating_sub(half / 2);
    if start + SNIPPET_CHARS > chars.len() {
        start = chars.len() - SNIPPET_CHARS;
    }
    let end = (start + SNIPPET_CHARS).min(chars.len());
    let (lead, tail) = (start > 0, end < chars.len());
    let mut body_start = if lead { start + 1 } else { start };
    let mut body_end = if tail { end - 1 } else { end };
    // a cut end falls between words when a space is near: never half a word
    if lead && !chars[body_start - 1].is_whitespace() {
        let limit = (body_start + WORD_SNAP).min(at).min(body_end);
        if let Some(sp) = (body_start..limit).find(|&i| chars[i].is_whitespace()) {
            body_start = sp + 1;
        }
    }
    if tail && !chars[body_end].is_whitespace() {
        let limit = body_end
            .saturating_sub(WORD_SNAP)
            .max(at + 1)
            .max(body_start);
        if let Some(sp) = (limit..body_end).rev().find(|&i| chars[i].is_whitespace()) {
            body_end = sp;
        }
    }
    let mut out = String::new();
    if lead {
        out.push('…');
    }
    out.extend(&chars[body_start..body_end]);
    if tail {
        out.push('…');
    }
    out
}

/// Character index in `line` of the first occurrence of a query term (folded match).
fn first_term_at(line: &str, weights: &TermWeights) -> Option<usize> {
    let folded: Vec<(usize, String)> = line
        .char_indices()
        .enumerate()
        .map(|(ci, (_, c))| (ci, fold(&c.to_string())))
        .collect();
    let flat: String = folded.iter().map(|(_, f)| f.as_str()).collect();
    // Map byte offsets of `flat` back to character indexes of `line`.
    let mut starts = Vec::with_capacity(folded.len());
    let mut pos = 0;
    for (ci, f) in &folded {
        starts.push((pos, *ci));
        pos += f.len();
    }
    let mut by_weight: Vec<&(String, f32)> = weights.iter().collect();
    by_weight.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_weight.iter().find_map(|(t, _)| {
        let b = flat.find(t.as_str())?;
        starts
            .iter()
            .rev()
            .find(|(p, _)| *p <= b)
            .map(|(_, ci)| *ci)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_front_matter_page_matches_on_its_keys_not_its_fences() {
        let text =
            "---\ntitle: Release channels\ndescription: Pick the beta or nightly channel.\n---";
        let w = [("nightly".to_string(), 2.0)];
        assert_eq!(best_line(text, 1, &w, true).line, 3);
        // no term matched, or only the title (shown with every result): its description
        assert_eq!(best_line(text, 1, &[], true).line, 3);
        let title = [("release".to_string(), 2.0)];
        assert_eq!(best_line(text, 1, &title, true).line, 3);
        // settings are no text; a folded description's lines are (TOML too)
        let text = "+++
title = \"Modules\"
weight = 10
description = \"\"\"\n  Use modules\n  to manage themes.\"\"\"\naliases = [\"/themes/\"]\n+++";
        let themes = [("themes".to_string(), 2.0)];
        assert_eq!(best_line(text, 1, &themes, true).line, 6);
        // a multi-line TOML string's lines belong to its key, indented or not
        let text = "+++\ntitle = \"Modules\"\ndescription = \"\"\"\nUse modules\nto manage themes.\n\"\"\"\naliases = [\"/themes/\"]\n+++";
        assert_eq!(best_line(text, 1, &themes, true).line, 5);
        // a word of the title and the description: the description's line (the TOML
        // fences are front matter, though display hides a `+++` line as a block break)
        let modules = [("modules".to_string(), 2.0)];
        assert_eq!(best_line(text, 1, &modules, true).line, 4);
        // no description: the title line, never the fence
        let text = "+++\ntitle = \"Networking\"\nweight = 3\n+++";
        assert_eq!(best_line(text, 1, &[], true).line, 2);
        assert_eq!(best_line(text, 1, &themes, true).line, 2);
        // a passage further down starting with a thematic break is not front matter
        let text = "---\n\nnightly builds\n";
        assert_eq!(best_line(text, 9, &w, true).line, 11);
    }

    fn w(terms: &[(&str, f32)]) -> Vec<(String, f32)> {
        terms.iter().map(|(t, x)| (t.to_string(), *x)).collect()
    }

    #[test]
    fn hidden_lines_never_match() {
        let text = "## A\n<!-- jobs jobs -->\n[jobs]: https://x\nThe jobs line.\n";
        let m = best_line(text, 1, &w(&[("jobs", 1.0)]), true);
        assert_eq!(m.line, 4);
        assert_eq!(
            snippet_at(text, m.offset, &w(&[("jobs", 1.0)]), true),
            "The jobs line."
        );
    }

    #[test]
    fn the_line_with_the_rarest_terms_wins() {
        let text = "## Options\n\nThe jobs flag.\n\n| flag | use |\n|---|---|\n| `--jobs N` | limit parallel jobs |\n";
        let m = best_line(text, 5, &w(&[("jobs", 1.0), ("parallel", 3.0)]), true);
        assert_eq!((m.line, m.offset), (11, 6));
        // nothing matched: the first line of prose, not the heading
        let m = best_line(text, 5, &w(&[("zebra", 1.0)]), true);
        assert_eq!((m.line, m.score), (7, 0.0));
        // prefix matches count at half weight
        let m = best_line("a\nwidgets here\n", 1, &w(&[("widg", 2.0)]), true);
        assert_eq!((m.line, m.score), (2, 1.0));
        // CJK bigrams
        let m = best_line("# 概要\n\n東京都の説明\n", 1, &w(&[("東京", 1.0)]), true);
        assert_eq!(m.line, 3);
    }

    #[test]
    fn a_line_inside_a_code_shortcode_is_cited_where_it_is() {
        let text = "## Upgrading\n\nA few things changed.\n\n{% highlight liquid %}\n# a comment line\n{% post_url 2018-03-20-hello-world %}\n{% endhighlight %}\n";
        let m = best_line(text, 1, &w(&[("hello", 2.0), ("world", 2.0)]), true);
        assert_eq!(m.line, 7);
        let m = best_line(text, 1, &w(&[("comment", 2.0)]), true);
        assert_eq!(m.line, 6);
    }

    #[test]
    fn a_body_line_is_the_match_even_when_the_heading_matches_more() {
        let text = "# Diagrams\n\nDiagrams help.\n\nRendered with Mermaid.js here.\n";
        let weights = w(&[("mermaid", 2.0), ("diagrams", 1.5)]);
        let m = best_line(text, 1, &weights, true);
        assert_eq!(m.line, 5, "the line with the rarer term, not the heading");
        assert_eq!(
            snippet_at(text, m.offset, &weights, true),
            "Rendered with Mermaid.js here."
        );
        // only the heading matches: the heading is the line, the first line of prose the
        // snippet
        let m = best_line("# Mermaid\n\nRendered here.\n", 1, &weights, true);
        assert_eq!((m.line, m.score), (1, 2.0));
        assert_eq!(
            snippet_at("# Mermaid\n\nRendered here.\n", m.offset, &weights, true),
            "Rendered here."
        );
        // nothing matches: the first line of text, never a rule
        let m = best_line("## Usage\n\n---\n\nUse it.\n", 1, &w(&[("x", 1.0)]), true);
        assert_eq!(m.line, 5);
        // a `#` line inside a fence is code, not a heading
        let m = best_line(
            "## Shell\n\n```sh\n# install mermaid\n```\n",
            1,
            &weights,
            true,
        );
        assert_eq!(m.line, 4);
        // so is one inside a ``` fence a ```` fence holds (the chunker's reading): before,
        // the inner opener ended the outer fence and the line was taken for a heading
        let m = best_line(
            "# Delta

Prelude.

````markdown
```python
# inner mermaid comment
```
## pseudo heading
````

After.
",
            1,
            &weights,
            true,
        );
        assert_eq!(m.line, 7);
        // and in a fence a list item indents with a tab
        let m = best_line(
            "# Setup

- Install:

	```sh
	# install mermaid
	```
",
            1,
            &weights,
            true,
        );
        assert_eq!(m.line, 6);
        // `#` lines that are not headings compete; setext headings do not
        for (text, line) in [
            ("## Tags\n\n#mermaid tag list\n", 3),
            ("## Script\n\n#!/bin/mermaid\n", 3),
            (
                "Mermaid diagrams\n================\n\nDiagrams use mermaid.\n",
                4,
            ),
            ("Intro\n\nMermaid\n-------\n\nRendered with mermaid.\n", 6),
        ] {
            assert_eq!(best_line(text, 1, &weights, true).line, line, "{text:?}");
        }
        // in a plain-text document a `#` line is text
        let m = best_line("# Mermaid notes\n\nplain\n", 1, &weights, false);
        assert_eq!(m.line, 1);
        // and its `<…>` words are no HTML: they match and are shown
        let text = "Intro line.\nUsage: cp <input> <output>\n";
        let out = w(&[("output", 1.0)]);
        let m = best_line(text, 1, &out, false);
        assert_eq!(m.line, 2);
        assert_eq!(
            snippet_at(text, m.offset, &out, false),
            "Usage: cp <input> <output>"
        );
        assert_eq!(snippet_at(text, m.offset, &out, true), "Usage: cp");
    }

    #[test]
    fn marker_and_script_lines_never_match() {
        let text = "::: code-group\n```sh\nnpm create vite\n```\n:::\n\n::: tip NOTE\nA tip about the group.\n:::\n<script setup>\nconst tip = 'group'\n</script>\n";
        let weights = w(&[("group", 1.0), ("tip", 1.0)]);
        let m = best_line(text, 10, &weights, true);
        assert_eq!(m.line, 17, "the tip's own line");
        assert_eq!(
            snippet_at(text, m.offset, &weights, true),
            "A tip about the group."
        );
        // nothing matched: the first line of prose is not a marker
        let m = best_line(
            "!!! note \"Title\"\n    Body words.\n",
            1,
            &w(&[("zebra", 1.0)]),
            true,
        );
        assert_eq!(m.line, 2);
    }

    #[test]
    fn a_long_line_gives_a_window_around_the_term() {
        let line = format!(
            "{} needle-word {}",
            "lead ".repeat(200),
            "tail ".repeat(200)
        );
        let s = snippet_at(&line, 0, &w(&[("needle", 1.0)]), true);
        assert!(s.contains("needle-word"), "{s}");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS, "{s}");
        // both cuts fall between words
        assert!(s.starts_with("…lead ") && s.ends_with(" tail…"), "{s}");
        // a window inside one long word still cuts it
        let word = format!("{}needle{}", "x".repeat(300), "y".repeat(300));
        let s = snippet_at(&word, 0, &w(&[("x", 1.0)]), true);
        assert_eq!(s.chars().count(), SNIPPET_CHARS, "{s}");
        let short = snippet_at("Use `--jobs N`   to limit.", 0, &w(&[("jobs", 1.0)]), true);
        assert_eq!(short, "Use `--jobs N` to limit.");
    }
}
