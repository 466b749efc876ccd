//! The documentation graph of an index: relations of every kind with their evidence,
//! PageRank, the graph after a refresh equal to a full rebuild's, `docfuse graph`, and
//! the canonicality part in explain.

use crate::common;
use common::*;
use docfuse::read::{DocIndex, Mode, SearchOptions};
use docfuse::views::{graph_summary, page_relations};
use std::fs;
use std::path::Path;

const SITE: &[(&str, &str)] = &[
    (
        "SUMMARY.md",
        "# Summary\n\n- [Intro](intro.md)\n- [Install](guide/install.md)\n- [Config][c]\n\n[c]: ref/config.md\n",
    ),
    (
        "intro.md",
        "# Intro\n\nStart by [installing from source](guide/install.md#from-source).\n\nThe settings live in <a href=\"ref/config.md\">the configuration page</a>.\n",
    ),
    (
        "guide/index.md",
        "# Guide\n\nThe guide: [install](install.md).\n",
    ),
    (
        "guide/install.md",
        "# Install\n\n## From source\n\nRead `ref/config.md` before building; [home](../SUMMARY.md), [web](https://example.org).\n\n```sh\ncat intro.md\n```\n",
    ),
    (
        "ref/config.md",
        "# Configuration\n\nEvery setting of the tool, with its default. See [install](../guide/install.md#from-source) and [nothing](missing.md).\n",
    ),
];

fn write_site(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = dir.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
}

/// The sample site written and indexed with `bucket_chunks`: (dir, docs, index).
fn built_site(bucket_chunks: u64) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (docs, idx) = (dir.path().join("docs"), dir.path().join("idx"));
    write_site(&docs, SITE);
    build_at(&idx, &docs, bucket_chunks);
    // later edits must not be "racily clean" (mtime within 2 s of the build)
    std::thread::sleep(std::time::Duration::from_millis(2100));
    (dir, docs, idx)
}

/// `files` indexed in a temporary folder and opened, with lexical explain options.
fn opened(files: &[(&str, &str)]) -> (tempfile::TempDir, DocIndex, SearchOptions) {
    let dir = tempfile::tempdir().unwrap();
    let (docs, idx) = (dir.path().join("docs"), dir.path().join("idx"));
    write_site(&docs, files);
    build_at(&idx, &docs, 512);
    let opts = SearchOptions {
        mode: Mode::Lexical,
        explain: true,
        ..SearchOptions::default()
    };
    (dir, DocIndex::open(&idx).unwrap(), opts)
}

fn build_at(idx: &Path, docs: &Path, bucket_chunks: u64) {
    build_in_buckets(idx, docs, bucket_chunks, false);
}

#[test]
fn relations_with_evidence_and_pagerank() {
    let dir = tempfile::tempdir().unwrap();
    let (docs, idx) = (dir.path().join("docs"), dir.path().join("idx"));
    write_site(&docs, SITE);
    build_at(&idx, &docs, 512);
    let index = DocIndex::open(&idx).unwrap();
    let s = graph_summary(&index, 3).unwrap();
    assert_eq!(s.documents, 5);
    assert_eq!(s.external_links, 1);
    assert_eq!(s.unresolved_links, 1, "missing.md");
    assert_eq!(s.pages[0].path, "SUMMARY.md", "{:?}", s.pages);

    let install = page_relations(&index, "guide/install.md").unwrap();
    let incoming: Vec<(&str, String, u32, Option<&str>)> = install
        .incoming
        .iter()
        .map(|r| {
            let kind = serde_json::to_value(r.kind).unwrap();
            (
                r.from.as_str(),
                kind.as_str().unwrap().to_string(),
                r.line,
                r.section.as_deref(),
            )
        })
        .collect();
    assert!(
        incoming.contains(&("SUMMARY.md", "links_to".into(), 4, None)),
        "{incoming:?}"
    );
    assert!(incoming.contains(&(
        "intro.md",
        "links_to".into(),
        3,
        Some("guide/install.md#install/from-source")
    )));
    assert!(incoming.contains(&("guide/index.md", "covers".into(), 0, None)));
    let out = &install.outgoing;
    let mention = out
        .iter()
        .find(|r| r.to == "ref/config.md")
        .expect("inline-code mention");
    assert_eq!((mention.line, mention.in_code_block), (5, false));
    let fence = out
        .iter()
        .find(|r| r.to == "intro.md")
        .expect("fence citation kept");
    assert_eq!((fence.line, fence.in_code_block), (8, true));

    let config = page_relations(&index, "ref/config.md").unwrap();
    let broken: Vec<(u32, &str, String)> = config
        .broken
        .iter()
        .map(|b| {
            let why = serde_json::to_value(b.why).unwrap();
            (b.line, b.target.as_str(), why.as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(broken, vec![(3, "missing.md", "no_document".to_string())]);
    let intro = page_relations(&index, "intro.md").unwrap();
    assert!(intro.broken.is_empty(), "{:?}", intro.broken);
    assert!(
        config
            .incoming
            .iter()
            .any(|r| r.from == "intro.md" && r.line == 5),
        "HTML <a href>: {:?}",
        config.incoming
    );
}

#[test]
fn a_refreshed_graph_equals_a_full_rebuild() {
    // one document per bucket: most buckets are kept by each refresh
    let (dir, docs, idx) = built_site(1);
    fs::write(
        docs.join("guide/index.md"),
        "# Guide\n\nThe guide: [install](install.md), [config](../ref/config.md).\n",
    )
    .unwrap();
    fs::write(
        docs.join("ref/cli.md"),
        "# CLI\n\nSee [config](config.md).\n",
    )
    .unwrap();
    fs::remove_file(docs.join("intro.md")).unwrap();
    build_at(&idx, &docs, 1);
    let fresh = dir.path().join("fresh");
    build_at(&fresh, &docs, 1);
    let graph = |p: &Path| {
        let index = DocIndex::open(p).unwrap();
        let s = serde_json::to_value(graph_summary(&index, 100).unwrap()).unwrap();
        let pages: Vec<String> = [
            "guide/index.md",
            "ref/config.md",
            "ref/cli.md",
            "SUMMARY.md",
        ]
        .iter()
        .map(|d| serde_json::to_string(&page_relations(&index, d).unwrap()).unwrap())
        .collect();
        (s, pages)
    };
    assert_eq!(graph(&idx), graph(&fresh));
    let index = DocIndex::open(&idx).unwrap();
    let config = page_relations(&index, "ref/config.md").unwrap();
    assert!(config
        .incoming
        .iter()
        .any(|r| r.from == "guide/index.md" && r.line == 3));
    assert!(config.incoming.iter().any(|r| r.from == "ref/cli.md"));
    assert!(!config.incoming.iter().any(|r| r.from == "intro.md"));
}

#[test]
fn graph_command_lists_pages_and_names_the_closest_on_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    write_site(&docs, SITE);
    let o = docfuse(dir.path(), &["index", "--no-embeddings", "docs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = docfuse(dir.path(), &["graph", "--top", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("5 documents"), "{text}");
    assert!(
        text.lines().nth(2).unwrap().contains("1. SUMMARY.md"),
        "{text}"
    );
    let o = docfuse(dir.path(), &["graph", "--json", "guide/install.md"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["page"]["path"], "guide/install.md");
    assert!(v["incoming"].as_array().unwrap().len() >= 3);
    let o = docfuse(dir.path(), &["graph", "instal.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("closest: guide/install.md"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn explain_shows_canonicality_and_it_only_breaks_ties() {
    let (_dir, index, mut opts) = opened(SITE);
    let hits = index.search("install", &opts).unwrap().hits;
    let e = hits[0].explain.as_ref().unwrap();
    assert_eq!(e.lexical.canonicality, 0.0, "weight 0 by default");
    let summary_hit = hits
        .iter()
        .find(|h| h.chunk.path == "SUMMARY.md")
        .expect("SUMMARY matches");
    assert_eq!(
        summary_hit
            .explain
            .as_ref()
            .unwrap()
            .lexical
            .page_canonicality,
        1.0
    );
    opts.params.canon_gain = 0.1;
    let gained = index.search("install", &opts).unwrap().hits;
    for h in &gained {
        let l = &h.explain.as_ref().unwrap().lexical;
        assert!((l.canonicality - 0.1 * l.page_canonicality * best(&hits)).abs() < 1e-4);
    }
    // a query with no lexical evidence gets no canonicality: no result at all
    assert!(index.search("qzvxkj", &opts).unwrap().hits.is_empty());
}

fn best(hits: &[docfuse::read::Hit]) -> f32 {
    hits.iter()
        .map(|h| {
            let l = &h.explain.as_ref().unwrap().lexical;
            l.lexical * l.aboutness
        })
        .fold(0.0, f32::max)
}

#[test]
fn agent_documentation_is_favoured_only_when_asked_and_only_with_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let docs = dir.path().join("docs");
    write_site(
        &docs,
        &[
            ("a.md", "# Deploy\n\nDeploy the service with the release script.\n"),
            (
                "b.md",
                "---\naudience: agent\n---\n# Deploy\n\nDeploy the service with the release script.\n",
            ),
            ("sub/AGENTS.md", "# Notes for agents\n\nNothing about that.\n"),
        ],
    );
    let o = docfuse(dir.path(), &["index", "--no-embeddings", "docs"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let paths = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["search", "--json", "--explain", "deploy the service"];
        args.extend_from_slice(extra);
        let v: serde_json::Value =
            serde_json::from_str(&stdout(&docfuse(dir.path(), &args))).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r["path"].as_str().unwrap(),
                    r["explain"]["audience_fit"]
                )
            })
            .collect()
    };
    assert_eq!(
        paths(&[]),
        vec!["a.md 1.0", "b.md 1.0"],
        "equal text: the ordinal decides"
    );
    assert_eq!(paths(&["--agent"]), vec!["b.md 1.5", "a.md 1.0"]);
    // AGENTS.md matches nothing of the query: --agent does not bring it in
    let o = docfuse(dir.path(), &["search", "--json", "--agent", "qzvxkj"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn a_refresh_that_changes_no_link_links_the_graph_files() {
    use std::os::unix::fs::MetadataExt;
    let (dir, docs, idx) = built_site(1);
    // a word more in a paragraph: same links, same sections
    fs::write(
        docs.join("ref/config.md"),
        "# Configuration\n\nEvery setting of the tool, with its default value. See [install](../guide/install.md#from-source) and [nothing](missing.md).\n",
    )
    .unwrap();
    build_at(&idx, &docs, 1);
    let index = DocIndex::open(&idx).unwrap();
    let gen = index.generation_dir();
    for f in ["graph.json", "links.json", "pagerank.json"] {
        assert_eq!(
            fs::metadata(gen.join(f)).unwrap().nlink(),
            2,
            "{f} is linked"
        );
    }
    let o = docfuse(dir.path(), &["verify", "--index", "idx"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // and a new link makes a new graph
    std::thread::sleep(std::time::Duration::from_millis(2100));
    fs::write(
        docs.join("intro.md"),
        "# Intro\n\nSee [config](ref/config.md).\n",
    )
    .unwrap();
    build_at(&idx, &docs, 1);
    let gen = DocIndex::open(&idx).unwrap().generation_dir();
    assert_eq!(fs::metadata(gen.join("graph.json")).unwrap().nlink(), 1);
}

/// `a.md` matches the query and links to a section of `b.md`, which names
/// `x/deep/leaf.md` by its end only (a fuzzy mention); `a.md` cites `d.md` in a code
/// block only; `c.md` is unrelated.
const NEAR: &[(&str, &str)] = &[
    (
        "a.md",
        "# Alpha\n\nThe zebra crossing rules. See [Beta](b.md#setup).\n\n```sh\ncat d.md\n```\n",
    ),
    (
        "b.md",
        "# Beta\n\nIntro words.\n\n## Setup\n\nInstall the thing; read `deep/leaf.md` too.\n",
    ),
    ("c.md", "# Other\n\nUnrelated words.\n"),
    ("d.md", "# Delta\n\nCited in a code block only.\n"),
    ("x/deep/leaf.md", "# Leaf\n\nLeaf text.\n"),
];

#[test]
fn proximity_surfaces_related_pages_with_the_weaker_confidence_and_explains_its_anchor() {
    use docfuse::graph::{Confidence, RelationKind};
    let (_dir, index, mut opts) = opened(NEAR);
    // weight 0 (the default): the part is in explain, at 0, and nothing is surfaced
    let hits = index.search("zebra", &opts).unwrap().hits;
    assert_eq!(hits.len(), 1);
    let p = hits[0]
        .explain
        .as_ref()
        .unwrap()
        .proximity
        .as_ref()
        .unwrap();
    assert_eq!((p.proximity, p.reach, p.graph_only), (0.0, 0.0, false));

    opts.params.prox_gain = 0.5;
    let hits = index.search("zebra", &opts).unwrap().hits;
    let paths: Vec<&str> = hits.iter().map(|h| h.chunk.path.as_str()).collect();
    assert_eq!(
        paths,
        ["a.md", "b.md", "x/deep/leaf.md"],
        "no c.md, no code-block d.md"
    );
    let best = hits[0].score;
    // b: one link from the anchor; degrees a 1 (b), b 2 (a, leaf)
    let b = &hits[1];
    assert_eq!(
        b.chunk.heading_path,
        ["Beta", "Setup"],
        "the section the link names"
    );
    assert_eq!(b.confidence, Confidence::Observed);
    let pb = b.explain.as_ref().unwrap().proximity.as_ref().unwrap();
    let reach_b = 1.0 / 2f32.sqrt();
    assert!((pb.reach - reach_b).abs() < 1e-5, "{pb:?}");
    assert!((b.score - 0.5 * best * reach_b).abs() < 1e-5);
    assert!(pb.graph_only);
    assert_eq!(pb.anchor.as_deref(), Some("a.md"));
    assert_eq!(pb.via.len(), 1);
    assert_eq!(pb.via[0].kind, RelationKind::LinksTo);
    assert_eq!((pb.via[0].from.as_str(), pb.via[0].line), ("a.md", 3));
    assert_eq!(pb.via[0].section.as_deref(), Some("b.md#beta/setup"));
    assert_eq!(
        b.explain.as_ref().unwrap().lexical.score,
        0.0,
        "no evidence of its own"
    );
    // leaf: two relations, the second a fuzzy mention: the result is fuzzy
    let leaf = &hits[2];
    assert_eq!(leaf.confidence, Confidence::Fuzzy);
    let pl = leaf.explain.as_ref().unwrap().proximity.as_ref().unwrap();
    assert!((pl.reach - reach_b / 2f32.sqrt()).abs() < 1e-5, "{pl:?}");
    assert_eq!(pl.via[1].kind, RelationKind::Mentions);
    assert_eq!(pl.via[1].confidence, Confidence::Fuzzy);
    // without explain the ranking is the same
    opts.explain = false;
    let plain: Vec<(String, f32)> = index
        .search("zebra", &opts)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.chunk.path, h.score))
        .collect();
    let explained: Vec<(String, f32)> = hits.into_iter().map(|h| (h.chunk.path, h.score)).collect();
    assert_eq!(plain, explained);
    // a query with no lexical evidence has no anchor: nothing
    assert!(index.search("qzvxkj", &opts).unwrap().hits.is_empty());
}

#[test]
fn an_mkdocs_nav_links_its_pages_with_lines_and_is_never_a_result() {
    let (_dir, index, opts) = opened(&[
        (
            "mkdocs.yml",
            "site_name: T\nnav:\n  - Home: index.md\n  - Guide:\n    - Install: guide/install.md\n    - Missing: guide/nope.md\ntheme:\n  name: material\n",
        ),
        ("docs/index.md", "# Home\n\nWelcome to the site.\n"),
        ("docs/guide/install.md", "# Install\n\nInstall the site tool.\n"),
    ]);
    let nav = page_relations(&index, "mkdocs.yml").unwrap();
    let out: Vec<(&str, u32)> = nav
        .outgoing
        .iter()
        .map(|r| (r.to.as_str(), r.line))
        .collect();
    assert_eq!(out, [("docs/index.md", 3), ("docs/guide/install.md", 5)]);
    assert_eq!(nav.broken.len(), 1);
    assert_eq!(
        (nav.broken[0].line, nav.broken[0].target.as_str()),
        (6, "docs/guide/nope.md")
    );
    // the nav feeds PageRank: the listed page outranks nothing-links-to-it
    let install = page_relations(&index, "docs/guide/install.md").unwrap();
    assert!(install.page.inbound >= 1);
    let hits = index.search("site", &opts).unwrap().hits;
    assert!(!hits.is_empty());
    assert!(
        hits.iter().all(|h| h.chunk.path != "mkdocs.yml"),
        "no chunks of its own"
    );
}

#[test]
fn anchors_of_other_site_generators_name_their_sections_and_a_broken_one_is_still_broken() {
    // VitePress (`server.proxy` → `#server-proxy`, `` `index.html` and Root `` →
    // `#index-html-and-root`) and markdown-it-anchor's default (`#server.proxy`); the
    // GitHub slugs (`#serverproxy`) keep working, a repeated heading is numbered alike
    let (_dir, index, _) = opened(&[
        (
            "config/server.md",
            "# Server Options\n\n## server.proxy\n\nProxy rules.\n\n## server.port\n\nThe port.\n\n## Example\n\nOne.\n\n## Example\n\nTwo.\n",
        ),
        ("guide/index.md", "# Guide\n\n## `index.html` and Root\n\nThe entry.\n"),
        (
            "guide/dev.md",
            "# Dev\n\nSee [proxy](../config/server#server-proxy), [port](../config/server.md#server.port), [github](../config/server.md#serverproxy), [second](../config/server.md#example-1), [entry](./#index-html-and-root) and [gone](../config/server.md#server-https).\n\nDocusaurus finds a bare [catalogs](catalogs.md) from the docs root, not [this](./catalogs.md).\n",
        ),
        ("catalogs.md", "# Catalogs\n\nShared versions.\n"),
    ]);
    let dev = page_relations(&index, "guide/dev.md").unwrap();
    let broken: Vec<&str> = dev.broken.iter().map(|b| b.target.as_str()).collect();
    assert_eq!(
        broken,
        ["../config/server.md#server-https", "./catalogs.md"],
        "{:?}",
        dev.broken
    );
    // the index-wide list names the page and line of each
    let all = docfuse::views::graph_summary(&index, 1).unwrap().broken;
    let listed: Vec<(&str, u32, &str)> = all
        .iter()
        .map(|b| (b.from.as_str(), b.line, b.target.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            ("guide/dev.md", 3, "../config/server.md#server-https"),
            ("guide/dev.md", 5, "./catalogs.md")
        ]
    );
    let sections: Vec<Option<&str>> = dev
        .outgoing
        .iter()
        .filter(|r| serde_json::to_value(r.kind).unwrap() == "links_to")
        .map(|r| r.section.as_deref())
        .collect();
    for want in [
        "config/server.md#server-options/serverproxy",
        "config/server.md#server-options/serverport",
        "config/server.md#server-options/example-1",
        "guide/index.md#guide/indexhtml-and-root",
    ] {
        assert!(sections.contains(&Some(want)), "{want}: {sections:?}");
    }
    // a handoff asked with a site's anchor (a URL copied from the VitePress site)
    let h =
        docfuse::views::handoff_for_entity(&index, "config/server.md#server-proxy", false).unwrap();
    assert_eq!(
        h.target.section.as_deref(),
        Some("config/server.md#server-options/serverproxy")
    );
}

/// The template copies of a generation (`copies.json`'s ordinals), with whether its
/// graph file was linked from the previous generation.
fn templates_of(idx: &Path) -> (usize, bool) {
    use std::os::unix::fs::MetadataExt;
    let gen = DocIndex::open(idx).unwrap().generation_dir();
    let v: serde_json::Value =
        serde_json::from_slice(&fs::read(gen.join("copies.json")).unwrap()).unwrap();
    let linked = fs::metadata(gen.join("graph.json")).unwrap().nlink() == 2;
    (v["templates"].as_array().unwrap().len(), linked)
}

/// A refresh finds template copies among documents it carries (their fingerprints come
/// from the previous `copies.json`), and an edit that changes a copy's words but no link
/// updates the copies while the graph is linked.
#[test]
fn a_refresh_keeps_template_copies_of_carried_documents_up_to_date() {
    let block = "### Manifest Options\n\n`--locked`: asserts that the exact same dependencies \
                 and versions are used as when the lock file was generated.\n";
    let page = |c: &str| format!("# tool-{c}(1)\n\n## DESCRIPTION\n\nThe {c} command.\n\n{block}");
    let dir = tempfile::tempdir().unwrap();
    let (docs, idx) = (dir.path().join("docs"), dir.path().join("idx"));
    let (check, build, test) = (page("check"), page("build"), page("test"));
    write_site(
        &docs,
        &[
            ("tool-check.md", &check),
            ("tool-build.md", &build),
            ("tool-test.md", &test),
            ("intro.md", "# Intro\n\nWelcome.\n"),
        ],
    );
    // one document per bucket, so a refresh carries the unchanged ones
    build_at(&idx, &docs, 1);
    assert_eq!(templates_of(&idx).0, 3);
    std::thread::sleep(std::time::Duration::from_millis(2100));
    fs::write(docs.join("intro.md"), "# Intro\n\nWelcome, reader.\n").unwrap();
    let r = build_in_buckets(&idx, &docs, 1, false);
    assert_eq!(r.files.changed, 1, "{r:?}");
    assert_eq!(templates_of(&idx), (3, true));
    // one copy's words change: two pages are no template
    std::thread::sleep(std::time::Duration::from_millis(2100));
    fs::write(docs.join("tool-test.md"), test.replace("asserts", "checks")).unwrap();
    build_at(&idx, &docs, 1);
    assert_eq!(templates_of(&idx), (0, true));
    std::thread::sleep(std::time::Duration::from_millis(2100));
    fs::write(docs.join("tool-test.md"), &test).unwrap();
    build_at(&idx, &docs, 1);
    assert_eq!(templates_of(&idx), (3, true));
}
