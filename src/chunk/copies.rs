//! Copies of one block on many pages: a fingerprint of a chunk's heading and text, so the
//! graph can tell a template section (the Cargo book's `Manifest Options`, repeated word
//! for word on 30 command pages) from a section written once.

/// Shortest normalised body (characters) that is fingerprinted: below it (`Coming soon`,
/// `None.`) two pages agreeing says nothing. Short blocks are copies too: a `SEE ALSO`
/// line, pnpm's `--json`: "Log output in JSON format" (25); 12 and 40 give the same
/// hybrid figures on every set (`benches/QUALITY.md`, round 7).
const MIN_BODY: usize = 12;

/// A fingerprint of a chunk's own heading (`heading`, the last of its heading path) and
/// its plain text (`body`, `Chunk::body`): the first 8 bytes of the sha256 of their
/// words, lowercased and joined by single spaces, so wrapping, case and punctuation do
/// not count. 0 when the body is shorter than 12 characters so normalised (no
/// fingerprint). The heading counts so that a page's opening section, titled with the
/// page's own name, is no copy although its body is a notice every page of a group
/// opens with. Stable across builds and machines (stored in `copies.json`).
pub fn copy_fingerprint(heading: &str, body: &str) -> u64 {
    let body = words(body);
    if body.chars().count() < MIN_BODY {
        return 0;
    }
    let mut text = words(heading);
    text.push('\n');
    text.push_str(&body);
    crate::hashing::sha256_u64(text.as_bytes()).max(1)
}

/// The words of `text`, lowercased and joined by single spaces.
fn words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(w.chars().flat_map(char::to_lowercase));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::copy_fingerprint;

    const BODY: &str = "Path to the `Cargo.toml` file. By default, Cargo searches\nfor it.";

    #[test]
    fn wrapping_case_and_punctuation_do_not_count() {
        let a = copy_fingerprint("Manifest Options", BODY);
        let b = copy_fingerprint(
            "manifest options",
            "path to the Cargo.toml file -- by default Cargo searches for it",
        );
        assert_eq!(a, b);
        assert_ne!(a, 0);
        let c = copy_fingerprint(
            "Manifest Options",
            "Path to the `Cargo.toml` file. By default, Cargo looks for it.",
        );
        assert_ne!(a, c);
    }

    #[test]
    fn another_heading_is_another_section() {
        let a = copy_fingerprint("Manifest Options", BODY);
        assert_ne!(a, copy_fingerprint("Environment API for Plugins", BODY));
        assert_ne!(a, copy_fingerprint("", BODY));
    }

    #[test]
    fn a_short_body_has_no_fingerprint() {
        assert_eq!(copy_fingerprint("Status", "Coming soon."), 0);
        assert_eq!(
            copy_fingerprint("A long heading that says a lot about it", ""),
            0
        );
        assert_ne!(
            copy_fingerprint("Status", "Coming soon: a page about every option we have."),
            0
        );
    }
}
