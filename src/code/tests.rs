use super::*;

fn read(path: &str, text: &str) -> Module {
    let lang = Language::of_path(path).expect("a code file");
    read_module(lang, text).expect("parses")
}

fn item<'m>(m: &'m Module, name: &str) -> &'m Item {
    m.items.iter().find(|i| i.name == name).unwrap_or_else(|| {
        panic!(
            "no item {name} in {:?}",
            m.items.iter().map(|i| &i.name).collect::<Vec<_>>()
        )
    })
}

#[test]
fn languages_by_extension() {
    assert_eq!(
        Language::of_path("src/query/search.ts"),
        Some(Language::TypeScript)
    );
    assert_eq!(Language::of_path("ui/App.tsx"), Some(Language::Tsx));
    assert_eq!(Language::of_path("lib/x.mjs"), Some(Language::JavaScript));
    assert_eq!(Language::of_path("a/b.jsx"), Some(Language::JavaScript));
    assert_eq!(Language::of_path("pkg/mod.py"), Some(Language::Python));
    assert_eq!(Language::of_path("cmd/main.go"), Some(Language::Go));
    assert_eq!(Language::of_path("src/lib.rs"), Some(Language::Rust));
    assert_eq!(Language::of_path("README.md"), None);
    assert_eq!(Language::of_path("Makefile"), None);
}

const RUST: &str = r#"//! Query ranking: BM25F over the projected fields.
//! Second line.

use std::collections::HashMap;

/// Ranks the chunks of `index` for `query`.
///
/// Stops at a NUL byte.
#[inline]
pub fn search_index(index: &Index, query: &str) -> Vec<Hit> {
    // split at the NUL byte
    let cut = query.split('\0').next().unwrap_or("");
    index.rank(cut, "fallback text")
}

fn helper() {}

/// A parsed query.
#[derive(Debug)]
pub struct Query {
    pub text: String,
}

impl Query {
    /// Parses `text`.
    pub fn parse(text: &str) -> Query {
        Query { text: text.into() }
    }
    fn private_step(&self) {}
}

pub trait Ranker {
    fn rank(&self) -> f32;
}

#[cfg(feature = "hits")]
#[allow(dead_code)]
pub const MAX_HITS: usize = 100;

#[macro_export]
macro_rules! hits {
    () => {};
}
"#;

#[test]
fn rust_items_docs_signatures_and_bodies() {
    let m = read("src/query/search.rs", RUST);
    assert_eq!(m.parse_errors, 0);
    assert_eq!(
        m.doc,
        "Query ranking: BM25F over the projected fields.\nSecond line."
    );
    let f = item(&m, "search_index");
    assert_eq!(f.kind, ItemKind::Function);
    assert!(f.exported);
    assert_eq!(
        f.doc,
        "Ranks the chunks of `index` for `query`.\n\nStops at a NUL byte."
    );
    assert_eq!(
        f.signature,
        "pub fn search_index(index: &Index, query: &str) -> Vec<Hit>"
    );
    assert_eq!((f.doc_line, f.start_line, f.end_line), (6, 10, 14));
    assert!(f.body.contains("split at the NUL byte"), "{}", f.body);
    assert!(
        f.body.contains("fallback text") && f.body.contains("unwrap_or"),
        "{}",
        f.body
    );
    assert!(!item(&m, "helper").exported);
    let q = item(&m, "Query");
    assert_eq!(
        (q.kind, q.doc.as_str(), q.exported),
        (ItemKind::Struct, "A parsed query.", true)
    );
    let p = item(&m, "Query::parse");
    assert_eq!(
        (p.kind, p.exported, p.doc.as_str()),
        (ItemKind::Method, true, "Parses `text`.")
    );
    assert!(!item(&m, "Query::private_step").exported);
    // attributes above an item without a doc comment are the item's first lines
    let c = item(&m, "MAX_HITS");
    let line = |l: &str| RUST.lines().position(|x| x == l).unwrap() as u32 + 1;
    assert_eq!(
        (c.doc_line, c.start_line),
        (
            line("#[cfg(feature = \"hits\")]"),
            line("pub const MAX_HITS: usize = 100;")
        )
    );
    // `pub(crate)` is not exported; a method of a type that is not exported is not either
    let m2 = read(
        "src/x.rs",
        "pub(crate) fn inner() {}\nstruct Hidden;\nimpl Hidden {\n    pub fn f(&self) {}\n}\nimpl Clone for Query {\n    fn clone(&self) -> Self { todo!() }\n}\n",
    );
    assert!(!item(&m2, "inner").exported);
    assert!(!item(&m2, "Hidden::f").exported);
    // a trait method of a type declared elsewhere is public through the trait
    assert!(item(&m2, "Query::clone").exported);
    assert_eq!(item(&m, "Ranker").kind, ItemKind::Trait);
    assert_eq!(item(&m, "MAX_HITS").kind, ItemKind::Const);
    let mac = item(&m, "hits");
    assert_eq!((mac.kind, mac.exported), (ItemKind::Macro, true));
}

const TS: &str = r#"/**
 * Search over the index.
 * @module query/search
 */

import { Index } from "./index";

/** Ranks the query against the index. */
export function searchIndex(index: Index, query: string): Hit[] {
  // the retry policy: three attempts
  return index.rank(query, "retry");
}

// Parses a config file.
export const parseConfig = (path: string): Config => {
  return load(path);
};

function internal() {}

export interface Hit { id: string; score: number }

export type Mode = "lexical" | "hybrid";

/** The searcher. */
export class Searcher extends Base {
  /** Runs one search. */
  run(q: string): Hit[] { return []; }
  private reset() {}
}

export default function main() {}
"#;

#[test]
fn typescript_exports_methods_and_module_doc() {
    let m = read("src/query/search.ts", TS);
    assert_eq!(m.parse_errors, 0);
    assert_eq!(m.doc, "Search over the index.\n@module query/search");
    let f = item(&m, "searchIndex");
    assert_eq!((f.kind, f.exported), (ItemKind::Function, true));
    assert_eq!(f.doc, "Ranks the query against the index.");
    assert_eq!(
        f.signature,
        "export function searchIndex(index: Index, query: string): Hit[]"
    );
    assert_eq!(f.start_line, 9);
    assert!(
        f.body.contains("the retry policy: three attempts"),
        "{}",
        f.body
    );
    let c = item(&m, "parseConfig");
    assert_eq!(
        (c.kind, c.exported, c.doc.as_str()),
        (ItemKind::Function, true, "Parses a config file.")
    );
    assert!(
        c.signature
            .starts_with("export const parseConfig = (path: string): Config =>"),
        "{}",
        c.signature
    );
    assert!(!item(&m, "internal").exported);
    assert_eq!(item(&m, "Hit").kind, ItemKind::Interface);
    assert_eq!(item(&m, "Mode").kind, ItemKind::Type);
    let s = item(&m, "Searcher");
    assert_eq!((s.kind, s.doc.as_str()), (ItemKind::Class, "The searcher."));
    let run = item(&m, "Searcher.run");
    assert_eq!(
        (run.kind, run.exported, run.doc.as_str()),
        (ItemKind::Method, true, "Runs one search.")
    );
    assert!(!item(&m, "Searcher.reset").exported);
    assert!(item(&m, "main").exported);
}

#[test]
fn tsx_and_javascript_parse_with_their_grammars() {
    let tsx = read(
        "ui/App.tsx",
        "export function App() { return <div className=\"x\">hi</div>; }\n",
    );
    assert_eq!(tsx.parse_errors, 0);
    assert!(item(&tsx, "App").exported);
    let js = read(
        "lib/util.js",
        "/** Adds. */\nexport function add(a, b) { return a + b; }\nconst local = 1;\nmodule.exports = { add };\n",
    );
    assert_eq!(js.parse_errors, 0);
    assert_eq!(item(&js, "add").doc, "Adds.");
    assert_eq!(item(&js, "local").kind, ItemKind::Const);
    assert!(!item(&js, "local").exported);
}

const PY: &str = r#"#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Configuration loading.

Reads TOML files.
"""

import os

MAX_RETRIES = 3
_cache = {}


def parse_config(path, strict=False):
    """Parse the config at `path`."""
    # stop at a NUL byte
    return load(path, "utf-8")


def _private():
    pass


class Loader(Base):
    """Loads things."""

    def load(self, name):
        """Load `name`."""
        return name

    def _hidden(self):
        pass

    @property
    def size(self):
        return 1
"#;

#[test]
fn python_docstrings_and_underscore_rule() {
    let m = read("pkg/config.py", PY);
    assert_eq!(m.parse_errors, 0);
    assert_eq!(m.doc, "Configuration loading.\n\nReads TOML files.");
    let f = item(&m, "parse_config");
    assert_eq!((f.kind, f.exported), (ItemKind::Function, true));
    assert_eq!(f.doc, "Parse the config at `path`.");
    assert_eq!(f.signature, "def parse_config(path, strict=False):");
    assert!(f.body.contains("stop at a NUL byte"), "{}", f.body);
    assert!(!item(&m, "_private").exported);
    assert_eq!(item(&m, "MAX_RETRIES").kind, ItemKind::Const);
    assert!(!item(&m, "_cache").exported);
    let c = item(&m, "Loader");
    assert_eq!((c.kind, c.doc.as_str()), (ItemKind::Class, "Loads things."));
    assert_eq!(item(&m, "Loader.load").doc, "Load `name`.");
    assert!(item(&m, "Loader.load").exported);
    assert!(!item(&m, "Loader._hidden").exported);
    let size = item(&m, "Loader.size");
    assert!(
        size.signature.starts_with("@property def size(self):"),
        "{}",
        size.signature
    );
}

const GO: &str = r#"// Package search ranks documents.
package search

import "strings"

// Retries is how often a fetch is tried.
const Retries = 3

const (
	// A is a.
	A = 1
	b = 2
	C, D = 3, 4
)

// Searcher searches.
//
//nolint:unused
type Searcher struct {
	Index *Index
}

type helper interface{ do() }

// Search ranks the index for q.
func (s *Searcher) Search(q string) []Hit {
	// cut at NUL
	return s.Index.Rank(strings.Split(q, "\x00")[0])
}

func local() {}

// New makes a Searcher.
func New() *Searcher { return &Searcher{} }
"#;

#[test]
fn go_capitalised_exports_receivers_and_package_doc() {
    let m = read("search/search.go", GO);
    assert_eq!(m.parse_errors, 0);
    assert_eq!(m.doc, "Package search ranks documents.");
    let r = item(&m, "Retries");
    assert_eq!(
        (r.kind, r.exported, r.doc.as_str()),
        (
            ItemKind::Const,
            true,
            "Retries is how often a fetch is tried."
        )
    );
    assert_eq!(item(&m, "A").doc, "A is a.");
    assert!(!item(&m, "b").exported);
    assert!(item(&m, "C").exported && item(&m, "D").exported);
    assert!(m.items.iter().all(|i| !i.name.contains(',')));
    let s = item(&m, "Searcher");
    assert_eq!(
        (s.kind, s.doc.as_str()),
        (ItemKind::Struct, "Searcher searches.")
    );
    assert_eq!(item(&m, "helper").kind, ItemKind::Interface);
    let meth = item(&m, "Searcher.Search");
    assert_eq!((meth.kind, meth.exported), (ItemKind::Method, true));
    assert_eq!(meth.doc, "Search ranks the index for q.");
    assert_eq!(meth.signature, "func (s *Searcher) Search(q string) []Hit");
    assert!(meth.body.contains("cut at NUL"), "{}", meth.body);
    assert!(!item(&m, "local").exported);
    assert_eq!(item(&m, "New").doc, "New makes a Searcher.");
}

#[test]
fn broken_code_still_yields_what_parsed_and_counts_errors() {
    let m = read(
        "src/broken.ts",
        "export function ok() { return 1; }\nexport function broken( {\n",
    );
    assert!(m.parse_errors > 0);
    assert!(item(&m, "ok").exported);
}

#[test]
fn long_signatures_and_bodies_are_bounded() {
    let params: Vec<String> = (0..200).map(|i| format!("p{i}: u32")).collect();
    let body = "let x = 1;\n".repeat(5000);
    let src = format!("pub fn wide({}) {{\n{body}}}\n", params.join(", "));
    let m = read("src/wide.rs", &src);
    let f = item(&m, "wide");
    assert_eq!(f.signature.chars().count(), MAX_SIGNATURE_CHARS + 1);
    assert!(f.signature.ends_with('…'));
    assert!(f.body.len() <= MAX_BODY_BYTES && f.body.len() > MAX_BODY_BYTES / 2);
}

fn imports(m: &Module) -> Vec<(&str, ImportKind, u32)> {
    m.imports
        .iter()
        .map(|i| (i.target.as_str(), i.kind, i.line))
        .collect()
}

#[test]
fn imports_as_written_in_each_language() {
    let rs = read(
        "src/lib.rs",
        "mod search;\npub mod store { }\nuse crate::query::rank::{a, b};\nuse std::io as sio;\n",
    );
    assert_eq!(
        imports(&rs),
        vec![
            ("search", ImportKind::ChildModule, 1),
            ("crate::query::rank::a", ImportKind::Path, 3),
            ("crate::query::rank::b", ImportKind::Path, 3),
            ("std::io", ImportKind::Path, 4),
        ]
    );
    let ts = read(
        "src/query/search.ts",
        "import { Index } from \"./index\";\nimport type { X } from '../types';\nexport { y } from \"./y\";\nconst fs = require(\"fs\");\n",
    );
    assert_eq!(
        imports(&ts),
        vec![
            ("./index", ImportKind::Path, 1),
            ("../types", ImportKind::Path, 2),
            ("./y", ImportKind::Path, 3),
            ("fs", ImportKind::Path, 4),
        ]
    );
    let py = read(
        "pkg/mod.py",
        "import os, sys as system\nfrom ..core import config\nfrom . import util\n",
    );
    assert_eq!(
        imports(&py),
        vec![
            ("os", ImportKind::Path, 1),
            ("sys", ImportKind::Path, 1),
            ("..core", ImportKind::Path, 2),
            (".", ImportKind::Path, 3),
        ]
    );
    let go = read(
        "cmd/main.go",
        "package main\n\nimport \"fmt\"\n\nimport (\n\t\"strings\"\n\tx \"example.com/m/pkg\"\n)\n",
    );
    assert_eq!(
        imports(&go),
        vec![
            ("fmt", ImportKind::Path, 3),
            ("strings", ImportKind::Path, 6),
            ("example.com/m/pkg", ImportKind::Path, 7),
        ]
    );
}

#[test]
fn scripts_export_by_list_by_default_and_by_commonjs() {
    let ts = read(
        "src/api.ts",
        "function a() {}\nfunction b() {}\nclass Foo {}\nconst hidden = 1;\nexport { a, b as bee };\nexport default Foo;\n",
    );
    assert!(item(&ts, "a").exported && item(&ts, "b").exported && item(&ts, "Foo").exported);
    assert!(!item(&ts, "hidden").exported);
    let anon = read(
        "src/main.ts",
        "/** Starts it. */\nexport default function () {}\n",
    );
    let d = item(&anon, "default");
    assert_eq!(
        (d.kind, d.exported, d.doc.as_str()),
        (ItemKind::Function, true, "Starts it.")
    );
    let arrow = read("src/x.js", "export default () => 1;\n");
    assert!(item(&arrow, "default").exported);
    let cjs = read(
        "lib/index.js",
        "function parse() {}\nfunction helper() {}\nconst run = () => {};\nmodule.exports = { parse, go: run };\nexports.extra = function () {};\n",
    );
    assert!(item(&cjs, "parse").exported && item(&cjs, "run").exported);
    assert!(!item(&cjs, "helper").exported);
    let extra = item(&cjs, "extra");
    assert_eq!(
        (extra.kind, extra.exported, extra.start_line),
        (ItemKind::Function, true, 5)
    );
}

#[test]
fn python_definitions_under_a_top_level_if_or_try_are_items() {
    let src = "import sys\n\nif sys.platform == 'win32':\n    def _get_argv_encoding():\n        return 'mbcs'\nelse:\n    def _get_argv_encoding():\n        return 'utf-8'\n\ntry:\n    from x import fast\nexcept ImportError:\n    def fast():\n        pass\n";
    let m = read_module(Language::Python, src).unwrap();
    let names: Vec<(&str, u32)> = m
        .items
        .iter()
        .map(|i| (i.name.as_str(), i.start_line))
        .collect();
    assert_eq!(
        names,
        [
            ("_get_argv_encoding", 4),
            ("_get_argv_encoding", 7),
            ("fast", 13)
        ]
    );
}

#[test]
fn grouped_rust_use_trees_give_one_import_per_path() {
    let src = "use crate::{config, query::{self, search::run as go}};\nuse std::io::*;\nuse super::x as y;\n";
    let m = read_module(Language::Rust, src).unwrap();
    let targets: Vec<(&str, u32)> = m
        .imports
        .iter()
        .map(|i| (i.target.as_str(), i.line))
        .collect();
    assert_eq!(
        targets,
        [
            ("crate::config", 1),
            ("crate::query", 1),
            ("crate::query::search::run", 1),
            ("std::io", 2),
            ("super::x", 3),
        ]
    );
}

#[test]
fn typescript_namespace_members_are_items() {
    let m = read(
        "src/shapes.ts",
        "/** Geometry. */\nexport namespace Shapes {\n  /** Area of a circle. */\n  export function area(r: number): number { return r * r; }\n  function helper() {}\n  export namespace Inner {\n    export const PI = 3.14;\n  }\n}\nnamespace Hidden {\n  export function f() {}\n}\n",
    );
    assert_eq!(m.parse_errors, 0);
    let a = item(&m, "Shapes.area");
    assert_eq!(
        (a.kind, a.exported, a.doc.as_str(), a.doc_line, a.start_line),
        (ItemKind::Function, true, "Area of a circle.", 3, 4)
    );
    assert!(!item(&m, "Shapes.helper").exported);
    assert!(item(&m, "Shapes.Inner.PI").exported);
    assert!(
        !item(&m, "Hidden.f").exported,
        "a member of an unexported namespace"
    );
    assert!(item(&m, "Shapes").exported);
}
