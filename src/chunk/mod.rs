//! Heading-aware chunking: one source document in, its sections out.
//!
//! Owns: front matter, section boundaries, heading paths, exact 1-based line ranges,
//! blank-line splitting of long sections under a token budget (never inside a fenced
//! code block), and the per-chunk field texts (body, summary, symbols, aliases).
//! Must not import: `lexical`, `store`, `cli` (it is ingest, below the indexes).
//! Markdown is parsed with `pulldown-cmark` (CommonMark); no regex splitter.
//!
//! ## Map
//!
//! (Moved from `ARCHITECTURE.md`, which keeps only a short row per module.)
//! heading-aware sections with pulldown-cmark (`links.rs`: what a page points at — link
//! destinations, HTML `<a href>`, paths of indexed kinds in inline code, prose and code
//! blocks, emphasised or quoted capitalised phrases — gathered from the chunker's one
//! parse; `nav.rs`: an `mkdocs.yml`'s `nav` as links, a document with no chunks): exact
//! lines, front matter, MDX, comments blanked from parsing (outside fences, nested ones
//! included: `fences.rs` `NestedFence`), heading attributes and GitHub slugs (`ids.rs`;
//! plus the anchors VitePress, markdown-it-anchor and GitBook give a heading, repeats
//! numbered page-wide per rule, and `<summary>` lines, kept with the links for the graph
//! and handoffs), boxes (`containers.rs`: GitBook/Liquid block tags, Hugo shortcodes with
//! closers, `:::` containers (not an mkdocstrings `::: pkg.Name` line), pymdownx `///`
//! blocks (more slashes nest), `<details>`, MDX components, paired whole-line openers and
//! closers: a heading inside one heads only the box, the text after it goes on the section
//! around it as more pieces), blank-line cuts under a token budget outside fences
//! (`split.rs`: the layout of pieces — admonition/tab markers (`markers.rs`) glued to their bodies,
//! headings to what follows, code to its prose, link definitions and markers to the piece
//! before them within twice the budget, long tables cut between rows with the header
//! repeated, lists over four budgets between top-level items (a definition list's items
//! start at their terms) and re-parsed for their fields, a text document's long runs
//! between lines; a piece of only a comment or script joins its neighbour), `fields.rs`:
//! the field texts (no `<script>`/`<style>` contents, a container marker gives its title,
//! not its kind), `display.rs`: the visible lines of a chunk (snippets, match lines;
//! scripts, markers and template tags hidden; `inline_html.rs`: inline HTML tags as
//! CommonMark's raw HTML, outside code spans); `myst.rs`: MyST block markup — targets
//! `(label)=`, a page's front-matter `label` and directives' `:label:`/`:name:` options are
//! anchors of what follows them (a `#label` link from any page of the root resolves to the
//! page that has it; `read page#label` finds it in the generation's links), comments `% …`
//! (not a Pandoc title block) and block breaks `+++` blanked from the parse copy and
//! hidden; `display.rs` shows a prose directive fence (```` ```{note} Title ````) as its
//! title and prose, a role's code span, not `{role}`, code spans as written, autolinks and
//! empty link texts as their targets; `kramdown.rs`: kramdown attribute lists (`{: #id
//! .class}` lines and `{: .btn }` after a span) blanked from the parse copy and hidden, a
//! line's `#id` the anchor of the heading above, and the tag lines of a `markdown="1"`
//! element blanked so a fence right after is a fence; display of plain-text documents shows
//! their lines as written; `templates.rs`: site generators' template tags (Hugo shortcodes,
//! Liquid/Jinja tags and output, mkdocs code includes `{* … *}`/`{! … !}`, never past a
//! blank or fence line) blanked from the parse copy like comments (a URL a tag starts keeps
//! a `tpl:` placeholder scheme: external; `{% raw %}` spans kept as text; an include of a
//! non-document partial is no link), what include/reference tags point at kept as links,
//! code shortcodes read as fences; `openapi/`: OpenAPI 3.x / Swagger 2.0 specs as sections
//! — `tree.rs` (YAML or JSON into a tree whose nodes know their lines and columns, from
//! yaml-rust2's events pulled one at a time; node, text and depth caps), `text.rs` (an
//! operation's or schema's field texts, local `$ref` chains followed once each, bodies cut
//! at 16 KiB), `sections.rs` (one section per operation, described tag and schema, the
//! `info` preamble; lines from a key to the line before the next key, or to the closing
//! token's line in compact JSON), `mod.rs` (kinds by name, `check`, chunks; a spec whose
//! sections would repeat lines is refused)

/// Version of the chunking rules (section boundaries, cuts, ids, field texts); recorded in
/// the manifest. Bump on any change of output: an index chunked by another version is
/// rebuilt by `docfuse refresh`.
pub const CHUNKER_VERSION: u32 = 30;

/// What a document's front matter says (`title`, `aliases` + `tags`, `checks`,
/// `audience`); all empty without front matter or for plain text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocFrontMatter {
    pub title: Option<String>,
    pub aliases: Vec<String>,
    pub checks: Vec<String>,
    /// Lower-cased, e.g. `agent`.
    pub audience: Option<String>,
}

/// Reads the front matter of `doc` (YAML `---` or TOML `+++` at its very start).
pub fn front_matter(doc: &SourceDoc) -> DocFrontMatter {
    let fm = source::Prepared::new(doc).fm;
    DocFrontMatter {
        title: fm.title,
        aliases: fm.aliases,
        checks: fm.checks,
        audience: fm.audience,
    }
}

pub use crate::config::ChunkerConfig;

mod changelog;
mod cmark;
mod containers;
mod copies;
mod display;
mod document;
mod fences;
mod fields;
mod frontmatter;
mod ids;
mod inline_html;
mod kinds;
mod kramdown;
mod lines;
mod links;
mod markdown;
mod markers;
pub(crate) mod modules;
mod myst;
mod nav;
pub mod openapi;
mod packages;
mod project;
mod source;
mod split;
mod templates;

pub use changelog::{is_changelog, is_changelog_section};
pub use copies::copy_fingerprint;
pub use display::{
    display_line, is_attribute_block, name_field, printable, visible_lines, visible_lines_of,
};
pub use document::{
    chunk_document, chunk_document_with_links, is_agent_doc, Chunked, AGENT_DOC_NAMES,
};
pub use ids::section_id;
pub use kinds::{Chunk, ChunkKind, EntryKind, SourceDoc, SourceKind, NAV_FILES};
pub use markdown::heading_text;

/// The names a heading titles its section by (`--offline`, `-r, --recursive`,
/// `server.proxy`, `nodeLinker`): symbols of the section, and keys that name it exactly.
/// Empty for a heading of words.
pub fn heading_names(heading: &str) -> Vec<&str> {
    fields::heading_symbols(heading)
}

/// Per line of a document: part of a fenced code block — its opener, its lines, its
/// closer — by CommonMark's rules (a ```` fence holds a ``` one), fences nested in
/// indented containers included.
pub fn fenced_lines<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<bool> {
    fences::fenced_lines(lines)
}

/// True for an admonition, tab or container marker line (`!!! note "Title"`, `??? tip`,
/// `=== "Tab"`, `:::tip`, `:::`) or a GitHub alert marker (`> [!NOTE]`): not prose, so
/// never a passage's match line.
pub fn is_marker_line(line: &str) -> bool {
    markers::is_marker(line) || is_alert_marker(line)
}

/// `> [!NOTE]`, `> [!WARNING]` (any nesting of `>`), alone on its line.
fn is_alert_marker(line: &str) -> bool {
    let t = line.trim_start();
    if !t.starts_with('>') {
        return false;
    }
    let rest = t.trim_start_matches(['>', ' ']).trim_end();
    rest.strip_prefix("[!")
        .and_then(|r| r.strip_suffix(']'))
        .is_some_and(|kind| !kind.is_empty() && kind.chars().all(|c| c.is_ascii_alphabetic()))
}
pub use links::{doc_links, symbol_segments, LinkForm, RawLink, MAX_LINKS};

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_code;
#[cfg(test)]
mod tests_cut;
