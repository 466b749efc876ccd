//! Template markup of static site generators, which the generator replaces and a reader
//! never sees: Hugo shortcodes (`{{< name args >}}`, `{{% name args %}}`, their closers
//! `{{< /name >}}`) and Liquid/Jinja tags (`{% include x.md %}`, Jekyll, mkdocs-macros).
//!
//! The chunker blanks them from the parse copy like comments (never indexed, never a
//! snippet), keeps what an include or reference tag points at as a link, and reads the
//! body of a code shortcode (`{{< highlight go >}} … {{< /highlight >}}`, Jekyll's
//! `{% highlight ruby %} … {% endhighlight %}`) as a fenced code block: Hugo passes it to
//! the shortcode raw, so a `# comment` inside is no heading.

use super::fences::NestedFence;

/// Opening and closing delimiters of a template tag, longest opener first: Hugo
/// shortcodes, Liquid/Jinja output (`{{ site.baseurl }}`) and tags, and the code
/// includes of mkdocs sites (FastAPI's `{* ../../docs_src/app.py hl[3] *}`, markdown-include's
/// `{!> ../../docs_src/app.py !}`), which the site replaces with a file's code.
pub(crate) const TAGS: [(&[u8], &[u8]); 6] = [
    (b"{{<", b">}}"),
    (b"{{%", b"%}}"),
    (b"{{", b"}}"),
    (b"{%", b"%}"),
    (b"{*", b"*}"),
    (b"{!", b"!}"),
];

/// A tag not closed within this many bytes of its opener is text, not a tag (a stray
/// `{%` in prose must not hide the rest of a document).
pub(crate) const MAX_TAG_BYTES: usize = 4096;

/// Tags whose first argument names another document (Hugo `include`/`readfile` in
/// documentation sites, `ref`/`relref`; Jekyll `include`, `include_relative`, `link`).
const POINTING: [&str; 6] = [
    "include",
    "include_relative",
    "readfile",
    "ref",
    "relref",
    "link",
];

/// Code shortcodes: their body is code, not Markdown.
const CODE: [&str; 5] = [
    "highlight",
    "code",
    "code-toggle",
    "codeblock",
    "code-block",
];

/// The tag opening at `bytes[k]` if it closes within [`MAX_TAG_BYTES`]: its closing
/// delimiter and the offset just past it. A tag may run over several lines but never
/// past a blank line or a fence line (a stray opener must not hide a code block or the
/// text after it).
pub(crate) fn tag_at(bytes: &[u8], k: usize) -> Option<(&'static [u8], usize)> {
    let (open, close) = TAGS.iter().find(|(o, _)| bytes[k..].starts_with(o))?;
    let from = k + open.len();
    let mut end = bytes.len().min(k + MAX_TAG_BYTES);
    let mut i = from;
    while i < end {
        if bytes[i] == b'\n' {
            let next = &bytes[i + 1..end];
            let line_end = next.iter().position(|&b| b == b'\n').unwrap_or(next.len());
            let line = std::str::from_utf8(&next[..line_end]).unwrap_or("");
            if line.trim().is_empty() || NestedFence::open(line).is_some() {
                end = i;
                break;
            }
        }
        i += 1;
    }
    let window = &bytes[from..end];
    let at = window.windows(close.len()).position(|w| w == *close)?;
    let tag_end = from + at + close.len();
    if matches!(*open, b"{*" | b"{!") && !whole_line(bytes, k, tag_end) {
        // a code include is a line of its own; `x^{*}` twice in a sentence or a glob
        // `{*,.*}` is text
        return None;
    }
    Some((close, tag_end))
}

/// Whether `bytes[k..end]` is all its line holds, but for white space around it.
fn whole_line(bytes: &[u8], k: usize, end: usize) -> bool {
    let starts = bytes[..k]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|b| b.is_ascii_whitespace());
    let ends = bytes[end..]
        .iter()
        .take_while(|&&b| b != b'\n')
        .all(|b| b.is_ascii_whitespace());
    starts && ends && !bytes[k..end].contains(&b'\n')
}

/// Whether the tag at `bytes[k..end]` takes the place of a URL: it begins one and more
/// of the URL follows it (`({{ site.repository }}/issues/9)`), or it is the destination
/// of a link definition (`[2]: {{ site.repository }}/issues`, `[F]: {% link a.md %}`).
/// Blanked, the rest would read as a path of this site, or a definition would take the
/// next line for its destination.
pub(crate) fn prefixes_a_url(bytes: &[u8], k: usize, end: usize) -> bool {
    let before = &bytes[..k];
    let spaces = before
        .iter()
        .rev()
        .take_while(|&&b| b == b' ' || b == b'\t')
        .count();
    // `[2]: {{ site.repository }}/issues`: the destination of a link definition
    let definition = spaces > 0 && before[..k - spaces].ends_with(b"]:");
    let after_open = k > 0 && matches!(bytes[k - 1], b'(' | b'"' | b'\'' | b'=' | b'<');
    let more = bytes
        .get(end)
        .is_some_and(|b| !matches!(b, b')' | b'"' | b'\'' | b'>' | b' ' | b'\t' | b'\n' | b'\r'));
    definition || (after_open && more)
}

/// The site path a Liquid output tag writes, when it writes one of this site's own URLs:
/// `{{ site.baseurl }}` and `{{ site.url }}` the site's root (`""`), `{{ '/docs/x/' |
/// relative_url }}` (also `absolute_url`, `prepend: site.baseurl`) its path. The link
/// it starts is then a path of the site, resolved like any other.
pub(crate) fn site_root_path(tag: &str) -> Option<String> {
    let inner = tag
        .strip_prefix("{{")?
        .strip_suffix("}}")?
        .trim_matches(['-', ' ', '\t']);
    if matches!(inner, "site.baseurl" | "site.url") {
        return Some(String::new());
    }
    let (value, filter) = inner.split_once('|')?;
    let filter = filter.trim();
    let own = matches!(filter, "relative_url" | "absolute_url")
        || filter.strip_prefix("prepend:").map(str::trim) == Some("site.baseurl");
    let value = value.trim();
    let path = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))?;
    (own && !path.contains(['{', '}', '"', '\''])).then(|| path.to_string())
}

/// Overwrites a tag (4 bytes or more: `{%%}` is the shortest) with `tpl:` and underscores,
/// same length, ASCII: a URL starting with it has a scheme, so it is an external link,
/// never a broken path of the site.
pub(crate) fn fill_placeholder_scheme(tag: &mut [u8]) {
    tag.fill(b'_');
    if tag.len() >= 4 {
        tag[..4].copy_from_slice(b"tpl:");
    }
}

/// The name and first argument of a tag's text (`{{% include "/_common/x.md" %}}` →
/// (`include`, `/_common/x.md`)), a leading `-` (Jinja's white-space control) skipped.
/// An escaped Hugo shortcode (`{{</* x */>}}`) names `/*`, which is no tag name.
fn name_and_argument(tag: &str) -> Option<(&str, &str)> {
    let inner = tag
        .trim_start_matches(['{', '<', '%', '-'])
        .trim_end_matches(['}', '>', '%', '-'])
        .trim();
    let mut parts = inner.split_whitespace();
    let name = parts.next()?;
    let arg = parts
        .next()
        .unwrap_or("")
        .trim_matches(['"', '\'', '`'])
        .trim();
    Some((name, arg))
}

/// Whether `tag` (a whole tag's bytes) is Liquid's `{% raw %}` (`Some(true)`) or
/// `{% endraw %}` (`Some(false)`): the text between them is literal, shown as written.
pub(crate) fn raw_tag(tag: &[u8]) -> Option<bool> {
    if !tag.starts_with(b"{%") || tag.starts_with(b"{%%") {
        return None;
    }
    let (name, _) = name_and_argument(std::str::from_utf8(tag).ok()?)?;
    match name {
        "raw" => Some(true),
        "endraw" => Some(false),
        _ => None,
    }
}

/// Where the `{% endraw %}` tag after `bytes[k]` on the line ending at `line_end` starts
/// and ends, if it is on this line.
pub(crate) fn endraw_on_line(bytes: &[u8], k: usize, line_end: usize) -> Option<(usize, usize)> {
    (k..line_end)
        .filter(|&j| bytes[j..line_end].starts_with(b"{%"))
        .find_map(|j| {
            let (_, end) = tag_at(bytes, j)?;
            (end <= line_end && raw_tag(&bytes[j..end]) == Some(false)).then_some((j, end))
        })
}

/// What an include or reference tag points at, if `tag` is one (`{% include_relative
/// usage.md %}` → `usage.md`).
/// An include of a file that is no document (Jekyll's `{% include badge.html %}`, a
/// layout partial in `_includes/`) is markup of the site, not a link.
pub(crate) fn pointed_target(tag: &str) -> Option<String> {
    let (name, arg) = name_and_argument(tag)?;
    let name = name.trim_start_matches('/');
    let partial = name != "ref" && name != "relref" && name != "link" && !is_document_file(arg);
    if !POINTING.contains(&name) || arg.is_empty() || arg.contains("{{") || partial {
        return None;
    }
    // Jekyll's `{% link path %}` names a file from the site's root
    Some(match name {
        "link" if !arg.starts_with('/') => format!("/{arg}"),
        _ => arg.to_string(),
    })
}

/// Liquid/Jinja block tags that are control flow or literal text, not a box the page
/// shows: a heading inside `{% if %}` is a heading of the page.
const NOT_BOXES: [&str; 22] = [
    "if",
    "unless",
    "case",
    "for",
    "tablerow",
    "capture",
    "comment",
    "raw",
    "block",
    "macro",
    "call",
    "filter",
    "set",
    "with",
    "autoescape",
    "trans",
    "verbatim",
    "blocktrans",
    "spaceless",
    "apply",
    "cache",
    "sandbox",
];

/// The block tag a whole line is, if any: its name and whether it closes
/// (`{% hint style="info" %}` → (`hint`, false), `{% endhint %}` → (`hint`, true),
/// `{{< tab "Go" >}}` → (`tab`, false), `{{< /tab >}}` → (`tab`, true)). Control-flow
/// tags ([`NOT_BOXES`]) and inline output (`{{ x }}`) are none.
pub(crate) fn block_tag(line: &str) -> Option<(&str, bool)> {
    let t = line.trim();
    let b = t.as_bytes();
    let (open, close) = TAGS
        .iter()
        .find(|(o, c)| b.starts_with(o) && b.ends_with(c) && b.len() >= o.len() + c.len())?;
    if *open == b"{{".as_slice() || t[open.len()..t.len() - close.len()].contains(['{', '}']) {
        return None;
    }
    let (name, _) = name_and_argument(t)?;
    let (name, closes) = match (open, name.strip_prefix('/'), name.strip_prefix("end")) {
        (o, Some(n), _) if o.starts_with(b"{{") => (n, true),
        (o, _, Some(n)) if *o == b"{%".as_slice() && !n.is_empty() => (n, true),
        _ => (name, false),
    };
    let word = !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'));
    (word && !NOT_BOXES.contains(&name)).then_some((name, closes))
}

/// Whether an included file is a document docfuse indexes (by its extension).
fn is_document_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| super::SourceKind::of_extension(ext).is_some())
}

/// The code shortcode a whole line opens (`{{< highlight go "linenos=true" >}}`): its
/// name, for finding the closer.
pub(crate) fn code_opener(line: &str) -> Option<String> {
    let t = line.trim();
    let closed = TAGS
        .iter()
        .any(|(o, c)| t.as_bytes().starts_with(o) && t.as_bytes().ends_with(c));
    if !closed || t.contains("/*") {
        return None;
    }
    let (name, _) = name_and_argument(t)?;
    CODE.contains(&name).then(|| name.to_string())
}

/// Whether `line` is only the closer of code shortcode `name` (`{{< /highlight >}}`,
/// `{% endhighlight %}`).
pub(crate) fn closes_code(line: &str, name: &str) -> bool {
    let t = line.trim();
    let Some((closer, _)) = name_and_argument(t) else {
        return false;
    };
    let delimited = TAGS
        .iter()
        .any(|(o, c)| t.as_bytes().starts_with(o) && t.as_bytes().ends_with(c));
    delimited
        && (closer.strip_prefix('/') == Some(name) || closer.strip_prefix("end") == Some(name))
}

/// Rewrites, in `lines` (the parse copy's line contents, changed in place), each code
/// shortcode whose opener and closer are whole lines into a backtick fence of the same
/// byte length: the opener and closer lines become `` ``` `` padded with spaces (a run
/// longer than any inside, when the line is long enough; else the pair is left alone).
/// `in_fence[i]` marks lines already inside a fenced block, never rewritten.
pub(crate) fn code_shortcodes_as_fences(lines: &mut [String], in_fence: &[bool]) {
    let mut i = 0;
    while i < lines.len() {
        let name = (!in_fence[i]).then(|| code_opener(&lines[i])).flatten();
        let Some(name) = name else {
            i += 1;
            continue;
        };
        let closer = (i + 1..lines.len())
            .take_while(|&j| !in_fence[j])
            .find(|&j| closes_code(&lines[j], &name));
        let Some(end) = closer else {
            i += 1;
            continue;
        };
        let longest = lines[i + 1..end]
            .iter()
            .map(|l| longest_backtick_run(l))
            .max()
            .unwrap_or(0);
        let run = (longest + 1).max(3);
        let fits = |l: &str| l.trim_start().len() >= run;
        if fits(&lines[i]) && fits(&lines[end]) {
            lines[i] = fence_line(&lines[i], run);
            lines[end] = fence_line(&lines[end], run);
        }
        i = end + 1;
    }
}

fn longest_backtick_run(line: &str) -> usize {
    line.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `line` with its content after the indent replaced by `run` backticks and spaces, at
/// the same byte length.
fn fence_line(line: &str, run: usize) -> String {
    let indent = line.len() - line.trim_start().len();
    let mut out = line[..indent].to_string();
    out.push_str(&"`".repeat(run));
    out.push_str(&" ".repeat(line.len() - indent - run));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_close_within_the_window_only() {
        let b = b"a {{< new-in 0.153.0 />}} b";
        assert_eq!(tag_at(b, 2), Some((&b">}}"[..], 25)));
        assert_eq!(tag_at(b"{% include x.md %}", 0).map(|t| t.1), Some(18));
        assert_eq!(tag_at(b"50{% of it", 2), None);
        // a tag never crosses a blank or a fence line
        assert_eq!(
            tag_at(b"({% link\n  _posts/x.md %})", 1).map(|t| t.1),
            Some(25)
        );
        assert_eq!(tag_at(b"50{% of it\n\nx %}", 2), None);
        assert_eq!(
            tag_at(b"[a]({{ '/docs/' | relative_url }})", 4).map(|t| t.1),
            Some(33)
        );
        assert_eq!(tag_at(b"{{< a\n  b >}}", 0).map(|t| t.1), Some(13));
        assert_eq!(tag_at(b"{{< a\n\nb >}}", 0), None);
        assert_eq!(tag_at(b"{{< a\n```\nb >}}", 0), None);
        // mkdocs code includes (FastAPI, markdown-include)
        let b = b"{* ../../docs_src/request_files/tutorial003_an_py310.py hl[11,18:20] *}";
        assert_eq!(tag_at(b, 0).map(|t| t.1), Some(b.len()));
        assert_eq!(
            tag_at(b"{!> ../../docs_src/app.py !}", 0).map(|t| t.1),
            Some(28)
        );
        assert_eq!(tag_at(b"src/{*.js,*.ts} files", 4), None);
        // only as a line of its own: LaTeX, globs and JSDoc types are text
        let latex = b"The optimum $x^{*}$ satisfies $f(x^{*}) = 0$.";
        assert_eq!(tag_at(latex, 14), None);
        assert_eq!(tag_at(b"cp src/{*,.*} dst and {*}", 7), None);
        assert_eq!(tag_at(b"@param {*} a\n@returns {*} b", 7), None);
        assert_eq!(tag_at(b"  {* app.py *}  \nnext", 2).map(|t| t.1), Some(14));
        let far = format!("{{% {} %}}", "x".repeat(MAX_TAG_BYTES));
        assert_eq!(tag_at(far.as_bytes(), 0), None);
    }

    #[test]
    fn include_and_reference_tags_point_at_documents() {
        let cases = [
            ("{{% include \"/_common/x.md\" %}}", Some("/_common/x.md")),
            ("{% include_relative usage.md %}", Some("usage.md")),
            ("{{< ref \"guide/intro.md\" >}}", Some("guide/intro.md")),
            ("{%- include 'part.md' -%}", Some("part.md")),
            ("{{< new-in 0.153.0 />}}", None),
            ("{% include {{ page.x }} %}", None),
            (
                "{%- include docs_version_badge.html version=\"4.3.0\" -%}",
                None,
            ),
            ("{% include footer %}", None),
            ("{{< relref \"install\" >}}", Some("install")),
            (
                "{% link _posts/2016-07-26-x.markdown %}",
                Some("/_posts/2016-07-26-x.markdown"),
            ),
        ];
        for (tag, want) in cases {
            assert_eq!(pointed_target(tag).as_deref(), want, "{tag}");
        }
    }

    #[test]
    fn code_shortcodes_become_fences_of_the_same_length() {
        let mut lines: Vec<String> = [
            "{{< highlight go \"linenos=true\" >}}",
            "# not a heading",
            "{{< /highlight >}}",
            "{% highlight ruby %}",
            "x = 1",
            "{% endhighlight %}",
            "{{< tab >}}",
            "# a heading",
            "{{< /tab >}}",
            "{{< code-toggle >}}",
            "no closer",
        ]
        .map(String::from)
        .to_vec();
        let before: Vec<usize> = lines.iter().map(String::len).collect();
        code_shortcodes_as_fences(&mut lines, &[false; 11]);
        // a closer inside a real fence closes nothing
        let mut fenced: Vec<String> = ["{{< highlight >}}", "```", "{{< /highlight >}}", "```"]
            .map(String::from)
            .to_vec();
        code_shortcodes_as_fences(&mut fenced, &[false, true, true, true]);
        assert_eq!(fenced[0], "{{< highlight >}}");
        assert_eq!(fenced[2], "{{< /highlight >}}");
        assert!(lines[0].starts_with("```") && lines[2].starts_with("```"));
        assert!(lines[3].starts_with("```") && lines[5].starts_with("```"));
        assert_eq!(lines[6], "{{< tab >}}");
        assert_eq!(lines[9], "{{< code-toggle >}}");
        let after: Vec<usize> = lines.iter().map(String::len).collect();
        assert_eq!(before, after);
    }
}
