//! Rendering retrieved documents for a prompt, with citations, under a token budget.

use super::RetrievedDocument;

/// Tokens are estimated as bytes / 4 (rounded up): close to what BPE tokenizers give
/// for English prose and Markdown, conservative for code. No tokenizer is loaded.
pub const BYTES_PER_TOKEN: usize = 4;

/// The smallest part of a passage worth showing when the next one does not fit whole.
const MIN_PARTIAL_BYTES: usize = 120;

/// Marks a passage cut to fit the budget.
const CUT_MARK: &str = "\n[…]";

/// Estimated tokens of `text`: `ceil(bytes / 4)` (see [`BYTES_PER_TOKEN`]).
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(BYTES_PER_TOKEN)
}

/// Renders `docs` in order as numbered, cited blocks:
///
/// ```text
/// [1] guide/parallel.md:5-8
/// Running tasks in parallel › Limiting concurrency
///
/// ## Limiting concurrency
/// Use `--jobs N` …
///
/// [2] …
/// ```
///
/// The result never exceeds `max_tokens` by [`estimate_tokens`] (bytes ≤ 4 ×
/// `max_tokens`). Whole documents are kept while they fit; the first that does not is
/// cut at a line end (else a character boundary) and marked `[…]` when at least 120
/// bytes of it fit, and rendering stops there. The `[n]` numbers are the positions in
/// `docs`, so citations stay stable.
pub fn format_retrieved_documents(docs: &[RetrievedDocument], max_tokens: usize) -> String {
    let budget = max_tokens.saturating_mul(BYTES_PER_TOKEN);
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        let sep = if out.is_empty() { "" } else { "\n\n" };
        let header = match &d.metadata.stale {
            Some(why) => format!("[{}] {} (STALE: {why}; text as indexed)", i + 1, d.source),
            None => format!("[{}] {}", i + 1, d.source),
        };
        let content = d.content.trim_end();
        let whole = sep.len() + header.len() + 1 + content.len();
        if out.len() + whole <= budget {
            out.push_str(sep);
            out.push_str(&header);
            out.push('\n');
            out.push_str(content);
            continue;
        }
        let fixed = sep.len() + header.len() + 1 + CUT_MARK.len();
        if out.len() + fixed + MIN_PARTIAL_BYTES <= budget {
            let room = budget - out.len() - fixed;
            out.push_str(sep);
            out.push_str(&header);
            out.push('\n');
            out.push_str(super::budget::cut_at_line(content, room).trim_end());
            out.push_str(CUT_MARK);
        }
        break;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn doc(i: usize, body: &str) -> RetrievedDocument {
        RetrievedDocument::new(
            format!("d{i}"),
            format!("Title › Heading {i}\n\n{body}"),
            format!("guide/d{i}.md:{}-{}", i * 10 + 1, i * 10 + 8),
            1.0,
        )
    }

    #[test]
    fn whole_documents_then_a_marked_cut_with_citations() {
        let docs: Vec<_> = (0..3).map(|i| doc(i, &"word ".repeat(60))).collect();
        let all = format_retrieved_documents(&docs, 10_000);
        assert!(all.starts_with("[1] guide/d0.md:1-8\nTitle › Heading 0\n\nword"));
        assert!(all.contains("\n\n[2] guide/d1.md:11-18\n"));
        assert!(all.contains("\n\n[3] guide/d2.md:21-28\n"));
        assert!(!all.contains("[…]"));
        let some = format_retrieved_documents(&docs, 130);
        assert!(estimate_tokens(&some) <= 130);
        assert!(some.contains("[2] guide/d1.md:11-18"));
        assert!(some.ends_with("[…]"), "{some}");
        assert!(!some.contains("[3]"));
        assert_eq!(format_retrieved_documents(&docs, 5), "");
    }

    proptest! {
        #[test]
        fn never_exceeds_the_budget(
            bodies in proptest::collection::vec("[a-zé€ \n]{0,400}", 0..8),
            max_tokens in 0usize..600,
        ) {
            let docs: Vec<_> = bodies.iter().enumerate().map(|(i, b)| doc(i, b)).collect();
            let out = format_retrieved_documents(&docs, max_tokens);
            prop_assert!(estimate_tokens(&out) <= max_tokens, "{} > {}", estimate_tokens(&out), max_tokens);
            prop_assert!(out.len() <= max_tokens * BYTES_PER_TOKEN);
        }
    }
}
