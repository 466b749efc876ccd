//! Queries made of symbols (`??`, `?.`, `=>`, `::`, `🚀`): the analyser finds no word
//! in them, so the lexical index cannot answer and their vector would be noise. They are
//! matched as written, by substring, in every chunk's text, and ranked by BM25 (Robertson
//! & Zaragoza, 2009, "The Probabilistic Relevance Framework: BM25 and Beyond") over those
//! occurrences: each whitespace-separated symbol is a term, its frequency the number of
//! non-overlapping occurrences in the chunk's lines of text (not in a table's delimiter
//! row, a setext underline, a thematic break or a fence line, nor as a list marker), the
//! chunk's length its text in bytes; a chunk that names the symbol (a code span of it
//! alone, `` `=>` ``, or a heading that holds it) gains one saturated occurrence's worth.
//!
//! A scan of every stored chunk, at most [`MAX_SYMBOLS`] substring searches each: about
//! as costly as reading the index's texts once (10–60 ms for a book), paid by symbol
//! queries only.

use super::hit::{Hit, HitExplain, Mode, SearchResponse};
use super::opened::OpenGeneration;
use crate::error::Result;
use crate::lexical::bm25f::{idf, length_norm, saturate};
use crate::lexical::{Explain, FieldExplain, TermExplain};
use crate::projection::StoredChunk;

/// BM25's k1 and b for symbol occurrences (the usual defaults).
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Most distinct symbols of one query searched (the rest are left out): each is one scan
/// of every chunk's text.
pub const MAX_SYMBOLS: usize = 16;

/// True when `query` holds no word the analyser finds but something other than white
/// space: a query of symbols.
pub fn is_symbol_query(query: &str) -> bool {
    let mut word = false;
    crate::analysis::for_each_term(query, |_| word = true);
    !word && !crate::analysis::is_blank(query)
}

/// The symbols of `query`: its whitespace-separated parts, each once, in order, at most
/// [`MAX_SYMBOLS`]; backticks alone (Markdown's code markup) are none.
pub fn symbols_of(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in query.split_whitespace() {
        if s.chars().all(|c| c == '`') || out.iter().any(|o| o == s) {
            continue;
        }
        out.push(s.to_string());
        if out.len() == MAX_SYMBOLS {
            break;
        }
    }
    out
}

/// The operators a question of words writes as words of their own: ASCII punctuation of
/// two characters or more (`??`, `?.`, `=>`, `::`, `&&`, `...`), at most [`MAX_SYMBOLS`].
/// One character (`?`, `-`, `*`) says too little to require.
pub fn operators_in(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in query.split_whitespace() {
        let op = t.len() >= 2 && t.bytes().all(|b| b.is_ascii_punctuation() && b != b'`');
        if op && !out.iter().any(|o| o == t) && out.len() < MAX_SYMBOLS {
            out.push(t.to_string());
        }
    }
    out
}

/// Whether `text` holds `needle` on a line of text ([`occurrences`]).
pub fn holds(text: &str, needle: &str) -> bool {
    occurrences(text, needle) > 0
}

/// A line that is Markdown structure, not text: a table's delimiter row, a setext
/// underline, a thematic break, a fence.
fn is_markup_line(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```")
        || t.starts_with("~~~")
        || (!t.is_empty() && t.chars().all(|c| " -=|:*_+".contains(c)))
}

/// A line without its list-item marker (`- `, `* `, `+ `, `1. `).
fn without_marker(line: &str) -> &str {
    let t = line.trim_start();
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = t.strip_prefix(m) {
            return rest;
        }
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    match t[digits..].strip_prefix(". ") {
        Some(rest) if digits > 0 => rest,
        _ => t,
    }
}

/// Non-overlapping occurrences of `needle` in `text`'s lines of text (not in markup
/// lines, nor as a list marker).
fn occurrences(text: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    text.lines()
        .filter(|l| !is_markup_line(l))
        .map(|l| without_marker(l).matches(needle).count())
        .sum()
}

/// Whether the chunk names `needle`: a code span of it alone (`span`, `` `=>` ``), or a
/// heading that holds it.
fn names(chunk: &StoredChunk, needle: &str, span: &str) -> bool {
    chunk.text.contains(span) || chunk.heading_path.iter().any(|h| h.contains(needle))
}

/// What the scan keeps of one chunk.
struct Seen {
    len: f32,
    tf: Vec<usize>,
    named: Vec<bool>,
}

/// The page-role priors a symbol search applies (`QueryParams::changelog_prior` for
/// the query, `QueryParams::template_prior`).
#[derive(Debug, Clone, Copy)]
pub struct RolePriors {
    pub changelog: f32,
    pub template: f32,
}

impl RolePriors {
    /// The priors `params` give a search for `query`.
    pub fn for_query(query: &str, params: &crate::config::QueryParams) -> RolePriors {
        RolePriors {
            changelog: crate::lexical::changelog_prior_for(query, params.changelog_prior),
            template: params.template_prior,
        }
    }
}

/// Ranks the chunks of `g` that hold a symbol of `query`, best first (ties by ordinal),
/// at most `limit`, none under `floor` × the best score; a change log's chunk is scored
/// × `roles.changelog` (a query of symbols asks about no change), a template copy
/// × `roles.template`. With `explain`, each
/// hit carries its parts ([`explain_hit`]). Each hit's
/// `matched_terms` are
/// the symbols it holds; its match line is set by the caller from the returned weights
/// (the symbols with their IDF).
///
/// # Errors
/// [`crate::Error::Corrupt`] when a stored chunk cannot be read.
pub fn symbol_search(
    g: &OpenGeneration,
    query: &str,
    limit: usize,
    floor: f32,
    roles: RolePriors,
    explain: bool,
) -> Result<SearchResponse> {
    let symbols = symbols_of(query);
    let lexical = g.lexical();
    let n = lexical.len();
    let spans: Vec<String> = symbols.iter().map(|s| format!("`{s}`")).collect();
    let mut seen = Vec::with_capacity(n as usize);
    for ord in 0..n {
        let c = lexical.chunk_at(ord)?;
        let tf: Vec<usize> = symbols.iter().map(|s| occurrences(&c.text, s)).collect();
        let named = symbols
            .iter()
            .zip(&spans)
            .map(|(s, span)| names(&c, s, span))
            .collect();
        seen.push(Seen {
            len: c.text.len() as f32,
            tf,
            named,
        });
    }
    let avg_len = seen.iter().map(|s| s.len).sum::<f32>() / (n.max(1) as f32);
    let holds = |s: &Seen, i: usize| s.tf[i] > 0 || s.named[i];
    let df: Vec<u64> = (0..symbols.len())
        .map(|i| seen.iter().filter(|s| holds(s, i)).count() as u64)
        .collect();
    let idfs: Vec<f32> = df.iter().map(|&d| idf(n, d)).collect();
    let role = |ord: u64| {
        let changelog = match lexical.is_changelog(ord) {
            true => roles.changelog,
            false => 1.0,
        };
        match lexical.is_template(ord) {
            true => changelog * roles.template,
            false => changelog,
        }
    };
    let mut scored: Vec<(f32, usize)> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| (0..symbols.len()).any(|i| holds(s, i)))
        .map(|(ord, s)| (score(s, &idfs, avg_len) * role(ord as u64), ord))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let top = scored.first().map_or(0.0, |s| s.0);
    scored.retain(|(s, _)| *s >= floor * top);
    scored.truncate(limit);
    let mut hits = Vec::with_capacity(scored.len());
    for (s, ord) in scored {
        let chunk = lexical.chunk_at(ord as u64)?;
        let matched_terms = (0..symbols.len())
            .filter(|&i| holds(&seen[ord], i))
            .map(|i| symbols[i].clone())
            .collect();
        let explain = explain.then(|| {
            let scan = Scan {
                symbols: &symbols,
                idfs: &idfs,
                df: &df,
                avg_len,
                n,
            };
            explain_hit(&scan, &seen[ord], s, role(ord as u64))
        });
        hits.push(Hit {
            score: s,
            ord: ord as u64,
            match_line: chunk.start_line,
            snippet: String::new(),
            chunk,
            matched_terms,
            confidence: crate::graph::Confidence::Observed,
            explain,
        });
    }
    let missing_words = (0..symbols.len())
        .filter(|&i| !seen.iter().any(|s| holds(s, i)))
        .map(|i| symbols[i].clone())
        .collect();
    Ok(SearchResponse {
        hits,
        mode: Mode::Lexical,
        degraded: None,
        weights: symbols.into_iter().zip(idfs).collect(),
        missing_words,
        neighbours_only: false,
    })
}

/// BM25 of one chunk, `Σ idf · (tf / (tf + k1 · B) + named)` over the symbols, with `B`
/// its length normalisation and `named` 1 when the chunk names the symbol ([`names`]):
/// a text about `=>` ranks above code that uses it ten times.
fn score(s: &Seen, idfs: &[f32], avg_len: f32) -> f32 {
    let norm = length_norm(B, s.len, avg_len);
    (0..idfs.len())
        .map(|i| idfs[i] * (saturate(s.tf[i] as f32 / norm, K1) + f32::from(u8::from(s.named[i]))))
        .sum()
}

/// The collection-wide statistics of one symbol scan.
struct Scan<'a> {
    symbols: &'a [String],
    idfs: &'a [f32],
    /// Chunks holding each symbol.
    df: &'a [u64],
    /// Average chunk text length in bytes.
    avg_len: f32,
    n: u64,
}

/// The named parts of one symbol hit scoring `score`: per symbol its `df`, IDF, length-
/// normalised occurrences (`pseudo_tf`) and contribution, in one field `text` whose
/// length is in bytes; `prior` the change-log prior; `exact_symbol` the bonuses for naming
/// a symbol, × `prior` (so `score = lexical × prior + exact_symbol`, as in BM25F's parts).
fn explain_hit(scan: &Scan<'_>, s: &Seen, score: f32, prior: f32) -> HitExplain {
    let norm = length_norm(B, s.len, scan.avg_len);
    let mut terms = Vec::new();
    let mut occurrences = 0.0;
    let mut named = 0.0;
    for (i, symbol) in scan.symbols.iter().enumerate() {
        if s.tf[i] == 0 && !s.named[i] {
            continue;
        }
        let tf = s.tf[i] as f32;
        let contribution = scan.idfs[i] * saturate(tf / norm, K1);
        occurrences += contribution;
        named += scan.idfs[i] * f32::from(u8::from(s.named[i]));
        terms.push(TermExplain {
            term: symbol.clone(),
            df: scan.df[i],
            idf: scan.idfs[i],
            pseudo_tf: tf / norm,
            contribution,
            fields: vec![FieldExplain {
                field: "text",
                weight: 1.0,
                tf,
                length: s.len,
                avg_length: scan.avg_len,
                weighted_tf: tf / norm,
                contribution,
                matched: vec![symbol.clone()],
            }],
        });
    }
    let lexical = Explain {
        score,
        lexical: occurrences,
        chunk_lexical: occurrences,
        section_lexical: 0.0,
        section_weight: 0.0,
        page_lexical: 0.0,
        page_weight: 0.0,
        aboutness: 1.0,
        about_share: 0.0,
        exact_id: 0.0,
        exact_path: 0.0,
        exact_symbol: named * prior,
        canonicality: 0.0,
        page_canonicality: 0.0,
        prior,
        audience_fit: 1.0,
        k1: K1,
        b: B,
        n: scan.n,
        terms,
    };
    HitExplain {
        lexical,
        fusion: None,
        proximity: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_queries_are_those_without_a_word() {
        for q in ["??", "?.", "=>", "::", "🚀", "|| &&"] {
            assert!(is_symbol_query(q), "{q}");
        }
        for q in ["", "   ", "a ?? b", "C++", "x"] {
            assert!(!is_symbol_query(q), "{q}");
        }
        assert_eq!(symbols_of(" ?? ?.  ?? ` "), ["??", "?."]);
        assert_eq!(
            operators_in("what does ?? do, and ?. — or `x`?"),
            ["??", "?."]
        );
        assert!(operators_in("is it fast?").is_empty());
        assert!(symbols_of("`").is_empty());
        assert_eq!(symbols_of(&"!! ".repeat(3)).len(), 1);
        let many: String = (0..40)
            .map(|i| format!("{}{} ", "-".repeat(i + 1), "+"))
            .collect();
        assert_eq!(symbols_of(&many).len(), MAX_SYMBOLS);
        assert_eq!(occurrences("a ?? b ??? c", "??"), 2);
        assert_eq!(occurrences("abc", ""), 0);
        // markup lines and list markers are not occurrences
        let text = "| a | b |\n|---|---|\nTitle\n-----\n- item -- x\n```js\n---\n";
        assert_eq!(occurrences(text, "-"), 2);
        assert_eq!(occurrences(text, "--"), 1);
        assert_eq!(occurrences(text, "|"), 3);
    }
}
