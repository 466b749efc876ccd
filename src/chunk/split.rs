//! Budget splitting: a section over `max_tokens` is cut at blank lines that lie between
//! top-level blocks (never inside a fence, list or other multi-line block), packing whole
//! units greedily; a unit larger than the budget stays whole in its own part. Three
//! refinements keep pieces meaningful:
//!
//! - a heading is glued to the block after it: no piece is a bare heading;
//! - an admonition or tab marker (`!!! note`, `??? tip`, `=== "Tab"`) and a Docusaurus
//!   container opener (`:::note`) are glued to the block after them, a closer (`:::`) to
//!   the block before it: no piece ends on a marker, none starts on a closer;
//! - a piece with no prose of its own joins the piece before it: one of fenced code
//!   always (code stays with the prose that introduces it), one of reference-style link
//!   definitions or admonition/tab markers (with or without code) while the joined piece
//!   stays within twice the budget (no piece is a block of `[id]: url` lines);
//! - a table larger than the budget is cut between rows; each piece after the first
//!   repeats the header rows (as its prelude: the piece's lines stay its own);
//! - a list larger than [`FINER_CUT`] times the budget is cut between its top-level
//!   items (an item stays whole, with its nested lists and code); a paragraph as large
//!   (lines with no blank line between them), and a text document's run of lines without
//!   a blank line, are cut between lines ([`split_long_units`] for text). A single line
//!   is never cut: a passage is a range of whole lines. Smaller ones stay whole: on the Cargo book, cutting every
//!   list over the budget lowered hybrid MRR@10 (0.7261 → 0.7242; twice: 0.7140), four
//!   times keeps it and raises recall@5 (0.496 → 0.513); see `benches/QUALITY.md`.

use super::lines::LineTable;
use super::markdown::{Block, BlockKind};
use super::markers::{marker, Marker};

/// A list or a text document's run of lines is cut at finer points (items, lines) when
/// it is over this many times the budget.
pub(crate) const FINER_CUT: usize = 4;

/// True when `bytes` of text are over [`FINER_CUT`] times `max_tokens`.
fn over_finer_cut(bytes: usize, max_tokens: usize) -> bool {
    tokens(bytes) > FINER_CUT.saturating_mul(max_tokens)
}

/// Estimated tokens of a text of `bytes` bytes: `ceil(bytes / 4)`.
pub(crate) fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// What the lines of a document are, for cutting.
pub(crate) struct Layout {
    /// Inside a top-level block (a blank line there is no cut point).
    pub covered: Vec<bool>,
    /// Inside a fenced code block.
    pub code: Vec<bool>,
    /// Not prose: a reference-style link definition or an admonition/tab marker line.
    pub aside: Vec<bool>,
    /// A table row (after the header) where a piece may start, with the table's header
    /// line range (0-based, inclusive).
    pub row_break: Vec<Option<(usize, usize)>>,
    /// The first line of a top-level item (not the first) of a list, or a line (not the
    /// first) of a paragraph, over [`FINER_CUT`] times the budget: a piece may start there.
    pub item_break: Vec<bool>,
}

impl Layout {
    /// The layout of `blocks` over `n` lines (`blank` flags blank lines, `parse` is the
    /// parse copy the blocks come from); tables over `max_tokens` get row breaks.
    pub fn new(
        blocks: &[Block],
        n: usize,
        blank: &[bool],
        parse: &str,
        table: &LineTable,
        max_tokens: usize,
    ) -> Layout {
        let mut l = Layout {
            covered: vec![false; n],
            code: vec![false; n],
            aside: (0..n)
                .map(|i| {
                    let line = table.content(parse, i);
                    super::display::is_link_definition(line) || marker(line).is_some()
                })
                .collect(),
            row_break: vec![None; n],
            item_break: vec![false; n],
        };
        for b in blocks {
            let last = b.last_line.min(n.saturating_sub(1));
            if b.heading.is_some() {
                // a heading stays with the block after it
                let mut j = last + 1;
                while j < n && blank.get(j).copied().unwrap_or(false) {
                    l.covered[j] = true;
                    j += 1;
                }
            }
            for i in b.first_line..=last {
                l.covered[i] = true;
                if b.kind == BlockKind::FencedCode {
                    l.code[i] = true;
                }
            }
            if let BlockKind::Table { header_end } = b.kind {
                if tokens(table.joined_len(b.first_line, last)) > max_tokens {
                    for slot in l.row_break.iter_mut().take(last + 1).skip(header_end + 2) {
                        *slot = Some((b.first_line, header_end));
                    }
                }
            }
            if b.kind == BlockKind::List
                && over_finer_cut(table.joined_len(b.first_line, last), max_tokens)
            {
                for &i in b.items.iter().skip(1).filter(|&&i| i <= last) {
                    l.item_break[i] = true;
                }
            }
            if b.kind == BlockKind::Paragraph
                && over_finer_cut(table.joined_len(b.first_line, last), max_tokens)
            {
                // not next to a marker or a link definition (glued to their blocks)
                for i in b.first_line + 1..=last {
                    l.item_break[i] = !l.aside[i - 1] && !l.aside[i];
                }
            }
        }
        glue_markers(&mut l.covered, &l.code, blank, parse, table);
        l
    }
}

/// Marks as covered the blank lines between a marker and the block it belongs to.
fn glue_markers(
    covered: &mut [bool],
    code: &[bool],
    blank: &[bool],
    parse: &str,
    table: &LineTable,
) {
    let n = covered.len();
    for i in 0..n {
        if code[i] || blank[i] {
            continue;
        }
        match marker(table.content(parse, i)) {
            Some(Marker::Opener) => {
                let mut j = i + 1;
                while j < n && blank[j] {
                    covered[j] = true;
                    j += 1;
                }
            }
            Some(Marker::Closer) => {
                let mut j = i;
                while j > 0 && blank[j - 1] {
                    covered[j - 1] = true;
                    j -= 1;
                }
            }
            None => {}
        }
    }
}

/// Units of lines `first..=last`: maximal runs separated by blank lines that no block
/// covers, also broken before a table row that may start a piece. Each unit starts and
/// ends on a non-blank line.
pub(crate) fn units(
    first: usize,
    last: usize,
    blank: &[bool],
    layout: &Layout,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in first..=last {
        let is_blank = blank.get(line).copied().unwrap_or(true);
        let is_covered = layout.covered.get(line).copied().unwrap_or(false);
        let breaks = layout.row_break.get(line).copied().flatten().is_some()
            || layout.item_break.get(line).copied().unwrap_or(false);
        match (is_blank, current.as_mut()) {
            (false, Some(_)) if breaks => {
                out.extend(current.take());
                current = Some((line, line));
            }
            (false, Some(unit)) => unit.1 = line,
            (false, None) => current = Some((line, line)),
            (true, Some(_)) if !is_covered => out.extend(current.take()),
            (true, _) => {}
        }
    }
    out.extend(current);
    out
}

/// `units` with each unit over [`FINER_CUT`] times `max_tokens` cut into units of one
/// line (for a text document, whose lines are its only structure; [`pack`] joins them
/// again up to the budget).
pub(crate) fn split_long_units(
    units: Vec<(usize, usize)>,
    table: &LineTable,
    blank: &[bool],
    max_tokens: usize,
) -> Vec<(usize, usize)> {
    units
        .into_iter()
        .flat_map(|(a, b)| {
            let long = over_finer_cut(table.joined_len(a, b), max_tokens);
            let lines: Vec<(usize, usize)> = if long {
                (a..=b)
                    .filter(|&i| !blank.get(i).copied().unwrap_or(true))
                    .map(|i| (i, i))
                    .collect()
            } else {
                vec![(a, b)]
            };
            lines
        })
        .collect()
}

/// Packs units greedily into parts of at most `max_tokens` (joined text estimate), then
/// joins a part with no prose of its own to the part before it (fenced code always; link
/// definitions and markers within twice the budget).
pub(crate) fn pack(
    units: &[(usize, usize)],
    table: &LineTable,
    max_tokens: usize,
    layout: &Layout,
    blank: &[bool],
) -> Vec<(usize, usize)> {
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let Some(&(mut start, mut end)) = units.first() else {
        return parts;
    };
    for &(a, b) in &units[1..] {
        if tokens(table.joined_len(start, b)) <= max_tokens {
            end = b;
        } else {
            parts.push((start, end));
            (start, end) = (a, b);
        }
    }
    parts.push((start, end));
    let flag = |v: &[bool], i: usize| v.get(i).copied().unwrap_or(false);
    let only = |(a, b): (usize, usize), aside: bool| {
        (a..=b).all(|i| {
            blank.get(i).copied().unwrap_or(true)
                || flag(&layout.code, i)
                || (aside && flag(&layout.aside, i))
        })
    };
    // code joins whatever its size; link definitions and markers (with or without code)
    // only while the joined piece stays within twice the budget
    let joins = |prev: (usize, usize), p: (usize, usize)| {
        only(p, false) || (only(p, true) && tokens(table.joined_len(prev.0, p.1)) <= 2 * max_tokens)
    };
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(parts.len());
    for p in parts {
        match out.last_mut() {
            Some(prev) if joins(*prev, p) => prev.1 = p.1,
            _ => out.push(p),
        }
    }
    out
}

/// The header lines a piece starting at `line` repeats, if it starts inside a cut table.
pub(crate) fn prelude_of(layout: &Layout, line: usize) -> Option<(usize, usize)> {
    layout.row_break.get(line).copied().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate_rounds_up() {
        assert_eq!(tokens(0), 0);
        assert_eq!(tokens(1), 1);
        assert_eq!(tokens(4), 1);
        assert_eq!(tokens(5), 2);
    }

    fn layout(n: usize, covered: &[(usize, usize)]) -> Layout {
        let mut l = Layout {
            covered: vec![false; n],
            code: vec![false; n],
            aside: vec![false; n],
            row_break: vec![None; n],
            item_break: vec![false; n],
        };
        for &(a, b) in covered {
            (a..=b).for_each(|i| l.covered[i] = true);
        }
        l
    }

    #[test]
    fn units_skip_covered_blank_lines() {
        // lines: 0 x, 1 blank (inside block 0..=2), 2 y, 3 blank, 4 z, 5 blank, 6 blank
        let blank = [false, true, false, true, false, true, true];
        let l = layout(7, &[(0, 2), (4, 4)]);
        assert_eq!(units(0, 6, &blank, &l), vec![(0, 2), (4, 4)]);
        assert_eq!(units(3, 3, &blank, &l), vec![]);
    }

    #[test]
    fn pack_is_greedy_and_keeps_big_units_whole() {
        let text = "aaaa\n\nbbbb\n\ncccccccccccccccccccc\n\nd";
        let t = LineTable::new(text);
        let blank = [false, true, false, true, false, true, false];
        let l = layout(7, &[]);
        let u = [(0, 0), (2, 2), (4, 4), (6, 6)];
        // "aaaa\n\nbbbb" = 10 bytes = 3 tokens.
        assert_eq!(pack(&u, &t, 3, &l, &blank), vec![(0, 2), (4, 4), (6, 6)]);
        assert_eq!(pack(&u, &t, 100, &l, &blank), vec![(0, 6)]);
        assert_eq!(
            pack(&u, &t, 0, &l, &blank),
            vec![(0, 0), (2, 2), (4, 4), (6, 6)]
        );
        assert_eq!(pack(&[], &t, 3, &l, &blank), vec![]);
    }

    #[test]
    fn a_code_only_piece_joins_the_prose_before_it() {
        let text = "intro\n\n```\ncode\n```";
        let t = LineTable::new(text);
        let blank = [false, true, false, false, false];
        let mut l = layout(5, &[(2, 4)]);
        (2..=4).for_each(|i| l.code[i] = true);
        assert_eq!(pack(&[(0, 0), (2, 4)], &t, 1, &l, &blank), vec![(0, 4)]);
    }

    #[test]
    fn a_piece_of_link_definitions_or_markers_joins_the_piece_before_it() {
        let text = "intro\n\n  [a]: https://a.example\n  [b]: ../b.md#x\n\n!!! note";
        let t = LineTable::new(text);
        let blank = [false, true, false, false, true, false];
        let mut l = layout(6, &[]);
        (2..=3).for_each(|i| l.aside[i] = true);
        l.aside[5] = true;
        assert_eq!(
            pack(&[(0, 0), (2, 3), (5, 5)], &t, 8, &l, &blank),
            vec![(0, 5)]
        );
        // many marker-and-code groups do not pile into one piece past twice the budget
        let text = "intro\n\n:::tip\n:::\n\n:::tip\n:::\n\n:::tip\n:::";
        let t = LineTable::new(text);
        let blank = [
            false, true, false, false, true, false, false, true, false, false,
        ];
        let mut l = layout(10, &[]);
        for i in [2, 3, 5, 6, 8, 9] {
            l.aside[i] = true;
        }
        let parts = pack(&[(0, 0), (2, 3), (5, 6), (8, 9)], &t, 4, &l, &blank);
        assert!(parts.len() >= 2, "{parts:?}");
        assert!(
            parts.iter().all(|&(a, b)| tokens(t.joined_len(a, b)) <= 8),
            "{parts:?}"
        );
        // prose after them is a piece of its own again
        let text = "intro\n\n[a]: https://a.example\n\nprose";
        let t = LineTable::new(text);
        let blank = [false, true, false, true, false];
        let mut l = layout(5, &[]);
        l.aside[2] = true;
        assert_eq!(
            pack(&[(0, 0), (2, 2), (4, 4)], &t, 8, &l, &blank),
            vec![(0, 2), (4, 4)]
        );
    }

    #[test]
    fn marker_titles() {
        for (line, want) in [
            ("!!! note \"Pinning versions\"", Some("Pinning versions")),
            ("??? tip", Some("")),
            ("???+ warning \"Open\"", Some("Open")),
            ("=== \"Linux\"", Some("Linux")),
            ("::: tip NOTE", Some("NOTE")),
            ("::: code-group", Some("")),
            (":::tip[Use a lockfile]", Some("Use a lockfile")),
            (":::", Some("")),
            ("Plain text", None),
        ] {
            assert_eq!(super::super::markers::marker_title(line), want, "{line:?}");
        }
    }

    #[test]
    fn markers() {
        assert!(marker("!!! note \"Title\"") == Some(Marker::Opener));
        assert!(marker("???+ tip") == Some(Marker::Opener));
        assert!(marker("    === \"Tab\"") == Some(Marker::Opener));
        assert!(marker(":::note Title") == Some(Marker::Opener));
        assert!(marker(":::") == Some(Marker::Closer));
        assert!(marker("==== heading underline").is_none());
        assert!(marker("plain").is_none());
    }
}
