//! Handoffs on a small repository with agent documents at two levels: the tiers of
//! `start_here` with their relations, what to read before editing, checks from front
//! matter and agent documents, areas, sections, titles, caveats, unknown targets — through
//! the library, the CLI and `GET /v1/handoff`.

use crate::common;
use common::*;
use docfuse::read::DocIndex;
use docfuse::views::{handoff_for_entity, Handoff, Tier};
use std::fs;

const REPO: &[(&str, &str)] = &[
    ("AGENTS.md", "# Agents\n\nKeep the docs true.\n\n## Testing\n\n```sh\nmake test\n```\n"),
    ("CONTRIBUTING.md", "# Contributing\n\nOpen a pull request.\n"),
    ("README.md", "# Project\n\nStart with the [guide](guide/index.md).\n"),
    (
        "guide/AGENTS.md",
        "# Guide agents\n\nWrite short pages.\n\n## Checks\n\n```bash\n$ make docs-check\n```\n\n## Style\n\n```sh\nvale guide\n```\n",
    ),
    ("guide/index.md", "# Guide\n\n- [Install](install.md)\n- [Usage](usage.md)\n"),
    (
        "guide/install.md",
        "---\nchecks:\n  - make install-test\n---\n# Install\n\nRun the installer. Then read [usage](usage.md).\n",
    ),
    (
        "guide/usage.md",
        "# Usage\n\nAfter `guide/install.md`, run it. Settings: [config](../ref/config.md).\n",
    ),
    (
        "ref/config.md",
        "# Configuration\n\nEvery option.\n\n```sh\ncat guide/install.md\n```\n",
    ),
];

fn repo() -> (tempfile::TempDir, DocIndex) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in REPO {
        let p = dir.path().join("docs").join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let o = docfuse(dir.path(), &["index", "--no-embeddings", "docs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = DocIndex::open(&dir.path().join(".docfuse")).unwrap();
    (dir, index)
}

fn paths(h: &Handoff) -> Vec<(&str, Tier)> {
    h.start_here
        .iter()
        .map(|e| (e.path.as_str(), e.tier))
        .collect()
}

#[test]
fn a_document_handoff_has_ranked_tiers_reads_and_checks() {
    let (_dir, index) = repo();
    let h = handoff_for_entity(&index, "guide/install.md", false).unwrap();
    assert_eq!(h.target.kind, "document");
    assert_eq!(h.edit_roots, vec!["guide/install.md"]);
    let got = paths(&h);
    assert_eq!(got[0], ("guide/AGENTS.md", Tier::AgentDoc), "{got:?}");
    assert_eq!(got[1], ("guide/index.md", Tier::Covers), "{got:?}");
    assert!(got.contains(&("guide/usage.md", Tier::Mentions)), "{got:?}");
    let fence = h
        .start_here
        .iter()
        .find(|e| e.path == "ref/config.md")
        .expect("fence citation");
    assert!(fence.why.contains("in a code block"), "{fence:?}");
    assert_eq!(fence.evidence, "ref/config.md:6");
    assert_eq!(got.last(), Some(&("README.md", Tier::RootIndex)), "{got:?}");
    assert!(h.start_here.iter().all(|e| e.sha256.len() == 64));
    let usage = h
        .start_here
        .iter()
        .find(|e| e.path == "guide/usage.md")
        .unwrap();
    assert_eq!(usage.evidence, "guide/usage.md:3");

    let reads: Vec<&str> = h
        .read_before_editing
        .iter()
        .map(|e| e.path.as_str())
        .collect();
    assert_eq!(
        reads,
        vec![
            "guide/index.md",
            "guide/usage.md",
            "guide/AGENTS.md",
            "AGENTS.md",
            "CONTRIBUTING.md"
        ],
        "the next two pages, then every agent and contributing document that applies"
    );
    let checks: Vec<(&str, &str, &str)> = h
        .checks
        .iter()
        .map(|c| (c.command.as_str(), c.source.as_str(), c.from))
        .collect();
    assert_eq!(
        checks,
        vec![
            ("make install-test", "guide/install.md:3", "front_matter"),
            ("make docs-check", "guide/AGENTS.md:8", "agent_doc"),
            ("make test", "AGENTS.md:8", "agent_doc"),
        ]
    );
    assert_eq!(h.evidence[0].path, "guide/install.md");
    assert!(h.caveats.is_none());
    assert!(h.explain.contains_key("start_here"));
}

#[test]
fn areas_sections_titles_caveats_and_misses() {
    let (dir, index) = repo();
    let area = handoff_for_entity(&index, "guide/", true).unwrap();
    assert_eq!(
        (area.target.kind, area.edit_roots.clone()),
        ("area", vec!["guide/".to_string()])
    );
    assert_eq!(area.start_here[0].path, "guide/AGENTS.md");
    assert!(
        paths(&area).contains(&("README.md", Tier::Covers)),
        "{:?}",
        paths(&area)
    );
    let c = area.caveats.as_ref().expect("caveats when asked");
    assert!(!c.no_agent_doc && c.stale.is_empty());

    let section = handoff_for_entity(&index, "guide/install.md#install", false).unwrap();
    assert_eq!(section.target.kind, "section");
    assert_eq!(
        section.target.section.as_deref(),
        Some("guide/install.md#install")
    );

    let titled = handoff_for_entity(&index, "Configuration", false).unwrap();
    assert_eq!(
        (titled.target.path.as_str(), titled.target.matched_by),
        ("ref/config.md", "title or alias")
    );
    // titles compare as the graph's title mentions do: case and outer punctuation aside
    let titled = handoff_for_entity(&index, " configuration. ", false).unwrap();
    assert_eq!(titled.target.path, "ref/config.md");
    let root_only = handoff_for_entity(&index, "ref/config.md", true).unwrap();
    assert!(
        !root_only.caveats.unwrap().no_agent_doc,
        "AGENTS.md at the root applies"
    );

    let miss = handoff_for_entity(&index, "guide/instal.md", false)
        .unwrap_err()
        .to_string();
    assert!(miss.contains("closest: guide/install.md"), "{miss}");

    // a file edited after indexing makes a caveat
    fs::write(
        dir.path().join("docs/guide/usage.md"),
        "# Usage\n\nChanged.\n",
    )
    .unwrap();
    let index = DocIndex::open(&dir.path().join(".docfuse")).unwrap();
    let h = handoff_for_entity(&index, "guide/usage.md", true).unwrap();
    assert!(!h.caveats.unwrap().stale.is_empty());
}

#[test]
fn cli_prints_and_exits_2_on_an_unknown_target() {
    let (dir, _index) = repo();
    let o = docfuse(dir.path(), &["handoff", "guide/install.md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("start here:") && text.contains("1. guide/AGENTS.md  [agent_doc]"),
        "{text}"
    );
    assert!(
        text.contains("make install-test   (guide/install.md:3)"),
        "{text}"
    );
    let o = docfuse(dir.path(), &["handoff", "--json", "--caveats", "guide"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["target"]["kind"], "area");
    assert!(v["caveats"].is_object());
    // a target of invisible characters only is empty, as a blank one
    for blank in ["  ", "\u{200b}\u{feff}", "\u{2060} \u{200d}"] {
        let o = docfuse(dir.path(), &["handoff", blank]);
        assert_eq!(o.status.code(), Some(2), "{blank:?}");
        assert!(
            stderr(&o).contains("an empty handoff target"),
            "{}",
            stderr(&o)
        );
    }
    let o = docfuse(dir.path(), &["handoff", "nothing-like-it.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("names no indexed document"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn http_handoff_route() {
    let (dir, _index) = repo();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(["serve", "--addr", "127.0.0.1:0", "--index"])
        .arg(dir.path().join(".docfuse"))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = served_addr(&mut err);
    let get = |path: &str| exchange(&addr, "GET", path, None);
    let (code, v) = get("/v1/handoff?target=guide%2Finstall.md");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v["edit_roots"][0], "guide/install.md");
    assert_eq!(v["start_here"][0]["path"], "guide/AGENTS.md");
    let (code, v) = get("/v1/handoff?target=nope.md");
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (404, Some("not_found")),
        "{v}"
    );
    assert_eq!(get("/v1/handoff?target=x&mode=1").0, 400);
    assert_eq!(get("/v1/handoff").0, 400);
    assert_eq!(
        get("/v1/handoff?target=%E2%80%8B%EF%BB%BF").0,
        400,
        "invisible target"
    );
    assert_eq!(get("/v1/handoff?target=guide&caveats=maybe").0, 400);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_title_two_pages_share_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    for (path, text) in [
        ("upgrade.md", "# How to upgrade\n\nSteps.\n"),
        ("insiders/upgrade.md", "# How to upgrade\n\nOther steps.\n"),
    ] {
        let p = docs.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let idx = dir.path().join("idx");
    let o = docfuse(
        dir.path(),
        &[
            "index",
            "--no-embeddings",
            "--index",
            idx.to_str().unwrap(),
            docs.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let index = DocIndex::open(&idx).unwrap();
    let err = handoff_for_entity(&index, "how to upgrade", false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("2 pages")
            && err.contains("insiders/upgrade.md")
            && err.contains("upgrade.md"),
        "{err}"
    );
}

/// A repository whose documents declare no checks: a handoff takes them from the package
/// manifest that holds the target — its check scripts, else its manager's default — and
/// never overrides checks the documents declare.
#[test]
fn checks_fall_back_to_the_nearest_package_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let files: &[(&str, &str)] = &[
        (
            "package.json",
            "{\n  \"name\": \"web\",\n  \"test\": \"not a script\",\n  \"scripts\": {\n    \"build\": \"tsc\",\n    \"test\": \"vitest run\",\n    \"lint\": \"eslint .\"\n  }\n}\n",
        ),
        ("yarn.lock", "# lock\n"),
        ("docs/guide.md", "# Guide\n\nHow the web app works.\n"),
        ("crates/core/Cargo.toml", "[package]\nname = \"core\"\n"),
        ("crates/core/README.md", "# Core\n\nThe core crate.\n"),
        (
            "crates/core/notes/design.md",
            "---\nchecks:\n  - cargo test -p core --features slow\n---\n# Design\n\nWhy.\n",
        ),
        ("broken/package.json", "{ not json"),
        // a member of the yarn workspace: the lockfile is at the root
        ("packages/ui/package.json", "{\"name\": \"ui\", \"scripts\": {\"lint\": \"x\"}}"),
        ("packages/ui/README.md", "# UI\n\nButtons.\n"),
        // tooling-only package.json beside a Cargo.toml: cargo's default wins
        ("tools/gen/package.json", "{\"name\": \"gen-tools\"}"),
        ("tools/gen/Cargo.toml", "[package]\nname = \"gen\"\n"),
        ("tools/gen/README.md", "# Gen\n\nGenerates.\n"),
        ("broken/page.md", "# Page\n\nText.\n"),
        // a root contributing guide speaks for the root's package, not for a member
        // package with check scripts of its own
        (
            "CONTRIBUTING.md",
            "# Contributing\n\n## Testing\n\n```sh\nmake test-all\n```\n",
        ),
    ];
    for (path, text) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    let o = docfuse(dir.path(), &["index", "--no-embeddings", "repo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let index = DocIndex::open(&dir.path().join(".docfuse")).unwrap();
    let checks = |target: &str| -> Vec<(String, String, &'static str)> {
        handoff_for_entity(&index, target, false)
            .unwrap()
            .checks
            .into_iter()
            .map(|c| (c.command, c.source, c.from))
            .collect()
    };
    // the root's contributing guide for the root's package
    assert_eq!(
        checks("docs/guide.md"),
        vec![(
            "make test-all".to_string(),
            "CONTRIBUTING.md:6".to_string(),
            "contributing"
        )]
    );
    // a member package's own scripts before a contributing guide above it, run with the
    // lockfile's manager, cited at their line
    assert_eq!(
        checks("packages/ui/README.md"),
        vec![(
            "yarn run lint".to_string(),
            "packages/ui/package.json:1".to_string(),
            "package_scripts"
        )]
    );
    // a crate without scripts: the guide above it, then cargo's default
    assert_eq!(checks("crates/core/README.md")[0].0, "make test-all");
    // a document's own checks come first and stand alone
    assert_eq!(checks("crates/core/notes/design.md")[0].2, "front_matter");
    assert_eq!(checks("crates/core/notes/design.md").len(), 1);
    // a manifest that does not parse is passed over for the one above it: the root's
    assert_eq!(checks("broken/page.md")[0].0, "make test-all");
    // the CLI's JSON carries the same
    let o = docfuse(dir.path(), &["handoff", "--json", "packages/ui/README.md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["checks"][0]["command"], "yarn run lint", "{v}");
    assert_eq!(v["checks"][0]["from"], "package_scripts", "{v}");
}
