//! An index folder as an [`IndexStore`]: the manifest is the commit point, the writer
//! lock a `flock` on `writer.lock` ([`crate::generation::acquire_writer_lock`]), and the folder is its own staging
//! area. Its vectors beyond the published generation are those of the older generations
//! it still keeps (the one published before, any a reader holds): a refresh that reverts
//! an edit does not embed the old text again.

use super::boundary::{IndexStore, Publication, StoreLock, StoreSnapshot, StoredChunk, StoredDoc};
use super::stage::{publish, Staged};
use crate::error::{Error, Result};
use crate::generation::acquire_writer_lock;
use crate::generation::{generation_dirs, previous_chunks};
use crate::generation::{read_snapshot, root_names};
use crate::store::{manifest_generation, Existing, Manifest};
use crate::vector::VectorSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// An index folder (`.docfuse/` by default) as a store.
pub struct FolderStore {
    dir: PathBuf,
}

impl FolderStore {
    /// The store of the index folder `dir` (nothing is read or locked yet).
    pub fn new(dir: &Path) -> FolderStore {
        FolderStore {
            dir: dir.to_path_buf(),
        }
    }

    /// The index folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The published manifest, when the folder holds a current one.
    fn published(&self) -> Result<Option<Manifest>> {
        Ok(match Existing::load(&self.dir)? {
            Existing::Current(m) => Some(*m),
            _ => None,
        })
    }
}

impl IndexStore for FolderStore {
    fn shown(&self) -> String {
        self.dir.display().to_string()
    }

    fn staging_dir(&self) -> &Path {
        &self.dir
    }

    fn staging_is_published(&self) -> bool {
        true
    }

    fn lock(
        &mut self,
        wait: crate::generation::LockWait,
        waiting: &mut dyn FnMut(),
    ) -> Result<StoreLock> {
        let lock = acquire_writer_lock(&self.dir, wait, &mut |_| waiting())?;
        // what a killed build left goes now, not only after the next publish
        super::stage::remove_unpublished(&self.dir);
        Ok(Box::new(lock))
    }

    fn snapshot(&mut self) -> Result<Option<StoreSnapshot>> {
        let Some(m) = self.published()? else {
            return Ok(None);
        };
        // a damaged snapshot is a folder to rebuild: everything counts as new
        let Ok(snapshot) = read_snapshot(&self.dir, &m) else {
            return Ok(None);
        };
        let names = root_names(&m.source);
        let documents = snapshot
            .files
            .into_iter()
            .map(|f| StoredDoc {
                root: names.get(f.root).cloned().unwrap_or_default(),
                path: f.rel_path,
                sha256: f.sha256,
            })
            .collect();
        Ok(Some(StoreSnapshot {
            generation: m.generation,
            documents,
        }))
    }

    fn chunks(&mut self) -> Result<Vec<StoredChunk>> {
        let Some(m) = self.published()? else {
            return Ok(Vec::new());
        };
        let chunks = previous_chunks(&self.dir.join(&m.generation_dir)).unwrap_or_default();
        Ok(rooted_chunks(chunks, &root_names(&m.source)))
    }

    fn vectors(
        &mut self,
        identity_key: &str,
        hashes: &[&str],
    ) -> Result<HashMap<String, Vec<f32>>> {
        let published = manifest_generation(&self.dir).unwrap_or(0);
        let mut older: Vec<(u64, PathBuf)> = generation_dirs(&self.dir)
            .into_iter()
            .filter(|(g, _)| *g < published)
            .collect();
        older.sort_by_key(|(g, _)| std::cmp::Reverse(*g));
        let mut found = HashMap::new();
        for (_, dir) in older {
            // the hashes first: the matrix is read (and its sha256 checked) only when it
            // holds one asked for; a generation being removed, or with vectors of another
            // embedder, has none
            let Some(meta) = crate::vector::VectorMeta::read(&dir) else {
                continue;
            };
            let held: std::collections::HashSet<&str> =
                meta.hashes.iter().map(String::as_str).collect();
            let holds = meta.identity_key == identity_key
                && hashes
                    .iter()
                    .any(|h| !found.contains_key(*h) && held.contains(h));
            if !holds {
                continue;
            }
            let Ok(set) = VectorSet::read(&dir) else {
                continue;
            };
            let by_hash = set.by_hash();
            for h in hashes {
                if let Some(v) = by_hash.get(h).filter(|_| !found.contains_key(*h)) {
                    found.insert(h.to_string(), v.to_vec());
                }
            }
        }
        Ok(found)
    }

    fn publish(&mut self, staged: Option<Staged>) -> Result<Publication> {
        let Some(staged) = staged else {
            return Ok(Publication {
                generation: manifest_generation(&self.dir).unwrap_or(0),
                unchanged: true,
            });
        };
        if staged.index_dir() != self.dir {
            return Err(Error::Config(format!(
                "internal: a generation staged in `{}` published to `{}`",
                staged.index_dir().display(),
                self.dir.display()
            )));
        }
        Ok(Publication {
            generation: publish(staged)?,
            unchanged: false,
        })
    }
}

/// A chunk as `(root, id within the root, hash)`, borrowed.
pub(super) type ChunkRef<'a> = (&'a str, &'a str, &'a str);

/// `(chunk id, content hash)` of a folder index with roots `roots` as
/// `(root, id within the root, hash)`: a multi-root index's `N:` prefix names the root.
pub(super) fn rooted_chunks(chunks: Vec<(String, String)>, roots: &[String]) -> Vec<StoredChunk> {
    rooted_refs(&chunks, roots)
        .into_iter()
        .map(|(r, i, h)| (r.to_string(), i.to_string(), h.to_string()))
        .collect()
}

/// [`rooted_chunks`] without copying a string.
pub(super) fn rooted_refs<'a>(
    chunks: &'a [(String, String)],
    roots: &'a [String],
) -> Vec<ChunkRef<'a>> {
    let single = roots.len() <= 1;
    let first = roots.first().map_or("", String::as_str);
    chunks
        .iter()
        .map(|(id, hash)| {
            let split = match single {
                true => None,
                false => id
                    .split_once(':')
                    .and_then(|(n, rest)| Some((roots.get(n.parse::<usize>().ok()?)?, rest))),
            };
            match split {
                Some((root, rest)) => (root.as_str(), rest, hash.as_str()),
                None => (first, id.as_str(), hash.as_str()),
            }
        })
        .collect()
}

/// Borrows a list of stored chunks.
pub(super) fn chunk_refs(chunks: &[StoredChunk]) -> Vec<ChunkRef<'_>> {
    chunks
        .iter()
        .map(|(r, i, h)| (r.as_str(), i.as_str(), h.as_str()))
        .collect()
}
