//! Property test over random trees: files of every kind, hidden and dependency folders,
//! symbolic links (inside, outside, dangling, loops), FIFOs, unreadable files, names that
//! are not UTF-8, UTF-16 and binary content. For every tree: the scan finishes, every
//! regular readable documentation file is indexed exactly once, every skip is reported
//! (named in a warning, or counted per reason), and a refresh after random changes gives
//! exactly the index a fresh build gives. The binary runs as `nobody` when the tests run
//! as root, so permissions apply.
#![cfg(unix)]

use crate::common;
use common::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a file holds.
#[derive(Debug, Clone, Copy)]
enum Content {
    Markdown,
    Utf16,
    Binary,
}

/// One entry of a folder.
#[derive(Debug, Clone)]
enum Node {
    Dir(String, Vec<Node>),
    File {
        name: String,
        ext: &'static str,
        content: Content,
        unreadable: bool,
    },
    /// A link to: `inside` a real file/folder of the root (by index in the walk order of
    /// included entries), outside the root, nowhere, or the root itself (a loop).
    Link(String, LinkTo),
    Fifo(String),
    /// A file whose name is not valid UTF-8.
    BadName,
}

#[derive(Debug, Clone, Copy)]
enum LinkTo {
    InsideFile(usize),
    InsideDir(usize),
    Outside,
    Dangling,
    Root,
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-e]{1,3}".prop_map(|s| s),
        1 => Just("Café".to_string()),
        1 => Just("with space".to_string()),
        1 => "\\.[a-c]{1,2}".prop_map(|s| s),
    ]
}

fn file() -> impl Strategy<Value = Node> {
    (
        name(),
        prop_oneof![4 => Just("md"), 1 => Just("mdx"), 1 => Just("txt"), 1 => Just("rs")],
        prop_oneof![6 => Just(Content::Markdown), 1 => Just(Content::Utf16), 1 => Just(Content::Binary)],
        prop::bool::weighted(0.1),
    )
        .prop_map(|(name, ext, content, unreadable)| Node::File { name, ext, content, unreadable })
}

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        8 => file(),
        1 => name().prop_map(Node::Fifo),
        1 => Just(Node::BadName),
        2 => (name(), prop_oneof![
            Just(LinkTo::Outside), Just(LinkTo::Dangling), Just(LinkTo::Root),
            (0usize..8).prop_map(LinkTo::InsideFile), (0usize..4).prop_map(LinkTo::InsideDir),
        ]).prop_map(|(n, t)| Node::Link(format!("l{n}"), t)),
    ]
}

fn tree() -> impl Strategy<Value = Vec<Node>> {
    let node = leaf().prop_recursive(2, 24, 6, |inner| {
        (
            prop_oneof![6 => name(), 1 => Just("node_modules".to_string())],
            prop::collection::vec(inner, 0..6),
        )
            .prop_map(|(n, kids)| Node::Dir(n, kids))
    });
    prop::collection::vec(node, 1..10)
}

/// What the tree should give: expected indexed files (canonical rel paths, with their
/// unique word), entries that must be named in a warning, and counted skips.
#[derive(Default, Debug)]
struct Expect {
    indexed: BTreeMap<String, String>,
    named: Vec<String>,
    hidden: u64,
    dependency: u64,
}

struct Writer<'a> {
    root: &'a Path,
    outside: &'a Path,
    word: usize,
    /// Included real files and folders, in creation order (link targets).
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    links: Vec<(PathBuf, LinkTo)>,
    expect: Expect,
}

impl Writer<'_> {
    fn write(&mut self, dir: &Path, nodes: &[Node], walked: bool) {
        let mut used = BTreeSet::new();
        for n in nodes {
            let name = match n {
                Node::Dir(s, _) | Node::Fifo(s) | Node::Link(s, _) => s.clone(),
                Node::File { name, ext, .. } => format!("{name}.{ext}"),
                Node::BadName => "bad\u{fffd}".into(),
            };
            if !used.insert(name.to_lowercase()) {
                continue; // one entry per name (case-insensitively, for simplicity)
            }
            self.node(dir, n, &name, walked);
        }
    }

    fn node(&mut self, dir: &Path, n: &Node, name: &str, walked: bool) {
        let path = dir.join(name);
        let hidden = name.starts_with('.');
        if walked && hidden {
            self.expect.hidden += 1;
        }
        let included = walked && !hidden;
        match n {
            Node::Dir(dname, kids) => {
                std::fs::create_dir(&path).unwrap();
                let dep = dname == "node_modules";
                if included && dep {
                    self.expect.dependency += 1;
                }
                let inner = included && !dep;
                if inner {
                    self.dirs.push(path.clone());
                }
                self.write(&path, kids, inner);
            }
            Node::File {
                ext,
                content,
                unreadable,
                ..
            } => {
                self.word += 1;
                let word = format!("zqword{}", self.word);
                let text = format!("# Page {}\n\nThe {word} is here.\n", self.word);
                let bytes = match content {
                    Content::Markdown => text.into_bytes(),
                    Content::Utf16 => {
                        let mut b = vec![0xFF, 0xFE];
                        text.encode_utf16().for_each(|u| b.extend(u.to_le_bytes()));
                        b
                    }
                    Content::Binary => b"\x89PNG\r\n\x1a\n\0\0\0".to_vec(),
                };
                std::fs::write(&path, bytes).unwrap();
                if *unreadable {
                    chmod(&path, 0o000);
                }
                let doc = matches!(*ext, "md" | "mdx" | "txt");
                if included && doc {
                    match (content, unreadable) {
                        (_, true) | (Content::Binary, _) => {
                            self.expect.named.push(rel(self.root, &path))
                        }
                        _ => {
                            self.expect.indexed.insert(rel(self.root, &path), word);
                            self.files.push(path.clone());
                        }
                    }
                } else if included && !unreadable && !matches!(content, Content::Binary) {
                    self.files.push(path.clone());
                }
            }
            Node::Fifo(_) => {
                mkfifo(&path);
                if included {
                    self.expect.named.push(rel(self.root, &path));
                }
            }
            Node::BadName => {
                let bad = dir.join(OsStr::from_bytes(b"bad\xffname.md"));
                std::fs::write(bad, "# Bad\n").unwrap();
                if walked {
                    self.expect.named.push(rel(self.root, dir));
                }
            }
            Node::Link(_, to) => {
                if included {
                    self.links.push((path, *to));
                }
            }
        }
    }

    /// Creates the links once every target exists.
    fn links(&mut self) {
        for (path, to) in std::mem::take(&mut self.links) {
            let target = match to {
                LinkTo::InsideFile(i) if !self.files.is_empty() => {
                    self.files[i % self.files.len()].clone()
                }
                LinkTo::InsideDir(i) if !self.dirs.is_empty() => {
                    self.dirs[i % self.dirs.len()].clone()
                }
                LinkTo::InsideFile(_) | LinkTo::InsideDir(_) | LinkTo::Root => {
                    self.root.to_path_buf()
                }
                LinkTo::Outside => self.outside.to_path_buf(),
                LinkTo::Dangling => self.root.join("no-such-target"),
            };
            std::os::unix::fs::symlink(&target, &path).unwrap();
            // a link is named when it leaves the root, leads nowhere, or is a second path
            // to a folder; a link to a file is a documentation file only by its own name
            // (these names have no extension), so it is passed over like any other file
            if target.is_dir() || !target.exists() || !target.starts_with(self.root) {
                self.expect.named.push(rel(self.root, &path));
            }
        }
    }
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap().to_string_lossy().into_owned()
}

/// `docfuse ARGS` as the unprivileged user, with a deadline: the scan must finish.
fn run(cwd: &Path, args: &[&str]) -> std::process::Output {
    let start = Instant::now();
    let out = docfuse_as_user(cwd, args);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{args:?} took too long"
    );
    out
}

fn chunks(cwd: &Path, index: &str) -> Vec<Value> {
    let o = run(cwd, &["chunks", "--index", index]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Random changes after the first build: edit, add, delete and rename files.
fn mutate(root: &Path, seed: u64) {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() && e.path().extension().is_some_and(|x| x == "md") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    for (i, f) in files.iter().enumerate() {
        match (seed as usize + i) % 5 {
            0 => std::fs::write(f, format!("# Edited {i}\n\nzqedit{i} text\n")).unwrap_or(()),
            1 => std::fs::remove_file(f).unwrap_or(()),
            // never over an existing file: an unreadable file renamed over a readable
            // one keeps the readable one's last text (partial), which no build has
            2 if !f.with_extension("txt").exists() => {
                std::fs::rename(f, f.with_extension("txt")).unwrap_or(())
            }
            _ => {}
        }
    }
    std::fs::write(root.join("added.md"), format!("# Added\n\nzqadded{seed}\n")).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_trees_index_each_file_once_report_every_skip_and_refresh_like_a_build(nodes in tree(), seed in 0u64..1000) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("docs");
        let outside = t.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.md"), "# Secret\n\nzqsecret\n").unwrap();
        let mut w = Writer { root: &root, outside: &outside, word: 0, files: vec![], dirs: vec![], links: vec![], expect: Expect::default() };
        w.write(&root, &nodes, true);
        w.links();
        let expect = w.expect;
        give_to_user(t.path());
        let o = run(t.path(), &["index", "--index", "a", "--no-embeddings", "--json", "docs"]);
        prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let report: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let err = stderr(&o);

        // every regular readable documentation file is indexed exactly once
        let got = chunks(t.path(), "a");
        let mut by_path: BTreeMap<String, String> = BTreeMap::new();
        for c in &got {
            let path = c["path"].as_str().unwrap().to_string();
            let text = c["text"].as_str().unwrap();
            if let Some(word) = text.split_whitespace().find(|w| w.starts_with("zqword")) {
                prop_assert!(by_path.insert(path.clone(), word.to_string()).is_none() || by_path[&path] == word, "{path} twice");
            }
        }
        prop_assert_eq!(&by_path, &expect.indexed, "stderr:\n{}", err);
        prop_assert!(!got.iter().any(|c| c["text"].as_str().unwrap().contains("zqsecret")), "a link left the root");

        // every skip is reported: named in a warning, or counted per reason
        for name in &expect.named {
            prop_assert!(err.contains(name.as_str()), "`{name}` is not named:\n{err}");
        }
        let skipped = &report["skipped_entries"];
        prop_assert_eq!(skipped["hidden"].as_u64().unwrap_or(0), expect.hidden, "{}", report);
        prop_assert_eq!(skipped["dependency_folder"].as_u64().unwrap_or(0), expect.dependency, "{}", report);

        // a refresh after random changes equals a fresh build of the same tree
        mutate(&root, seed);
        give_to_user(t.path());
        let o = run(t.path(), &["refresh", "--index", "a"]);
        prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let o = run(t.path(), &["index", "--index", "b", "--no-embeddings", "docs"]);
        prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        prop_assert_eq!(chunks(t.path(), "a"), chunks(t.path(), "b"));
        for idx in ["a", "b"] {
            let o = run(t.path(), &["status", "--index", idx, "--json"]);
            let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
            prop_assert_eq!(&s["fresh"], &Value::Bool(true), "{}", s);
        }
    }
}
