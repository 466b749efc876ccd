//! Chunk ids and titles: heading slugs, per-document uniqueness (`-2`, `-3`…), and the
//! file-stem title fallback.

use std::collections::{HashMap, HashSet};

/// A chunk id without its `~k` piece suffix: the id of the section a cut piece belongs
/// to (`a.md#x/y~3` → `a.md#x/y`).
pub fn section_id(id: &str) -> &str {
    match id.rsplit_once('~') {
        Some((base, k)) if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => id,
    }
}

/// Slug of a preamble chunk.
pub(crate) const PREAMBLE_SLUG: &str = "_preamble";

/// GitHub's heading anchor rule (github-slugger): lower-cased; letters, digits, marks,
/// `_` and `-` kept; each white-space character becomes `-`; everything else dropped.
/// A heading that leaves nothing slugs to `section`.
pub(crate) fn slugify(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    for c in heading.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric()
            || c == '_'
            || c == '-'
            || unicode_normalization::char::is_combining_mark(c)
        {
            out.push(c);
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    if out.is_empty() {
        out.push_str("section");
    }
    out
}

/// A heading's slug by each site generator's rule, before numbering repeats: GitHub's
/// ([`slugify`]: GitHub, Docusaurus, mdBook, Hugo's default) first, then
/// - VitePress and VuePress (`@mdit-vue/shared` `slugify`): NFKD, combining marks and
///   control characters dropped, each run of white space and ASCII punctuation
///   (`` ~`!@#$%^&*()-_+=[]{}|\;:"'<>,.?/ `` and curly quotes) one `-`, outer `-`
///   dropped, `_` before a leading digit, lower-cased: `server.proxy` → `server-proxy`,
///   `` `index.html` and Project Root `` → `index-html-and-project-root`;
/// - markdown-it-anchor's default: lower-cased, each run of white space one `-`,
///   punctuation kept: `server.proxy` → `server.proxy`;
/// - GitBook (as its Git Sync writes links): lower-cased; letters, digits, `-`, `_` and
///   `.` kept; each white-space character `-`; `id-` before a leading digit:
///   `1. Create a backend (optional)` → `id-1.-create-a-backend-optional`.
///
/// Python-Markdown's (mkdocs) slugs differ from GitHub's only by runs of `-`, which the
/// graph compares loosely.
pub(crate) fn slug_styles(heading: &str) -> [String; 4] {
    [
        slugify(heading),
        mdit_vue_slug(heading),
        markdown_it_anchor_slug(heading),
        gitbook_slug(heading),
    ]
}

/// GitBook's heading anchor; see [`slug_styles`].
fn gitbook_slug(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len() + 3);
    for c in heading.trim().chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
            out.push(c);
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "id-");
    }
    out
}

/// `@mdit-vue/shared`'s `slugify` (VitePress, VuePress); see [`slug_styles`].
fn mdit_vue_slug(heading: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    const SPECIAL: &str = "~`!@#$%^&*()-_+=[]{}|\\;:\"'\u{201c}\u{201d}\u{2018}\u{2019}<>,.?/";
    let mut out = String::with_capacity(heading.len());
    let mut dash = false;
    for c in heading.nfkd() {
        if ('\u{0300}'..='\u{036f}').contains(&c) || ('\u{0000}'..='\u{001f}').contains(&c) {
            continue;
        }
        if c.is_whitespace() || SPECIAL.contains(c) {
            dash = !out.is_empty();
            continue;
        }
        if dash {
            out.push('-');
            dash = false;
        }
        out.push(c);
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out.to_lowercase()
}

/// markdown-it-anchor's default slug (before percent-encoding); see [`slug_styles`].
fn markdown_it_anchor_slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
}

/// Slug of a heading path (`/`-joined heading slugs: an explicit anchor, `{#id}`, when
/// the heading has one, else [`slugify`] of its text), or `_preamble` when empty.
pub(crate) fn path_slug(path: &[String], anchors: &[Option<String>]) -> String {
    if path.is_empty() {
        return PREAMBLE_SLUG.to_string();
    }
    path.iter()
        .enumerate()
        .map(|(i, h)| match anchors.get(i).cloned().flatten() {
            Some(a) => a,
            None => slugify(h),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Hands out slugs unique within one document.
#[derive(Debug, Default)]
pub(crate) struct SlugAllocator {
    used: HashSet<String>,
    /// Next suffix to try per base slug (keeps many repeats linear).
    next: HashMap<String, usize>,
}

impl SlugAllocator {
    /// `slug` if unused, else the first free `slug-1`, `slug-2`… (GitHub's numbering).
    pub fn unique(&mut self, slug: String) -> String {
        if self.used.insert(slug.clone()) {
            return slug;
        }
        let mut n = self.next.get(&slug).copied().unwrap_or(1);
        let mut candidate = format!("{slug}-{n}");
        while self.used.contains(&candidate) {
            n += 1;
            candidate = format!("{slug}-{n}");
        }
        self.next.insert(slug, n + 1);
        self.used.insert(candidate.clone());
        candidate
    }
}

/// Chunk id: `rel_path#slug`, with `~k` for the k-th part (k >= 2) of a cut section.
pub(crate) fn chunk_id(rel_path: &str, slug: &str, part: usize) -> String {
    if part <= 1 {
        format!("{rel_path}#{slug}")
    } else {
        format!("{rel_path}#{slug}~{part}")
    }
}

/// File name of `rel_path` without its last extension (`guide/install.md` → `install`);
/// the whole path when that leaves nothing.
pub(crate) fn file_stem(rel_path: &str) -> String {
    let name = rel_path.rsplit(['/', '\\']).next().unwrap_or(rel_path);
    let stem = match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    };
    if stem.trim().is_empty() {
        rel_path.to_string()
    } else {
        stem.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slugs of the other generators that differ from GitHub's, once each.
    fn other_slugs(heading: &str) -> Vec<String> {
        let [github, rest @ ..] = slug_styles(heading);
        let mut out: Vec<String> = Vec::new();
        for alt in rest {
            if !alt.is_empty() && alt != github && !out.contains(&alt) {
                out.push(alt);
            }
        }
        out
    }

    #[test]
    fn other_generators_slugs() {
        assert_eq!(
            other_slugs("server.proxy"),
            ["server-proxy", "server.proxy"]
        );
        assert_eq!(
            other_slugs("index.html and Project Root"),
            ["index-html-and-project-root", "index.html-and-project-root"]
        );
        assert_eq!(
            other_slugs("build.rollupOptions"),
            ["build-rollupoptions", "build.rollupoptions"]
        );
        assert_eq!(
            mdit_vue_slug("  Café -- déjà_vu (beta)!  "),
            "cafe-deja-vu-beta"
        );
        assert_eq!(mdit_vue_slug("2. Install"), "_2-install");
        assert_eq!(mdit_vue_slug("“Quoted” title"), "quoted-title");
        assert_eq!(mdit_vue_slug("概要と東京"), "概要と東京");
        assert_eq!(
            other_slugs("1. Create a backend (optional)"),
            [
                "_1-create-a-backend-optional",
                "1.-create-a-backend-(optional)",
                "id-1.-create-a-backend-optional"
            ]
        );
        // every rule agrees: nothing else to accept
        assert!(other_slugs("Getting Started").is_empty());
        assert!(other_slugs("install").is_empty());
    }

    #[test]
    fn slugs_follow_github() {
        assert_eq!(
            slugify("Rc<T>, the Reference-Counted Smart Pointer"),
            "rct-the-reference-counted-smart-pointer"
        );
        assert_eq!(slugify("  Über  Straße!! "), "über--straße");
        assert_eq!(slugify("HashMap::entry()"), "hashmapentry");
        assert_eq!(slugify("snake_case and C++"), "snake_case-and-c");
        assert_eq!(slugify("???"), "section");
        assert_eq!(slugify("Ünïcode 2"), "ünïcode-2");
        assert_eq!(path_slug(&[], &[]), "_preamble");
        assert_eq!(path_slug(&["A b".into(), "C/d".into()], &[]), "a-b/cd");
        assert_eq!(
            path_slug(
                &["A b".into(), "Setup".into()],
                &[None, Some("install".into())]
            ),
            "a-b/install"
        );
    }

    #[test]
    fn allocator_never_repeats() {
        let mut a = SlugAllocator::default();
        assert_eq!(a.unique("foo".into()), "foo");
        assert_eq!(a.unique("foo".into()), "foo-1");
        assert_eq!(a.unique("foo-1".into()), "foo-1-1");
        assert_eq!(a.unique("foo".into()), "foo-2");
    }

    #[test]
    fn ids_and_stems() {
        assert_eq!(chunk_id("a.md", "x", 1), "a.md#x");
        assert_eq!(chunk_id("a.md", "x", 3), "a.md#x~3");
        assert_eq!(file_stem("guide/install.md"), "install");
        assert_eq!(file_stem("README"), "README");
        assert_eq!(file_stem("a/.hidden"), ".hidden");
        assert_eq!(file_stem("x.tar.gz"), "x.tar");
        assert_eq!(file_stem("dir/"), "dir/");
    }
}
