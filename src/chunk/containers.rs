//! Containers a page shows as one box: a GitBook or Liquid block tag (`{% hint %}` …
//! `{% endhint %}`, `{% tab %}`, `{% step %}`), a Hugo shortcode with a closer
//! (`{{< tab >}}` … `{{< /tab >}}`), a `:::note` … `:::` container (Docusaurus,
//! Starlight, VitePress; more colons nest), a pymdownx block (`/// note | Title` … `///`,
//! `//// tab | Python` … `////`; more slashes nest), `<details>` or `<aside>`, and an MDX component
//! (`<Tabs>` … `</Tabs>`, any capitalised element name).
//!
//! A heading inside one heads the text up to the box's end, not the rest of the page:
//! after the box the page goes on under the heading it was in
//! (`document::plan_sections`). Only whole lines open and close a box, and only a box
//! that is closed counts; lines inside fenced code and front matter are never markers.

use super::fences::fenced_lines;
use super::lines::LineTable;

/// What a line does to boxes, by a key that pairs an opener with its closer
/// (`tag:hint`, `colons:3`, `html:Tabs`).
#[derive(Debug, PartialEq, Eq)]
enum Mark {
    Open(String),
    Close(String),
}

/// The boxes of a document: 0-based (opener line, closer line), properly nested, in
/// opener order. An opener without its closer (or whose closer comes only after an
/// enclosing box's) opens nothing. The first `fm_lines` lines (front matter) and fenced
/// lines are never markers.
pub(crate) fn spans(src: &str, table: &LineTable, fm_lines: usize) -> Vec<(usize, usize)> {
    let lines = (0..table.len()).map(|i| table.content(src, i));
    let fenced = fenced_lines(lines.clone());
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut out = Vec::new();
    for (i, line) in lines.enumerate().skip(fm_lines) {
        if fenced[i] {
            continue;
        }
        match mark(line) {
            Some(Mark::Open(key)) => open.push((i, key)),
            Some(Mark::Close(key)) => {
                if let Some(at) = open.iter().rposition(|(_, k)| *k == key) {
                    out.push((open[at].0, i));
                    open.truncate(at);
                }
            }
            None => {}
        }
    }
    out.sort_unstable();
    out
}

/// The box a whole line opens or closes, if any.
fn mark(line: &str) -> Option<Mark> {
    let t = line.trim();
    if let Some((name, closes)) = super::templates::block_tag(t) {
        let key = format!("tag:{name}");
        return Some(if closes {
            Mark::Close(key)
        } else {
            Mark::Open(key)
        });
    }
    // the line as written: an indented `///` is code, not a block
    if let Some((slashes, opens)) = super::markers::slash_block(line) {
        let key = format!("slashes:{slashes}");
        return Some(if opens {
            Mark::Open(key)
        } else {
            Mark::Close(key)
        });
    }
    if t.starts_with(":::") && !super::markers::is_autodoc(t) {
        let colons = t.bytes().take_while(|&b| b == b':').count();
        let key = format!("colons:{colons}");
        return Some(if t[colons..].trim().is_empty() {
            Mark::Close(key)
        } else {
            Mark::Open(key)
        });
    }
    element(t)
}

/// `<details …>`, `<aside>` or a capitalised MDX component opened on a line of its own
/// (not closed on it, not self-closing), or its closer alone on a line.
fn element(t: &str) -> Option<Mark> {
    let (closes, rest) = match t.strip_prefix("</") {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('<')?),
    };
    let len = rest
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        .count();
    let name = &rest[..len];
    let boxed = name.starts_with(|c: char| c.is_ascii_uppercase())
        || name.eq_ignore_ascii_case("details")
        || name.eq_ignore_ascii_case("aside");
    if len == 0 || !boxed {
        return None;
    }
    let after = &rest[len..];
    let key = format!("html:{}", name.to_ascii_lowercase());
    if closes {
        return (after.trim() == ">").then_some(Mark::Close(key));
    }
    let ends_tag = matches!(after.chars().next(), None | Some(' ' | '\t' | '>'));
    let self_closing = t.ends_with("/>");
    let closed_here = t.contains(&format!("</{name}"));
    (ends_tag && !self_closing && !closed_here).then_some(Mark::Open(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes(text: &str) -> Vec<(usize, usize)> {
        let table = LineTable::new(text);
        spans(text, &table, 0)
    }

    #[test]
    fn block_tags_shortcodes_colons_and_components_are_boxes() {
        let text = "{% hint style=\"info\" %}\n#### A\n{% endhint %}\n\
                    {{< tab \"Go\" >}}\nx\n{{< /tab >}}\n\
                    :::tip[Title]\ny\n:::\n\
                    <Tabs groupId=\"os\">\n<TabItem label=\"Linux\">\nz\n</TabItem>\n</Tabs>\n\
                    <details>\n<summary>More</summary>\nw\n</details>";
        assert_eq!(
            boxes(text),
            vec![(0, 2), (3, 5), (6, 8), (9, 13), (10, 12), (14, 17)]
        );
    }

    #[test]
    fn control_flow_unclosed_and_fenced_markers_are_no_boxes() {
        // `{% if %}` is control flow; `<Card />` closes itself; `{% tab %}` has no closer;
        // the `:::` pair sits in a fence; `<div>` is no box
        let text = "{% if site.x %}\n# A\n{% endif %}\n<Card title=\"x\" />\n{% tab %}\n\
                    ```\n:::note\n:::\n```\n<div>\n# B\n</div>\n<Aside>text</Aside>";
        assert_eq!(boxes(text), Vec::<(usize, usize)>::new());
    }

    #[test]
    fn pymdownx_blocks_nest_by_slash_count_and_autodoc_lines_are_no_boxes() {
        // a tab holding a tip; an indented `///` is code, no closer; an mkdocstrings
        // line opens nothing
        let text = "//// tab | Python
/// tip | T
## A
    ///
x
///
////
                    ::: pkg.mod.Name
y
:::";
        assert_eq!(boxes(text), vec![(0, 6), (1, 5)]);
    }

    #[test]
    fn nested_colons_pair_by_count_and_an_unclosed_inner_box_is_dropped() {
        let text = "::::note\n:::tip\nx\n:::\n::::\n{% tabs %}\n{% tab %}\n{% endtabs %}";
        assert_eq!(boxes(text), vec![(0, 4), (1, 3), (5, 7)]);
    }
}
