//! Fenced code blocks as CommonMark defines them (an opening run of three or more
//! backticks or tildes, a closing run at least as long), nested fences (MyST, pymdownx),
//! and code spans: the line-level readings every pass of the chunker agrees on. Imports
//! nothing of the chunker but `lines`.

use super::lines::is_blank;

/// The index after an inline code span opening at `k` (a run of backticks closed by a
/// run of the same length on the line), or after the run when it is not closed.
pub(crate) fn skip_code_span(bytes: &[u8], k: usize) -> usize {
    let run = bytes[k..].iter().take_while(|&&b| b == b'`').count();
    let mut j = k + run;
    while j < bytes.len() {
        if bytes[j] == b'`' {
            let r = bytes[j..].iter().take_while(|&&b| b == b'`').count();
            if r == run {
                return j + r;
            }
            j += r;
        } else {
            j += 1;
        }
    }
    k + run
}

/// A fence opening: up to 3 spaces, then 3+ backticks or tildes (backtick fences may
/// not have a backtick in their info string). Returns the fence char and run length.
pub(crate) fn opens_fence(line: &str) -> Option<(u8, usize)> {
    fence_opening(line, 3)
}

/// Whether `line` closes a fence opened with `(ch, run)`.
pub(crate) fn closes_fence(line: &str, f: (u8, usize)) -> bool {
    fence_closing(line, f, 3)
}

/// Per line: part of a fenced block ([`NestedFence`]: its opener, its lines, its closer).
/// A line that leaves a nested fence's container is not, and may open another.
pub(crate) fn fenced_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<bool> {
    let mut fence: Option<NestedFence> = None;
    lines
        .map(|l| {
            if let Some(f) = fence {
                match f.at(l) {
                    FenceLine::Inside => return true,
                    FenceLine::Closes => {
                        fence = None;
                        return true;
                    }
                    FenceLine::Leaves => fence = None,
                }
            }
            fence = NestedFence::open(l);
            fence.is_some()
        })
        .collect()
}

/// A fence at any indent: one nested in an indented container (an mkdocs admonition or
/// content tab, a list item), as pymdownx's superfences reads it. For scans that must not
/// take a fenced line for markup (comments, link definitions): the parser itself reads
/// those blocks as indented code, so nothing inside them is markup.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NestedFence {
    ch: u8,
    run: usize,
    indent: usize,
}

/// What a line does to an open [`NestedFence`].
#[derive(Debug, PartialEq)]
pub(crate) enum FenceLine {
    /// Inside the fence.
    Inside,
    /// Its closer (part of the fence).
    Closes,
    /// Past it: the container the fence was nested in ended before this line (a
    /// non-blank line less indented than the opener), which is not in the fence.
    Leaves,
}

impl NestedFence {
    /// The fence `line` opens, at any indent.
    pub(crate) fn open(line: &str) -> Option<Self> {
        let indent = indent_of(line).0;
        fence_opening(line, usize::MAX).map(|(ch, run)| NestedFence { ch, run, indent })
    }

    /// What `line` does to this fence: a closer is within 3 spaces of the opener's
    /// indent (a deeper fence-like line is content, as in a code sample showing
    /// Markdown); a fence opened at 4 spaces or more sits in a container, which a
    /// less indented non-blank line ends.
    pub(crate) fn at(&self, line: &str) -> FenceLine {
        let indent = indent_of(line).0;
        if self.indent >= 4 && indent < self.indent && !is_blank(line) {
            return FenceLine::Leaves;
        }
        let within = indent.saturating_sub(self.indent) <= 3;
        if within && fence_closing(line, (self.ch, self.run), usize::MAX) {
            FenceLine::Closes
        } else {
            FenceLine::Inside
        }
    }
}

/// The leading whitespace of `line`: its width in columns (a tab advances to the next
/// multiple of 4, CommonMark's tab stop) and in bytes.
fn indent_of(line: &str) -> (usize, usize) {
    let mut cols = 0;
    let mut bytes = 0;
    for b in line.bytes() {
        match b {
            b' ' => cols += 1,
            b'\t' => cols = (cols / 4 + 1) * 4,
            _ => break,
        }
        bytes += 1;
    }
    (cols, bytes)
}

fn fence_opening(line: &str, max_indent: usize) -> Option<(u8, usize)> {
    let (indent, at) = indent_of(line);
    if indent > max_indent {
        return None;
    }
    let rest = line.get(at..)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = rest.bytes().take_while(|&b| b == ch).count();
    let info = rest.get(run..).unwrap_or("");
    (run >= 3 && !(ch == b'`' && info.contains('`'))).then_some((ch, run))
}

fn fence_closing(line: &str, (ch, run): (u8, usize), max_indent: usize) -> bool {
    let (indent, at) = indent_of(line);
    if indent > max_indent {
        return false;
    }
    let rest = line.get(at..).unwrap_or("");
    let n = rest.bytes().take_while(|&b| b == ch).count();
    n >= run && is_blank(rest.get(n..).unwrap_or(""))
}
