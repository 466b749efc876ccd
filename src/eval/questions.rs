//! Reading question sets: docfuse JSONL, or BEIR queries.jsonl + qrels TSV.

use super::judge::{Judgment, Target};
use crate::error::{Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// A labelled question.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub id: String,
    pub query: String,
    pub judgments: Vec<Judgment>,
}

#[derive(Deserialize)]
struct DocfuseLine {
    id: String,
    query: String,
    relevant: Vec<DocfuseRel>,
}

#[derive(Deserialize)]
struct DocfuseRel {
    path: String,
    /// Absent or empty: the whole file is the target (a code question's module).
    #[serde(default)]
    heading: String,
    #[serde(default = "one")]
    grade: u32,
}

fn one() -> u32 {
    1
}

fn lines(path: &Path) -> Result<Vec<(usize, String)>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect())
}

fn bad(path: &Path, line: usize, message: String) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Reads docfuse's format: one `{"id", "query", "relevant": [{"path", "heading", "grade"}]}`
/// per line; a result is relevant when it comes from `path` and its heading path ends
/// with `heading`, or — `heading` absent or empty — when it comes from `path` (the file
/// is the target: a question whose answer is a module or a page; when every judgment
/// of a question is such, its results count once per file).
///
/// # Errors
/// [`Error::Io`] when unreadable; [`Error::Input`] naming the first malformed line or
/// the second use of an id.
pub fn read_docfuse(path: &Path) -> Result<Vec<Question>> {
    let mut out = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (n, line) in lines(path)? {
        let q: DocfuseLine = serde_json::from_str(&line).map_err(|e| {
            bad(
                path,
                n,
                format!("expected {{\"id\", \"query\", \"relevant\": [...]}} ({e})"),
            )
        })?;
        // an id keys the per-query results and the TREC run: two questions under one id
        // would be reported as one
        if let Some(first) = seen.insert(q.id.clone(), n) {
            return Err(bad(
                path,
                n,
                format!(
                    "question id `{}` is also the id of line {first}: give each question its own id",
                    q.id
                ),
            ));
        }
        let judgments = q
            .relevant
            .into_iter()
            .filter(|r| r.grade > 0)
            .map(|r| Judgment {
                target: if r.heading.trim().is_empty() {
                    Target::Doc { id: r.path }
                } else {
                    Target::Section {
                        path: r.path,
                        heading: r.heading,
                    }
                },
                grade: r.grade,
            })
            .collect();
        out.push(Question {
            id: q.id,
            query: q.query,
            judgments,
        });
    }
    Ok(out)
}

#[derive(Deserialize)]
struct BeirQuery {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

/// Reads BEIR's `queries.jsonl` and a qrels TSV (`query-id corpus-id score`, header
/// optional). Only queries with a positive judgment are returned, in qrels order of
/// first appearance.
///
/// # Errors
/// [`Error::Io`] when unreadable; [`Error::Input`] naming the first malformed line or a
/// judged query missing from the queries file.
pub fn read_beir(queries: &Path, qrels: &Path) -> Result<Vec<Question>> {
    let mut texts = BTreeMap::new();
    for (n, line) in lines(queries)? {
        let q: BeirQuery = serde_json::from_str(&line)
            .map_err(|e| bad(queries, n, format!("expected {{\"_id\", \"text\"}} ({e})")))?;
        texts.insert(q.id, q.text);
    }
    let mut order: Vec<String> = Vec::new();
    let mut judged: BTreeMap<String, Vec<Judgment>> = BTreeMap::new();
    for (n, line) in lines(qrels)? {
        let cols: Vec<&str> = line.split('\t').map(str::trim).collect();
        if n == 1 && cols.first() == Some(&"query-id") {
            continue;
        }
        let (qid, doc, score) = match cols.as_slice() {
            [q, d, s] => (*q, *d, *s),
            [q, _, d, s] => (*q, *d, *s), // TREC qrels: qid iter docid rel
            _ => {
                return Err(bad(
                    qrels,
                    n,
                    "expected `query-id<TAB>corpus-id<TAB>score`".into(),
                ))
            }
        };
        let grade: i64 = score
            .parse()
            .map_err(|_| bad(qrels, n, format!("score `{score}` is not an integer")))?;
        if !judged.contains_key(qid) {
            order.push(qid.to_string());
        }
        let list = judged.entry(qid.to_string()).or_default();
        if grade > 0 {
            list.push(Judgment {
                target: Target::Doc {
                    id: doc.to_string(),
                },
                grade: grade as u32,
            });
        }
    }
    let mut out = Vec::new();
    for qid in order {
        let judgments = judged.remove(&qid).unwrap_or_default();
        if judgments.is_empty() {
            continue;
        }
        let query = texts.get(&qid).cloned().ok_or_else(|| {
            bad(
                qrels,
                0,
                format!("query `{qid}` is judged but not in `{}`", queries.display()),
            )
        })?;
        out.push(Question {
            id: qid,
            query,
            judgments,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_beir_pairs_and_skips_header_and_zero_grades() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("q.jsonl");
        let r = d.path().join("r.tsv");
        std::fs::write(
            &q,
            "{\"_id\": \"1\", \"text\": \"alpha\"}\n{\"_id\": \"2\", \"text\": \"beta\"}\n",
        )
        .unwrap();
        std::fs::write(
            &r,
            "query-id\tcorpus-id\tscore\n2\td9\t1\n2\td8\t0\n1\td1\t2\n",
        )
        .unwrap();
        let qs = read_beir(&q, &r).unwrap();
        assert_eq!(qs.len(), 2);
        assert_eq!(qs[0].id, "2");
        assert_eq!(qs[0].judgments.len(), 1);
        assert_eq!(qs[1].judgments[0].grade, 2);
    }

    #[test]
    fn a_judgment_without_a_heading_is_its_whole_file() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("q.jsonl");
        std::fs::write(
            &q,
            r#"{"id": "a", "query": "x", "relevant": [{"path": "src/a.rs", "grade": 2}, {"path": "g.md", "heading": "", "grade": 1}, {"path": "g.md", "heading": "Setup"}]}"#,
        )
        .unwrap();
        let qs = read_docfuse(&q).unwrap();
        let targets: Vec<&Target> = qs[0].judgments.iter().map(|j| &j.target).collect();
        assert_eq!(
            targets,
            [
                &Target::Doc {
                    id: "src/a.rs".into()
                },
                &Target::Doc { id: "g.md".into() },
                &Target::Section {
                    path: "g.md".into(),
                    heading: "Setup".into()
                }
            ]
        );
    }

    #[test]
    fn malformed_line_is_named() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("q.jsonl");
        std::fs::write(
            &q,
            "{\"id\": \"a\", \"query\": \"x\", \"relevant\": []}\n{oops\n",
        )
        .unwrap();
        let err = read_docfuse(&q).unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
    }

    #[test]
    fn a_repeated_id_is_named_with_both_lines() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("q.jsonl");
        let line = "{\"id\": \"a\", \"query\": \"x\", \"relevant\": []}\n";
        std::fs::write(&q, format!("{line}\n{line}")).unwrap();
        let err = read_docfuse(&q).unwrap_err().to_string();
        assert!(
            err.contains(":3:") && err.contains("`a`") && err.contains("line 1"),
            "{err}"
        );
    }
}
