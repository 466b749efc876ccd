//! Chunk ids and titles: heading slugs, per-document uniqueness (`-2`, `-3`…), and the
//! file-stem title fallback.

use std::collections::{HashMap, HashSet};

/// Slug of a preamble chunk.
pub(crate) const PREAMBLE_SLUG: &str = "_preamble";

/// Lowercase; alphanumerics (any script) kept; runs of anything else become one `-`;
/// trimmed of `-`. A heading without alphanumerics slugs to `section`.
pub(crate) fn slugify(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    let mut pending_dash = false;
    for c in heading.chars() {
        if c.is_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.extend(c.to_lowercase());
        } else {
            pending_dash = true;
        }
    }
    if out.is_empty() {
        out.push_str("section");
    }
    out
}

/// Slug of a heading path (`/`-joined heading slugs), or `_preamble` when empty.
pub(crate) fn path_slug(path: &[String]) -> String {
    if path.is_empty() {
        return PREAMBLE_SLUG.to_string();
    }
    path.iter()
        .map(|h| slugify(h))
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
    /// `slug` if unused, else the first free `slug-2`, `slug-3`…
    pub fn unique(&mut self, slug: String) -> String {
        if self.used.insert(slug.clone()) {
            return slug;
        }
        let mut n = self.next.get(&slug).copied().unwrap_or(2);
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

    #[test]
    fn slugs() {
        assert_eq!(
            slugify("Rc<T>, the Reference-Counted Smart Pointer"),
            "rc-t-the-reference-counted-smart-pointer"
        );
        assert_eq!(slugify("  Über  Straße!! "), "über-straße");
        assert_eq!(slugify("HashMap::entry()"), "hashmap-entry");
        assert_eq!(slugify("???"), "section");
        assert_eq!(slugify("Ünïcode 2"), "ünïcode-2");
        assert_eq!(path_slug(&[]), "_preamble");
        assert_eq!(path_slug(&["A b".into(), "C/d".into()]), "a-b/c-d");
    }

    #[test]
    fn allocator_never_repeats() {
        let mut a = SlugAllocator::default();
        assert_eq!(a.unique("foo".into()), "foo");
        assert_eq!(a.unique("foo".into()), "foo-2");
        assert_eq!(a.unique("foo-2".into()), "foo-2-2");
        assert_eq!(a.unique("foo".into()), "foo-3");
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
