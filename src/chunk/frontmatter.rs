//! Front matter: a YAML (`---` … `---`/`...`) or TOML (`+++` … `+++`) block at the very
//! start of a document. Its lines belong to no chunk (unless the document has nothing
//! else: then they are its one chunk); `title`, `description`, `aliases` and `tags` are
//! read from it. Malformed content is ignored (its lines are still skipped).

use super::lines::LineTable;
use yaml_rust2::{Yaml, YamlLoader};

/// What the front matter of a document says.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FrontMatter {
    /// Number of lines the block spans from line 0 (0 when there is no front matter).
    pub lines: usize,
    pub title: Option<String>,
    /// `description` (Docusaurus, mkdocs, Hugo), else Hugo's `summary`.
    pub description: Option<String>,
    /// `aliases` then `tags`, trimmed, deduplicated, non-empty.
    pub aliases: Vec<String>,
    /// `aliases` then `sidebar_label` (Docusaurus): other names of the document; tags
    /// are not names.
    pub names: Vec<String>,
    /// `checks`: commands that check work on the document (a string or a list).
    pub checks: Vec<String>,
    /// `audience` (e.g. `agent`), lower-cased.
    pub audience: Option<String>,
    /// Docusaurus `slug` (the page's route) and `id` (its name in the route).
    pub slug: Option<String>,
    pub doc_id: Option<String>,
    /// Site routes the page is served at, absolute from the site root: Jekyll
    /// `permalink` and `redirect_from` (jekyll-redirect-from), Hugo `url` and the
    /// `aliases` written as paths (`/old/page/`).
    pub permalinks: Vec<String>,
    /// MyST `label`: a target naming the page (its first section), `#label` from any page.
    pub target: Option<String>,
}

#[derive(Clone, Copy)]
enum Flavor {
    Yaml,
    Toml,
}

/// Finds and reads the front matter of `src` (BOM already stripped).
pub(crate) fn extract(src: &str, table: &LineTable) -> FrontMatter {
    let flavor = match table.content(src, 0).trim_end() {
        "---" => Flavor::Yaml,
        "+++" => Flavor::Toml,
        _ => return FrontMatter::default(),
    };
    let Some(close) = (1..table.len()).find(|&i| is_close(flavor, table.content(src, i))) else {
        return FrontMatter::default();
    };
    let content = if close > 1 {
        table.join(src, 1, close - 1)
    } else {
        String::new()
    };
    let f = parse_guarded(flavor, &content);
    FrontMatter {
        lines: close + 1,
        title: f.title,
        description: f.description,
        names: clean_list(
            f.aliases
                .iter()
                .take(f.names)
                .cloned()
                .chain(f.label)
                .collect(),
        ),
        aliases: f.aliases,
        checks: f.checks,
        audience: f.audience,
        slug: f.slug,
        doc_id: f.doc_id,
        permalinks: f.permalinks,
        target: f.target,
    }
}

fn is_close(flavor: Flavor, line: &str) -> bool {
    let line = line.trim_end();
    match flavor {
        Flavor::Yaml => line == "---" || line == "...",
        Flavor::Toml => line == "+++",
    }
}

/// The keys read from front matter.
#[derive(Default)]
struct Fields {
    title: Option<String>,
    description: Option<String>,
    aliases: Vec<String>,
    /// How many of `aliases` come from the `aliases` key (the rest are tags).
    names: usize,
    /// `sidebar_label`.
    label: Option<String>,
    slug: Option<String>,
    doc_id: Option<String>,
    checks: Vec<String>,
    audience: Option<String>,
    permalinks: Vec<String>,
    /// MyST `label` (no white space in it).
    target: Option<String>,
}

/// Parses with the third-party parser, treating a parser panic as malformed content.
fn parse_guarded(flavor: Flavor, content: &str) -> Fields {
    let run = || match flavor {
        Flavor::Yaml => yaml_fields(content),
        Flavor::Toml => toml_fields(content),
    };
    let f = std::panic::catch_unwind(run).unwrap_or_default();
    let trimmed = |t: Option<String>| t.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
    let names = clean_list(f.aliases[..f.names.min(f.aliases.len())].to_vec()).len();
    Fields {
        title: trimmed(f.title),
        description: trimmed(f.description),
        label: trimmed(f.label),
        slug: trimmed(f.slug),
        doc_id: trimmed(f.doc_id),
        names,
        aliases: clean_list(f.aliases),
        checks: clean_list(f.checks),
        audience: trimmed(f.audience).map(|a| a.to_lowercase()),
        permalinks: clean_list(f.permalinks),
        target: trimmed(f.target).filter(|t| !t.contains(char::is_whitespace)),
    }
}

fn clean_list(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let item = item.trim();
        if !item.is_empty() && !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    out
}

fn yaml_fields(content: &str) -> Fields {
    let Ok(docs) = YamlLoader::load_from_str(content) else {
        return Fields::default();
    };
    let Some(Yaml::Hash(map)) = docs.first() else {
        return Fields::default();
    };
    let get = |key: &str| map.get(&Yaml::String(key.to_string()));
    let list = |key: &str| -> Vec<String> {
        match get(key) {
            Some(Yaml::Array(items)) => items.iter().filter_map(yaml_scalar).collect(),
            Some(other) => yaml_scalar(other).into_iter().collect(),
            None => Vec::new(),
        }
    };
    let mut aliases = list("aliases");
    let names = aliases.len();
    aliases.extend(list("tags"));
    Fields {
        title: get("title").and_then(yaml_scalar),
        description: get("description")
            .or_else(|| get("summary"))
            .and_then(yaml_scalar),
        label: get("sidebar_label").and_then(yaml_scalar),
        slug: get("slug").and_then(yaml_scalar),
        doc_id: get("id").and_then(yaml_scalar),
        aliases,
        names,
        checks: list("checks"),
        audience: get("audience").and_then(yaml_scalar),
        permalinks: site_routes(list),
        target: get("label").and_then(yaml_scalar),
    }
}

/// The site routes front matter gives (see [`FrontMatter::permalinks`]), `list` reading
/// a key as a list of strings.
fn site_routes(list: impl Fn(&str) -> Vec<String>) -> Vec<String> {
    let mut out = list("permalink");
    out.extend(list("url"));
    out.extend(list("redirect_from"));
    out.extend(list("aliases").into_iter().filter(|a| a.starts_with('/')));
    out
}

fn yaml_scalar(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn toml_fields(content: &str) -> Fields {
    let Ok(table) = content.parse::<toml::Table>() else {
        return Fields::default();
    };
    let list = |key: &str| -> Vec<String> {
        match table.get(key) {
            Some(toml::Value::Array(items)) => items.iter().filter_map(toml_scalar).collect(),
            Some(other) => toml_scalar(other).into_iter().collect(),
            None => Vec::new(),
        }
    };
    let mut aliases = list("aliases");
    let names = aliases.len();
    aliases.extend(list("tags"));
    Fields {
        title: table.get("title").and_then(toml_scalar),
        description: table
            .get("description")
            .or_else(|| table.get("summary"))
            .and_then(toml_scalar),
        label: table.get("sidebar_label").and_then(toml_scalar),
        slug: table.get("slug").and_then(toml_scalar),
        doc_id: table.get("id").and_then(toml_scalar),
        aliases,
        names,
        checks: list("checks"),
        audience: table.get("audience").and_then(toml_scalar),
        permalinks: site_routes(list),
        target: None,
    }
}

fn toml_scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(text: &str) -> FrontMatter {
        extract(text, &LineTable::new(text))
    }

    #[test]
    fn yaml_title_aliases_tags() {
        let f = fm("---\ntitle: \" Install \"\naliases: [setup, setup]\ntags: cli\n---\n# H\n");
        assert_eq!(f.lines, 5);
        assert_eq!(f.title.as_deref(), Some("Install"));
        assert_eq!(f.aliases, vec!["setup", "cli"]);
        assert_eq!(f.names, vec!["setup"], "tags are not names");
        let f = fm("---\nsidebar_label: Installing\naliases: [setup]\nslug: /getting-started\nid: install\n---\n# H\n");
        assert_eq!(f.names, vec!["setup", "Installing"]);
        assert_eq!(
            (f.slug.as_deref(), f.doc_id.as_deref()),
            (Some("/getting-started"), Some("install"))
        );
    }

    #[test]
    fn description_or_hugo_summary() {
        let f = fm("---\ntitle: T\ndescription: >\n  Pick a\n  channel.\n---\n");
        assert_eq!(f.description.as_deref(), Some("Pick a channel."));
        let f = fm("+++\ntitle = \"T\"\nsummary = \"Short.\"\n+++\n");
        assert_eq!(f.description.as_deref(), Some("Short."));
        assert_eq!(fm("---\ntitle: T\n---\n").description, None);
    }

    #[test]
    fn yaml_closed_by_dots_and_crlf() {
        let f = fm("---\r\ntitle: A\r\ntags:\r\n  - x\r\n  - 2\r\n...\r\nbody");
        assert_eq!(f.lines, 6);
        assert_eq!(f.title.as_deref(), Some("A"));
        assert_eq!(f.aliases, vec!["x", "2"]);
    }

    #[test]
    fn toml_front_matter() {
        let f = fm("+++\ntitle = \"T\"\naliases = [\"a\", \"b\"]\ntags = \"c\"\n+++\ntext");
        assert_eq!(f.lines, 5);
        assert_eq!(f.title.as_deref(), Some("T"));
        assert_eq!(f.aliases, vec!["a", "b", "c"]);
        assert_eq!(f.names, vec!["a", "b"]);
    }

    #[test]
    fn malformed_content_keeps_lines_drops_fields() {
        let f = fm("---\ntitle: [unclosed\n: : :\n---\n");
        assert_eq!(
            f,
            FrontMatter {
                lines: 4,
                title: None,
                ..FrontMatter::default()
            }
        );
        let f = fm("+++\ntitle = = 3\n+++\n");
        assert_eq!(
            f,
            FrontMatter {
                lines: 3,
                title: None,
                ..FrontMatter::default()
            }
        );
        let f = fm("---\n- just\n- a list\n---\n");
        assert_eq!(f.lines, 4);
        assert_eq!(f.title, None);
    }

    #[test]
    fn checks_and_audience_in_yaml_and_toml() {
        let f = fm("---\naudience: Agent\nchecks:\n  - cargo test\n  - cargo clippy\n---\n");
        assert_eq!(f.audience.as_deref(), Some("agent"));
        assert_eq!(f.checks, vec!["cargo test", "cargo clippy"]);
        let f = fm("+++\nchecks = \"make check\"\n+++\n");
        assert_eq!(f.checks, vec!["make check"]);
    }

    #[test]
    fn unclosed_or_late_is_not_front_matter() {
        assert_eq!(fm("---\ntitle: x\n").lines, 0);
        assert_eq!(fm("\n---\ntitle: x\n---\n").lines, 0);
        assert_eq!(fm("").lines, 0);
        assert_eq!(fm("---\n---").lines, 2);
    }
}
