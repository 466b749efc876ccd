//! A repository's code as entries (`index --sources`): module entries and item passages
//! of Rust, TypeScript, Python and Go files, package entries of manifests, the `code`
//! field, the module prior, the kind on results and the kind filter — through the CLI,
//! `POST /v1/search`, the MCP tool and the library; refresh of a one-file source edit.

use crate::common;
use common::*;
use docfuse::retriever::{DocfuseRetriever, PathFilters, RetrieveOptions};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const REPO: &[(&str, &str)] = &[
    (
        "README.md",
        "# qsearch\n\nA small search library. The retry policy backs off exponentially between attempts.\n",
    ),
    (
        "package.json",
        "{\n  \"name\": \"qsearch\",\n  \"description\": \"A tiny search library\",\n  \"scripts\": {\"test\": \"vitest run\", \"lint\": \"eslint .\"}\n}\n",
    ),
    (
        "src/query/search.ts",
        "/** Query search: ranking of parsed queries. */\nimport { parseConfig } from \"../config\";\n\n/** Ranks the documents of the index for a parsed query. */\nexport function searchIndex(q: string): number[] {\n  return [q.length];\n}\n\nfunction scanText(text: string): number {\n  // the searcher stops at a NUL byte\n  return text.indexOf(\"\\0\");\n}\n",
    ),
    (
        "src/config.ts",
        "/** Reads the configuration file. */\nexport function parseConfig(text: string): object {\n  return {};\n}\n\n/** Retry policy: exponential backoff with jitter between attempts. */\nexport class RetryPolicy {\n  /** Delay before attempt n, in ms. */\n  delay(n: number): number { return 2 ** n * 100; }\n}\n",
    ),
    (
        "tools/loader.py",
        "\"\"\"Loads fixtures for the tests.\"\"\"\n\n\ndef load_fixtures(path):\n    \"\"\"Read every fixture file under path.\"\"\"\n    return []\n",
    ),
    ("tools/pyproject.toml", "[project]\nname = \"qtools\"\ndescription = \"Helper tools\"\n"),
    (".github/CODEOWNERS", "* @core\nsrc/query/ @ranking\n"),
    (
        "docfuse.toml",
        "[[ownership]]\npath = \"src/query\"\nid = \"ranker\"\nagent_doc = \"docs/ranking.md\"\nchecks = [\"npm run test:ranking\"]\n\n[[ownership]]\npath = \"services/billing\"\nid = \"billing-gateway\"\nchecks = [\"make billing-test\"]\n\n[[intent]]\ntitle = \"tune the exponential backoff\"\npaths = [\"src/config.ts\"]\nsummary = \"Delays between attempts\"\n\n[[change]]\ntitle = \"add a query operator\"\npaths = [\"src/query/search.ts\"]\n",
    ),
    (
        "docs/ranking.md",
        "# Ranking design\n\nHow queries are scored: see `src/query/search.ts`.\n",
    ),
    (
        "docs/retry.md",
        "# Retries\n\nConstruct a `RetryPolicy` and wait `RetryPolicy.delay(n)` ms; `cargo build` and `run` name no module.\n",
    ),
    (
        "native/src/lib.rs",
        "//! The native tokenizer.\nmod words;\n\n/// Splits text into tokens at white space.\npub fn tokenize(text: &str) -> Vec<&str> {\n    text.split_whitespace().collect()\n}\n",
    ),
    (
        "native/src/words.rs",
        "use crate::tokenize;\n\n/// Counts words.\npub fn count(text: &str) -> usize {\n    tokenize(text).len()\n}\n",
    ),
    (
        "tools/cli.py",
        "from .loader import load_fixtures\n\n\ndef main():\n    load_fixtures(\"x\")\n",
    ),
    (
        "cmd/main.go",
        "// Package main serves the index over HTTP.\npackage main\n\n// Serve starts the server.\nfunc Serve() {}\n",
    ),
];

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in REPO {
        let p = dir.path().join("repo").join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let o = docfuse(
        dir.path(),
        &[
            "index",
            "--sources",
            "--no-embeddings",
            "--index",
            "idx",
            "repo",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

fn search(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["search", "--index", "idx", "--json"];
    all.extend_from_slice(args);
    let o = docfuse(dir, &all);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn results(v: &Value) -> Vec<(String, String, u64)> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_string(),
                r["id"].as_str().unwrap().to_string(),
                r["start_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_symbol_finds_its_declaration_with_its_kind_and_line() {
    let dir = repo();
    let v = search(dir.path(), &["parseConfig"]);
    let top = &results(&v)[0];
    assert_eq!(
        top,
        &(
            "module".to_string(),
            "src/config.ts#parseConfig".to_string(),
            1
        )
    );
    assert_eq!(
        v["results"][0]["heading_path"],
        json!(["src/config.ts", "parseConfig"])
    );
    // Rust, Python and Go items and the Python package too
    for (q, id) in [
        ("tokenize", "native/src/lib.rs#tokenize"),
        ("load_fixtures", "tools/loader.py#load_fixtures"),
        ("Serve", "cmd/main.go#Serve"),
        ("qtools", "tools/pyproject.toml#_package"),
    ] {
        let v = search(dir.path(), &[q]);
        assert_eq!(v["results"][0]["id"], id, "{q}: {v}");
    }
    let v = search(dir.path(), &["qtools"]);
    assert_eq!(v["results"][0]["kind"], "package");
    let v = search(dir.path(), &["small search library"]);
    assert_eq!(v["results"][0]["kind"], "document");
}

#[test]
fn what_a_body_says_finds_an_undocumented_function() {
    let dir = repo();
    let v = search(
        dir.path(),
        &["--explain", "where does the searcher stop at a NUL byte"],
    );
    assert_eq!(v["results"][0]["id"], "src/query/search.ts#scanText", "{v}");
    // cited at the line that says it, found through the `code` field
    assert_eq!(v["results"][0]["match_line"], 10);
    let fields: Vec<&str> = v["results"][0]["explain"]["terms"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["fields"].as_array().unwrap())
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"code"), "{fields:?}");
}

#[test]
fn a_question_asking_for_code_puts_the_module_first_and_explains_the_prior() {
    let dir = repo();
    let v = search(
        dir.path(),
        &["--explain", "where is the retry policy backoff implemented"],
    );
    assert_eq!(v["results"][0]["id"], "src/config.ts#RetryPolicy", "{v}");
    assert_eq!(v["results"][0]["explain"]["prior"], 1.5);
    let readme = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "README.md")
        .expect("the README matches too");
    assert_eq!(
        readme["explain"]["prior"], 1.0,
        "documents take no module prior"
    );
    // the same words without asking for code: no prior
    let v = search(dir.path(), &["--explain", "retry policy backoff"]);
    assert!(v["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["explain"]["prior"] == 1.0));
}

/// A question that asks for code in an index with sources weighs the lexical side of
/// hybrid fusion by `code_alpha` (0.75); any other question by the default 0.45.
#[cfg(feature = "embeddings")]
#[test]
fn a_code_question_weighs_hybrid_fusion_toward_the_lexical_side() {
    let dir = repo();
    let o = docfuse(
        dir.path(),
        &["index", "--sources", "--index", "emb", "repo"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let alpha = |q: &str| {
        let o = docfuse(
            dir.path(),
            &[
                "search",
                "--index",
                "emb",
                "--json",
                "--mode",
                "hybrid",
                "--explain",
                q,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let f = &v["results"][0]["explain"]["fusion"]["fusion"];
        assert_eq!(f["method"], "calibrated", "{v}");
        (f["alpha"].as_f64().unwrap() * 100.0).round() / 100.0
    };
    assert_eq!(alpha("where is the retry backoff"), 0.75);
    assert_eq!(alpha("parseConfig"), 0.75);
    assert_eq!(alpha("retry backoff between attempts"), 0.45);
}

#[test]
fn the_kind_filter_holds_on_every_interface() {
    let dir = repo();
    let idx = dir.path().join("idx");
    // CLI
    let v = search(dir.path(), &["--kind", "module", "search"]);
    let kinds: Vec<String> = results(&v).into_iter().map(|r| r.0).collect();
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| k == "module"),
        "{kinds:?}"
    );
    let v = search(
        dir.path(),
        &["--kind", "package,document", "search library"],
    );
    let kinds: Vec<String> = results(&v).into_iter().map(|r| r.0).collect();
    assert!(kinds.contains(&"package".to_string()) && kinds.contains(&"document".to_string()));
    assert!(!kinds.contains(&"module".to_string()));
    // a filter that keeps no passage holding the word says so, not that none does
    let o = docfuse(
        dir.path(),
        &["search", "--index", "idx", "--kind", "package", "tokenize"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("No passage the filters keep contains `tokenize`"),
        "{}",
        stderr(&o)
    );
    // areas: the module hits of each folder as one result, its best passage cited
    let v = search(dir.path(), &["--kind", "area", "ranks parsed query"]);
    let r = &v["results"][0];
    assert_eq!(
        (&r["kind"], &r["title"], &r["path"], &r["start_line"]),
        (
            &json!("area"),
            &json!("src/query"),
            &json!("src/query/search.ts"),
            &json!(4)
        ),
        "{v}"
    );
    assert_eq!(r["chunks_matched"], 3, "{v}");
    let v = search(dir.path(), &["--kind", "area", "text"]);
    let folders: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    let unique: std::collections::BTreeSet<&&str> = folders.iter().collect();
    assert!(folders.len() >= 2, "{v}");
    assert_eq!(
        unique.len(),
        folders.len(),
        "one result per folder: {folders:?}"
    );
    assert!(results(&v).iter().all(|r| r.0 == "area"), "{v}");
    let o = docfuse(
        dir.path(),
        &["search", "--index", "idx", "--kind", "areas", "search"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown kind `areas`"),
        "{}",
        stderr(&o)
    );
    // library
    let lib = DocfuseRetriever::open(&idx).unwrap();
    let opts = RetrieveOptions {
        filters: PathFilters {
            kinds: vec!["package".into()],
            ..PathFilters::default()
        },
        ..RetrieveOptions::default()
    };
    let r = lib.search_blocking("library", &opts).unwrap();
    let paths: Vec<&str> = r
        .documents
        .iter()
        .map(|d| d.metadata.path.as_str())
        .collect();
    assert_eq!(paths, ["package.json"]);
    assert_eq!(r.documents[0].metadata.kind, "package");
    // HTTP
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["serve", "--addr", "127.0.0.1:0", "--index"])
        .arg(&idx)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = served_addr(&mut err);
    let body = json!({"query": "search", "filters": {"kinds": ["module"]}}).to_string();
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(&body));
    assert_eq!(code, 200, "{v}");
    assert!(results(&v).iter().all(|r| r.0 == "module"), "{v}");
    let body = json!({"query": "backoff", "filters": {"kinds": ["intent"]}}).to_string();
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(&body));
    assert_eq!(code, 200, "{v}");
    assert_eq!(results(&v)[0].0, "intent", "{v}");
    assert!(results(&v).iter().all(|r| r.0 == "intent"), "{v}");
    let body = json!({"query": "tokens", "filters": {"kinds": ["area"]}}).to_string();
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(&body));
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["results"][0]["kind"], "area", "{v}");
    assert_eq!(v["results"][0]["title"], "native/src", "{v}");
    let body = json!({"query": "search", "filters": {"kinds": ["areas"]}}).to_string();
    let (code, v) = exchange(&addr, "POST", "/v1/search", Some(&body));
    assert_eq!(code, 400, "{v}");
    let _ = child.kill();
    let _ = child.wait();
    // MCP
    let mut mcp = McpClient::start(&idx, &[]);
    let (r, _) = mcp.call(
        "search_docs",
        json!({"query": "library", "kinds": ["package"]}),
    );
    let ids: Vec<&str> = r["structuredContent"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["package.json#_package"], "{r}");
    let (r, _) = mcp.call(
        "search_docs",
        json!({"query": "query operator", "kinds": ["change"]}),
    );
    assert_eq!(
        r["structuredContent"]["results"][0]["id"], "docfuse.toml#_change/add-a-query-operator",
        "{r}"
    );
    let (r, _) = mcp.call("search_docs", json!({"query": "x", "kinds": ["nope"]}));
    assert_eq!(r["isError"], true, "{r}");
}

#[test]
fn without_sources_no_code_is_indexed_and_a_refresh_keeps_the_flag() {
    let dir = repo();
    let o = docfuse(
        dir.path(),
        &["index", "--no-embeddings", "--index", "docs-only", "repo"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = docfuse(dir.path(), &["chunks", "--index", "docs-only"]);
    let paths: Vec<String> = stdout(&o)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["path"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.ends_with(".md")),
        "{paths:?}"
    );
    // a one-file source edit refreshes that file only, and sources stay on
    let file = dir.path().join("repo/src/config.ts");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replace("jitter", "full jitter and a cap")).unwrap();
    let o = docfuse(dir.path(), &["refresh", "--index", "idx", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["files"]["changed"], 1, "{v}");
    assert_eq!(v["files"]["added"], 0, "{v}");
    let v = search(dir.path(), &["cap"]);
    assert_eq!(v["results"][0]["id"], "src/config.ts#RetryPolicy", "{v}");
}

#[test]
fn a_module_path_gets_a_handoff_of_kind_module() {
    let dir = repo();
    let o = docfuse(
        dir.path(),
        &["handoff", "--index", "idx", "--json", "src/config.ts"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["target"]["kind"], "module");
    assert_eq!(v["edit_roots"][0], "src/config.ts");
    let checks: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["npm test", "npm run lint"]);
    // a document naming one of its symbols in inline code mentions it (`RetryPolicy`)
    let start: Vec<&str> = v["start_here"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert!(start.contains(&"docs/retry.md"), "{v}");
    let o = docfuse(dir.path(), &["graph", "--index", "idx", "src/config.ts"]);
    assert!(
        stdout(&o).contains("docs/retry.md mentions it at docs/retry.md:3"),
        "{}",
        stdout(&o)
    );
    let o = docfuse(
        dir.path(),
        &["handoff", "--index", "idx", "--json", "package.json"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["target"]["kind"], "package");
}

#[test]
fn imports_are_relations_and_a_handoff_lists_the_related_areas() {
    let dir = repo();
    let o = docfuse(dir.path(), &["graph", "--index", "idx", "src/config.ts"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("src/query/search.ts imports it at src/query/search.ts:2"),
        "{}",
        stdout(&o)
    );
    for (file, line) in [
        (
            "src/query/search.ts",
            "docs/ranking.md mentions it at docs/ranking.md:3",
        ),
        ("native/src/words.rs", "imports it at native/src/lib.rs:2"),
        ("native/src/lib.rs", "imports it at native/src/words.rs:1"),
        ("tools/loader.py", "imports it at tools/cli.py:1"),
    ] {
        let o = docfuse(dir.path(), &["graph", "--index", "idx", file]);
        assert!(stdout(&o).contains(line), "{file}: {}", stdout(&o));
    }
    let o = docfuse(
        dir.path(),
        &["handoff", "--index", "idx", "--json", "src/config.ts"],
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["related"],
        json!([{"area": "src/query", "direction": "imported_by", "imports": 1,
                "evidence": "src/query/search.ts:2", "file": "src/query/search.ts"}]),
        "{v}"
    );
    let o = docfuse(dir.path(), &["handoff", "--index", "idx", "src/query"]);
    assert!(
        stdout(&o).contains("imports from src/  (1 imports; e.g. src/query/search.ts:2)"),
        "{}",
        stdout(&o)
    );
    // PageRank stays over links and covers: the imported file ranks no higher for it
    let g = docfuse(dir.path(), &["graph", "--index", "idx", "--json"]);
    assert!(g.status.success(), "{}", stderr(&g));
}

#[test]
fn ownership_records_and_codeowners_shape_the_handoff() {
    let dir = repo();
    let handoff = |target: &str| -> Value {
        let o = docfuse(dir.path(), &["handoff", "--index", "idx", "--json", target]);
        assert!(o.status.success(), "{target}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    // by the record's id: its folder, its agent document first, its checks
    let v = handoff("ranker");
    assert_eq!(v["target"]["kind"], "area");
    assert_eq!(v["target"]["path"], "src/query");
    assert_eq!(v["target"]["matched_by"], "ownership id");
    assert_eq!(v["start_here"][0]["path"], "docs/ranking.md");
    assert_eq!(
        v["checks"],
        json!([{"command": "npm run test:ranking", "source": "docfuse.toml", "from": "ownership"}])
    );
    assert_eq!(v["ownership"]["id"], "ranker");
    assert_eq!(v["owners"]["owners"], json!(["@ranking"]));
    assert_eq!(v["owners"]["source"], ".github/CODEOWNERS:2");
    assert_eq!(
        v["metadata"],
        json!({"entity_id": "area:src/query", "kind": "area", "checks_source": "ownership",
               "confidence": "observed", "area_id": "area:src/query",
               "package_id": "package:package.json"})
    );
    // a module under the record inherits it; one outside has the default owner
    let v = handoff("src/query/search.ts");
    assert_eq!(v["ownership"]["id"], "ranker");
    assert_eq!(v["metadata"]["entity_id"], "module:src/query/search.ts");
    let v = handoff("tools/loader.py");
    assert!(v.get("ownership").is_none(), "{v}");
    assert_eq!(v["owners"]["owners"], json!(["@core"]));
    assert_eq!(v["metadata"]["package_id"], "package:tools/pyproject.toml");
    assert_eq!(v["checks"][0]["command"], "pytest");
    // a project file that does not parse is passed over, never an error
    fs::write(
        dir.path().join("repo/docfuse.toml"),
        "[[ownership]]\npath = 3\n",
    )
    .unwrap();
    let v = handoff("src/query/search.ts");
    assert!(v.get("ownership").is_none(), "{v}");
    assert_eq!(v["checks"][0]["command"], "npm test");
}

#[test]
fn ownership_records_and_routes_are_entries_with_their_priors() {
    let dir = repo();
    // a record's id finds the record, a declared package, at its lines
    let v = search(dir.path(), &["billing-gateway"]);
    let top = &results(&v)[0];
    assert_eq!(
        top,
        &(
            "package".to_string(),
            "docfuse.toml#_ownership/billing-gateway".to_string(),
            7
        ),
        "{v}"
    );
    assert_eq!(v["results"][0]["end_line"], 10, "{v}");
    // a routing question puts the ownership record first, and says why
    let v = search(dir.path(), &["who owns the ranking code", "--explain"]);
    assert_eq!(results(&v)[0].1, "docfuse.toml#_ownership/ranker", "{v}");
    assert_eq!(v["results"][0]["explain"]["prior"], 1.5, "{v}");
    // the same words without the routing question: no prior on the record
    let v = search(
        dir.path(),
        &["ranking code", "--explain", "--kind", "package"],
    );
    let r = v["results"].as_array().unwrap();
    let rec = r
        .iter()
        .find(|r| r["id"] == "docfuse.toml#_ownership/ranker")
        .expect("the record matches");
    assert_eq!(rec["explain"]["prior"], 1.0, "{v}");
    // a route whose title covers the query takes the prior; its kind filters
    let v = search(dir.path(), &["tune the backoff", "--explain"]);
    assert_eq!(
        results(&v)[0],
        (
            "intent".to_string(),
            "docfuse.toml#_intent/tune-the-exponential-backoff".to_string(),
            12
        ),
        "{v}"
    );
    assert_eq!(v["results"][0]["explain"]["prior"], 1.5, "{v}");
    let v = search(dir.path(), &["query", "--kind", "change"]);
    assert_eq!(
        results(&v),
        [(
            "change".to_string(),
            "docfuse.toml#_change/add-a-query-operator".to_string(),
            17
        )],
        "{v}"
    );
    // a route mentions the files it names: the file's handoff lists the project file
    let o = docfuse(
        dir.path(),
        &["handoff", "--index", "idx", "--json", "billing-gateway"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let h: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(h["target"]["kind"], "package", "{h}");
    assert_eq!(h["target"]["path"], "services/billing", "{h}");
    assert_eq!(h["checks"][0]["command"], "make billing-test", "{h}");
    assert_eq!(
        h["ownership"]["warnings"],
        json!(["path `services/billing` holds no indexed file: the record is a declared package"]),
        "{h}"
    );
    // the record's agent document is indexed: no warning on the matched record
    let o = docfuse(
        dir.path(),
        &["handoff", "--index", "idx", "--json", "ranker"],
    );
    let h: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(h["ownership"].get("warnings").is_none(), "{h}");
    // a route mentions the files it names
    let o = docfuse(dir.path(), &["graph", "--index", "idx", "src/config.ts"]);
    assert!(
        stdout(&o).contains("docfuse.toml mentions it at docfuse.toml:12"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_postgres_index_carries_the_code_entries_as_a_folder_does() {
    let Some(base) = database() else { return };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}schema=sources_{}_{nanos}", std::process::id());
    let dir = repo();
    let env = |cache: &str| {
        let c = dir.path().join(cache);
        vec![(
            "DOCFUSE_PG_CACHE".to_string(),
            c.to_str().unwrap().to_string(),
        )]
    };
    let run = |cache: &str, args: &[&str]| {
        let e = env(cache);
        let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        docfuse_env(dir.path(), args, &e)
    };
    let o = run(
        "writer",
        &[
            "index",
            "--sources",
            "--no-embeddings",
            "--index",
            &url,
            "repo",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (q, kind) in [
        ("parseConfig", None),
        ("library", Some("package")),
        ("billing-gateway", Some("package")),
        ("tune the backoff", Some("intent")),
        ("who owns the ranking code", None),
        ("text", Some("area")),
    ] {
        let mut args = vec!["search", "--index", url.as_str(), "--json", q];
        let mut folder = vec![q];
        if let Some(k) = kind {
            args.extend(["--kind", k]);
            folder.extend(["--kind", k]);
        }
        let o = run("reader", &args);
        assert!(o.status.success(), "{}", stderr(&o));
        let db: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let local = search(dir.path(), &folder);
        assert_eq!(results(&db), results(&local), "{q}");
        assert!(!results(&db).is_empty(), "{q}");
    }
    // a reader of the database sees the project file's ownership records in handoffs
    let o = run("reader", &["handoff", "--index", &url, "--json", "ranker"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["target"]["path"], "src/query", "{v}");
    assert_eq!(v["ownership"]["id"], "ranker", "{v}");
    assert_eq!(v["checks"][0]["command"], "npm run test:ranking", "{v}");
}
