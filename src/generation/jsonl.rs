//! Reading a JSONL corpus of `{"_id", "title", "text"}` records (BEIR's corpus format).

use crate::chunk::{SourceDoc, SourceKind};
use crate::discover::Warning;
use crate::error::{Error, Result};
use serde::Deserialize;
use std::io::BufRead;
use std::path::Path;

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
}

/// Reads every record of `path` as a plain-text document whose `rel_path` is its `_id`
/// and whose title is its `title`. A line that does not parse is skipped with a warning
/// naming its line number; a blank line is ignored.
///
/// # Errors
/// [`Error::Io`] when the file cannot be opened or read.
pub fn read_jsonl(path: &Path, warnings: &mut Vec<Warning>) -> Result<Vec<SourceDoc>> {
    let file = std::fs::File::open(path).map_err(|e| Error::io("open", path, e))?;
    let mut docs = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| Error::io("read", path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(&line) {
            Ok(r) => docs.push(SourceDoc {
                rel_path: r.id,
                text: r.text,
                kind: SourceKind::Text,
                title_hint: (!r.title.trim().is_empty()).then_some(r.title),
            }),
            Err(e) => warnings.push(Warning {
                path: path.to_path_buf(),
                message: format!(
                    "line {}: not a {{\"_id\", \"title\", \"text\"}} record, skipped ({e})",
                    i + 1
                ),
            }),
        }
    }
    Ok(docs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_records_and_skips_bad_lines_with_their_number() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.jsonl");
        std::fs::write(
            &p,
            "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"hello\"}\n\nnot json\n{\"_id\": \"d2\", \"text\": \"x\"}\n",
        )
        .unwrap();
        let mut w = Vec::new();
        let docs = super::read_jsonl(&p, &mut w).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].rel_path, "d1");
        assert_eq!(docs[0].title_hint.as_deref(), Some("T"));
        assert_eq!(docs[1].title_hint, None);
        assert_eq!(w.len(), 1);
        assert!(w[0].message.starts_with("line 3:"), "{}", w[0].message);
    }
}
