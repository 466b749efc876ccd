//! Inline HTML tags as a reader of the rendered page sees them: not at all. A line such
//! as `<dt class="option-term"><a href="#x"><code>--target-dir</code></a></dt>` shows
//! `--target-dir`. Tags are recognised as CommonMark's raw HTML (§6.6): `<name attrs>`,
//! `</name>`, `<name/>`, the name a letter then letters, digits, `-` (and `.` / `:` for
//! JSX and namespaced names), the attributes names with optional values (and JSX
//! `{…}`). Autolinks (`<https://x.org>`, `<a@b.org>`), comparisons (`a < b`, `a<b && c>d`),
//! key chords (`<Ctrl + C>`) and inline code (`` `<div>` ``) are not tags and stay. A
//! generic glued to a word (`Vec<u8>`, `Box<dyn Error>`: an opening tag right after a
//! letter or digit whose name is no inline HTML element) stays too. A removed `<br>` or
//! block tag leaves a space between the words it separated.

/// `line` without its inline HTML tags, outside inline code spans; a tag left open at
/// the end of the line (its `>` on a later line) stays as written.
pub fn strip_inline_tags(line: &str) -> String {
    if !line.contains('<') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    // a line break or block tag was removed: the words on either side stay apart
    let mut gap = false;
    let mut rest = line;
    while let Some(at) = rest.find(['<', '`']) {
        push_text(&mut out, &rest[..at], &mut gap);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix('`') {
            in_code = !in_code;
            push_text(&mut out, "`", &mut gap);
            rest = after;
            continue;
        }
        let before = &line[..line.len() - tail.len()];
        // an autolink (`<wiki:Page>`, `<a@b.org>`) is no tag: the reader sees its URI
        if let Some((_, end)) = super::display::autolink_at(tail, 0).filter(|_| !in_code) {
            push_text(&mut out, &tail[..end], &mut gap);
            rest = &tail[end..];
            continue;
        }
        let glued = before.chars().last().is_some_and(char::is_alphanumeric);
        match (!in_code).then(|| tag_len(tail, glued)).flatten() {
            Some(n) => {
                gap |= separates(tail);
                rest = &tail[n..];
            }
            None => {
                push_text(&mut out, "<", &mut gap);
                rest = &tail[1..];
            }
        }
    }
    push_text(&mut out, rest, &mut gap);
    out
}

/// Appends `text`, a space first when a removed tag separated it from what came before.
fn push_text(out: &mut String, text: &str, gap: &mut bool) {
    if text.is_empty() {
        return;
    }
    if std::mem::take(gap)
        && !out.is_empty()
        && !out.ends_with(char::is_whitespace)
        && !text.starts_with(char::is_whitespace)
    {
        out.push(' ');
    }
    out.push_str(text);
}

/// Whether the tag `s` starts with breaks the text as a line or block does (`<br>`,
/// `<p>`, `</li>`, `<td>`).
fn separates(s: &str) -> bool {
    let name: String = s[1..]
        .trim_start_matches('/')
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        name.as_str(),
        "br" | "hr"
            | "p"
            | "div"
            | "li"
            | "dt"
            | "dd"
            | "td"
            | "th"
            | "tr"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "blockquote"
            | "pre"
            | "section"
            | "details"
            | "summary"
    )
}

/// Most bytes of one tag read (a longer `<…` is text): a line of many `<` stays linear.
const MAX_TAG_BYTES: usize = 1024;

/// Inline HTML elements a word may be glued to (`x<sup>2</sup>`, `end<br>`); another
/// name right after a letter or digit is a generic (`Vec<u8>`, `Box<dyn Error>`).
const INLINE: [&str; 24] = [
    "a", "abbr", "b", "br", "cite", "code", "del", "em", "i", "img", "ins", "kbd", "mark", "q",
    "s", "samp", "small", "span", "strong", "sub", "sup", "u", "var", "wbr",
];

/// Byte length of the HTML tag `s` starts with (`s` starts with `<`), if it is one and
/// closes on this line. `glued`: the character before `<` is a letter or digit.
fn tag_len(s: &str, glued: bool) -> Option<usize> {
    let b = s.as_bytes();
    let closing = b.get(1) == Some(&b'/');
    let name_at = 1 + usize::from(closing);
    if !b.get(name_at)?.is_ascii_alphabetic() {
        return None;
    }
    let name_len = b[name_at..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b':'))
        .count();
    let name = s[name_at..name_at + name_len].to_ascii_lowercase();
    if glued && !closing && !INLINE.contains(&name.as_str()) {
        return None;
    }
    let after = name_at + name_len;
    match b.get(after)? {
        b'>' => Some(after + 1),
        b'/' if !closing => (b.get(after + 1) == Some(&b'>')).then_some(after + 2),
        c if c.is_ascii_whitespace() => attributes_end(b, after, closing),
        _ => None,
    }
}

/// Where the tag whose attributes start at `from` ends (after its `>`), if they are
/// attributes as CommonMark (§6.6) and JSX write them: white space, a name
/// (`[A-Za-z_:@#][\w.:-]*`), optionally `=` and a value (quoted, unquoted, or a JSX
/// `{…}`), or a JSX `{…spread}`. `None` when something else comes (`<Ctrl + C>`, `a<b &&
/// c>d`) or the tag does not close on this line.
fn attributes_end(b: &[u8], from: usize, closing: bool) -> Option<usize> {
    let end = b.len().min(from + MAX_TAG_BYTES);
    let skip_ws = |mut i: usize| {
        while i < end && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = from;
    loop {
        let spaced = skip_ws(i);
        let had_space = spaced > i;
        i = spaced;
        match *b.get(i).filter(|_| i < end)? {
            b'>' => return Some(i + 1),
            b'/' if !closing && b.get(i + 1) == Some(&b'>') => return Some(i + 2),
            _ if closing || !had_space => return None,
            b'{' => i = braces_end(b, i, end)?,
            c if c.is_ascii_alphabetic() || matches!(c, b'_' | b':' | b'@' | b'#') => {
                i += 1;
                while i < end
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'.' | b':' | b'-'))
                {
                    i += 1;
                }
                let eq = skip_ws(i);
                if b.get(eq) == Some(&b'=') {
                    i = value_end(b, skip_ws(eq + 1), end)?;
                }
            }
            _ => return None,
        }
    }
}

/// The end of an attribute value starting at `i`: quoted, a JSX `{…}`, or unquoted.
fn value_end(b: &[u8], i: usize, end: usize) -> Option<usize> {
    match *b.get(i).filter(|_| i < end)? {
        q @ (b'"' | b'\'') => {
            let close = b[i + 1..end].iter().position(|&c| c == q)?;
            Some(i + 1 + close + 1)
        }
        b'{' => braces_end(b, i, end),
        _ => {
            let n = b[i..end]
                .iter()
                .take_while(|c| {
                    !c.is_ascii_whitespace()
                        && !matches!(c, b'"' | b'\'' | b'=' | b'<' | b'>' | b'`')
                })
                .count();
            (n > 0).then_some(i + n)
        }
    }
}

/// The index after the `}` matching the `{` at `i` (quoted strings inside skipped).
fn braces_end(b: &[u8], i: usize, end: usize) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None);
    for (k, &c) in b.iter().enumerate().take(end).skip(i) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'' | b'`') => quote = Some(c),
            (None, b'{') => depth += 1,
            (None, b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The quoted value of attribute `name` inside `tag` (a range of `html`; `lower` is
/// `html` lower-cased) and its offset from the tag's start.
pub(crate) fn attribute<'h>(
    html: &'h str,
    lower: &str,
    tag: std::ops::Range<usize>,
    name: &str,
) -> Option<(usize, &'h str)> {
    let inside = lower.get(tag.clone())?;
    let mut search = 0;
    while let Some(i) = inside[search..].find(name) {
        let at = search + i;
        let before_ok = inside[..at].ends_with(|c: char| c.is_whitespace());
        let rest = inside[at + name.len()..].trim_start();
        if before_ok && rest.starts_with('=') {
            let value = rest[1..].trim_start();
            let quote = value.chars().next()?;
            if quote == '"' || quote == '\'' {
                let value_start = tag.start + (inside.len() - value.len()) + 1;
                let len = value[1..].find(quote)?;
                return Some((
                    value_start - tag.start,
                    html.get(value_start..value_start + len)?,
                ));
            }
        }
        search = at + name.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::strip_inline_tags as s;

    #[test]
    fn tags_go_text_stays() {
        assert_eq!(
            s(
                r##"    <dt class="option-term" id="o"><a class="option-anchor" href="#o"><code>--target-dir</code> <em>directory</em></a></dt>"##
            ),
            "    --target-dir directory"
        );
        assert_eq!(
            s(r#"<dd class="option-desc"><p>Build with the <code>release</code> profile.</p>"#),
            "Build with the release profile."
        );
        assert_eq!(s("Line one<br/>two<br />three<br>"), "Line one two three");
        assert_eq!(s("search.<br>Easily hosted"), "search. Easily hosted");
        assert_eq!(s("<td>a</td><td>b</td>"), "a b");
        assert_eq!(
            s(r#"<Tabs groupId={"os"} values={[{a: 1}]}>npm</Tabs>"#),
            "npm"
        );
        assert_eq!(s("<img src=\"a.png\" alt=\"x > y\"> after"), " after");
        assert_eq!(
            s("<Card {...props} title={`a ${b}`} :x=\"y\" @click=\"go\" open>t</Card>"),
            "t"
        );
        let many = "<a \"".repeat(20_000);
        assert_eq!(
            s(&many),
            many,
            "a line of many `<` is text, read in linear time"
        );
    }

    #[test]
    fn what_is_not_a_tag_stays() {
        for line in [
            "See <https://example.com/a> or <me@example.com>.",
            "if a < b and b > c",
            "`<div class=\"x\">` is code",
            "A `Vec<T>` and Vec<T> and Box<Node> and Option<&str>",
            "HashMap<K, V> holds pairs",
            "an unclosed <span class=\"x\"",
            "</ not a tag> <3 <-- arrow",
            "Press <Ctrl + Shift + P> to open it",
            "if a<b && c>d then",
            "Vec<u8> and Promise<void> and Box<dyn Error>",
        ] {
            assert_eq!(s(line), line, "{line}");
        }
    }

    #[test]
    fn closing_tags_glued_to_words_go() {
        assert_eq!(s("the end</p>"), "the end");
        assert_eq!(s("x<sup>2</sup>"), "x2");
    }
}
