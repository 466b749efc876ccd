//! `docfuse read`: a passage (a result's whole section by id, or a file's lines), the
//! text `GET /v1/passage` and MCP `read_passage` serve, for tools that only have a shell.

use super::args::ReadArgs;
use super::output::{name_field, print_json, print_line, printable};
use crate::retriever::{DocfuseRetriever, Passage, PassageRequest, RetrieveError};

pub fn run(a: ReadArgs) -> anyhow::Result<i32> {
    let retriever = DocfuseRetriever::open(&a.index)?;
    // an `N:` before the path names its root, unless `--root` does
    let mut req = request(&a.target, a.root.is_none())?;
    if a.root.is_some() {
        req.root = a.root;
    }
    // `path:20-30` and `--start-line 5` both say where to start: one must give way, and
    // which one is the reader's call
    for (flag, given, in_target) in [
        ("--start-line", a.start_line, req.start_line),
        ("--end-line", a.end_line, req.end_line),
    ] {
        if let (Some(g), Some(t)) = (given, in_target) {
            anyhow::ensure!(
                g == t,
                "`{}` names lines and `{flag} {g}` another: give the lines one way\nhint: `docfuse read PATH:START-END`, or `docfuse read PATH {flag} N`",
                a.target
            );
        }
    }
    if a.start_line.is_some() {
        req.start_line = a.start_line;
    }
    if a.end_line.is_some() {
        req.end_line = a.end_line;
    }
    let max = a.max_bytes.max(1);
    // a page after this one is read as this one was: by the id asked for, or by path
    let mut req_id = req.id.clone();
    let p = match retriever.read_passage_page_blocking(&req, max) {
        // `F#.md` is a path that holds `#`, not an id; the id's error stands otherwise
        Err(e @ RetrieveError::NotFound(_)) if req.id.is_some() => {
            let as_path = PassageRequest {
                id: None,
                path: Some(a.target.clone()),
                ..req
            };
            retriever
                .read_passage_page_blocking(&as_path, max)
                .inspect(|_| req_id = None)
                .map_err(|_| e)?
        }
        // `2024:notes.md` may be a path of that name, not root 2024's `notes.md`
        Err(e) if a.root.is_none() && req.root.is_some() => {
            let literal = request(&a.target, false)?;
            let literal = PassageRequest {
                start_line: req.start_line,
                end_line: req.end_line,
                ..literal
            };
            retriever
                .read_passage_page_blocking(&literal, max)
                .inspect(|_| req.root = None)
                .map_err(|_| e)?
        }
        other => other?,
    };
    if a.json {
        print_json(&p)?;
        return Ok(super::EXIT_OK);
    }
    if let Some(why) = &p.stale_reason {
        eprintln!("warning: {why}");
    }
    print_line(&header(&p))?;
    print_line(&p.text)?;
    if p.truncated && p.start_line == p.end_line && p.text.ends_with('…') {
        // a line longer than the budget is cut (only a page's first line can be): say so,
        // and how to read more of it
        let hint = if a.max_bytes < crate::retriever::MAX_PASSAGE_BYTES {
            format!(
                "raise --max-bytes (up to {}) to read more of it",
                crate::retriever::MAX_PASSAGE_BYTES
            )
        } else {
            "it is longer than the largest page; open the file to read all of it".into()
        };
        print_line(&format!("[line {} is cut: {hint}]", p.end_line))?;
    }
    if let Some(next) = p.next_start_line {
        print_line(&format!(
            "[lines {next}-{} follow: {}]",
            p.range_end_line,
            next_page_command(&a, req_id.as_deref().unwrap_or(&p.path), &p, next)
        ))?;
    }
    Ok(super::EXIT_OK)
}

/// The command that reads the page after `p` of `target` (the id or path asked for),
/// with the options this one was given.
fn next_page_command(a: &ReadArgs, target: &str, p: &Passage, next: u32) -> String {
    let mut cmd = String::from("docfuse read");
    if a.index != std::path::Path::new(crate::generation::DEFAULT_INDEX_DIR) {
        cmd.push_str(&format!(" --index {}", quoted(&a.index.to_string_lossy())));
    }
    if let Some(r) = a.root {
        cmd.push_str(&format!(" --root {r}"));
    }
    if a.max_bytes != crate::retriever::MAX_PASSAGE_BYTES {
        cmd.push_str(&format!(" --max-bytes {}", a.max_bytes));
    }
    cmd.push_str(&format!(
        " {} --start-line {next} --end-line {}",
        quoted(target),
        p.range_end_line
    ));
    cmd
}

/// `s` as one POSIX shell word: in single quotes, each `'` written `'\''`.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `path:start-end · heading path`.
fn header(p: &Passage) -> String {
    let mut h = format!("{}:{}-{}", printable(&p.path), p.start_line, p.end_line);
    if !p.heading_path.is_empty() {
        h.push_str(" · ");
        h.push_str(&name_field(&p.heading_path.join(" › ")));
    }
    h
}

/// What `target` asks for: a chunk id (it holds `#`), else a path with an optional
/// `:LINE` or `:START-END` suffix, and an optional `ROOT:` prefix (`1:guide/install.md:12`,
/// as search results show a path of an index of several roots).
fn request(target: &str, rooted: bool) -> anyhow::Result<PassageRequest> {
    if target.contains('#') {
        return Ok(PassageRequest {
            id: Some(target.to_string()),
            ..PassageRequest::default()
        });
    }
    let (path, lines) = match target.rsplit_once(':') {
        Some((path, range)) if !path.is_empty() && is_range(range) => (path, Some(range)),
        _ => (target, None),
    };
    let rooted = Some(path)
        .filter(|_| rooted)
        .and_then(|p| p.split_once(':'))
        .filter(|(n, rest)| {
            !rest.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
        .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest)));
    let (root, path) = match rooted {
        Some((n, rest)) => (Some(n), rest),
        None => (None, path),
    };
    let mut req = PassageRequest {
        path: Some(path.to_string()),
        root,
        ..PassageRequest::default()
    };
    if let Some(range) = lines {
        let (a, b) = range.split_once('-').unwrap_or((range, range));
        req.start_line = Some(line_number(a)?);
        req.end_line = Some(line_number(b)?);
    }
    Ok(req)
}

fn is_range(s: &str) -> bool {
    let mut parts = s.splitn(2, '-');
    parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn line_number(s: &str) -> anyhow::Result<u32> {
    s.parse()
        .map_err(|_| anyhow::anyhow!("`{s}` is not a line number (1 to {})", u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_ids_or_paths_with_lines() {
        let r = request("guide/install.md#install/from-source", true).unwrap();
        assert_eq!(
            r.id.as_deref(),
            Some("guide/install.md#install/from-source")
        );
        let r = request("guide/install.md:12-40", true).unwrap();
        assert_eq!(
            (r.path.as_deref(), r.start_line, r.end_line),
            (Some("guide/install.md"), Some(12), Some(40))
        );
        let r = request("guide/install.md:7", true).unwrap();
        assert_eq!((r.start_line, r.end_line), (Some(7), Some(7)));
        let r = request("notes:todo.md", true).unwrap();
        assert_eq!(
            (r.path.as_deref(), r.start_line),
            (Some("notes:todo.md"), None)
        );
        assert!(request("a.md:99999999999", true).is_err());
        // a root as search results show it for an index of several roots
        let r = request("1:guide/install.md:12", true).unwrap();
        assert_eq!(
            (r.root, r.path.as_deref(), r.start_line),
            (Some(1), Some("guide/install.md"), Some(12))
        );
        let r = request("0:bom.md", true).unwrap();
        assert_eq!((r.root, r.path.as_deref()), (Some(0), Some("bom.md")));
        // `--root` given: the name as written
        let r = request("2024:notes.md", false).unwrap();
        assert_eq!((r.root, r.path.as_deref()), (None, Some("2024:notes.md")));
    }

    #[test]
    fn a_word_with_a_quote_stays_one_shell_word() {
        assert_eq!(quoted("it's.md#a"), "'it'\\''s.md#a'");
        assert_eq!(quoted("plain.md"), "'plain.md'");
    }
}
