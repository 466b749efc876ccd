//! An mkdocs site's navigation (`mkdocs.yml`): every page its `nav` lists, as a link
//! from the config file with the line it is written on, resolved under `docs_dir`.
//!
//! Read line by line rather than as YAML: the links need their lines, and mkdocs configs
//! carry custom tags (`!ENV`, `!!python/name:`) that a strict YAML parser refuses.

use super::links::{LinkForm, RawLink, MAX_LINKS};

/// mkdocs' default `docs_dir`.
const DEFAULT_DOCS_DIR: &str = "docs";

/// The pages of `text`'s top-level `nav:` block, each as a link relative to the config
/// file's folder (`docs_dir/page.md`), with its 1-based line. External URLs are kept
/// as written (the graph counts and drops them).
pub(crate) fn nav_links(text: &str) -> Vec<RawLink> {
    // lines as the rest of docfuse counts them (CRLF, LF or a lone CR)
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = text.lines().collect();
    let docs_dir = lines
        .iter()
        .find_map(|l| l.strip_prefix("docs_dir:"))
        .map(|v| unquote(strip_comment(v)).trim_end_matches('/').to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_DOCS_DIR.to_string());
    let mut out = Vec::new();
    let mut in_nav = false;
    for (i, line) in lines.iter().enumerate() {
        let top_level = !line.starts_with([' ', '\t', '-', '#']) && !line.trim().is_empty();
        if top_level {
            in_nav = line.trim_end() == "nav:";
            continue;
        }
        if !in_nav || out.len() >= MAX_LINKS {
            continue;
        }
        if let Some(page) = nav_page(line) {
            let target = match page.contains("://") {
                true => page.to_string(),
                false => format!("{docs_dir}/{}", page.trim_start_matches("./")),
            };
            out.push(RawLink {
                line: i as u32 + 1,
                form: LinkForm::Link,
                target,
            });
        }
    }
    out
}

/// The page a nav line names: `- page.md`, `- Title: page.md`, `Title: page.md`;
/// `None` for a section header (`- Guide:`) or anything without a page.
fn nav_page(line: &str) -> Option<&str> {
    let item = strip_comment(line.trim().trim_start_matches('-').trim());
    // a flow mapping on one line: `{Title: page.md}`
    let item = item.trim_start_matches('{').trim_end_matches('}').trim();
    let value = match item.rfind(": ") {
        Some(i) => &item[i + 2..],
        None => item,
    };
    let value = value.trim().trim_start_matches("!!str ");
    let page = unquote(value);
    let path = page.split('#').next().unwrap_or(page);
    let is_page = path.ends_with(".md")
        || path.ends_with(".mdx")
        || path.ends_with(".markdown")
        || page.contains("://");
    is_page.then_some(page)
}

/// `v` without a YAML comment (` #` outside quotes).
fn strip_comment(v: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in v.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return v[..i].trim_end(),
            _ => {}
        }
        prev = c;
    }
    v.trim_end()
}

fn unquote(v: &str) -> &str {
    v.trim().trim_matches(|c| c == '"' || c == '\'')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_and_targets(cfg: &str) -> Vec<(u32, String)> {
        nav_links(cfg)
            .into_iter()
            .map(|l| (l.line, l.target))
            .collect()
    }

    #[test]
    fn nav_pages_with_lines_under_docs_dir() {
        let cfg = "site_name: X\ndocs_dir: 'site/'\nnav:\n  - index.md\n  - Guide:\n    - Install: guide/install.md\n    - 'Config': \"guide/config.md#keys\"  # the keys\n    - Web: https://example.org/x\n  - ./about.md\ntheme:\n  name: material\n  features: [a.md]\nmarkdown_extensions:\n  - toc:\n      permalink: true\n";
        assert_eq!(
            lines_and_targets(cfg),
            vec![
                (4, "site/index.md".to_string()),
                (6, "site/guide/install.md".to_string()),
                (7, "site/guide/config.md#keys".to_string()),
                (8, "https://example.org/x".to_string()),
                (9, "site/about.md".to_string()),
            ]
        );
    }

    #[test]
    fn nav_values_with_spaces_tags_flow_maps_and_comments() {
        let cfg = "docs_dir: \"site\"  # where\nnav:\n  - 'Issue #12': issue.md\n  - B: my page.md\n  - C: !!str tagged.md\n  - Flow: {Inline: guide/flow.md}\r  - D: d.md  # note\n";
        assert_eq!(
            lines_and_targets(cfg),
            vec![
                (3, "site/issue.md".to_string()),
                (4, "site/my page.md".to_string()),
                (5, "site/tagged.md".to_string()),
                (6, "site/guide/flow.md".to_string()),
                (7, "site/d.md".to_string()),
            ]
        );
    }

    #[test]
    fn default_docs_dir_and_no_nav() {
        let got = nav_links("nav:\n- Home: index.md\n");
        assert_eq!(got[0].target, "docs/index.md");
        assert_eq!(got[0].line, 2);
        assert!(nav_links("site_name: X\ntheme: material\n").is_empty());
    }
}
