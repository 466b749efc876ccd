//! Source files, package manifests and the project file as chunks (`modules.rs`,
//! `packages.rs`, `project.rs`).

use super::*;

fn code(path: &str, text: &str) -> Vec<Chunk> {
    let kind = SourceKind::of_file_name_with_sources(path.rsplit('/').next().unwrap());
    let d = SourceDoc {
        rel_path: path.into(),
        text: text.into(),
        kind: kind.expect("a source kind"),
        title_hint: None,
    };
    let plain = chunk_document(&d, &ChunkerConfig::default());
    let with_links = chunk_document_with_links(&d, &ChunkerConfig::default());
    assert_eq!(
        plain, with_links.chunks,
        "one chunker for both entry points"
    );
    plain
}

const TS: &str = r#"/** Query search: ranking of parsed queries. */
import { parseConfig } from "../config";

/** Ranks the documents for a parsed query. */
export function searchIndex(q: string): number[] {
  // stop at a NUL byte
  const end = q.indexOf("\0");
  return [end];
}

function helper() { return 1; }

/** The retry policy. */
export class RetryPolicy {
  constructor(public max: number) {}

  /** Delay before attempt n, in ms. */
  delay(n: number): number { return 2 ** n * 100; }
}
"#;

#[test]
fn a_source_file_is_a_module_entry_and_one_passage_per_item() {
    let c = code("src/query/search.ts", TS);
    let heads: Vec<Vec<&str>> = c
        .iter()
        .map(|c| c.heading_path.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(
        heads,
        [
            vec!["src/query/search.ts"],
            vec!["src/query/search.ts", "searchIndex"],
            vec!["src/query/search.ts", "helper"],
            vec!["src/query/search.ts", "RetryPolicy"],
            vec!["src/query/search.ts", "RetryPolicy.constructor"],
            vec!["src/query/search.ts", "RetryPolicy.delay"],
        ]
    );
    let kinds: Vec<ChunkKind> = c.iter().map(|c| c.kind).collect();
    assert_eq!(kinds[0], ChunkKind::Module);
    assert!(kinds[1..].iter().all(|k| *k == ChunkKind::Item));
    let module = &c[0];
    assert_eq!(
        (module.start_line, module.end_line),
        (1, 2),
        "doc and imports"
    );
    assert_eq!(module.id, "src/query/search.ts#_module");
    assert_eq!(module.title, "search.ts");
    assert_eq!(module.body, "Query search: ranking of parsed queries.");
    assert!(module.symbols.contains(&"searchIndex".to_string()));
    assert!(module.symbols.contains(&"RetryPolicy".to_string()));
    assert!(
        !module.symbols.contains(&"helper".to_string()),
        "not exported"
    );
    assert!(module.code.contains("../config"), "{}", module.code);
    let search = &c[1];
    assert_eq!(search.id, "src/query/search.ts#searchIndex");
    assert_eq!(
        (search.start_line, search.end_line),
        (4, 9),
        "doc comment to the closing brace"
    );
    assert!(search.text.starts_with("/** Ranks"));
    assert_eq!(
        search.body,
        "Ranks the documents for a parsed query.\n\nexport function searchIndex(q: string): number[]"
    );
    assert!(
        search.code.contains("stop at a NUL byte"),
        "{}",
        search.code
    );
    assert!(
        !search.body.contains("NUL"),
        "the body is not the doc field"
    );
    assert_eq!(search.symbols, ["searchIndex"]);
    // a class's passage is its header, up to its first member
    let class = &c[3];
    assert_eq!((class.start_line, class.end_line), (13, 14));
    assert_eq!(c[5].symbols, ["RetryPolicy.delay", "delay"]);
    assert_eq!((c[5].start_line, c[5].end_line), (17, 18));
}

#[test]
fn passages_of_a_file_never_share_a_line_and_cite_exact_text() {
    for (path, text) in [
        ("src/query/search.ts", TS),
        (
            "src/lib.rs",
            "//! The crate.\n\n/// A parser.\npub struct Parser;\n\nimpl Parser {\n    /// Parses.\n    pub fn parse(&self) {}\n    fn inner(&self) {}\n}\n\npub const A: u8 = 1;\n",
        ),
        (
            "pkg/util.py",
            "\"\"\"Utilities.\"\"\"\nimport os\n\nclass Loader:\n    \"\"\"Loads.\"\"\"\n    def load(self):\n        return os.getcwd()\n\ndef _hidden():\n    pass\n",
        ),
        (
            "cmd/main.go",
            "// Package main runs.\npackage main\n\n// Run runs.\nfunc Run() {}\n\ntype T struct{}\n\nfunc (t T) M() {}\n",
        ),
    ] {
        let c = code(path, text);
        assert!(c.len() >= 3, "{path}: {c:#?}");
        let lines: Vec<&str> = text.lines().collect();
        let mut last = 0;
        for (i, chunk) in c.iter().enumerate().skip(1) {
            assert!(chunk.start_line > last, "{path}: {} overlaps", chunk.id);
            assert!(chunk.end_line >= chunk.start_line);
            last = chunk.end_line;
            let want = lines[chunk.start_line as usize - 1..chunk.end_line as usize].join("\n");
            assert_eq!(chunk.text, want, "{path} #{i}");
        }
        let ids: std::collections::HashSet<&str> = c.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), c.len(), "{path}: unique ids");
    }
}

#[test]
fn a_package_manifest_is_a_package_entry_with_its_checks() {
    let c = code(
        "web/package.json",
        "{\n  \"name\": \"@acme/web\",\n  \"description\": \"The web front end\",\n  \"scripts\": {\"test\": \"vitest\", \"lint\": \"eslint .\", \"dev\": \"vite\"}\n}\n",
    );
    assert_eq!(c.len(), 1);
    let p = &c[0];
    assert_eq!(p.kind, ChunkKind::Package);
    assert_eq!(
        (p.id.as_str(), p.title.as_str()),
        ("web/package.json#_package", "@acme/web")
    );
    assert_eq!((p.start_line, p.end_line), (1, 5));
    assert_eq!(p.summary, "The web front end");
    assert!(
        p.body.contains("test: npm test") && p.body.contains("lint: npm run lint"),
        "{}",
        p.body
    );
    assert!(!p.body.contains("dev"), "not a check: {}", p.body);
    assert_eq!(p.symbols, ["@acme/web"]);
    let cargo = code("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n");
    assert!(
        cargo[0].body.contains("members: crates/*"),
        "{}",
        cargo[0].body
    );
    assert!(
        code("package.json", "{ not json").is_empty(),
        "a broken manifest gives no entry"
    );
}

#[test]
fn source_kinds_are_only_read_with_sources_on() {
    assert_eq!(SourceKind::of_file_name("lib.rs"), None);
    assert_eq!(SourceKind::of_file_name("package.json"), None);
    assert_eq!(
        SourceKind::of_file_name_with_sources("lib.rs"),
        Some(SourceKind::Code)
    );
    assert_eq!(
        SourceKind::of_file_name_with_sources("App.tsx"),
        Some(SourceKind::Code)
    );
    assert_eq!(
        SourceKind::of_file_name_with_sources("go.mod"),
        Some(SourceKind::Manifest)
    );
    assert_eq!(
        SourceKind::of_file_name_with_sources("a.md"),
        Some(SourceKind::Markdown)
    );
    assert_eq!(SourceKind::of_file_name_with_sources("a.png"), None);
    assert_eq!(EntryKind::of_path("src/a.rs"), EntryKind::Module);
    assert_eq!(EntryKind::of_path("web/package.json"), EntryKind::Package);
    assert_eq!(EntryKind::of_path("guide/a.md"), EntryKind::Document);
    assert_eq!(EntryKind::of_chunk(ChunkKind::Item), EntryKind::Module);
    assert_eq!(EntryKind::parse("Module"), Some(EntryKind::Module));
    assert_eq!(EntryKind::parse("area"), Some(EntryKind::Area));
    assert_eq!(EntryKind::parse("areas"), None);
    assert_eq!(
        EntryKind::of_chunk(ChunkKind::Ownership),
        EntryKind::Package
    );
    assert_eq!(EntryKind::of_chunk(ChunkKind::Intent), EntryKind::Intent);
    assert_eq!(
        SourceKind::of_file_name_with_sources("docfuse.toml"),
        Some(SourceKind::Project)
    );
    assert_eq!(SourceKind::of_file_name("docfuse.toml"), None);
}

#[test]
fn a_file_of_many_items_folds_the_rest_into_its_module_entry() {
    let text: String = (0..modules::MAX_ITEMS + 5)
        .map(|i| format!("pub const C{i}: u32 = {i};\n"))
        .collect();
    let c = code("src/consts.rs", &text);
    assert_eq!(c.len(), modules::MAX_ITEMS + 1);
    let last = format!("C{}", modules::MAX_ITEMS + 4);
    assert!(c[0].symbols.contains(&last));
}

#[test]
fn lone_carriage_returns_keep_item_lines_exact() {
    let c = code("src/a.rs", "//! A.\rfn a() {}\r// x\rfn b() {}\r");
    let spans: Vec<(&str, u32, u32, &str)> = c
        .iter()
        .map(|c| (c.id.as_str(), c.start_line, c.end_line, c.text.as_str()))
        .collect();
    assert_eq!(
        spans,
        [
            ("src/a.rs#_module", 1, 1, "//! A."),
            ("src/a.rs#a", 2, 2, "fn a() {}"),
            ("src/a.rs#b", 4, 4, "fn b() {}"),
        ]
    );
}

#[test]
fn a_module_entry_never_stands_on_a_blank_line() {
    let c = code("src/a.rs", "\n\nfn a() {}\n");
    assert_eq!((c[0].start_line, c[0].end_line), (3, 3), "{c:#?}");
    assert_eq!(c[0].text, "fn a() {}");
    // a header's comments are searchable in the module entry's code field
    let c = code(
        "b.py",
        "\"\"\"B.\"\"\"\n# plain words kumquat\nimport os\n\ndef f():\n    pass\n",
    );
    assert!(c[0].code.contains("kumquat"), "{}", c[0].code);
}

fn project(path: &str, text: &str) -> Chunked {
    chunk_document_with_links(
        &SourceDoc {
            rel_path: path.into(),
            text: text.into(),
            kind: SourceKind::Project,
            title_hint: None,
        },
        &ChunkerConfig::default(),
    )
}

#[test]
fn a_project_file_is_one_entry_per_record_at_its_lines() {
    let text = "# routes\n[[ownership]] # the search team\npath = \"src/query/\"\nid = \"search\"\nagent_doc = \"docs/search.md\"\nchecks = [\"npm run t\"]\n\n[[intent]]\ntitle = \"Tune ranking\"\npaths = [\"rank.ts\"]\nsummary = \"\"\"\nBM25   weights\n[[change]]\n\"\"\"\n\n[[change]]\ntitle = \"Add an operator\"\npaths = []\n";
    let c = project("docfuse.toml", text);
    let got: Vec<(&str, ChunkKind, u32, u32, &str)> = c
        .chunks
        .iter()
        .map(|c| {
            (
                c.id.as_str(),
                c.kind,
                c.start_line,
                c.end_line,
                c.title.as_str(),
            )
        })
        .collect();
    // a header inside a multi-line string is text, not a record
    assert_eq!(
        got,
        [
            (
                "docfuse.toml#_ownership/search",
                ChunkKind::Ownership,
                2,
                6,
                "search"
            ),
            (
                "docfuse.toml#_intent/tune-ranking",
                ChunkKind::Intent,
                8,
                14,
                "Tune ranking"
            ),
            (
                "docfuse.toml#_change/add-an-operator",
                ChunkKind::Change,
                16,
                18,
                "Add an operator"
            ),
        ]
    );
    assert_eq!(
        c.chunks[0].summary,
        "search: src/query; agent document docs/search.md"
    );
    assert!(c.chunks[0].body.contains("check: npm run t"));
    assert_eq!(c.chunks[1].summary, "BM25 weights [[change]]");
    assert_eq!(c.chunks[1].symbols, ["Tune ranking", "rank.ts"]);
    let targets: Vec<(u32, &str)> = c
        .links
        .iter()
        .map(|l| (l.line, l.target.as_str()))
        .collect();
    assert_eq!(
        targets,
        [(2, "src/query"), (2, "docs/search.md"), (8, "rank.ts")]
    );
    // records written as an inline array are cited at their own lines
    let c = project(
        "docfuse.toml",
        "ownership = [\n  {path = \"a\", id = \"x\"},\n  {path = \"b\", id = \"y\"},\n]\n",
    );
    let lines: Vec<(u32, u32)> = c
        .chunks
        .iter()
        .map(|c| (c.start_line, c.end_line))
        .collect();
    assert_eq!(lines, [(2, 2), (3, 3)]);
    // a file that does not read as a project file gives nothing, and no panic; one
    // below a root is not a project file
    assert!(project("docfuse.toml", "[[ownership]]\npath = 3\n")
        .chunks
        .is_empty());
    assert!(project("docfuse.toml", "").chunks.is_empty());
    assert!(project(
        "web/docfuse.toml",
        "[[intent]]\ntitle = \"t\"\npaths = []\n"
    )
    .chunks
    .is_empty());
}

#[test]
fn lines_outside_every_passage_are_words_of_the_module_entry() {
    let c = code(
        "src/lib.rs",
        "//! Bindings.\n\n/// A thing.\npub struct Foo;\n\n#[pymethods]\nimpl Foo {\n    /// Bar.\n    pub fn bar(&self) {}\n}\n\npub use inner::Renamed;\n",
    );
    let entry = &c[0];
    assert_eq!(entry.kind, ChunkKind::Module);
    assert!(entry.code.contains("#[pymethods]"), "{}", entry.code);
    assert!(entry.code.contains("impl Foo {"), "{}", entry.code);
    assert!(
        entry.code.contains("pub use inner::Renamed;"),
        "{}",
        entry.code
    );
    // a line a passage holds is not repeated
    assert!(!entry.code.contains("pub struct Foo;"), "{}", entry.code);
}
