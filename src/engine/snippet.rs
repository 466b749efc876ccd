//! Short snippets for result lists.

use crate::analysis::fold;

/// Longest snippet, in characters.
pub const SNIPPET_CHARS: usize = 200;

/// A one-line snippet of `text`: the first non-heading, non-fence line that contains one
/// of `terms` (folded substring match), else the first such line; white space collapsed,
/// cut to [`SNIPPET_CHARS`] characters with `…`.
pub fn snippet(text: &str, terms: &[String]) -> String {
    let candidates: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("```"))
        .collect();
    let hit = candidates.iter().find(|l| {
        let f = fold(l);
        terms.iter().any(|t| f.contains(t.as_str()))
    });
    let line = hit.or(candidates.first()).copied().unwrap_or("");
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= SNIPPET_CHARS {
        return collapsed;
    }
    let cut: String = collapsed.chars().take(SNIPPET_CHARS - 1).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_first_line_with_a_term_and_cuts_long_lines() {
        let text = "## Heading\n\nFirst line.\nThe `HashMap` line.\n";
        assert_eq!(snippet(text, &["hashmap".into()]), "The `HashMap` line.");
        assert_eq!(snippet(text, &["zzz".into()]), "First line.");
        let long = "é".repeat(500);
        let s = snippet(&long, &[]);
        assert_eq!(s.chars().count(), SNIPPET_CHARS);
        assert!(s.ends_with('…'));
    }
}
