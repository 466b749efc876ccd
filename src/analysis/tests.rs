//! Unit and property tests of the analyser.

use super::*;
use proptest::prelude::*;

fn terms(s: &str) -> Vec<String> {
    index_terms(s)
}

#[track_caller]
fn assert_terms(s: &str, expected: &[&str]) {
    assert_eq!(terms(s), expected, "terms of {s:?}");
}

#[test]
fn fold_examples() {
    assert_eq!(fold("café"), "cafe");
    assert_eq!(fold("Café"), "cafe");
    assert_eq!(fold("CAFE\u{301}"), "cafe");
    assert_eq!(fold("Straße"), "straße");
    assert_eq!(fold("ﬁle"), "file");
    assert_eq!(fold("Ｒｕｓｔ"), "rust");
    assert_eq!(fold("ÅNGSTRÖM"), "angstrom");
    assert_eq!(fold("ΟΔΟΣ οδος"), "οδοσ οδοσ");
    assert_eq!(fold("isn’t"), "isn't");
    assert_eq!(fold("が"), "が");
    assert_eq!(fold("ｶﾞ"), "ガ");
    assert_eq!(fold("한국어"), "한국어");
    assert_eq!(fold(""), "");
}

#[test]
fn fold_is_idempotent_on_every_char() {
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let once = fold(c.encode_utf8(&mut [0; 4]));
        assert_eq!(fold(&once), once, "char U+{:04X}", c as u32);
    }
}

#[test]
fn identifiers() {
    assert_terms("HashMap", &["hashmap", "hash", "map"]);
    assert_terms("or_insert", &["or_insert", "or", "insert"]);
    assert_terms(
        "Rc::strong_count",
        &["rc::strong_count", "rc", "strong_count", "strong", "count"],
    );
    assert_terms("HTTPServer", &["httpserver", "http", "server"]);
    assert_terms("ListState", &["liststate", "list", "state"]);
    assert_terms(
        "parseHTTP2Response",
        &["parsehttp2response", "parse", "http2", "response"],
    );
    assert_terms(
        "std::collections::HashMap::new()",
        &[
            "std::collections::hashmap::new",
            "std",
            "collections",
            "hashmap",
            "hash",
            "map",
            "new",
        ],
    );
    assert_terms(
        "my_HashMap",
        &["my_hashmap", "my", "hashmap", "hash", "map"],
    );
    assert_terms("__init__", &["__init__", "init"]);
    assert_terms("URLs", &["urls"]);
    assert_terms("IDsFor", &["idsfor", "ids", "for"]);
}

#[test]
fn letter_digit_boundaries_do_not_split() {
    assert_terms("u32", &["u32"]);
    assert_terms("utf8", &["utf8"]);
    assert_terms("ch15", &["ch15"]);
    assert_terms("ch15-04-rc", &["ch15-04-rc", "ch15", "04", "rc"]);
    assert_terms("Base64Encode", &["base64encode", "base64", "encode"]);
}

#[test]
fn options_and_languages() {
    assert_terms("--dry-run", &["--dry-run", "dry-run", "dry", "run"]);
    assert_terms("-flag", &["-flag", "flag"]);
    // language names stay whole: `C++` never reduces to `c`
    assert_terms("C++", &["c++"]);
    assert_terms("C#.", &["c#"]);
    assert_terms("F#", &["f#"]);
    assert_terms("C++17", &["c++17", "c++", "17"]);
    assert_terms(".NET", &[".net", "net"]);
    assert_terms(".gitignore", &[".gitignore", "gitignore"]);
    assert_terms("node.js", &["node.js", "node", "js"]);
    assert_terms("a+b", &["a+b", "a", "b"]);
    assert_terms("...and", &["and"]);
    assert_terms("#include", &["include"]);
    assert_terms("--", &[]);
}

#[test]
fn numbers_and_punctuation() {
    assert_terms("20.04", &["20.04", "20", "04"]);
    assert_terms("Ubuntu 20.04.", &["ubuntu", "20.04", "20", "04"]);
    assert_terms("v1.2.3", &["v1.2.3", "v1", "2", "3"]);
    assert_terms("foo:bar", &["foo:bar", "foo", "bar"]);
    assert_terms("end. (Next) 'quoted' x...", &["end", "next", "quoted", "x"]);
    assert_terms(
        "https://docs.rs/x",
        &["https", "docs.rs", "docs", "rs", "x"],
    );
}

#[test]
fn apostrophes() {
    assert_terms("isn't", &["isn't", "isn"]);
    assert_terms("isn’t", &["isn't", "isn"]);
    assert_terms("O'Reilly", &["o'reilly", "reilly"]);
    assert_terms("rock'n'roll", &["rock'n'roll", "rock", "roll"]);
    assert_terms("Rust's", &["rust's", "rust"]);
}

#[test]
fn accents() {
    assert_eq!(terms("café"), terms("cafe"));
    assert_terms("Café", &["cafe"]);
    assert_terms("CAFÉ", &["cafe"]);
    assert_terms("cafe\u{301}s", &["cafes"]);
    assert_terms("ÉcoleNormale", &["ecolenormale", "ecole", "normale"]);
}

#[test]
fn cjk_bigrams() {
    assert_terms("東京都", &["東京", "京都"]);
    assert_terms("東", &["東"]);
    assert_terms("Rust语言", &["rust", "语言"]);
    assert_terms("语言Rust", &["语言", "rust"]);
    assert_terms("東京、京都", &["東京", "京都"]);
    assert_terms("東京東京", &["東京", "京東", "東京"]);
    assert_terms("한국어", &["한국", "국어"]);
    assert_terms("ｶﾞｲﾄﾞ", &["ガイ", "イド"]);
    assert_terms("ガイド", &["ガイ", "イド"]);
    assert_terms("データー", &["デー", "ータ", "ター"]);
    let text = index_terms("東京都に住む");
    for q in query_terms("京都") {
        assert!(text.contains(&q), "{q} not in {text:?}");
    }
}

#[test]
fn query_syntax_is_ignored() {
    assert_eq!(
        query_terms("\"hash map\" (HashMap OR map*) : -"),
        ["hash", "map", "hashmap", "or"]
    );
    assert_eq!(query_terms("title:foo"), ["title:foo", "title", "foo"]);
}

#[test]
fn repeats_count_in_index_but_not_in_query() {
    assert_eq!(terms("map map"), ["map", "map"]);
    assert_eq!(query_terms("map map Map"), ["map"]);
    // a token never repeats its own terms
    assert_terms("a_a_a", &["a_a_a", "a"]);
    assert_terms("x.x.x", &["x.x.x", "x"]);
}

#[test]
fn long_tokens() {
    let long = "a".repeat(5000);
    assert!(terms(&long).is_empty());
    let camel = "aB".repeat(2500);
    assert_eq!(terms(&camel), ["a", "ba", "b"]);
    let parts = ["alpha"; 20].join("_");
    assert_eq!(terms(&parts), ["alpha"]);
    let exact = "b".repeat(MAX_TERM_BYTES);
    assert_eq!(terms(&exact), std::slice::from_ref(&exact));
    assert!(terms(&format!("{exact}b")).is_empty());
    // many distinct parts: deduplicated by sorting, order kept
    let distinct: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
    let mut expected = distinct.clone();
    expected.extend(distinct.iter().cloned());
    let tok = distinct.join("-") + "-" + &distinct.join("-");
    assert_eq!(terms(&tok), distinct);
    assert_eq!(terms(&format!("{tok} {tok}")), expected);
}

#[test]
fn huge_inputs_are_linear() {
    let start = std::time::Instant::now();
    let mut n = 0usize;
    for_each_term(&"ab.".repeat(1_000_000), |_| n += 1);
    for_each_term(&"aB_".repeat(1_000_000), |_| n += 1);
    for_each_term(&"東".repeat(1_000_000), |_| n += 1);
    for_each_term(&"e\u{301}".repeat(1_000_000), |_| n += 1);
    assert!(n > 0);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
#[ignore = "throughput measurement; run with --ignored --nocapture"]
fn throughput() {
    let para = "The `HashMap::entry` API (see ch08-03) lets you call or_insert(0); \
                with --dry-run, nothing is written. Café au lait, 東京都に住む. ";
    let text = para.repeat(25_000_000 / para.len());
    let start = std::time::Instant::now();
    let mut n = 0usize;
    for_each_term(&text, |_| n += 1);
    let dt = start.elapsed();
    eprintln!(
        "{} MB, {n} terms in {dt:?} ({:.0} MB/s)",
        text.len() / 1_000_000,
        text.len() as f64 / 1e6 / dt.as_secs_f64()
    );
}

fn check_terms(s: &str) -> Result<(), TestCaseError> {
    let all = index_terms(s);
    for t in &all {
        prop_assert!(!t.is_empty());
        prop_assert!(t.len() <= MAX_TERM_BYTES, "{t:?}");
        prop_assert!(!t.chars().any(char::is_whitespace), "{t:?}");
        prop_assert_eq!(&fold(t), t);
    }
    let mut dedup: Vec<String> = Vec::new();
    for t in all {
        if !dedup.contains(&t) {
            dedup.push(t);
        }
    }
    prop_assert_eq!(query_terms(s), dedup);
    Ok(())
}

#[test]
fn every_char_in_context_gives_valid_terms() {
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        for s in [
            format!("{c}"),
            format!("a{c}Bc{c}"),
            format!("東{c}京{c}"),
            format!("-{c}_{c}."),
        ] {
            if let Err(e) = check_terms(&s) {
                panic!("U+{:04X} in {s:?}: {e}", c as u32);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_unicode(s in any::<String>()) {
        check_terms(&s)?;
    }

    #[test]
    fn wordy_text(s in "[a-zA-Z0-9_:.+#'’ \\-éÉßΣς東京都한국어かがｶﾞ\u{301}\u{3099}\u{0BC6}\u{0BBE}½ﬁİ\u{FDFA}⑴¨()\"*]{0,60}") {
        check_terms(&s)?;
    }

    #[test]
    fn long_runs(s in "[a-zA-Z_.\\-]{50,400}") {
        check_terms(&s)?;
    }
}

#[test]
fn blank_is_whitespace_controls_and_default_ignorables_only() {
    for s in [
        "",
        " \t\n",
        "\u{200b}",
        "\u{feff}\u{200d}\u{2060}",
        "\u{0}\u{7f}",
        "\u{00ad}",
        "\u{e0001}\u{fe0f}",
    ] {
        assert!(is_blank(s), "{s:?} is blank");
    }
    for s in ["a", "\u{200b}x", "東", "é", "🙂", "-", "\u{200b}1"] {
        assert!(!is_blank(s), "{s:?} is not blank");
    }
}
