//! The map in `ARCHITECTURE.md`, checked: walks the imports of every file under `src/`
//! and fails on an import that runs up the layers, on one that runs back up inside a
//! folder whose files claim an order, and on any circle of more than two files.
//!
//! An import is any path that starts with `crate::`, `super::` or `self::` (in `use`
//! trees and in code), resolved to the file that defines the module it names (a
//! name re-exported by a `mod.rs` resolves to the file it comes from). Comments, string
//! literals and `#[cfg(test)]` modules written inline are left out; `pub use` lines of a
//! `mod.rs` are its re-exports, not its dependencies.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The top-level modules, from the front ends down: a module may import only modules
/// after it in this list (`ARCHITECTURE.md`'s code map, in the same order).
const LAYERS: &[&str] = &[
    "cli",
    "server",
    "retriever",
    "eval",
    "pgstore",
    "views",
    "write",
    "read",
    "generation",
    "pack",
    "embed",
    "vector",
    "lexical",
    "fusion",
    "stamp",
    "store",
    "graph",
    "projection",
    "discover",
    "analysis",
    "chunk",
    "code",
    "repo",
    "config",
    "dburl",
    "fsio",
    "hashing",
    "error",
];

/// Imports [`LAYERS`] alone would allow but the map forbids: the two sides of the engine
/// meet only in `generation`; the indexes do not import each other; the servers reach
/// the engine only through `retriever` (an
/// item `retriever` re-exports, such as a handoff's types, resolves to the file that
/// defines it, so `views` is not listed).
const APART: &[(&str, &str)] = &[
    ("write", "read"),
    ("read", "write"),
    ("eval", "pgstore"),
    ("server", "read"),
    ("server", "write"),
    // the indexes do not import each other (ARCHITECTURE.md's first invariant)
    ("embed", "vector"),
    ("embed", "lexical"),
    ("embed", "graph"),
    ("vector", "lexical"),
    ("vector", "graph"),
    ("lexical", "graph"),
];

/// Folders whose files claim an order (their `mod.rs` says it): a file may import only
/// files after it.
const ORDERED: &[(&str, &[&str])] = &[
    (
        "write",
        &[
            "build",
            "folder",
            "boundary",
            "stage",
            "carry",
            "embedding",
            "plan",
            "prefetch",
            "layout",
            "options",
            "hooks",
        ],
    ),
    (
        "read",
        &[
            "verify",
            "status",
            "focus",
            "frames",
            "index",
            "hybrid",
            "freshness",
            "proximity",
            "vectors",
            "remote",
            "symbols",
            "opened",
            "query_cache",
            "hit",
            "matchline",
        ],
    ),
    (
        "generation",
        &[
            "export",
            "relations",
            "copies",
            "previous",
            "source",
            "jsonl",
            "docread",
            "lock",
            "readers",
            "queue",
        ],
    ),
];

/// One source file: its module path (`["read", "index"]`) and its text, cleaned.
struct SourceFile {
    module: Vec<String>,
    text: String,
    is_mod_root: bool,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/read/index.rs` → `["read", "index"]`; `src/read/mod.rs` → `["read"]`.
fn module_of(rel: &Path) -> (Vec<String>, bool) {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.last().cloned().unwrap_or_default();
    let root = matches!(last.as_str(), "mod" | "lib" | "main");
    if root {
        parts.pop();
    }
    (parts, root)
}

/// `text` without comments, string and char literals (kept as empty quotes), and
/// without inline `#[cfg(test)] mod name { … }` blocks.
fn clean(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && !prev_is_ident(b, i) =>
            {
                // raw string r"…" / r#"…"#
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                out.push_str("\"\"");
                i = j + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                out.push_str("\"\"");
                i = j + 1;
            }
            b'\'' => {
                // a char literal ('a', '\n', '\u{1F680}') or a lifetime ('a)
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    let ch_len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + ch_len) == Some(&b'\'')).then_some(i + 1 + ch_len)
                };
                match end {
                    Some(e) => {
                        out.push_str("' '");
                        i = e + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            _ => {
                let ch = text[i..].chars().next().unwrap();
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    drop_test_blocks(&out)
}

fn prev_is_ident(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Removes every `#[cfg(test)]` item written with a body (`mod tests { … }`).
fn drop_test_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let semi = after.find(';');
        let brace = after.find('{');
        match (brace, semi) {
            (Some(o), s) if s.is_none_or(|s| o < s) => {
                let mut depth = 0;
                let mut end = after.len();
                for (k, c) in after[o..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = o + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                rest = &after[end..];
            }
            _ => {
                out.push_str("#[cfg(test)]");
                rest = &after["#[cfg(test)]".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every path a file names that starts with `crate`, `super`, `self` or one of the
/// modules it declares (`mod child;` then `child::f()`), as segments, a child's paths
/// prefixed with `self`; the `use` trees expanded (`use super::{a::B, c}` → `super::a::B`,
/// `super::c`). A module root's `pub use child::…` re-exports are left out (they are
/// what the root shows of its children, not what it needs); its other `pub use` lines
/// count.
fn paths_in(text: &str, is_mod_root: bool) -> Vec<Vec<String>> {
    let children = declared_children(text);
    let rooted = |mut p: Vec<String>| -> Option<Vec<String>> {
        match p.first().map(String::as_str) {
            Some("crate" | "super" | "self") => Some(p),
            Some(first) if children.iter().any(|c| c == first) => {
                p.insert(0, "self".into());
                Some(p)
            }
            _ => None,
        }
    };
    let mut out = Vec::new();
    let mut body = String::new();
    let mut rest = text;
    // `use` items first (their trees), then the rest of the code
    while let Some(at) = find_use(rest) {
        body.push_str(&rest[..at.0]);
        let item = &rest[at.1..];
        let end = item.find(';').unwrap_or(item.len());
        let public = rest[..at.1].trim_end().ends_with("pub")
            || rest[at.0..at.1].trim_start().starts_with("pub");
        let mut tree = Vec::new();
        expand_tree(item[..end].trim(), &[], &mut tree);
        for p in tree.into_iter().filter_map(rooted) {
            let reexport = public && is_mod_root && p.len() > 1 && children.contains(&p[1]);
            if !reexport {
                out.push(p);
            }
        }
        rest = &item[(end + 1).min(item.len())..];
    }
    body.push_str(rest);
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let at_path_start = !(prev_is_ident(b, i) || (i > 0 && b[i - 1] == b':'));
        let ident_len = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if at_path_start && ident_len > 0 && body[i + ident_len..].starts_with("::") {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b':') {
                j += 1;
            }
            let segs: Vec<String> = body[i..j]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            out.extend(rooted(segs));
            i = j;
        } else {
            i += ident_len.max(1);
        }
    }
    out
}

/// The modules a file declares with a body elsewhere (`mod child;`, `pub mod child;`).
fn declared_children(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub ")
                .or_else(|| l.strip_prefix("pub(crate) "))
                .unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_string())
        })
        .collect()
}

/// The next `use` item: (start of its line's visibility, start of the tree).
fn find_use(text: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(p) = text[from..].find("use ") {
        let at = from + p;
        let word_start = at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_');
        if word_start {
            let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
            let before = text[line_start..at].trim();
            if before.is_empty() || before.starts_with("pub") {
                return Some((line_start, at + 4));
            }
        }
        from = at + 4;
    }
    None
}

fn expand_tree(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let mut p = prefix.to_vec();
        p.extend(head);
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_tree(&inner[start..k], &p, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand_tree(&inner[start..], &p, out);
        return;
    }
    let name = tree.split(" as ").next().unwrap_or(tree).trim();
    let mut p = prefix.to_vec();
    p.extend(name.split("::").map(str::trim).map(str::to_string));
    p.retain(|s| s != "*");
    if p.last().is_some_and(|s| s == "self") {
        p.pop();
    }
    if matches!(
        p.first().map(String::as_str),
        Some("crate" | "super" | "self")
    ) {
        out.push(p);
    }
}

struct Crate {
    files: BTreeMap<String, SourceFile>,
    /// module path → file (relative to `src/`)
    by_module: HashMap<Vec<String>, String>,
    /// (module root file, name) → the path it re-exports
    reexports: HashMap<(String, String), Vec<String>>,
}

impl Crate {
    fn load() -> Crate {
        let src = src_dir();
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        let mut files = BTreeMap::new();
        let mut by_module = HashMap::new();
        for p in paths {
            let rel = p.strip_prefix(&src).unwrap().to_path_buf();
            let (module, is_mod_root) = module_of(&rel);
            let key = rel.to_string_lossy().replace('\\', "/");
            if key == "main.rs" {
                continue; // the binary: a crate of its own
            }
            let text = clean(&std::fs::read_to_string(&p).unwrap());
            by_module.insert(module.clone(), key.clone());
            files.insert(
                key,
                SourceFile {
                    module,
                    text,
                    is_mod_root,
                },
            );
        }
        let mut reexports = HashMap::new();
        for (key, f) in &files {
            if !f.is_mod_root {
                continue;
            }
            for (vis, tree) in use_items(&f.text) {
                if !vis {
                    continue;
                }
                let mut expanded = Vec::new();
                expand_tree(&tree, &[], &mut expanded);
                // `pub use child::{A, B as C}`: A and C come from child
                for (alias, path) in aliases(&tree, &expanded) {
                    reexports.insert((key.clone(), alias), path);
                }
            }
        }
        Crate {
            files,
            by_module,
            reexports,
        }
    }

    /// The file a path used in `from` (module path, root or not) points into.
    fn resolve(&self, from: &SourceFile, path: &[String], hops: usize) -> Option<String> {
        let mut base: Vec<String> = Vec::new();
        let mut segs = path;
        match segs.first().map(String::as_str) {
            Some("crate") => segs = &segs[1..],
            Some("self") => {
                base = from.module.clone();
                segs = &segs[1..];
            }
            Some("super") => {
                base = from.module.clone();
                while segs.first().is_some_and(|s| s == "super") {
                    base.pop();
                    segs = &segs[1..];
                }
            }
            // a plain path relative to the module (children of a module root)
            _ => base = from.module.clone(),
        }
        // the longest prefix that is a module file
        for n in (0..=segs.len()).rev() {
            let mut m = base.clone();
            m.extend(segs[..n].iter().cloned());
            let Some(file) = self.by_module.get(&m) else {
                continue;
            };
            // a name re-exported by a module root: the file it comes from
            if let (Some(name), true) = (segs.get(n), hops < 8) {
                if let Some(target) = self.reexports.get(&(file.clone(), name.clone())) {
                    let root = &self.files[file];
                    if let Some(t) = self.resolve(root, target, hops + 1) {
                        return Some(t);
                    }
                }
            }
            return Some(file.clone());
        }
        None
    }

    /// file → the files it imports (itself and the crate root left out).
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out = BTreeMap::new();
        for (key, f) in &self.files {
            let mut to = BTreeSet::new();
            for p in paths_in(&f.text, f.is_mod_root) {
                if let Some(t) = self.resolve(f, &p, 0) {
                    if &t != key && t != "lib.rs" {
                        to.insert(t);
                    }
                }
            }
            out.insert(key.clone(), to);
        }
        out
    }
}

/// The `use` items of a text: (is `pub`, tree).
fn use_items(text: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some((line, tree)) = find_use(rest) {
        let item = &rest[tree..];
        let end = item.find(';').unwrap_or(item.len());
        let vis = rest[line..tree].trim_start().starts_with("pub");
        out.push((vis, item[..end].to_string()));
        rest = &item[(end + 1).min(item.len())..];
    }
    out
}

/// For a `pub use` tree, each name it makes visible (its alias or last segment) and the
/// full path it stands for (relative paths kept relative to the module root).
fn aliases(tree: &str, _expanded: &[Vec<String>]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    collect_aliases(tree, &[], &mut out);
    out
}

fn collect_aliases(tree: &str, prefix: &[String], out: &mut Vec<(String, Vec<String>)>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let mut p = prefix.to_vec();
        p.extend(
            tree[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
        );
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let (mut depth, mut start) = (0, 0);
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    collect_aliases(&inner[start..k], &p, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        collect_aliases(&inner[start..], &p, out);
        return;
    }
    if tree.is_empty() || tree.ends_with('*') {
        return;
    }
    let mut parts = tree.split(" as ");
    let path_text = parts.next().unwrap_or_default().trim();
    let mut path = prefix.to_vec();
    path.extend(path_text.split("::").map(str::trim).map(str::to_string));
    let alias = parts
        .next()
        .map(|a| a.trim().to_string())
        .or_else(|| path.last().cloned())
        .unwrap_or_default();
    out.push((alias, path))
}

fn top(file: &str) -> &str {
    let first = file.split('/').next().unwrap_or(file);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// Every circle (strongly connected set of files, Tarjan) of more than one file.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        let edges = t.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn every_top_level_module_is_on_the_map() {
    let c = Crate::load();
    let tops: BTreeSet<&str> = c.files.keys().map(|k| top(k)).collect();
    for t in tops {
        assert!(
            t == "lib" || LAYERS.contains(&t),
            "src/{t} is not in the layer list of tests/it/architecture.rs (and ARCHITECTURE.md)"
        );
    }
}

#[test]
fn no_import_runs_up_the_layers() {
    let c = Crate::load();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut bad = Vec::new();
    for (from, tos) in c.edges() {
        let (a, ra) = (top(&from), rank(top(&from)));
        for to in tos {
            let (b, rb) = (top(&to), rank(top(&to)));
            if a == b {
                continue;
            }
            let up = matches!((ra, rb), (Some(x), Some(y)) if y < x);
            if up || APART.contains(&(a, b)) {
                bad.push(format!("{from} imports {to}"));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_import_runs_back_up_inside_an_ordered_folder() {
    let c = Crate::load();
    let mut bad = Vec::new();
    let edges = c.edges();
    for (folder, order) in ORDERED {
        let pos = |file: &str| -> Option<usize> {
            let rest = file.strip_prefix(&format!("{folder}/"))?;
            let name = rest.strip_suffix(".rs")?;
            order.iter().position(|o| *o == name)
        };
        for (from, tos) in &edges {
            let Some(pf) = pos(from) else {
                if from.starts_with(&format!("{folder}/")) && !from.ends_with("/mod.rs") {
                    bad.push(format!("{from} is not in {folder}'s order"));
                }
                continue;
            };
            for to in tos {
                if let Some(pt) = pos(to) {
                    if pt <= pf {
                        bad.push(format!("{from} imports {to}, above it in {folder}/"));
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_circle_of_more_than_two_files() {
    let c = Crate::load();
    let big: Vec<String> = circles(&c.edges())
        .into_iter()
        .filter(|comp| comp.len() > 2)
        .map(|comp| comp.join(" ↔ "))
        .collect();
    assert!(big.is_empty(), "circles of files:\n{}", big.join("\n"));
}

#[test]
fn the_walk_sees_real_imports() {
    // the checks above are only as good as the walk: known imports must be found
    let c = Crate::load();
    let e = c.edges();
    let has = |a: &str, b: &str| e.get(a).is_some_and(|s| s.contains(b));
    assert!(
        has("read/index.rs", "read/opened.rs"),
        "{:?}",
        e.get("read/index.rs")
    );
    assert!(has("read/status.rs", "read/index.rs"));
    // a name re-exported by generation/mod.rs resolves to the file defining it
    assert!(
        has("read/opened.rs", "generation/readers.rs"),
        "{:?}",
        e.get("read/opened.rs")
    );
    assert!(
        has("cli/status.rs", "read/status.rs"),
        "{:?}",
        e.get("cli/status.rs")
    );
    // a test module written inline is not a dependency; a comment is not either
    let f = SourceFile {
        module: vec!["a".into(), "b".into()],
        text: clean("// use crate::x::Y;\nuse super::c::D;\nlet s = \"crate::z\";\n#[cfg(test)]\nmod tests { use crate::w::V; }\n"),
        is_mod_root: false,
    };
    let got = paths_in(&f.text, false);
    assert_eq!(got, vec![vec!["super".to_string(), "c".into(), "D".into()]]);
}

#[test]
fn a_circle_and_an_upward_import_are_caught() {
    // the checks fail on a bad graph, not only pass on this one
    let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut add = |a: &str, b: &str| {
        e.entry(a.to_string()).or_default().insert(b.to_string());
    };
    add("x/a.rs", "x/b.rs");
    add("x/b.rs", "x/c.rs");
    add("x/c.rs", "x/a.rs");
    add("x/d.rs", "x/e.rs");
    add("x/e.rs", "x/d.rs");
    let found = circles(&e);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|c| c.len() == 3));
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m).unwrap();
    assert!(rank("write") < rank("generation") && rank("chunk") > rank("read"));
}
