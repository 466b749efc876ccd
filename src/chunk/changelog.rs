//! Change logs: a page or a section that restates, as a list of changes, what reference
//! pages define (`QueryParams::changelog_prior`). Named by the file or folder
//! ([`is_changelog`]) or by a heading of the section's path ([`is_changelog_section`]).
//! A blog's posts (release announcements, dated write-ups) restate the same way and go
//! stale: they count as change logs too.

/// File stems (lower-cased, `-`/`_`/`.`/space removed) of a change log in any case.
const CHANGELOG_STEMS: [&str; 5] = [
    "changelog",
    "changelogs",
    "releasenotes",
    "releasehistory",
    "whatsnew",
];

/// File stems that name a change log only written in capitals (`HISTORY.md`,
/// `NEWS.rst`, `CHANGES.txt`), as projects name them: `history.md` may be a page about a
/// `history` API, `releases.md` one about making releases.
const CHANGELOG_UPPER_STEMS: [&str; 4] = ["HISTORY", "NEWS", "CHANGES", "RELEASES"];

/// Folder names (lower-cased, `-`/`_` removed) whose pages are change logs, or a blog's
/// dated posts (`blog/2020-10-tokio-0-3.md`, Jekyll's `_posts/`).
const CHANGELOG_FOLDERS: [&str; 9] = [
    "changelog",
    "changelogs",
    "releasenotes",
    "changes",
    "blog",
    "blogs",
    "posts",
    "news",
    "announcements",
];

/// Whether a document is a change log (`CHANGELOG.md`, `HISTORY.rst`,
/// `release-notes/1.2.md`) or a blog post (`blog/announcing-v2.md`): its entries restate
/// settings and commands that other pages define (`QueryParams::changelog_prior`).
pub fn is_changelog(rel_path: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' ' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let mut parts: Vec<&str> = rel_path.split('/').collect();
    let Some(file) = parts.pop() else {
        return false;
    };
    let stem = file.split_once('.').map_or(file, |(s, _)| s);
    CHANGELOG_STEMS.contains(&norm(stem).as_str())
        || CHANGELOG_UPPER_STEMS.contains(&stem)
        || parts
            .iter()
            .any(|d| CHANGELOG_FOLDERS.contains(&norm(d).as_str()))
}

/// Section names (heading slugs, with versions and the words of [`VERSION_WORDS`] left
/// out) of a change log inside a page of another kind: `## Changelog`, `## Release
/// notes`, `## What's new in version 2.0`, `# Stabilized and removed features`.
const CHANGELOG_SECTIONS: [&str; 13] = [
    "changelog",
    "changelogs",
    "change-log",
    "release-notes",
    "release-history",
    "version-history",
    "revision-history",
    "whats-new",
    "whats-changed",
    "stabilized-features",
    "removed-features",
    "stabilized-and-removed-features",
    "deprecated-and-removed-features",
];

/// Section names that are a change log only beside a version (`## Changes in 2.0`,
/// `## History since v1.2`): alone they may name a `history` API or a page's news.
const CHANGELOG_VERSIONED_SECTIONS: [&str; 4] = ["changes", "history", "releases", "news"];

/// Words that go with a version in a heading (`in version 2`, `since v3`), left out of
/// its name.
const VERSION_WORDS: [&str; 8] = ["in", "since", "for", "of", "version", "v", "the", "this"];

/// Whether the chunk `chunk_id` (`path#slug/slug…`, [`super::section_id`] shape) lies in
/// a change-log section: one heading of its path names a change log
/// ([`CHANGELOG_SECTIONS`], or [`CHANGELOG_VERSIONED_SECTIONS`] with a version). Read
/// from the id's heading slugs, so it holds for every store that keeps the ids; for the
/// chunks of documents (Markdown, MDX, text), not of source code or project files.
pub fn is_changelog_section(chunk_id: &str) -> bool {
    // a slug holds no `#`; a path may (`docs/c#/…`)
    let Some((_, slugs)) = super::section_id(chunk_id).rsplit_once('#') else {
        return false;
    };
    slugs.split('/').any(names_a_changelog)
}

/// A word of a heading slug that is a version: digits, with a `v` before them or not
/// (`2`, `20` for `2.0`, `v3`); not a name with a digit in it (`http2`, `arm64`, `s3`).
fn is_version(word: &str) -> bool {
    let digits = word.strip_prefix('v').unwrap_or(word);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether one heading slug names a change log. A number that opens a heading of more
/// words is a step's number (`3-release`), and one digit that closes a heading without a
/// word of [`VERSION_WORDS`] before it is the suffix that tells repeated headings apart
/// (`history-1`): neither is a version (`changes-20` for `Changes 2.0`, `changes-v3` are).
fn names_a_changelog(slug: &str) -> bool {
    let words: Vec<&str> = slug.split('-').filter(|w| !w.is_empty()).collect();
    let n = words.len();
    let versioned = words.iter().enumerate().any(|(i, w)| {
        let step = i == 0 && n > 1;
        let suffix = i + 1 == n && n > 1 && w.len() == 1 && !VERSION_WORDS.contains(&words[i - 1]);
        is_version(w) && !step && !suffix
    });
    let named = |skip: &dyn Fn(&str) -> bool| -> String {
        let kept: Vec<&str> = words.iter().copied().filter(|w| !skip(w)).collect();
        kept.join("-")
    };
    let bare = named(&|w| is_version(w));
    let name = named(&|w| is_version(w) || VERSION_WORDS.contains(&w));
    [bare, name].iter().any(|x| {
        CHANGELOG_SECTIONS.contains(&x.as_str())
            || (versioned && CHANGELOG_VERSIONED_SECTIONS.contains(&x.as_str()))
    })
}
