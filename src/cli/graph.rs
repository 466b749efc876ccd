//! `docfuse graph`: the documentation graph — pages by PageRank, or one page's
//! relations with their evidence.

use super::args::GraphArgs;
use super::output::{print_json, print_line};
use crate::read::{DocIndex, RelationView};
use crate::views::{graph_summary, page_relations, GraphPage};

pub fn run(a: GraphArgs) -> anyhow::Result<i32> {
    let index = DocIndex::open(&a.index)?;
    if let Some(path) = &a.path {
        let p = page_relations(&index, path)?;
        if a.json {
            print_json(&p)?;
            return Ok(super::EXIT_OK);
        }
        print_line(&page_line(&p.page))?;
        for (arrow, list, outgoing) in [("→", &p.outgoing, true), ("←", &p.incoming, false)] {
            for r in list.iter().take(LIST_CAP) {
                print_line(&format!("  {arrow} {}", relation_line(r, outgoing)))?;
            }
            if list.len() > LIST_CAP {
                print_line(&format!(
                    "  {arrow} … and {} more (all of them with --json)",
                    list.len() - LIST_CAP
                ))?;
            }
        }
        for b in p.broken.iter().take(LIST_CAP) {
            print_line(&format!(
                "  ✗ {} at line {}: {}",
                super::output::printable(&b.target),
                b.line,
                why(b.why)
            ))?;
        }
        if p.broken.len() > LIST_CAP {
            print_line(&format!(
                "  ✗ … and {} more (all of them with --json)",
                p.broken.len() - LIST_CAP
            ))?;
        }
        if p.outgoing.is_empty() && p.incoming.is_empty() && p.broken.is_empty() {
            print_line("  no relations")?;
        }
        return Ok(super::EXIT_OK);
    }
    let s = graph_summary(&index, a.top)?;
    if a.broken {
        let code = match a.exit_code && !s.broken.is_empty() {
            true => super::EXIT_NO_HITS,
            false => super::EXIT_OK,
        };
        if a.json {
            print_json(&s.broken)?;
            return Ok(code);
        }
        for b in &s.broken {
            print_line(&format!(
                "{}:{}  ✗ {}  {}",
                super::output::printable(&b.from),
                b.line,
                super::output::printable(&b.target),
                why(b.why)
            ))?;
        }
        eprintln!("{} broken link(s)", s.broken.len());
        return Ok(code);
    }
    if a.json {
        print_json(&s)?;
        return Ok(super::EXIT_OK);
    }
    print_line(&format!(
        "{} documents, {} relations ({} links_to, {} covers, {} mentions, {} imports; {} in code blocks, never ranked); {} external links, {} broken ({} name no document; `--broken` lists them)",
        s.documents, s.relations, s.links_to, s.covers, s.mentions, s.imports, s.in_code_blocks, s.external_links, s.broken.len(), s.unresolved_links
    ))?;
    print_line(&format!(
        "pages by PageRank (damping {}, graph version {}):",
        s.damping, s.graph_metrics_version
    ))?;
    for p in &s.pages {
        print_line(&format!("  {}", page_line(p)))?;
    }
    Ok(super::EXIT_OK)
}

/// Why a link is broken, in words.
fn why(w: crate::graph::Broken) -> &'static str {
    match w {
        crate::graph::Broken::NoDocument => "names no indexed document",
        crate::graph::Broken::NoSection => "names no section of its page",
    }
}

fn page_line(p: &GraphPage) -> String {
    format!(
        "{:>3}. {}  PageRank {:.4}, canonicality {:.2}, {} in (links, and pages it covers), {} out",
        p.rank,
        super::output::printable(&p.path),
        p.pagerank,
        p.canonicality,
        p.inbound,
        p.outbound
    )
}

/// Relations listed per direction in text (JSON lists all).
const LIST_CAP: usize = 50;

/// One relation seen from the page: the other end's path, the section an anchor names,
/// the line it is written on (in the source page).
fn relation_line(r: &RelationView, outgoing: bool) -> String {
    let kind = r.kind.name();
    let mut line = if outgoing {
        format!("{kind} {}", super::output::printable(&r.to))
    } else {
        format!("{} {kind} it", super::output::printable(&r.from))
    };
    if let Some(section) = &r.section {
        line.push_str(&format!(" (section {})", super::output::printable(section)));
    }
    if r.line > 0 {
        line.push_str(&format!(
            " at {}:{}",
            super::output::printable(&r.from),
            r.line
        ));
    }
    if r.confidence == crate::graph::Confidence::Fuzzy {
        line.push_str(" [fuzzy]");
    }
    if r.in_code_block {
        line.push_str(" [in a code block: kept for handoffs, never ranked]");
    }
    line
}
