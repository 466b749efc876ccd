use super::*;
use crate::chunk::{doc_links, SourceDoc, SourceKind};

/// Builds the graph of `(path, text)` documents of one root; sections are the
/// `path#slug` ids of the given headings.
fn graph(files: &[(&str, &str, &[&str])]) -> Graph {
    let links: Vec<DocLinks> = files
        .iter()
        .map(|(path, text, _)| {
            DocLinks::of(doc_links(&SourceDoc {
                rel_path: path.to_string(),
                text: text.to_string(),
                kind: SourceKind::Markdown,
                title_hint: None,
            }))
        })
        .collect();
    let docs: Vec<GraphDoc<'_>> = files
        .iter()
        .zip(&links)
        .map(|((path, _, sections), links)| GraphDoc {
            root: 0,
            path,
            sections: sections.iter().map(|s| format!("{path}#{s}")).collect(),
            links,
        })
        .collect();
    Graph::build(&docs)
}

fn has(g: &Graph, from: u32, to: u32, kind: RelationKind) -> Option<&Relation> {
    g.relations
        .iter()
        .find(|r| r.from == from && r.to == to && r.kind == kind)
}

const SITE: &[(&str, &str, &[&str])] = &[
    (
        "SUMMARY.md",
        "# Summary\n\n- [Intro](intro.md)\n- [Install](guide/install.md)\n- [Config][c]\n\n[c]: ref/config.md\n",
        &["summary"],
    ),
    (
        "intro.md",
        "# Intro\n\nStart with [installing](guide/install.md#from-source).\nSee also <a href=\"ref/config.md\">config</a>.\n",
        &["intro"],
    ),
    (
        "guide/install.md",
        "# Install\n\n## From source\n\nRead `ref/config.md` first, then docs: guide/index.md.\n\n```sh\ncat intro.md\n```\n\n[Home](../SUMMARY.md) and [web](https://example.org).\n",
        &["install", "install/from-source"],
    ),
    ("guide/index.md", "# Guide\n\nPages: [install](install.md), [missing](nope.md).\n", &["guide"]),
    ("ref/config.md", "# Config\n\nMentions config.md itself and x/install.md.\n", &["config"]),
];

#[test]
fn links_reference_links_html_and_anchors() {
    let g = graph(SITE);
    assert!(has(&g, 0, 1, RelationKind::LinksTo).is_some());
    assert!(
        has(&g, 0, 4, RelationKind::LinksTo).is_some(),
        "reference link"
    );
    assert!(
        has(&g, 1, 4, RelationKind::LinksTo).is_some(),
        "HTML <a href>"
    );
    let anchored = has(&g, 1, 2, RelationKind::LinksTo).expect("anchored link");
    assert_eq!(
        anchored.section.as_deref(),
        Some("guide/install.md#install/from-source")
    );
    assert_eq!(anchored.line, 3);
    assert_eq!(anchored.confidence, Confidence::Observed);
    assert!(has(&g, 2, 0, RelationKind::LinksTo).is_some(), "../ link");
    assert_eq!(g.external_links, 1);
    assert_eq!(g.unresolved_links, 1, "nope.md");
}

#[test]
fn mentions_and_fence_citations() {
    let g = graph(SITE);
    let code = has(&g, 2, 4, RelationKind::Mentions).expect("inline code path");
    assert!(code.ranks());
    let prose = has(&g, 2, 3, RelationKind::Mentions).expect("prose path");
    assert_eq!(prose.line, 5);
    let fence = has(&g, 2, 1, RelationKind::Mentions).expect("fence citation kept");
    assert!(fence.in_code_block && !fence.ranks());
    assert_eq!(fence.line, 8);
    assert!(
        has(&g, 4, 4, RelationKind::Mentions).is_none(),
        "no self relation"
    );
    assert!(
        has(&g, 4, 2, RelationKind::Mentions).is_none(),
        "x/install.md names no file"
    );
}

#[test]
fn index_pages_cover_their_folder_down_to_the_next_index_page() {
    let g = graph(SITE);
    let covered_by = |to: u32| -> Vec<u32> {
        g.relations
            .iter()
            .filter(|r| r.to == to && r.kind == RelationKind::Covers)
            .map(|r| r.from)
            .collect()
    };
    assert_eq!(covered_by(1), vec![0]);
    assert_eq!(
        covered_by(2),
        vec![3],
        "guide/index.md is nearer than SUMMARY.md"
    );
    assert_eq!(
        covered_by(3),
        vec![0],
        "an index page is covered from above"
    );
    assert_eq!(covered_by(4), vec![0]);
    assert!(covered_by(0).is_empty());
}

#[test]
fn pagerank_puts_the_hub_first_and_is_deterministic() {
    let g = graph(SITE);
    assert_eq!(g.pagerank.len(), 5);
    assert!((g.pagerank.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    let order = g.by_pagerank();
    assert!(order[..2].contains(&0), "{:?} {:?}", order, g.pagerank);
    let c = g.canonicality();
    assert_eq!(c.iter().cloned().fold(0.0f32, f32::max), 1.0);
    assert_eq!(graph(SITE), g);
    // a fence citation is no PageRank edge: removing the fence leaves PageRank alone
    let mut no_fence = SITE.to_vec();
    no_fence[2].1 = "# Install\n\n## From source\n\nRead `ref/config.md` first, then docs: guide/index.md.\n\n\n\n\n\n[Home](../SUMMARY.md) and [web](https://example.org).\n";
    assert_eq!(graph(&no_fence).pagerank, g.pagerank);
}

#[test]
fn broken_links_and_anchors_are_listed_with_their_line() {
    let g = graph(&[
        (
            "a.md",
            "# A\n\nSee [b](b.md#nope), [b2](b.md#b) and\n[gone](gone.md), [c](b.md#Merged).\n",
            &["a"],
        ),
        ("b.md", "# B\n\nText.\n", &["b", "b/merged/first"]),
    ]);
    assert!(
        g.relations
            .iter()
            .any(|r| r.section.as_deref() == Some("b.md#b/merged/first")),
        "a heading merged into its first sub-section: {:?}",
        g.relations
    );
    let got: Vec<(u32, u32, &str, Broken)> = g
        .broken
        .iter()
        .map(|b| (b.from, b.line, b.target.as_str(), b.why))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 3, "b.md#nope", Broken::NoSection),
            (0, 4, "gone.md", Broken::NoDocument)
        ]
    );
    assert_eq!(g.unresolved_links, 1);
}
