//! `docfuse search`: rank sections for a question. Goes through the retriever API, so
//! the CLI validates and answers exactly as the HTTP API and the MCP tools do.

use super::args::SearchArgs;
use super::output::{name_field, print_err, print_json, print_line, printable};
use crate::read::HitExplain;
use crate::retriever::{
    DocfuseRetriever, PathFilters, RetrieveOptions, RetrievedDocument, SearchEnvelope, SearchResult,
};

/// Answers `a` in this process: the exit code, and whether the embedding model was loaded
/// for it.
pub fn run(a: &SearchArgs) -> anyhow::Result<(i32, bool)> {
    if a.refresh {
        super::refresh::refresh_before_search(&a.index)?;
    }
    let retriever = DocfuseRetriever::open(&a.index)?;
    let (code, _) = answer(&retriever, a)?;
    Ok((code, retriever.index().loaded_embedder().is_some()))
}

/// Answers `a` from `retriever`: prints the results (text or JSON) and returns the exit
/// code and the generation that answered.
pub(super) fn answer(retriever: &DocfuseRetriever, a: &SearchArgs) -> anyhow::Result<(i32, u64)> {
    let query = a.query.join(" ");
    let options = RetrieveOptions {
        limit: a.limit,
        mode: a.mode,
        filters: PathFilters {
            path_prefix: a.path_prefix.clone(),
            globs: a.glob.clone(),
            exclude: a.exclude.clone(),
            kinds: a.kind.clone(),
        },
        floor: a.floor,
        explain: a.explain,
        group: !a.chunks,
        agent: a.agent,
    };
    let r = retriever.search_blocking(&query, &options)?;
    // A lexical-only index (built with --no-embeddings) answers lexically by choice: no note.
    let index = retriever.index();
    let on_purpose = index.lexical_by_choice();
    if let Some(why) = r.degraded.as_ref().filter(|_| !on_purpose) {
        print_err(&format!("note: answering lexically: {why}"));
    }
    let results = r
        .documents
        .iter()
        .enumerate()
        .map(|(i, d)| SearchResult::from_document(i, d, false))
        .collect();
    let envelope = SearchEnvelope::of(&query, &r, results);
    if a.json {
        print_json(&envelope)?;
    } else {
        print_text(
            &r.documents,
            r.mode != crate::retriever::Mode::Lexical,
            (envelope.note.as_deref(), envelope.searched_as.as_deref()),
        )?;
    }
    let code = if r.documents.is_empty() {
        // the files changed since the index was built: what was asked may be in them
        if r.stale {
            print_err(&format!(
                "note: files under the index's roots changed since it was built: `docfuse refresh --index {}` (or `search --refresh`) searches them too",
                a.index.display()
            ));
        }
        super::EXIT_NO_HITS
    } else {
        super::EXIT_OK
    };
    Ok((code, r.generation))
}

/// The text answer; a result that holds none of the query's content words is marked (a
/// semantic neighbour with vectors, else a match on stop words only), and the coverage
/// note ([`coverage_note`]: words no passage contains, results that match none) goes to
/// stderr, as the MCP tools say it, with the part of the query searched when it was not
/// searched whole (`searched_as`: a long query's window, a stack trace's message).
fn print_text(
    docs: &[RetrievedDocument],
    with_vectors: bool,
    (note, searched_as): (Option<&str>, Option<&str>),
) -> anyhow::Result<()> {
    if docs.is_empty() {
        print_err("no results");
    }
    if let Some(note) = note {
        print_err(&format!("note: {note}"));
    }
    if let Some(part) = searched_as {
        print_err(&format!("searched as: {part}"));
    }
    let unmatched = |d: &RetrievedDocument| d.metadata.matched_terms.is_empty();
    let unmatched_mark = if with_vectors {
        "  [no query word: semantic neighbour]"
    } else {
        "  [only common words match]"
    };
    for d in docs {
        let m = &d.metadata;
        let heading = if m.heading_path.is_empty() {
            m.title.clone()
        } else {
            m.heading_path.join(" › ")
        };
        let mut mark = m
            .stale
            .as_ref()
            .map_or(String::new(), |n| format!("  [{n}: text as indexed]"));
        if m.confidence == crate::graph::Confidence::Fuzzy {
            mark.push_str("  [fuzzy: reached through a fuzzy relation]");
        }
        if unmatched(d) {
            mark.push_str(unmatched_mark);
        }
        print_line(&format!(
            "{}:{}  {}  ({:.3}){mark}",
            printable(&shown_path(d)),
            m.match_line,
            name_field(&heading),
            d.score
        ))?;
        print_line(&format!("    {}", printable(&m.snippet)))?;
        if let Some(e) = &m.explain {
            print_explain(e)?;
        }
    }
    if docs.iter().any(|d| d.metadata.explain.is_some()) {
        print_line(EXPLAIN_LEGEND)?;
    }
    Ok(())
}

/// What the parts `--explain` prints mean (docs/ranking.md has each in full).
const EXPLAIN_LEGEND: &str = "legend: lexical = BM25F (Robertson & Zaragoza, 2009) × prior × \
aboutness + exact parts; per term, tf~ = its frequency weighted by field and normalised by \
length, summed over fields, and → its part idf × tf~ / (k1 + tf~); prior = query-shape and \
page-role multipliers (module, route, change log 0.5, template copy 0.5: a block repeated on \
three or more pages); z = the cosine in standard deviations above the query's mean cosine \
over the collection; information matched = the share of the query's IDF the lexical side \
found. See docs/ranking.md.";

/// A result's path as its id shows it: `root:path` when the index has several roots (the
/// form `docfuse read` takes), else the path.
fn shown_path(d: &RetrievedDocument) -> String {
    let m = &d.metadata;
    let rooted =
        d.id.strip_prefix(&format!("{}:", m.root))
            .is_some_and(|rest| rest.starts_with(m.path.as_str()));
    match rooted {
        true => format!("{}:{}", m.root, m.path),
        false => m.path.clone(),
    }
}

fn print_proximity(p: &crate::read::ProximityExplain) -> anyhow::Result<()> {
    let Some(anchor) = &p.anchor else {
        return print_line("    proximity 0.000 (no strong hit within two relations)");
    };
    let via: Vec<String> = p
        .via
        .iter()
        .map(|r| {
            let at = match r.line {
                0 => String::new(),
                l => format!(" at {}:{l}", printable(&r.from)),
            };
            let (from, to) = (printable(&r.from), printable(&r.to));
            format!("{from} {} {to}{at}", r.kind.name())
        })
        .collect();
    let only = if p.graph_only { ", graph only" } else { "" };
    print_line(&format!(
        "    proximity {:.3} (reach {:.3} from {}{only}): {}",
        p.proximity,
        p.reach,
        printable(anchor),
        via.join("; ")
    ))
}

fn print_explain(x: &HitExplain) -> anyhow::Result<()> {
    if let Some(f) = &x.fusion {
        let rank = |r: Option<u32>| r.map_or("-".to_string(), |r| r.to_string());
        // the entry and page-role priors also multiply the vector part, each named
        let named: Vec<String> = [
            ("module", f.module_prior),
            ("route", f.route_prior),
            ("change log", f.changelog_prior),
            ("template copy", f.template_prior),
        ]
        .iter()
        .filter(|(_, v)| (v - 1.0).abs() > f32::EPSILON)
        .map(|(name, v)| format!("{name} {v:.2}"))
        .collect();
        let prior = f.module_prior * f.route_prior * f.changelog_prior * f.template_prior;
        let times = match named.is_empty() {
            false => format!(" × prior {prior:.2} ({})", named.join(", ")),
            true => String::new(),
        };
        print_line(&format!(
            "    fused = lexical part {:.3} (score {:.3}, rank {}, × information matched {:.3}) + vector part {:.3}{times} (cosine {:.3}, z {:.2}, rank {}) + exact bonus {:.3} + canonicality bonus {:.3}",
            f.lexical_part, f.lexical_score, rank(f.lexical_rank), f.information_share, f.vector_part, f.cosine, f.cosine_z, rank(f.vector_rank), f.exact_bonus, f.canonicality_bonus
        ))?;
    }
    if let Some(p) = &x.proximity {
        print_proximity(p)?;
    }
    let e = &x.lexical;
    // the multipliers that are not 1: the query-shape (or module) prior, the audience fit
    let mut times = String::new();
    for (name, v) in [("prior", e.prior), ("audience_fit", e.audience_fit)] {
        if (v - 1.0).abs() > f32::EPSILON {
            times.push_str(&format!(" × {name} {v:.2}"));
        }
    }
    print_line(&format!(
        "    lexical {:.3} = bm25f {:.3}{times} × aboutness {:.3} + exact_id {:.3} + exact_path {:.3} + exact_symbol {:.3} + canonicality {:.3} (page {:.3})",
        e.score, e.lexical, e.aboutness, e.exact_id, e.exact_path, e.exact_symbol, e.canonicality, e.page_canonicality
    ))?;
    if e.section_weight > 0.0 || e.page_weight > 0.0 {
        let page = match e.page_weight > 0.0 {
            true => format!(
                ", then × {:.2} + whole page {:.3} × {:.2}",
                1.0 - e.page_weight,
                e.page_lexical,
                e.page_weight
            ),
            false => String::new(),
        };
        print_line(&format!(
            "      bm25f {:.3} = chunk {:.3} × {:.2} + whole section {:.3} × {:.2}{page}",
            e.lexical,
            e.chunk_lexical,
            1.0 - e.section_weight,
            e.section_lexical,
            e.section_weight
        ))?;
    }
    for t in &e.terms {
        let fields: Vec<String> = t
            .fields
            .iter()
            .map(|f| {
                format!(
                    "{} {:.3} (tf {:.1}, len {:.0})",
                    f.field, f.contribution, f.tf, f.length
                )
            })
            .collect();
        print_line(&format!(
            "      {:<20} idf {:.3} tf~ {:.3} → {:.3}: {}",
            t.term,
            t.idf,
            t.pseudo_tf,
            t.contribution,
            fields.join(", ")
        ))?;
    }
    Ok(())
}
