//! Response budgets: what an assistant receives must fit in its context. Every MCP tool
//! result and HTTP response is kept under a budget in tokens (estimated as bytes / 4,
//! [`super::estimate_tokens`]); passages are cut at line ends and say so, pages say how
//! to get the next one.

use super::format::BYTES_PER_TOKEN;
use super::RetrievedDocument;

/// Default budget of one response, in tokens (≈ 40 KB): well under the 25,000 tokens
/// common MCP clients accept for a tool result.
pub const DEFAULT_RESPONSE_TOKENS: usize = 10_000;

/// Smallest budget accepted, in tokens (room for the metadata of a full result list).
pub const MIN_RESPONSE_TOKENS: usize = 1_000;

/// Marks a passage cut to fit the budget.
pub const CUT_MARK: &str = "\n[…]";

/// The smallest part of a passage worth showing when it does not fit whole, bytes.
const MIN_PART_BYTES: usize = 120;

/// A response budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Most tokens of one response (estimated as bytes / 4).
    pub tokens: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            tokens: DEFAULT_RESPONSE_TOKENS,
        }
    }
}

impl Budget {
    /// The budget in bytes.
    pub fn bytes(&self) -> usize {
        self.tokens.saturating_mul(BYTES_PER_TOKEN)
    }
}

/// Each document's `content` as it fits in `bytes` in all, in rank order: whole while it
/// fits; the first that does not is cut at a line end and ends with [`CUT_MARK`] when at
/// least 120 bytes of it fit; the rest are `None`.
pub fn fit_contents(docs: &[RetrievedDocument], bytes: usize) -> Vec<Option<String>> {
    let mut left = bytes;
    let mut out = Vec::with_capacity(docs.len());
    let mut full = false;
    for d in docs {
        let c = d.content.trim_end();
        if full {
            out.push(None);
        } else if c.len() <= left {
            left -= c.len();
            out.push(Some(c.to_string()));
        } else if left >= MIN_PART_BYTES + CUT_MARK.len() {
            let part = cut_at_line(c, left - CUT_MARK.len());
            out.push(Some(format!("{part}{CUT_MARK}")));
            full = true;
        } else {
            out.push(None);
            full = true;
        }
    }
    out
}

/// The longest prefix of `text` of at most `room` bytes, ending at a line end when one
/// falls in its second half, else at a character boundary.
pub fn cut_at_line(text: &str, room: usize) -> &str {
    let mut end = room.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let prefix = &text[..end];
    match prefix.rfind('\n') {
        Some(nl) if nl >= end / 2 => &prefix[..nl],
        _ => prefix,
    }
}

/// Renders with the largest allowance, from `start` down by halves, whose rendering
/// (`render` returns it and its size in bytes) is at most `limit` bytes; the smallest
/// allowance tried last (0) is returned whatever its size.
pub fn largest_that_fits<T>(start: usize, limit: usize, render: impl Fn(usize) -> (T, usize)) -> T {
    sized_fit(start, limit, render).0
}

fn sized_fit<T>(start: usize, limit: usize, render: impl Fn(usize) -> (T, usize)) -> (T, usize) {
    let mut allowance = start;
    loop {
        let (out, size) = render(allowance);
        if size <= limit || allowance == 0 {
            return (out, size);
        }
        allowance = if allowance < 256 {
            0
        } else {
            allowance * limit / size.max(1) * 9 / 10
        };
    }
}

/// Results whose passage text a response keeps room for before it lists more citations.
pub const TEXT_FOR_BEST: usize = 3;

/// A response of up to `results` results under `limit` bytes: `render(keep, allowance)`
/// renders the first `keep` results with `allowance` bytes of passage text. Room is kept
/// for the text of the [`TEXT_FOR_BEST`] best results (at most a quarter of the limit);
/// every other byte goes to citations (ids, paths, lines, evidence) before any text: a
/// result is left out only when the citations alone no longer fit beside that room.
/// Then the text is cut to what is left ([`largest_that_fits`]: the best results keep
/// theirs longest), and results are left out while the response still exceeds the limit.
pub fn fit_response<T>(
    results: usize,
    limit: usize,
    render: impl Fn(usize, usize) -> (T, usize),
) -> T {
    let best = results.min(TEXT_FOR_BEST);
    let best_text = render(best, limit).1.saturating_sub(render(best, 0).1);
    let room = limit.saturating_sub(best_text.min(limit / 4));
    let mut keep = results;
    while keep > best {
        let bare = render(keep, 0).1;
        if bare <= room {
            break;
        }
        keep = (keep * room / bare.max(1)).clamp(best, keep - 1);
    }
    loop {
        let (out, size) = sized_fit(limit, limit, |a| render(keep, a));
        if size <= limit || keep == 0 {
            return out;
        }
        keep = (keep * limit / size.max(1)).min(keep - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(content: &str) -> RetrievedDocument {
        RetrievedDocument::new("id", content, "a.md:1-2", 1.0)
    }

    #[test]
    fn results_are_left_out_when_their_fields_alone_exceed_the_limit() {
        // 40 results of 100 bytes each and no passage text: 4,000 bytes > 1,000
        let render = |keep: usize, allowance: usize| (keep, keep * 100 + allowance.min(10));
        // 10 results fill the limit with no text (each wants 10 bytes: 30 kept for it)
        assert_eq!(fit_response(40, 1_000, render), 9);
        assert_eq!(fit_response(5, 1_000, render), 5);
    }

    #[test]
    fn citations_are_kept_beside_room_for_the_text_of_the_best_results() {
        // 20 results of 150 bytes of fields, each with 2,000 bytes of text, in 4,000 bytes
        let render = |keep: usize, allowance: usize| {
            let text = allowance.min(keep * 2_000);
            ((keep, text), keep * 150 + text)
        };
        let (keep, text) = fit_response(20, 4_000, render);
        assert_eq!(keep, 20, "every citation fits beside a quarter for text");
        assert!(text >= 900, "the best results keep text: {text} bytes");
        assert!(keep * 150 + text <= 4_000);
        // 100 results cannot all be cited: the citations take three quarters
        let (keep, text) = fit_response(100, 10_000, render);
        assert_eq!(keep, 50);
        assert!(text >= 2_000, "{text}");
        // when the text is short, every result stays
        let short = |keep: usize, allowance: usize| {
            let text = allowance.min(keep * 10);
            ((keep, text), keep * 60 + text)
        };
        assert_eq!(fit_response(100, 10_000, short).0, 100);
    }

    #[test]
    fn contents_fit_whole_then_cut_then_none() {
        let docs = [
            doc(&"a".repeat(100)),
            doc(&format!("{}\n{}", "b".repeat(150), "c".repeat(150))),
            doc("d"),
        ];
        let f = fit_contents(&docs, 300);
        assert_eq!(f[0].as_deref(), Some("a".repeat(100).as_str()));
        assert_eq!(
            f[1].as_deref(),
            Some(format!("{}{CUT_MARK}", "b".repeat(150)).as_str())
        );
        assert_eq!(f[2], None);
        let total: usize = f.iter().flatten().map(String::len).sum();
        assert!(total <= 300);
    }

    #[test]
    fn the_allowance_shrinks_until_the_rendering_fits() {
        let out = largest_that_fits(10_000, 1_000, |a| (a, a + 200));
        assert!(out + 200 <= 1_000, "{out}");
        assert_eq!(largest_that_fits(50, 10, |a| (a, a + 200)), 0);
    }
}
