//! Resolving what a document points at to indexed documents and sections.

use std::collections::HashMap;

/// A link destination that leaves the collection (`https:`, `mailto:`, `//host`).
pub(super) fn is_external(target: &str) -> bool {
    if target.starts_with("//") {
        return true;
    }
    match target.split_once(':') {
        Some((scheme, _)) => {
            !scheme.is_empty()
                && !scheme.contains('/')
                && scheme.len() > 1 // `C:` is a Windows drive, not a scheme
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// `target` split into its path (percent-decoded, no query) and its fragment.
pub(super) fn split_target(target: &str) -> (String, Option<String>) {
    let (rest, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(percent_decode(f)).filter(|f| !f.is_empty())),
        None => (target, None),
    };
    let path = rest.split_once('?').map_or(rest, |(p, _)| p);
    (percent_decode(path), fragment)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Whether a path names a file of an indexed kind (`.md`, `.mdx`, `.markdown`, `.txt`,
/// an API spec, `mkdocs.yml`).
fn is_doc_path(path: &str) -> bool {
    crate::chunk::SourceKind::of_path(path).is_some()
}

/// Whether a link's path names an asset rather than a page: a file with an extension
/// that is neither an indexed kind nor a web page (`.png`, `.svg`, `.zip`, …). Such a
/// link is neither resolved nor broken.
pub(super) fn is_asset(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && !ext.is_empty() => {
            let ext = ext.to_ascii_lowercase();
            !is_doc_path(name)
                && !matches!(ext.as_str(), "html" | "htm")
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
        }
        _ => false,
    }
}

/// The route Docusaurus serves a numbered path at: every segment's number prefix
/// (`02-`, `2_`, `10.`) dropped, the extension dropped, and `…/index` as its folder;
/// `None` when no segment has a number prefix.
fn numbered_route(path: &str) -> Option<String> {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut changed = false;
    let parts: Vec<&str> = stem
        .split('/')
        .map(|seg| {
            let digits = seg.bytes().take_while(u8::is_ascii_digit).count();
            match seg[digits..].strip_prefix(['-', '_', '.']) {
                Some(rest) if digits > 0 && !rest.is_empty() => {
                    changed = true;
                    rest
                }
                _ => seg,
            }
        })
        .collect();
    let route = parts.join("/");
    let route = route.strip_suffix("/index").unwrap_or(&route).to_string();
    changed.then_some(route)
}

/// `path` joined to folder `base` (both `/`-separated, relative to the root), with `.`
/// and `..` applied; `None` when it climbs above the root. A leading `/` means the root.
pub(super) fn join(base: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = if path.starts_with('/') {
        Vec::new()
    } else {
        base.split('/').filter(|p| !p.is_empty()).collect()
    };
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The folder of a root-relative path (`""` at the root).
pub(super) fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(f, _)| f)
}

/// Indexed documents of the collection by root and path, and by file name for mentions.
pub(super) struct Lookup {
    paths: Vec<String>,
    /// Lower-cased paths, for index pages named in any case (`readme.md`).
    by_lower: HashMap<(usize, String), u32>,
    by_path: HashMap<(usize, String), u32>,
    by_name: HashMap<(usize, String), Vec<u32>>,
    /// Docusaurus routes of paths with number prefixes (`guide/02-usage.md` is served at
    /// `guide/usage`), when they differ from the path.
    by_route: HashMap<(usize, String), u32>,
    /// Each root's folder, absolute and `/`-separated (a file root's: its parent), for
    /// links from one root to another; empty when unknown.
    root_dirs: Vec<String>,
}

/// How a target matched a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Match {
    /// The exact path (relative to the file or to the root), or a link.
    Exact,
    /// The only indexed file whose path ends with the words written, or a bare file
    /// name (`index.md`: it names a file, not a path).
    Suffix,
}

impl Lookup {
    pub fn new<'a>(docs: impl Iterator<Item = (usize, &'a str)>) -> Lookup {
        let mut by_path = HashMap::new();
        let mut by_lower = HashMap::new();
        let mut paths = Vec::new();
        let mut by_name: HashMap<(usize, String), Vec<u32>> = HashMap::new();
        let mut by_route = HashMap::new();
        for (i, (root, path)) in docs.enumerate() {
            if let Some(r) = numbered_route(path) {
                by_route.entry((root, r)).or_insert(i as u32);
            }
            by_path.insert((root, path.to_string()), i as u32);
            by_lower
                .entry((root, path.to_lowercase()))
                .or_insert(i as u32);
            paths.push(path.to_string());
            let name = path.rsplit('/').next().unwrap_or(path).to_string();
            by_name.entry((root, name)).or_default().push(i as u32);
        }
        Lookup {
            paths,
            by_lower,
            by_path,
            by_name,
            by_route,
            root_dirs: Vec::new(),
        }
    }

    /// Sets each root's folder (absolute, `/`-separated; in root order), so a link that
    /// leaves its root finds a document of another (`mkdocs.yml`'s nav naming
    /// `docs/page.md` when `docs/` is indexed as a root of its own).
    pub fn with_root_dirs(mut self, dirs: &[String]) -> Lookup {
        self.root_dirs = dirs
            .iter()
            .map(|d| d.trim_end_matches('/').to_string())
            .collect();
        self
    }

    /// The document of another root that a relative link from `from` (in `root`) names,
    /// by the absolute path it points at.
    fn across_roots(&self, root: usize, from: &str, path: &str) -> Option<u32> {
        if path.starts_with('/') {
            return None;
        }
        let base = self.root_dirs.get(root)?;
        // the absolute path it points at (`join` applies `.` and `..` within `/`)
        let target = format!("/{}", join(&format!("{base}/{}", folder(from)), path)?);
        let mut holders: Vec<(usize, usize, &str)> = self
            .root_dirs
            .iter()
            .enumerate()
            .filter(|(r, _)| *r != root)
            .filter_map(|(r, dir)| {
                let rel = target.strip_prefix(dir.as_str())?.strip_prefix('/')?;
                Some((dir.len(), r, rel))
            })
            .collect();
        // the innermost root that has the document
        holders.sort_by_key(|h| std::cmp::Reverse(h.0));
        holders
            .into_iter()
            .find_map(|(_, r, rel)| self.link_at(r, "", rel))
    }

    /// Adds the routes each document (in the order given to [`Lookup::new`]) is served
    /// at besides its path; a route already taken keeps its first document.
    pub fn with_routes<'a>(mut self, docs: impl Iterator<Item = (usize, &'a [String])>) -> Lookup {
        for (i, (root, routes)) in docs.enumerate() {
            for r in routes {
                self.by_route.entry((root, r.clone())).or_insert(i as u32);
            }
        }
        self
    }

    fn get(&self, root: usize, path: &str) -> Option<u32> {
        self.by_path.get(&(root, path.to_string())).copied()
    }

    /// The document at `path`, else the one whose path differs only in case: a site's
    /// URLs are often lower-cased paths (Hugo serves `IncludeCached.md` at
    /// `/…/includecached/`).
    fn get_any_case(&self, root: usize, path: &str) -> Option<u32> {
        self.get(root, path)
            .or_else(|| self.by_lower.get(&(root, path.to_lowercase())).copied())
    }

    /// The document a link's path names, trying what documentation sites do: the path
    /// itself, `.md`/`.mdx` for an extension-less or `.html` link, a folder's index page
    /// (`index.md(x)`, `README.md`, `_index.md`, any case; only these for a link ending
    /// in `/`, and `README.md` for `index.html`).
    pub fn link(&self, root: usize, from: &str, path: &str) -> Option<u32> {
        // mkdocs writes `page.md/` (its directory URLs) for a page
        let path = match path.strip_suffix('/') {
            Some(p) if is_doc_path(p) => p,
            _ => path,
        };
        // Docusaurus: `@site/` is the site's root
        let path = match path.strip_prefix("@site/") {
            Some(p) => &format!("/{p}"),
            None => path,
        };
        self.link_at(root, from, path)
            .or_else(|| {
                // a site route: `/docs/page` served from the docs folder indexed as the root
                let rest = path.strip_prefix('/')?.split_once('/')?.1;
                self.link_at(root, from, &format!("/{rest}"))
            })
            .or_else(|| {
                // pretty URLs (Jekyll, Hugo): `guide/a.md` is served at `/guide/a/`, so
                // `../b/` written in it names `guide/b`
                let page_dir = from.rsplit_once('.').map_or(from, |(stem, _)| stem);
                // an index page's URL is its folder's: the usual join was right
                let name = page_dir.rsplit('/').next().unwrap_or(page_dir);
                let index = ["index", "readme", "_index"].contains(&name.to_lowercase().as_str());
                let relative =
                    path.starts_with("../") && is_doc_path(from) && !is_doc_path(path) && !index;
                relative.then(|| self.link_at(root, &format!("{page_dir}/_"), path))?
            })
            .or_else(|| {
                // Jekyll: a collection's pages live in `_name/` and are served at `/name/…`
                let rest = path.strip_prefix('/').filter(|r| !r.starts_with('_'))?;
                self.link_at(root, from, &format!("/_{rest}"))
            })
            .or_else(|| {
                // Docusaurus: a bare file name (`catalogs.md`, not `./` or `../`) not found
                // beside the page is looked up from the docs root
                // (`resolveMarkdownLinkPathname`)
                let lower = path.to_ascii_lowercase();
                let markdown = lower.ends_with(".md") || lower.ends_with(".mdx");
                let bare = markdown && !path.starts_with(['.', '/']) && from.contains('/');
                bare.then(|| self.link_at(root, "", path)).flatten()
            })
            .or_else(|| self.across_roots(root, from, path))
    }

    fn link_at(&self, root: usize, from: &str, path: &str) -> Option<u32> {
        let joined = join(folder(from), path)?;
        let folder_only = path.ends_with('/');
        let stem = joined
            .strip_suffix(".html")
            .or_else(|| joined.strip_suffix(".htm"))
            .unwrap_or(&joined);
        if !folder_only {
            let exact = [joined.clone(), format!("{stem}.md"), format!("{stem}.mdx")];
            if let Some(d) = exact.iter().find_map(|c| self.get(root, c)) {
                return Some(d);
            }
            // a site URL (no document extension) may differ in case; a file path may not
            let url = !is_doc_path(&joined);
            if let Some(d) = exact
                .iter()
                .filter(|_| url)
                .find_map(|c| self.get_any_case(root, c))
            {
                return Some(d);
            }
        }
        // a folder's index page; `…/index.html` is its folder's index page too
        let dir = match stem.rsplit_once('/') {
            Some((d, "index")) => d,
            None if stem == "index" => "",
            _ => joined.as_str(),
        };
        let sep = if dir.is_empty() { "" } else { "/" };
        let index_page = ["index.md", "index.mdx", "readme.md", "_index.md"]
            .iter()
            .find_map(|name| {
                let key = (root, format!("{dir}{sep}{name}").to_lowercase());
                self.by_lower.get(&key).copied()
            });
        // a route ending in `/` may name a page (`/start/prerequisites/`)
        let page = || {
            let stem = joined.trim_end_matches('/');
            [format!("{stem}.md"), format!("{stem}.mdx")]
                .iter()
                .find_map(|c| self.get_any_case(root, c))
        };
        index_page
            .or_else(|| if folder_only { page() } else { None })
            .or_else(|| {
                let route = joined.trim_end_matches('/');
                self.by_route.get(&(root, route.to_string())).copied()
            })
    }

    /// The document a path-shaped word names: relative to the file or to the root
    /// (exact), else the only file whose path ends with it on a `/` boundary.
    pub fn mention(&self, root: usize, from: &str, word: &str) -> Option<(u32, Match)> {
        let written_as_path = word.contains('/');
        let word = word.trim_start_matches("./");
        let exact = join(folder(from), word)
            .and_then(|p| self.get(root, &p))
            .or_else(|| join("", word).and_then(|p| self.get(root, &p)));
        if let Some(d) = exact {
            // a bare file name (`index.md`) names a file, not a path: a guess
            let how = if written_as_path {
                Match::Exact
            } else {
                Match::Suffix
            };
            return Some((d, how));
        }
        let clean = join("", word)?;
        let name = clean.rsplit('/').next()?;
        let found = self.by_name.get(&(root, name.to_string()))?;
        let suffix = format!("/{clean}");
        let mut hits = found
            .iter()
            .filter(|&&d| self.path_of(d).is_some_and(|p| p.ends_with(&suffix)));
        match (hits.next(), hits.next()) {
            (Some(&d), None) if clean.contains('/') => Some((d, Match::Suffix)),
            _ => None,
        }
    }

    fn path_of(&self, doc: u32) -> Option<&str> {
        self.paths.get(doc as usize).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_targets() {
        for t in ["https://x.org", "mailto:a@b", "//cdn/x.js", "tel:123"] {
            assert!(is_external(t), "{t}");
        }
        for t in ["a.md", "../b.md#x", "/guide/", "C:/x.md", "#anchor"] {
            assert!(!is_external(t), "{t}");
        }
    }

    #[test]
    fn joins_and_splits() {
        assert_eq!(join("guide/sub", "../a.md").as_deref(), Some("guide/a.md"));
        assert_eq!(join("guide", "/ref/b.md").as_deref(), Some("ref/b.md"));
        assert_eq!(join("", "../x.md"), None);
        assert_eq!(
            split_target("My%20Page.md?v=1#Sec%202"),
            ("My Page.md".to_string(), Some("Sec 2".to_string()))
        );
    }

    #[test]
    fn links_and_mentions_resolve_like_doc_sites() {
        let docs = [
            "index.md",
            "guide/index.md",
            "guide/install.md",
            "ref/config.md",
            "ref/cli.mdx",
        ];
        let l = Lookup::new(docs.iter().map(|p| (0, *p)));
        assert_eq!(l.link(0, "guide/install.md", "../ref/config.md"), Some(3));
        assert_eq!(l.link(0, "guide/install.md", "../ref/config.html"), Some(3));
        assert_eq!(l.link(0, "guide/install.md", "../ref/cli"), Some(4));
        assert_eq!(l.link(0, "index.md", "guide/"), Some(1));
        assert_eq!(l.link(0, "ref/config.md", "../guide/index.html"), Some(1));
        assert_eq!(l.link(0, "index.md", "ref/"), None, "no index page in ref/");
        assert_eq!(l.link(0, "index.md", "nope.md"), None);
        assert_eq!(l.link(1, "index.md", "guide/"), None);
        assert_eq!(
            l.mention(0, "index.md", "ref/config.md"),
            Some((3, Match::Exact))
        );
        assert_eq!(l.mention(0, "x/y.md", "config.md"), None);
        assert_eq!(l.mention(0, "x/y.md", "docs/ref/config.md"), None);
        assert_eq!(
            l.mention(0, "x/y.md", "./guide/install.md"),
            Some((2, Match::Exact))
        );
    }

    #[test]
    fn a_lower_cased_site_url_finds_its_page() {
        let docs = [
            "functions/partials/IncludeCached.md",
            "functions/partials/includecached-old.md",
            "Guide/Setup.md",
            "guide/setup.md",
        ];
        let l = Lookup::new(docs.iter().map(|p| (0, *p)));
        let from = "troubleshooting/performance.md";
        assert_eq!(
            l.link(0, from, "/functions/partials/includecached/"),
            Some(0)
        );
        assert_eq!(
            l.link(0, from, "/functions/partials/includecached"),
            Some(0)
        );
        // a file path written in the wrong case is broken on a case-sensitive host
        assert_eq!(
            l.link(0, from, "../Functions/Partials/IncludeCached.md"),
            None
        );
        assert_eq!(
            l.link(0, from, "../functions/partials/includecached.html"),
            Some(0)
        );
        // the exact case wins over another file differing only in case
        assert_eq!(l.link(0, from, "/guide/setup/"), Some(3));
        assert_eq!(l.link(0, from, "/Guide/Setup/"), Some(2));
        assert_eq!(l.link(0, from, "/functions/partials/missing/"), None);
    }
}
