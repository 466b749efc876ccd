//! Building and refreshing an index: one entry point, one pipeline — lock → plan (roots,
//! walk, read, carry over) → diff against the published generation → write (or link) a
//! generation → publish. A build on an existing index is a refresh: vectors of unchanged
//! chunks are reused by hash, and nothing is written when nothing changed (but the
//! folded-model cache, when it is missing).

use super::boundary::{IndexStore, StoreSnapshot};
use super::folder::{chunk_refs, rooted_refs, ChunkRef, FolderStore};
use super::options::{BuildOptions, BuildReport, ChunkDiff, FileDiff, Phase, Progress};
use super::plan::{plan, Plan};
use super::stage::{link_generation, write_generation};
use crate::discover::Warning;
use crate::error::{Error, Result};
use crate::generation::Source;
use crate::generation::{root_names, Previous};
use crate::store::{Existing, Manifest};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

/// Builds the index in `index_dir` from `source`, or refreshes it: takes the writer lock,
/// re-reads the roots being refreshed (the index's other roots are carried over from the
/// previous generation), and publishes a new generation by atomically replacing the
/// manifest — unless nothing changed (same files, configuration, versions and vector
/// state), in which case nothing is written. Only file metadata changed (a `touch`):
/// the new sizes and mtimes are published without re-indexing. Vectors of unchanged
/// chunks are reused by embedding hash; a crash at any point leaves the previous
/// generation readable. With an embedder, it then writes the index's folded-model cache
/// when it is missing (about 1.5 s, not counted in `elapsed_ms`; a failure is logged and
/// only costs speed).
///
/// An index written by an older docfuse is rebuilt from its roots; one written by a
/// newer docfuse is refused unless `force` is set.
///
/// # Errors
/// [`Error::Config`] for an invalid configuration or no root; [`Error::Root`] for a
/// missing or unlistable root; [`Error::Locked`] when another writer holds the lock and
/// `no_wait` is set; [`Error::ReadOnly`] when the index folder cannot be written;
/// [`Error::NotAnIndexFolder`] when it holds other files and no index;
/// [`Error::IndexVersion`] for an index of a newer docfuse; [`Error::Io`] /
/// [`Error::Tantivy`] on write failures.
pub fn build(
    index_dir: &Path,
    source: &Source,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<BuildReport> {
    build_in(&mut FolderStore::new(index_dir), source, opts, progress)
}

/// [`build`] into any store ([`IndexStore`]): the generation is written in the store's
/// staging folder, diffed against the store's published generation (the report's file
/// and chunk counts), given the vectors the store holds by embedding hash before any is
/// embedded, and published by the store; the report's `generation` is the store's.
///
/// # Errors
/// As [`build`]; the store's errors (lock, reads, publish).
pub fn build_in(
    store: &mut dyn IndexStore,
    source: &Source,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<BuildReport> {
    let started = Instant::now();
    opts.config.validate()?;
    let index_dir = store.staging_dir().to_path_buf();
    let index_dir = index_dir.as_path();
    create_index_dir(index_dir)?;
    let wait = crate::generation::LockWait::of(opts.no_wait, opts.wait_timeout);
    let _lock = store.lock(wait, &mut || {
        progress(Progress {
            phase: Phase::Waiting,
            done: 0,
            total: 0,
        })
    })?;
    let cache = crate::embed::folded::cache_dir(index_dir);
    if let Some(e) = opts.embedder {
        e.use_cache_dir(&cache);
    }
    if let Some(before) = opts.hooks.before {
        before()?;
    }
    let report = build_locked(store, index_dir, source, opts, progress, started)?;
    if let Some(after) = opts.hooks.after {
        after()?;
    }
    if let Some(e) = opts.embedder {
        prepare_model_cache(e, &cache, opts.force);
        remove_own_model_cache(index_dir, &cache);
    }
    Ok(report)
}

/// Writes the folded-model cache when it is missing; a failure only costs speed. With
/// `force`, every folder is first checked in full and removed when it does not check out
/// (without it, a folder whose weights kept their recorded mtime is trusted).
fn prepare_model_cache(e: &dyn crate::embed::Embedder, cache: &Path, force: bool) {
    if force {
        for (folder, why) in crate::embed::folded::damaged(cache) {
            match crate::embed::folded::discard(&folder) {
                Ok(()) => tracing::info!("removed `{}` ({why})", folder.display()),
                Err(e) => tracing::warn!("cannot remove `{}`: {e}", folder.display()),
            }
        }
    }
    match e.prepare_cache(cache) {
        Ok(true) => tracing::info!("wrote the folded-model cache"),
        Ok(false) => {}
        Err(why) => {
            tracing::warn!("no folded-model cache ({why}); searches load the model as before")
        }
    }
}

/// Removes the folded-model cache an index folder held before the cache became one per
/// user (about 130 MB), once the user's cache is in use.
fn remove_own_model_cache(index_dir: &Path, cache: &Path) {
    let own = index_dir.join(crate::embed::folded::DIR_NAME);
    if own != cache && own.is_dir() {
        match crate::embed::folded::discard(&own) {
            Ok(()) => tracing::info!(
                "removed `{}`: the model cache is now `{}`",
                own.display(),
                cache.display()
            ),
            Err(e) => tracing::warn!("cannot remove `{}`: {e}", own.display()),
        }
    }
}

/// [`build_in`] once the writer lock is held; `index_dir` is the store's staging folder.
fn build_locked(
    store: &mut dyn IndexStore,
    index_dir: &Path,
    source: &Source,
    opts: &BuildOptions,
    progress: &mut dyn FnMut(Progress),
    started: Instant,
) -> Result<BuildReport> {
    let mut notes = Vec::new();
    let (previous, prev_roots, older_gen) = previous_of(index_dir, opts, &mut notes)?;
    // a refresh of one file rereads megabytes of the previous generation: on a second
    // thread, while the roots are walked
    let prefetch = previous
        .as_ref()
        .map(|p| super::prefetch::Prefetch::start(p.gen_dir.clone()));
    let mut plan = plan(index_dir, source, &prev_roots, previous.as_ref(), opts)?;
    plan.warnings.splice(0..0, notes);
    // what to write is decided against the staging folder (what a new generation is
    // made from); what changed is reported against the store
    let local = diff_files(previous.as_ref(), &plan);
    let in_step = store.staging_is_published();
    let files = match in_step {
        true => local,
        false => diff_stored(store.snapshot()?.as_ref(), &plan, local.touched),
    };
    let unavailable = opts.embedder_unavailable.map(str::to_string);
    let mut report = BuildReport {
        generation: 0,
        skipped: false,
        documents: plan.docs.len() as u64,
        chunks: 0,
        files,
        chunk_diff: ChunkDiff::default(),
        embedded: 0,
        reused: 0,
        pending: 0,
        vectors_unavailable: None,
        embedder_changed: None,
        partial: plan
            .partial
            .iter()
            .map(|p| format!("{}: {}", p.path, p.reason))
            .collect(),
        skipped_entries: plan.skips.clone(),
        warnings: Vec::new(),
        elapsed_ms: 0,
        buckets_kept: 0,
        buckets_written: 0,
    };
    let decision = match previous.as_ref() {
        Some(prev) if !opts.force => decide(prev, &plan, &local, opts),
        _ => Decision::Write,
    };
    match (decision, previous.as_ref()) {
        (Decision::Unchanged, Some(prev)) | (Decision::MetadataOnly, Some(prev)) => {
            let m = &prev.manifest;
            // against the store before it publishes (the folder's chunks are the same)
            report.chunk_diff = match in_step {
                true => ChunkDiff {
                    total: m.collection.chunks,
                    unchanged: m.collection.chunks,
                    ..ChunkDiff::default()
                },
                // the store holds another generation than the staging folder (a publish
                // that failed after the folder's, a folder made again from the roots)
                false => {
                    let here = prefetch
                        .map(super::prefetch::Prefetch::take)
                        .and_then(|p| p.chunks)
                        .unwrap_or_default();
                    let names = root_names(&plan.spec);
                    let here = rooted_refs(&here, &names);
                    diff_chunks(&chunk_refs(&store.chunks()?), &here)
                }
            };
            let staged = match decision {
                Decision::MetadataOnly => {
                    Some(link_generation(index_dir, &plan, prev, opts, unavailable)?)
                }
                _ => None,
            };
            let published = store.publish(staged)?;
            report.generation = published.generation;
            report.skipped = published.unchanged;
            report.chunks = m.collection.chunks;
            report.reused = m.vectors.as_ref().map_or(0, |v| v.embedded);
            report.pending = m.vectors.as_ref().map_or(0, |v| v.pending);
            report.vectors_unavailable = m.embeddings.unavailable.clone();
        }
        _ => {
            let read = prefetch
                .map(super::prefetch::Prefetch::take)
                .unwrap_or_default();
            let old_chunks = read.chunks.unwrap_or_default();
            // the store's chunks when it holds another generation than the folder's
            let stored_chunks = match in_step {
                true => Vec::new(),
                false => store.chunks()?,
            };
            let old_roots = previous
                .as_ref()
                .map(|p| root_names(&p.manifest.source))
                .unwrap_or_default();
            let new_roots = root_names(&plan.spec);
            let warnings = std::mem::take(&mut plan.warnings);
            let old_vectors = older_gen.as_deref().and_then(crate::generation::vectors_in);
            let mut lookup = |key: &str, hashes: &[&str]| store.vectors(key, hashes);
            let (written, staged) = write_generation(
                index_dir,
                plan,
                previous.as_ref(),
                (&old_chunks, read.links),
                old_vectors,
                &mut lookup,
                opts,
                progress,
            )?;
            let published = store.publish(Some(staged))?;
            report.generation = published.generation;
            report.skipped = published.unchanged;
            report.warnings = warnings;
            let chunks = written.chunks.len() as u64;
            let before = match in_step {
                true => rooted_refs(&old_chunks, &old_roots),
                false => chunk_refs(&stored_chunks),
            };
            let after = rooted_refs(&written.chunks, &new_roots);
            report.chunk_diff = diff_chunks(&before, &after);
            report.chunks = chunks;
            report.embedded = written.embedded;
            report.buckets_kept = written.buckets_kept;
            report.buckets_written = written.buckets_written;
            report.reused = written.reused;
            report.pending = written.pending;
            report.vectors_unavailable = written.vectors_unavailable;
            report.embedder_changed = written.embedder_changed;
            report.elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(report);
        }
    }
    report.warnings = plan.warnings;
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// Creates the index folder; a folder that cannot be written is [`Error::ReadOnly`],
/// one that holds other files and no index (a folder of documents) is
/// [`Error::NotAnIndexFolder`], before anything is written into it.
fn create_index_dir(index_dir: &Path) -> Result<()> {
    crate::store::ensure_index_folder(index_dir)?;
    std::fs::create_dir_all(index_dir).map_err(|e| Error::io("create", index_dir, e))?;
    let probe = index_dir.join(format!(".write-probe.{}", std::process::id()));
    match std::fs::write(&probe, b"") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(source) => Err(Error::ReadOnly {
            dir: index_dir.to_path_buf(),
            source,
        }),
    }
}

/// What a build starts from: the published generation (when usable), the roots the
/// index had, and — for an index of an older docfuse — its generation folder, whose
/// vectors are reused by hash.
type Start = (Option<Previous>, Vec<String>, Option<std::path::PathBuf>);

/// The published generation to start from and the roots the index had.
fn previous_of(index_dir: &Path, opts: &BuildOptions, notes: &mut Vec<Warning>) -> Result<Start> {
    let mut note = |message: String| {
        notes.push(Warning {
            path: index_dir.to_path_buf(),
            message,
        })
    };
    match Existing::load(index_dir)? {
        Existing::None => Ok((None, Vec::new(), None)),
        Existing::Newer { what, .. } if !opts.force => Err(Error::IndexVersion {
            dir: index_dir.to_path_buf(),
            what,
            newer: true,
        }),
        Existing::Newer { what, source } => {
            let roots = source.map(|s| root_names(&s)).unwrap_or_default();
            note(if roots.is_empty() {
                format!("written by a newer docfuse ({what}); overwritten (--force), its roots unread: name them")
            } else {
                format!("written by a newer docfuse ({what}); rebuilt from its roots by this version (--force)")
            });
            Ok((None, roots, None))
        }
        Existing::Older {
            what,
            source,
            generation_dir,
            ..
        } => {
            note(format!(
                "written by an older docfuse ({what}); rebuilt from its roots (vectors reused by hash)"
            ));
            let roots = source.map(|s| root_names(&s)).unwrap_or_default();
            Ok((None, roots, generation_dir.map(|g| index_dir.join(g))))
        }
        Existing::Damaged(why) => {
            note(format!("the index was unusable ({why}); rebuilt"));
            Ok((None, Vec::new(), None))
        }
        Existing::Current(m) => {
            if let Some(v) = m.vectors.as_ref().filter(|_| !opts.wants_vectors()) {
                note(format!(
                    "the index had vectors ({} chunks, {}); --no-embeddings builds it lexical-only, so vector search is off from now on\nhint: to add documents without embedding them yet, use --max-chunks 0 instead; to bring vector search back, run `docfuse index` without --no-embeddings (unchanged chunks' vectors are reused)",
                    v.embedded, v.model
                ));
            }
            let roots = root_names(&m.source);
            match Previous::open(index_dir, *m) {
                Ok(p) => Ok((Some(p), roots, None)),
                Err(why) => {
                    note(format!(
                        "the published generation is damaged ({why}); rebuilt"
                    ));
                    Ok((None, roots, None))
                }
            }
        }
    }
}

/// What a build has to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// Nothing changed: write nothing.
    Unchanged,
    /// Only sizes, mtimes, partial records or skip counts changed: link a generation.
    MetadataOnly,
    /// Content, settings, versions or vectors changed: write a generation.
    Write,
}

fn decide(prev: &Previous, plan: &Plan, files: &FileDiff, opts: &BuildOptions) -> Decision {
    let m = &prev.manifest;
    let same_content = files.added + files.changed + files.removed == 0
        && m.source == plan.spec
        && m.config_hash == opts.config.hash()
        && m.config_overrides == opts.config_overrides
        && same_vectors(m, opts);
    if !same_content {
        return Decision::Write;
    }
    let skips: std::collections::BTreeMap<String, u64> = plan
        .skips
        .iter()
        .map(|(k, v)| (k.name().to_string(), *v))
        .collect();
    let same_meta = files.touched == 0
        && m.partial == plan.partial
        && m.skips == skips
        && m.embeddings.unavailable.as_deref() == opts.embedder_unavailable;
    if same_meta {
        Decision::Unchanged
    } else {
        Decision::MetadataOnly
    }
}

/// True when a new generation would have the same vectors as `m`.
fn same_vectors(m: &Manifest, opts: &BuildOptions) -> bool {
    if m.embeddings.wanted != opts.wants_vectors() {
        return false;
    }
    if !opts.wants_vectors() {
        return m.vectors.is_none();
    }
    match (&m.vectors, opts.embedder) {
        (Some(v), Some(e)) => v.identity_key == e.identity().key() && v.pending == 0,
        // No model now: nothing could be embedded anyway; what was embedded stays.
        (Some(v), None) => v.pending == 0,
        (None, Some(_)) => false,
        (None, None) => true,
    }
}

/// Compares the planned documents with the staging folder's published snapshot.
fn diff_files(previous: Option<&Previous>, plan: &Plan) -> FileDiff {
    let names = root_names(&plan.spec);
    let mut d = FileDiff {
        scanned: plan.docs.len() as u64,
        ..FileDiff::default()
    };
    let mut seen = HashSet::new();
    for doc in &plan.docs {
        let root = names.get(doc.entry.root).cloned().unwrap_or_default();
        let old = previous.and_then(|p| p.entry(&root, &doc.entry.rel_path));
        match old {
            None => d.added += 1,
            Some(o) if o.sha256 != doc.entry.sha256 => d.changed += 1,
            Some(o) => {
                d.unchanged += 1;
                // Another ctime (chmod, a copy, a restore) is recorded too: else every later
                // status and refresh would hash the file again.
                let ctime_moved = doc.entry.ctime_ns != 0 && o.ctime_ns != doc.entry.ctime_ns;
                if o.size != doc.entry.size || o.mtime_ns != doc.entry.mtime_ns || ctime_moved {
                    d.touched += 1;
                }
            }
        }
        seen.insert((root, doc.entry.rel_path.clone()));
    }
    if let Some(p) = previous {
        let old_names = root_names(&p.manifest.source);
        d.removed = p
            .snapshot
            .files
            .iter()
            .filter(|f| {
                let root = old_names.get(f.root).cloned().unwrap_or_default();
                !seen.contains(&(root, f.rel_path.clone()))
            })
            .count() as u64;
    }
    d
}

/// Compares the planned documents with a store's published documents (by sha256), when
/// the staging folder is not at the store's generation; `touched` is the staging
/// folder's count.
fn diff_stored(stored: Option<&StoreSnapshot>, plan: &Plan, touched: u64) -> FileDiff {
    let names = root_names(&plan.spec);
    let mut d = FileDiff {
        scanned: plan.docs.len() as u64,
        touched,
        ..FileDiff::default()
    };
    let held: HashMap<(&str, &str), &str> = stored
        .map(|s| {
            s.documents
                .iter()
                .map(|f| ((f.root.as_str(), f.path.as_str()), f.sha256.as_str()))
                .collect()
        })
        .unwrap_or_default();
    let mut seen = HashSet::new();
    for doc in &plan.docs {
        let root = names.get(doc.entry.root).map_or("", String::as_str);
        let path = doc.entry.rel_path.as_str();
        match held.get(&(root, path)) {
            None => d.added += 1,
            Some(sha) if *sha != doc.entry.sha256 => d.changed += 1,
            Some(_) => d.unchanged += 1,
        }
        seen.insert((root, path));
    }
    d.removed = held.keys().filter(|k| !seen.contains(*k)).count() as u64;
    d
}

/// Compares chunk `(root, id, hash)` lists. Both are in ordinal order and a refresh keeps
/// most chunks where they were, so the common head and tail are counted as unchanged
/// without hashing; only the middle is matched by root and id.
fn diff_chunks(old: &[ChunkRef<'_>], new: &[ChunkRef<'_>]) -> ChunkDiff {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_mid, new_mid) = (&old[head..old.len() - tail], &new[head..new.len() - tail]);
    let old_map: HashMap<(&str, &str), &str> =
        old_mid.iter().map(|&(r, i, h)| ((r, i), h)).collect();
    let mut d = ChunkDiff {
        total: new.len() as u64,
        unchanged: (head + tail) as u64,
        ..ChunkDiff::default()
    };
    let mut seen = HashSet::new();
    for &(root, id, hash) in new_mid {
        let key = (root, id);
        match old_map.get(&key) {
            None => d.added += 1,
            Some(&h) if h == hash => d.unchanged += 1,
            Some(_) => d.changed += 1,
        }
        seen.insert(key);
    }
    d.removed = old_map.keys().filter(|k| !seen.contains(*k)).count() as u64;
    d
}

#[cfg(test)]
mod tests {
    use super::super::boundary::StoredChunk;
    use super::*;

    /// The plain definition: every new chunk matched by id in the whole old list.
    fn naive_diff(old: &[StoredChunk], new: &[StoredChunk]) -> (u64, u64, u64, u64) {
        let m: HashMap<(&String, &String), &String> =
            old.iter().map(|(r, i, h)| ((r, i), h)).collect();
        let (mut a, mut c, mut u) = (0, 0, 0);
        for (r, i, h) in new {
            match m.get(&(r, i)) {
                None => a += 1,
                Some(x) if *x == h => u += 1,
                Some(_) => c += 1,
            }
        }
        let ids: HashSet<(&String, &String)> = new.iter().map(|(r, i, _)| (r, i)).collect();
        let r = old
            .iter()
            .filter(|(r, i, _)| !ids.contains(&(r, i)))
            .count() as u64;
        (a, c, u, r)
    }

    proptest::proptest! {
        #[test]
        fn trimming_the_common_head_and_tail_counts_as_the_plain_definition(
            old in proptest::collection::btree_map(0u8..40, 0u8..3, 0..30),
            new in proptest::collection::btree_map(0u8..40, 0u8..3, 0..30),
            rotate in 0usize..5,
        ) {
            // ids repeat across two roots: a chunk is its root and id
            let list = |m: &std::collections::BTreeMap<u8, u8>| -> Vec<StoredChunk> {
                m.iter()
                    .map(|(i, h)| ((i % 2).to_string(), (i / 2).to_string(), h.to_string()))
                    .collect()
            };
            let old = list(&old);
            let mut new = list(&new);
            if !new.is_empty() {
                let k = rotate % new.len();
                new.rotate_left(k);
            }
            let d = diff_chunks(&chunk_refs(&old), &chunk_refs(&new));
            proptest::prop_assert_eq!((d.added, d.changed, d.unchanged, d.removed), naive_diff(&old, &new));
            proptest::prop_assert_eq!(d.total, new.len() as u64);
        }
    }

    #[test]
    fn chunk_diff_counts_each_kind() {
        let s = |a: &str, b: &str| ("r".to_string(), a.to_string(), b.to_string());
        let old = [s("a", "1"), s("b", "2"), s("c", "3")];
        let new = [s("a", "1"), s("b", "9"), s("d", "4")];
        let d = diff_chunks(&chunk_refs(&old), &chunk_refs(&new));
        assert_eq!(
            (d.total, d.added, d.changed, d.unchanged, d.removed),
            (3, 1, 1, 1, 1)
        );
    }

    #[test]
    fn dropping_a_root_counts_only_its_chunks_removed() {
        // a two-root index's ids carry the root's position; once the first root is
        // dropped the other's ids lose it, yet its chunks are the same
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        let roots = |r: &[&str]| r.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (old_roots, new_roots) = (roots(&["/A", "/B"]), roots(&["/B"]));
        let old = [s("0:a.md#x", "1"), s("0:a.md#y", "2"), s("1:b.md#z", "3")];
        let new = [s("b.md#z", "3")];
        let d = diff_chunks(
            &rooted_refs(&old, &old_roots),
            &rooted_refs(&new, &new_roots),
        );
        assert_eq!(
            (d.total, d.added, d.changed, d.unchanged, d.removed),
            (1, 0, 0, 1, 2)
        );
    }
}
