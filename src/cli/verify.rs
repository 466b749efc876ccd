//! `docfuse verify`: every file of the index against its recorded sha256.

use super::args::VerifyArgs;
use super::output::{print_json, print_line};

pub fn run(a: VerifyArgs) -> anyhow::Result<i32> {
    let v = crate::read::verify(&a.index)?;
    if a.json {
        print_json(&v)?;
    } else if v.damaged.is_empty() {
        print_line(&format!(
            "ok: generation {}, {} files, {} bytes match their recorded sha256",
            v.generation, v.files, v.bytes
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
    anyhow::bail!(
        "the index at `{}` is damaged ({} file(s))\nhint: rebuild it with `docfuse refresh --force --index {}`",
        a.index.display(),
        v.damaged.len(),
        a.index.display()
    )
}
