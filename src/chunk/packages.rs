//! Package manifests as chunks: one package entry per manifest ([`crate::repo`]), over
//! all its lines, titled by the package's name and found by its name, description and
//! checks.

use super::source::Prepared;
use super::{Chunk, ChunkKind, SourceDoc};

/// Slug of a package entry's chunk (`web/package.json#_package`).
pub(crate) const PACKAGE_SLUG: &str = "_package";

/// The package entry of a manifest; none, with a warning naming the file and why, when
/// it does not read as one.
pub(super) fn package_chunks(doc: &SourceDoc, prep: &Prepared<'_>) -> Vec<Chunk> {
    let lines = prep.table.len();
    if lines == 0 || prep.blank.iter().all(|b| *b) {
        return Vec::new();
    }
    let p = match crate::repo::read_package(&doc.rel_path, prep.src, &[], "") {
        Ok(p) => p,
        Err(why) => {
            tracing::warn!("`{}` is not indexed as a package: {why}", doc.rel_path);
            return Vec::new();
        }
    };
    let name = if p.name.trim().is_empty() {
        doc.rel_path.clone()
    } else {
        p.name.clone()
    };
    let mut last = lines - 1;
    while last > 0 && prep.blank.get(last).copied().unwrap_or(false) {
        last -= 1;
    }
    let mut body = p.description.trim().to_string();
    for check in &p.checks {
        body.push_str(&format!("\n{}: {}", check.name, check.command));
    }
    if !p.members.is_empty() {
        body.push_str(&format!("\nmembers: {}", p.members.join(", ")));
    }
    vec![Chunk {
        id: super::ids::chunk_id(&doc.rel_path, PACKAGE_SLUG, 1),
        kind: ChunkKind::Package,
        rel_path: doc.rel_path.clone(),
        title: name.clone(),
        title_from_stem: false,
        heading_path: vec![name.clone()],
        start_line: 1,
        end_line: super::lines::line_number(last),
        text: prep.table.join(prep.src, 0, last),
        body: body.trim().to_string(),
        summary: super::fields::collapse_ws(&p.description),
        symbols: vec![name],
        aliases: Vec::new(),
        code: String::new(),
        prelude: None,
    }]
}
