//! English query helpers for the lexical ranking: a stop-word list and a minimal plural
//! stemmer. Both act on query terms only (the index keeps every word), so they never
//! change the on-disk format.

/// English stop words: the list NLTK ships (`nltk.corpus.stopwords.words("english")`,
/// the 179 words most toolkits use), apostrophe forms included.
pub const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "you're",
    "you've",
    "you'll",
    "you'd",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "she's",
    "her",
    "hers",
    "herself",
    "it",
    "it's",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "that'll",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "don't",
    "should",
    "should've",
    "now",
    "d",
    "ll",
    "m",
    "o",
    "re",
    "ve",
    "y",
    "ain",
    "aren",
    "aren't",
    "couldn",
    "couldn't",
    "didn",
    "didn't",
    "doesn",
    "doesn't",
    "hadn",
    "hadn't",
    "hasn",
    "hasn't",
    "haven",
    "haven't",
    "isn",
    "isn't",
    "ma",
    "mightn",
    "mightn't",
    "mustn",
    "mustn't",
    "needn",
    "needn't",
    "shan",
    "shan't",
    "shouldn",
    "shouldn't",
    "wasn",
    "wasn't",
    "weren",
    "weren't",
    "won",
    "won't",
    "wouldn",
    "wouldn't",
];

/// True when `term` (folded) is an English stop word.
pub fn is_stop_word(term: &str) -> bool {
    STOP_WORDS.contains(&term)
}

/// The S-stemmer of Harman (1991, "How effective is suffixing?", JASIS 42(1)), as
/// Lucene's `EnglishMinimalStemmer` implements it: `-ies` (not after `a`/`e`) is cut to
/// the stem before it (`libraries` → `librar`; [`inflections`] adds the `y`), `-es` →
/// `-e` / `-s` removed, except after `u`, `s`, and in `-aes`, `-ees`, `-oes`, `-ies`
/// after `a`/`e`. Words under three letters, and terms that are not plain lower-case
/// letters, are left alone.
pub fn minimal_stem(term: &str) -> &str {
    let b = term.as_bytes();
    let n = b.len();
    if n < 3 || b[n - 1] != b's' || !b.iter().all(u8::is_ascii_lowercase) {
        return term;
    }
    match b[n - 2] {
        b'u' | b's' => term,
        b'e' => {
            if n > 3 && b[n - 3] == b'i' && b[n - 4] != b'a' && b[n - 4] != b'e' {
                // `-ies`: [`inflections`] adds the `y`
                return &term[..n - 3];
            }
            if matches!(b[n - 3], b'i' | b'a' | b'o' | b'e') {
                term
            } else {
                &term[..n - 1]
            }
        }
        _ => &term[..n - 1],
    }
}

/// The other inflections of `term` to look up in the index: its singular (by
/// [`minimal_stem`]: `widgets` → `widget`, `libraries` → `library`, `differs` →
/// `differ`) and its plurals (`widget` → `widgets`, `library` → `libraries`, `box` →
/// `boxes`). Empty for terms the stemmer leaves alone.
pub fn inflections(term: &str) -> Vec<String> {
    let b = term.as_bytes();
    let n = b.len();
    if n < 3 || !b.iter().all(u8::is_ascii_lowercase) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let stem = minimal_stem(term);
    if stem != term {
        // `-ies` → `-y`
        if term.ends_with("ies") && stem.len() == n - 3 {
            out.push(format!("{stem}y"));
        } else {
            out.push(stem.to_string());
        }
        // `boxes` → `box`, `branches` → `branch`, `classes` → `class`: the S-stemmer
        // keeps the `e`, the singular has none
        let bare = &term[..n - 2];
        if term.ends_with("es")
            && (bare.ends_with(['x', 'z'])
                || bare.ends_with("ch")
                || bare.ends_with("sh")
                || bare.ends_with("ss"))
        {
            out.push(bare.to_string());
        }
    } else {
        if term.ends_with('y') && n > 3 && !matches!(b[n - 2], b'a' | b'e' | b'o' | b'u') {
            out.push(format!("{}ies", &term[..n - 1]));
        }
        if !term.ends_with('s') {
            out.push(format!("{term}s"));
        }
        if term.ends_with(['x', 'z'])
            || term.ends_with("ch")
            || term.ends_with("sh")
            || term.ends_with("ss")
        {
            out.push(format!("{term}es"));
        }
    }
    out.retain(|v| v != term);
    out
}

/// Whether `form`, a longer word that begins with `word`, is an inflection of it: `word`
/// with `s` or `ed` (`turns`, `turned`), `es` after `s`, `x`, `z`, `ch` or `sh`
/// (`matches`), `d` after an `e` (`used`), or its last consonant doubled before
/// `ed`/`ing` (`stopped`, `stopping`). Not a derived word (`capitalize` of `capital`,
/// `builder` of `build`), and not a plain `-ing`, which is as often a noun of its own
/// (`heading`, `meaning`, `setting`) as the verb's form.
pub fn is_inflected_form(word: &str, form: &str) -> bool {
    let Some(rest) = form.strip_prefix(word) else {
        return false;
    };
    let last = word.chars().last();
    let doubled = last
        .filter(|c| c.is_ascii_lowercase() && !"aeiouy".contains(*c))
        .and_then(|c| rest.strip_prefix(c));
    let sibilant = word.ends_with(['s', 'x', 'z']) || word.ends_with("ch") || word.ends_with("sh");
    matches!(rest, "s" | "ed")
        || (rest == "es" && sibilant)
        || (rest == "d" && word.ends_with('e'))
        || doubled.is_some_and(|r| matches!(r, "ed" | "ing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflected_forms_are_told_from_derived_words() {
        for (w, f) in [
            ("turn", "turned"),
            ("turn", "turns"),
            ("use", "used"),
            ("stop", "stopped"),
            ("stop", "stopping"),
            ("match", "matches"),
        ] {
            assert!(is_inflected_form(w, f), "{w} {f}");
        }
        for (w, f) in [
            ("capital", "capitalize"),
            ("build", "builder"),
            ("turn", "turnover"),
            ("turn", "turn"),
            ("spawn", "spawnd"),
            ("read", "ready"),
            ("head", "heading"),
            ("mean", "meaning"),
            ("stat", "states"),
            ("plan", "planes"),
        ] {
            assert!(!is_inflected_form(w, f), "{w} {f}");
        }
    }

    #[test]
    fn minimal_stemmer_follows_lucene() {
        for (w, s) in [
            ("widgets", "widget"),
            ("cores", "core"),
            ("differs", "differ"),
            ("caches", "cache"),
            ("status", "status"),
            ("class", "class"),
            ("shoes", "shoes"),
            ("is", "is"),
            ("HashMaps", "HashMaps"),
        ] {
            assert_eq!(minimal_stem(w), s, "{w}");
        }
    }

    #[test]
    fn inflections_go_both_ways() {
        assert_eq!(inflections("widgets"), ["widget"]);
        assert_eq!(inflections("libraries"), ["library"]);
        assert_eq!(inflections("library"), ["libraries", "librarys"]);
        assert_eq!(inflections("widget"), ["widgets"]);
        assert_eq!(inflections("box"), ["boxs", "boxes"]);
        assert_eq!(inflections("core"), ["cores"]);
        assert_eq!(inflections("boxes"), ["boxe", "box"]);
        assert_eq!(inflections("branches"), ["branche", "branch"]);
        assert_eq!(inflections("classes"), ["classe", "class"]);
        assert_eq!(inflections("indexes"), ["indexe", "index"]);
        assert!(inflections("of").is_empty());
        assert!(inflections("snake_case").is_empty());
    }

    #[test]
    fn stop_words() {
        for w in ["from", "on", "its", "own", "how", "do", "a", "the", "it"] {
            assert!(is_stop_word(w), "{w}");
        }
        for w in ["stop", "tool", "fetch", "remove"] {
            assert!(!is_stop_word(w), "{w}");
        }
    }
}
