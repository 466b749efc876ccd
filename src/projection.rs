//! The projection: a chunk becomes an [`Entry`] with a stable id, a kind, the texts of the
//! BM25F fields, the exact-match keys and a sha256 content hash.
//!
//! Must not import: `lexical`, `store`, `generation`, `write`, `read`, `cli`.

use crate::analysis::fold;
use crate::chunk::{Chunk, ChunkKind};
use crate::config::PerField;
use serde::{Deserialize, Serialize};

/// Version of the projection (field texts, exact-match keys, content hash, stored shape);
/// recorded in the manifest. Bump on any change of output.
pub const PROJECTION_VERSION: u32 = 9;

/// The embedding input of `chunk`: [`embedding_input`] of its title (left out when it is
/// the file stem for want of a written one, so renaming a file re-embeds nothing; a
/// written title is kept whatever the file's name), heading path and body.
pub fn chunk_embedding_input(chunk: &Chunk) -> String {
    let title = if chunk.title_from_stem {
        ""
    } else {
        &chunk.title
    };
    embedding_input(title, &chunk.heading_path, &chunk.body)
}

/// Version of [`embedding_input`]'s template; part of the embedder identity.
pub const INPUT_TEMPLATE_VERSION: u32 = 2;

/// What is stored for each chunk and returned with a hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredChunk {
    pub id: String,
    pub kind: ChunkKind,
    /// Index of the root (or 0 for a JSONL source).
    pub root: usize,
    /// Path relative to its root (or the JSONL `_id`).
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub title: String,
    pub heading_path: Vec<String>,
    /// Exact source text of the chunk's lines.
    pub text: String,
    /// Lines shown before the chunk for context (a cut table's header rows), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prelude: Option<String>,
    /// sha256 over kind, path, title, heading path, text and the document's aliases and
    /// tags (everything the chunk is found by besides its text).
    pub hash: String,
}

/// A chunk projected for indexing.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub stored: StoredChunk,
    /// Field texts in [`crate::config::Field::ALL`] order; analysed by the lexical writer.
    pub fields: PerField<String>,
    /// Folded keys that name this chunk exactly: id, `path#slug` slug, aliases.
    pub id_keys: Vec<String>,
    /// Folded keys that name its file: path, file name, file stem.
    pub path_keys: Vec<String>,
    /// Folded symbols (inline code spans, identifiers) for exact symbol matches.
    pub symbol_keys: Vec<String>,
}

/// Projects one chunk of the document found under root `root`.
pub fn project(chunk: Chunk, root: usize) -> Entry {
    let hash = content_hash(&chunk);
    let headings = chunk.heading_path.join("\n");
    let fields = [
        chunk.title.clone(),
        headings,
        path_text(&chunk.rel_path),
        chunk.symbols.join("\n"),
        chunk.aliases.join("\n"),
        chunk.summary.clone(),
        chunk.body.clone(),
        chunk.code.clone(),
    ];
    let mut id_keys = vec![fold(&chunk.id)];
    if let Some((_, slug)) = chunk.id.split_once('#') {
        id_keys.push(fold(slug));
    }
    id_keys.extend(chunk.aliases.iter().map(|a| fold(a.trim())));
    // a heading that is a name (`--offline`, `nodeLinker`) names its section exactly, in
    // any case style
    for name in chunk
        .heading_path
        .last()
        .map(|h| crate::chunk::heading_names(h))
        .unwrap_or_default()
    {
        id_keys.push(symbol_key(name));
        id_keys.extend(name_key(name));
    }
    // `reply.hijack` and `reply.hijack()`, as a question writes it
    if let Some(member) = member_key(&chunk.heading_path, &chunk.title) {
        id_keys.push(format!("{member}()"));
        id_keys.push(member);
    }
    let symbol_keys = chunk
        .symbols
        .iter()
        .flat_map(|s| std::iter::once(symbol_key(s)).chain(name_key(s)))
        .collect();
    Entry {
        id_keys: dedup(id_keys),
        path_keys: dedup(path_keys(&chunk.rel_path)),
        symbol_keys: dedup(symbol_keys),
        fields,
        stored: StoredChunk {
            id: chunk.id,
            kind: chunk.kind,
            root,
            path: chunk.rel_path,
            start_line: chunk.start_line,
            end_line: chunk.end_line,
            title: chunk.title,
            heading_path: chunk.heading_path,
            text: chunk.text,
            prelude: chunk.prelude,
            hash,
        },
    }
}

/// The qualified name of a section about a member of the thing the section above it is
/// about: `Reply › .hijack()` (API references write a method or property under its
/// object's heading with a leading `.`, or `#` for an instance member) is named
/// `reply.hijack` too, as code calls it. The owner is the heading above (else the page
/// title) when it is one identifier; the member is the identifier after the `.`/`#`, up
/// to its parameters. `None` for any other heading.
pub fn member_key(heading_path: &[String], title: &str) -> Option<String> {
    let (last, above) = heading_path.split_last()?;
    let owner = above.last().map_or(title, String::as_str);
    let bare = |s: &str| s.trim().trim_matches('`').trim().to_string();
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && s.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$'))
    };
    let owner = bare(owner);
    let last = bare(last);
    let member = last.strip_prefix('.').or_else(|| last.strip_prefix('#'))?;
    let member = member.split(['(', ' ', '<', '`']).next().unwrap_or("");
    (ident(&owner) && ident(member)).then(|| fold(&format!("{owner}.{member}")))
}

/// The folded form under which a symbol or a query is compared for an exact symbol
/// match: trimmed of white space, backticks and a trailing `()`.
pub fn symbol_key(s: &str) -> String {
    let t = s.trim().trim_matches('`').trim();
    fold(t.strip_suffix("()").unwrap_or(t))
}

/// The key under which one name written in another case style matches: `node-linker`,
/// `node_linker`, `--node-linker` and `NODE_LINKER` give `nodelinker` (folded, leading
/// dashes and every `-`/`_` dropped), the [`symbol_key`] of `nodeLinker`. Only for a
/// name written with a separator or an inner capital (a plain word has no other style),
/// and only when the key is another than its [`symbol_key`] (`None` for `nodeLinker`
/// itself) and has three characters or more.
pub fn name_key(s: &str) -> Option<String> {
    let t = s.trim().trim_matches('`').trim();
    let t = t.strip_suffix("()").unwrap_or(t);
    // the name without its option dashes: `--force` is the word `force`, no other style
    let bare = t.trim_start_matches('-');
    let inner_capital = bare
        .chars()
        .zip(bare.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    if !inner_capital && !bare.contains(['-', '_']) {
        return None;
    }
    if !bare
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return None;
    }
    let key: String = fold(bare)
        .chars()
        .filter(|c| !matches!(c, '-' | '_'))
        .collect();
    (key.chars().count() >= 3 && key != symbol_key(s)).then_some(key)
}

/// Folded keys naming the file at `rel_path`: the path, the file name, the stem.
pub fn path_keys(rel_path: &str) -> Vec<String> {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    vec![fold(rel_path), fold(name), fold(stem)]
}

/// The `path` field's text: the path with `/` as a word break (so folder names count).
fn path_text(rel_path: &str) -> String {
    rel_path.replace('/', " ")
}

fn content_hash(c: &Chunk) -> String {
    let mut h = crate::hashing::Hasher::new();
    h.part(format!("{:?}", c.kind))
        .part(&c.rel_path)
        .part(&c.title)
        .part(c.heading_path.join("\u{1f}"))
        .part(&c.text)
        .part(c.aliases.join("\u{1f}"))
        .part(c.prelude.as_deref().unwrap_or(""))
        .part(&c.code);
    h.finish()
}

/// The text embedded for a chunk: document title, heading path (` › `-joined) and the
/// chunk's plain body, separated by blank lines (template version 2: the build passes an
/// empty title when the title is only the file stem).
pub fn embedding_input(title: &str, heading_path: &[String], body: &str) -> String {
    let mut s = String::with_capacity(title.len() + body.len() + 64);
    s.push_str(title.trim());
    let path = heading_path.join(" › ");
    if !path.is_empty() && path != title.trim() {
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&path);
    }
    s.push_str("\n\n");
    s.push_str(body.trim());
    s
}

fn dedup(mut v: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    v.retain(|k| !k.is_empty() && seen.insert(k.clone()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk() -> Chunk {
        Chunk {
            id: "guide/Install.md#install/from-source".into(),
            kind: ChunkKind::Section,
            rel_path: "guide/Install.md".into(),
            title: "Install".into(),
            title_from_stem: true,
            heading_path: vec!["Install".into(), "From source".into()],
            start_line: 3,
            end_line: 9,
            text: "## From source\n\nRun `cargo build`.".into(),
            body: "Run cargo build.".into(),
            summary: "Run cargo build.".into(),
            symbols: vec!["cargo build".into(), "HashMap::new()".into()],
            aliases: vec!["Setup".into()],
            code: String::new(),
            prelude: None,
        }
    }

    #[test]
    fn keys_are_folded_and_cover_id_slug_alias_path_and_symbols() {
        let e = project(chunk(), 0);
        assert_eq!(
            e.id_keys,
            [
                "guide/install.md#install/from-source",
                "install/from-source",
                "setup"
            ]
        );
        assert_eq!(e.path_keys, ["guide/install.md", "install.md", "install"]);
        assert_eq!(e.symbol_keys, ["cargo build", "hashmap::new"]);
        assert_eq!(e.fields[2], "guide Install.md");
    }

    #[test]
    fn a_member_heading_is_named_with_its_owner() {
        let path = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let key = |p: &[&str], title: &str| member_key(&path(p), title);
        assert_eq!(
            key(&["Reply", ".hijack()"], "Reply"),
            Some("reply.hijack".into())
        );
        assert_eq!(
            key(
                &[
                    "Reply",
                    ".getSerializationFunction(schema | httpStatus, [contentType])"
                ],
                "x"
            ),
            Some("reply.getserializationfunction".into())
        );
        assert_eq!(
            key(&["`Request`", "`#body`"], "x"),
            Some("request.body".into())
        );
        // the page title is the owner of a top heading
        assert_eq!(
            key(&[".code(statusCode)"], "Reply"),
            Some("reply.code".into())
        );
        // not a member: no leading `.`, or an owner that is not one name
        for p in [
            &["Reply", "hijack()"][..],
            &["Getting started", ".sent"],
            &["Reply", "."],
            &["Reply", ". Notes"],
        ] {
            assert_eq!(key(p, "x"), None, "{p:?}");
        }
        // projected: it names the section exactly
        let mut c = chunk();
        c.heading_path = path(&["Reply", ".hijack()"]);
        assert!(project(c, 0).id_keys.contains(&"reply.hijack".to_string()));
    }

    #[test]
    fn one_name_in_every_case_style_has_one_name_key() {
        for s in [
            "nodeLinker",
            "node-linker",
            "node_linker",
            "--node-linker",
            "NODE_LINKER",
            "`nodeLinker()`",
        ] {
            // its symbol key (camelCase folds to it already) or its name key
            let key = name_key(s).unwrap_or_else(|| symbol_key(s));
            assert_eq!(key, "nodelinker", "{s}");
        }
        for s in [
            "node",
            "Node",
            "HashMap::new",
            "a-b",
            "cargo build",
            "--",
            "--force",
            "-E",
        ] {
            assert_eq!(name_key(s), None, "{s}");
        }
        assert_eq!(
            name_key("server.proxy"),
            None,
            "no separator to drop: same as its symbol key"
        );
        assert_eq!(
            name_key("build.rollupOptions"),
            None,
            "the same as its symbol key"
        );
    }

    #[test]
    fn input_joins_title_heading_path_and_body() {
        let s = embedding_input("Book", &["Ch".into(), "Sec".into()], " body text ");
        assert_eq!(s, "Book\nCh › Sec\n\nbody text");
        assert_eq!(embedding_input("T", &["T".into()], "b"), "T\n\nb");
        assert_eq!(embedding_input("", &["H".into()], "b"), "H\n\nb");
    }

    #[test]
    fn hash_changes_with_an_alias_or_tag_only_edit() {
        let a = project(chunk(), 0).stored.hash;
        let mut c = chunk();
        c.aliases.push("quickstart".into());
        assert_ne!(a, project(c, 0).stored.hash);
    }

    #[test]
    fn a_stem_only_title_is_left_out_of_the_embedding_input() {
        let mut c = chunk();
        assert!(chunk_embedding_input(&c).starts_with("Install › From source\n\n"));
        c.title = "Installing".into();
        c.title_from_stem = false;
        assert!(chunk_embedding_input(&c).starts_with("Installing\nInstall › From source"));
    }

    #[test]
    fn a_written_title_is_embedded_whatever_the_file_is_called() {
        // Hugo's `methods/resource/Fit.md` has `title: Fit`: renamed, the same input
        let mut c = chunk();
        c.title = "Fit".into();
        c.title_from_stem = false;
        c.rel_path = "methods/Fit.md".into();
        let before = chunk_embedding_input(&c);
        c.rel_path = "methods/FitRenamed.md".into();
        assert_eq!(chunk_embedding_input(&c), before);
        assert!(before.starts_with("Fit\n"), "{before}");
    }

    #[test]
    fn hash_changes_with_text_and_heading_path() {
        let a = project(chunk(), 0).stored.hash;
        let mut c = chunk();
        c.text.push('!');
        assert_ne!(a, project(c, 0).stored.hash);
        let mut c = chunk();
        c.heading_path[1] = "From git".into();
        assert_ne!(a, project(c, 0).stored.hash);
        assert_eq!(a, project(chunk(), 0).stored.hash);
    }
}
