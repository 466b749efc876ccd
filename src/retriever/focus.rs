//! A query that holds a stack trace (at least [`MIN_FRAMES`] frame lines) is searched
//! on its lines that are not frames, when one of their words is one the index uses: the
//! error message, not the 64 first terms of its frames. A query longer than
//! [`MAX_QUERY_BYTES`] (an assistant pasting an error message or a
//! log of kilobytes) is searched on its most informative part: the run of at most
//! [`WINDOW_WORDS`] consecutive whitespace-separated words, and at most
//! [`MAX_QUERY_BYTES`] bytes, whose distinct analysed terms weigh the most. A term weighs
//! its IDF over the index times `ln(1 + L / l)`, with `L` the query's lines and `l` the
//! lines that hold it (the IDF idea applied within the query: the words of sixty stack
//! frames repeat on every line and say less than the error line between them). Words the
//! index never uses add nothing (a hash or an address in a log matches no passage); the
//! earliest window wins a tie. A term that only stack frames hold weighs a quarter
//! ([`FRAME_WEIGHT`]), and when the window holds lines that are not frames (the error
//! message) and one of their words is one the index uses, only those lines are
//! searched: frames name the library's internals, which its documentation's reference
//! pages also name, while the reader asks about the error. The embedder would read only its first 256
//! word pieces, and the lexical side would score hundreds of terms: the window keeps the
//! words that can find a passage.

use crate::read::DocIndex;
use std::collections::HashMap;

/// Longest query searched as it is, in bytes (a longer one is searched on a part of it).
pub const MAX_QUERY_BYTES: usize = 4096;

/// Most words in the searched part of a long query.
pub const WINDOW_WORDS: usize = 48;

/// The weight of a term that only stack frames of a long query hold, relative to one
/// a message line holds: a frame names where the program was (a file, a function of
/// the library's internals), the message what went wrong.
const FRAME_WEIGHT: f32 = 0.25;

/// What a long query was searched as.
#[derive(Debug, Clone, PartialEq)]
pub struct Focused {
    /// The part searched.
    pub text: String,
    /// The whole query's length, in bytes.
    pub query_bytes: usize,
    /// The query holds a stack trace: only its lines that are not frames were searched.
    pub trace: bool,
}

/// Fewest frame lines that make a query a stack trace (searched on its other lines).
const MIN_FRAMES: usize = 2;

/// The most informative part of `query` when it is longer than [`MAX_QUERY_BYTES`], else
/// `None` (the query is searched whole).
pub fn focus(index: &DocIndex, query: &str) -> Option<Focused> {
    let long = query.len() > MAX_QUERY_BYTES;
    // a question of one or two lines is never a stack trace
    if !long && query.lines().nth(MIN_FRAMES).is_none() {
        return None;
    }
    let lines: Vec<&str> = query.lines().filter(|l| !l.trim().is_empty()).collect();
    let frames = frame_lines(&lines);
    if !long && frames.iter().filter(|f| **f).count() < MIN_FRAMES {
        return None;
    }
    // every word, and whether its line is a stack frame
    let (words, in_frame): (Vec<&str>, Vec<bool>) = lines
        .iter()
        .zip(&frames)
        .flat_map(|(l, f)| l.split_whitespace().map(move |w| (w, *f)))
        .unzip();
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
    weigh_within_query(&lines, &frames, &mut idf);
    let (start, end) = match long {
        true => best_window(&words, &terms, &idf),
        false => (0, words.len()),
    };
    let (text, trace) = match end > start {
        true => searched_text(
            &words[start..end],
            &in_frame[start..end],
            &terms[start..end],
            &idf,
        ),
        // one word longer than the limit: its first bytes
        false => (head(query.trim_start(), MAX_QUERY_BYTES).to_string(), false),
    };
    // a short query with frames but no message word the index uses: searched whole
    (long || trace).then_some(Focused {
        text,
        query_bytes: query.len(),
        trace,
    })
}

/// Multiplies each term's weight by `ln(1 + L / l)` (`L` lines, `l` of them holding
/// it), and by [`FRAME_WEIGHT`] when only stack frames hold it.
fn weigh_within_query(lines: &[&str], frames: &[bool], weight: &mut HashMap<String, f32>) {
    let mut in_lines: HashMap<String, usize> = HashMap::new();
    let mut in_message: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (line, frame) in lines.iter().zip(frames) {
        let mut seen: Vec<String> = Vec::new();
        crate::analysis::for_each_term(line, |t| {
            if !seen.iter().any(|s| s == t) {
                seen.push(t.to_string());
            }
        });
        for t in seen {
            if !frame {
                in_message.insert(t.clone());
            }
            *in_lines.entry(t).or_default() += 1;
        }
    }
    let n_lines = lines.len().max(1) as f32;
    let any_frame = frames.iter().any(|f| *f);
    for (term, w) in weight.iter_mut() {
        let l = in_lines.get(term).copied().unwrap_or(1).max(1) as f32;
        *w *= (1.0 + n_lines / l).ln();
        if any_frame && !in_message.contains(term) {
            *w *= FRAME_WEIGHT;
        }
    }
}

/// The text searched for a window of `words`, and whether it is only its lines that are
/// not stack frames (`in_frame`): those when one of them is a word the index uses (the
/// error message, not the library internals its frames name), else every word.
fn searched_text(
    words: &[&str],
    in_frame: &[bool],
    terms: &[Vec<String>],
    weight: &HashMap<String, f32>,
) -> (String, bool) {
    let known = |ts: &Vec<String>| ts.iter().any(|t| weight.get(t).is_some_and(|w| *w > 0.0));
    let message_known = in_frame
        .iter()
        .zip(terms)
        .any(|(frame, ts)| !frame && known(ts));
    let kept: Vec<&str> = words
        .iter()
        .zip(in_frame)
        .filter(|(_, frame)| !message_known || !**frame)
        .map(|(w, _)| *w)
        .collect();
    let trace = message_known && in_frame.iter().any(|f| *f);
    (kept.join(" "), trace)
}

/// Which of `lines` are stack frames, by their shape in the common runtimes: Python's
/// `File "…", line N, in f` and the source line and `^^^` marks under it; `at f
/// (file:1:2)` of JavaScript, Java and C#, and Rust's `at ./src/x.rs:5:9`; Rust's
/// numbered `12: crate::module::function`; and a bare `path/file.ext:LINE` (Go's
/// `\t/src/x.go:42 +0x1d`).
fn frame_lines(lines: &[&str]) -> Vec<bool> {
    let mut out = Vec::with_capacity(lines.len());
    // the indentation of the last Python frame header, whose source line follows it
    let mut header_indent: Option<usize> = None;
    for line in lines {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let python = t.starts_with("File \"") && t.contains("\", line ");
        let under_header = header_indent.is_some_and(|h| indent > h);
        let frame = python
            || under_header
            || t.chars().all(|c| "^~ ".contains(c))
            || t.strip_prefix("at ").is_some_and(located)
            || numbered_path(t)
            || t.split_whitespace()
                .next()
                .is_some_and(|w| located(w) && t.split_whitespace().count() <= 2);
        header_indent = match (python, under_header) {
            (true, _) => Some(indent),
            // a header's source line may run over several lines (`^^^` under it)
            (false, true) => header_indent,
            _ => None,
        };
        out.push(frame);
    }
    out
}

/// Whether `s` names a place in a source file: `file.ext:LINE` or `(…file.ext:LINE:COL)`.
fn located(s: &str) -> bool {
    s.split(|c: char| c == '(' || c == ')' || c.is_whitespace())
        .any(|w| {
            let mut parts = w.rsplitn(3, ':');
            let last = parts.next().unwrap_or("");
            let rest: Vec<&str> = parts.collect();
            let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
            match rest.as_slice() {
                [file] => digits(last) && has_extension(file),
                [line, file] => {
                    digits(last) && (digits(line) && has_extension(file) || has_extension(line))
                }
                _ => false,
            }
        })
}

/// Whether `s` ends in a file extension (`x.rs`, `/a/b.py`).
fn has_extension(s: &str) -> bool {
    s.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// Rust's numbered backtrace line: `12: crate::module::function`.
fn numbered_path(t: &str) -> bool {
    let Some((n, rest)) = t.split_once(": ") else {
        return false;
    };
    !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
        && rest.split_whitespace().count() == 1
        && rest.contains("::")
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
    fn stack_frames_are_told_from_messages_in_the_common_runtimes() {
        let trace = [
            "Traceback (most recent call last):",
            "  File \"/app/main.py\", line 42, in <module>",
            "    r = client.get(url)",
            "        ^^^^^^^^^^^^^^^",
            "  File \"/usr/lib/python3.11/site-packages/httpx/_client.py\", line 1066, in get",
            "    return self.request(",
            "httpx.ReadTimeout: The read operation timed out",
            "TypeError: Cannot read properties of undefined (reading 'map')",
            "    at render (/app/src/List.jsx:12:9)",
            "\tat com.example.Main.run(Main.java:31)",
            "thread 'main' panicked at src/main.rs:5:9:",
            "   7: std::rt::lang_start_internal",
            "             at ./library/std/src/rt.rs:174:5",
            "\t/home/u/go/src/app/main.go:42 +0x1d",
            "see https://example.com:8080/docs for details",
            "error: could not compile `app` (bin \"app\") due to 1 previous error",
        ];
        let frames = frame_lines(&trace);
        let expected = [
            false, true, true, true, true, true, false, false, true, true, false, true, true, true,
            false, false,
        ];
        for ((line, got), want) in trace.iter().zip(&frames).zip(expected) {
            assert_eq!(*got, want, "{line}");
        }
    }

    #[test]
    fn a_window_with_a_message_is_searched_on_its_message_lines() {
        let words = [
            "File",
            "\"/x/_client.py\",",
            "send",
            "ReadTimeout:",
            "timed",
            "out",
        ];
        let in_frame = [true, true, true, false, false, false];
        let terms: Vec<Vec<String>> = words
            .iter()
            .map(|w| {
                vec![w
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()]
            })
            .collect();
        let mut weight: HashMap<String, f32> = terms.iter().map(|t| (t[0].clone(), 1.0)).collect();
        assert_eq!(
            searched_text(&words, &in_frame, &terms, &weight),
            ("ReadTimeout: timed out".to_string(), true)
        );
        // no word of the message is one the index uses: the frames are searched too
        for t in ["readtimeout", "timed", "out"] {
            weight.insert(t.to_string(), 0.0);
        }
        assert_eq!(
            searched_text(&words, &in_frame, &terms, &weight),
            (words.join(" "), false)
        );
    }

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
