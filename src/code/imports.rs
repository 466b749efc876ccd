//! Imports resolved to the files of the same repository, by each language's own rules:
//! Rust `mod x;` and `use crate::…`/`super::…`/`self::…` paths, relative TypeScript and
//! JavaScript specifiers (with the extensions and `index` files bundlers try), relative
//! and absolute Python modules (`.x`, `pkg.mod`, a package's `__init__.py`), and Go
//! packages of the module a `go.mod` declares (every non-test file of the folder). An
//! import of another package (`std::fs`, `react`, `os.path`) names no file here.

use super::{Import, ImportKind, Language};

/// Most files one Go import resolves to (a package folder's non-test files).
pub const MAX_GO_FILES: usize = 8;

/// The repository a resolution looks into: its files (root-relative, `/`-separated,
/// sorted) and the Go modules its `go.mod` files declare (folder, module path).
pub struct Files<'a> {
    pub paths: &'a [&'a str],
    pub go_modules: &'a [(&'a str, &'a str)],
}

impl Files<'_> {
    fn has(&self, path: &str) -> bool {
        self.paths.binary_search(&path).is_ok()
    }

    fn first(&self, candidates: impl IntoIterator<Item = String>) -> Option<String> {
        candidates.into_iter().find(|c| self.has(c))
    }

    /// The files directly in folder `dir` (`""` for the root).
    fn in_folder(&self, dir: &str) -> Vec<&str> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let start = self.paths.partition_point(|p| *p < prefix.as_str());
        self.paths[start..]
            .iter()
            .take_while(|p| p.starts_with(&prefix))
            .filter(|p| !p[prefix.len()..].contains('/'))
            .copied()
            .collect()
    }
}

/// The files of `files` that import `import` of file `from` names; empty for an import
/// of another package or one that names no indexed file.
pub fn import_targets(
    from: &str,
    language: Language,
    import: &Import,
    files: &Files<'_>,
) -> Vec<String> {
    let found = match language {
        Language::Rust => rust(from, import, files),
        Language::TypeScript | Language::Tsx | Language::JavaScript => {
            script(from, &import.target, files)
        }
        Language::Python => python(from, &import.target, files),
        Language::Go => return go(&import.target, files),
    };
    found.into_iter().filter(|p| p != from).collect()
}

fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `a/./b/../c` → `a/c`; `None` when `..` leaves the root.
fn normalise(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out.join("/"))
}

/// The folder holding a Rust file's child modules: its own folder for `lib.rs`,
/// `main.rs` and `mod.rs`, else a folder named after it (`src/a.rs` → `src/a`).
fn rust_module_dir(from: &str) -> String {
    let name = from.rsplit('/').next().unwrap_or(from);
    let dir = folder(from);
    match name {
        "lib.rs" | "main.rs" | "mod.rs" => dir.to_string(),
        _ => join(dir, name.trim_end_matches(".rs")),
    }
}

fn rust(from: &str, import: &Import, files: &Files<'_>) -> Option<String> {
    let module_dir = rust_module_dir(from);
    if import.kind == ImportKind::ChildModule {
        let name = import.target.trim();
        return files.first([
            format!("{}.rs", join(&module_dir, name)),
            format!("{}/mod.rs", join(&module_dir, name)),
        ]);
    }
    let segs: Vec<&str> = import.target.split("::").map(str::trim).collect();
    let (base, segs): (String, &[&str]) = match segs.first().copied() {
        Some("crate") => (crate_root(from, files)?, &segs[1..]),
        Some("self") => (module_dir, &segs[1..]),
        Some("super") => {
            let n = segs.iter().take_while(|s| **s == "super").count();
            let mut dir = module_dir;
            for _ in 0..n {
                dir = folder(&dir).to_string();
            }
            (dir, &segs[n..])
        }
        _ => return None,
    };
    // the longest prefix of the path that is a module file (`crate::a::b::Item`), else
    // the module `base` itself (`crate::Item` is declared in `lib.rs`)
    (1..=segs.len())
        .rev()
        .find_map(|k| {
            let rel = segs[..k].join("/");
            files.first([
                format!("{}.rs", join(&base, &rel)),
                format!("{}/mod.rs", join(&base, &rel)),
            ])
        })
        .or_else(|| {
            files.first([
                join(&base, "lib.rs"),
                join(&base, "main.rs"),
                join(&base, "mod.rs"),
                format!("{base}.rs"),
            ])
        })
}

/// The folder of the crate `from` belongs to: the nearest folder at or above it that
/// holds `lib.rs` or `main.rs`.
fn crate_root(from: &str, files: &Files<'_>) -> Option<String> {
    let mut dir = folder(from).to_string();
    loop {
        if files.has(&join(&dir, "lib.rs")) || files.has(&join(&dir, "main.rs")) {
            return Some(dir);
        }
        if dir.is_empty() {
            return None;
        }
        dir = folder(&dir).to_string();
    }
}

/// Extensions and index files tried for a relative specifier, in bundlers' order.
const SCRIPT_EXTS: [&str; 8] = ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs", "mts"];

fn script(from: &str, target: &str, files: &Files<'_>) -> Option<String> {
    if !target.starts_with('.') {
        return None;
    }
    let p = normalise(&join(folder(from), target))?;
    // TypeScript's ESM style names the emitted `.js` of a `.ts` source
    let stem = [".js", ".jsx", ".mjs", ".cjs"]
        .iter()
        .find_map(|e| p.strip_suffix(e))
        .unwrap_or(&p)
        .to_string();
    let mut candidates = vec![p.clone()];
    candidates.extend(SCRIPT_EXTS.iter().map(|e| format!("{stem}.{e}")));
    candidates.extend(SCRIPT_EXTS.iter().map(|e| format!("{p}/index.{e}")));
    files.first(candidates)
}

fn python(from: &str, target: &str, files: &Files<'_>) -> Option<String> {
    let dots = target.chars().take_while(|c| *c == '.').count();
    let rest = &target[dots..];
    let segs: Vec<&str> = rest.split('.').filter(|s| !s.is_empty()).collect();
    let bases: Vec<String> = if dots > 0 {
        let mut dir = folder(from).to_string();
        for _ in 1..dots {
            dir = folder(&dir).to_string();
        }
        vec![dir]
    } else {
        // an absolute module, looked up from the file's folder up to the root (a
        // `src/` layout or a package at the top)
        let mut out = Vec::new();
        let mut dir = folder(from).to_string();
        loop {
            out.push(dir.clone());
            if dir.is_empty() {
                break;
            }
            dir = folder(&dir).to_string();
        }
        // the `src/` layout: `tests/test_x.py` imports `pkg.x` from `src/pkg/x.py`
        let src: Vec<String> = out.iter().map(|d| join(d, "src")).collect();
        out.extend(src);
        out
    };
    for base in &bases {
        if segs.is_empty() {
            if let Some(f) = files.first([join(base, "__init__.py")]) {
                return Some(f);
            }
            continue;
        }
        // the longest prefix that is a module (`from pkg.mod import name`)
        let min = if dots > 0 { 1 } else { segs.len().min(1) };
        for k in (min..=segs.len()).rev() {
            let rel = join(base, &segs[..k].join("/"));
            if let Some(f) = files.first([
                format!("{rel}.py"),
                format!("{rel}.pyi"),
                format!("{rel}/__init__.py"),
            ]) {
                return Some(f);
            }
        }
    }
    None
}

fn go(target: &str, files: &Files<'_>) -> Vec<String> {
    for (dir, module) in files.go_modules {
        let rest = if target == *module {
            Some("")
        } else {
            target
                .strip_prefix(module)
                .and_then(|r| r.strip_prefix('/'))
        };
        if let Some(rest) = rest {
            return files
                .in_folder(&join(dir, rest))
                .into_iter()
                .filter(|p| p.ends_with(".go") && !p.ends_with("_test.go"))
                .take(MAX_GO_FILES)
                .map(str::to_string)
                .collect();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(from: &str, kind: ImportKind, target: &str, paths: &[&str]) -> Vec<String> {
        let mut sorted = paths.to_vec();
        sorted.sort();
        let files = Files {
            paths: &sorted,
            go_modules: &[("", "example.com/m")],
        };
        let import = Import {
            target: target.into(),
            kind,
            line: 1,
        };
        let lang = Language::of_path(from).unwrap();
        import_targets(from, lang, &import, &files)
    }

    #[test]
    fn rust_modules_and_paths_resolve_to_their_files() {
        let repo = [
            "src/lib.rs",
            "src/query/mod.rs",
            "src/query/search.rs",
            "src/config.rs",
            "src/config/parse.rs",
        ];
        let p = ImportKind::Path;
        let c = ImportKind::ChildModule;
        assert_eq!(
            resolve("src/lib.rs", c, "query", &repo),
            ["src/query/mod.rs"]
        );
        assert_eq!(resolve("src/lib.rs", c, "config", &repo), ["src/config.rs"]);
        assert_eq!(
            resolve("src/config.rs", c, "parse", &repo),
            ["src/config/parse.rs"]
        );
        assert_eq!(
            resolve("src/query/search.rs", p, "crate::config::Settings", &repo),
            ["src/config.rs"]
        );
        assert_eq!(
            resolve(
                "src/query/search.rs",
                p,
                "crate::config::parse::read",
                &repo
            ),
            ["src/config/parse.rs"]
        );
        assert_eq!(
            resolve("src/query/search.rs", p, "super::super::config", &repo),
            ["src/config.rs"]
        );
        assert_eq!(
            resolve("src/query/mod.rs", p, "self::search::run", &repo),
            ["src/query/search.rs"]
        );
        assert!(resolve("src/lib.rs", p, "std::fs", &repo).is_empty());
        assert_eq!(
            resolve("src/query/search.rs", p, "crate::Error", &repo),
            ["src/lib.rs"],
            "an item of the crate root"
        );
        assert_eq!(
            resolve("src/config/parse.rs", p, "super::Settings", &repo),
            ["src/config.rs"]
        );
    }

    #[test]
    fn script_specifiers_resolve_as_bundlers_do() {
        let repo = [
            "src/config.ts",
            "src/query/search.ts",
            "src/ui/index.tsx",
            "src/util.js",
        ];
        let p = ImportKind::Path;
        assert_eq!(
            resolve("src/query/search.ts", p, "../config", &repo),
            ["src/config.ts"]
        );
        assert_eq!(
            resolve("src/query/search.ts", p, "../config.js", &repo),
            ["src/config.ts"]
        );
        assert_eq!(
            resolve("src/query/search.ts", p, "../ui", &repo),
            ["src/ui/index.tsx"]
        );
        assert_eq!(
            resolve("src/query/search.ts", p, "../util", &repo),
            ["src/util.js"]
        );
        assert!(resolve("src/query/search.ts", p, "react", &repo).is_empty());
        assert!(resolve("src/config.ts", p, "../../../etc/passwd", &repo).is_empty());
    }

    #[test]
    fn python_modules_resolve_relative_and_absolute() {
        let repo = [
            "pkg/__init__.py",
            "pkg/core.py",
            "pkg/sub/__init__.py",
            "pkg/sub/util.py",
            "tests/test_core.py",
        ];
        let p = ImportKind::Path;
        assert_eq!(
            resolve("pkg/sub/util.py", p, "..core", &repo),
            ["pkg/core.py"]
        );
        assert_eq!(
            resolve("pkg/core.py", p, ".sub.util", &repo),
            ["pkg/sub/util.py"]
        );
        assert_eq!(
            resolve("pkg/core.py", p, ".sub", &repo),
            ["pkg/sub/__init__.py"]
        );
        assert_eq!(
            resolve("tests/test_core.py", p, "pkg.core", &repo),
            ["pkg/core.py"]
        );
        assert_eq!(
            resolve("tests/test_core.py", p, "pkg.core.load", &repo),
            ["pkg/core.py"]
        );
        assert!(resolve("pkg/core.py", p, "os.path", &repo).is_empty());
        let src_layout = [
            "src/click/parser.py",
            "src/click/__init__.py",
            "tests/test_parser.py",
        ];
        assert_eq!(
            resolve("tests/test_parser.py", p, "click.parser", &src_layout),
            ["src/click/parser.py"]
        );
    }

    #[test]
    fn go_packages_of_the_module_are_their_folders_files() {
        let repo = [
            "cmd/main.go",
            "store/db.go",
            "store/db_test.go",
            "store/cache.go",
            "store/sql/q.go",
        ];
        let p = ImportKind::Path;
        assert_eq!(
            resolve("cmd/main.go", p, "example.com/m/store", &repo),
            ["store/cache.go", "store/db.go"]
        );
        assert!(resolve("cmd/main.go", p, "fmt", &repo).is_empty());
    }
}
