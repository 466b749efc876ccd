//! Template copies: the fingerprint of every chunk's heading and visible text
//! (`chunk::copy_fingerprint`, taken when a document is chunked) and the chunks whose
//! section is stamped on many pages (`copies.json`). Kept apart from the graph files, so
//! an edit that changes words but no link still links the graph of the previous
//! generation; a refresh carries the fingerprints of the documents it does not read.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::source::Loaded;
use crate::error::{Error, Result};
use crate::graph::DocLinks;
use crate::store::write_atomic;

/// The fingerprints and template copies of a generation, in the generation folder.
pub const COPIES_FILE: &str = "copies.json";

/// Version of the fingerprint and of the template rule: the graph rules' version (an
/// index of an older one is rebuilt by `refresh`). A file of another version is treated
/// as absent (no template copies).
const COPIES_VERSION: u32 = crate::graph::GRAPH_METRICS_VERSION;

/// Pages (distinct file names) that must hold the same section for its chunks to be
/// template copies. Two pages sharing a block may be a page and its excerpt; three
/// are a pattern.
const TEMPLATE_PAGES: usize = 3;

#[derive(Serialize, Deserialize)]
struct CopiesFile {
    version: u32,
    /// Per document in snapshot order: each chunk's fingerprint (0: none); empty for a
    /// document that is not prose.
    documents: Vec<Vec<u64>>,
    /// The ordinals of the chunks that are template copies, ascending.
    templates: Vec<u64>,
}

/// Writes `copies.json` for `docs` (snapshot order, chunk counts set) whose fingerprints
/// are `links[i].bodies`.
///
/// # Errors
/// [`Error::Io`] when the file cannot be written.
pub fn write_copies(gen_dir: &Path, docs: &[Loaded], links: &[DocLinks]) -> Result<()> {
    let documents: Vec<Vec<u64>> = docs
        .iter()
        .zip(links)
        .map(|(d, l)| match fingerprinted(d, l) {
            true => l.bodies.clone(),
            false => Vec::new(),
        })
        .collect();
    let file = CopiesFile {
        version: COPIES_VERSION,
        templates: template_sections(docs, &documents),
        documents,
    };
    let json = serde_json::to_vec(&file).map_err(|e| Error::Config(format!("copies: {e}")))?;
    write_atomic(&gen_dir.join(COPIES_FILE), &json)
}

/// `links` (a generation's, in snapshot order: `previous_links`) with each document's
/// chunk fingerprints (`DocLinks::bodies`) from the generation's `copies.json`; left
/// empty when it is missing, unreadable, of another version or of other documents.
pub fn with_fingerprints(gen_dir: &Path, mut links: Vec<DocLinks>) -> Vec<DocLinks> {
    let copies = read(gen_dir).map(|f| f.documents).unwrap_or_default();
    if copies.len() == links.len() {
        for (l, c) in links.iter_mut().zip(copies) {
            l.bodies = c;
        }
    }
    links
}

/// The ordinals of a generation's template copies (ascending); empty when it has none or
/// no `copies.json` of this version.
pub fn template_ordinals(gen_dir: &Path) -> Vec<u64> {
    read(gen_dir).map(|f| f.templates).unwrap_or_default()
}

fn read(gen_dir: &Path) -> Option<CopiesFile> {
    let bytes = crate::fsio::read_regular(gen_dir.join(COPIES_FILE)).ok()?;
    let file: CopiesFile = serde_json::from_slice(&bytes).ok()?;
    (file.version == COPIES_VERSION).then_some(file)
}

/// A document whose chunks may be template copies: prose (as for change logs), with a
/// fingerprint for each of its chunks.
fn fingerprinted(d: &Loaded, l: &DocLinks) -> bool {
    d.is_prose() && l.bodies.len() == d.entry.chunks as usize
}

/// The ordinals of the chunks whose heading and visible text (`bodies`, per document)
/// are on [`TEMPLATE_PAGES`] or more pages of distinct file names: a block a generator or
/// an include stamps on every command page (the Cargo book's `Manifest Options` on 30
/// pages). Each copy restates the others, and a question about one command finds them
/// all before the section that is about it. Pages of one name in other folders
/// (`version-1/api.md`, `version-2/api.md`: a versioned or translated site) count once:
/// there a copy is the answer for its version.
fn template_sections(docs: &[Loaded], bodies: &[Vec<u64>]) -> Vec<u64> {
    let mut ids: HashMap<&str, u32> = HashMap::new();
    let names: Vec<u32> = docs
        .iter()
        .map(|d| {
            let next = ids.len() as u32;
            *ids.entry(page_name(&d.entry.rel_path)).or_insert(next)
        })
        .collect();
    // per fingerprint, the distinct page names holding it, up to TEMPLATE_PAGES
    let mut pages: HashMap<u64, Vec<u32>> = HashMap::new();
    for (name, b) in names.iter().zip(bodies) {
        for f in b.iter().filter(|f| **f != 0) {
            let seen = pages.entry(*f).or_default();
            if seen.len() < TEMPLATE_PAGES && !seen.contains(name) {
                seen.push(*name);
            }
        }
    }
    let copied = |f: &u64| pages.get(f).is_some_and(|n| n.len() >= TEMPLATE_PAGES);
    let mut out = Vec::new();
    let mut first = 0u64;
    for (d, b) in docs.iter().zip(bodies) {
        out.extend(
            b.iter()
                .enumerate()
                .filter(|(_, f)| copied(f))
                .map(|(i, _)| first + i as u64),
        );
        first += u64::from(d.entry.chunks);
    }
    out
}

/// The name a page goes by across folders: its file name without the extension and
/// without a language part (`guide.fr.md`, `index.pt-br.md` → `guide`, `index`), so a
/// versioned or translated site's copies of one page count once. `pandas.DataFrame.md`
/// stays `pandas.DataFrame`.
fn page_name(rel_path: &str) -> &str {
    let file = rel_path.rsplit('/').next().unwrap_or("");
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    match stem.rsplit_once('.') {
        Some((base, lang)) if is_language(lang) => base,
        _ => stem,
    }
}

/// A language tag as sites put it in file names: `fr`, `en`, `pt-br`, `zh_CN`.
fn is_language(s: &str) -> bool {
    let (lang, region) = s.split_once(['-', '_']).unwrap_or((s, ""));
    let letters = |s: &str| s.bytes().all(|b| b.is_ascii_alphabetic());
    lang.len() == 2
        && lang.bytes().all(|b| b.is_ascii_lowercase())
        && (region.is_empty() || (region.len() == 2 && letters(region)))
}

#[cfg(test)]
mod tests {
    use super::page_name;

    #[test]
    fn a_page_name_drops_the_extension_and_a_language() {
        for (path, name) in [
            ("commands/cargo-check.md", "cargo-check"),
            ("v1/api.md", "api"),
            ("content/guide.fr.md", "guide"),
            ("index.pt-br.md", "index"),
            ("index.zh_CN.mdx", "index"),
            ("pandas.DataFrame.md", "pandas.DataFrame"),
            ("v1.2.md", "v1.2"),
            ("README", "README"),
        ] {
            assert_eq!(page_name(path), name, "{path}");
        }
    }
}
