//! The analyser's state machine: folded characters in, terms out (see the rules in
//! the parent module).

use super::{fold_char, MAX_TERM_BYTES};
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Candidates longer than this (before recomposition) are dropped without looking at
/// them; NFC shrinks text by at most a factor of three (Hangul `L V T` → syllable).
const MAX_RAW_BYTES: usize = 4 * MAX_TERM_BYTES;

/// Up to this many candidates of one token are deduplicated by linear search.
const LINEAR_DEDUP: usize = 16;

/// Kind of a character inside a raw word token.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Alnum,
    Underscore,
    /// One of `: . - + # '` (`’` is folded to `'` before this point).
    Joiner(u8),
    /// A combining mark that survived folding; it extends the previous character.
    Mark,
}

/// Class of a folded character in the stream.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Sep,
    Cjk,
    Mark,
    Word(Kind),
}

#[derive(Clone, Copy, Debug)]
struct TokChar {
    /// Byte offset in the token buffer.
    start: usize,
    kind: Kind,
    /// Upper case before folding (drives camelCase splitting).
    upper: bool,
    alpha: bool,
}

impl TokChar {
    fn is_lower_letter(self) -> bool {
        self.kind == Kind::Alnum && self.alpha && !self.upper
    }
}

#[derive(PartialEq, Eq, Clone, Copy, Debug, Default)]
enum State {
    #[default]
    Idle,
    Word,
    Cjk,
}

/// Candidate terms of one raw token, normalised, stored back to back.
#[derive(Default)]
struct Candidates {
    arena: String,
    ranges: Vec<(usize, usize)>,
    order: Vec<usize>,
    keep: Vec<bool>,
}

impl Candidates {
    fn clear(&mut self) {
        self.arena.clear();
        self.ranges.clear();
    }

    /// Adds `raw` (a slice of folded text) as a candidate, after recomposition, unless
    /// it is too long.
    fn add(&mut self, raw: &str) {
        if raw.is_empty() || raw.len() > MAX_RAW_BYTES {
            return;
        }
        let start = self.arena.len();
        if raw.is_ascii() || is_nfc_quick(raw.chars()) == IsNormalized::Yes {
            self.arena.push_str(raw);
        } else {
            self.arena.extend(raw.nfc());
        }
        if self.arena.len() - start > MAX_TERM_BYTES {
            self.arena.truncate(start);
        } else {
            self.ranges.push((start, self.arena.len()));
        }
    }

    /// Emits the candidates in order, skipping any equal to an earlier one.
    fn emit_unique(&mut self, f: &mut impl FnMut(&str)) {
        let arena = &self.arena;
        let ranges = &self.ranges;
        let term = |i: usize| &arena[ranges[i].0..ranges[i].1];
        if ranges.len() <= LINEAR_DEDUP {
            for i in 0..ranges.len() {
                if !(0..i).any(|j| term(j) == term(i)) {
                    f(term(i));
                }
            }
            return;
        }
        self.order.clear();
        self.order.extend(0..ranges.len());
        self.order
            .sort_unstable_by(|&i, &j| term(i).cmp(term(j)).then(i.cmp(&j)));
        self.keep.clear();
        self.keep.resize(ranges.len(), false);
        for (k, &i) in self.order.iter().enumerate() {
            self.keep[i] = k == 0 || term(self.order[k - 1]) != term(i);
        }
        for i in 0..ranges.len() {
            if self.keep[i] {
                f(term(i));
            }
        }
    }
}

/// Reusable buffers of one analysis run.
#[derive(Default)]
pub(super) struct Tokenizer {
    state: State,
    /// Folded text of the current raw word token.
    tok: String,
    chars: Vec<TokChar>,
    /// Folded text of the current CJK run, and where each of its characters starts.
    cjk: String,
    units: Vec<usize>,
    cands: Candidates,
}

impl Tokenizer {
    pub(super) fn run(&mut self, text: &str, mut f: impl FnMut(&str)) {
        for c in text.chars() {
            fold_char(c, |d, upper, alpha| self.push(d, upper, alpha, &mut f));
        }
        self.flush(&mut f);
    }

    #[inline]
    fn push(&mut self, d: char, upper: bool, alpha: bool, f: &mut impl FnMut(&str)) {
        match classify(d) {
            Class::Sep => self.flush(f),
            Class::Mark => match self.state {
                State::Idle => {}
                State::Cjk => self.cjk.push(d),
                State::Word => {
                    self.chars.push(TokChar {
                        start: self.tok.len(),
                        kind: Kind::Mark,
                        upper: false,
                        alpha: false,
                    });
                    self.tok.push(d);
                }
            },
            Class::Cjk => {
                if self.state == State::Word {
                    self.flush(f);
                }
                self.state = State::Cjk;
                self.units.push(self.cjk.len());
                self.cjk.push(d);
            }
            Class::Word(kind) => {
                if self.state == State::Cjk {
                    self.flush(f);
                }
                self.state = State::Word;
                self.chars.push(TokChar {
                    start: self.tok.len(),
                    kind,
                    upper,
                    alpha,
                });
                self.tok.push(d);
            }
        }
    }

    fn flush(&mut self, f: &mut impl FnMut(&str)) {
        match self.state {
            State::Idle => {}
            State::Word => self.flush_word(f),
            State::Cjk => self.flush_cjk(f),
        }
        self.state = State::Idle;
    }

    /// Emits the bigrams of the current CJK run (its character if it has only one).
    /// Bigrams are separate occurrences, so they are not deduplicated.
    fn flush_cjk(&mut self, f: &mut impl FnMut(&str)) {
        let n = self.units.len();
        let end = |i: usize| self.units.get(i).copied().unwrap_or(self.cjk.len());
        // Bigram `i` spans characters `i..i + 2`; a run of one character (n == 1) is a
        // single "bigram" running to the end of the run.
        let count = if n <= 1 { n } else { n - 1 };
        for i in 0..count {
            let raw = &self.cjk[self.units[i]..end(i + 2)];
            self.cands.clear();
            self.cands.add(raw);
            if let Some(&(a, b)) = self.cands.ranges.first() {
                f(&self.cands.arena[a..b]);
            }
        }
        self.cjk.clear();
        self.units.clear();
    }

    fn flush_word(&mut self, f: &mut impl FnMut(&str)) {
        let chars = &self.chars[..];
        let tok = &self.tok[..];
        let cands = &mut self.cands;
        cands.clear();

        let mut s = 0;
        let mut e = chars.len();
        while e > s && matches!(chars[e - 1].kind, Kind::Joiner(b'.' | b':' | b'-' | b'\'')) {
            e -= 1;
        }
        while s < e
            && matches!(
                chars[s].kind,
                Kind::Joiner(b'.' | b':' | b'\'' | b'+' | b'#')
            )
        {
            s += 1;
        }
        let span = Span { chars, tok };
        // `.NET`, `.gitignore`: one leading dot before a letter stays in the whole term.
        let dotted = s == 1 && chars[0].kind == Kind::Joiner(b'.') && chars[1].alpha;
        if span.has_alnum(s, e) {
            if dotted {
                span.add(cands, 0, e);
            }
            span.add(cands, s, e);
            if chars[s].kind == Kind::Joiner(b'-') {
                let s2 = (s..e)
                    .find(|&i| chars[i].kind != Kind::Joiner(b'-'))
                    .unwrap_or(e);
                span.add(cands, s2, e);
            }
            if chars[s..e]
                .iter()
                .any(|c| matches!(c.kind, Kind::Joiner(_)))
            {
                let mut i = s;
                while i < e {
                    if matches!(chars[i].kind, Kind::Joiner(_)) {
                        i += 1;
                        continue;
                    }
                    let a = i;
                    while i < e && !matches!(chars[i].kind, Kind::Joiner(_)) {
                        i += 1;
                    }
                    let mut b = i;
                    // `C++`, `C#`, `F#`, `C++17`: a run of `+` or `#` that ends the token
                    // or comes before a digit belongs to the word (a language name).
                    let mut j = b;
                    while j < e && matches!(chars[j].kind, Kind::Joiner(b'+' | b'#')) {
                        j += 1;
                    }
                    if j > b && (j == e || chars[j].kind == Kind::Alnum && !chars[j].alpha) {
                        b = j;
                        i = j;
                        span.add(cands, a, b);
                        continue;
                    }
                    let apostrophe = (a > s && chars[a - 1].kind == Kind::Joiner(b'\''))
                        || (b < e && chars[b].kind == Kind::Joiner(b'\''));
                    let single = chars[a..b].iter().filter(|c| c.kind != Kind::Mark).count() == 1;
                    if apostrophe && single {
                        continue;
                    }
                    span.add(cands, a, b);
                    span.expand_segment(cands, a, b);
                }
            } else {
                span.expand_segment(cands, s, e);
            }
            cands.emit_unique(f);
        }
        self.tok.clear();
        self.chars.clear();
    }
}

/// A raw token's folded text and per-character information.
#[derive(Clone, Copy)]
struct Span<'a> {
    chars: &'a [TokChar],
    tok: &'a str,
}

impl Span<'_> {
    fn byte(self, i: usize) -> usize {
        self.chars.get(i).map_or(self.tok.len(), |c| c.start)
    }

    fn has_alnum(self, a: usize, b: usize) -> bool {
        self.chars[a..b].iter().any(|c| c.kind == Kind::Alnum)
    }

    /// Adds chars `a..b` as a candidate if they hold an alphanumeric and are short.
    fn add(self, cands: &mut Candidates, a: usize, b: usize) {
        let (x, y) = (self.byte(a), self.byte(b));
        if a < b && y - x <= MAX_RAW_BYTES && self.has_alnum(a, b) {
            cands.add(&self.tok[x..y]);
        }
    }

    /// The `_`-separated words of a segment (if any `_`) and their camelCase parts.
    fn expand_segment(self, cands: &mut Candidates, a: usize, b: usize) {
        if !self.chars[a..b].iter().any(|c| c.kind == Kind::Underscore) {
            self.camel(cands, a, b);
            return;
        }
        let mut i = a;
        while i < b {
            if self.chars[i].kind == Kind::Underscore {
                i += 1;
                continue;
            }
            let w = i;
            while i < b && self.chars[i].kind != Kind::Underscore {
                i += 1;
            }
            self.add(cands, w, i);
            self.camel(cands, w, i);
        }
    }

    /// camelCase parts of a word (only alphanumerics and marks), if it has two or more.
    fn camel(self, cands: &mut Candidates, a: usize, b: usize) {
        let c = self.chars;
        let mut start = a;
        for i in a + 1..b {
            if c[i].kind != Kind::Alnum || !c[i].upper {
                continue;
            }
            let boundary = if !c[i - 1].upper {
                // after a lower-case or caseless letter, a digit or a mark
                true
            } else if i + 1 < b && c[i + 1].is_lower_letter() {
                // last capital of a capital run followed by lower case, unless that
                // lower case is a lone plural `s` (`URLs`, `IDsFor`)
                let plural = &self.tok[self.byte(i + 1)..self.byte(i + 2)] == "s"
                    && (i + 2 >= b || !c[i + 2].is_lower_letter());
                !plural
            } else {
                false
            };
            if boundary {
                self.add(cands, start, i);
                start = i;
            }
        }
        if start != a {
            self.add(cands, start, b);
        }
    }
}

#[inline]
fn classify(d: char) -> Class {
    if d.is_ascii() {
        return match d {
            'a'..='z' | 'A'..='Z' | '0'..='9' => Class::Word(Kind::Alnum),
            '_' => Class::Word(Kind::Underscore),
            ':' | '.' | '-' | '+' | '#' | '\'' => Class::Word(Kind::Joiner(d as u8)),
            _ => Class::Sep,
        };
    }
    if is_combining_mark(d) {
        Class::Mark
    } else if !d.is_alphanumeric() {
        Class::Sep
    } else if is_cjk(d) {
        Class::Cjk
    } else {
        Class::Word(Kind::Alnum)
    }
}

/// Han, Hiragana, Katakana, Bopomofo and Hangul blocks (after folding, so halfwidth
/// forms have already become their fullwidth equivalents).
pub fn is_cjk(d: char) -> bool {
    matches!(d as u32,
        0x1100..=0x11FF // Hangul Jamo
        | 0x2E80..=0x2FDF // CJK and Kangxi radicals
        | 0x3005..=0x3007 // 々 〆 〇
        | 0x3021..=0x303F // Hangzhou numerals, iteration marks
        | 0x3040..=0x30FF // Hiragana, Katakana
        | 0x3100..=0x31FF // Bopomofo, compatibility jamo, Katakana extensions
        | 0x3400..=0x4DBF // Han extension A
        | 0x4E00..=0x9FFF // Han
        | 0xA960..=0xA97F // Hangul Jamo extended A
        | 0xAC00..=0xD7FF // Hangul syllables, Jamo extended B
        | 0xF900..=0xFAFF // Han compatibility
        | 0x1AFF0..=0x1B16F // Kana extensions and supplement
        | 0x20000..=0x323AF // Han extensions B..H, compatibility supplement
    )
}
