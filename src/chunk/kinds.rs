//! What the chunker reads and writes: a source document and its kind (decided from the
//! file name), a chunk and its kind. The leaf of `chunk/`: every pass imports these,
//! this file imports nothing of the chunker.

/// What kind of source a document is, decided from its file name ([`Self::of_file_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// `.md`, `.markdown`
    Markdown,
    /// `.mdx`: Markdown plus top-level `import`/`export` lines and JSX.
    Mdx,
    /// `.txt`, and records ingested from JSONL: no Markdown structure.
    Text,
    /// `mkdocs.yml` / `mkdocs.yaml`: a site's navigation. No chunks of its own; each
    /// page of its `nav` is a link (as mdBook's `SUMMARY.md` links every chapter).
    Nav,
    /// An OpenAPI 3.x or Swagger 2.0 spec (`openapi.json|yaml|yml`, `swagger.json|yaml|yml`,
    /// `*.openapi.json|yaml|yml`, `*.swagger.json|yaml|yml`): one section per operation,
    /// described tag and schema component ([`openapi`]).
    OpenApi,
    /// A source file of a language [`crate::code::Language`] reads (walked only with
    /// sources on, `index --sources`): a module entry and one passage per item.
    Code,
    /// A package manifest ([`crate::repo::MANIFEST_NAMES`], walked only with sources on): a package
    /// entry.
    Manifest,
    /// The project file, `docfuse.toml` ([`crate::repo::PROJECT_FILE`], walked only with
    /// sources on): one entry per ownership record, intent and change route.
    Project,
}

impl SourceKind {
    /// The kind of a file extension (case-insensitive, without the dot), or `None` for
    /// a file docfuse does not index.
    pub fn of_extension(ext: &str) -> Option<SourceKind> {
        match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(SourceKind::Markdown),
            "mdx" => Some(SourceKind::Mdx),
            "txt" => Some(SourceKind::Text),
            _ => None,
        }
    }

    /// The kind of a file by its name: [`SourceKind::Nav`] for `mkdocs.yml` and
    /// `mkdocs.yaml`, [`SourceKind::OpenApi`] for an API spec's name
    /// ([`is_spec_file_name`]), else by extension ([`Self::of_extension`]).
    pub fn of_file_name(name: &str) -> Option<SourceKind> {
        if NAV_FILES.contains(&name) {
            return Some(SourceKind::Nav);
        }
        if is_spec_file_name(name) {
            return Some(SourceKind::OpenApi);
        }
        SourceKind::of_extension(name.rsplit_once('.')?.1)
    }

    /// The kind of a file by its name when the walk reads sources too: a documentation
    /// kind ([`Self::of_file_name`]), else [`SourceKind::Manifest`] for a package
    /// manifest's name, else [`SourceKind::Code`] for a source file's extension.
    pub fn of_file_name_with_sources(name: &str) -> Option<SourceKind> {
        if let Some(k) = SourceKind::of_file_name(name) {
            return Some(k);
        }
        if crate::repo::is_manifest_name(name) {
            return Some(SourceKind::Manifest);
        }
        if name == crate::repo::PROJECT_FILE {
            return Some(SourceKind::Project);
        }
        crate::code::Language::of_path(name).map(|_| SourceKind::Code)
    }

    /// The kind of the file a `/`-separated path names ([`Self::of_file_name`] of its
    /// last segment): whether a link or a path-shaped word can name an indexed file.
    pub fn of_path(path: &str) -> Option<SourceKind> {
        SourceKind::of_file_name(path.rsplit('/').next().unwrap_or(path))
    }
}

/// What an index entry is, as results and the `kind` filter name it: a passage of a
/// document, of a source file's module entry, an area (a folder that holds modules), a
/// package entry (a manifest, or an ownership record's declared unit), or an intent or
/// change route of the project file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Document,
    Module,
    /// A folder that holds modules. No chunk is of this kind: a search that asks for
    /// areas reports the module hits of each folder as one result, its best passage
    /// standing for it (as a section's best chunk stands for the section).
    Area,
    Package,
    Intent,
    Change,
}

impl EntryKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [EntryKind; 6] = [
        EntryKind::Document,
        EntryKind::Module,
        EntryKind::Area,
        EntryKind::Package,
        EntryKind::Intent,
        EntryKind::Change,
    ];

    /// Stable lowercase name (`document`, `module`, `area`, `package`, `intent`,
    /// `change`).
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Document => "document",
            EntryKind::Module => "module",
            EntryKind::Area => "area",
            EntryKind::Package => "package",
            EntryKind::Intent => "intent",
            EntryKind::Change => "change",
        }
    }

    /// The kind named `name` (case-insensitive), if any.
    pub fn parse(name: &str) -> Option<EntryKind> {
        EntryKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The kind of the entry a chunk of this kind belongs to.
    pub fn of_chunk(kind: ChunkKind) -> EntryKind {
        match kind {
            ChunkKind::Section | ChunkKind::Preamble => EntryKind::Document,
            ChunkKind::Module | ChunkKind::Item => EntryKind::Module,
            ChunkKind::Package | ChunkKind::Ownership => EntryKind::Package,
            ChunkKind::Intent => EntryKind::Intent,
            ChunkKind::Change => EntryKind::Change,
        }
    }

    /// The kind of the entry an indexed file's path gives: a source file's extension a
    /// module, a package manifest's name a package, anything else a document. (A walk
    /// without sources never indexes the first two; a JSONL record whose `_id` looks
    /// like one is named by it too.)
    pub fn of_path(path: &str) -> EntryKind {
        let name = path.rsplit('/').next().unwrap_or(path);
        if SourceKind::of_file_name(name).is_some() {
            EntryKind::Document
        } else if crate::repo::is_manifest_name(name) {
            EntryKind::Package
        } else if crate::code::Language::of_path(name).is_some() {
            EntryKind::Module
        } else {
            EntryKind::Document
        }
    }
}

/// File names read as site navigation ([`SourceKind::Nav`]).
pub const NAV_FILES: [&str; 2] = ["mkdocs.yml", "mkdocs.yaml"];

/// File names read as API specs (case-insensitive), besides names ending in
/// [`SPEC_SUFFIXES`].
pub const SPEC_FILES: [&str; 6] = [
    "openapi.json",
    "openapi.yaml",
    "openapi.yml",
    "swagger.json",
    "swagger.yaml",
    "swagger.yml",
];

/// Name endings of API specs (`billing.openapi.yaml`), case-insensitive.
pub const SPEC_SUFFIXES: [&str; 6] = [
    ".openapi.json",
    ".openapi.yaml",
    ".openapi.yml",
    ".swagger.json",
    ".swagger.yaml",
    ".swagger.yml",
];

/// Whether a file name is an API spec docfuse reads ([`SPEC_FILES`], or a name ending
/// in one of [`SPEC_SUFFIXES`]), case-insensitive.
pub fn is_spec_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SPEC_FILES.contains(&lower.as_str())
        || SPEC_SUFFIXES
            .iter()
            .any(|s| lower.ends_with(s) && lower.len() > s.len())
}

/// One document to chunk.
#[derive(Debug, Clone)]
pub struct SourceDoc {
    /// Path relative to its root, `/`-separated (e.g. `ch15-04-rc.md`); for JSONL records, the `_id`.
    pub rel_path: String,
    /// Full text as read (may start with a BOM; may use LF, CRLF or lone CR line endings).
    pub text: String,
    pub kind: SourceKind,
    /// A title given from outside (JSONL `title`); wins over front matter and H1.
    pub title_hint: Option<String>,
}

/// What a chunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// A heading and what follows it up to the next heading (or a part of one, when cut).
    Section,
    /// Text before the first heading of a file (or a whole file without headings).
    Preamble,
    /// A source file's module entry: its header (module doc comment, imports) up to its
    /// first item, found by its path, its module doc and the names it exports.
    Module,
    /// One declared item of a source file (function, type, method, …): its doc comment,
    /// signature and body, lines from its doc comment to its end.
    Item,
    /// A package manifest's entry: name, description, checks.
    Package,
    /// A `docfuse.toml` ownership record: the unit's id, path, agent document, checks.
    Ownership,
    /// A `docfuse.toml` intent route: a question of this title concerns these paths.
    Intent,
    /// A `docfuse.toml` change route: a change of this title touches these paths.
    Change,
}

/// One chunk: a section (or a blank-line-delimited part of a long section).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chunk {
    /// Stable id: `rel_path#slug` where slug joins the heading path's slugs with `/`;
    /// a repeated heading path in one file gets `-2`, `-3`…; a part after the first of a
    /// cut section gets `~2`, `~3`…; a preamble has slug `_preamble`.
    pub id: String,
    pub kind: ChunkKind,
    /// Same as `SourceDoc::rel_path`.
    pub rel_path: String,
    /// Document title: title hint, else front-matter `title`, else first H1, else file stem.
    pub title: String,
    /// `title` is the file stem, for want of a written title: it changes with the file's
    /// name, so it is left out of the embedding input (a rename re-embeds nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub title_from_stem: bool,
    /// All ancestor headings and this section's own heading, outermost first, as plain text.
    /// Empty for a preamble.
    pub heading_path: Vec<String>,
    /// 1-based line of the first line of the chunk (the heading line for a section).
    pub start_line: u32,
    /// 1-based line of the last non-blank line of the chunk (>= start_line).
    pub end_line: u32,
    /// Exact source text of lines start_line..=end_line, line endings normalised to `\n`.
    pub text: String,
    /// Plain text of the chunk for the `body` field: prose, inline code, code blocks;
    /// no heading text, no HTML/JSX tags, no front matter.
    pub body: String,
    /// Plain text of the first paragraph of the section (empty when none).
    pub summary: String,
    /// Inline code spans and identifier-like tokens of the prose (deduplicated, in order).
    pub symbols: Vec<String>,
    /// Front-matter `aliases` and `tags` of the document (same for every chunk of it).
    pub aliases: Vec<String>,
    /// What a source item's body says (identifiers, comments, string literals), for the
    /// `code` field; empty for documents.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub code: String,
    /// Lines repeated before this piece for context, not part of its line range: the
    /// header rows of a long table cut into pieces (exact source text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prelude: Option<String>,
}
