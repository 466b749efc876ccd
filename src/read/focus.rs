//! A query that holds a stack trace (at least [`MIN_FRAMES`] frame lines, told apart by
//! [`super::frames`]) is searched on its lines that are neither frames nor a trace's
//! headers, when one of their words says what it is about (a word the index uses, not a
//! stop word): the error message, not the library internals its frames name, which the
//! documentation's reference pages also name (and not only the first 64 terms, all of
//! them the frames'). A trace whose message says nothing the index knows is searched
//! whole.
//!
//! A query longer than [`MAX_QUERY_BYTES`] (an assistant pasting an error message or a
//! log of kilobytes) is searched on its most informative part (of its message lines, for
//! a trace): the run of at most [`WINDOW_WORDS`] consecutive whitespace-separated words,
//! and at most [`MAX_QUERY_BYTES`] bytes, whose distinct analysed terms weigh the most. A
//! term weighs its IDF over the index times `ln(1 + L / l)`, with `L` the query's lines
//! and `l` the lines that hold it (the IDF idea applied within the query: the words of
//! sixty stack frames repeat on every line and say less than the error line between
//! them), and a quarter of that ([`FRAME_WEIGHT`]) when only frames hold it. Words the
//! index never uses add nothing (a hash or an address in a log matches no passage); the
//! earliest window wins a tie. The embedder would read only its first 256 word pieces,
//! and the lexical side would score hundreds of terms: the window keeps the words that
//! can find a passage.

use super::frames::Line;
use super::index::DocIndex;
use std::collections::{HashMap, HashSet};

/// Longest query searched as it is, in bytes (a longer one is searched on a part of it).
pub const MAX_QUERY_BYTES: usize = 4096;

/// Most words in the searched part of a long query.
pub const WINDOW_WORDS: usize = 48;

/// The weight of a term that only stack frames of a long query hold, relative to one
/// a message line holds: a frame names where the program was (a file, a function of
/// the library's internals), the message what went wrong.
const FRAME_WEIGHT: f32 = 0.25;

/// What a query was searched as: a long query's window, a stack trace's or compiler
/// diagnostic's message lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Focused {
    /// The part searched.
    pub text: String,
    /// The whole query's length, in bytes.
    pub query_bytes: usize,
    /// The query holds a stack trace or a compiler's source excerpt: only its message
    /// lines were searched.
    pub trace: bool,
}

/// Fewest frame lines that make a query a stack trace (searched on its other lines).
const MIN_FRAMES: usize = 2;

/// The part of `query` to search: its lines that are not stack frames when it holds a
/// stack trace, the most informative run of words when it is longer than
/// [`MAX_QUERY_BYTES`] (of those lines, for a trace); `None` when it is searched whole.
pub fn focus(index: &DocIndex, query: &str) -> Option<Focused> {
    let long = query.len() > MAX_QUERY_BYTES;
    // a question of one or two lines is never a stack trace
    if !long && query.lines().nth(MIN_FRAMES).is_none() {
        return None;
    }
    let lines: Vec<&str> = query.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut kinds = super::frames::classify(&lines);
    if kinds.iter().filter(|k| **k == Line::Frame).count() < MIN_FRAMES {
        if !long {
            return None;
        }
        // one frame-like line does not make a trace
        kinds.iter_mut().for_each(|k| *k = Line::Message);
    }
    // every word, and whether its line is a frame or a trace's header
    let (words, in_frame): (Vec<&str>, Vec<bool>) = lines
        .iter()
        .zip(&kinds)
        .flat_map(|(l, k)| l.split_whitespace().map(move |w| (w, *k != Line::Message)))
        .unzip();
    let (terms, mut weight) = terms_and_idf(index, &words);
    weigh_within_query(&lines, &kinds, &mut weight);
    // a trace whose message says what it is about (a word the index uses, not a
    // stop word): only its message lines
    let says = |ts: &Vec<String>| {
        ts.iter()
            .any(|t| !crate::analysis::is_stop_word(t) && weight.get(t).is_some_and(|w| *w > 0.0))
    };
    let trace =
        in_frame.iter().any(|f| *f) && terms.iter().zip(&in_frame).any(|(ts, f)| !f && says(ts));
    let kept: Vec<usize> = (0..words.len())
        .filter(|&i| !trace || !in_frame[i])
        .collect();
    let words: Vec<&str> = kept.iter().map(|&i| words[i]).collect();
    let terms: Vec<Vec<String>> = kept.iter().map(|&i| terms[i].clone()).collect();
    let (start, end) = match long {
        true => best_window(&words, &terms, &weight),
        false => (0, words.len()),
    };
    let text = match end > start {
        true => words[start..end].join(" "),
        // one word longer than the limit: its first bytes
        false => head(query.trim_start(), MAX_QUERY_BYTES).to_string(),
    };
    // a short trace whose message says nothing the index knows: searched whole
    (long || trace).then_some(Focused {
        text,
        query_bytes: query.len(),
        trace,
    })
}

/// Each word's analysed terms, and each distinct term's IDF over the index (0 for a term
/// no chunk holds).
fn terms_and_idf(index: &DocIndex, words: &[&str]) -> (Vec<Vec<String>>, HashMap<String, f32>) {
    let mut idf: HashMap<String, f32> = HashMap::new();
    let terms = words
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
    (terms, idf)
}

/// Multiplies each term's weight by `ln(1 + L / l)` (`L` lines, `l` of them holding
/// it), and by [`FRAME_WEIGHT`] when only frames and headers hold it.
fn weigh_within_query(lines: &[&str], kinds: &[Line], weight: &mut HashMap<String, f32>) {
    let mut in_lines: HashMap<String, usize> = HashMap::new();
    let mut in_message: HashSet<String> = HashSet::new();
    for (line, kind) in lines.iter().zip(kinds) {
        let mut seen: HashSet<String> = HashSet::new();
        crate::analysis::for_each_term(line, |t| {
            if !seen.contains(t) {
                seen.insert(t.to_string());
            }
        });
        for t in seen {
            if *kind == Line::Message {
                in_message.insert(t.clone());
            }
            *in_lines.entry(t).or_default() += 1;
        }
    }
    let n_lines = lines.len().max(1) as f32;
    let any_frame = kinds.iter().any(|k| *k != Line::Message);
    for (term, w) in weight.iter_mut() {
        let l = in_lines.get(term).copied().unwrap_or(1).max(1) as f32;
        *w *= (1.0 + n_lines / l).ln();
        if any_frame && !in_message.contains(term) {
            *w *= FRAME_WEIGHT;
        }
    }
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
        let mut seen: HashSet<&str> = HashSet::new();
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
                if seen.insert(t.as_str()) {
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
