//! Budget splitting: a section over `max_tokens` is cut at blank lines that lie between
//! top-level blocks (never inside a fence, list or other multi-line block), packing whole
//! units greedily; a unit larger than the budget stays whole in its own part.

use super::lines::LineTable;

/// Estimated tokens of a text of `bytes` bytes: `ceil(bytes / 4)`.
pub(crate) fn tokens(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// Marks the lines covered by a block (first..=last of each range).
pub(crate) fn covered_lines(
    n: usize,
    ranges: impl IntoIterator<Item = (usize, usize)>,
) -> Vec<bool> {
    let mut covered = vec![false; n];
    for (first, last) in ranges {
        for slot in covered.iter_mut().take(last.saturating_add(1)).skip(first) {
            *slot = true;
        }
    }
    covered
}

/// Units of lines `first..=last`: maximal runs separated by blank lines that no block
/// covers. Each unit starts and ends on a non-blank line.
pub(crate) fn units(
    first: usize,
    last: usize,
    blank: &[bool],
    covered: &[bool],
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for line in first..=last {
        let is_blank = blank.get(line).copied().unwrap_or(true);
        let is_covered = covered.get(line).copied().unwrap_or(false);
        match (is_blank, current.as_mut()) {
            (false, Some(unit)) => unit.1 = line,
            (false, None) => current = Some((line, line)),
            (true, Some(_)) if !is_covered => out.extend(current.take()),
            (true, _) => {}
        }
    }
    out.extend(current);
    out
}

/// Packs units greedily into parts of at most `max_tokens` (joined text estimate).
pub(crate) fn pack(
    units: &[(usize, usize)],
    table: &LineTable,
    max_tokens: usize,
) -> Vec<(usize, usize)> {
    let mut parts = Vec::new();
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
    parts
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

    #[test]
    fn units_skip_covered_blank_lines() {
        // lines: 0 x, 1 blank (inside block 0..=2), 2 y, 3 blank, 4 z, 5 blank, 6 blank
        let blank = [false, true, false, true, false, true, true];
        let covered = covered_lines(7, [(0, 2), (4, 4)]);
        assert_eq!(units(0, 6, &blank, &covered), vec![(0, 2), (4, 4)]);
        assert_eq!(units(3, 3, &blank, &covered), vec![]);
    }

    #[test]
    fn pack_is_greedy_and_keeps_big_units_whole() {
        let text = "aaaa\n\nbbbb\n\ncccccccccccccccccccc\n\nd";
        let t = LineTable::new(text);
        let u = [(0, 0), (2, 2), (4, 4), (6, 6)];
        // "aaaa\n\nbbbb" = 10 bytes = 3 tokens.
        assert_eq!(pack(&u, &t, 3), vec![(0, 2), (4, 4), (6, 6)]);
        assert_eq!(pack(&u, &t, 100), vec![(0, 6)]);
        assert_eq!(pack(&u, &t, 0), vec![(0, 0), (2, 2), (4, 4), (6, 6)]);
        assert_eq!(pack(&[], &t, 3), vec![]);
    }
}
