//! Matching ranked hits to relevance judgments.

use crate::projection::StoredChunk;

/// What a judgment points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A section: a hit from file `path` whose heading path ends with `heading`.
    Section { path: String, heading: String },
    /// A whole document by id (BEIR corpus id = the hit's path).
    Doc { id: String },
}

/// One relevant target with its graded relevance (> 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgment {
    pub target: Target,
    pub grade: u32,
}

impl Target {
    /// True when chunk `c` is (part of) this target.
    pub fn matches(&self, c: &StoredChunk) -> bool {
        match self {
            Target::Section { path, heading } => {
                &c.path == path
                    && (c
                        .heading_path
                        .last()
                        .is_some_and(|h| same_heading(h, heading))
                        || holds_heading_line(c, heading)
                        || (c.heading_path.is_empty() && same_heading(&c.title, heading)))
            }
            Target::Doc { id } => &c.path == id,
        }
    }
}

/// True when `c` holds the heading line of `heading`, an ancestor in its heading path: a
/// heading-only section (or one whose only content is markup, such as an include
/// shortcode) merged into its first child is found in that chunk.
fn holds_heading_line(c: &StoredChunk, heading: &str) -> bool {
    let n = c.heading_path.len();
    if n < 2
        || !c.heading_path[..n - 1]
            .iter()
            .any(|h| same_heading(h, heading))
    {
        return false;
    }
    c.text.lines().map(str::trim_start).any(|line| {
        let text = line.trim_start_matches('#').trim();
        line.starts_with('#') && same_heading(&crate::chunk::display_line(text), heading)
    })
}

/// A chunk's heading `a` and a label's heading `b` compare equal when they match with
/// inline-code backticks removed, a trailing attribute block (`{#id}`) dropped, HTML
/// comment markers dropped and white space collapsed, or when `b` read as Markdown gives
/// the heading text the chunker gives it (entities, escapes, emphasis): labels often keep
/// the Markdown source (`` `Rc<T>` {#rc} ``, `<!-- md:setting x -->`, `Option&lt;T&gt;`),
/// chunks the text.
fn same_heading(a: &str, b: &str) -> bool {
    same_source(a, b) || {
        let rendered = crate::chunk::heading_text(b);
        !rendered.is_empty() && same_source(a, &rendered)
    }
}

fn same_source(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let t = s.trim_end().replace("<!--", " ").replace("-->", " ");
        let t = t.trim();
        let t = match t.rfind('{') {
            Some(open)
                if t.ends_with('}')
                    && crate::chunk::is_attribute_block(&t[open + 1..t.len() - 1]) =>
            {
                &t[..open]
            }
            _ => t,
        };
        t.replace('`', "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    norm(a) == norm(b)
}

/// The retrieval unit of a hit: its section (path + heading path) for section targets,
/// its document for document targets. Chunks of one unit count once.
pub fn unit_key(c: &StoredChunk, by_doc: bool) -> String {
    if by_doc {
        c.path.clone()
    } else {
        format!("{}#{}", c.path, c.heading_path.join("\u{1f}"))
    }
}

/// Turns a ranked list of chunks into the gains of its units, in rank order: duplicate
/// units are dropped; a unit gains the grade of the first not-yet-found judgment it
/// matches, else 0. Each judgment is found at most once.
pub fn gains(ranked: &[&StoredChunk], judgments: &[Judgment]) -> Vec<u32> {
    let by_doc = judgments
        .iter()
        .all(|j| matches!(j.target, Target::Doc { .. }));
    let mut seen = std::collections::HashSet::new();
    let mut found = vec![false; judgments.len()];
    let mut out = Vec::new();
    for c in ranked {
        if !seen.insert(unit_key(c, by_doc)) {
            continue;
        }
        let j = (0..judgments.len()).find(|&j| !found[j] && judgments[j].target.matches(c));
        out.push(j.map_or(0, |j| {
            found[j] = true;
            judgments[j].grade
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkKind;

    fn chunk(path: &str, heads: &[&str], line: u32) -> StoredChunk {
        StoredChunk {
            id: format!("{path}#{line}"),
            kind: ChunkKind::Section,
            root: 0,
            path: path.into(),
            start_line: line,
            end_line: line,
            title: String::new(),
            heading_path: heads.iter().map(|s| s.to_string()).collect(),
            text: String::new(),
            prelude: None,
            hash: String::new(),
        }
    }

    #[test]
    fn heading_labels_match_with_attribute_blocks_and_backticks() {
        assert!(same_heading(
            "`cargo::rustc-cfg=KEY` {#rustc-cfg}",
            "cargo::rustc-cfg=KEY"
        ));
        assert!(same_heading("Changes { data-search-exclude }", "Changes"));
        assert!(same_heading(
            "md:setting meta.search.exclude",
            "<!-- md:setting meta.search.exclude -->"
        ));
        assert!(!same_heading("Braces {1 + 2}", "Braces"));
    }

    #[test]
    fn a_label_written_as_markdown_source_matches_the_chunk_heading_text() {
        assert!(same_heading(
            "Option<T> and emph _x_",
            "Option&lt;T&gt; and *emph* \\_x\\_"
        ));
        assert!(same_heading("Using Box here", "Using Box<T> here"));
        assert!(same_heading("a & b", "a &amp; b"));
        assert!(!same_heading("Option<T>", "Option&lt;U&gt;"));
    }

    #[test]
    fn parts_of_one_section_count_once_and_heading_path_suffix_matches() {
        let j = vec![Judgment {
            target: Target::Section {
                path: "a.md".into(),
                heading: "Sub".into(),
            },
            grade: 2,
        }];
        let c1 = chunk("a.md", &["Top", "Other"], 1);
        let c2 = chunk("a.md", &["Top", "Sub"], 5);
        let c3 = chunk("a.md", &["Top", "Sub"], 9); // second part of the same section
        let c4 = chunk("b.md", &["Top", "Sub"], 1); // same heading, other file
        assert_eq!(gains(&[&c1, &c2, &c3, &c4], &j), [0, 2, 0]);
    }

    #[test]
    fn a_section_merged_into_its_child_is_found_by_its_heading_line_anywhere_in_the_chunk() {
        let j = vec![Judgment {
            target: Target::Section {
                path: "a.md".into(),
                heading: "Package managers".into(),
            },
            grade: 1,
        }];
        let mut c = chunk("a.md", &["Package managers", "MacPorts"], 9);
        c.text =
            "{{% include \"x.md\" %}}\n\n## Package managers\n\n### MacPorts\n\nRun it.".into();
        assert_eq!(gains(&[&c], &j), [1]);
        c.text = "### MacPorts\n\nRun it.".into();
        assert_eq!(gains(&[&c], &j), [0]);
    }

    #[test]
    fn backticks_in_a_label_do_not_prevent_a_match() {
        let j = vec![Judgment {
            target: Target::Section {
                path: "a.md".into(),
                heading: "The `tests` Module".into(),
            },
            grade: 1,
        }];
        assert_eq!(gains(&[&chunk("a.md", &["The tests  Module"], 1)], &j), [1]);
    }

    #[test]
    fn a_front_matter_title_labels_the_intro_of_its_page() {
        let j = vec![Judgment {
            target: Target::Section {
                path: "a.mdx".into(),
                heading: "Linting with Type Information".into(),
            },
            grade: 1,
        }];
        let mut intro = chunk("a.mdx", &[], 5);
        intro.title = "Linting with Type Information".into();
        let mut later = chunk("a.mdx", &["Troubleshooting"], 40);
        later.title = intro.title.clone();
        assert_eq!(gains(&[&later, &intro], &j), [0, 1]);
    }
}
