//! Reading a whole indexed document as its chunks, in order, a page at a time.
//!
//! The path is checked as for passages ([`super::passage`]): relative, inside an indexed
//! root, a file of the snapshot. The text comes from the file when it still has the
//! indexed content, else from the index's own copy (marked `stale`), cut at each
//! chunk's lines, so a chunk's text here is the text its id was indexed with.

use super::inner::chunks;
use super::inner::Inner;
use super::passage::{indexed_root, normalise, split_lines, verified_text};
use super::RetrieveError;
use serde::{Deserialize, Serialize};

/// What to read: `path` (relative to its root, as in search results), `root` when
/// several roots hold that path (required then), and `from`, the 0-based position
/// of the first chunk of the page (default 0; the previous page's `next_from`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DocumentRequest {
    pub path: String,
    pub root: Option<usize>,
    pub from: usize,
}

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DocumentChunk {
    pub id: String,
    pub heading_path: Vec<String>,
    /// 1-based inclusive lines of the file.
    pub start_line: u32,
    pub end_line: u32,
    /// The chunk's lines, joined with `\n`.
    pub text: String,
    /// The chunk alone is larger than a page: `text` is its beginning, cut at a character
    /// boundary and ending with `…` (read it whole with `/v1/passage` and its lines).
    pub truncated: bool,
}

/// A page of a document's chunks, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Document {
    pub root: usize,
    pub path: String,
    /// Chunks the document has in the index.
    pub total_chunks: usize,
    /// Position of this page's first chunk.
    pub from: usize,
    pub chunks: Vec<DocumentChunk>,
    /// The `from` of the next page, when chunks remain.
    pub next_from: Option<usize>,
    /// The file on disk no longer has the indexed content: the text is the indexed one.
    pub stale: bool,
    pub stale_reason: Option<String>,
    /// Generation of the index that served it.
    pub generation: u64,
}

/// Reads one page of `req.path`'s chunks: whole chunks while their texts total at most
/// `max_bytes` (always at least one, cut at a character boundary with `…` if it alone is
/// longer).
///
/// # Errors
/// [`RetrieveError::Refused`] or [`RetrieveError::InvalidRequest`] for a path that is not
/// relative and inside its root, or `from` past the last chunk; [`RetrieveError::NotFound`]
/// for a path that is not an indexed file; [`RetrieveError::Engine`] when the index
/// cannot be read.
pub(super) fn read(
    inner: &Inner,
    req: &DocumentRequest,
    max_bytes: usize,
) -> Result<Document, RetrieveError> {
    let path = normalise(&req.path)?;
    let root = indexed_root(inner, &path, req.root)?;
    let table = chunks(inner)?;
    let refs: Vec<_> = table.of_file(root, &path).collect();
    if req.from > 0 && req.from >= refs.len() {
        return Err(RetrieveError::InvalidRequest(format!(
            "`from` is {} but `{path}` has {} chunks (0 to {})",
            req.from,
            refs.len(),
            refs.len().saturating_sub(1)
        )));
    }
    let stored = refs.iter().all(|c| c.text.is_some());
    let (text, stale_reason) = if stored {
        (String::new(), None)
    } else {
        verified_text(inner, root, &path)?
    };
    let lines = split_lines(&text);
    let mut out = Vec::new();
    let mut used = 0usize;
    for c in refs.iter().skip(req.from) {
        let mut body = match &c.text {
            Some(t) => t.clone(),
            None => slice(&lines, c.start_line, c.end_line),
        };
        if !out.is_empty() && used + body.len() > max_bytes {
            break;
        }
        let truncated = body.len() > max_bytes;
        if truncated {
            body = cut(&body, max_bytes);
        }
        used += body.len();
        out.push(DocumentChunk {
            id: c.id.clone(),
            heading_path: c.heading_path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            text: body,
            truncated,
        });
    }
    let (next, total) = (req.from + out.len(), refs.len());
    drop(refs);
    Ok(Document {
        root,
        path,
        total_chunks: total,
        from: req.from,
        chunks: out,
        next_from: (next < total).then_some(next),
        stale: stale_reason.is_some(),
        stale_reason,
        generation: inner.index.generation(),
    })
}

/// Lines `start..=end` (1-based) of `lines`, joined with `\n`; lines past the end are
/// absent.
fn slice(lines: &[&str], start: u32, end: u32) -> String {
    let from = (start.max(1) - 1) as usize;
    let to = (end as usize).min(lines.len());
    lines
        .get(from..to)
        .map(|l| l.join("\n"))
        .unwrap_or_default()
}

/// `text` cut to at most `max` bytes, ending with `…`: at a line end when one falls in
/// the second half, else at a character boundary ([`super::budget::cut_at_line`]).
fn cut(text: &str, max: usize) -> String {
    let room = max.saturating_sub('…'.len_utf8());
    format!("{}…", super::budget::cut_at_line(text, room))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_clamp_and_cuts_keep_characters_whole() {
        let lines = ["a", "b", "c"];
        assert_eq!(slice(&lines, 2, 3), "b\nc");
        assert_eq!(slice(&lines, 3, 9), "c");
        assert_eq!(slice(&lines, 5, 9), "");
        let c = cut("ééééé", 6);
        assert_eq!(c, "é…");
        assert!(c.len() <= 6);
    }
}
