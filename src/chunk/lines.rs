//! Line table: byte ranges of the lines of a text, where `\r\n`, a lone `\r` and `\n`
//! each end one line. Line indexes are 0-based here; chunks report them 1-based.

/// Content byte range of one line (terminator excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
}

/// All lines of one text, with prefix sums of their content lengths.
#[derive(Debug, Clone)]
pub(crate) struct LineTable {
    lines: Vec<Line>,
    /// `prefix[i]` = sum of content lengths of lines `0..i`.
    prefix: Vec<usize>,
}

impl LineTable {
    /// Builds the table. A final line without terminator counts; a text ending with a
    /// terminator has no extra empty last line. The empty text has no lines.
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => {
                    lines.push(Line { start, end: i });
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    lines.push(Line { start, end: i });
                    i += if bytes.get(i + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                    start = i;
                }
                _ => i += 1,
            }
        }
        if start < bytes.len() {
            lines.push(Line {
                start,
                end: bytes.len(),
            });
        }
        let mut prefix = Vec::with_capacity(lines.len() + 1);
        let mut sum = 0;
        prefix.push(0);
        for line in &lines {
            sum += line.end - line.start;
            prefix.push(sum);
        }
        LineTable { lines, prefix }
    }

    /// Number of lines.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// The line with index `i`, if any.
    pub fn get(&self, i: usize) -> Option<Line> {
        self.lines.get(i).copied()
    }

    /// Index of the line holding byte `offset` (a terminator belongs to its line);
    /// offsets past the end map to the last line; 0 for an empty table.
    pub fn line_of(&self, offset: usize) -> usize {
        let after = self.lines.partition_point(|l| l.start <= offset);
        after
            .saturating_sub(1)
            .min(self.lines.len().saturating_sub(1))
    }

    /// Content of line `i` in `text` (the text the table was built from, or a copy of
    /// the same byte length and line structure); empty when out of range.
    pub fn content<'a>(&self, text: &'a str, i: usize) -> &'a str {
        self.lines
            .get(i)
            .and_then(|l| text.get(l.start..l.end))
            .unwrap_or("")
    }

    /// Lines `first..=last` of `text` joined with `\n`.
    pub fn join(&self, text: &str, first: usize, last: usize) -> String {
        let mut out = String::with_capacity(self.joined_len(first, last));
        for i in first..=last.min(self.lines.len().saturating_sub(1)) {
            if i > first {
                out.push('\n');
            }
            out.push_str(self.content(text, i));
        }
        out
    }

    /// Byte length of `join(first, last)`, without building it.
    pub fn joined_len(&self, first: usize, last: usize) -> usize {
        let last = last.min(self.lines.len().saturating_sub(1));
        if self.lines.is_empty() || first > last {
            return 0;
        }
        self.prefix[last + 1] - self.prefix[first] + (last - first)
    }
}

/// True when a line has only ASCII whitespace (spaces, tabs, form feeds).
pub(crate) fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace())
}

/// 1-based line number of a 0-based index (saturating).
pub(crate) fn line_number(index: usize) -> u32 {
    u32::try_from(index.saturating_add(1)).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(text: &str) -> Vec<&str> {
        let t = LineTable::new(text);
        (0..t.len()).map(|i| t.content(text, i)).collect()
    }

    #[test]
    fn all_three_terminators_end_a_line() {
        assert_eq!(contents("a\nb\r\nc\rd"), vec!["a", "b", "c", "d"]);
        assert_eq!(contents("a\n"), vec!["a"]);
        assert_eq!(contents("a\n\n"), vec!["a", ""]);
        assert_eq!(contents("\r\r\n\n"), vec!["", "", ""]);
        assert!(contents("").is_empty());
    }

    #[test]
    fn line_of_maps_offsets_and_terminators() {
        let text = "ab\r\ncd\ref";
        let t = LineTable::new(text);
        assert_eq!(t.line_of(0), 0);
        assert_eq!(t.line_of(2), 0); // '\r'
        assert_eq!(t.line_of(3), 0); // '\n'
        assert_eq!(t.line_of(4), 1);
        assert_eq!(t.line_of(6), 1);
        assert_eq!(t.line_of(7), 2);
        assert_eq!(t.line_of(100), 2);
        assert_eq!(LineTable::new("").line_of(5), 0);
    }

    #[test]
    fn join_and_joined_len_agree() {
        let text = "héllo\r\n\r\nwörld\rlast";
        let t = LineTable::new(text);
        assert_eq!(t.join(text, 0, 3), "héllo\n\nwörld\nlast");
        for a in 0..4 {
            for b in a..4 {
                assert_eq!(t.joined_len(a, b), t.join(text, a, b).len());
            }
        }
        assert_eq!(t.joined_len(3, 1), 0);
    }

    #[test]
    fn blank_lines() {
        assert!(is_blank(""));
        assert!(is_blank(" \t "));
        assert!(!is_blank("  x"));
    }
}
