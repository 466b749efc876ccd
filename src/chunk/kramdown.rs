//! kramdown, Jekyll's default Markdown, as a reader of the rendered page sees it.
//!
//! - Inline attribute lists (kramdown syntax, "Inline Attribute Lists"): `{: #id .class
//!   key="v"}` on a line of its own gives the block next to it attributes, and after a
//!   span (`[Go](x){: .btn }`) the span; never shown, never searched. Its `#id` after a
//!   heading is that heading's anchor, as `## Title {#id}` is. Attribute list definitions
//!   (`{:ref: …}`) and extensions (`{::options … /}`, `{:toc}`) have the same form.
//! - A block HTML element with `markdown="1"` (`<div class="x" markdown="1">`) holds
//!   Markdown: its opening and closing tag lines are markup, so a fence right after the
//!   opening tag is a fence (CommonMark alone would read it as part of an HTML block).

/// Longest attribute list read, in bytes (a longer `{:` … `}` is text).
const MAX_LIST_BYTES: usize = 256;

/// Whether `line` is only a kramdown attribute list (`{: .note .info}`, `{:#id}`,
/// `{::comment}`, `{:toc}`), at most three spaces indented.
pub(crate) fn is_attribute_line(line: &str) -> bool {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    let t = line.trim();
    indent <= 3 && list_len(t, true) == Some(t.len())
}

/// Byte length of the attribute list `s` starts with after a span or inside a line
/// (`{: .btn }` in `{: .btn } rest`), if it is one: `{: ` or `{:.` then `.class`, `#id`
/// or `key="v"` tokens then `}`, or an extension `{::name …}`. A bare word (`{:toc}`) or
/// an unspaced id (`{:#id}`) is a list only on a line of its own: inside a line, `{:x}`
/// and `{:#x}` are more often format strings. Reads at most 256 bytes.
pub(crate) fn span_len(s: &str) -> Option<usize> {
    list_len(s, false)
}

/// [`span_len`] of the bytes of a line from a `{:` (a line of many `{:` stays linear:
/// only the bytes up to the list's `}` are read).
pub(crate) fn span_len_at(bytes: &[u8]) -> Option<usize> {
    let close = bytes_to_close(bytes)?;
    span_len(std::str::from_utf8(&bytes[..close]).ok()?)
}

/// The index after the `}` of the list `bytes` starts with, within [`MAX_LIST_BYTES`].
fn bytes_to_close(bytes: &[u8]) -> Option<usize> {
    let inner = bytes.strip_prefix(b"{:")?;
    let window = &inner[..inner.len().min(MAX_LIST_BYTES)];
    Some(window.iter().position(|&b| b == b'}')? + 3)
}

fn list_len(s: &str, whole_line: bool) -> Option<usize> {
    let close = bytes_to_close(s.as_bytes())? - 3;
    let inner = &s[2..];
    let body = &inner[..close];
    // inside a line `{:#x}` is Rust's hex format: a span list starts `{: ` or `{:.`
    let spaced = body.starts_with([' ', '\t', '.', ':']);
    if body.contains('{') || (!whole_line && !spaced) {
        return None;
    }
    let extension =
        body.starts_with(':') && body[1..].starts_with(|c: char| c.is_ascii_alphabetic());
    (extension || tokens_ok(body, whole_line)).then_some(close + 3)
}

/// Every token of an attribute list body is an attribute (quoted values skipped); a
/// bare word only when `bare` allows it.
fn tokens_ok(body: &str, bare: bool) -> bool {
    let mut unquoted = String::new();
    let mut quote = None;
    for c in body.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, c) => unquoted.push(c),
        }
    }
    let word = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    quote.is_none()
        && !unquoted.trim().is_empty()
        && unquoted.split_whitespace().all(|t| {
            let t = t.trim_end_matches(':');
            match t.as_bytes().first() {
                None => false,
                Some(b'.' | b'#') => word(&t[1..]),
                Some(_) => match t.split_once('=') {
                    Some((k, _)) => word(k),
                    None => bare && word(t),
                },
            }
        })
}

/// The `#id` an attribute line sets (`{: #v4-4-1}` → `v4-4-1`), if any.
pub(crate) fn attribute_id(line: &str) -> Option<String> {
    if !is_attribute_line(line) {
        return None;
    }
    let t = line.trim();
    t[2..t.len() - 1]
        .split_whitespace()
        .find_map(|tok| tok.strip_prefix('#'))
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// The `#id` of the attribute list `span` (`{: #id .class }`, as [`span_len`] measured
/// it), if it sets one.
pub(crate) fn span_id(span: &str) -> Option<String> {
    span.strip_prefix("{:")?
        .strip_suffix('}')?
        .split_whitespace()
        .find_map(|tok| tok.strip_prefix('#'))
        .filter(|id| !id.is_empty())
        .map(str::to_string)
}

/// `line` without its attribute lists, outside inline code.
pub(crate) fn strip_spans(line: &str) -> String {
    if !line.contains("{:") {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    let mut rest = line;
    while let Some(at) = rest.find(['{', '`']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix('`') {
            in_code = !in_code;
            out.push('`');
            rest = after;
            continue;
        }
        match (!in_code).then(|| span_len(tail)).flatten() {
            Some(n) => rest = &tail[n..],
            None => {
                out.push('{');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The element name of a line that is only a block HTML opening tag with
/// `markdown="1"` (or `"block"`): `<div class="code-example" markdown="1">` → `div`.
pub(crate) fn markdown_block_open(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t.strip_prefix('<')?.strip_suffix('>')?;
    let name: String = inner
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let attrs = inner.get(name.len()..)?.to_ascii_lowercase();
    let markdown = [
        "markdown=\"1\"",
        "markdown='1'",
        "markdown=\"block\"",
        "markdown=1",
    ]
    .iter()
    .any(|a| attrs.contains(a));
    (!name.is_empty() && !inner.contains(['<', '>']) && markdown).then_some(name)
}

/// Whether `line` is only the closing tag of element `name` (`</div>`).
pub(crate) fn closes_block(line: &str, name: &str) -> bool {
    let t = line.trim();
    t.strip_prefix("</")
        .and_then(|r| r.strip_suffix('>'))
        .is_some_and(|n| n.trim().eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_lines_and_their_ids() {
        assert_eq!(attribute_id("{: #v4-4-1}").as_deref(), Some("v4-4-1"));
        assert_eq!(
            attribute_id("{:#theme-variables }").as_deref(),
            Some("theme-variables")
        );
        assert_eq!(attribute_id("{: .note #x .info}").as_deref(), Some("x"));
        assert_eq!(attribute_id("{: .note .info}"), None);
        assert!(is_attribute_line("{: .note .info}"));
        assert!(is_attribute_line("{:toc}"));
        assert!(is_attribute_line("{: title=\"a b\" .x}"));
        assert!(is_attribute_line("{::options parse_block_html=\"true\" /}"));
        for not in [
            "{:}",
            "{: }",
            "{::}",
            "{: :}",
            "{:a :}",
            "{: .x ::}",
            "    {: #code}",
            "a {: #x}",
            "{: a} b",
            "{: {x} }",
            "{x: 1}",
            "{:>10}",
        ] {
            assert!(!is_attribute_line(not), "{not}");
        }
    }

    #[test]
    fn spans_are_stripped_outside_code() {
        assert_eq!(strip_spans("[Link button](x){: .btn }"), "[Link button](x)");
        assert_eq!(strip_spans("> {: .new }"), "> ");
        assert_eq!(
            strip_spans("New (v0.4.0){: .label .label-green } and `{: .kept }`"),
            "New (v0.4.0) and `{: .kept }`"
        );
        for kept in [
            "format {:>10} stays",
            "hex {:x} and {:#x} and {:b}",
            "{: :} and {:a :}",
        ] {
            assert_eq!(strip_spans(kept), kept);
        }
        let long = format!("{}{}", "{:".repeat(50_000), "}");
        assert_eq!(
            strip_spans(&long),
            long,
            "a long run is text, read in linear time"
        );
    }

    #[test]
    fn markdown_blocks_open_and_close() {
        assert_eq!(
            markdown_block_open("<div class=\"code-example\" markdown=\"1\">").as_deref(),
            Some("div")
        );
        assert_eq!(markdown_block_open("<div class=\"x\">"), None);
        assert_eq!(markdown_block_open("<div markdown=\"1\">text</div>"), None);
        assert!(closes_block("</div>", "div") && !closes_block("</span>", "div"));
    }
}
