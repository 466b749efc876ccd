//! One search of the docfuse index: validate, ask the engine (over-fetching when path
//! filters or section grouping need more candidates), filter, group the chunks of one
//! section (its best chunk stands for it), locate the matching line, and build the
//! documents with their freshness.

use super::filter::PathFilter;
use super::inner::{Inner, Retrieval};
use super::passage::section_id;
use super::{relative, DocumentMetadata, Mode, RetrieveError, RetrieveOptions, RetrievedDocument};
use crate::read::{DocIndex, Hit, PreparedQuery, SearchOptions, SearchResponse, FUSION_DEPTH};
use std::collections::HashMap;

/// A filtered or grouped query first asks the engine for `limit × OVERFETCH` chunks (at
/// least [`FUSION_DEPTH`]); when too few pass, it asks for every chunk.
const OVERFETCH: usize = 8;

/// Whether a search of `query` may embed it: not in lexical mode, not for an invalid
/// request or a query of symbols, and not on an index without vectors. Cheap: no model is
/// loaded, nothing is read.
pub(super) fn may_embed(index: &DocIndex, query: &str, options: &RetrieveOptions) -> bool {
    options.mode != Mode::Lexical
        && index.has_vectors()
        && super::request::validate_search(query, options).is_ok()
        && !crate::read::is_symbol_query(query)
}

/// What [`prepare`] works out ahead of a search of one query, for [`search`]'s
/// `prepared`: the part of the query to search ([`crate::read::focus`]) and its vector.
pub(super) struct Prepared {
    focused: Option<super::Focused>,
    /// `None` when the search will not embed ([`may_embed`]) or the vector side is not
    /// usable; an embedding error is left for the search to report.
    vector: Option<PreparedQuery>,
}

/// The part of `query` a search will search and the vector it will ask for, made ahead
/// of it ([`DocIndex::prepare_query`]).
pub(super) fn prepare(inner: &Inner, query: &str, options: &RetrieveOptions) -> Prepared {
    let index = &inner.index;
    let focused = crate::read::focus(index, query);
    let searched = focused.as_ref().map_or(query, |f| f.text.as_str());
    let vector = match may_embed(index, searched, options) {
        true => index.prepare_query(searched).ok().flatten(),
        false => None,
    };
    Prepared { focused, vector }
}

/// Runs a search on the calling thread.
///
/// # Errors
/// [`RetrieveError::InvalidRequest`] for a request out of range (see
/// [`super::validate_search`]); [`RetrieveError::Engine`] when the index cannot be read,
/// or for an explicit `vector`/`hybrid` mode the index cannot serve.
pub(super) fn search(
    inner: &Inner,
    query: &str,
    options: &RetrieveOptions,
    prepared: Option<&Prepared>,
) -> Result<Retrieval, RetrieveError> {
    let index = &inner.index;
    let filter = super::request::validate_search(query, options)?;
    // a pasted log or error message: its most informative part (worked out once)
    let focused = match prepared {
        Some(p) => p.focused.clone(),
        None => crate::read::focus(index, query),
    };
    let prepared = prepared.and_then(|p| p.vector.as_ref());
    let query = focused.as_ref().map_or(query, |f| f.text.as_str());
    let floor = options.floor.unwrap_or(0.0);
    // No more results than chunks: a huge limit must not size the engine's buffers.
    let limit = options
        .limit
        .min(index.manifest().collection.chunks as usize)
        .max(1);
    let mut opts = SearchOptions {
        limit,
        explain: options.explain,
        mode: options.mode,
        ..SearchOptions::default()
    };
    opts.params.floor = floor;
    opts.params.agent = options.agent;
    let generation = index.generation();
    let stale = crate::read::stale(index);
    let params = opts.params;
    // areas asked for: module hits are grouped by their folder, whatever `group` says
    let areas = filter.areas();
    let group = (options.group || areas).then_some(Grouping {
        areas,
        sections: options.group,
    });
    let resp = if filter.is_empty() && group.is_none() {
        index.search_prepared(query, &opts, prepared)?
    } else {
        wider_search(index, query, opts, prepared, &filter, group)?
    };
    // (a query of symbols has no words: its missing symbols are the engine's)
    let missing_words = match filter.is_empty() || crate::read::is_symbol_query(query) {
        true => resp.missing_words,
        // (the snapshot unreadable: the whole index's words, as without a filter)
        false => index
            .missing_words_in(query, &params, &|_, path| {
                filter.matches(path) && filter.matches_path_kind(path)
            })
            .unwrap_or(resp.missing_words),
    };
    let neighbours_only = resp.neighbours_only;
    let (mut hits, mode, degraded, weights) = (resp.hits, resp.mode, resp.degraded, resp.weights);
    let groups = match group {
        Some(g) => g.group(&mut hits, limit),
        None => vec![1; hits.len()],
    };
    let best = hits.first().map_or(0.0, |h| h.score);
    let documents: Vec<RetrievedDocument> = hits
        .into_iter()
        .zip(groups)
        .map(|(mut h, chunks)| {
            h.locate(&weights);
            let relative_score = relative(h.score, best);
            let stale = index
                .file_state(h.chunk.root, &h.chunk.path)
                .ok()
                .and_then(|s| s.note());
            let span = section_span(index, &h);
            let area = group.and_then(|g| g.area_of(&h)).map(str::to_string);
            let file_sha256 = index
                .entry(h.chunk.root, &h.chunk.path)
                .ok()
                .flatten()
                .map(|e| e.sha256)
                .unwrap_or_default();
            let mut d = document(h, relative_score, mode, degraded.clone());
            d.metadata.evidence.file_sha256 = file_sha256;
            d.metadata.stale = stale;
            d.metadata.section_start_line = span.0;
            d.metadata.section_end_line = span.1;
            d.metadata.chunks_matched = chunks;
            if let Some(folder) = area {
                as_area(&mut d, &folder);
            }
            d
        })
        .collect();
    // nothing found under filters: is it that no file passes the path filters at all?
    // (kinds aside: a kind no entry has is another matter)
    let no_file_passes = match filter.is_empty() || !documents.is_empty() {
        true => None,
        false => index.opened().snapshot_ref().ok().and_then(|s| {
            (!s.files.iter().any(|f| filter.matches(&f.rel_path))).then(|| {
                s.files
                    .first()
                    .map(|f| f.rel_path.clone())
                    .unwrap_or_default()
            })
        }),
    };
    Ok(Retrieval {
        documents,
        no_file_passes,
        mode,
        degraded,
        generation,
        stale,
        missing_words,
        filtered: !filter.is_empty(),
        focused,
        neighbours_only,
    })
}

/// Over-fetches with no floor, keeps what passes the filter (and, grouping, enough
/// distinct sections), then applies the floor relative to the best hit that passed
/// (`opts.limit` results at most, `opts.params.floor` the floor).
fn wider_search(
    index: &DocIndex,
    query: &str,
    mut opts: SearchOptions,
    prepared: Option<&PreparedQuery>,
    filter: &PathFilter,
    group: Option<Grouping>,
) -> Result<SearchResponse, RetrieveError> {
    let (limit, floor) = (opts.limit, opts.params.floor);
    let total = (index.manifest().collection.chunks as usize).max(1);
    let mut depth = limit.saturating_mul(OVERFETCH).max(FUSION_DEPTH).min(total);
    opts.params.floor = 0.0;
    loop {
        opts.limit = depth;
        let mut resp = index.search_prepared(query, &opts, prepared)?;
        let exhausted = resp.hits.len() < depth || depth >= total;
        let mut kept: Vec<Hit> = std::mem::take(&mut resp.hits)
            .into_iter()
            .filter(|h| {
                filter.matches(&h.chunk.path)
                    && filter.matches_kind(crate::chunk::EntryKind::of_chunk(h.chunk.kind))
            })
            .collect();
        let enough = match group {
            Some(g) => g.count(&kept) >= limit,
            None => kept.len() >= limit,
        };
        if enough || exhausted {
            let best = kept.first().map_or(0.0, |h| h.score);
            let cut = kept.iter().take_while(|h| h.score >= floor * best).count();
            kept.truncate(cut);
            if group.is_none() {
                kept.truncate(limit);
            }
            resp.hits = kept;
            return Ok(resp);
        }
        depth = total;
    }
}

/// How hits are grouped into results, the best hit standing for its group: with
/// `areas` the module hits of one folder (an area), with `sections` the chunks of one
/// section (else every other hit is a group of its own: raw chunks).
#[derive(Debug, Clone, Copy)]
struct Grouping {
    areas: bool,
    sections: bool,
}

impl Grouping {
    /// The folder (root-relative, `.` for the root) an area result of `h` names: a module
    /// hit when areas are asked for; `None` otherwise.
    fn area_of(self, h: &Hit) -> Option<&str> {
        let module =
            crate::chunk::EntryKind::of_chunk(h.chunk.kind) == crate::chunk::EntryKind::Module;
        (self.areas && module).then(|| match h.chunk.path.rsplit_once('/') {
            Some((folder, _)) => folder,
            None => ".",
        })
    }

    /// The group of `h`: `(root, area folder)`, `(root, section id)` or `(root, chunk id)`.
    fn key(self, h: &Hit) -> (usize, bool, &str) {
        match self.area_of(h) {
            Some(folder) => (h.chunk.root, true, folder),
            None if self.sections => (h.chunk.root, false, section_id(&h.chunk.id)),
            None => (h.chunk.root, false, h.chunk.id.as_str()),
        }
    }

    fn count(self, hits: &[Hit]) -> usize {
        hits.iter()
            .map(|h| self.key(h))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// Keeps the best chunk of each group (in rank order) and at most `limit` groups;
    /// returns, per kept hit, how many chunks of its group were among the hits.
    fn group(self, hits: &mut Vec<Hit>, limit: usize) -> Vec<u32> {
        let owned = |h: &Hit| {
            let (r, a, s) = self.key(h);
            (r, a, s.to_string())
        };
        let mut count: HashMap<(usize, bool, String), u32> = HashMap::new();
        for h in hits.iter() {
            *count.entry(owned(h)).or_default() += 1;
        }
        let mut seen = std::collections::HashSet::new();
        hits.retain(|h| seen.insert(owned(h)));
        hits.truncate(limit);
        hits.iter()
            .map(|h| count.get(&owned(h)).copied().unwrap_or(1))
            .collect()
    }
}

/// Reports a module hit as the area (`folder`) that holds it: kind `area`, titled by
/// the folder, the folder first in its heading path; its citation stays the passage
/// that stands for the area.
fn as_area(d: &mut RetrievedDocument, folder: &str) {
    d.metadata.kind = "area".to_string();
    d.metadata.title = folder.to_string();
    d.metadata.heading_path.insert(0, folder.to_string());
}

/// The first and last line of the section `h` belongs to: its own chunk and the parts of
/// the same section beside it (chunk ordinals follow (root, path, line); a section a box
/// interrupted goes on after the box in another run of parts, not this one). Reads only
/// those chunks.
fn section_span(index: &DocIndex, h: &Hit) -> (u32, u32) {
    let c = &h.chunk;
    let base = section_id(&c.id);
    let same = |ord: u64| {
        index
            .lexical()
            .chunk_at(ord)
            .ok()
            .filter(|n| n.root == c.root && n.path == c.path && section_id(&n.id) == base)
    };
    let (mut start, mut end) = (c.start_line, c.end_line);
    let mut ord = h.ord;
    while let Some(n) = ord.checked_sub(1).and_then(same) {
        start = start.min(n.start_line);
        ord -= 1;
    }
    ord = h.ord;
    while let Some(n) = ord.checked_add(1).and_then(same) {
        end = end.max(n.end_line);
        ord += 1;
    }
    (start, end)
}

/// An engine hit as a retrieved document.
pub(super) fn document(
    h: Hit,
    relative_score: f32,
    mode: Mode,
    degraded: Option<String>,
) -> RetrievedDocument {
    let c = h.chunk;
    let content = match &c.prelude {
        Some(p) => format!(
            "{}\n\n{p}\n{}",
            breadcrumb(&c.title, &c.heading_path),
            c.text
        ),
        None => format!("{}\n\n{}", breadcrumb(&c.title, &c.heading_path), c.text),
    };
    RetrievedDocument {
        source: format!("{}:{}-{}", c.path, c.start_line, c.end_line),
        id: c.id,
        content,
        score: h.score,
        metadata: DocumentMetadata {
            kind: serde_json::to_value(c.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            root: c.root,
            path: c.path.clone(),
            start_line: c.start_line,
            end_line: c.end_line,
            match_line: h.match_line,
            section_start_line: c.start_line,
            section_end_line: c.end_line,
            chunks_matched: 1,
            title: c.title,
            heading_path: c.heading_path,
            evidence: super::Evidence {
                path: c.path,
                start_line: c.start_line,
                end_line: c.end_line,
                chunk_sha256: crate::hashing::sha256_hex(c.text.as_bytes()),
                file_sha256: String::new(),
            },
            provenance: super::Provenance::Observed,
            confidence: h.confidence,
            relative_score,
            matched_terms: h.matched_terms,
            snippet: h.snippet,
            stale: None,
            mode: Some(mode),
            explain: h.explain,
            degraded,
            fusion: Vec::new(),
            first_stage: None,
        },
    }
}

/// `Title › Heading › Subheading` (the title is left out when the first heading repeats it).
pub(crate) fn breadcrumb(title: &str, heading_path: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(heading_path.len() + 1);
    if heading_path.first().map(String::as_str) != Some(title) && !title.is_empty() {
        parts.push(title);
    }
    parts.extend(heading_path.iter().map(String::as_str));
    parts.join(" › ")
}
