//! What a reader sees of a passage's lines: HTML comments (`<!-- … -->`, over several
//! lines too), MDX comments (`{/* … */}`) and reference-style link definitions
//! (`[id]: https://…`) are hidden, and so are kramdown attribute lists (`{: .note}`)
//! and template tags closed on their line (`{{< x >}}`, `{{% x %}}`, `{% x %}`); character references (`&nbsp;`, `&lt;`) show
//! their characters; inline HTML tags are hidden, their text kept
//! ([`super::inline_html`]); links show their text (`[text](url)`,
//! `[text][id]`, `[text]`; an empty text shows the destination, autolinks their URI;
//! inline code as written); heading attributes (`{#id}`, `{ .class }`) are dropped; MyST
//! markup lines (`(label)=`, `% comment`, `+++`, [`super::myst`]) are hidden and a role
//! shows its code span (`` {ref}`x` `` → `` `x` ``).
//! Lines inside fenced code are shown as they are. Used for snippets and match lines;
//! passages themselves stay the exact lines of the file.

use super::fences::{FenceLine, NestedFence};
use super::inline_html::strip_inline_tags;

/// Each line of `text` as shown, or `None` when nothing of it is shown (inside a
/// comment, a link definition, a `<script>` or `<style>` element that starts a line, or
/// blank after hiding).
pub fn visible_lines(text: &str) -> Vec<Option<String>> {
    visible_lines_of(text, true)
}

/// [`visible_lines`] of a Markdown document (`markdown`), else of a plain-text one,
/// whose lines are all shown as written (`cp <input> <output>` is no HTML).
pub fn visible_lines_of(text: &str, markdown: bool) -> Vec<Option<String>> {
    if !markdown {
        return text
            .lines()
            .map(|l| (!l.trim().is_empty()).then(|| l.to_string()))
            .collect();
    }
    let mut out = Vec::new();
    let mut in_html = false;
    let mut in_mdx = false;
    let mut raw: Option<&'static str> = None;
    let mut fence: Option<NestedFence> = None;
    // open MyST prose directives (their fences), and whether option lines may follow
    let mut prose: Vec<(u8, usize)> = Vec::new();
    let mut options = false;
    // what template tags leave open at a line end (a tag over lines, a raw span)
    let mut tags = TagState::default();
    // inside a code shortcode (`{% highlight ruby %}` … `{% endhighlight %}`): code, shown
    // as it is between two fence lines, as the reader sees a code block
    let mut code_tag: Option<String> = None;
    let mut at = 0;
    for line in text.lines() {
        let line_start = at;
        at += line.len();
        at += if text[at..].starts_with("\r\n") {
            2
        } else {
            usize::from(text[at..].starts_with('\n'))
        };
        if let Some(close) = raw {
            if line.to_ascii_lowercase().contains(close) {
                raw = None;
            }
            out.push(None);
            continue;
        }
        if !in_html && !in_mdx && fence.is_none() {
            if let Some(close) = raw_element_open(line) {
                if !line.to_ascii_lowercase().contains(close) {
                    raw = Some(close);
                }
                out.push(None);
                continue;
            }
        }
        if let Some(name) = &code_tag {
            if super::templates::closes_code(line, name) {
                code_tag = None;
                out.push(Some("```".to_string()));
            } else {
                out.push(Some(line.to_string()));
            }
            continue;
        }
        if fence.is_none() && !in_html && !in_mdx {
            if let Some(name) = super::templates::code_opener(line) {
                code_tag = Some(name);
                out.push(Some("```".to_string()));
                continue;
            }
        }
        if let Some(f) = fence {
            match f.at(line) {
                FenceLine::Leaves => fence = None,
                at => {
                    if at == FenceLine::Closes {
                        fence = None;
                    }
                    out.push(Some(line.to_string()));
                    continue;
                }
            }
        }
        // a MyST prose directive (```` ```{note} Title ````): its title is shown, its
        // option lines and fences are not, its body is prose (a fence in it is code)
        if options && super::myst::is_option_line(line) {
            out.push(None);
            continue;
        }
        options = false;
        if !in_html && !in_mdx {
            if prose
                .last()
                .is_some_and(|&f| super::fences::closes_fence(line, f))
            {
                prose.pop();
                out.push(None);
                continue;
            }
            if let Some((f, title)) = super::myst::prose_directive(line) {
                prose.push(f);
                options = true;
                out.push((!title.is_empty()).then(|| display_line(title)));
                continue;
            }
        }
        if !in_html && !in_mdx {
            if let Some(f) = NestedFence::open(line) {
                fence = Some(f);
                out.push(Some(line.to_string()));
                continue;
            }
            if is_link_definition(line)
                || super::kramdown::is_attribute_line(line)
                || super::myst::is_markup(line)
            {
                out.push(None);
                continue;
            }
        }
        let untagged = strip_template_tags(text, line_start, line.len(), &mut tags);
        let shown = strip_comments(&untagged, &mut in_html, &mut in_mdx);
        let shown = strip_inline_tags(&super::kramdown::strip_spans(&shown));
        let shown = decode_entities(&render_links(&strip_heading_attributes(&shown)));
        // a line of only blockquote markers (`> ` after hiding `{: .note}`) shows nothing
        out.push(if shown.trim().trim_start_matches(['>', ' ']).is_empty() {
            None
        } else {
            Some(shown)
        });
    }
    out
}

/// The closing tag of the `<script>` or `<style>` element `line` starts with, if any.
fn raw_element_open(line: &str) -> Option<&'static str> {
    let t = line.trim_start().as_bytes();
    [("<script", "</script>"), ("<style", "</style>")]
        .into_iter()
        .find(|(open, _)| {
            t.len() >= open.len()
                && t[..open.len()].eq_ignore_ascii_case(open.as_bytes())
                && matches!(t.get(open.len()), None | Some(b' ' | b'\t' | b'>' | b'/'))
        })
        .map(|(_, close)| close)
}

/// One line as shown, out of context (a line inside a multi-line comment that does not
/// open it is shown as is): for a snippet of a single line.
pub fn display_line(line: &str) -> String {
    let (mut a, mut b) = (false, false);
    if is_link_definition(line)
        || super::kramdown::is_attribute_line(line)
        || super::myst::is_markup(line)
    {
        return String::new();
    }
    let untagged = strip_template_tags(line, 0, line.len(), &mut TagState::default());
    let shown = strip_comments(&untagged, &mut a, &mut b);
    let shown = strip_inline_tags(&super::kramdown::strip_spans(&shown));
    decode_entities(&render_links(&strip_heading_attributes(&shown)))
}

/// HTML character references as the reader sees them, outside inline code (where
/// CommonMark keeps them literal): `&nbsp;` a space, `&lt;` `<`, `&amp;` `&`, `&quot;`,
/// `&apos;`, `&#39;`, `&#x2014;`; an unknown name stays as written.
fn decode_entities(line: &str) -> String {
    if !line.contains('&') {
        return line.to_string();
    }
    line.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                part.to_string()
            } else {
                decode_references(part)
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

fn decode_references(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest[1..].find(';').map(|e| e + 1).filter(|&e| e <= 10);
        let decoded = end.and_then(|e| entity(&rest[1..e]));
        match (decoded, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character an entity name (between `&` and `;`) stands for.
fn entity(name: &str) -> Option<char> {
    let named = match name {
        "nbsp" | "ensp" | "emsp" | "thinsp" => Some(' '),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "mdash" => Some('—'),
        "ndash" => Some('–'),
        "hellip" => Some('…'),
        "copy" => Some('©'),
        "vert" | "verbar" => Some('|'),
        "times" => Some('×'),
        "rarr" => Some('→'),
        "larr" => Some('←'),
        "le" => Some('≤'),
        "ge" => Some('≥'),
        "ne" => Some('≠'),
        "minus" => Some('−'),
        "middot" => Some('·'),
        "bull" => Some('•'),
        "deg" => Some('°'),
        "reg" => Some('®'),
        "trade" => Some('™'),
        "lsquo" => Some('‘'),
        "rsquo" => Some('’'),
        "ldquo" => Some('“'),
        "rdquo" => Some('”'),
        "laquo" => Some('«'),
        "raquo" => Some('»'),
        _ => None,
    };
    named.or_else(|| {
        let num = name.strip_prefix('#')?;
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        char::from_u32(code).filter(|c| !c.is_control())
    })
}

/// The line of `text` at `start..start + len` without its template tags
/// (`{{< new-in 0.1 />}}`, `{{% include "x.md" %}}`, `{% raw %}`: markup of the site
/// generator, never shown), as the chunker finds them ([`super::templates::tag_at`]) and
/// outside inline code. A tag running past the line hides `text` up to `*until`, which
/// the next lines honour; the text between `{% raw %}` and `{% endraw %}` is literal,
/// shown as written.
fn strip_template_tags(text: &str, start: usize, len: usize, state: &mut TagState) -> String {
    let bytes = text.as_bytes();
    let end = start + len;
    let mut out = String::new();
    let mut from = start.max(state.until.min(end));
    let mut k = from;
    let mut in_code = false;
    while k < end {
        if state.raw {
            match super::templates::endraw_on_line(bytes, k, end) {
                Some((at, close)) => {
                    out.push_str(&text[from..at]);
                    (from, k, state.raw) = (close, close, false);
                    continue;
                }
                None => break,
            }
        }
        match bytes[k] {
            b'`' => in_code = !in_code,
            b'{' if !in_code => {
                if let Some((_, close)) = super::templates::tag_at(bytes, k) {
                    out.push_str(&text[from..k]);
                    if close <= end {
                        state.raw = super::templates::raw_tag(&bytes[k..close]) == Some(true);
                    }
                    from = close.min(end);
                    state.until = close;
                    k = from;
                    continue;
                }
            }
            _ => {}
        }
        k += 1;
    }
    out.push_str(&text[from..end]);
    out
}

/// What template tags leave open at the end of a line: a tag running on to byte `until`
/// of the text, or a `{% raw %}` span.
#[derive(Default)]
struct TagState {
    until: usize,
    raw: bool,
}

/// `[label]: destination` at the start of a line (up to three spaces of indent).
pub(crate) fn is_link_definition(line: &str) -> bool {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let Some(body) = rest.strip_prefix('[') else {
        return false;
    };
    let Some(close) = body.find("]:") else {
        return false;
    };
    let label = &body[..close];
    !label.is_empty()
        && !label.starts_with('^')
        && !label.contains(']')
        && !body[close + 2..].trim().is_empty()
}

/// Removes `<!-- … -->` and `{/* … */}` spans, carrying an open comment to the next line.
fn strip_comments(line: &str, in_html: &mut bool, in_mdx: &mut bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if *in_html {
            match rest.find("-->") {
                Some(i) => {
                    rest = &rest[i + 3..];
                    *in_html = false;
                }
                None => return out,
            }
        } else if *in_mdx {
            match rest.find("*/}") {
                Some(i) => {
                    rest = &rest[i + 3..];
                    *in_mdx = false;
                }
                None => return out,
            }
        }
        let html = rest.find("<!--");
        let mdx = rest.find("{/*");
        match (html, mdx) {
            (Some(h), m) if m.is_none_or(|m| h < m) => {
                out.push_str(&rest[..h]);
                rest = &rest[h + 4..];
                *in_html = true;
            }
            (_, Some(m)) => {
                out.push_str(&rest[..m]);
                rest = &rest[m + 3..];
                *in_mdx = true;
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Drops a trailing `{#id …}` / `{ .class }` attribute block of a heading line.
pub(crate) fn strip_heading_attributes(line: &str) -> String {
    if !line.trim_start().starts_with('#') {
        return line.to_string();
    }
    let t = line.trim_end();
    if t.ends_with('}') {
        if let Some(open) = t.rfind('{') {
            if is_attribute_block(&t[open + 1..t.len() - 1]) {
                return t[..open].trim_end().to_string();
            }
        }
    }
    line.to_string()
}

/// The inside of `{…}` as heading attributes: `#id`, `.class`, `key=value` and bare
/// `key` tokens only (what pulldown-cmark and Python-Markdown's attr_list accept).
pub fn is_attribute_block(inner: &str) -> bool {
    let word = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == ':')
    };
    let mut any = false;
    for tok in inner.split_whitespace() {
        any = true;
        let ok = match tok.as_bytes()[0] {
            b'#' | b'.' => word(&tok[1..]),
            _ => match tok.split_once('=') {
                Some((k, v)) => word(k) && !v.is_empty(),
                None => word(tok),
            },
        };
        if !ok {
            return false;
        }
    }
    any
}

/// Links as the reader sees them: `[text](dest)`, `[text][ref]`, `[text][]` → `text`
/// (an empty text shows its destination: MyST's `[](#label)` shows the target's title,
/// which the line does not hold); images `![alt](src)` → `alt`; autolinks
/// (`<https://x.org>`, `<wiki:Page>`) → their URI; a MyST role before a code span
/// (`` {ref}`label` ``) → the code span. Inline code is shown as written.
fn render_links(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'`' {
            let end = super::fences::skip_code_span(b, i);
            out.push_str(&line[i..end]);
            i = end;
            continue;
        }
        if let Some(n) = role_len(&line[i..]) {
            i += n;
            continue;
        }
        if let Some((uri, end)) = autolink_at(line, i) {
            out.push_str(uri);
            i = end;
            continue;
        }
        let image = b[i] == b'!' && b.get(i + 1) == Some(&b'[');
        let open = if image { i + 1 } else { i };
        if b[open] == b'[' {
            if let Some((text, target, end)) = link_at(line, open) {
                // an image with no alt text shows nothing, as a reader sees no text
                let empty = text.trim().is_empty() && !image;
                out.push_str(if empty { target } else { text });
                i = end;
                continue;
            }
        }
        let ch = line[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// `s` without the MyST role names before its code spans (`` The {myst:directive}`embed`
/// directive `` → `` The `embed` directive ``): what a heading shows.
pub(crate) fn strip_roles(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains("}`") {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        // a code span is shown as written (`` `{embed}` `` is no role)
        if s.as_bytes()[i] == b'`' {
            let end = super::fences::skip_code_span(s.as_bytes(), i);
            out.push_str(&s[i..end]);
            i = end;
            continue;
        }
        if let Some(n) = role_len(&s[i..]) {
            i += n;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    std::borrow::Cow::Owned(out)
}

/// Byte length of the MyST role name `s` starts with when a code span follows it
/// (`{ref}`, `{myst:directive}` before `` ` ``), else `None`.
pub(crate) fn role_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('{')?;
    let name_len = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'+' | b'-'))
        .count();
    let first_alpha = rest.as_bytes().first().is_some_and(u8::is_ascii_alphabetic);
    (first_alpha && rest[name_len..].starts_with("}`")).then_some(name_len + 2)
}

/// The URI of the CommonMark autolink at byte `at` (`<scheme:…>`, a scheme of 2–32
/// letters, digits, `+`, `.`, `-`, then no space, `<` or `>` up to the `>`; or an e-mail
/// address), and the byte after it.
pub(crate) fn autolink_at(line: &str, at: usize) -> Option<(&str, usize)> {
    let rest = line.get(at..)?.strip_prefix('<')?;
    let end = rest.find(['>', '<', ' ', '\t'])?;
    if rest.as_bytes()[end] != b'>' {
        return None;
    }
    let uri = &rest[..end];
    let scheme_ok = uri.split_once(':').is_some_and(|(scheme, _)| {
        (2..=32).contains(&scheme.len())
            && scheme.as_bytes()[0].is_ascii_alphabetic()
            && scheme
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
    });
    let email = !scheme_ok
        && uri.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty() && host.contains('.') && !host.contains('@') && !uri.contains('/')
        });
    (scheme_ok || email).then_some((uri, at + 1 + end + 1))
}

/// A link starting with `[` at byte `open`: its text, its destination (or reference)
/// and the byte after it.
fn link_at(line: &str, open: usize) -> Option<(&str, &str, usize)> {
    let close = open + 1 + line[open + 1..].find(']')?;
    let text = &line[open + 1..close];
    let after = &line[close + 1..];
    let (target, tail) = if let Some(dest) = after.strip_prefix('(') {
        let end = dest.find(')')?;
        // `(dest "title")`: the destination alone
        let d = dest[..end].split_whitespace().next().unwrap_or("");
        (d.trim_start_matches('<').trim_end_matches('>'), end + 2)
    } else if let Some(r) = after.strip_prefix('[') {
        let end = r.find(']')?;
        (&r[..end], end + 2)
    } else {
        return None;
    };
    Some((text, target, close + 1 + tail))
}

/// `s` with control characters escaped (`\u{1b}`), for names from outside (file paths,
/// headings) in human-readable output: a file name cannot move the cursor or colour
/// the terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Longest name (a heading path, a title) a line of text output shows, in characters.
pub const MAX_NAME_CHARS: usize = 200;

/// `s` as a name in one line of text output: [`printable`], and cut to
/// [`MAX_NAME_CHARS`] characters with `…` (a 48 KB heading must not fill a result line;
/// JSON keeps it whole).
pub fn name_field(s: &str) -> String {
    let p = printable(s);
    match p.char_indices().nth(MAX_NAME_CHARS) {
        Some((at, _)) => format!("{}…", &p[..at]),
        None => p.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_definitions_and_links_are_not_shown() {
        let text = "Intro <!-- hidden --> text\n<!--\nmulti\nline -->\nafter {/* mdx note */} it\n[inst]: https://example.com/install\nSee [the guide][inst] and [docs](https://x.org).\n```\n<!-- kept in code -->\n```\n";
        let v = visible_lines(text);
        assert_eq!(v[0].as_deref(), Some("Intro  text"));
        assert_eq!(
            (v[1].as_deref(), v[2].as_deref(), v[3].as_deref()),
            (None, None, None)
        );
        assert_eq!(v[4].as_deref(), Some("after  it"));
        assert_eq!(v[5], None);
        assert_eq!(v[6].as_deref(), Some("See the guide and docs."));
        assert_eq!(v[8].as_deref(), Some("<!-- kept in code -->"));
    }

    #[test]
    fn script_and_style_elements_are_not_shown() {
        let text = "<script setup>\nimport { data } from './x.data'\n</script>\nMeet the team.\n<style scoped>.a { gap: 1px }</style>\n<Scripted>kept</Scripted>\n```html\n<script>\nin code\n</script>\n```\n";
        let v = visible_lines(text);
        assert_eq!(
            (v[0].as_deref(), v[1].as_deref(), v[2].as_deref()),
            (None, None, None)
        );
        assert_eq!(v[3].as_deref(), Some("Meet the team."));
        assert_eq!(v[4], None);
        assert!(v[5].as_deref().is_some_and(|l| l.contains("kept")));
        assert_eq!(v[8].as_deref(), Some("in code"));
    }

    #[test]
    fn template_tags_are_hidden_over_lines_and_kept_in_code() {
        let shown = visible_lines(
            "Use the `{% include x %}` tag.\n{{< figure\n  src=\"x.png\"\n>}} After.\nPlain {{% note %}} end.\n",
        );
        assert_eq!(
            shown,
            vec![
                Some("Use the `{% include x %}` tag.".to_string()),
                None,
                None,
                Some(" After.".to_string()),
                Some("Plain  end.".to_string()),
            ]
        );
        // a stray opener hides nothing
        assert_eq!(
            visible_lines("50{% of it\n\nx %}\n")[0].as_deref(),
            Some("50{% of it")
        );
        // a code shortcode's body is code, shown as it is between fence lines
        let shown = visible_lines("{% highlight ruby %}\n# a comment\n{% post_url 2018-x %}\n{% endhighlight %}\nAfter.\n");
        let want = [
            "```",
            "# a comment",
            "{% post_url 2018-x %}",
            "```",
            "After.",
        ];
        assert_eq!(shown, want.map(|w| Some(w.to_string())).to_vec());
    }

    #[test]
    fn character_references_are_shown_as_their_characters() {
        assert_eq!(
            display_line("an&nbsp;`index.md`&nbsp;file &lt;T&gt; &amp;&#39;&#x2014; &bogus; a & b"),
            "an `index.md` file <T> &'— &bogus; a & b"
        );
        assert_eq!(
            display_line("write `&nbsp;` for &nbsp;"),
            "write `&nbsp;` for  "
        );
        // tags go first, so an escaped `&lt;T&gt;` is shown, not taken for a tag
        assert_eq!(
            display_line("| <code>pat &vert; pat</code> | &lt;T&gt; &rarr; x |"),
            "| pat | pat | <T> → x |"
        );
        let shown = visible_lines("a&lt;b\n```\n&lt;kept&gt;\n```\n");
        assert_eq!(shown[0].as_deref(), Some("a<b"));
        assert_eq!(shown[2].as_deref(), Some("&lt;kept&gt;"));
    }

    #[test]
    fn a_myst_prose_directive_shows_its_title_and_prose_and_keeps_its_code() {
        let text = "````{seealso} Further [reading](x.md)\n:class: dropdown\nSee [the guide](./g.md).\n```python\n[a](b)\n```\n````\nafter\n```{code-block} python\n[c](d)\n```\n";
        let v = visible_lines(text);
        assert_eq!(v[0].as_deref(), Some("Further reading"));
        assert_eq!(v[1], None, "an option line");
        assert_eq!(v[2].as_deref(), Some("See the guide."));
        assert_eq!(
            v[4].as_deref(),
            Some("[a](b)"),
            "a fence in the body is code"
        );
        assert_eq!(v[6], None, "the closer");
        assert_eq!(v[7].as_deref(), Some("after"));
        assert_eq!(v[9].as_deref(), Some("[c](d)"), "a code directive is code");
    }

    #[test]
    fn roles_show_their_code_span_and_code_spans_stay_as_written() {
        assert_eq!(
            display_line("![](images/arch.png)"),
            "",
            "an image without alt text"
        );
        assert_eq!(display_line("![Arch](images/arch.png)"), "Arch");
        assert_eq!(
            strip_roles("The {myst:directive}`embed` directive"),
            "The `embed` directive"
        );
        assert_eq!(
            strip_roles("`{embed}` vs. `{include}`"),
            "`{embed}` vs. `{include}`"
        );
        assert_eq!(
            strip_roles("``a `{b}` c`` and {ref}`x`"),
            "``a `{b}` c`` and `x`"
        );
        assert_eq!(
            display_line("Use `{ref}`x`` or {ref}`x` and `[a](b)` [](#t) <wiki:Page>"),
            "Use `{ref}`x`` or `x` and `[a](b)` #t wiki:Page"
        );
    }

    #[test]
    fn heading_attributes_are_dropped() {
        assert_eq!(display_line("## Install {#setup}"), "## Install");
        assert_eq!(
            display_line("### Changes { data-search-exclude }"),
            "### Changes"
        );
        assert_eq!(display_line("## Path {a b}c"), "## Path {a b}c");
        assert_eq!(display_line("## Braces {1 + 2}"), "## Braces {1 + 2}");
        assert_eq!(
            display_line("### Tabs { #tabs data-toc-label=Tabs }"),
            "### Tabs"
        );
        assert_eq!(
            display_line("Text {#not-a-heading}"),
            "Text {#not-a-heading}"
        );
        assert!(is_link_definition("[a-b]: <https://x>"));
        assert!(!is_link_definition("[^1]: footnote"));
        assert!(!is_link_definition("    [x]: y"));
    }
}
