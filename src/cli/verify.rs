//! `docfuse verify`: every file of the index against its recorded sha256.

use super::args::VerifyArgs;
use super::output::{print_json, print_line};

/// Verifies a folder index, or for a database URL this host's copy of it (its cache
/// folder, synced first), under the database's generation number.
pub fn run(mut a: VerifyArgs) -> anyhow::Result<i32> {
    let mut copy = None;
    if super::pg::is_db(&a.index) {
        let cache = super::pg::reader_cache(&a.index)?;
        a.index = cache.index_dir.clone();
        copy = Some(cache);
    }
    let mut v = crate::read::verify(&a.index)?;
    let what = match &copy {
        Some(c) => {
            v.generation = u64::try_from(c.generation).unwrap_or(0);
            format!(
                "this host's copy of generation {} (`{}`)",
                v.generation,
                c.index_dir.display()
            )
        }
        None => format!("generation {}", v.generation),
    };
    if a.json {
        print_json(&v)?;
    } else if v.damaged.is_empty() {
        print_line(&format!(
            "ok: {what}, {} files, {} bytes match their recorded sha256",
            v.files, v.bytes
        ))?;
    } else {
        for d in &v.damaged {
            print_line(&format!("damaged: {d}"))?;
        }
    }
    if !a.json {
        for m in &v.model_cache {
            eprintln!("warning: folded-model cache {m}");
        }
    }
    if v.damaged.is_empty() {
        return Ok(super::EXIT_OK);
    }
    if copy.is_some() {
        anyhow::bail!(
            "this host's copy at `{}` is damaged ({} file(s)); the database is not\nhint: delete that folder's parent (`{}`); the next command syncs it again",
            a.index.display(),
            v.damaged.len(),
            a.index.parent().unwrap_or(&a.index).display()
        )
    }
    anyhow::bail!(
        "the index at `{}` is damaged ({} file(s))\nhint: rebuild it with `docfuse refresh --force --index {}`",
        a.index.display(),
        v.damaged.len(),
        a.index.display()
    )
}
