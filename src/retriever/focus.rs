//! A query longer than [`MAX_QUERY_BYTES`] (an assistant pasting an error message or a
//! log of kilobytes) is searched on its most informative part: the run of at most
//! [`WINDOW_WORDS`] consecutive whitespace-separated words, and at most
//! [`MAX_QUERY_BYTES`] bytes, whose distinct analysed terms weigh the most. A term weighs
//! its IDF over the index times `ln(1 + L / l)`, with `L` the query's lines and `l` the
//! lines that hold it (the IDF idea applied within the query: the words of sixty stack
//! frames repeat on every line and say less than the error line between them). Words the
//! index never uses add nothing (a hash or an address in a log matches no passage); the
//! earliest window wins a tie. The embedder would read only its first 256
//! word pieces, and the lexical side would score hundreds of terms: the window keeps the
//! words that can find a passage.

use crate::read::DocIndex;
use std::collections::HashMap;

/// Longest query searched as it is, in bytes (a longer one is searched on a part of it).
pub const MAX_QUERY_BYTES: usize = 4096;

/// Most words in the searched part of a long query.
pub const WINDOW_WORDS: usize = 48;

/// What a long query was searched as.
#[derive(Debug, Clone, PartialEq)]
pub struct Focused {
    /// The part searched.
    pub text: String,
    /// The whole query's length, in bytes.
    pub query_bytes: usize,
}

/// The most informative part of `query` when it is longer than [`MAX_QUERY_BYTES`], else
/// `None` (the query is searched whole).
pub fn focus(index: &DocIndex, query: &str) -> Option<Focused> {
    if query.len() <= MAX_QUERY_BYTES {
        return None;
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    let mut idf: HashMap<String, f32> = HashMap::new();
    let terms: Vec<Vec<String>> = words
        .iter()
        .map(|w| {
            let mut t = Vec::new();
            crate::analysis::for_each_term(w, |term| t.push(term.to_string()));
            for term in &t {
                if !idf.contains_key(term) {
                    let v = index.lexical().idf_of(term).unwrap_or(0.0);
                    idf.insert(term.clone(), v);
                }
            }
            t
        })
        .collect();
    // how many of the query's lines hold each term
    let lines: Vec<&str> = query.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut in_lines: HashMap<String, usize> = HashMap::new();
    for line in &lines {
        let mut seen: Vec<String> = Vec::new();
        crate::analysis::for_each_term(line, |t| {
            if !seen.iter().any(|s| s == t) {
                seen.push(t.to_string());
            }
        });
        for t in seen {
            *in_lines.entry(t).or_default() += 1;
        }
    }
    let n_lines = lines.len().max(1) as f32;
    for (term, w) in idf.iter_mut() {
        let l = in_lines.get(term).copied().unwrap_or(1).max(1) as f32;
        *w *= (1.0 + n_lines / l).ln();
    }
    let (start, end) = best_window(&words, &terms, &idf);
    let text = match end > start {
        true => words[start..end].join(" "),
        // one word longer than the limit: its first bytes
        false => head(query.trim_start(), MAX_QUERY_BYTES).to_string(),
    };
    Some(Focused {
        text,
        query_bytes: query.len(),
    })
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn head(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The window `[start, end)` of at most [`WINDOW_WORDS`] words and [`MAX_QUERY_BYTES`]
/// bytes (joined by one space) with the largest sum of its distinct terms' IDF; the
/// earliest on a tie.
fn best_window(
    words: &[&str],
    terms: &[Vec<String>],
    idf: &HashMap<String, f32>,
) -> (usize, usize) {
    let mut best = (0.0f32, 0usize, 0usize);
    for start in 0..words.len() {
        let mut seen: Vec<&str> = Vec::new();
        let mut score = 0.0f32;
        let mut bytes = 0usize;
        let mut end = start;
        while end < words.len() && end - start < WINDOW_WORDS {
            let add = words[end].len() + usize::from(end > start);
            if bytes + add > MAX_QUERY_BYTES {
                break;
            }
            bytes += add;
            for t in &terms[end] {
                if !seen.contains(&t.as_str()) {
                    seen.push(t);
                    score += idf.get(t).copied().unwrap_or(0.0);
                }
            }
            end += 1;
        }
        if end > start && (score > best.0 || best.2 == 0) {
            best = (score, start, end);
        }
    }
    (best.1, best.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_with_the_rarest_known_words_wins_and_ties_go_to_the_earliest() {
        let text = "at at at at panic borrow checker at at at";
        let words: Vec<&str> = text.split_whitespace().collect();
        let terms: Vec<Vec<String>> = words.iter().map(|w| vec![w.to_string()]).collect();
        let idf: HashMap<String, f32> = [
            ("at", 0.1),
            ("panic", 3.0),
            ("borrow", 2.0),
            ("checker", 2.5),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        // every window holds the three rare words: the earliest (words 0..10) wins
        assert_eq!(best_window(&words, &terms, &idf), (0, 10));
        // a window of 48 words at most: a long run of common words is left out
        let mut long: Vec<&str> = vec!["at"; 100];
        long.extend(["panic", "borrow"]);
        let terms: Vec<Vec<String>> = long.iter().map(|w| vec![w.to_string()]).collect();
        let (s, e) = best_window(&long, &terms, &idf);
        assert_eq!(e - s, WINDOW_WORDS);
        assert_eq!(e, long.len());
        assert_eq!(head("héllo", 2), "h");
        assert_eq!(head("héllo", 3), "hé");
    }
}
