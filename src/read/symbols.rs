//! Queries made of symbols (`??`, `?.`, `=>`, `::`, `🚀`): the analyser finds no word
//! in them, so the lexical index cannot answer and their vector would be noise. They are
//! matched as written, by substring, in every chunk's text, and ranked by BM25 (Robertson
//! & Zaragoza, 2009, "The Probabilistic Relevance Framework: BM25 and Beyond") over those
//! occurrences: each whitespace-separated symbol is a term, its frequency the number of
//! non-overlapping occurrences in the chunk (one that is a code span of its own, where
//! the text names the symbol, counts more), the chunk's length its text in bytes.
//!
//! A scan of every stored chunk: about as costly as reading the index's texts once
//! (tens of ms for a book, a few hundred for 35,000 chunks), paid by symbol queries only.

use super::hit::{Hit, Mode, SearchResponse};
use super::opened::OpenGeneration;
use crate::error::Result;
use crate::lexical::bm25f::{idf, length_norm, saturate};
use crate::projection::StoredChunk;

/// BM25's k1 and b for symbol occurrences (the usual defaults).
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// True when `query` holds no word the analyser finds but something other than white
/// space: a query of symbols.
pub fn is_symbol_query(query: &str) -> bool {
    let mut word = false;
    crate::analysis::for_each_term(query, |_| word = true);
    !word && !crate::analysis::is_blank(query)
}

/// The symbols of `query`: its whitespace-separated parts, each once, in order.
pub fn symbols_of(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in query.split_whitespace() {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

/// How much more an occurrence that is a code span of its own (`` `=>` ``) counts: the
/// text names the symbol there (an operator table, a heading about it), where elsewhere
/// it only uses it.
const NAMED: usize = 3;

/// Non-overlapping occurrences of `needle` in `hay`, those that are a code span of their
/// own counting [`NAMED`] more.
fn occurrences(hay: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    let named = hay.matches(&format!("`{needle}`")).count();
    hay.matches(needle).count() + NAMED * named
}

/// Ranks the chunks of `g` that hold a symbol of `query`, best first (ties by ordinal),
/// at most `limit`. Each hit's `matched_terms` are the symbols it holds; its match line
/// is set by the caller from the returned weights (the symbols with their IDF).
///
/// # Errors
/// [`crate::Error::Corrupt`] when a stored chunk cannot be read.
pub fn symbol_search(g: &OpenGeneration, query: &str, limit: usize) -> Result<SearchResponse> {
    let symbols = symbols_of(query);
    let chunks = g.lexical().all_chunks()?;
    let n = chunks.len() as u64;
    let avg_len = chunks.iter().map(|c| c.text.len() as f32).sum::<f32>() / (n.max(1) as f32);
    let tfs: Vec<Vec<usize>> = chunks
        .iter()
        .map(|c| symbols.iter().map(|s| occurrences(&c.text, s)).collect())
        .collect();
    let idfs: Vec<f32> = (0..symbols.len())
        .map(|i| idf(n, tfs.iter().filter(|t| t[i] > 0).count() as u64))
        .collect();
    let mut scored: Vec<(f32, usize)> = tfs
        .iter()
        .enumerate()
        .filter(|(_, t)| t.iter().any(|&x| x > 0))
        .map(|(ord, t)| (score(t, &idfs, &chunks[ord], avg_len), ord))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.truncate(limit);
    let mut by_ord: Vec<Option<StoredChunk>> = chunks.into_iter().map(Some).collect();
    let hits = scored
        .into_iter()
        .filter_map(|(s, ord)| {
            let chunk = by_ord[ord].take()?;
            let matched_terms = symbols
                .iter()
                .zip(&tfs[ord])
                .filter(|(_, &t)| t > 0)
                .map(|(s, _)| s.clone())
                .collect();
            Some(Hit {
                score: s,
                ord: ord as u64,
                match_line: chunk.start_line,
                snippet: String::new(),
                chunk,
                matched_terms,
                confidence: crate::graph::Confidence::Observed,
                explain: None,
            })
        })
        .collect();
    let missing_words = symbols
        .iter()
        .enumerate()
        .filter(|(i, _)| tfs.iter().all(|t| t[*i] == 0))
        .map(|(_, s)| s.clone())
        .collect();
    Ok(SearchResponse {
        hits,
        mode: Mode::Lexical,
        degraded: None,
        weights: symbols.into_iter().zip(idfs).collect(),
        missing_words,
    })
}

/// BM25 of one chunk: `Σ idf · tf / (tf + k1 · B)` over the symbols, with `B` its
/// length normalisation.
fn score(tf: &[usize], idfs: &[f32], chunk: &StoredChunk, avg_len: f32) -> f32 {
    let norm = length_norm(B, chunk.text.len() as f32, avg_len);
    tf.iter()
        .zip(idfs)
        .map(|(&t, &i)| i * saturate(t as f32 / norm, K1))
        .sum()
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
        assert_eq!(symbols_of(" ?? ?.  ?? "), ["??", "?."]);
        assert_eq!(occurrences("a ?? b ??? c", "??"), 2);
        assert_eq!(occurrences("use `??` as in a ?? b", "??"), 2 + NAMED);
        assert_eq!(occurrences("abc", ""), 0);
    }
}
