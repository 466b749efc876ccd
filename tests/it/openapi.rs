//! API specs as documentation, through the real binary: OpenAPI 3 (YAML) and Swagger 2.0
//! (JSON) specs found under a root are indexed by operation, every operation is found
//! by its `operationId` at its own line, and a malformed spec is skipped with a warning
//! naming it while the rest is indexed.

use crate::common;
use common::*;
use std::fs;
use std::path::Path;

const SWAGGER_PETSTORE: &str = include_str!("../fixtures/openapi/swagger-petstore.yaml");
const UBER: &str = include_str!("../fixtures/openapi/uber.swagger.json");

fn site() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("site");
    fs::create_dir_all(root.join("docs")).unwrap();
    fs::write(root.join("openapi.yaml"), SWAGGER_PETSTORE).unwrap();
    fs::write(root.join("docs/swagger.json"), UBER).unwrap();
    fs::write(
        root.join("docs/guide.md"),
        "# Guide\n\nThe pet store keeps pets and orders.\n",
    )
    .unwrap();
    fs::write(
        root.join("docs/broken.openapi.json"),
        "{\"openapi\": \"3.0.0\", \"info\": {\n",
    )
    .unwrap();
    d
}

fn index(d: &Path) -> std::process::Output {
    let o = docfuse(d, &["index", "--no-embeddings", "site"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    o
}

fn top(d: &Path, query: &str) -> serde_json::Value {
    let o = docfuse(
        d,
        &[
            "search", "--json", "--mode", "lexical", "--limit", "3", "--", query,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{query}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["results"][0].clone()
}

/// 1-based line of the first `METHOD:` key after the line `  PATH:` of a YAML spec.
fn operation_line(spec: &str, path: &str, method: &str) -> u64 {
    let lines: Vec<&str> = spec.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_end() == format!("  {path}:"))
        .expect("path");
    let k = lines[at..]
        .iter()
        .position(|l| l.trim_end() == format!("    {method}:"))
        .expect("method");
    (at + k + 1) as u64
}

#[test]
fn a_spec_is_indexed_by_operation_and_a_broken_one_is_named_and_skipped() {
    let d = site();
    let o = index(d.path());
    // the broken spec is skipped, not counted as an indexed document
    assert!(stdout(&o).contains("indexed 3 documents"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("docs/broken.openapi.json")
            && err.contains("not readable as an API spec: line 2"),
        "{err}"
    );
    let hit = top(d.path(), "find pets by status");
    assert_eq!(hit["path"], "openapi.yaml");
    assert_eq!(
        hit["start_line"],
        operation_line(SWAGGER_PETSTORE, "/pet/findByStatus", "get")
    );
    assert_eq!(
        hit["heading_path"],
        serde_json::json!([
            "Swagger Petstore - OpenAPI 3.0",
            "pet",
            "GET /pet/findByStatus"
        ])
    );
    assert_eq!(hit["title"], "Finds Pets by status.");
    let hit = top(d.path(), "price estimates for a ride");
    assert_eq!(hit["path"], "docs/swagger.json");
    assert_eq!(hit["heading_path"][2], "GET /estimates/price");
}

#[test]
fn every_operation_is_found_first_by_its_operation_id() {
    let d = site();
    index(d.path());
    let mut checked = 0;
    let lines: Vec<&str> = SWAGGER_PETSTORE.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(id) = l.trim().strip_prefix("operationId: ") else {
            continue;
        };
        // the operation's method key is the nearest line above at four spaces' indent
        let start = (0..i)
            .rev()
            .find(|&k| lines[k].starts_with("    ") && !lines[k].starts_with("     "))
            .unwrap()
            + 1;
        let hit = top(d.path(), id);
        assert_eq!(hit["path"], "openapi.yaml", "{id}");
        assert_eq!(hit["start_line"], start as u64, "{id}: {hit}");
        checked += 1;
    }
    assert_eq!(checked, 19);
}

#[test]
fn a_refresh_reads_an_edited_spec_and_status_stays_fresh() {
    let d = site();
    index(d.path());
    let spec = d.path().join("site/openapi.yaml");
    let edited = SWAGGER_PETSTORE.replace(
        "summary: Finds Pets by status.",
        "summary: Finds Pets by their adoption status.",
    );
    assert_ne!(edited, SWAGGER_PETSTORE);
    fs::write(&spec, edited).unwrap();
    let o = docfuse(d.path(), &["refresh"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        top(d.path(), "adoption status")["title"],
        "Finds Pets by their adoption status."
    );
    let o = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["fresh"], true, "{v}");
}

#[test]
fn a_spec_broken_by_an_edit_keeps_its_last_sections_and_status_says_why() {
    let d = site();
    index(d.path());
    let o = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["skipped"]["invalid_spec"], 1,
        "the broken spec of the site: {v}"
    );
    let spec = d.path().join("site/openapi.yaml");
    fs::write(&spec, format!("{SWAGGER_PETSTORE}  broken: [\n")).unwrap();
    let o = docfuse(d.path(), &["refresh"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "published, in part: {}",
        stderr(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("openapi.yaml")
            && err.contains("not readable as an API spec")
            && err.contains("its last indexed text is kept"),
        "{err}"
    );
    // the operations are still found, from the text as indexed
    assert_eq!(top(d.path(), "findPetsByStatus")["path"], "openapi.yaml");
    let o = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["skipped"]["invalid_spec"], 2, "{v}");
    let partial = v["partial"].to_string();
    assert!(
        partial.contains("openapi.yaml") && partial.contains("not readable as an API spec"),
        "{v}"
    );
    // fixed again: read again, nothing partial
    fs::write(&spec, SWAGGER_PETSTORE).unwrap();
    let o = docfuse(d.path(), &["refresh"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["fresh"], true, "{v}");
    assert_eq!(v["skipped"]["invalid_spec"], 1, "{v}");
}
