//! The pulldown-cmark options every pass of the chunker parses with (the chunks, the
//! links, the display), in one place so that they agree. Imports nothing of the chunker.

use pulldown_cmark::Options;

/// Parser options: tables, footnotes, strikethrough, heading attributes (`{#id .class}`),
/// GitHub's alert blockquotes (`> [!NOTE]`: the marker is the quote's kind, not text); no
/// metadata blocks (front matter is blanked out before parsing).
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
}

/// [`options`] for a document's parse copy, with definition lists (`term` then
/// `: definition`, as Hugo, PHP Markdown Extra and pymdownx write settings references)
/// unless the document writes `:::` containers (VitePress, Docusaurus), whose marker lines
/// the definition syntax would take for definitions.
pub(crate) fn options_for(parse: &str) -> Options {
    let containers = parse.lines().any(|l| l.trim_start().starts_with("::"));
    if containers {
        options()
    } else {
        options() | Options::ENABLE_DEFINITION_LIST
    }
}
