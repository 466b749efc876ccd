use super::*;
use crate::chunk::{doc_links, SourceDoc, SourceKind};

/// Builds the graph of `(path, text)` documents of one root; sections are the
/// `path#slug` ids of the given headings.
fn graph(files: &[(&str, &str, &[&str])]) -> Graph {
    graph_edited(files, |_| {})
}

/// The links of Markdown documents given as `(path, text)`.
fn links_of<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<DocLinks> {
    files
        .map(|(path, text)| {
            DocLinks::of(doc_links(&SourceDoc {
                rel_path: path.to_string(),
                text: text.to_string(),
                kind: SourceKind::Markdown,
                title_hint: None,
            }))
        })
        .collect()
}

/// [`graph`], with the documents' links edited by `edit` first (names, routes).
fn graph_edited(files: &[(&str, &str, &[&str])], edit: impl FnOnce(&mut [DocLinks])) -> Graph {
    let mut links = links_of(files.iter().map(|(path, text, _)| (*path, *text)));
    edit(&mut links);
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

/// The documents document `from` links to, in relation order.
fn links_from(g: &Graph, from: u32) -> Vec<u32> {
    g.relations
        .iter()
        .filter(|r| r.from == from && r.kind == RelationKind::LinksTo)
        .map(|r| r.to)
        .collect()
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

/// A chain `a — b — c — d` with a hub `h` linking all four, and a link from `a` to `d`
/// written inside a code block.
fn chain() -> Graph {
    graph(&[
        (
            "a.md",
            "# A\n\nSee [b](b.md).\n\n```\n[d](d.md)\n```\n",
            &["a"],
        ),
        ("b.md", "# B\n\nSee [c](c.md).\n", &["b"]),
        ("c.md", "# C\n\nSee [d](d.md).\n", &["c"]),
        ("d.md", "# D\n\nNothing.\n", &["d"]),
        (
            "h.md",
            "# Hub\n\n[a](a.md) [b](b.md) [c](c.md) [d](d.md)\n",
            &["hub"],
        ),
    ])
}

#[test]
fn proximity_follows_at_most_two_relations_weighted_by_degree() {
    use proximity::{Anchor, Neighbours};
    let g = chain();
    let n = Neighbours::of(&g);
    let reach = n.reach(&[Anchor { doc: 0, share: 1.0 }]);
    // degrees: a 2 (b, h), b 3 (a, c, h), c 3, d 2 (c, h), h 4; the code-block link
    // from a to d is no edge
    let w = |du: f32, dv: f32| 1.0 / (du * dv).sqrt();
    let b = &reach[&1];
    assert!((b.proximity - w(2.0, 3.0)).abs() < 1e-6, "{b:?}");
    assert_eq!(b.path.len(), 1);
    // c: a→b→c (w(2,3)·w(3,3)) beats a→h→c (w(2,4)·w(4,3))
    let c = &reach[&2];
    assert!(
        (c.proximity - w(2.0, 3.0) * w(3.0, 3.0)).abs() < 1e-6,
        "{c:?}"
    );
    let via: Vec<u32> = c.path.iter().map(|&r| g.relations[r as usize].to).collect();
    assert_eq!(via, vec![1, 2], "through b");
    // d: only through the hub in two hops (c→d would be a third)
    let d = &reach[&3];
    assert!(
        (d.proximity - w(2.0, 4.0) * w(4.0, 2.0)).abs() < 1e-6,
        "{d:?}"
    );
    assert_eq!(d.anchor, 0);
    // the anchor itself is not reached from itself
    assert!(!reach.contains_key(&0));
}

#[test]
fn proximity_scales_by_the_anchor_share_and_keeps_the_best_anchor() {
    use proximity::{Anchor, Neighbours};
    let g = chain();
    let n = Neighbours::of(&g);
    let half = n.reach(&[Anchor { doc: 0, share: 0.5 }]);
    let full = n.reach(&[Anchor { doc: 0, share: 1.0 }]);
    assert!((half[&1].proximity * 2.0 - full[&1].proximity).abs() < 1e-6);
    // d is next to c: with c as a weaker second anchor, d's best path starts at c
    let both = n.reach(&[Anchor { doc: 0, share: 1.0 }, Anchor { doc: 2, share: 0.6 }]);
    assert_eq!(both[&3].anchor, 2);
    assert_eq!(both[&3].path.len(), 1);
    // an anchor reached by another anchor is reached
    assert_eq!(both[&2].anchor, 0, "c itself is reached from a, through b");
    assert!(both.contains_key(&0), "a is next to b, two hops from c");
}

#[test]
fn proximity_confidence_is_the_weakest_relation_of_the_path() {
    use proximity::{Anchor, Neighbours};
    // a links to b; b names `x/deep/leaf.md` by its end only (`deep/leaf.md`): a fuzzy
    // mention
    let g = graph(&[
        ("a.md", "# A\n\n[b](b.md)\n", &["a"]),
        ("b.md", "# B\n\nSee `deep/leaf.md`.\n", &["b"]),
        ("x/deep/leaf.md", "# Leaf\n\nText.\n", &["leaf"]),
    ]);
    let fuzzy = has(&g, 1, 2, RelationKind::Mentions).expect("fuzzy mention");
    assert_eq!(fuzzy.confidence, Confidence::Fuzzy);
    let n = Neighbours::of(&g);
    let reach = n.reach(&[Anchor { doc: 0, share: 1.0 }]);
    assert_eq!(reach[&1].confidence, Confidence::Observed);
    assert_eq!(reach[&2].confidence, Confidence::Fuzzy);
    assert_eq!(reach[&2].path.len(), 2);
}

#[test]
fn a_title_or_alias_written_as_a_phrase_is_a_fuzzy_mention_when_it_names_one_page() {
    let g = graph_edited(
        &[
            (
                "guide.md",
                "# Guide\n\nSee *Specifying Dependencies*, \"Dep Syntax\" and *The Overview*; *The Guide* is us.\n",
                &[],
            ),
            ("deps.md", "# Specifying Dependencies\n\nText.\n", &[]),
            ("a/overview.md", "# Overview\n\nOne.\n", &[]),
            ("b/overview.md", "# Overview\n\nTwo.\n", &[]),
        ],
        |l| {
            l[0].names = vec!["The Guide".into()];
            l[1].names = vec!["Specifying Dependencies".into(), "dep syntax".into()];
            l[2].names = vec!["The Overview".into()];
            l[3].names = vec!["The overview".into()];
        },
    );
    let mentions: Vec<(u32, u32, Confidence, u32)> = g
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Mentions)
        .map(|r| (r.from, r.to, r.confidence, r.line))
        .collect();
    // the title and the alias (compared without case) name deps.md, twice over; the
    // shared "The Overview" names no one page; a page's own title is no relation
    assert_eq!(
        mentions,
        vec![(0, 1, Confidence::Fuzzy, 3)],
        "{:?}",
        g.relations
    );
    // mentions never feed PageRank
    assert!((g.pagerank[1] - g.pagerank[2]).abs() < 1e-9);
}

#[test]
fn mkdocs_link_shapes_resolve_and_assets_footnotes_are_not_broken() {
    let g = graph(&[
        (
            "a.md",
            "# A\n\n[c](log.md#caret-mark-tilde) [s](log.md/#setup) [f](log.md#fn:1) [i](img/pic.png) [self](#nope)\n\n`index.md` here.\n",
            &["a"],
        ),
        ("log.md", "# Log\n\nText.\n", &["log/caret-mark--tilde", "log/setup"]),
        ("index.md", "# Home\n", &["home"]),
    ]);
    let sections: Vec<Option<&str>> = g
        .relations
        .iter()
        .filter(|r| r.from == 0 && r.kind == RelationKind::LinksTo)
        .map(|r| r.section.as_deref())
        .collect();
    // Python-Markdown's slug finds GitHub's; `page.md/#x` is the page; a footnote
    // anchor names no section and is not broken
    assert_eq!(
        sections,
        vec![
            None,
            Some("log.md#log/caret-mark--tilde"),
            Some("log.md#log/setup")
        ]
    );
    let broken: Vec<(&str, Broken)> = g
        .broken
        .iter()
        .map(|b| (b.target.as_str(), b.why))
        .collect();
    assert_eq!(
        broken,
        vec![("#nope", Broken::NoSection)],
        "the image is an asset"
    );
    // a bare file name is a guess: fuzzy
    let m = has(&g, 0, 2, RelationKind::Mentions).expect("mentions index.md");
    assert_eq!(m.confidence, Confidence::Fuzzy);
}

#[test]
fn site_routes_resolve_and_dotted_page_links_are_not_assets() {
    let g = graph(&[
        (
            "start/index.md",
            "# Start\n\n[p](/start/prerequisites/) [s](@site/guide/v1.2) [d](/docs/guide/install) [x](/nope/pic.png) [y](missing.md)\n\n[n](/docs/guide/usage) [h](../guide/install.md#opt-jobs)\n",
            &["start"],
        ),
        ("start/prerequisites.mdx", "# Pre\n", &["pre"]),
        ("guide/v1.2.md", "# V\n", &["v"]),
        ("guide/install.md", "# I\n\n<dl><dt id=\"opt-jobs\">--jobs</dt></dl>\n", &["i"]),
        ("guide/02-usage.md", "# U\n", &["u"]),
    ]);
    let to = links_from(&g, 0);
    // a route ending in `/` names a page; `@site/` is the root; `/docs/...` is served
    // from the docs folder indexed as the root; a dotted name that is a page resolves; a
    // numbered page is served without its number; an HTML id is a valid anchor
    assert_eq!(to, vec![1, 2, 3, 3, 4]);
    let broken: Vec<&str> = g.broken.iter().map(|b| b.target.as_str()).collect();
    assert_eq!(broken, vec!["missing.md"], "an asset is not broken");
}

#[test]
fn docusaurus_slug_and_id_routes_resolve() {
    let g = graph_edited(
        &[
            (
                "intro.md",
                "# Intro\n\n[a](/docs/getting-started) [b](/docs/guide/config-ref#x) [c](/docs/nowhere)\n",
                &[],
            ),
            ("install.mdx", "# Install\n", &[]),
            ("guide/02-config.md", "# Config\n\n## X\n", &["config/x"]),
        ],
        |l| {
            l[1].routes = vec!["getting-started".into()];
            l[2].routes = vec!["guide/config-ref".into()];
        },
    );
    let to: Vec<(u32, Option<&str>)> = g
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::LinksTo)
        .map(|r| (r.to, r.section.as_deref()))
        .collect();
    assert_eq!(
        to,
        vec![(1, None), (2, Some("guide/02-config.md#config/x"))]
    );
    let broken: Vec<&str> = g.broken.iter().map(|b| b.target.as_str()).collect();
    assert_eq!(broken, vec!["/docs/nowhere"]);
}

#[test]
fn jekyll_permalinks_and_collection_folders_resolve() {
    let g = graph(&[
        (
            "news.md",
            "# News\n\n[h](/docs/history/#v1-0-0) [t](/tutorials/navigation/) [x](/docs/history/#v9)\n\n[r]({{ site.repository\n}}/issues/9) [p]({% link _tutorials/navigation.md %}) [bugs][2]\n\n[2]: {{ site.repository }}/issues\n\n[b]({{ site.baseurl }}/docs/history/#v1-0-0) [c]({{ '/tutorials/navigation/' | relative_url }}) [d]({{ site.baseurl }}/docs/history/#v8) [first][F]\n\n[F]: {% link _tutorials/navigation.md %}\n[S]: {% link _docs/history.md %}\n",
            &["news"],
        ),
        (
            "_docs/history.md",
            "---\npermalink: \"/docs/history/\"\n---\n## 1.0.0 / 2013-05-06\n{: #v1-0-0}\n\nText.\n",
            &["v1-0-0"],
        ),
        ("_tutorials/navigation.md", "# Navigation\n\nText.\n", &["navigation"]),
        ("_docs/install/other.md", "# Other\n\nSee [ubuntu](../ubuntu/).\n", &["other"]),
        ("_docs/install/ubuntu.md", "# Ubuntu\n", &["ubuntu"]),
        ("_docs/install/index.md", "# Install\n\n[u](../ubuntu/)\n", &["install"]),
    ]);
    let to = links_from(&g, 0);
    assert_eq!(
        to,
        vec![1, 1, 1, 1, 1, 2, 2, 2, 2],
        "a permalink, a collection, a link tag, the site's own URLs, definitions"
    );
    let pretty = has(&g, 3, 4, RelationKind::LinksTo);
    assert!(
        pretty.is_some(),
        "`../ubuntu/` is relative to the page's own URL"
    );
    let from_index: Vec<&str> = g
        .broken
        .iter()
        .filter(|b| b.from == 5)
        .map(|b| b.target.as_str())
        .collect();
    assert_eq!(
        from_index,
        vec!["../ubuntu/"],
        "an index page's URL is its folder: `../ubuntu/` is outside it"
    );
    let broken: Vec<&str> = g
        .broken
        .iter()
        .filter(|b| b.from == 0)
        .map(|b| b.target.as_str())
        .collect();
    assert_eq!(
        broken,
        vec!["/docs/history/#v9", "/docs/history/#v8"],
        "only the anchor no section has"
    );
}

#[test]
fn inline_code_naming_an_exported_symbol_mentions_its_module() {
    let g = graph_edited(
        &[
            (
                "guide.md",
                "# Guide\n\nCall `parseConfig()` first.\n\nThen `Retry::delay`, `run`, `cargo build`.\n",
                &["guide"],
            ),
            ("src/config.ts", "", &["_module"]),
            ("src/retry.ts", "", &["_module"]),
            ("a/run.ts", "", &["_module"]),
            ("b/run.ts", "", &["_module"]),
            ("c/run.ts", "", &["_module"]),
            ("d/run.ts", "", &["_module"]),
        ],
        |links| {
            links[1].symbols = vec!["parseConfig".into()];
            links[2].symbols = vec!["Retry".into(), "delay".into()];
            for l in &mut links[3..] {
                l.symbols = vec!["run".into()];
            }
        },
    );
    let mentions: Vec<(u32, u32, u32, Confidence)> = g
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Mentions)
        .map(|r| (r.from, r.to, r.line, r.confidence))
        .collect();
    // `run` is exported by four files: it names none of them; `cargo build` is a command
    assert_eq!(
        mentions,
        [
            (0, 1, 3, Confidence::Observed),
            (0, 2, 5, Confidence::Observed)
        ]
    );
    // mentions never feed PageRank
    assert!(g.pagerank.iter().all(|p| (p - g.pagerank[0]).abs() < 1e-9));
}

#[test]
fn a_link_that_leaves_its_root_finds_the_document_of_another_root() {
    // roots: /r/docs (folder), /r/mkdocs.yml (a file: its folder /r), /r/README.md
    let files: [(usize, &str, &str); 4] = [
        (0, "index.md", "# Home\n\nWelcome.\n"),
        (0, "guide.md", "# Guide\n\nSee [home](index.md).\n"),
        (
            1,
            "README.md",
            "# Readme\n\n[Guide](docs/guide.md), [gone](docs/none.md), [out](../../x.md).\n",
        ),
        (2, "nav.md", "# Nav\n\n[Up](../docs/index.md)\n"),
    ];
    let links = links_of(files.iter().map(|(_, path, text)| (*path, *text)));
    let docs: Vec<GraphDoc<'_>> = files
        .iter()
        .zip(&links)
        .map(|((root, path, _), links)| GraphDoc {
            root: *root,
            path,
            sections: Vec::new(),
            links,
        })
        .collect();
    let dirs = [
        "/r/docs".to_string(),
        "/r".to_string(),
        "/r/site".to_string(),
    ];
    let g = Graph::build_in(&docs, &dirs);
    assert_eq!(links_from(&g, 2), [1], "README → docs/guide.md");
    assert_eq!(links_from(&g, 3), [0], "site/nav.md → ../docs/index.md");
    // a target no root holds, and one above `/`, stay broken
    let broken: Vec<&str> = g.broken.iter().map(|b| b.target.as_str()).collect();
    assert_eq!(broken, ["docs/none.md", "../../x.md"], "{broken:?}");
    // without the roots' folders, links stay within their root
    let alone = Graph::build(&docs);
    assert!(links_from(&alone, 2).is_empty());
}
