//! Shared helpers of the integration tests: the binary, the shared corpora, temp dirs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The folder of shared benchmark data (`DOCFUSE_SHARED`, else `../shared` beside the repo).
pub fn shared() -> PathBuf {
    let p = std::env::var_os("DOCFUSE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    assert!(
        p.join("bench/corpora/rust-book").is_dir(),
        "shared benchmark data not found at `{}`; set DOCFUSE_SHARED",
        p.display()
    );
    p
}

pub fn rust_book() -> PathBuf {
    shared().join("bench/corpora/rust-book")
}

pub fn cargo_book() -> PathBuf {
    shared().join("bench/corpora/cargo-book")
}

pub fn sample_docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-docs")
}

/// Runs the `docfuse` binary with `args` in `cwd`.
pub fn docfuse(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_docfuse"))
        .args(args)
        .current_dir(cwd)
        .env_remove("DOCFUSE_LOG")
        .output()
        .expect("the docfuse binary runs")
}

/// Runs the `docfuse` binary with `args` in `cwd` and extra environment variables.
pub fn docfuse_env(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_docfuse"));
    c.args(args).current_dir(cwd).env_remove("DOCFUSE_LOG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the docfuse binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies a folder tree (files only) into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// An embedder under another identity (as if the model file had changed): same vectors,
/// different identity key.
pub struct Renamed(
    pub std::sync::Arc<dyn docfuse::embed::Embedder>,
    pub docfuse::embed::EmbedderIdentity,
);

impl docfuse::embed::Embedder for Renamed {
    fn identity(&self) -> &docfuse::embed::EmbedderIdentity {
        &self.1
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> docfuse::Result<Vec<f32>> {
        self.0.embed(texts)
    }
}
