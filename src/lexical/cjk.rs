//! A lone CJK character in a query. CJK text is indexed as overlapping bigrams (a run
//! of one character as that character), so a query of one character (`口`) would find
//! nothing in `端口`; it is looked up as every bigram of the index that holds it, first
//! or second (Lucene's CJKBigramFilter answers this by also indexing unigrams; searching
//! the term dictionaries with an automaton needs no change to the index).

use super::reader::LexicalIndex;
use crate::error::Result;
use std::collections::BTreeMap;
use tantivy::Searcher;
use tantivy_fst::Automaton;

/// Most bigrams one character is looked up as, the most frequent first.
pub(super) const MAX_CJK_BIGRAMS: usize = 64;

impl LexicalIndex {
    /// The index terms of two characters, one of them `c`, by document frequency summed
    /// over fields and segments (highest first, ties by term), at most
    /// [`MAX_CJK_BIGRAMS`].
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when a term dictionary cannot be read.
    pub(super) fn bigrams_holding(&self, s: &Searcher, c: char) -> Result<Vec<String>> {
        let mut found: BTreeMap<String, u64> = BTreeMap::new();
        for &field in &self.fields.text {
            for sr in s.segment_readers() {
                let inv = sr.inverted_index(field)?;
                let mut stream = inv
                    .terms()
                    .search(PairWith::new(c))
                    .into_stream()
                    .map_err(tantivy::TantivyError::from)?;
                while stream.advance() {
                    if let Ok(k) = std::str::from_utf8(stream.key()) {
                        *found.entry(k.to_string()).or_default() +=
                            u64::from(stream.value().doc_freq);
                    }
                }
            }
        }
        let mut out: Vec<(String, u64)> = found.into_iter().collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out.truncate(MAX_CJK_BIGRAMS);
        Ok(out.into_iter().map(|(t, _)| t).collect())
    }
}

/// Accepts the UTF-8 strings of exactly two characters of which one is `c`.
#[derive(Debug, Clone)]
struct PairWith {
    c: [u8; 4],
    len: usize,
}

/// Where [`PairWith`] is in a string.
#[derive(Debug, Clone, Copy, Default)]
struct Pos {
    /// Whole characters read, and whether one of them was `c`.
    chars: u8,
    seen: bool,
    /// Bytes read of the current character, its length, and whether they are `c`'s.
    read: u8,
    need: u8,
    same: bool,
    dead: bool,
}

impl PairWith {
    fn new(c: char) -> PairWith {
        let mut buf = [0u8; 4];
        let len = c.encode_utf8(&mut buf).len();
        PairWith { c: buf, len }
    }
}

/// The length of the UTF-8 sequence `lead` begins (0: not a lead byte).
fn utf8_len(lead: u8) -> u8 {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 0,
    }
}

impl Automaton for PairWith {
    type State = Pos;

    fn start(&self) -> Pos {
        Pos::default()
    }

    fn is_match(&self, p: &Pos) -> bool {
        !p.dead && p.chars == 2 && p.read == 0 && p.seen
    }

    fn can_match(&self, p: &Pos) -> bool {
        !p.dead
    }

    fn accept(&self, p: &Pos, byte: u8) -> Pos {
        let mut p = *p;
        if p.dead {
            return p;
        }
        if p.read == 0 {
            p.need = utf8_len(byte);
            if p.chars == 2 || p.need == 0 {
                p.dead = true;
                return p;
            }
            p.same = true;
        }
        p.same = p.same && self.c.get(p.read as usize) == Some(&byte);
        p.read += 1;
        if p.read == p.need {
            p.seen |= p.same && usize::from(p.need) == self.len;
            p.chars += 1;
            p.read = 0;
        }
        // the second character must be `c` when the first was not
        if p.chars == 1 && !p.seen && p.read > 0 && !p.same {
            p.dead = true;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(a: &PairWith, s: &str) -> bool {
        let mut p = a.start();
        for &b in s.as_bytes() {
            p = a.accept(&p, b);
            if !a.can_match(&p) {
                return false;
            }
        }
        a.is_match(&p)
    }

    #[test]
    fn pairs_holding_the_character_first_or_second() {
        let a = PairWith::new('口');
        assert!(accepts(&a, "端口"));
        assert!(accepts(&a, "口号"));
        assert!(accepts(&a, "口口"));
        assert!(!accepts(&a, "口"));
        assert!(!accepts(&a, "端口号"));
        assert!(!accepts(&a, "端号"));
        assert!(!accepts(&a, "a口b"));
        assert!(accepts(&a, "a口"));
        assert_eq!(crate::analysis::lone_cjk("口"), Some('口'));
        assert_eq!(crate::analysis::lone_cjk("口号"), None);
        assert_eq!(crate::analysis::lone_cjk("a"), None);
    }
}
