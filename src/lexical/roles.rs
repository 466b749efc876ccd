//! Page roles a query may not be asking for: a change log (or a blog's post) restates
//! what reference pages define, so its entries weigh `QueryParams::changelog_prior`
//! unless the question asks about changes (a word of [`CHANGE_WORDS`] or a version such
//! as `v1.80`).

use std::collections::HashSet;

/// Plain query words that ask about changes: a question holding one is answered by
/// change logs as readily as by any page. (`change`, `release`, `version`, `fixed` and
/// `added` are left out: "how do I change the registry", "a release build" and "a fixed
/// version" ask about the thing itself.)
const CHANGE_WORDS: [&str; 16] = [
    "changelog",
    "announced",
    "announcement",
    "announcing",
    "changed",
    "changes",
    "released",
    "deprecated",
    "deprecation",
    "introduced",
    "stabilized",
    "stabilised",
    "history",
    "breaking",
    "regression",
    "removed",
];

/// The change-log prior for `query`: `changelog_prior`, or 1 when the query asks about
/// changes ([`asks_for_changes`]).
pub fn changelog_prior_for(query: &str, changelog_prior: f32) -> f32 {
    match asks_for_changes(query, &crate::analysis::plain_query_words(query)) {
        true => 1.0,
        false => changelog_prior,
    }
}

/// Whether `query` asks about changes: one of its plain `words` is in
/// [`CHANGE_WORDS`], or it names a version (`v1.80`, `2.3.0`).
pub(super) fn asks_for_changes(query: &str, words: &HashSet<String>) -> bool {
    CHANGE_WORDS.iter().any(|w| words.contains(*w)) || query.split_whitespace().any(is_version)
}

/// A version: `v1.80`, `2.3.0`, `2.0.0-rc.1` (a `v` and two or three numbers, or exactly
/// three numbers; `3.5` alone is any decimal, `127.0.0.1` an address, `2024-01-15` a
/// date).
fn is_version(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    let (prefixed, t) = match t.strip_prefix(['v', 'V']) {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    // a pre-release or build suffix (`-rc.1`, `+build`) is not counted
    let core = t.split(['-', '+']).next().unwrap_or(t);
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = parts
        .iter()
        .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    numeric && (parts.len() == 3 || (prefixed && parts.len() == 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks(q: &str) -> bool {
        asks_for_changes(q, &crate::analysis::plain_query_words(q))
    }

    #[test]
    fn change_questions_and_versions() {
        assert!(asks("what changed in cargo 1.80"));
        assert!(asks("when was the sparse protocol stabilized?"));
        assert!(asks("is `cargo-features` deprecated"));
        assert!(asks("new in v2.3.0"));
        assert!(!asks("how do I change the default registry"));
        assert!(!asks("build in release mode with debug info"));
        assert!(!asks("what does CARGO_LOG do"));
        assert!(!asks("use version 0 of the crate"));
        assert!(!asks("a 3.5 KB limit"));
        assert!(asks("cargo 1.80.0 lockfile"));
        assert!(asks("what is new in v1.80?"));
        assert!(asks("the blog post announcing io_uring support"));
        assert!(!asks("blog sidebar count"));
        assert!(asks("breaking in 2.0.0-rc.1"));
        assert!(!asks("bind to 127.0.0.1 instead"));
        assert!(!asks("logs from 2024-01-15"));
    }
}
