//! Finding the model files and the ONNX Runtime library.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Environment variable: folder holding `model.onnx` and the tokenizer files.
pub const ENV_MODEL_DIR: &str = "DOCFUSE_MODEL_DIR";
/// Environment variable: path of the ONNX Runtime shared library.
pub const ENV_ORT_DYLIB: &str = "DOCFUSE_ORT_DYLIB";

const MODEL_SUBDIR: &str = "all-MiniLM-L6-v2";
const ORT_FILE: &str = "onnxruntime/libonnxruntime.so.1.31.1";
/// Files the model folder must hold.
pub const MODEL_FILES: [&str; 5] = [
    "model.onnx",
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// Where the embedder's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    /// Folder with [`MODEL_FILES`].
    pub model_dir: PathBuf,
    /// The ONNX Runtime shared library.
    pub ort_dylib: PathBuf,
}

/// Checks that `path` starts like a shared library (ELF, Mach-O or PE), so that "the
/// model is installed" is never said of a file ONNX Runtime cannot be loaded from (a
/// truncated download, an HTML error page, a text file). Reads 4 bytes.
///
/// # Errors
/// [`Error::VectorsUnavailable`] naming the file and how to provision it again.
pub fn check_library(path: &Path) -> Result<()> {
    let mut head = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut head)
    });
    let known: [&[u8]; 7] = [
        b"\x7fELF",
        &[0xfe, 0xed, 0xfa, 0xce],
        &[0xfe, 0xed, 0xfa, 0xcf],
        &[0xce, 0xfa, 0xed, 0xfe],
        &[0xcf, 0xfa, 0xed, 0xfe],
        &[0xca, 0xfe, 0xba, 0xbe],
        b"MZ",
    ];
    match read {
        Ok(()) if known.iter().any(|m| head.starts_with(m)) => Ok(()),
        Ok(()) => Err(Error::VectorsUnavailable(format!(
            "the ONNX Runtime library `{}` is not a shared library (it starts with {:?})\nhint: run `bash scripts/provision-models` again, or point {ENV_ORT_DYLIB} at libonnxruntime",
            path.display(),
            String::from_utf8_lossy(&head)
        ))),
        Err(e) => Err(Error::VectorsUnavailable(format!(
            "the ONNX Runtime library `{}` cannot be read ({e})\nhint: run `bash scripts/provision-models` again, or point {ENV_ORT_DYLIB} at libonnxruntime",
            path.display()
        ))),
    }
}

/// Locates the model folder and the ONNX Runtime library: `DOCFUSE_MODEL_DIR` (the
/// folder of `model.onnx` and the tokenizer files, or a `models/` folder as laid out by
/// `scripts/provision-models`, whose ONNX Runtime is then used too) and
/// `DOCFUSE_ORT_DYLIB` when set, else a `models/` folder in the current folder or beside
/// the executable or up to four folders above it, else the user-level folder
/// ([`user_models_dir`]: `~/.local/share/docfuse/models`).
///
/// # Errors
/// [`Error::VectorsUnavailable`] naming what is missing and how to provision it.
pub fn locate_models() -> Result<ModelPaths> {
    let mut roots = candidate_roots();
    let model_dir = match std::env::var_os(ENV_MODEL_DIR) {
        Some(d) => {
            let d = PathBuf::from(d);
            // the folder provision-models fills: its model and its ONNX Runtime
            if !d.join("model.onnx").is_file() && d.join(MODEL_SUBDIR).join("model.onnx").is_file()
            {
                roots.insert(0, d.clone());
                d.join(MODEL_SUBDIR)
            } else {
                d
            }
        }
        None => first_existing(&roots, |r| r.join(MODEL_SUBDIR).join("model.onnx"))
            .map(|p| p.parent().map(Path::to_path_buf).unwrap_or_default())
            .ok_or_else(|| missing("the all-MiniLM-L6-v2 model files"))?,
    };
    for f in MODEL_FILES {
        if !model_dir.join(f).is_file() {
            let what = format!("`{}`", model_dir.join(f).display());
            return Err(match std::env::var_os(ENV_MODEL_DIR) {
                Some(_) => Error::VectorsUnavailable(format!(
                    "{what} not found\nhint: {ENV_MODEL_DIR} is the folder holding model.onnx and the tokenizer files ({MODEL_SUBDIR}/), or the models/ folder that holds that folder; unset it to search the default places"
                )),
                None => missing(&what),
            });
        }
    }
    let ort_dylib = match std::env::var_os(ENV_ORT_DYLIB).filter(|p| !p.is_empty()) {
        Some(p) => PathBuf::from(p),
        None => first_existing(&roots, |r| r.join(ORT_FILE))
            .ok_or_else(|| missing("the ONNX Runtime library"))?,
    };
    if !ort_dylib.is_file() {
        let what = format!("`{}`", ort_dylib.display());
        return Err(match std::env::var_os(ENV_ORT_DYLIB).filter(|p| !p.is_empty()) {
            // the path was given: no default place was looked in
            Some(_) => Error::VectorsUnavailable(format!(
                "{what} not found\nhint: {ENV_ORT_DYLIB} names the ONNX Runtime library file (libonnxruntime.so…); point it at one that exists, or unset it to search the default places"
            )),
            None => missing(&what),
        });
    }
    check_library(&ort_dylib)?;
    Ok(ModelPaths {
        model_dir,
        ort_dylib,
    })
}

fn missing(what: &str) -> Error {
    let user = user_models_dir().map_or_else(
        || "~/.local/share/docfuse/models".to_string(),
        |d| d.display().to_string(),
    );
    let here = std::env::current_dir()
        .map(|d| d.join("models").display().to_string())
        .unwrap_or_else(|_| "models".into());
    Error::VectorsUnavailable(format!(
        "{what} not found (looked in `{here}`, beside the docfuse executable and up to four folders above it, and in `{user}`)\nhint: run `bash scripts/provision-models --user` in a docfuse source checkout (every docfuse then finds the model from any folder), or set {ENV_MODEL_DIR} to a folder that holds it (and {ENV_ORT_DYLIB} to the ONNX Runtime library when it is elsewhere)"
    ))
}

/// The user-level model folder that `scripts/provision-models --user` fills and every
/// copy of docfuse searches: `$XDG_DATA_HOME/docfuse/models` (an absolute
/// `XDG_DATA_HOME`, as the XDG Base Directory specification requires), else
/// `$HOME/.local/share/docfuse/models`; `None` without either variable.
pub fn user_models_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/share"))
        })?;
    Some(data.join("docfuse/models"))
}

/// Where the model is searched, in order: `models/` in the current folder, beside the
/// executable and up to four folders above it, then the user-level folder
/// ([`user_models_dir`]).
fn candidate_roots() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from("models")];
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(5) {
            roots.push(dir.join("models"));
        }
    }
    roots.extend(user_models_dir());
    roots
}

fn first_existing(roots: &[PathBuf], f: impl Fn(&Path) -> PathBuf) -> Option<PathBuf> {
    roots.iter().map(|r| f(r)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::check_library;

    #[test]
    fn only_a_shared_library_passes_for_onnx_runtime() {
        let d = tempfile::tempdir().unwrap();
        let text = d.path().join("libonnxruntime.so");
        std::fs::write(&text, "<html>404 Not Found</html>").unwrap();
        let e = check_library(&text).unwrap_err().to_string();
        assert!(e.contains("is not a shared library"), "{e}");
        let short = d.path().join("short.so");
        std::fs::write(&short, "x").unwrap();
        assert!(check_library(&short)
            .unwrap_err()
            .to_string()
            .contains("cannot be read"));
        let elf = d.path().join("elf.so");
        std::fs::write(&elf, b"\x7fELF\x02\x01\x01rest").unwrap();
        assert!(check_library(&elf).is_ok());
    }
}
