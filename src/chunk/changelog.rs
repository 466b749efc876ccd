//! Change logs: a page or a section that restates, as a list of changes, what reference
//! pages define (`QueryParams::changelog_prior`). Named by the file or folder
//! ([`is_changelog`]) or by a heading of the section's path ([`is_changelog_section`]).

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

/// Folder names (lower-cased, `-`/`_` removed) whose pages are change logs.
const CHANGELOG_FOLDERS: [&str; 4] = ["changelog", "changelogs", "releasenotes", "changes"];

/// Whether a document is a change log (`CHANGELOG.md`, `HISTORY.rst`,
/// `release-notes/1.2.md`): its entries restate settings and commands that other pages
/// define (`QueryParams::changelog_prior`).
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

/// Section names (heading slugs, numbers and a trailing `in`/`for`/`since` left out) of
/// a change log inside a page of another kind: `## Changelog`, `## Release notes`,
/// `## What's new in 2.0`, `# Stabilized and removed features`.
const CHANGELOG_SECTIONS: [&str; 11] = [
    "changelog",
    "changelogs",
    "change-log",
    "release-notes",
    "release-history",
    "version-history",
    "whats-new",
    "stabilized-features",
    "removed-features",
    "stabilized-and-removed-features",
    "deprecated-and-removed-features",
];

/// Section names that are a change log only beside a version (`## Changes in 2.0`,
/// `## Release 1.4`): alone they may name a `history` API or a page about making releases.
const CHANGELOG_VERSIONED_SECTIONS: [&str; 5] =
    ["changes", "history", "release", "releases", "news"];

/// Whether the chunk `chunk_id` (`path#slug/slug…`, [`super::section_id`] shape) lies in
/// a change-log section: one heading of its path names a change log
/// ([`CHANGELOG_SECTIONS`], or [`CHANGELOG_VERSIONED_SECTIONS`] with a version number).
/// Read from the id's heading slugs, so it holds for every store that keeps the ids.
pub fn is_changelog_section(chunk_id: &str) -> bool {
    let Some((_, slugs)) = super::section_id(chunk_id).split_once('#') else {
        return false;
    };
    slugs.split('/').any(names_a_changelog)
}

/// Whether one heading slug names a change log.
fn names_a_changelog(slug: &str) -> bool {
    let words: Vec<&str> = slug.split('-').filter(|w| !w.is_empty()).collect();
    let versioned = words.iter().any(|w| w.bytes().any(|b| b.is_ascii_digit()));
    let mut kept: Vec<&str> = words
        .into_iter()
        .filter(|w| !w.bytes().any(|b| b.is_ascii_digit()))
        .collect();
    while kept
        .last()
        .is_some_and(|w| matches!(*w, "in" | "for" | "since" | "of" | "v"))
    {
        kept.pop();
    }
    let name = kept.join("-");
    CHANGELOG_SECTIONS.contains(&name.as_str())
        || (versioned && CHANGELOG_VERSIONED_SECTIONS.contains(&name.as_str()))
}
