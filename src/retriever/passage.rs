//! Reading passages (a line range of an indexed file, or a chunk by id), confined to the
//! indexed roots.
//!
//! A path is refused before anything is opened when it is absolute, has a `..`
//! component, a backslash, a NUL byte or a percent-encoded byte (`%2e%2e`); then it must
//! name a file of the index's snapshot; then the file is canonicalised (symlinks
//! resolved) and must still lie inside its canonicalised root. Error messages never
//! contain file content.

use super::inner::{chunks, ChunkRef, ChunkTable, Inner};
use super::RetrieveError;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Most lines one page returns (a longer range is paged: `truncated` and
/// `next_start_line`).
pub const MAX_PASSAGE_LINES: u32 = 2000;
/// Most bytes of text one page returns when the caller sets no smaller budget.
pub const MAX_PASSAGE_BYTES: usize = 256 * 1024;

/// What to read: `id` (a chunk id from a search result), or `path` (relative to its
/// root, as in search results) with an optional 1-based inclusive line range. With an
/// id, the lines default to the whole section the chunk belongs to (every chunk of it);
/// with a path, to the whole file. Long ranges come in pages ([`Passage::next_start_line`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PassageRequest {
    pub id: Option<String>,
    pub path: Option<String>,
    /// Root index; needed when several roots hold the same relative path.
    pub root: Option<usize>,
    pub start_line: Option<u32>,
    pub end_line: Option<u32>,
}

/// The exact text of a line range of an indexed file: as on disk when the file still
/// has the content that was indexed, else as it was indexed (marked `stale`) — never
/// other text under an indexed id or heading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Passage {
    /// The chunk that contains `start_line` (or the one asked for).
    pub id: Option<String>,
    pub root: usize,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Lines in the file.
    pub total_lines: u32,
    /// Heading path of the chunk that contains `start_line`.
    pub heading_path: Vec<String>,
    /// `path:start-end`.
    pub source: String,
    /// The lines, joined with `\n`.
    pub text: String,
    /// Not everything asked for is here: the range goes on past `end_line` (this is one
    /// page of it), or a single line longer than a page was cut at a character boundary
    /// (it ends with `…`; lines are the unit of reading, so its rest is not served).
    pub truncated: bool,
    /// When the range goes on: the `start_line` that reads the next page (same `end_line`).
    pub next_start_line: Option<u32>,
    /// The last line asked for (the end of the whole range, of which this is a page).
    pub range_end_line: u32,
    /// The file on disk no longer has the indexed content (changed, deleted, unreadable):
    /// the text served is the indexed one, from the index's own copy.
    pub stale: bool,
    /// Why, when `stale`.
    pub stale_reason: Option<String>,
    /// Generation of the index that served it.
    pub generation: u64,
}

pub(super) fn read(
    inner: &Inner,
    req: &PassageRequest,
    max_bytes: usize,
) -> Result<Passage, RetrieveError> {
    let (root, path, chunk) = match (&req.id, &req.path) {
        (Some(id), path) => {
            let table = chunks(inner)?;
            let c = table
                .lookup(id, req.root)
                .or_else(|| {
                    // `page.md#label`: an anchor another rule gives (a MyST target, another
                    // generator's slug), from the generation's links
                    let (path, anchor) = id.split_once('#')?;
                    let (root, section) = inner.index.anchor_section(req.root, path, anchor)?;
                    table.lookup(&section, Some(root))
                })
                .ok_or_else(|| {
                    RetrieveError::NotFound(format!(
                        "no chunk with id `{}`{}",
                        shorten(id),
                        sections_hint(table, id, req.root)
                    ))
                })?;
            if let Some(p) = path {
                if normalise(p)? != c.path {
                    return Err(RetrieveError::InvalidRequest(format!(
                        "chunk `{}` is in `{}`, not in `{}`",
                        shorten(id),
                        c.path,
                        shorten(p)
                    )));
                }
            }
            if let Some(text) = &c.text {
                return Ok(Passage {
                    generation: inner.index.generation(),
                    ..stored_passage(c, text)
                });
            }
            (c.root, c.path.clone(), Some(c))
        }
        (None, Some(p)) => {
            let rel = normalise(p)?;
            let root = indexed_root(inner, &rel, req.root)?;
            (root, rel, None)
        }
        (None, None) => {
            return Err(RetrieveError::InvalidRequest(
                "give `path` (relative to an indexed root, with optional `start_line` and `end_line`) or `id` (from a search result)".into(),
            ))
        }
    };
    let (text, stale_reason) = verified_text(inner, root, &path)?;
    let lines = split_lines(&text);
    let total = lines.len() as u32;
    let section = chunk.map(|c| section_span(inner, c));
    let start = req.start_line.or(section.map(|s| s.0)).unwrap_or(1);
    let end = req.end_line.or(if req.start_line.is_none() {
        section.map(|s| s.1)
    } else {
        None
    });
    let (start, end) = line_range(start, end, total, &path).map_err(|e| {
        // past the end of what was indexed of a file read in part: say so
        let max = inner.index.manifest().config.max_file_bytes;
        let entry = inner.index.entry(root, &path).ok().flatten();
        match entry.filter(|f| f.size > max).and_then(|f| f.note) {
            Some(note) if start > total => RetrieveError::InvalidRequest(format!(
                "`start_line` {start} is past the {total} lines of `{}` served: the file was read in part ({note})",
                shorten(&path)
            )),
            _ => e,
        }
    })?;
    let (out, last, line_cut) = page(&lines, start, end, max_bytes.min(MAX_PASSAGE_BYTES));
    let truncated = last < end || line_cut;
    // lines asked for outside the id's section are named by the chunk they start in
    let in_section = |_: &&ChunkRef| section.is_some_and(|(a, b)| (a..=b).contains(&start));
    let (id, heading_path) = match chunk.filter(in_section) {
        Some(c) => (Some(c.id.clone()), c.heading_path.clone()),
        None => containing_chunk(inner, root, &path, start),
    };
    Ok(Passage {
        id,
        root,
        source: format!("{path}:{start}-{last}"),
        path,
        start_line: start,
        end_line: last,
        total_lines: total,
        heading_path,
        text: out,
        truncated,
        next_start_line: (last < end).then_some(last + 1),
        range_end_line: end,
        stale: stale_reason.is_some(),
        stale_reason,
        generation: inner.index.generation(),
    })
}

/// The text to serve for an indexed file: the file on disk when its content is the
/// indexed one (size and mtime, then sha256), else the index's copy with the reason.
pub(super) fn verified_text(
    inner: &Inner,
    root: usize,
    path: &str,
) -> Result<(String, Option<String>), RetrieveError> {
    let index = &inner.index;
    let state = index.file_state(root, path)?;
    if state == crate::read::FileState::Fresh {
        let file = confined(inner, root, path)?;
        let max = index.manifest().config.max_file_bytes;
        // the bytes read must be the indexed ones: the file may be rewritten between
        // the check and the read (an editor's save, a reader cache's sync)
        let indexed = index.entry(root, path)?.map(|e| e.sha256);
        match crate::discover::read_checked(&file, max, &mut Vec::new()) {
            Ok(t) if indexed.as_ref().is_none_or(|sha| *sha == t.sha256) => {
                return Ok((t.text, None))
            }
            Ok(_) => tracing::debug!("`{path}` changed while reading"),
            Err(e) => tracing::debug!("`{path}` changed while reading: {e}"),
        }
    }
    let note = state
        .note()
        .unwrap_or_else(|| "file changed while reading".into());
    let text = index.indexed_text(root, path)?.ok_or_else(|| {
        RetrieveError::NotFound(format!("`{}` is not an indexed file", shorten(path)))
    })?;
    let reason = format!(
        "{note}: this is the text as indexed in generation {} (run `docfuse refresh` to index the file as it is now)",
        index.generation()
    );
    Ok((text, Some(reason)))
}

/// Checks a requested path without touching the disk and returns it normalised
/// (`.` and empty components dropped, `/`-separated).
pub(super) fn normalise(p: &str) -> Result<String, RetrieveError> {
    let refuse = |why: &str| {
        RetrieveError::Refused(format!(
            "path `{}` is refused: {why}; pass a path relative to an indexed root, as shown in search results",
            shorten(p)
        ))
    };
    if crate::analysis::is_blank(p) {
        return Err(RetrieveError::InvalidRequest("`path` is empty".into()));
    }
    if p.contains('\0') {
        return Err(refuse("it contains a NUL byte"));
    }
    if p.contains('\\') {
        return Err(refuse("it contains a backslash"));
    }
    if has_percent_escape(p) {
        return Err(refuse("it contains a percent-encoded byte"));
    }
    let path = Path::new(p);
    if path.is_absolute() || p.starts_with('/') || p.get(1..2) == Some(":") {
        return Err(refuse("it is absolute"));
    }
    let mut parts = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err(refuse("it leaves its root (`..`)")),
            Component::RootDir | Component::Prefix(_) => return Err(refuse("it is absolute")),
        }
    }
    if parts.is_empty() {
        return Err(RetrieveError::InvalidRequest("`path` names no file".into()));
    }
    Ok(parts.join("/"))
}

fn has_percent_escape(p: &str) -> bool {
    p.as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// The root whose snapshot holds `rel`: the asked one, else the only one.
///
/// # Errors
/// [`RetrieveError::NotFound`] when none does; [`RetrieveError::InvalidRequest`] naming
/// the roots when several do and none was asked for.
pub(super) fn indexed_root(
    inner: &Inner,
    rel: &str,
    root: Option<usize>,
) -> Result<usize, RetrieveError> {
    let files = inner
        .files
        .get_or_init(|| {
            inner
                .index
                .snapshot()
                .map(|s| s.files.into_iter().map(|f| (f.root, f.rel_path)).collect())
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| RetrieveError::Engine(crate::Error::corrupt(inner.index.dir(), e.clone())))?;
    if let Some(r) = root {
        if inner.index.root_dir(r).is_none() {
            return Err(RetrieveError::InvalidRequest(format!(
                "there is no root {r}: the index has {} (numbered from 0, as in search results)",
                (0..)
                    .take_while(|&i| inner.index.root_dir(i).is_some())
                    .count()
            )));
        }
    }
    let found: Vec<usize> = match root {
        Some(r) => files
            .contains(&(r, rel.to_string()))
            .then_some(r)
            .into_iter()
            .collect(),
        None => roots_of(files, rel),
    };
    match found[..] {
        [r] => Ok(r),
        [] => Err(RetrieveError::NotFound(format!(
            "`{}` is not an indexed file (paths are relative to an indexed root, as in search results; a file added since the last build needs `docfuse refresh`){}",
            shorten(rel),
            match closest_paths(files, rel)[..] {
                [] => String::new(),
                ref near => format!("; did you mean {}?", quoted_list(near)),
            }
        ))),
        _ => Err(RetrieveError::InvalidRequest(format!(
            "`{}` is in several roots ({}): give its root as search results show it (`N:path`): `--root N` on the command line, `root` over HTTP and MCP",
            shorten(rel),
            found
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Indexed paths a reader may have meant by `rel` (at most 3, sorted): the same path
/// without its extension (`blocks` for `blocks.md`, a site's address for the page), or
/// the same file name in another folder.
fn closest_paths(files: &HashSet<(usize, String)>, rel: &str) -> Vec<String> {
    let want = rel.trim_end_matches('/');
    let name = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let stem = |p: &str| p.rsplit_once('.').map_or(p, |(s, _)| s).to_string();
    let mut near: Vec<String> = files
        .iter()
        .map(|(_, p)| p)
        .filter(|p| {
            stem(p) == want
                || stem(p).trim_end_matches("/index") == want
                || (name(p) == name(want) && !want.is_empty())
                || stem(&name(p)) == name(want)
        })
        .cloned()
        .collect();
    near.sort();
    near.dedup();
    near.truncate(3);
    near
}

/// `a`, `b` or `c`, each quoted.
fn quoted_list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|i| format!("`{}`", shorten(i))).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => q.join(""),
    }
}

/// For an id `page#anchor` of an indexed page that names none of its sections: the page's
/// first section ids, to choose from.
fn sections_hint(table: &ChunkTable, id: &str, root: Option<usize>) -> String {
    let Some((path, _)) = id.split_once('#') else {
        return String::new();
    };
    let mut ids: Vec<&str> = Vec::new();
    for c in table
        .refs
        .iter()
        .filter(|c| c.path == path && root.is_none_or(|r| r == c.root))
    {
        let sid = section_id(&c.id);
        if !ids.contains(&sid) {
            ids.push(sid);
        }
    }
    match ids.len() {
        0 => String::new(),
        n => {
            let shown: Vec<String> = ids
                .iter()
                .take(5)
                .map(|i| format!("`{}`", shorten(i)))
                .collect();
            let more = if n > 5 {
                format!(" and {} more", n - 5)
            } else {
                String::new()
            };
            format!(
                "; `{}` has the sections {}{more}",
                shorten(path),
                shown.join(", ")
            )
        }
    }
}

/// The roots whose snapshot holds `rel`, in order.
fn roots_of(files: &HashSet<(usize, String)>, rel: &str) -> Vec<usize> {
    let mut roots: Vec<usize> = files
        .iter()
        .filter(|(_, p)| p == rel)
        .map(|(r, _)| *r)
        .collect();
    roots.sort_unstable();
    roots
}

/// The canonical path of `rel` under root `root`, refused when it resolves outside the
/// canonical root (a symlink leaving it).
fn confined(inner: &Inner, root: usize, rel: &str) -> Result<PathBuf, RetrieveError> {
    let Some(root_dir) = inner.index.root_dir(root) else {
        return Err(RetrieveError::NotFound(
            "this index has no files (a JSONL source): read passages by `id`".into(),
        ));
    };
    let canon_root = std::fs::canonicalize(root_dir).map_err(|e| {
        RetrieveError::NotFound(format!("root {root} (`{root_dir}`) cannot be read: {e}"))
    })?;
    let candidate = if canon_root.is_file() {
        if canon_root.file_name().map(|n| n.to_string_lossy()) != Some(rel.into()) {
            return Err(RetrieveError::NotFound(format!(
                "`{}` is not in root {root}",
                shorten(rel)
            )));
        }
        canon_root.clone()
    } else {
        canon_root.join(rel)
    };
    let canon = std::fs::canonicalize(&candidate).map_err(|_| {
        RetrieveError::NotFound(format!(
            "`{}` is no longer on disk; the index is stale (rebuild with `docfuse index`)",
            shorten(rel)
        ))
    })?;
    if !canon.starts_with(&canon_root) {
        return Err(RetrieveError::Refused(format!(
            "path `{}` is refused: it resolves outside the indexed roots (a symlink leaves root {root})",
            shorten(rel)
        )));
    }
    if !canon.is_file() {
        return Err(RetrieveError::NotFound(format!(
            "`{}` is not a file",
            shorten(rel)
        )));
    }
    Ok(canon)
}

/// Lines as the chunker numbers them: LF, CRLF and lone CR end a line; a BOM is dropped.
pub(super) fn split_lines(text: &str) -> Vec<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(&text[start..]);
    }
    out
}

/// Validates a 1-based inclusive range against `total` lines; an end past the file is
/// clamped to its last line.
fn line_range(
    start: u32,
    end: Option<u32>,
    total: u32,
    path: &str,
) -> Result<(u32, u32), RetrieveError> {
    if start == 0 {
        return Err(RetrieveError::InvalidRequest(
            "`start_line` is 1-based: it must be at least 1".into(),
        ));
    }
    if let Some(e) = end {
        if e < start {
            return Err(RetrieveError::InvalidRequest(format!(
                "`end_line` ({e}) is before `start_line` ({start})"
            )));
        }
    }
    if start > total {
        return Err(RetrieveError::InvalidRequest(format!(
            "`start_line` {start} is past the end of `{path}` ({total} lines)"
        )));
    }
    Ok((start, end.unwrap_or(u32::MAX).min(total)))
}

/// Lines `start..=end` (1-based) joined with `\n`, as many whole lines as fit in
/// `max_bytes` and at most [`MAX_PASSAGE_LINES`]; at least one line (a single line
/// longer than the budget is cut at a character boundary and ends with `…`). Returns the
/// text, the last line included and whether a line was cut.
fn page(lines: &[&str], start: u32, end: u32, max_bytes: usize) -> (String, u32, bool) {
    let mut out = String::new();
    let mut last = start;
    let mut line_cut = false;
    let end = end.min(start.saturating_add(MAX_PASSAGE_LINES - 1));
    for n in start..=end {
        let line = lines.get(n as usize - 1).copied().unwrap_or("");
        let sep = usize::from(n > start);
        if n > start && out.len() + sep + line.len() > max_bytes {
            break;
        }
        if n > start {
            out.push('\n');
        }
        if line.len() > max_bytes {
            let mut cut = max_bytes.saturating_sub(3);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            out.push_str(&line[..cut]);
            out.push('…');
            line_cut = true;
        } else {
            out.push_str(line);
        }
        last = n;
    }
    (out, last, line_cut)
}

/// The first and last line of the section `c` belongs to: its own chunk and the parts of
/// the same section (the same id before any `~k` suffix, in the same file) beside it in
/// file order. A section a box interrupted goes on after the box in more parts; those
/// are another run (read by their own ids), so a read never serves the box's lines under
/// this section's heading path. Search reports the same span (`search::section_span`).
fn section_span(inner: &Inner, c: &ChunkRef) -> (u32, u32) {
    match chunks(inner) {
        Ok(table) => table.section_run(c),
        Err(_) => (c.start_line, c.end_line),
    }
}

pub(crate) use crate::chunk::section_id;

/// The id and heading path of the chunk of `(root, path)` that contains `line` (else the
/// last one starting before it).
fn containing_chunk(
    inner: &Inner,
    root: usize,
    path: &str,
    line: u32,
) -> (Option<String>, Vec<String>) {
    let Ok(table) = chunks(inner) else {
        return (None, Vec::new());
    };
    table
        .refs
        .iter()
        .filter(|c| c.root == root && c.path == path && c.start_line <= line)
        .max_by_key(|c| (c.end_line >= line, c.start_line))
        .map_or((None, Vec::new()), |c| {
            (Some(c.id.clone()), c.heading_path.clone())
        })
}

fn stored_passage(c: &ChunkRef, text: &str) -> Passage {
    Passage {
        id: Some(c.id.clone()),
        root: c.root,
        path: c.path.clone(),
        start_line: c.start_line,
        end_line: c.end_line,
        total_lines: c.end_line,
        heading_path: c.heading_path.clone(),
        source: format!("{}:{}-{}", c.path, c.start_line, c.end_line),
        text: text.to_string(),
        truncated: false,
        next_start_line: None,
        range_end_line: c.end_line,
        stale: false,
        stale_reason: None,
        generation: 0,
    }
}

/// User input echoed in messages, cut to 200 characters.
fn shorten(s: &str) -> String {
    if s.chars().count() <= 200 {
        return s.to_string();
    }
    let cut: String = s.chars().take(199).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_absolute_and_encoded_paths_are_refused_before_any_read() {
        for bad in [
            "../secret.md",
            "guide/../../secret.md",
            "/etc/passwd",
            "%2e%2e/secret.md",
            "guide%2F..%2F..%2Fsecret.md",
            "..\\secret.md",
            "C:/x.md",
            "a\0b",
        ] {
            let e = normalise(bad).unwrap_err();
            assert_eq!(e.code(), "forbidden_path", "{bad}: {e}");
        }
        assert_eq!(
            normalise("./guide//install.md").unwrap(),
            "guide/install.md"
        );
        assert_eq!(normalise("").unwrap_err().code(), "bad_request");
        assert_eq!(normalise("100%.md").unwrap(), "100%.md");
    }

    #[test]
    fn lines_split_like_the_chunker_and_ranges_clamp() {
        assert_eq!(
            split_lines("\u{feff}a\r\nb\rc\n\nd"),
            ["a", "b", "c", "", "d"]
        );
        assert_eq!(split_lines("a\n"), ["a"]);
        assert_eq!(line_range(2, Some(99), 5, "x").unwrap(), (2, 5));
        assert_eq!(line_range(1, None, 5000, "x").unwrap(), (1, 5000));
        let lines = ["aaaa", "bbbb", "cccc", "dd"];
        assert_eq!(page(&lines, 1, 4, 9), ("aaaa\nbbbb".to_string(), 2, false));
        assert_eq!(page(&lines, 3, 4, 100), ("cccc\ndd".to_string(), 4, false));
        assert_eq!(page(&lines, 1, 1, 3), ("…".to_string(), 1, true));
        assert_eq!(section_id("a.md#x/y~12"), "a.md#x/y");
        assert_eq!(section_id("a.md#x~y"), "a.md#x~y");
        assert_eq!(
            line_range(0, None, 5, "x").unwrap_err().code(),
            "bad_request"
        );
        assert_eq!(
            line_range(3, Some(2), 5, "x").unwrap_err().code(),
            "bad_request"
        );
        assert_eq!(
            line_range(6, None, 5, "x").unwrap_err().code(),
            "bad_request"
        );
    }
}
