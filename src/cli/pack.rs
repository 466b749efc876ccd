//! `docfuse pack` and the pack side of `index --pack` / `--drop-root pack:CODE`.

use super::args::PackArgs;
use crate::pack::{code_from_name, Limits, Pack, PACKS_DIR};
use anyhow::Context;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

pub fn run(a: PackArgs) -> anyhow::Result<i32> {
    let root = std::fs::canonicalize(&a.root).map_err(|source| crate::Error::Root {
        path: a.root.clone(),
        source,
    })?;
    let repo = match &a.repo {
        Some(r) => r.clone(),
        None => code_from_name(
            &root
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
        ),
    };
    let m = crate::pack::write(&root, &repo, &a.version, &a.output, Default::default())?;
    let bytes: u64 = m.files.iter().map(|f| f.size).sum();
    if a.json {
        let v = json!({
            "output": a.output,
            "repo": m.repo,
            "version": m.version,
            "created_at": m.created_at,
            "files": m.files.len(),
            "bytes": bytes,
        });
        println!("{v}");
    } else {
        println!(
            "wrote `{}`: repository `{}`, version {}, {} files ({bytes} bytes)",
            a.output.display(),
            m.repo,
            m.version,
            m.files.len()
        );
    }
    Ok(super::EXIT_OK)
}

/// Where the pack at `source` comes from, as recorded: an http(s) URL as given, a file
/// as its absolute path.
pub(super) fn source_of(source: &str) -> String {
    if crate::pack::is_http_url(source) {
        return source.to_string();
    }
    std::fs::canonicalize(source).map_or_else(|_| source.to_string(), |p| p.display().to_string())
}

/// Fetches and verifies the pack at `source` (nothing is written) within the compressed
/// size and the disk budget of all packs; a URL only from a public address or a host of
/// `allow_hosts` ([`crate::pack::FetchPolicy`]).
pub(super) fn fetch_verified(
    source: &str,
    (max_pack_bytes, max_total_bytes): (u64, u64),
    allow_hosts: &[String],
    timeout: std::time::Duration,
) -> anyhow::Result<Pack> {
    let limits = Limits {
        max_total_bytes,
        timeout,
        ..Limits::for_pack_bytes(max_pack_bytes)
    };
    let policy = crate::pack::FetchPolicy {
        allow_hosts: allow_hosts.to_vec(),
    };
    let bytes = crate::pack::fetch(source, &limits, &policy)?;
    crate::pack::read(bytes, &limits)
        .with_context(|| format!("`{}`", crate::pack::redacted(source)))
}

/// What fetching a pack needs, owned (a fetch may run on another thread).
#[derive(Debug, Clone)]
pub(super) struct Fetcher {
    /// Largest pack, and most bytes of all packs together.
    pub limits: (u64, u64),
    /// Hosts fetched from although they resolve to a private address.
    pub allow_hosts: Vec<String>,
    /// A fetch taking longer fails.
    pub timeout: std::time::Duration,
}

impl Fetcher {
    /// [`fetch_verified`] with these limits.
    ///
    /// # Errors
    /// As [`fetch_verified`].
    pub fn fetch(&self, source: &str) -> anyhow::Result<Pack> {
        fetch_verified(source, self.limits, &self.allow_hosts, self.timeout)
    }
}

/// The folder `pack` is unpacked into in `index` (the root it is indexed as).
pub(super) fn dir_of(index: &Path, pack: &Pack) -> PathBuf {
    index.join(PACKS_DIR).join(&pack.manifest.repo)
}

/// The pack side of one build, run through its hooks under the writer lock: unpack a
/// pack before the plan; once the generation is published, record where the pack came
/// from and delete the files (and sources) of dropped packs. [`PackSteps::undo`] after a
/// failed build deletes a pack folder the build created, so a pack never stays unpacked
/// and recorded without being indexed.
pub(super) struct PackSteps<'a> {
    index: &'a Path,
    pack: Option<(&'a Pack, &'a str)>,
    drop_roots: &'a [PathBuf],
    /// Run first under the lock; its error fails the build before anything is written.
    check: Option<&'a (dyn Fn() -> crate::error::Result<()> + Sync)>,
    /// The pack's folder did not exist before this build unpacked it.
    created: std::sync::atomic::AtomicBool,
}

impl<'a> PackSteps<'a> {
    /// `pack`: a verified pack and where it came from (recorded for `ingest`);
    /// `drop_roots`: roots as given (`pack:CODE` or paths).
    pub fn new(
        index: &'a Path,
        pack: Option<(&'a Pack, &'a str)>,
        drop_roots: &'a [PathBuf],
    ) -> Self {
        PackSteps {
            index,
            pack,
            drop_roots,
            check: None,
            created: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Runs `check` under the writer lock before anything else.
    pub fn with_check(self, check: &'a (dyn Fn() -> crate::error::Result<()> + Sync)) -> Self {
        PackSteps {
            check: Some(check),
            ..self
        }
    }

    /// Runs the check, then unpacks the pack (says what it did on stderr).
    pub fn before(&self) -> crate::error::Result<()> {
        if let Some(check) = self.check {
            check()?;
        }
        let Some((pack, _)) = self.pack else {
            return Ok(());
        };
        self.created
            .store(!dir_of(self.index, pack).exists(), Ordering::Relaxed);
        let done = crate::pack::install(pack, &self.index.join(PACKS_DIR))?;
        eprintln!(
            "pack `{}` version {}: {} files written, {} unchanged, {} removed",
            pack.manifest.repo,
            pack.manifest.version.escape_debug(),
            done.written,
            done.kept,
            done.removed
        );
        Ok(())
    }

    /// Records the pack's source; deletes the files of dropped packs, then their sources
    /// (a source that cannot be forgotten is a warning: the pack is out of the index).
    pub fn after(&self) -> crate::error::Result<()> {
        let packs = self.index.join(PACKS_DIR);
        for dir in self
            .drop_roots
            .iter()
            .filter_map(|r| pack_dir(self.index, r))
        {
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(crate::Error::Io {
                        action: "cannot delete",
                        path: dir,
                        source: e,
                    })
                }
                _ => {}
            }
            if let Some(code) = dir.file_name().and_then(|c| c.to_str()) {
                if let Err(e) = crate::pack::forget_source(&packs, code) {
                    eprintln!("warning: {e}");
                }
            }
        }
        if let Some((pack, from)) = self.pack {
            crate::pack::record_source(&packs, &pack.manifest.repo, from)?;
        }
        Ok(())
    }

    /// After a failed build: deletes the pack's folder when this build created it (under
    /// the writer lock; a folder that was there before holds the last indexed pack's
    /// files updated, which the next refresh indexes).
    pub fn undo(&self) {
        let Some((pack, _)) = self.pack else { return };
        if !self.created.load(Ordering::Relaxed) {
            return;
        }
        let dir = dir_of(self.index, pack);
        let _lock = crate::generation::acquire_writer_lock(self.index, true, &mut |_| {});
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            if e.kind() != std::io::ErrorKind::NotFound {
                eprintln!("warning: cannot delete `{}`: {e}", dir.display());
            }
        }
    }
}

/// `--drop-root` values with `pack:CODE` resolved to the pack's folder in `index`.
pub(super) fn drop_roots(index: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    roots
        .iter()
        .map(|r| pack_dir(index, r).unwrap_or_else(|| r.clone()))
        .collect()
}

/// Runs `build` with the hooks of `steps` set in `opts`; undoes the pack's unpacking when
/// it fails.
pub(super) fn build_with<T>(
    steps: &PackSteps,
    opts: crate::write::BuildOptions<'_>,
    build: impl FnOnce(&crate::write::BuildOptions<'_>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let before = || steps.before();
    let after = || steps.after();
    let opts = crate::write::BuildOptions {
        hooks: crate::write::BuildHooks {
            before: Some(&before),
            after: Some(&after),
        },
        ..opts
    };
    let r = build(&opts);
    if r.is_err() {
        steps.undo();
    }
    r
}

/// The folder of `pack:CODE` in `index`, when `root` names a pack.
fn pack_dir(index: &Path, root: &Path) -> Option<PathBuf> {
    let code = root.to_str()?.strip_prefix("pack:")?;
    crate::pack::valid_code(code).then(|| index.join(PACKS_DIR).join(code))
}
