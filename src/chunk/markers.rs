//! Container marker lines: admonitions and tabs of mkdocs (Material, pymdownx and its
//! `///` blocks), Docusaurus/VitePress `:::` containers, and what such a line says that
//! is text (its title). Read by the parse (`markdown`), the layout of pieces (`split`) and
//! the display; imports nothing of the chunker.

/// True for an admonition, tab or container marker line ([`marker`]).
pub(crate) fn is_marker(line: &str) -> bool {
    marker(line).is_some()
}

/// True for an opener marker line (`!!! note`, `=== "Tab"`, `:::tip`): glued to what
/// follows it.
pub(crate) fn is_opener(line: &str) -> bool {
    marker(line) == Some(Marker::Opener)
}

/// What a marker line says that is text: its title (`!!! note "Pinning"` → `Pinning`,
/// `::: tip NOTE` → `NOTE`, `=== "Linux"` → `Linux`), without the marker and its kind
/// (`note`, `tip`, `code-group`); empty for a closer or an untitled opener. `None` when
/// `line` is not a marker line.
pub(crate) fn marker_title(line: &str) -> Option<&str> {
    marker(line)?;
    let t = line.trim();
    let rest = if let Some(r) = t.strip_prefix("===") {
        r.trim_start_matches(['!', '+'])
    } else {
        let r = t
            .trim_start_matches([':', '!', '?', '/'])
            .trim_start_matches('+')
            .trim_start();
        // the kind, up to a space, a `[` (Docusaurus `:::tip[Title]`) or a `|`
        // (pymdownx `/// note | Title`)
        let kind = r.find([' ', '\t', '[', '|']).unwrap_or(r.len());
        r[kind..].trim_start().trim_start_matches('|')
    };
    Some(rest.trim().trim_matches(['"', '[', ']', '{', '}']).trim())
}

/// A `:::` line naming a dotted identifier (`::: fastapi.security.OAuth2`): mkdocstrings'
/// autodoc directive, which the site replaces with that object's API documentation. Not
/// a container (no container kind has a dot): its line is text, the name findable.
pub(crate) fn is_autodoc(line: &str) -> bool {
    let Some(rest) = line.trim().strip_prefix(":::") else {
        return false;
    };
    let name = rest.trim();
    !name.starts_with(':')
        && name.contains('.')
        && !name.starts_with('.')
        && !name.ends_with('.')
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// A pymdownx block line (`/// tip`, `/// note | Title`, `//// tab | Python 3.10+`, the
/// closer `///`): the slash count (more slashes nest) and whether it opens. `None` for
/// any other line, a Rust doc comment (`/// Returns x`) among them.
pub(crate) fn slash_block(line: &str) -> Option<(usize, bool)> {
    let t = line.trim_start();
    if line.len() - t.len() > 3 || !t.starts_with("///") {
        return None;
    }
    let slashes = t.bytes().take_while(|&b| b == b'/').count();
    let rest = t[slashes..].trim();
    if rest.is_empty() {
        return Some((slashes, false));
    }
    let kind_len = rest
        .bytes()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        .count();
    let after = rest[kind_len..].trim_start();
    let kind = &rest[..kind_len];
    let kind_starts = rest.starts_with(|c: char| c.is_ascii_lowercase());
    // with a title (`| …`) any block name; alone, only pymdownx's own (a doc comment of
    // one word, `/// deprecated`, is no block)
    let opens = after.starts_with('|') || (after.is_empty() && BLOCK_NAMES.contains(&kind));
    (kind_starts && opens).then_some((slashes, true))
}

/// The blocks pymdownx ships and the admonition kinds mkdocs-material styles.
const BLOCK_NAMES: [&str; 24] = [
    "admonition",
    "abstract",
    "attention",
    "bug",
    "caption",
    "caution",
    "danger",
    "define",
    "details",
    "error",
    "example",
    "failure",
    "html",
    "hint",
    "important",
    "info",
    "note",
    "question",
    "quote",
    "seealso",
    "success",
    "tab",
    "tip",
    "warning",
];

/// The kind of container line: an opener (glued to what follows) or a closer (glued to
/// what precedes).
#[derive(Debug, PartialEq)]
pub(crate) enum Marker {
    Opener,
    Closer,
}

/// An admonition, tab or container marker line of mkdocs (Material, pymdownx, its
/// `///` blocks) or Docusaurus.
pub(crate) fn marker(line: &str) -> Option<Marker> {
    let t = line.trim_start();
    let indent = line.len() - t.len();
    if t.starts_with(":::") {
        if is_autodoc(t) {
            return None;
        }
        let rest = t.trim_start_matches(':').trim();
        return Some(if rest.is_empty() {
            Marker::Closer
        } else {
            Marker::Opener
        });
    }
    if let Some((_, opens)) = slash_block(line) {
        return Some(if opens {
            Marker::Opener
        } else {
            Marker::Closer
        });
    }
    let admonition = ["!!! ", "!!!\t", "??? ", "???+ ", "???\t"]
        .iter()
        .any(|p| t.starts_with(p));
    let tab = t.starts_with("=== \"") || t.starts_with("===! \"") || t.starts_with("===+ \"");
    (indent <= 12 && (admonition || tab)).then_some(Marker::Opener)
}
