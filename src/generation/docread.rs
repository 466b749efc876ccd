//! Reading a document as the build indexes it: [`crate::discover::read_checked`] (byte
//! budget, binary detection, decoding), then the rules of its kind — an API spec must
//! read as OpenAPI/Swagger whole ([`crate::chunk::openapi::check`]). The build plan and
//! the freshness check of files not yet indexed use it, so they agree on which files a
//! build skips.

use crate::chunk::SourceKind;
use crate::discover::{read_checked, ReadError, ReadText, Warning};
use std::path::Path;

/// Reads `path`, a document of `kind`, up to `max_bytes`.
///
/// # Errors
/// What [`read_checked`] refuses, and [`ReadError::InvalidSpec`] for an API spec that
/// does not parse, is not OpenAPI/Swagger, or is longer than `max_bytes` (a spec cut
/// short does not parse). Notes on a spec that reads (operations in other files) are
/// added to `warnings`.
pub fn read_document(
    path: &Path,
    kind: SourceKind,
    max_bytes: u64,
    warnings: &mut Vec<Warning>,
) -> Result<ReadText, ReadError> {
    if kind != SourceKind::OpenApi {
        return read_checked(path, max_bytes, warnings);
    }
    // a spec's reading notes (lossy decoding) are kept only if it is read
    let mut notes = Vec::new();
    let read = read_checked(path, max_bytes, &mut notes)?;
    if read.cut {
        return Err(ReadError::InvalidSpec(format!(
            "larger than the {max_bytes}-byte budget, and a spec cut short does not parse; raise `--max-file-bytes` to index it"
        )));
    }
    let spec_notes = crate::chunk::openapi::check(&read.text).map_err(ReadError::InvalidSpec)?;
    warnings.extend(notes);
    warnings.extend(spec_notes.into_iter().map(|message| Warning {
        path: path.to_path_buf(),
        message,
    }));
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PETSTORE: &str = include_str!("../../tests/fixtures/openapi/petstore.yaml");

    #[test]
    fn a_spec_must_read_whole_and_parse_and_other_kinds_are_not_parsed() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("openapi.yaml");
        std::fs::write(&path, PETSTORE).unwrap();
        let mut warnings = Vec::new();
        let spec = SourceKind::OpenApi;
        assert!(read_document(&path, spec, 1 << 20, &mut warnings).is_ok());
        match read_document(&path, spec, 1000, &mut warnings) {
            Err(ReadError::InvalidSpec(why)) => assert!(why.contains("--max-file-bytes"), "{why}"),
            other => panic!("{other:?}"),
        }
        std::fs::write(&path, "openapi: 3.0.0\ninfo: [\n").unwrap();
        assert!(matches!(
            read_document(&path, spec, 1 << 20, &mut warnings),
            Err(ReadError::InvalidSpec(_))
        ));
        // the same bytes as text are read as they are
        assert!(read_document(&path, SourceKind::Text, 1 << 20, &mut warnings).is_ok());
        std::fs::write(&path, "openapi: 3.0.0\npaths:\n  /a:\n    $ref: a.yaml\n").unwrap();
        warnings.clear();
        assert!(read_document(&path, spec, 1 << 20, &mut warnings).is_ok());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("other files"), "{warnings:?}");
    }
}
