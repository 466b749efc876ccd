//! Building a lexical index from projected entries, in **buckets**: runs of consecutive
//! documents whose chunks form one tantivy segment each. A refresh keeps the buckets
//! whose documents did not change (their segment files are hard links of the previous
//! generation's), drops the others' segments whole and writes their documents again as
//! new buckets. No segment ever holds a deleted chunk, so every collection statistic that
//! BM25F reads — document frequencies, the term dictionaries used for prefix expansion,
//! field lengths — is exactly that of a full rebuild.

use super::buckets::{write_buckets, Bucket, BUCKETS_FILE};
use super::schema::{build_schema, register_tokenizer, Fields};
use crate::analysis::index_terms;
use crate::config::PerField;
use crate::error::{Error, Result};
use crate::projection::Entry;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use tantivy::directory::Directory;
use tantivy::indexer::NoMergePolicy;
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

/// tantivy's list of an index's segments, in the index folder.
const META_FILE: &str = "meta.json";

/// Writer heap for tantivy, bytes.
const WRITER_HEAP_BYTES: usize = 128 * 1024 * 1024;

/// Collection statistics gathered while writing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildStats {
    pub chunks: u64,
    /// Average number of terms per field, [`crate::config::Field::ALL`] order.
    pub avg_field_len: PerField<f32>,
    /// Buckets written anew (not kept from the previous index).
    pub buckets_written: u64,
    /// Buckets kept from the previous index.
    pub buckets_kept: u64,
}

/// An entry analysed for the index (the costly part of adding it, which needs no writer:
/// a build prepares entries on one thread while tantivy indexes on another).
pub struct Prepared {
    /// Each field's analysed terms, space-separated.
    texts: PerField<String>,
    /// Terms per field.
    lens: PerField<u64>,
    id_keys: Vec<String>,
    path_keys: Vec<String>,
    symbol_keys: Vec<String>,
    /// The chunk's section: its root and section id (the id without a piece's `~k`).
    section: (usize, String),
    /// The stored chunk, JSON.
    stored: String,
}

impl Prepared {
    /// Analyses `entry`.
    ///
    /// # Errors
    /// [`Error::Config`] when the stored chunk cannot be serialised.
    pub fn of(entry: &Entry) -> Result<Self> {
        let mut lens = [0u64; crate::config::FIELDS];
        let texts: PerField<String> = std::array::from_fn(|i| {
            let terms = index_terms(&entry.fields[i]);
            lens[i] = terms.len() as u64;
            terms.join(" ")
        });
        let stored = serde_json::to_string(&entry.stored)
            .map_err(|e| Error::Config(format!("cannot serialise chunk: {e}")))?;
        Ok(Prepared {
            texts,
            lens,
            id_keys: entry.id_keys.clone(),
            path_keys: entry.path_keys.clone(),
            symbol_keys: entry.symbol_keys.clone(),
            section: (
                entry.stored.root,
                crate::chunk::section_id(&entry.stored.id).to_string(),
            ),
            stored,
        })
    }
}

/// Writes entries into a tantivy index in one folder, in the order given: the ordinal of
/// a chunk (its position in the whole index, the stable tie-break key of the ranking) is
/// its bucket's first ordinal plus its position in the bucket.
pub struct LexicalWriter {
    dir: PathBuf,
    writer: IndexWriter,
    fields: Fields,
    /// The index's buckets so far, in order.
    layout: Vec<Bucket>,
    /// The bucket being written, if any.
    open: Option<Bucket>,
    /// Buckets of the previous index: those neither kept nor dropped are deleted.
    previous: Vec<Bucket>,
    /// Ids of the previous buckets whose segments were dropped when the writer started.
    dropped: HashSet<u64>,
    /// Ids of the index's segments, to tell which one a bucket's commit made.
    segments: HashSet<String>,
    next_id: u64,
    written: u64,
    /// The position of each section's first piece in the bucket being written.
    sections: HashMap<(usize, String), u64>,
}

impl LexicalWriter {
    /// Creates an empty index in `dir` (which must exist and be empty).
    ///
    /// # Errors
    /// [`Error::Tantivy`] when tantivy cannot create the index there.
    pub fn create(dir: &Path) -> Result<Self> {
        let (schema, _) = build_schema();
        let index = Index::create_in_dir(dir, schema)?;
        Self::with_index(dir, index, Vec::new())
    }

    /// Starts a new index in the empty folder `dir` from the index in `previous_dir`
    /// (its files are hard-linked, copied where links fail): the buckets named in `keep`
    /// can be kept with [`LexicalWriter::keep`]. The others' segments are left out of the
    /// new index at once (the files of none of them are linked); a bucket whose segment
    /// is not recorded (an index written before buckets recorded it) is deleted by
    /// [`LexicalWriter::finish`] instead.
    ///
    /// # Errors
    /// [`Error::Io`] when a file cannot be linked or copied; [`Error::Corrupt`] when the
    /// previous index has no bucket list; [`Error::Tantivy`] when it cannot be opened or
    /// its segment list cannot be written; [`Error::Config`] when that list cannot be
    /// serialised.
    pub fn update(dir: &Path, previous_dir: &Path, keep: &HashSet<u64>) -> Result<Self> {
        let previous = super::buckets::read_buckets(previous_dir)?;
        // a bucket without chunks has no segment and nothing to delete
        let gone: Vec<&Bucket> = previous
            .iter()
            .filter(|b| !keep.contains(&b.id) && (b.chunks == 0 || segment_of(b).is_some()))
            .collect();
        let segments: HashSet<&str> = gone.iter().filter_map(|b| segment_of(b)).collect();
        link_index_files(previous_dir, dir, &segments)?;
        let index = Index::open_in_dir(dir)?;
        if !segments.is_empty() {
            // the writer reads the segment list from the folder when it starts
            drop_segments(&index, &segments)?;
        }
        let dropped = gone.iter().map(|b| b.id).collect();
        let mut w = Self::with_index(dir, index, previous)?;
        w.dropped = dropped;
        Ok(w)
    }

    fn with_index(dir: &Path, index: Index, previous: Vec<Bucket>) -> Result<Self> {
        register_tokenizer(&index);
        let fields = super::schema::fields_of(&index.schema())?;
        // One indexing thread: documents keep their insertion order; one segment per
        // bucket (one commit each, never merged).
        let writer: IndexWriter = index.writer_with_num_threads(1, WRITER_HEAP_BYTES)?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let next_id = previous.iter().map(|b| b.id + 1).max().unwrap_or(0);
        let segments = segment_ids(&index)?;
        Ok(LexicalWriter {
            dir: dir.to_path_buf(),
            writer,
            fields,
            layout: Vec::new(),
            open: None,
            previous,
            dropped: HashSet::new(),
            segments,
            next_id,
            written: 0,
            sections: HashMap::new(),
        })
    }

    /// The buckets of the previous index, in order (empty for a new index).
    pub fn previous(&self) -> &[Bucket] {
        &self.previous
    }

    /// Keeps bucket `id` of the previous index as the next bucket of this one.
    ///
    /// # Errors
    /// [`Error::Config`] when the previous index has no such bucket or it is kept twice.
    pub fn keep(&mut self, id: u64) -> Result<()> {
        self.close_bucket()?;
        let Some(b) = self.previous.iter().find(|b| b.id == id) else {
            return Err(Error::Config(format!("internal: no bucket {id} to keep")));
        };
        if self.layout.iter().any(|k| k.id == id) {
            return Err(Error::Config(format!("internal: bucket {id} kept twice")));
        }
        self.layout.push(b.clone());
        Ok(())
    }

    /// Ends the bucket being written (if any): the next entry starts a new one.
    ///
    /// # Errors
    /// [`Error::Tantivy`] when the commit fails.
    pub fn close_bucket(&mut self) -> Result<()> {
        self.sections.clear();
        if let Some(mut b) = self.open.take() {
            self.writer.commit()?;
            b.segment = self.new_segment()?;
            self.written += 1;
            self.layout.push(b);
        }
        Ok(())
    }

    /// The segment the last commit made, when it made exactly one (a bucket's commit
    /// makes one when the bucket has chunks: one indexing thread, no merges).
    fn new_segment(&mut self) -> Result<Option<String>> {
        let now = segment_ids(self.writer.index())?;
        let mut new: Vec<&String> = now.difference(&self.segments).collect();
        let made = match new.len() {
            1 => new.pop().cloned(),
            _ => None,
        };
        self.segments = now;
        Ok(made)
    }

    /// Chunks in the bucket being written (0 when none is open).
    pub fn open_chunks(&self) -> u64 {
        self.open.as_ref().map_or(0, |b| b.chunks)
    }

    /// Adds one entry to the bucket being written (opening one if needed).
    ///
    /// # Errors
    /// [`Error::Tantivy`] when the document cannot be added; [`Error::Config`] when the
    /// entry cannot be serialised.
    pub fn add(&mut self, entry: &Entry) -> Result<()> {
        self.add_prepared(Prepared::of(entry)?)
    }

    /// Adds one prepared entry to the bucket being written (opening one if needed).
    ///
    /// # Errors
    /// [`Error::Tantivy`] when the document cannot be added.
    pub fn add_prepared(&mut self, p: Prepared) -> Result<()> {
        let f = self.fields;
        let (id, local) = {
            let b = self.open_bucket();
            (b.id, b.chunks)
        };
        let mut doc = TantivyDocument::default();
        for (i, text) in p.texts.into_iter().enumerate() {
            doc.add_text(f.text[i], text);
        }
        for k in p.id_keys {
            doc.add_text(f.id_key, k);
        }
        for k in p.path_keys {
            doc.add_text(f.path_key, k);
        }
        for k in p.symbol_keys {
            doc.add_text(f.symbol_key, k);
        }
        let section = *self.sections.entry(p.section).or_insert(local);
        doc.add_u64(f.ord, local);
        doc.add_u64(f.bucket, id);
        doc.add_u64(f.section, section);
        doc.add_text(f.stored, p.stored);
        self.writer.add_document(doc)?;
        let b = self.open_bucket();
        b.chunks += 1;
        for (t, l) in b.lens.iter_mut().zip(p.lens) {
            *t += l;
        }
        for (w, l) in b.with_field.iter_mut().zip(p.lens) {
            *w += u64::from(l > 0);
        }
        Ok(())
    }

    /// Counts one more document in the bucket being written (a document may have no
    /// chunk: it still belongs to a bucket, so that buckets cover the documents in order).
    /// Returns the id of the bucket it belongs to.
    pub fn file_done(&mut self) -> u64 {
        // a section never reaches past its document (two documents may share a path: a
        // JSONL corpus that repeats an `_id`)
        self.sections.clear();
        let b = self.open_bucket();
        b.files += 1;
        b.id
    }

    /// The bucket being written, opened with a new id when none is.
    fn open_bucket(&mut self) -> &mut Bucket {
        let id = self.next_id;
        if self.open.is_none() {
            self.next_id += 1;
        }
        self.open.get_or_insert_with(|| Bucket::empty(id))
    }

    /// Deletes the previous index's buckets that were neither kept nor dropped, ends the
    /// last bucket, commits (once: the deletes with the last bucket), writes the bucket
    /// list and returns the collection statistics.
    ///
    /// # Errors
    /// [`Error::Tantivy`] when a commit fails; [`Error::Io`] when the bucket list
    /// cannot be written.
    pub fn finish(mut self) -> Result<BuildStats> {
        let kept: HashSet<u64> = self.layout.iter().map(|b| b.id).collect();
        let mut deletes = false;
        for b in self.previous.iter() {
            if !kept.contains(&b.id) && !self.dropped.contains(&b.id) {
                // new buckets have ids above every previous one: the open bucket's
                // chunks are never deleted
                self.writer
                    .delete_term(Term::from_field_u64(self.fields.bucket, b.id));
                deletes = true;
            }
        }
        match self.open.is_some() {
            true => self.close_bucket()?,
            false if deletes => {
                self.writer.commit()?;
            }
            false => {}
        }
        self.writer.wait_merging_threads()?;
        write_buckets(&self.dir, &self.layout)?;
        let chunks: u64 = self.layout.iter().map(|b| b.chunks).sum();
        let mut total = [0u64; crate::config::FIELDS];
        let mut with = [0u64; crate::config::FIELDS];
        for b in &self.layout {
            for (t, l) in total.iter_mut().zip(b.lens) {
                *t += l;
            }
            for (w, l) in with.iter_mut().zip(b.with_field) {
                *w += l;
            }
        }
        let n = chunks.max(1) as f32;
        let avg = std::array::from_fn(|f| {
            if crate::config::Field::ALL[f].is_sparse() {
                total[f] as f32 / with[f].max(1) as f32
            } else {
                total[f] as f32 / n
            }
        });
        Ok(BuildStats {
            chunks,
            avg_field_len: avg,
            buckets_written: self.written,
            buckets_kept: self.layout.len() as u64 - self.written,
        })
    }
}

/// The segment `b` records, when it is one (32 hex digits: a damaged value never names
/// another file of the folder).
fn segment_of(b: &Bucket) -> Option<&str> {
    b.segment
        .as_deref()
        .filter(|s| s.len() == 32 && s.bytes().all(|c| c.is_ascii_hexdigit()))
}

/// The ids of the segments `index` lists (32 hex digits each).
fn segment_ids(index: &Index) -> Result<HashSet<String>> {
    Ok(index
        .searchable_segment_ids()?
        .iter()
        .map(|s| s.uuid_string())
        .collect())
}

/// Rewrites the segment list of `index` without the segments `gone`.
///
/// # Errors
/// [`Error::Tantivy`] when the list cannot be read or written; [`Error::Config`] when it
/// cannot be serialised.
fn drop_segments(index: &Index, gone: &HashSet<&str>) -> Result<()> {
    let mut meta = index.load_metas()?;
    meta.segments
        .retain(|s| !gone.contains(s.id().uuid_string().as_str()));
    let bytes = serde_json::to_vec_pretty(&meta)
        .map_err(|e| Error::Config(format!("cannot serialise the segment list: {e}")))?;
    index
        .directory()
        .atomic_write(Path::new(META_FILE), &bytes)
        .map_err(tantivy::TantivyError::from)?;
    Ok(())
}

/// Hard-links (copies where links fail) the files of the tantivy index in `from` into
/// `to`, but for those of the segments `skip`. The small files tantivy rewrites
/// (`meta.json`, `.managed.json`) and the bucket list are copied, so the previous index
/// never changes.
fn link_index_files(from: &Path, to: &Path, skip: &HashSet<&str>) -> Result<()> {
    let rd = std::fs::read_dir(from).map_err(|e| Error::io("list", from, e))?;
    for e in rd {
        let e = e.map_err(|e| Error::io("list", from, e))?;
        let name = e.file_name();
        let name_str = name.to_string_lossy();
        if name_str.ends_with(".lock") {
            continue;
        }
        let segment = name_str.split('.').next().unwrap_or_default();
        if skip.contains(segment) {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let copy = name_str.ends_with(".json") || name_str == BUCKETS_FILE;
        if copy || std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst).map_err(|e| Error::io("copy", &src, e))?;
        }
    }
    Ok(())
}
