//! MyST Markdown block markup that is not text (the MyST spec, mystmd and myst-parser):
//! targets `(label)=` that name the block after them, comments `% …`, and block breaks
//! `+++` with optional JSON metadata. Blanked from the parse copy and hidden from display;
//! targets become anchors of the section they name.

/// The label of a target line `(label)=` (at most 3 spaces of indent, no space or
/// parenthesis in the label), if `line` is one.
pub(crate) fn target(line: &str) -> Option<&str> {
    let t = indented(line)?.trim_end();
    let label = t.strip_prefix('(')?.strip_suffix(")=")?;
    let ok = !label.is_empty() && !label.contains(|c: char| c.is_whitespace() || "()".contains(c));
    ok.then_some(label)
}

/// Whether `line` is a comment: `%` alone or followed by a space (at most 3 spaces of
/// indent), not a table row (`% | percent`). `%Y | year`, `%USERPROFILE%` are text.
pub(crate) fn is_comment(line: &str) -> bool {
    indented(line).is_some_and(|t| {
        let rest = t.strip_prefix('%');
        rest.is_some_and(|r| (r.is_empty() || r.starts_with([' ', '\t'])) && !t.contains('|'))
    })
}

/// The metadata of a block break `+++` (what follows it on the line, trimmed), if `line`
/// is one.
pub(crate) fn block_break(line: &str) -> Option<&str> {
    let rest = indented(line)?.strip_prefix("+++")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

/// The `label` of a block break's JSON metadata (`{"label": "x"}`), if any.
pub(crate) fn break_label(meta: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(meta).ok()?;
    let label = v.get("label")?.as_str()?.trim();
    (!label.is_empty()).then(|| label.to_string())
}

/// Whether `line` is hidden MyST block markup (for display; a Pandoc title block at the
/// top of a page is hidden too there, its text still indexed).
pub(crate) fn is_markup(line: &str) -> bool {
    target(line).is_some() || block_break(line).is_some() || is_comment(line)
}

/// The labels directives give in their option lines (`:label: x`, `:name: x` right after
/// an opener ```` ```{figure} ```` or `:::{figure}`), with their 0-based lines: targets
/// as `(label)=` is.
/// Directives shown inside a code block (a ```` ````markdown ```` example) give none.
pub(crate) fn option_labels<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_options = false;
    // open directive fences (their closers end them), and an open code fence
    let mut directives: Vec<(u8, usize)> = Vec::new();
    let mut code: Option<(u8, usize)> = None;
    for (i, line) in lines.enumerate() {
        if let Some(f) = code {
            if super::fences::closes_fence(line, f) {
                code = None;
            }
            continue;
        }
        if directives
            .last()
            .is_some_and(|&f| super::fences::closes_fence(line, f))
        {
            directives.pop();
            in_options = false;
            continue;
        }
        let t = line.trim();
        if let Some(f) = super::fences::opens_fence(line) {
            match is_directive_opener(t) {
                true => directives.push(f),
                false => code = Some(f),
            }
        }
        if is_directive_opener(t) {
            in_options = true;
            continue;
        }
        if !in_options {
            continue;
        }
        match t.strip_prefix(':').and_then(|r| r.split_once(':')) {
            Some((key, value)) => {
                let value = value.trim();
                let named = key == "label" || key == "name";
                if named && !value.is_empty() && !value.contains(char::is_whitespace) {
                    out.push((i, value.to_string()));
                }
            }
            None => in_options = false,
        }
    }
    out
}

/// Whether `t` (trimmed) opens a MyST directive: a fence of 3 or more backticks, tildes
/// or colons, then `{name}`.
fn is_directive_opener(t: &str) -> bool {
    let Some(ch) = t.chars().next().filter(|c| "`~:".contains(*c)) else {
        return false;
    };
    let rest = t.trim_start_matches(ch);
    t.len() - rest.len() >= 3
        && rest
            .strip_prefix('{')
            .and_then(|r| r.split_once('}'))
            .is_some_and(|(name, _)| !name.is_empty() && !name.contains(char::is_whitespace))
}

/// Directives whose body is Markdown prose a reader sees (admonitions and boxes), not
/// code, math or a file to include.
const PROSE_DIRECTIVES: [&str; 28] = [
    "admonition",
    "aside",
    "attention",
    "card",
    "caution",
    "danger",
    "deprecated",
    "div",
    "dropdown",
    "epigraph",
    "error",
    "exercise",
    "grid-item-card",
    "hint",
    "important",
    "margin",
    "note",
    "pull-quote",
    "seealso",
    "sidebar",
    "solution",
    "tab-item",
    "tip",
    "topic",
    "versionadded",
    "versionchanged",
    "warning",
    "glossary",
];

/// A backtick or tilde fence opening a prose directive (```` ```{note} Title ````,
/// ```` ````{prf:theorem} ````): its fence (character, run) and its title (what follows
/// the name, trimmed; may be empty).
pub(crate) fn prose_directive(line: &str) -> Option<((u8, usize), &str)> {
    let f = super::fences::opens_fence(line)?;
    let t = line.trim_start();
    let rest = t.get(f.1..)?.strip_prefix('{')?;
    let (name, title) = rest.split_once('}')?;
    let base = name.rsplit(':').next().unwrap_or(name);
    let prose = PROSE_DIRECTIVES.contains(&base.to_ascii_lowercase().as_str())
        || (name.starts_with("prf:") && !base.is_empty());
    prose.then_some((f, title.trim()))
}

/// Whether `line` is a directive option line (`:class: dropdown`, `:name: x`).
pub(crate) fn is_option_line(line: &str) -> bool {
    line.trim()
        .strip_prefix(':')
        .and_then(|r| r.split_once(':'))
        .is_some_and(|(key, _)| {
            !key.is_empty()
                && key
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        })
}

/// `line` without its indent, when that is at most 3 spaces.
fn indented(line: &str) -> Option<&str> {
    let t = line.trim_start_matches(' ');
    (line.len() - t.len() <= 3).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_comments_and_block_breaks() {
        assert_eq!(target("(my-label)="), Some("my-label"));
        assert_eq!(
            target("  (frontmatter:authors)=  "),
            Some("frontmatter:authors")
        );
        assert_eq!(target("(a b)="), None);
        assert_eq!(target("()="), None);
        assert_eq!(target("    (code)="), None, "indented code");
        assert_eq!(target("(x) = y"), None);
        assert!(is_comment("% a note for authors"));
        assert!(is_comment("%"));
        assert!(!is_comment("    % prompt"));
        assert!(!is_comment("50% of it"));
        assert_eq!(block_break("+++"), Some(""));
        assert_eq!(
            block_break("+++ {\"label\": \"x\"}").and_then(break_label),
            Some("x".into())
        );
        assert_eq!(block_break("+++b"), None);
        assert_eq!(break_label("not json"), None);
        let doc = "```{figure} a.png\n:name: fig-a\n:width: 50%\nCaption\n```\n:::{exercise}\n:label: ex-1\n:::\n\n:label: stray\n";
        assert_eq!(
            option_labels(doc.lines()),
            [(1, "fig-a".to_string()), (6, "ex-1".to_string())]
        );
        // an example in a code block gives none; a directive nested in one does
        let doc = "````markdown\n```{figure} x.png\n:label: shown-only\n```\n````\n````{note}\n```{figure} y.png\n:name: nested\n```\n````\n";
        assert_eq!(option_labels(doc.lines()), [(7, "nested".to_string())]);
        assert!(!is_comment("%Y | four-digit year"));
        assert!(!is_comment("% | percent"));
        assert_eq!(
            prose_directive("```{note} A title"),
            Some(((b'`', 3), "A title"))
        );
        assert_eq!(prose_directive("````{prf:theorem}"), Some(((b'`', 4), "")));
        assert_eq!(prose_directive("```{code-block} python"), None);
        assert_eq!(prose_directive("```python"), None);
        assert!(is_option_line(":class: dropdown") && !is_option_line(":: x"));
        assert!(!is_comment("%USERPROFILE%\\.cargo\\bin"));
    }
}
