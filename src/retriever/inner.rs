//! What every request of a [`super::DocfuseRetriever`] reads: the opened index, and the
//! chunk table and file list read from it once (for passage and document reads), plus
//! the shape of a search's answer. Imports nothing of the retriever's request handlers.

use super::{RetrieveError, RetrievedDocument};
use crate::chunk::section_id;
use crate::read::{DocIndex, Mode};
use crate::store::SourceSpec;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// The index a retriever reads and the tables read from it on first use.
pub(super) struct Inner {
    pub(super) index: Arc<DocIndex>,
    /// Every chunk's id, place and heading path (read on first use).
    pub(super) chunks: OnceLock<Result<ChunkTable, String>>,
    /// The indexed files, `(root, rel_path)` (read on first use).
    pub(super) files: OnceLock<Result<std::collections::HashSet<(usize, String)>, String>>,
}

impl Inner {
    pub(super) fn new(index: Arc<DocIndex>) -> Self {
        Inner {
            index,
            chunks: OnceLock::new(),
            files: OnceLock::new(),
        }
    }
}

/// A search's documents and how they were produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Retrieval {
    pub documents: Vec<RetrievedDocument>,
    /// The mode that answered (never `auto`).
    pub mode: Mode,
    /// Why `auto` answered lexically.
    pub degraded: Option<String>,
    /// Generation of the index that answered.
    pub generation: u64,
    /// Files under the roots changed since that generation was built (a cheap size and
    /// mtime check, see [`crate::read::stale`]); `docfuse refresh` brings it up to date.
    pub stale: bool,
    /// The query's content words no indexed passage contains (stop words aside; as the
    /// query wrote them, lower-cased; a run of CJK characters whose bigrams no passage
    /// holds, as written), in query order: the documentation may not cover them. With
    /// filters, the words no passage the filters keep contains.
    pub missing_words: Vec<String>,
    /// Filters (path prefix, globs, kinds) narrowed the search: `missing_words` are of
    /// the passages they keep, not of the whole index.
    pub filtered: bool,
    /// The part a query over [`super::MAX_QUERY_BYTES`] was searched as, if it was.
    pub focused: Option<super::Focused>,
    /// Every result is a neighbour by meaning alone (no chunk matched a word of the
    /// query in any form, and the answer used vectors).
    pub neighbours_only: bool,
    /// The filters keep no indexed file at all (a prefix such as `docs/` when paths are
    /// relative to the `docs` root): an indexed path to show as an example, or an empty
    /// string for an index without one. `None` when some file passes (or no filter).
    pub no_file_passes: Option<String>,
}

/// Where a chunk is, without its text (kept only for a JSONL source, which has no files).
#[derive(Debug, Clone)]
pub(super) struct ChunkRef {
    pub id: String,
    pub root: usize,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub heading_path: Vec<String>,
    pub text: Option<String>,
}

/// Every chunk of the index, by id and by file.
pub(super) struct ChunkTable {
    pub(super) refs: Vec<ChunkRef>,
    /// Chunk ids are relative to their root: two roots may hold the same id.
    by_id: HashMap<String, Vec<usize>>,
}

impl ChunkTable {
    /// The chunk with id `id` (in root `root` when given). A heading with no prose of its
    /// own has no chunk: it was merged into its first child section, whose chunk starts
    /// at its heading line, so its id (`search.md#search`) reads that chunk
    /// (`search.md#search/table-of-contents`). `page.md#anchor` as a site URL writes it
    /// (`cors.md#use-corsmiddleware`, the last slug of the id, or a heading's explicit
    /// `{#id}`) reads the first section of the page whose own heading has it.
    pub(super) fn lookup(&self, id: &str, root: Option<usize>) -> Option<&ChunkRef> {
        let in_root = |c: &&ChunkRef| root.is_none_or(|r| r == c.root);
        let exact = self
            .by_id
            .get(id)
            .and_then(|at| at.iter().map(|&i| &self.refs[i]).find(in_root));
        if exact.is_some() {
            return exact;
        }
        let (path, anchor) = id.split_once('#')?;
        let child = format!("{id}/");
        let first_of = |keep: &dyn Fn(&ChunkRef) -> bool| {
            self.refs
                .iter()
                .filter(in_root)
                .filter(|c| c.path == path && keep(c))
                .min_by_key(|c| c.start_line)
        };
        // `page.md#anchor` as the site's URL names it: the section whose own heading has
        // that slug or explicit id, at any depth of the page
        let own_heading = |c: &ChunkRef| {
            let sid = section_id(&c.id);
            let tail = sid.rsplit_once('#').map_or(sid, |(_, t)| t);
            !anchor.is_empty() && tail.rsplit('/').next() == Some(anchor)
        };
        first_of(&|c| c.id.starts_with(&child)).or_else(|| first_of(&own_heading))
    }

    /// The first and last line of the run of parts of `c`'s section around it: the
    /// chunks beside it (the table is in (root, path, line) order) with its section id.
    pub(super) fn section_run(&self, c: &ChunkRef) -> (u32, u32) {
        let base = section_id(&c.id);
        let same =
            |r: &&ChunkRef| r.root == c.root && r.path == c.path && section_id(&r.id) == base;
        let at = self
            .by_id
            .get(&c.id)
            .and_then(|ats| ats.iter().copied().find(|&i| self.refs[i].root == c.root));
        let Some(at) = at else {
            return (c.start_line, c.end_line);
        };
        let first = self.refs[..at].iter().rev().take_while(same).last();
        let last = self.refs[at + 1..].iter().take_while(same).last();
        (
            first.map_or(c.start_line, |r| r.start_line),
            last.map_or(c.end_line, |r| r.end_line),
        )
    }

    /// The chunks of file `path` of root `root`, in file order.
    pub(super) fn of_file<'a>(
        &'a self,
        root: usize,
        path: &'a str,
    ) -> impl Iterator<Item = &'a ChunkRef> + 'a {
        self.refs
            .iter()
            .filter(move |c| c.root == root && c.path == path)
    }
}

pub(super) fn chunks(inner: &Inner) -> Result<&ChunkTable, RetrieveError> {
    inner
        .chunks
        .get_or_init(|| {
            let keep_text = matches!(inner.index.manifest().source, SourceSpec::Jsonl { .. });
            let all = inner
                .index
                .lexical()
                .all_chunks()
                .map_err(|e| e.to_string())?;
            let refs: Vec<ChunkRef> = all
                .into_iter()
                .map(|c| ChunkRef {
                    id: c.id,
                    root: c.root,
                    path: c.path,
                    start_line: c.start_line,
                    end_line: c.end_line,
                    heading_path: c.heading_path,
                    text: keep_text.then_some(c.text),
                })
                .collect();
            let mut by_id: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, c) in refs.iter().enumerate() {
                by_id.entry(c.id.clone()).or_default().push(i);
            }
            Ok(ChunkTable { refs, by_id })
        })
        .as_ref()
        .map_err(|e| RetrieveError::Engine(crate::Error::corrupt(inner.index.dir(), e.clone())))
}
