//! The CLI contract: exit codes, JSON shape, status, bad inputs. Runs the real binary on
//! the bundled sample docs and on temp folders.

use crate::common;
use common::*;
use std::fs;

fn indexed_sample() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let o = docfuse(
        d.path(),
        &["index", "--no-embeddings", docs.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("indexed 6 documents"), "{}", stdout(&o));
    d
}

/// `docfuse search --json ARGS...`, the last of `args` being the query (after `--`).
fn search_json(dir: &std::path::Path, args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["search", "--json"];
    let (query, options) = args.split_last().expect("a query");
    all.extend_from_slice(options);
    all.push("--");
    all.push(query);
    let o = docfuse(dir, &all);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

/// The `id` of each result of a search answer, in order.
fn result_ids(v: &serde_json::Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The `path` of each result of a search answer, in order.
fn result_paths(v: &serde_json::Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(|r| r["path"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A folder `docs` of `files` (name, text) indexed lexically with the `extra` options.
/// `docfuse eval --sweep SWEEP --per-query --json` of the one question in `queries`: its
/// first relevant rank under each value (0 when not ranked), and the report.
fn swept_first_ranks(
    dir: &std::path::Path,
    queries: &std::path::Path,
    sweep: &str,
) -> (Vec<u64>, serde_json::Value) {
    let q = queries.to_str().unwrap();
    let args = [
        "eval",
        "--queries",
        q,
        "--sweep",
        sweep,
        "--per-query",
        "--json",
    ];
    let o = docfuse(dir, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ranks = report["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["per_query"][0]["first_relevant_rank"]
                .as_u64()
                .unwrap_or(0)
        })
        .collect();
    (ranks, report)
}

fn indexed_docs(files: &[(&str, &str)], extra: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    fs::create_dir(&docs).unwrap();
    for (name, text) in files {
        fs::write(docs.join(name), text).unwrap();
    }
    let mut args = vec!["index", "--no-embeddings"];
    args.extend(extra);
    args.push("docs");
    let o = docfuse(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    d
}

#[test]
fn search_json_has_the_documented_shape_and_finds_the_section() {
    let d = indexed_sample();
    let (code, v) = search_json(d.path(), &["run", "tasks", "one", "after", "another"]);
    assert_eq!(code, 0);
    assert_eq!(v["query"], "run tasks one after another");
    let top = &v["results"][0];
    assert_eq!(top["rank"], 1);
    assert_eq!(top["path"], "guide/parallel.md");
    assert_eq!(top["start_line"], 5);
    assert_eq!(
        top["heading_path"],
        serde_json::json!(["Running tasks in parallel", "Limiting concurrency"])
    );
    assert_eq!(top["title"], "Running tasks in parallel");
    assert_eq!(
        top["id"],
        "guide/parallel.md#running-tasks-in-parallel/limiting-concurrency"
    );
    assert!(top["end_line"].as_u64().unwrap() >= 8);
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert_eq!(top["match_line"], 8, "the line holding the rarest terms");
    assert!(
        top["snippet"].as_str().unwrap().contains("another"),
        "{top}"
    );
    assert!(top.get("explain").is_none());
}

#[test]
fn text_output_shows_path_line_heading_path_and_score() {
    let d = indexed_sample();
    let o = docfuse(
        d.path(),
        &["search", "--limit", "1", "--", "--group-output"],
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let mut lines = out.lines();
    let first = lines.next().unwrap();
    // path:line cites the line that matched, not the section's first line
    let want = "guide/parallel.md:13  Running tasks in parallel › Output of parallel tasks  (";
    assert!(first.starts_with(want), "{out}");
    assert!(lines.next().unwrap().contains("--group-output"), "{out}");
}

#[test]
fn explain_attaches_parts_and_does_not_change_the_order() {
    let d = indexed_sample();
    let (_, plain) = search_json(d.path(), &["environment variables for a task"]);
    let (_, expl) = search_json(d.path(), &["--explain", "environment variables for a task"]);
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].to_string())
            .collect()
    };
    assert_eq!(ids(&plain), ids(&expl));
    let e = &expl["results"][0]["explain"];
    for part in [
        "lexical",
        "aboutness",
        "exact_id",
        "exact_path",
        "exact_symbol",
        "terms",
    ] {
        assert!(e.get(part).is_some(), "missing {part}: {e}");
    }
    let fields = &e["terms"][0]["fields"][0];
    assert!(fields["field"].is_string() && fields["contribution"].as_f64().unwrap() > 0.0);
}

#[test]
fn no_hits_exits_1_and_errors_exit_2() {
    let d = indexed_sample();
    let (code, v) = search_json(d.path(), &["zebraquasar"]);
    assert_eq!(code, 1);
    assert_eq!(v["results"], serde_json::json!([]));
    let o = docfuse(d.path(), &["search", "--index", "nowhere", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no docfuse index at `nowhere`"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("hint:"));
}

#[test]
fn options_after_the_query_are_options_and_typos_are_errors() {
    let d = indexed_sample();
    let o = docfuse(d.path(), &["search", "run", "tasks", "--json", "-n", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["query"], "run tasks");
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    let o = docfuse(d.path(), &["search", "--limt", "3", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--limt"), "{}", stderr(&o));
}

#[test]
fn hostile_queries_never_fail() {
    let d = indexed_sample();
    let long = "x".repeat(40_000);
    for q in [
        "\"unclosed",
        "a:b:c",
        "-flag",
        "--jobs",
        "AND OR NOT",
        "the of and",
        "🦀 tasks",
        "tasks~2^3",
        "[tasks.build]",
    ] {
        let (code, v) = search_json(d.path(), &[q]);
        assert!(code == 0 || code == 1, "query {q:?} gave exit {code}");
        assert!(v["results"].is_array(), "query {q:?}");
    }
    // a pasted log over 4096 bytes is searched on its most informative part, and says so
    let mut pasted = "    at scheduler::worker::run (/opt/app/worker.js:10:5)\n".repeat(60);
    pasted.push_str("error: cannot cancel running tasks after the deadline\n");
    pasted.push_str(&"    at scheduler::worker::run (/opt/app/worker.js:10:5)\n".repeat(60));
    assert!(pasted.len() > 4096);
    let (code, v) = search_json(d.path(), &[pasted.as_str()]);
    assert_eq!(code, 0, "{v}");
    let part = v["searched_as"].as_str().unwrap();
    assert!(part.contains("cancel running tasks"), "{part}");
    assert!(part.len() <= 4096, "{part}");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("most informative part"),
        "{v}"
    );
    // symbols only are matched as written: results, or none (exit 1)
    for q in ["(((", "*", "🦀 ⚙"] {
        let (code, v) = search_json(d.path(), &[q]);
        assert!(code == 0 || code == 1, "query {q:?} gave exit {code}");
        assert_eq!(v["mode"], "lexical", "query {q:?}");
    }
    // an empty, blank or too long query is an error, as on HTTP and MCP
    for q in ["", "   ", long.as_str()] {
        let o = docfuse(d.path(), &["search", "--", q]);
        assert_eq!(o.status.code(), Some(2), "query {q:?}");
        let err = stderr(&o);
        assert!(
            err.contains("`query` is empty") || err.contains("at most 32768 bytes"),
            "{err}"
        );
    }
}

#[test]
fn read_prints_a_results_section_or_a_files_lines_page_by_page() {
    let d = indexed_sample();
    let (code, v) = search_json(d.path(), &["cancel running tasks"]);
    assert_eq!(code, 0, "{v}");
    let r = &v["results"][0];
    let (id, path) = (r["id"].as_str().unwrap(), r["path"].as_str().unwrap());
    let file = fs::read_to_string(sample_docs().join(path)).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    let (a, b) = (
        r["section_start_line"].as_u64().unwrap() as usize,
        r["section_end_line"].as_u64().unwrap() as usize,
    );
    // by id: the whole section, exact lines, under a `path:start-end · heading` line
    let o = docfuse(d.path(), &["read", id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let (head, text) = out.split_once('\n').unwrap();
    assert!(head.starts_with(&format!("{path}:{a}-{b}")), "{head}");
    assert_eq!(text.trim_end_matches('\n'), lines[a - 1..b].join("\n"));
    // a file's lines, as JSON too
    let o = docfuse(d.path(), &["read", &format!("{path}:2-3"), "--json"]);
    let p: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(p["text"], lines[1..3].join("\n"));
    // small pages, each naming the next, make the whole file
    let mut got = Vec::new();
    let mut args = vec![
        "read".to_string(),
        path.to_string(),
        "--max-bytes".into(),
        "120".into(),
    ];
    for _ in 0..100 {
        let o = docfuse(
            d.path(),
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let mut body: Vec<&str> = out.lines().skip(1).collect();
        let next = body
            .last()
            .and_then(|l| l.strip_prefix("[lines "))
            .map(|l| l.split(['-', ' ']).next().unwrap().to_string());
        if next.is_some() {
            body.pop();
        }
        got.extend(body.iter().map(|l| l.to_string()));
        match next {
            Some(n) => {
                args = vec![
                    "read".into(),
                    path.into(),
                    "--max-bytes".into(),
                    "120".into(),
                    "--start-line".into(),
                    n,
                ];
            }
            None => break,
        }
    }
    assert_eq!(got, lines);
    // a line longer than the page is cut, and the reader is told so
    let long = lines.iter().position(|l| l.len() > 40).unwrap() + 1;
    let o = docfuse(
        d.path(),
        &[
            "read",
            &format!("{path}:{long}-{long}"),
            "--max-bytes",
            "20",
        ],
    );
    let out = stdout(&o);
    assert!(
        out.contains(&format!("[line {long} is cut: raise --max-bytes")),
        "{out}"
    );
    // what is not indexed is an error that says so
    let o = docfuse(d.path(), &["read", "nope.md"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not an indexed file"), "{}", stderr(&o));
}

#[test]
fn status_is_fresh_then_names_added_changed_removed_files() {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    copy_tree(&sample_docs(), &docs);
    assert_eq!(
        docfuse(d.path(), &["index", "--no-embeddings", "docs"])
            .status
            .code(),
        Some(0)
    );
    let s = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["fresh"], true, "{v}");
    let code = |args: &[&str]| docfuse(d.path(), args).status.code();
    assert_eq!(code(&["status", "--exit-code"]), Some(0));

    fs::write(docs.join("new.md"), "# New\n").unwrap();
    fs::write(
        docs.join("troubleshooting.md"),
        "# Troubleshooting\n\nchanged\n",
    )
    .unwrap();
    fs::remove_file(docs.join("guide/parallel.md")).unwrap();
    let s = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["fresh"], false);
    assert_eq!(v["added"], serde_json::json!(["new.md"]));
    assert_eq!(v["changed"], serde_json::json!(["troubleshooting.md"]));
    assert_eq!(v["removed"], serde_json::json!(["guide/parallel.md"]));
    let text = stdout(&docfuse(d.path(), &["status"]));
    assert!(
        text.starts_with("stale") && text.contains("1 file(s) added"),
        "{text}"
    );
    // stale: 0 by default, 1 when asked, text or JSON
    assert_eq!(code(&["status"]), Some(0));
    assert_eq!(code(&["status", "--exit-code"]), Some(1));
    assert_eq!(code(&["status", "--json", "--exit-code"]), Some(1));
}

#[test]
fn corrupt_manifest_is_refused_with_a_rebuild_hint() {
    let d = indexed_sample();
    let m = d.path().join(".docfuse/manifest.json");
    let text = fs::read_to_string(&m).unwrap();
    fs::write(&m, text.replace("\"chunks\": ", "\"chunks\": 1")).unwrap();
    let o = docfuse(d.path(), &["search", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("unusable") && err.contains("hint: rebuild"),
        "{err}"
    );
    fs::write(&m, "garbage").unwrap();
    let o = docfuse(d.path(), &["status"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not valid JSON"));
}

#[test]
fn missing_generation_folder_is_refused() {
    let d = indexed_sample();
    fs::remove_dir_all(d.path().join(".docfuse/gen-000001")).unwrap();
    let o = docfuse(d.path(), &["search", "tasks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("generation folder") && err.contains("missing"),
        "{err}"
    );
    assert!(
        err.contains("docfuse refresh --force --index .docfuse"),
        "{err}"
    );
}

#[test]
fn bad_roots_get_clear_errors_and_a_binary_file_is_skipped_by_name() {
    let d = tempfile::tempdir().unwrap();
    let o = docfuse(d.path(), &["index", "does-not-exist"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot read root `does-not-exist`"),
        "{}",
        stderr(&o)
    );

    // an empty root is a valid, empty index: search finds nothing (exit 1)
    fs::create_dir(d.path().join("empty")).unwrap();
    let o = docfuse(
        d.path(),
        &["index", "--index", "e", "--no-embeddings", "empty"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("indexed 0 documents"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("no .md"),
        "an empty index is said: {}",
        stderr(&o)
    );
    let o = docfuse(d.path(), &["search", "--index", "e", "anything"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    fs::create_dir(d.path().join("mixed")).unwrap();
    fs::write(d.path().join("mixed/bin.md"), b"\x89PNG\r\n\x1a\n\0\0\0").unwrap();
    fs::write(d.path().join("mixed/ok.md"), "# Fine\n\ntext\n").unwrap();
    let o = docfuse(d.path(), &["index", "--no-embeddings", "mixed"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bin.md") && stderr(&o).contains("binary"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("indexed 1 document into"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn a_long_line_and_a_latin1_file_are_searchable_and_status_says_how_they_were_read() {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    fs::create_dir(&docs).unwrap();
    // a heading, then one generated line far over the byte budget: most of it is indexed
    let line: String = (0..3000).map(|i| format!("word{i} ")).collect();
    fs::write(docs.join("huge.md"), format!("# Huge\n{line}needleatend\n")).unwrap();
    fs::write(
        docs.join("latin.md"),
        b"# Menu\n\nCaf\xe9 cr\xe8me br\xfbl\xe9e\n",
    )
    .unwrap();
    let index = |extra: &[&str]| {
        let mut args = vec!["index", "--no-embeddings", "--max-file-bytes", "20000"];
        args.extend_from_slice(extra);
        args.push("docs");
        docfuse(d.path(), &args)
    };
    let o = index(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("Windows-1252"), "{}", stderr(&o));
    // word2000 sits past 16 KB of the line: indexed, not dropped with the line
    let (code, v) = search_json(d.path(), &["--mode", "lexical", "word2000"]);
    assert_eq!(
        (code, v["results"][0]["path"].as_str()),
        (0, Some("huge.md")),
        "{v}"
    );
    let (code, _) = search_json(d.path(), &["--mode", "lexical", "needleatend"]);
    assert_eq!(code, 1, "past the budget");
    let (code, v) = search_json(d.path(), &["--mode", "lexical", "crème brûlée"]);
    assert_eq!(
        (code, v["results"][0]["path"].as_str()),
        (0, Some("latin.md")),
        "{v}"
    );
    assert!(
        v["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("Café"),
        "{v}"
    );
    // status names both files and how they were read, and is still fresh; so it stays
    // when a refresh carries them (another file edited) or records only new times (touch)
    fs::write(docs.join("other.md"), "# Other\n\nplain\n").unwrap();
    let o = index(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for round in 0..3u64 {
        let o = docfuse(d.path(), &["status", "--json"]);
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(s["fresh"], true, "{s}");
        let read: Vec<&str> = s["read_in_part"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(read.len(), 2, "round {round}: {s}");
        assert!(
            read[0].starts_with("huge.md: larger than the 20000-byte budget"),
            "{read:?}"
        );
        assert!(read[1].starts_with("latin.md: ") && read[1].contains("Windows-1252"));
        let o = docfuse(d.path(), &["status"]);
        assert!(
            stdout(&o).contains("read in part: huge.md"),
            "{}",
            stdout(&o)
        );
        match round {
            0 => fs::write(docs.join("other.md"), "# Other\n\nedited\n").unwrap(),
            _ => {
                // the same bytes, a new mtime
                let t = std::time::SystemTime::now() + std::time::Duration::from_secs(5 + round);
                let f = fs::File::options()
                    .write(true)
                    .open(docs.join("latin.md"))
                    .unwrap();
                f.set_modified(t).unwrap();
            }
        }
        let o = docfuse(d.path(), &["refresh"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            !stdout(&o).contains("nothing to do"),
            "round {round}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn rebuilding_publishes_a_new_generation_and_keeps_answering() {
    let d = indexed_sample();
    let docs = sample_docs();
    let o = docfuse(
        d.path(),
        &[
            "index",
            "--no-embeddings",
            "--json",
            "--force",
            docs.to_str().unwrap(),
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["generation"], 2);
    assert_eq!(v["documents"], 6);
    let (code, _) = search_json(d.path(), &["plugins"]);
    assert_eq!(code, 0);
    // nothing changed: nothing is written
    let o = docfuse(
        d.path(),
        &["index", "--no-embeddings", "--json", docs.to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["generation"].as_u64(), v["skipped"].as_bool()),
        (Some(2), Some(true))
    );
}

#[test]
fn two_roots_with_the_same_relative_path_get_distinct_ids() {
    let d = tempfile::tempdir().unwrap();
    for (root, word) in [("r1", "Alpha"), ("r2", "Beta")] {
        fs::create_dir(d.path().join(root)).unwrap();
        fs::write(
            d.path().join(root).join("README.md"),
            format!("# {word}\n\ngnat {word}\n"),
        )
        .unwrap();
    }
    let o = docfuse(d.path(), &["index", "--no-embeddings", "r1", "r2"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, v) = search_json(d.path(), &["gnat"]);
    let ids = result_ids(&v);
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert!(
        ids.iter().any(|i| i == "0:README.md#alpha") && ids.iter().any(|i| i == "1:README.md#beta"),
        "{ids:?}"
    );
}

#[test]
fn a_missing_root_is_reported_and_can_be_dropped() {
    let d = tempfile::tempdir().unwrap();
    for root in ["keep", "gone"] {
        fs::create_dir(d.path().join(root)).unwrap();
        fs::write(
            d.path().join(root).join(format!("{root}.md")),
            format!("# {root}\n\nword {root}\n"),
        )
        .unwrap();
    }
    assert_eq!(
        docfuse(d.path(), &["index", "--no-embeddings", "keep", "gone"])
            .status
            .code(),
        Some(0)
    );
    fs::remove_dir_all(d.path().join("gone")).unwrap();
    let s = docfuse(d.path(), &["status", "--json"]);
    assert_eq!(s.status.code(), Some(0), "{}", stderr(&s));
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["fresh"], false);
    assert!(
        v["reasons"][0].as_str().unwrap().contains("is missing"),
        "{v}"
    );
    let o = docfuse(d.path(), &["refresh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--drop-missing-roots"),
        "{}",
        stderr(&o)
    );
    let o = docfuse(d.path(), &["refresh", "--json", "--drop-missing-roots"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["files"]["removed"].as_u64(), v["documents"].as_u64()),
        (Some(1), Some(1))
    );
    let (code, v) = search_json(d.path(), &["word"]);
    assert_eq!(code, 0);
    assert_eq!(v["results"][0]["path"], "keep.md");
    let s = docfuse(d.path(), &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["fresh"], true, "{v}");
}

#[test]
fn any_root_can_be_dropped_by_name_with_its_chunks() {
    let d = tempfile::tempdir().unwrap();
    for root in ["keep", "other", "gone"] {
        fs::create_dir(d.path().join(root)).unwrap();
        fs::write(
            d.path().join(root).join(format!("{root}.md")),
            format!("# {root}\n\nword {root}\n"),
        )
        .unwrap();
    }
    let o = docfuse(
        d.path(),
        &["index", "--no-embeddings", "keep", "other", "gone"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let paths = |d: &std::path::Path| {
        let (code, v) = search_json(d, &["word"]);
        assert_eq!(code, 0);
        let mut p: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_string())
            .collect();
        p.sort();
        p
    };
    assert_eq!(paths(d.path()), ["gone.md", "keep.md", "other.md"]);

    // A folder that still exists, named through `..`.
    let o = docfuse(
        d.path(),
        &["refresh", "--json", "--drop-root", "keep/../other"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["files"]["removed"].as_u64(), v["documents"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(paths(d.path()), ["gone.md", "keep.md"]);
    assert!(
        d.path().join("other/other.md").exists(),
        "files are not touched"
    );

    // A folder that is gone: dropped by the path it had, without --drop-missing-roots.
    fs::remove_dir_all(d.path().join("gone")).unwrap();
    let o = docfuse(d.path(), &["refresh", "--json", "--drop-root", "./gone"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(paths(d.path()), ["keep.md"]);

    // Not a root (any more), or given twice: clear errors, nothing changes.
    let o = docfuse(d.path(), &["refresh", "--drop-root", "other"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is not a root of the index"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("keep"),
        "lists the roots: {}",
        stderr(&o)
    );
    let o = docfuse(d.path(), &["refresh", "keep", "--drop-root", "keep"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give it once"), "{}", stderr(&o));
    assert_eq!(paths(d.path()), ["keep.md"]);
    // The last root too: an empty index (its folder is not touched).
    let o = docfuse(d.path(), &["refresh", "--json", "--drop-root", "keep"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (code, _) = search_json(d.path(), &["word"]);
    assert_eq!(code, 1, "no results");
    assert!(d.path().join("keep/keep.md").exists());
    // a refresh of the empty index has nothing to do; a root can be added again
    let o = docfuse(d.path(), &["refresh", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = docfuse(d.path(), &["index", "--no-embeddings", "keep"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(paths(d.path()), ["keep.md"]);
}

#[test]
fn progress_off_a_terminal_is_plain_lines_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    let docs = sample_docs();
    let o = docfuse_env(
        d.path(),
        &["index", "--no-embeddings", docs.to_str().unwrap()],
        &[("DOCFUSE_PROGRESS_SECS", "0")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("indexing 6 documents…"), "{err}");
    assert!(err.contains("indexing 6/6 documents (100 %)"), "{err}");
    assert!(!err.contains('\u{1b}'), "no terminal codes: {err}");
    assert!(
        !stdout(&o).contains("indexing 6/6"),
        "progress stays off stdout"
    );
}

#[test]
fn a_heading_merged_into_its_child_is_read_by_its_own_id() {
    let d = tempfile::tempdir().unwrap();
    let docs = d.path().join("docs");
    fs::create_dir(&docs).unwrap();
    fs::write(
        docs.join("s.md"),
        "# Search\n\n## Table of contents\n\nText here.\n\n## Other\n\nMore.\n",
    )
    .unwrap();
    let o = docfuse(d.path(), &["index", "--no-embeddings", "docs"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // `# Search` has no prose: its section is merged into its first child's chunk, and
    // its own id (a page's top anchor) reads that chunk, from the `# Search` line
    let o = docfuse(d.path(), &["read", "s.md#search"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("s.md:1-5 · Search › Table of contents\n# Search\n"),
        "{out}"
    );
    let o = docfuse(d.path(), &["read", "s.md#searc"]);
    assert_eq!(o.status.code(), Some(2), "a prefix of an id is no id");
}

#[test]
fn read_pages_name_what_they_show_and_text_output_stays_one_line_per_field() {
    // a file name with a newline, a heading of 1,280 characters, a file over the byte
    // budget (read in part)
    let long = format!(
        "# {}\n\nzanzibarword here.\n",
        "Verylongheading ".repeat(80)
    );
    let big: String = (0..400).map(|i| format!("Filler line {i}.\n")).collect();
    let big = format!("# Big\n\n{big}");
    let small = "# Medium\n\nintro\n\n## A\n\na text\n\n## B\n\nb text\n";
    let d = indexed_docs(
        &[
            ("small.md", small),
            ("odd\nname.md", &long),
            ("big.md", &big),
        ],
        &["--max-file-bytes", "2000"],
    );
    // the next page of a file read is read by path, not by the id of its first chunk
    let o = docfuse(d.path(), &["read", "--max-bytes", "20", "small.md"]);
    let out = stdout(&o);
    assert!(
        out.contains("--max-bytes 20 'small.md' --start-line 5 --end-line 11]"),
        "{out}"
    );
    // lines asked for outside an id's section are named by the section they start in
    let o = docfuse(
        d.path(),
        &["read", "small.md#medium", "--start-line", "5", "--json"],
    );
    let p: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(p["heading_path"], serde_json::json!(["Medium", "A"]));
    assert_eq!(p["id"], "small.md#medium/a");
    let o = docfuse(d.path(), &["read", "small.md#medium"]);
    assert!(
        stdout(&o).starts_with("small.md:1-3 · Medium\n"),
        "{}",
        stdout(&o)
    );
    // a result line: the path's newline escaped, the heading cut at 200 characters
    let o = docfuse(d.path(), &["search", "zanzibarword"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("odd\\u{a}name.md:3  Verylongheading"),
        "{first}"
    );
    assert!(
        first.chars().count() < 260 && first.contains('…'),
        "{first}"
    );
    // past the part of a file that was read: said so
    let o = docfuse(d.path(), &["read", "big.md:399"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the file was read in part"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn negative_numbers_are_refused_as_values_and_common_word_queries_say_so() {
    let d = indexed_docs(
        &[("a.md", "# How to\n\nHow do I do it? The way is here.\n")],
        &[],
    );
    // `--limit -1`: the value is invalid, not an unknown argument to pass after `--`
    let o = docfuse(d.path(), &["search", "--limit", "-1", "way"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("invalid value '-1' for '--limit"), "{err}");
    assert!(!err.contains("-- -1"), "{err}");
    // a query of only stop words still matches, and the note says what it matched on
    let (code, v) = search_json(d.path(), &["how do I"]);
    assert_eq!(code, 0, "{v}");
    assert!(
        v["note"]
            .as_str()
            .is_some_and(|n| n.starts_with("The query has only common words (`how`, `do`, `i`)")),
        "{v}"
    );
    let (_, v) = search_json(d.path(), &["way"]);
    assert!(v.get("note").is_none(), "{v}");
}

#[test]
fn a_section_a_box_interrupts_is_read_run_by_run() {
    let text = "# Channels\n\nIntro.\n\n{% hint %}\n## Early access\nRolling out.\n{% endhint %}\n\nAfter the hint.\n";
    let d = indexed_docs(&[("c.md", text)], &[]);
    // the section before the box, then the part after it: never the box's lines under
    // the heading path of the section around it
    let o = docfuse(d.path(), &["read", "c.md#channels"]);
    assert!(
        stdout(&o).starts_with("c.md:1-5 · Channels\n# Channels\n"),
        "{}",
        stdout(&o)
    );
    let o = docfuse(d.path(), &["read", "c.md#channels~2"]);
    assert_eq!(stdout(&o), "c.md:10-10 · Channels\nAfter the hint.\n");
    let o = docfuse(d.path(), &["read", "c.md#channels/early-access"]);
    assert!(
        stdout(&o).starts_with("c.md:6-8 · Channels › Early access\n"),
        "{}",
        stdout(&o)
    );
}

/// Section evidence (issue 11): a section cut into pieces, each holding one of the query's
/// words, is scored as a whole too; before, each piece competed alone and a page naming
/// one word in its title won.
#[test]
fn a_section_whose_pieces_hold_the_query_words_is_scored_whole() {
    let pool = "The client opens a pool of sockets to the server and reuses them for later \
                requests so that each call avoids a fresh handshake with the remote host over \
                the network.";
    let wait = "When a request fails the client waits before it tries again and the wait grows \
                with every failed attempt until the request succeeds or the limit is reached.";
    let a = format!(
        "# Connection tuning\n\n{pool} Keepalive probes detect dead peers; keepalive runs \
         every minute.\n\n{wait} Backoff adds jitter; backoff is capped.\n"
    );
    let d = indexed_docs(
        &[
            ("a.md", &a),
            (
                "b.md",
                "# Keepalive\n\nKeepalive keeps idle connections open between requests.\n",
            ),
            (
                "c.md",
                "# Backoff\n\nBackoff spaces out the retries of a failed request.\n",
            ),
        ],
        &["--max-tokens", "64"],
    );
    // the shape under test: a.md's section is two pieces, one word in each
    let (code, v) = search_json(
        d.path(),
        &["--explain", "--chunks", "keepalive backoff settings"],
    );
    assert_eq!(code, 0, "{v}");
    let pieces: Vec<&serde_json::Value> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "a.md")
        .map(|r| &r["explain"])
        .collect();
    assert_eq!(pieces.len(), 2, "{v}");

    // (three words, so no word is taken for an id; `settings` is in no page: it only
    // says the question is about more than one page's title)
    let q = d.path().join("q.jsonl");
    fs::write(
        &q,
        r#"{"id":"q1","query":"keepalive backoff settings","relevant":[{"path":"a.md","heading":"Connection tuning","grade":2}]}"#,
    )
    .unwrap();
    let default = pieces[0]["section_weight"]
        .as_f64()
        .expect("the default weight");
    let (ranks, report) = swept_first_ranks(d.path(), &q, &format!("section_weight=0,{default}"));
    // each piece alone: the one-word pages win; the whole section: it answers first
    assert_eq!(ranks, [3, 1], "{report}");

    // explain names both parts, which add up
    for e in &pieces {
        let w = e["section_weight"].as_f64().unwrap();
        let (own, whole) = (
            e["chunk_lexical"].as_f64().unwrap(),
            e["section_lexical"].as_f64().unwrap(),
        );
        assert!(w > 0.0 && w < 1.0, "{e}");
        assert!(
            whole > own,
            "the section holds both words, a piece one: {e}"
        );
        let combined = (1.0 - w) * own + w * whole;
        assert!(
            (e["lexical"].as_f64().unwrap() - combined).abs() < 1e-4,
            "{e}"
        );
    }
    // the pieces of one section share its score
    assert_eq!(
        pieces[0]["section_lexical"], pieces[1]["section_lexical"],
        "{v}"
    );
}

/// MyST Markdown (mystmd, myst-parser): targets `(label)=` are anchors of what follows
/// them, on this page and (as `#label`) from any page; comments `% …` and block breaks
/// `+++` are neither searched nor shown; a role before a code span shows the code span;
/// links inside inline code are shown as written, an empty link text shows its target.
#[test]
fn myst_targets_comments_block_breaks_and_roles() {
    let a = "# Links\n\nWrite a link as `[text](#target)` or empty as `[](./b.md)`.\n\nSee <wiki:reStructuredText> and [](#labelled) here.\n\n(labelled)=\n## Labelled heading\n\n% zebrafish notes for authors only\n\nThe {myst:directive}`admonition.class` option sets a class.\n\n+++ {\"label\": \"after-break\"}\n\nQuagga text after the break.\n\n## The {myst:role}`embed` role\n\n(local)=\nEmbeds content.\n";
    let b = "# Other\n\nSee [the heading](#labelled), [the break](#after-break) and [nothing](#nowhere-at-all).\n\n<a id=\"local\"></a>Here, [this spot](#local).\n";
    let d = indexed_docs(&[("a.md", a), ("b.md", b)], &[]);
    // a comment's words are not searched
    let (code, v) = search_json(d.path(), &["zebrafish"]);
    assert_eq!(code, 1, "{v}");
    // snippets: code spans as written, autolinks and empty links show their targets,
    // roles show their code span, markup lines never
    let snippet = |q: &str| {
        let (code, v) = search_json(d.path(), &["--limit", "1", q]);
        assert_eq!(code, 0, "{q}: {v}");
        v["results"][0]["snippet"].as_str().unwrap().to_string()
    };
    assert_eq!(
        snippet("write link empty"),
        "Write a link as `[text](#target)` or empty as `[](./b.md)`."
    );
    assert_eq!(
        snippet("wiki here"),
        "See wiki:reStructuredText and #labelled here."
    );
    assert_eq!(
        snippet("option sets class"),
        "The `admonition.class` option sets a class."
    );
    assert_eq!(snippet("quagga"), "Quagga text after the break.");
    // a role in a heading: its code span, in the heading path and the id
    let (_, v) = search_json(d.path(), &["--limit", "1", "embeds content"]);
    assert_eq!(v["results"][0]["heading_path"][1], "The embed role", "{v}");
    // a target names the section after it: read by `page#label`
    for (id, line) in [("a.md#labelled", 8), ("a.md#after-break", 8)] {
        let o = docfuse(d.path(), &["read", "--json", id]);
        assert_eq!(o.status.code(), Some(0), "{id}: {}", stderr(&o));
        let p: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(p["start_line"], line, "{id}: {p}");
    }
    // a page named by its address, an anchor of no section: the error names the choices
    let o = docfuse(d.path(), &["read", "a"]);
    assert!(
        stderr(&o).contains("did you mean `a.md`?"),
        "{}",
        stderr(&o)
    );
    let o = docfuse(d.path(), &["read", "a.md#nowhere"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`a.md` has the sections `a.md#links`, `a.md#links/labelled-heading`"),
        "{}",
        stderr(&o)
    );
    // `#label` from another page resolves to the page that has it; only the truly
    // broken anchor is reported
    let o = docfuse(d.path(), &["graph", "--broken"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("#nowhere-at-all"), "{out}");
    assert!(
        !out.contains("#labelled") && !out.contains("#after-break"),
        "{out}"
    );
    // for CI: exit 1 when a link is broken
    for args in [
        &["graph", "--broken", "--exit-code"][..],
        &["graph", "--broken", "--exit-code", "--json"],
    ] {
        let o = docfuse(d.path(), args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    }
    // an HTML id of the page itself wins over another page's label
    let o = docfuse(d.path(), &["graph", "b.md"]);
    let out = stdout(&o);
    assert!(out.contains("a.md#links/labelled-heading"), "{out}");
    assert!(!out.contains("the-embed-role"), "{out}");
}

/// Page evidence (`page_weight`, off by default): a section whose page holds the other
/// query words ranks above a one-word page once the page's BM25F weighs in.
#[test]
fn page_evidence_scores_a_section_with_its_page() {
    let d = indexed_docs(
        &[
            (
                "a.md",
                "# Connection tuning\n\n## Keepalive\n\nKeepalive probes detect dead peers every minute of the day.\n\n## Retries\n\nBackoff adds jitter to each retry; backoff is capped at a minute.\n",
            ),
            ("b.md", "# Keepalive\n\nKeepalive keeps idle connections open.\n"),
            ("c.md", "# Backoff\n\nBackoff spaces out the retries.\n"),
        ],
        &[],
    );
    let q = d.path().join("q.jsonl");
    fs::write(
        &q,
        r#"{"id":"q1","query":"keepalive backoff settings","relevant":[{"path":"a.md","heading":"Keepalive","grade":2}]}"#,
    )
    .unwrap();
    let (ranks, report) = swept_first_ranks(d.path(), &q, "page_weight=0,0.5");
    assert_eq!(ranks.len(), 2, "{report}");
    assert!(
        ranks[0] > 1,
        "without page evidence a one-word page ties or wins: {report}"
    );
    assert_eq!(ranks[1], 1, "{report}");
}

/// A word counts as found when a passage holds it or an inflection of it, not when only
/// longer words it begins matched by prefix (`capital` in `capitalize`): the FastAPI docs
/// answered "what is the capital of France" naming only `france` as missing.
#[test]
fn a_word_found_only_inside_longer_words_is_missing() {
    let d = indexed_docs(
        &[
            (
                "names.md",
                "# Names\n\nUse capitalize to capitalise the first letter of widgets.\n",
            ),
            (
                "deploy.md",
                "# Deploy\n\nThe deploy step uploaded the build before stopping.\n",
            ),
        ],
        &[],
    );
    let (code, v) = search_json(d.path(), &["what is the capital of France"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        v["missing_words"],
        serde_json::json!(["capital", "france"]),
        "{v}"
    );
    // `capitalize` scores by prefix but is no match of `capital`: the note and the
    // results say the same
    let results = v["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["lexical_match"] == false), "{v}");
    assert!(v["note"].as_str().unwrap().contains("may not cover"), "{v}");
    // an inflection is the word: `widget` finds `widgets`, and is not missing
    let (code, v) = search_json(d.path(), &["capitalize the widget"]);
    assert_eq!(code, 0, "{v}");
    assert!(
        v.get("missing_words").is_none() && v.get("note").is_none(),
        "{v}"
    );
    // so is a longer word that is an inflected form of it (`upload` in `uploaded`,
    // `stopping`): found, and the passage a lexical match
    let (code, v) = search_json(d.path(), &["upload"]);
    assert_eq!(code, 0, "{v}");
    assert!(v.get("missing_words").is_none(), "{v}");
    assert_eq!(v["results"][0]["path"], "deploy.md", "{v}");
    assert_eq!(v["results"][0]["lexical_match"], true, "{v}");
}

/// A plural in the question matches the singular in the text, always: also when the
/// collection uses the plural elsewhere (`widgets` in a list page), the section that says
/// only `widget` is found; a section that uses the written form still ranks above one of
/// the same length that has only the singular.
#[test]
fn a_plural_query_word_matches_the_singular_even_where_the_plural_occurs() {
    let d = indexed_docs(
        &[
            (
                "list.md",
                "# Catalogue\n\nThe shop sells widgets, gadgets and gizmos; each differs.\n",
            ),
            (
                "setup.md",
                "# Setup\n\nEach widget is configured by its colour key.\n",
            ),
            (
                "spare.md",
                "# Spares\n\nEach widgets bag is configured by its colour key.\n",
            ),
            (
                "verbs.md",
                "# Ports\n\nHow one port can differ from another.\n",
            ),
        ],
        &[],
    );
    let (code, v) = search_json(d.path(), &["--mode", "lexical", "widgets"]);
    assert_eq!(code, 0, "{v}");
    let paths = result_paths(&v);
    // both pages with the written form first, then the one with the singular only
    assert_eq!(paths.len(), 3, "{v}");
    assert_eq!(paths[2], "setup.md", "{v}");
    assert_eq!(v["results"][2]["lexical_match"], true, "{v}");
    // a verb's `-s` form reaches its base form though the corpus has `differs` too
    let (_, v) = search_json(d.path(), &["--mode", "lexical", "differs"]);
    let paths = result_paths(&v);
    assert_eq!(paths, ["list.md", "verbs.md"], "{v}");
}

/// A citation is the line a reader lands on: the matched line, or the heading that holds
/// the words when the body does not; never a `---` rule; an empty `#` heading starts no
/// section of its own.
#[test]
fn citations_land_on_headings_and_text_never_on_rules_or_empty_headings() {
    let d = indexed_docs(
        &[(
            "g.md",
            "---\ntitle: Guide\n---\n\n# Guide\n\n## Setup\n\n### Install\n\nRun the installer with the flag.\n\n---\n\n## Usage\n\n---\n\nUse the tool daily.\n\n#\n\nOrphan text after an empty heading.\n",
        )],
        &[],
    );
    let first = |q: &str| {
        let (code, v) = search_json(d.path(), &[q]);
        assert_eq!(code, 0, "{q}: {v}");
        v["results"][0].clone()
    };
    let r = first("usage");
    assert_eq!(
        (r["id"].as_str(), r["match_line"].as_u64()),
        (Some("g.md#guide/usage"), Some(15)),
        "{r}"
    );
    assert_ne!(r["snippet"], "---", "{r}");
    let r = first("installer flag");
    assert_eq!(r["match_line"], 11, "{r}");
    let r = first("orphan text");
    assert_eq!(
        r["heading_path"],
        serde_json::json!(["Guide", "Usage"]),
        "{r}"
    );
    assert_eq!(r["match_line"], 23, "{r}");
    let r = first("setup");
    assert_eq!(r["match_line"], 7, "{r}");
}

/// mkdocs (Python-Markdown's attr_list) writes a heading's anchor on the heading line as
/// `## Title {: #id }`: `read page.md#id` reads that section, links to it are not broken,
/// and the heading shows without the list.
#[test]
fn an_attribute_list_on_the_heading_line_sets_its_anchor() {
    let d = indexed_docs(
        &[(
            "page.md",
            "# Page\n\nSee [install](#custom) and [third](#third-id) and [gone](#nope).\n\n## Install it {: #custom }\n\nRun the installer.\n\n## Third {: .cls #third-id }\n\nText three.\n",
        )],
        &[],
    );
    for (target, first, heading) in [
        ("page.md#custom", "page.md:5-", "## Install it"),
        ("page.md#third-id", "page.md:9-", "## Third"),
    ] {
        let o = docfuse(d.path(), &["read", target]);
        assert_eq!(o.status.code(), Some(0), "{target}: {}", stderr(&o));
        assert!(stdout(&o).starts_with(first), "{target}: {}", stdout(&o));
        assert!(stdout(&o).contains(heading), "{target}: {}", stdout(&o));
    }
    let o = docfuse(d.path(), &["graph", "--broken"]);
    let out = stdout(&o);
    assert!(out.contains("#nope"), "{out}");
    assert!(
        !out.contains("#custom") && !out.contains("#third-id"),
        "{out}"
    );
    let (_, v) = search_json(d.path(), &["installer"]);
    assert_eq!(
        v["results"][0]["heading_path"],
        serde_json::json!(["Page", "Install it"]),
        "{v}"
    );
}

/// A query of symbols (`??`, `?.`, `=>`) is a real question in JavaScript, Rust or
/// shell docs: matched as written, the section that names the symbol first, the match
/// line on the line that holds it; a symbol no passage holds answers nothing (exit 1).
#[test]
fn symbol_queries_are_matched_as_written() {
    let d = indexed_docs(
        &[
            (
                "operators.md",
                "# Operators\n\nIntro to operators.\n\n## Nullish coalescing\n\nThe `??` operator returns its right side when the left is null.\n\n```js\nconst port = env.PORT ?? 3000;\n```\n\n## Optional chaining\n\nUse `?.` to read a property of a value that may be null.\n",
            ),
            (
                "config.md",
                "# Config\n\nSet the port.\n\n```js\nconst a = b ?? c;\nconst d = e?.f;\n```\n",
            ),
        ],
        &[],
    );
    for (q, path, line) in [("??", "operators.md", 7), ("?.", "operators.md", 15)] {
        let (code, v) = search_json(d.path(), &[q]);
        assert_eq!(code, 0, "{q}: {v}");
        assert_eq!(v["mode"], "lexical", "{v}");
        let first = &v["results"][0];
        assert_eq!(first["path"], path, "{q}: {v}");
        assert_eq!(first["match_line"], line, "{q}: {v}");
        assert_eq!(first["lexical_match"], true, "{q}: {v}");
        assert!(first["snippet"].as_str().unwrap().contains(q), "{q}: {v}");
        assert!(
            v["results"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["path"] == "config.md"),
            "{q}: {v}"
        );
    }
    // an operator inside a question of words: the sections that hold it come first
    let (code, v) = search_json(d.path(), &["what does ?. do with a value"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["results"][0]["match_line"], 15, "{v}");
    let ids = result_ids(&v);
    let at = |id: &str| ids.iter().position(|x| *x == id).unwrap_or(usize::MAX);
    // both passages that hold `?.` rank above the one that holds only `??`
    let nullish = at("operators.md#operators/nullish-coalescing");
    assert!(at("config.md#config") < nullish, "{v}");
    assert!(
        at("operators.md#operators/optional-chaining") < nullish,
        "{v}"
    );
    assert!(
        v["results"][0]["snippet"].as_str().unwrap().contains("?."),
        "{v}"
    );
    let (code, v) = search_json(d.path(), &["🚀"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["results"], serde_json::json!([]), "{v}");
    assert_eq!(v["missing_words"], serde_json::json!(["🚀"]), "{v}");
    // filters apply, and a symbol missing under them is named
    let (code, v) = search_json(d.path(), &["--path-prefix", "config.md", "??"]);
    assert_eq!(
        (code, result_paths(&v)),
        (0, vec!["config.md".to_string()]),
        "{v}"
    );
    let (code, v) = search_json(d.path(), &["--path-prefix", "config.md", "=>"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["missing_words"], serde_json::json!(["=>"]), "{v}");
    // a floor keeps only the results near the best; an explicit vector mode says why it
    // answered lexically
    let (_, v) = search_json(d.path(), &["--floor", "1", "??"]);
    assert_eq!(result_paths(&v), ["operators.md"], "{v}");
    let (code, v) = search_json(d.path(), &["--mode", "vector", "?."]);
    assert_eq!((code, v["mode"].as_str()), (0, Some("lexical")), "{v}");
    assert!(
        v["degraded"]
            .as_str()
            .unwrap()
            .contains("matched as written"),
        "{v}"
    );
    // --explain names the parts: occurrences (BM25 over the text) plus the naming bonus
    let (_, v) = search_json(d.path(), &["--explain", "??"]);
    let e = &v["results"][0]["explain"];
    let f = |k: &str| e[k].as_f64().unwrap();
    assert!(
        (f("score") - (f("lexical") * f("prior") + f("exact_symbol"))).abs() < 1e-4,
        "{e}"
    );
    assert!(f("exact_symbol") > 0.0, "the section names `??`: {e}");
    let term = &e["terms"][0];
    assert_eq!(term["term"], "??", "{e}");
    assert_eq!(term["df"], 2, "{e}");
    // `` `??` `` in the prose and `??` in the code: two occurrences
    assert_eq!(term["fields"][0]["tf"], 2.0, "{e}");
}

/// A page's anchor as its site URL writes it (`cors.md#use-corsmiddleware`: the last
/// slug of a section's id, or a heading's explicit `{ #id }`) reads that section; the
/// FastAPI docs' own fragment answered "no chunk with id".
#[test]
fn a_page_anchor_reads_its_section() {
    let d = indexed_docs(
        &[(
            "cors.md",
            "# CORS\n\nIntro.\n\n## Use `CORSMiddleware` { #use-cors }\n\nAdd the middleware.\n\n### Options\n\nAllowed origins.\n",
        )],
        &[],
    );
    for (target, first) in [
        ("cors.md#use-cors", "cors.md:5-"),
        ("cors.md#options", "cors.md:9-"),
    ] {
        let o = docfuse(d.path(), &["read", target]);
        assert_eq!(o.status.code(), Some(0), "{target}: {}", stderr(&o));
        assert!(stdout(&o).starts_with(first), "{target}: {}", stdout(&o));
    }
    let o = docfuse(d.path(), &["read", "cors.md#nope"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}

/// No result on an index older than its files says so, with the command that helps.
#[test]
fn no_results_on_a_stale_index_say_it_is_stale() {
    let d = indexed_docs(&[("a.md", "# Alpha\n\nThe first page.\n")], &[]);
    let o = docfuse(d.path(), &["search", "quokkafrobnicate"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("changed since"), "{}", stderr(&o));
    fs::write(
        d.path().join("docs/b.md"),
        "# Bravo\n\nAbout quokkafrobnicate.\n",
    )
    .unwrap();
    let o = docfuse(d.path(), &["search", "quokkafrobnicate"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("changed since it was built"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("docfuse refresh"), "{}", stderr(&o));
}

/// A folder of documents given as `--index` (`docfuse index other-docs --index docs`) is
/// refused before anything is written into it, and a search of it says how to index it.
#[test]
fn a_folder_of_documents_is_not_taken_for_an_index_folder() {
    let d = indexed_docs(&[("a.md", "# Alpha\n\nSome text about alpha.\n")], &[]);
    let other = d.path().join("other");
    fs::create_dir(&other).unwrap();
    fs::write(other.join("b.md"), "# Beta\n\nSome text about beta.\n").unwrap();
    let o = docfuse(
        d.path(),
        &["index", "--no-embeddings", "other", "--index", "docs"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("`docs` is not a docfuse index and holds other files (`a.md`)"),
        "{}",
        stderr(&o)
    );
    let mut left: Vec<String> = fs::read_dir(d.path().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, vec!["a.md"], "nothing is written into the documents");
    // nor by an ingester (refused before it connects or takes its lock)
    let o = docfuse(
        d.path(),
        &["ingest", "--nats", "nats://127.0.0.1:1", "--index", "docs"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is not a docfuse index"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("docs/ingest.lock").exists());
    let o = docfuse(d.path(), &["search", "--index", "docs", "alpha"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("run `docfuse index docs`"),
        "{}",
        stderr(&o)
    );
    // an empty folder, and the index folder itself, are fine
    fs::create_dir(d.path().join("empty")).unwrap();
    for index in ["empty", ".docfuse"] {
        let o = docfuse(
            d.path(),
            &["index", "--no-embeddings", "other", "--index", index],
        );
        assert_eq!(o.status.code(), Some(0), "{index}: {}", stderr(&o));
    }
}

/// Filters that keep no indexed file (`--path-prefix docs/` when paths are relative to
/// the `docs` root) say so, with an indexed path as an example, not that the query's
/// words are missing.
#[test]
fn filters_that_keep_no_file_say_so() {
    let d = indexed_docs(
        &[("deploy.md", "# Deploy\n\nThe deploy step uploads.\n")],
        &[],
    );
    let (code, v) = search_json(d.path(), &["--path-prefix", "docs/", "deploy"]);
    assert_eq!(code, 1, "{v}");
    let note = v["note"].as_str().unwrap_or_default();
    assert!(note.contains("No indexed file passes the filters"), "{v}");
    assert!(note.contains("`deploy.md`"), "{v}");
    // a file passes, the word is missing: the note is about the word
    let (code, v) = search_json(d.path(), &["--path-prefix", "dep", "zzzqqq"]);
    assert_eq!(code, 1, "{v}");
    let note = v["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("No passage the filters keep contains `zzzqqq`"),
        "{v}"
    );
}

/// `read PATH:START-END` with a `--start-line` or `--end-line` that says otherwise is
/// refused (before, the option won silently); the same value twice is fine.
#[test]
fn read_refuses_lines_given_two_ways() {
    let d = indexed_docs(
        &[("deploy.md", "# Deploy\n\nOne.\n\nTwo.\n\nThree.\n")],
        &[],
    );
    let o = docfuse(d.path(), &["read", "deploy.md:3-5", "--start-line", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("`deploy.md:3-5` names lines and `--start-line 1` another"),
        "{}",
        stderr(&o)
    );
    let o = docfuse(d.path(), &["read", "deploy.md:3-5", "--end-line", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("One."), "{}", stdout(&o));
}
