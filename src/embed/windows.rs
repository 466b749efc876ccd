//! Tail windows of a long embedding input: the parts of it an embedder that truncates at
//! `limit` word pieces would not see, cut into windows that each fit.
//!
//! The input is the projection's template ([`crate::projection::embedding_input`]): a
//! prefix (title and heading path), a blank line, the body. The first `limit` pieces are
//! the chunk's own vector. Each tail window repeats the prefix (so a window of a long
//! list still says which section it is from), then takes the next `limit − prefix`
//! pieces of the body, overlapping the window before it by an eighth of that, so a
//! sentence cut at a window's end is seen whole by the next. A window starts and ends at
//! a word boundary when one lies within the overlap of the cut: the window's text,
//! embedded on its own, then gives the same word pieces as inside the whole input (BERT's
//! pre-tokeniser splits at whitespace and punctuation only). A longer word (a hash, a
//! long identifier) is cut inside, and its first piece may then split differently, so
//! such a window can take a few pieces more than counted (the model drops its last
//! ones; the next window holds them). When the prefix takes more than half the limit,
//! windows go without it.

/// One word piece of an input: its byte range, and whether it continues the word of the
/// piece before it (`##ing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub start: usize,
    pub end: usize,
    pub continues: bool,
}

/// The tail-window texts of `input` (word pieces `pieces`, in order, special tokens left
/// out) for an embedder that sees `limit` pieces: empty when `pieces.len() ≤ limit`.
pub fn tails(input: &str, pieces: &[Piece], limit: usize) -> Vec<String> {
    let n = pieces.len();
    if n <= limit || limit < 8 {
        return Vec::new();
    }
    let cut = input.find("\n\n").unwrap_or(0);
    let mut held = pieces.iter().take_while(|p| p.end <= cut).count();
    let mut prefix = input[..cut].trim_end();
    if held > limit / 2 {
        held = 0;
        prefix = "";
    }
    let width = limit - held;
    let overlap = width / 8;
    // the start of the word holding piece `i`, looking back no further than `floor`
    // (else `i` itself: a word longer than that is cut)
    let word_start = |i: usize, floor: usize| {
        let mut j = i;
        while j > floor && pieces.get(j).is_some_and(|p| p.continues) {
            j -= 1;
        }
        match pieces.get(j).is_some_and(|p| p.continues) {
            true => i,
            false => j,
        }
    };
    let mut out = Vec::new();
    let first = limit - overlap;
    let mut start = word_start(first, first.saturating_sub(overlap).max(held));
    loop {
        let mut end = (start + width).min(n);
        if end < n {
            end = word_start(end, end - overlap);
        }
        let body = &input[pieces[start].start..pieces[end - 1].end];
        out.push(match prefix.is_empty() {
            true => body.to_string(),
            false => format!("{prefix}\n\n{body}"),
        });
        if end >= n {
            return out;
        }
        start = word_start(end - overlap, end - 2 * overlap).max(start + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces of a text split at spaces, each word one piece, except words with a `-`,
    /// which are two pieces (the second continuing the first).
    fn pieces(text: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        let mut at = 0;
        for word in text.split(' ') {
            let start = text[at..].find(word).map_or(at, |i| at + i);
            if word.is_empty() {
                continue;
            }
            match word.find('-') {
                Some(d) => {
                    out.push(Piece {
                        start,
                        end: start + d,
                        continues: false,
                    });
                    out.push(Piece {
                        start: start + d,
                        end: start + word.len(),
                        continues: true,
                    });
                }
                None => out.push(Piece {
                    start,
                    end: start + word.len(),
                    continues: false,
                }),
            }
            at = start + word.len();
        }
        out
    }

    #[test]
    fn an_input_within_the_limit_has_no_tails() {
        let text = "T\n\na b c";
        assert!(tails(text, &pieces(text), 16).is_empty());
    }

    #[test]
    fn every_piece_past_the_limit_is_in_a_window_that_fits_with_the_prefix() {
        let body: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let text = format!("Title\n\n{}", body.join(" "));
        let ps = pieces(&text);
        let limit = 24;
        let windows = tails(&text, &ps, limit);
        assert!(!windows.is_empty());
        for w in &windows {
            assert!(w.starts_with("Title\n\n"), "{w}");
            assert!(pieces(w).len() <= limit, "{w}");
        }
        // every word the first window (the first `limit` pieces) does not hold is in a tail
        for word in &body[limit - 1..] {
            assert!(
                windows
                    .iter()
                    .any(|w| w.split([' ', '\n']).any(|x| x == word)),
                "{word} unseen"
            );
        }
        assert!(windows.last().unwrap().ends_with("w99"));
    }

    #[test]
    fn windows_start_and_end_at_word_boundaries() {
        let body: Vec<String> = (0..60).map(|i| format!("a{i}-b")).collect();
        let text = format!("T\n\n{}", body.join(" "));
        let ps = pieces(&text);
        for w in tails(&text, &ps, 16) {
            let body = w.strip_prefix("T\n\n").unwrap();
            assert!(body.starts_with('a') && body.ends_with("-b"), "{w}");
        }
    }

    #[test]
    fn a_prefix_over_half_the_limit_is_left_out() {
        let head: Vec<String> = (0..12).map(|i| format!("h{i}")).collect();
        let body: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
        let text = format!("{}\n\n{}", head.join(" "), body.join(" "));
        let windows = tails(&text, &pieces(&text), 16);
        assert!(windows
            .iter()
            .all(|w| w.starts_with('w') && pieces(w).len() <= 16));
        assert!(windows.last().unwrap().ends_with("w39"));
    }

    #[test]
    fn a_word_longer_than_a_window_still_ends_the_loop() {
        let text = format!("T\n\nx{}", "-y".repeat(100));
        // one word of 60 pieces: every piece continues the first
        let mut ps = vec![Piece {
            start: 3,
            end: 4,
            continues: false,
        }];
        for i in 0..59 {
            ps.push(Piece {
                start: 4 + 2 * i,
                end: 6 + 2 * i,
                continues: true,
            });
        }
        let windows = tails(&text, &ps, 16);
        // 60 pieces past a limit of 16, windows of 14 (2 overlapping): four or five
        assert!((4..=5).contains(&windows.len()), "{}", windows.len());
    }
}
