//! Tokenisation shared by indexing and querying (one analyser, versioned).
//!
//! Owns: case and accent folding, identifier splitting (kept whole and split), CJK
//! character bigrams, the token length cap. Must not import anything but std and
//! `unicode-normalization`: every index and the query path depend on it, and its
//! output is part of the on-disk format, so any change bumps [`LEXICON_VERSION`].
//!
//! # The rules
//!
//! Text is read one character at a time; every character is first [folded](fold)
//! (which may turn one character into several, e.g. `ﬁ` → `fi`, `½` → `1⁄2`), and the
//! folded characters are then classified:
//!
//! * **word characters**: alphanumerics other than CJK, plus the joiners
//!   `_ : . - + # '` (`’` folds to `'`). A maximal run of them is a *raw token*.
//! * **CJK characters** (Han, Hiragana, Katakana, Hangul, Bopomofo): a maximal run of
//!   them is cut into overlapping character bigrams (`東京都` → `東京`, `京都`); a run
//!   of a single character yields that character.
//! * **combining marks** that survive folding (spacing marks of Indic scripts, the kana
//!   voicing marks): they extend whatever token or CJK character they follow, and are
//!   dropped when they follow a separator.
//! * everything else (spaces, punctuation, symbols, `"`, `(`, `*`, `/`, …) separates.
//!
//! A raw token is trimmed: trailing `. : - '` and leading `. : ' + #` are stripped,
//! so a leading `-` (`--dry-run`, `-flag`) and a trailing `+`/`#` (`C++`, `C#`)
//! survive; one leading `.` before a letter (`.NET`, `.gitignore`) is kept in the whole
//! term, which is then also given without it. A token with no alphanumeric character left is dropped. The token then
//! yields, in this order and without repeats (repeats of the *token* in the text do
//! count, each time):
//!
//! 1. the whole token (`rc::strong_count`);
//! 2. when it starts with `-`: the token without its leading dashes (`--dry-run` →
//!    `dry-run`), so an option matches a query written without dashes;
//! 3. when it contains a joiner other than `_`: each *segment* between joiners
//!    (`rc`, `strong_count`), except one-letter segments next to an apostrophe
//!    (`isn't` → `isn't`, `isn`; no `t`; `O'Reilly` → `o'reilly`, `reilly`); a run
//!    of `+` or `#` that ends the token or precedes a digit stays with its segment, so
//!    language names stay whole (`C++` → `c++` only, never `c`; `C++17` → `c++17`,
//!    `c++`, `17`; `F#` → `f#`);
//! 4. for each segment holding `_`: its `_`-separated words (`strong`, `count`);
//! 5. for each such word (or segment without `_`): its camelCase parts, split on the
//!    *original* case: before an upper-case letter that follows a lower-case letter or
//!    a digit (`hashMap`, `http2Response`), and before the last capital of a run of
//!    capitals followed by lower case (`HTTPServer` → `http`, `server`). A capital run
//!    followed only by a single `s` is a plural, not a boundary (`URLs`, `IDsFor` →
//!    `ids`, `for`). Letter/digit changes never split (`u32`, `utf8`, `ch15`).
//!
//! Every term is at most [`MAX_TERM_BYTES`] bytes; longer candidates (whole tokens or
//! parts) are dropped individually. All work is linear in the input (plus a sort when a
//! single huge token has many distinct parts).
//!
//! ```
//! use docfuse::analysis::index_terms;
//! assert_eq!(index_terms("Rc::strong_count"),
//!            ["rc::strong_count", "rc", "strong_count", "strong", "count"]);
//! assert_eq!(index_terms("HTTPServer"), ["httpserver", "http", "server"]);
//! assert_eq!(index_terms("Rust语言"), ["rust", "语言"]);
//! ```

mod english;
mod tokenizer;

pub use english::{inflections, is_inflected_form, minimal_stem, STOP_WORDS};
pub use tokenizer::is_cjk;

/// Single CJK characters that are function words (Chinese particles, conjunctions,
/// prepositions and pronouns such as `的`, `和`, `在`; Japanese particles such as `の`,
/// `は`, `を`): alone in a query they say nothing of its topic, like an English stop word.
/// Only a term of that one character counts: a bigram holding one (`目的`, `現在`) may be
/// a word of its own.
pub const CJK_FUNCTION_CHARS: &str =
    "的了和是在与及或而也就都把被对从向为以于之其着过吗呢吧啊地得这那个我你他她它\
     のにはをがでとへやかなねよ";

/// True when `term` (folded) is a stop word: an English one ([`STOP_WORDS`]) or a single
/// CJK function character ([`CJK_FUNCTION_CHARS`]). Read by the query side only.
///
/// ```
/// use docfuse::analysis::is_stop_word;
/// assert!(is_stop_word("the") && is_stop_word("的") && is_stop_word("の"));
/// assert!(!is_stop_word("目的") && !is_stop_word("区") && !is_stop_word("cargo"));
/// ```
pub fn is_stop_word(term: &str) -> bool {
    english::is_stop_word(term) || is_cjk_function_char(term)
}

/// True when `term` is a single CJK function character ([`CJK_FUNCTION_CHARS`]): a stop
/// word wherever the query writes it (`Vec和HashMap`), as CJK is written without spaces.
pub fn is_cjk_function_char(term: &str) -> bool {
    lone_cjk(term).is_some_and(|c| CJK_FUNCTION_CHARS.contains(c))
}

/// The character of `term` when it is a single CJK character (the index holds one only
/// inside the bigrams of its run, unless the run is that character alone).
pub fn lone_cjk(term: &str) -> Option<char> {
    let mut chars = term.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if is_cjk(c) => Some(c),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

use unicode_normalization::char::{canonical_combining_class, decompose_compatible};
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

/// Version of the analysis rules; recorded in the manifest. Bump on any change of output.
pub const LEXICON_VERSION: u32 = 2;

/// Longest term kept, in bytes after folding; longer whole tokens are dropped (their
/// split parts, if short enough, are kept).
pub const MAX_TERM_BYTES: usize = 64;

/// True when `s` has nothing to search for: only whitespace, control characters and
/// default-ignorable code points (zero-width spaces and joiners, direction marks, word
/// joiner, byte order mark, soft hyphen, variation selectors, tag characters…: the
/// `Default_Ignorable_Code_Point` property of Unicode's DerivedCoreProperties.txt, which
/// text renders as nothing). Every interface refuses such a query or target as empty.
pub fn is_blank(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_whitespace() || c.is_control() || is_default_ignorable(c))
}

/// Unicode 15.1 `Default_Ignorable_Code_Point` (DerivedCoreProperties.txt).
fn is_default_ignorable(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}'..='\u{1160}' | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}' | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// Folds case, accents and compatibility forms, so that equivalent spellings compare
/// equal.
///
/// Steps: Unicode compatibility decomposition (NFKD: `ﬁ` → `fi`, fullwidth `Ａ` → `A`,
/// halfwidth `ｶ` → `カ`); removal of combining marks with a non-zero canonical
/// combining class, i.e. accents and diacritics (`é` → `e`), except the kana voicing
/// marks so that `が` stays distinct from `か`; per-character lower-casing, with final
/// `ς` folded to `σ` and the typographic apostrophe `’` to `'`; finally canonical
/// recomposition (NFC), which rebuilds Hangul syllables and kana with voicing marks.
///
/// Lower-casing does not expand: `ß` stays `ß` (it is not turned into `ss`), so
/// `Straße` and `Strasse` fold differently. Marks with a zero combining class (most
/// vowel signs of Indic and Southeast Asian scripts) are kept, as dropping them would
/// merge different words. Folding is idempotent on the terms the analyser produces.
///
/// ```
/// use docfuse::analysis::fold;
/// assert_eq!(fold("Café"), "cafe");
/// assert_eq!(fold("cafe\u{301}"), "cafe"); // decomposed input
/// assert_eq!(fold("ＲＵＳＴ"), "rust");
/// assert_eq!(fold("Straße"), "straße");
/// assert_eq!(fold("isn’t"), "isn't");
/// assert_eq!(fold("ΟΔΟΣ"), "οδοσ");
/// ```
pub fn fold(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        fold_char(c, |d, _, _| out.push(d));
    }
    if is_nfc_quick(out.chars()) == IsNormalized::Yes {
        out
    } else {
        out.nfc().collect()
    }
}

/// Every term of `text`, in text order and with repeats (a term's frequency matters).
///
/// Terms of one raw token are never repeated (`C++17` → `c++17`, `c++`, `17`), but each
/// occurrence of a token in the text yields its terms again.
///
/// ```
/// use docfuse::analysis::index_terms;
/// assert_eq!(index_terms("HashMap or HashMap"),
///            ["hashmap", "hash", "map", "or", "hashmap", "hash", "map"]);
/// assert_eq!(index_terms("--dry-run"), ["--dry-run", "dry-run", "dry", "run"]);
/// assert_eq!(index_terms("Ubuntu 20.04."), ["ubuntu", "20.04", "20", "04"]);
/// assert_eq!(index_terms("東京都"), ["東京", "京都"]);
/// ```
pub fn index_terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_owned()));
    out
}

/// The terms of a query: the same analysis as [`index_terms`], without repeats, in
/// order of first occurrence. Query syntax characters that are not word characters
/// (`"`, `(`, `)`, `*`, a lone `:`) are simply ignored.
///
/// ```
/// use docfuse::analysis::query_terms;
/// assert_eq!(query_terms("\"map\" (HashMap) map*"), ["map", "hashmap", "hash"]);
/// assert_eq!(query_terms("foo:bar :"), ["foo:bar", "foo", "bar"]);
/// ```
pub fn query_terms(text: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for_each_term(text, |t| {
        if !seen.contains(t) {
            seen.insert(t.to_owned());
            out.push(t.to_owned());
        }
    });
    out
}

/// The words of a query that are plain English words outside double quotes (folded): the
/// only ones stop-word removal may drop. A word inside an identifier (`self.from`), an
/// option (`--from`) or a quoted phrase (`"from the start"`) is never dropped.
pub fn plain_query_words(text: &str) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for (i, part) in text.split('"').enumerate() {
        if i % 2 == 1 {
            continue; // inside quotes
        }
        for w in part.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’');
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_alphabetic() || c == '\'' || c == '’')
            {
                out.insert(fold(w));
            }
        }
    }
    out
}

/// Calls `f` with each term of `text`, exactly as [`index_terms`] lists them, without
/// allocating per term (the `&str` is only valid during the call).
///
/// ```
/// use docfuse::analysis::for_each_term;
/// let mut n = 0;
/// for_each_term("or_insert(key)", |_| n += 1);
/// assert_eq!(n, 4); // or_insert, or, insert, key
/// ```
pub fn for_each_term(text: &str, f: impl FnMut(&str)) {
    tokenizer::Tokenizer::default().run(text, f);
}

/// Folds one character, calling `emit(folded, was_upper_case, is_alphabetic)` for each
/// resulting character (zero or more). Recomposition (NFC) is left to the caller.
#[inline]
fn fold_char(c: char, mut emit: impl FnMut(char, bool, bool)) {
    if c.is_ascii() {
        emit(
            c.to_ascii_lowercase(),
            c.is_ascii_uppercase(),
            c.is_ascii_alphabetic(),
        );
    } else if ('\u{AC00}'..='\u{D7A3}').contains(&c) {
        // Hangul syllable: NFKD then NFC would give it back unchanged.
        emit(c, false, true);
    } else {
        decompose_compatible(c, |d| {
            if canonical_combining_class(d) != 0 && !matches!(d, '\u{3099}' | '\u{309A}') {
                return;
            }
            if d == '\u{2019}' {
                emit('\'', false, false);
                return;
            }
            let upper = d.is_uppercase();
            for l in d.to_lowercase() {
                let l = if l == 'ς' { 'σ' } else { l };
                emit(l, upper, l.is_alphabetic());
            }
        });
    }
}
