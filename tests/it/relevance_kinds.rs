//! The relevance failure kinds, each on a small synthetic input with the real MiniLM:
//! fusion that never stretches noise, chunk shapes that read well, plurals, results
//! grouped by section, no floor hiding results, and the CLI's query words.
#![cfg(feature = "embeddings")]

use crate::common;
use common::*;
use serde_json::Value;
use std::fs;
use std::path::Path;

/// Indexes `files` (with MiniLM) in a temp dir; returns it.
fn indexed(files: &[(&str, &str)], extra: &[&str]) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let path = t.path().join("docs").join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let mut args = vec!["index", "--index", "idx", "--json"];
    args.extend_from_slice(extra);
    args.push("docs");
    let o = docfuse(t.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        r["vectors"], true,
        "run `bash scripts/provision-models`: {r}"
    );
    t
}

fn search(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["search", "--index", "idx", "--json"];
    all.extend_from_slice(args);
    let o = docfuse(dir, &all);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), v)
}

fn paths(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .map(|r| {
            r.iter()
                .map(|x| x["path"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

const NOISE: [(&str, &str); 3] = [
    (
        "a.md",
        "# Password reset\n\nForgotten passwords are reset from the sign-in page.\n",
    ),
    (
        "b.md",
        "# Sessions\n\nSessions expire after twelve hours.\n",
    ),
    (
        "c.md",
        "# Audit\n\nAudit logs are kept for a year. Keyword: xylograph.\n",
    ),
];

#[test]
fn fusion_never_hands_noise_the_vector_share() {
    let t = indexed(&NOISE, &[]);
    // nonsense: no lexical match, no cosine above the noise level: nothing, exit 1
    let (code, v) = search(t.path(), &["--", "qzvxkj"]);
    assert_eq!(code, 1, "{v}");
    // a.md is found when asked for, and first
    let (code, v) = search(t.path(), &["how do I reset a forgotten password"]);
    assert_eq!(code, 0);
    assert_eq!(paths(&v)[0], "a.md", "{v}");
    // the rare keyword's only chunk first, whatever the cosines
    let (_, v) = search(t.path(), &["xylograph"]);
    assert_eq!(paths(&v), ["c.md"], "{v}");
}

/// A CJK query is searched as bigrams: one whose bigrams no passage holds is noise unless
/// a cosine clears the noise of CJK probes (any two CJK texts stand near each other).
#[test]
fn a_cjk_query_no_passage_shares_a_bigram_with_gets_no_results() {
    let mut files = NOISE.to_vec();
    files.push((
        "ja.md",
        "# 設定\n\n東京の天気は晴れです。設定ファイルを編集してください。\n",
    ));
    let t = indexed(&files, &[]);
    for q in ["猫が走る森林", "量子重力理論"] {
        let (code, v) = search(t.path(), &["--", q]);
        assert_eq!(code, 1, "{q}: {v}");
        assert_eq!(v["results"], serde_json::json!([]), "{q}: {v}");
    }
    let (code, v) = search(t.path(), &["東京の天気"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v)[0], "ja.md", "{v}");
}

#[test]
fn vector_mode_answers_on_a_single_chunk_index() {
    let t = indexed(
        &[(
            "only.md",
            "# Only page\n\nThe one and only section about gardening.\n",
        )],
        &[],
    );
    let (code, v) = search(t.path(), &["--mode", "vector", "growing plants"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(paths(&v), ["only.md"]);
}

#[test]
fn an_exact_match_of_a_rare_term_beats_a_chunk_that_matches_nothing() {
    let mut code = String::from("# Build script\n\n```rust\n");
    for i in 0..60 {
        code.push_str(&format!("let value_{i} = compute_{i}(input);\n"));
    }
    code.push_str("fencesentinel_last_line_of_code();\n```\n");
    let t = indexed(
        &[
            ("code.md", &code),
            ("prose.md", "# Writing code\n\nThe last line of code in a function is often the value it returns.\n"),
        ],
        &[],
    );
    let (_, v) = search(t.path(), &["--explain", "fencesentinel_last_line_of_code"]);
    assert_eq!(paths(&v)[0], "code.md", "{v}");
}

#[test]
fn a_language_name_is_not_an_identifier() {
    let t = indexed(
        &[
            ("cs.md", "# Languages\n\nC# has generics too.\n"),
            ("g.md", "# Generics\n\nGenerics in depth, with examples.\n"),
        ],
        &[],
    );
    let (_, v) = search(t.path(), &["--mode", "lexical", "--explain", "C# generics"]);
    let r = v["results"].as_array().unwrap();
    assert_eq!(r.len(), 2, "{v}");
    for x in r {
        assert_eq!(x["explain"]["exact_symbol"], 0.0, "{x}");
    }
    // the language name is still a word the index finds
    let (_, v) = search(t.path(), &["--mode", "lexical", "--explain", "C#"]);
    assert_eq!(paths(&v), ["cs.md"], "{v}");
}

#[test]
fn a_chunk_without_a_vector_gets_no_vector_share() {
    let t = indexed(&NOISE, &["--max-chunks", "0"]);
    let (_, v) = search(
        t.path(),
        &["--mode", "hybrid", "--explain", "xylograph audit logs"],
    );
    let top = &v["results"][0];
    assert_eq!(top["path"], "c.md", "{v}");
    assert_eq!(top["explain"]["fusion"]["vector_part"], 0.0, "{top}");
}

#[test]
fn common_words_do_not_swamp_a_paraphrase() {
    let t = indexed(
        &[
            ("downloads.md", "# Python versions\n\n## Disabling automatic downloads\n\nSet `downloads = never` in the configuration to keep the tool from fetching interpreters.\nExisting installations are used instead.\n"),
            ("tasks.md", "# Running tasks\n\n## Stopping a task\n\nPress Ctrl-C to stop a task. It stops on its own after the timeout.\n\n## Running from the command line\n\nRun tasks from the command line on their own machine. Each task runs on its own.\n"),
            ("cache.md", "# Caching\n\n## Cache location\n\nThe cache lives in your home folder and is kept from one run to the next on its own.\n"),
        ],
        &[],
    );
    let (_, v) = search(
        t.path(),
        &["stop the tool from fetching interpreters on its own"],
    );
    assert_eq!(paths(&v)[0], "downloads.md", "{v}");
}

#[test]
fn headings_without_prose_never_stand_alone_and_snippets_are_never_empty() {
    let t = indexed(
        &[(
            "caching.md",
            "# Caching\n\n## Cache location\n\nThe cache lives in the home folder.\n\n## Clearing\n\nDelete the folder to clear the cache.\n",
        )],
        &[],
    );
    let (_, v) = search(t.path(), &["--chunks", "cache"]);
    for r in v["results"].as_array().unwrap() {
        assert!(!r["snippet"].as_str().unwrap().is_empty(), "{r}");
        assert!(
            r["end_line"].as_u64() > r["start_line"].as_u64(),
            "no heading-only result: {r}"
        );
    }
}

#[test]
fn plurals_and_simple_inflections_find_their_other_form() {
    let t = indexed(
        &[
            ("w.md", "# Parts\n\nA widget is drawn on the screen.\n"),
            ("c.md", "# Threads\n\nEach core runs one thread.\n"),
            ("d.md", "# Output\n\nThe result may differ between runs.\n"),
            ("b.md", "# Packing\n\nEach box holds one item.\n"),
            ("x.md", "# Other\n\nNothing related here at all.\n"),
        ],
        &[],
    );
    for (q, p) in [
        ("widgets", "w.md"),
        ("cores", "c.md"),
        ("differs", "d.md"),
        ("boxes", "b.md"),
    ] {
        let (_, v) = search(t.path(), &["--mode", "lexical", q]);
        assert_eq!(paths(&v).first().map(String::as_str), Some(p), "{q}: {v}");
    }
}

#[test]
fn results_are_grouped_by_section_and_never_cut_under_the_limit() {
    let mut long = String::from("# Guide\n\n## Configuration\n\n");
    for i in 0..12 {
        long.push_str(&format!("Paragraph {i} explains the setting number {i} of the configuration file in some detail.\n\n"));
    }
    let mut files = vec![("guide.md".to_string(), long)];
    for i in 0..8 {
        files.push((
            format!("p{i}.md"),
            format!("# Page {i}\n\nA short mention of configuration on page {i}.\n"),
        ));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let t = indexed(&refs, &["--max-tokens", "64"]);
    let (_, v) = search(
        t.path(),
        &["--mode", "lexical", "-n", "5", "configuration setting"],
    );
    let r = v["results"].as_array().unwrap();
    assert_eq!(r.len(), 5, "the limit is filled: {v}");
    let guide: Vec<&Value> = r.iter().filter(|x| x["path"] == "guide.md").collect();
    assert_eq!(guide.len(), 1, "one result per section: {v}");
    assert!(
        guide[0]["chunks_matched"].as_u64().unwrap() > 1,
        "{}",
        guide[0]
    );
    assert!(guide[0]["section_end_line"].as_u64() > guide[0]["end_line"].as_u64());
    let (_, raw) = search(
        t.path(),
        &[
            "--mode",
            "lexical",
            "-n",
            "5",
            "--chunks",
            "configuration setting",
        ],
    );
    let raw_guide = raw["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["path"] == "guide.md")
        .count();
    assert!(raw_guide > 1, "--chunks gives raw chunks: {raw}");
    // every part of the section reports the same, whole section span
    let spans: std::collections::BTreeSet<(u64, u64)> = raw["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["path"] == "guide.md")
        .map(|x| {
            assert!(
                x["section_start_line"].as_u64() <= x["start_line"].as_u64(),
                "{x}"
            );
            (
                x["section_start_line"].as_u64().unwrap(),
                x["section_end_line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(spans.len(), 1, "{raw}");
    let (_, cut) = search(
        t.path(),
        &[
            "--mode",
            "lexical",
            "-n",
            "5",
            "--floor",
            "0.9",
            "configuration setting",
        ],
    );
    assert!(
        cut["results"].as_array().unwrap().len() < 5,
        "a floor cuts only when asked"
    );
}

#[test]
fn a_query_may_start_with_a_dash_and_eval_names_labels_that_match_nothing() {
    let t = indexed(
        &[(
            "o.md",
            "# Options\n\nPass `--torch-backend auto` to choose the backend.\n",
        )],
        &[],
    );
    let o = docfuse(t.path(), &["search", "--index", "idx", "--torch-backend"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("o.md:3"), "{}", stdout(&o));
    // a moved word is named, so a mistaken option (`-k` for `-n`) is not searched silently
    assert!(
        stderr(&o).contains("`--torch-backend` is not an option"),
        "{}",
        stderr(&o)
    );
    let o = docfuse(
        t.path(),
        &["search", "--index", "idx", "--json", "-k", "4", "backend"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["query"], "-k 4 backend", "{v}");
    assert!(
        stderr(&o).contains("`-k` is not an option"),
        "{}",
        stderr(&o)
    );
    let o = docfuse(
        t.path(),
        &["search", "--index", "idx", "--", "--torch-backend"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("not an option"), "{}", stderr(&o));
    let q = t.path().join("q.jsonl");
    fs::write(
        &q,
        concat!(
            r#"{"id": "q1", "query": "backend", "relevant": [{"path": "o.md", "heading": "Options", "grade": 2}, {"path": "o.md", "heading": "Nope", "grade": 1}]}"#,
            "\n",
            r#"{"id": "q2", "query": "torch", "relevant": []}"#,
            "\n",
            r#"{"id": "q3", "query": "choose the backend", "relevant": [{"path": "o.md", "heading": "*Options*", "grade": 1}]}"#,
        ),
    )
    .unwrap();
    let o = docfuse(
        t.path(),
        &[
            "eval",
            "--index",
            "idx",
            "--queries",
            q.to_str().unwrap(),
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("question `q1`: label `o.md › Nope` matches no chunk"),
        "{err}"
    );
    // a question without a relevant label is said and left out, not counted as a miss
    assert!(
        err.contains("question `q2` has no relevant label") && err.contains("left out"),
        "{err}"
    );
    // a label written as Markdown (`*Options*`) is the heading `Options`
    assert!(!err.contains("q3"), "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["unjudged"], serde_json::json!(["q2"]), "{report}");
    let report = &report["reports"][0];
    assert_eq!(report["queries"], 2, "{report}");
    assert_eq!(report["metrics"]["mrr10"], 1.0, "{report}");
}

/// Reference pages title an option by its dotted name (`## server.proxy`); another
/// section naming it in code (`Default: \`server.proxy\``) must not outrank it, in any mode
/// that has a lexical side (the Vite docs: `server.proxy`, `server.port`, `resolve.alias`
/// were 2nd to 5th). A list over four budgets is cut between items, so the item that
/// alone says a rare word is a piece of its own that ranks first.
#[test]
fn an_option_named_by_its_heading_ranks_first_and_a_long_list_is_found_by_its_item() {
    let options = "# Server Options\n\n## server.port\n\nSpecify the port the dev server listens on.\n\n\
                   ## server.proxy\n\nConfigure custom proxy rules for the dev server: requests whose \
                   path starts with a key are forwarded to the target.\n";
    let preview = "# Preview Options\n\n## preview.proxy\n\n- **Default:** `server.proxy`\n\n\
                   Configure custom proxy rules for the preview server; it uses `server.proxy` \
                   unless this is set, and the proxy options of `server.proxy` apply.\n\n\
                   ## preview.port\n\n- **Default:** `server.port`\n\nThe preview port, `server.port` unless set.\n";
    let mut vars = String::from("# Environment\n\nThe variables set for crates:\n\n");
    for i in 0..150 {
        let what = if i == 120 {
            "a scratch directory for integration tests to write throwaway files"
        } else {
            "the version of the package being compiled, as major and minor numbers"
        };
        vars.push_str(&format!("* `PKG_VAR_{i}` — {what}.\n"));
    }
    let t = indexed(
        &[
            ("server.md", options),
            ("preview.md", preview),
            ("env.md", &vars),
        ],
        &[],
    );
    for (q, want) in [
        ("server.proxy", "server.proxy"),
        ("server.port", "server.port"),
    ] {
        for mode in ["lexical", "hybrid"] {
            let (code, v) = search(t.path(), &["--mode", mode, q]);
            assert_eq!(code, 0, "{v}");
            let top = &v["results"][0];
            assert_eq!(top["path"], "server.md", "{mode} {q}: {v}");
            assert_eq!(top["heading_path"][1], want, "{mode} {q}: {v}");
        }
    }
    let (_, v) = search(
        t.path(),
        &[
            "--chunks",
            "--mode",
            "hybrid",
            "scratch directory for throwaway files",
        ],
    );
    let top = &v["results"][0];
    assert_eq!(top["path"], "env.md", "{v}");
    let (start, end) = (
        top["start_line"].as_u64().unwrap(),
        top["end_line"].as_u64().unwrap(),
    );
    // item i is on line 5 + i; the piece holding item 120 is a piece of the list, not all of it
    assert!(start <= 125 && 125 <= end && end - start < 60, "{top}");
}

#[test]
fn an_option_heading_is_its_symbol_and_a_name_matches_in_any_case_style() {
    // pnpm's pages: options titled by the flag, settings by their camelCase name, and
    // other sections that mention both in code
    let install = "# pnpm install\n\n## Options\n\n### --offline\n\nUse only packages already in the store.\n\n\
                   ### --prefer-offline\n\nBypass staleness checks: use cached data, download only what is missing \
                   (unlike `--offline`).\n\n### --frozen-lockfile\n\nFail when the lockfile needs an update.\n";
    let doctor = "# pnpm doctor\n\nChecks the setup. With `--offline` it skips the registry; \
                  see also `--frozen-lockfile` and `--offline` in install.\n";
    let settings = "# Settings\n\n## nodeLinker\n\nDefines what linker installs the packages: isolated, hoisted or pnp.\n\n\
                    ## preferSymlinkedExecutables\n\nWhen `node-linker` is set to `hoisted`, links executables.\n";
    let add = "# pnpm add\n\n## Options\n\n### --save-exact, -E\n\nSaved dependencies get an exact version.\n";
    let t = indexed(
        &[
            ("cli/install.md", install),
            ("cli/doctor.md", doctor),
            ("settings.md", settings),
            ("cli/add.md", add),
        ],
        &[],
    );
    for (q, path, heading) in [
        ("--offline", "cli/install.md", "--offline"),
        ("--frozen-lockfile", "cli/install.md", "--frozen-lockfile"),
        ("node-linker", "settings.md", "nodeLinker"),
        ("NODE_LINKER", "settings.md", "nodeLinker"),
        ("saveExact", "cli/add.md", "--save-exact, -E"),
        ("-E", "cli/add.md", "--save-exact, -E"),
    ] {
        let (code, v) = search(t.path(), &["--mode", "lexical", "--", q]);
        assert_eq!(code, 0, "{v}");
        let top = &v["results"][0];
        assert_eq!(top["path"], path, "{q}: {v}");
        assert_eq!(
            top["heading_path"].as_array().unwrap().last().unwrap(),
            heading,
            "{q}: {v}"
        );
        assert!(v.get("missing_words").is_none(), "{q}: {v}");
    }
}

/// The lexical side's share of fusion follows the information it matched: the best
/// candidate's share of the query's IDF mass, square-rooted (`info_share` 0.5).
#[test]
fn the_lexical_share_follows_the_information_it_matched() {
    let t = indexed(&NOISE, &[]);
    let explained = |q: &str| {
        let (code, v) = search(t.path(), &["--mode", "hybrid", "--explain", q]);
        assert_eq!(code, 0, "{v}");
        v["results"][0]["explain"].clone()
    };
    // every word of the question is held by one chunk (stop words no chunk holds do
    // not count): the whole α
    let e = explained("how do sessions expire");
    assert_eq!(e["fusion"]["information_share"], 1.0, "{e}");
    // a content word no chunk holds counts at the IDF of a term in no document
    let e = explained("sessions expire zorblax");
    let n = e["n"].as_f64().unwrap();
    let held: f64 = e["terms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["idf"].as_f64().unwrap())
        .sum();
    let unseen = (1.0 + (n + 0.5) / 0.5).ln();
    let want = (held / (held + unseen)).sqrt();
    let got = e["fusion"]["information_share"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-4, "{got} vs {want}: {e}");
    assert!(got < 0.8, "{e}");
}

/// `fetch-timeout seconds` finds `config.md` first in lexical and hybrid mode, and the
/// restatement in `log_path` at the change-log prior (0.5).
fn definition_above_restatement(dir: &Path, log_path: &str, label: &str) {
    for mode in ["lexical", "hybrid"] {
        let (code, v) = search(dir, &["--mode", mode, "--explain", "fetch-timeout seconds"]);
        assert_eq!(code, 0, "{label} {mode}: {v}");
        assert_eq!(paths(&v)[0], "config.md", "{label} {mode}: {v}");
        let log_hit = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["path"] == log_path)
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(log_hit["explain"]["prior"], 0.5, "{label} {mode}: {v}");
    }
}

/// A change log restates what a reference page defines: its entries count half
/// (`changelog_prior`) unless the question asks about changes.
#[test]
fn the_definition_ranks_above_the_change_log_that_restates_it() {
    let log = "# Changelog\n\n## 2.1.0\n\n- `fetch-timeout` now also applies to retries.\n\n\
               ## 2.0.0\n\n- Added `fetch-timeout`.\n- `fetch-timeout` accepts seconds.\n";
    let reference = "# Configuration\n\n## Network\n\nSettings for downloads.\n\n\
                     ### Retries\n\nFailed downloads are retried three times, waiting a \
                     little longer each time, before the install gives up and reports the \
                     error with the address it could not reach. The fetch-timeout setting \
                     bounds each attempt: after that many seconds without data the \
                     attempt is abandoned and counted as failed.\n";
    let t = indexed(&[("CHANGELOG.md", log), ("config.md", reference)], &[]);
    definition_above_restatement(t.path(), "CHANGELOG.md", "");
    // a question about changes takes the change log at full weight
    let (_, v) = search(
        t.path(),
        &[
            "--mode",
            "lexical",
            "--explain",
            "when was fetch-timeout introduced",
        ],
    );
    let r = v["results"].as_array().unwrap();
    assert!(r.iter().all(|x| x["explain"]["prior"] == 1.0), "{v}");
}

/// A change log kept as a section of another page (`## Release notes` at the foot of a
/// guide, `# Stabilized and removed features` in a reference) restates like a change-log
/// file: its chunks count half unless the question asks about changes, and the guide's
/// other sections keep their full weight.
#[test]
fn a_change_log_section_of_a_page_ranks_below_the_definition() {
    let reference = "# Configuration\n\n## Network\n\nSettings for downloads.\n\n\
                     ### Retries\n\nFailed downloads are retried three times, waiting a \
                     little longer each time, before the install gives up and reports the \
                     error with the address it could not reach. The `fetch-timeout` setting \
                     bounds each attempt: after that many seconds without data the \
                     attempt is abandoned and counted as failed.\n";
    for heading in [
        "## Release notes",
        "## What's new in 2.0",
        "# Stabilized and removed features",
        "## Changes in v2.1",
    ] {
        let guide = format!(
            "# Guide\n\n## Installing\n\nRun the installer and follow its prompts.\n\n\
             {heading}\n\n### Download timeouts\n\nThe `fetch-timeout` setting has been \
             stabilized; `fetch-timeout` accepts seconds. See [retries](config.md#retries).\n"
        );
        let t = indexed(
            &[("guide.md", guide.as_str()), ("config.md", reference)],
            &[],
        );
        definition_above_restatement(t.path(), "guide.md", heading);
        // the guide's own sections keep their weight
        let (_, v) = search(
            t.path(),
            &["--mode", "lexical", "--explain", "installer prompts"],
        );
        assert_eq!(paths(&v)[0], "guide.md", "{heading}: {v}");
        assert_eq!(v["results"][0]["explain"]["prior"], 1.0, "{heading}: {v}");
        // a question about changes takes the section at full weight
        let (_, v) = search(
            t.path(),
            &[
                "--mode",
                "lexical",
                "--explain",
                "when was fetch-timeout stabilized",
            ],
        );
        let r = v["results"].as_array().unwrap();
        assert!(
            r.iter().all(|x| x["explain"]["prior"] == 1.0),
            "{heading}: {v}"
        );
    }
}

/// A method documented under its object's heading (`## Reply` › `### .hijack()`, as API
/// references write it) is the answer to `reply.hijack` and `reply.hijack()`, above the
/// sections that only mention the call, in every mode that reads words.
#[test]
fn a_qualified_method_name_finds_the_section_that_defines_it() {
    let reply = "# Reply\n\n## .sent\n\nTrue once a response was sent, or once `reply.hijack()` \
                 was called; `reply.hijack()` callers then handle the socket.\n\n\
                 ## .hijack()\n\nCall `reply.hijack()` to take the request out of the \
                 framework's hands: nothing is sent for you afterwards.\n\n## .code(statusCode)\n\nSets the status.\n";
    let migration = "# Migration\n\n## Modifying reply.sent\n\nUse `reply.hijack()` instead of \
                     setting `reply.sent`; `reply.hijack()` is the supported way.\n";
    let t = indexed(&[("Reply.md", reply), ("Migration.md", migration)], &[]);
    for q in ["reply.hijack", "reply.hijack()"] {
        for mode in ["lexical", "hybrid"] {
            let (code, v) = search(t.path(), &["--mode", mode, q]);
            assert_eq!(code, 0, "{q} {mode}: {v}");
            let first = &v["results"][0];
            assert_eq!(
                (first["path"].as_str(), first["heading_path"][1].as_str()),
                (Some("Reply.md"), Some(".hijack()")),
                "{q} {mode}: {v}"
            );
        }
        // it is named by the query (an exact id match), the sections that call it are not
        let (_, v) = search(t.path(), &["--mode", "lexical", "--explain", q]);
        for r in v["results"].as_array().unwrap() {
            let named = r["heading_path"][1] == ".hijack()";
            let exact_id = r["explain"]["exact_id"].as_f64().unwrap();
            assert_eq!(exact_id > 0.0, named, "{q}: {r}");
        }
    }
}

/// Issue 40, kind 3: the vector of a long chunk saw only its first 256 word pieces. A
/// list of 30 settings is one chunk (lists are cut only past four times the budget);
/// the answer is its last item, a paraphrase no word of which is in the question.
#[test]
fn the_end_of_a_long_chunk_is_seen_by_the_vector_side() {
    let list = long_settings_list();
    assert!(list.len() > 1500 && list.len() < 4000, "{}", list.len());
    let t = indexed(
        &[
            ("settings.md", &list),
            (
                "garden.md",
                "# Garden\n\nWater the tomatoes every morning in summer.\n",
            ),
            (
                "bread.md",
                "# Bread\n\nKnead the dough for ten minutes, then let it rise.\n",
            ),
        ],
        &[],
    );
    let (code, v) = search(
        t.path(),
        &["--mode", "vector", "where is the pet food stored"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        paths(&v).first().map(String::as_str),
        Some("settings.md"),
        "{v}"
    );
    // the whole list is one chunk, and its vector rows are more than one
    let idx = t.path().join("idx");
    let manifest: Value =
        serde_json::from_slice(&fs::read(idx.join("manifest.json")).unwrap()).unwrap();
    let gen = idx.join(manifest["generation_dir"].as_str().unwrap());
    let meta: Value = serde_json::from_slice(&fs::read(gen.join("vectors.json")).unwrap()).unwrap();
    let tails = meta["tails"].as_array().cloned().unwrap_or_default();
    assert!(tails.len() >= 2, "{meta}");
    assert!(
        tails.iter().all(|o| o == &tails[0]),
        "one chunk's windows: {meta}"
    );
    assert_eq!(meta["window_rule"], 1);
}

#[test]
fn a_pasted_stack_trace_is_searched_on_its_error_message() {
    // a reference page names the library internals the frames name; a guide explains
    // the error the last line reports
    let t = indexed(
        &[
            NOISE[0],
            NOISE[1],
            (
                "reference/transport.md",
                "# Transport internals\n\n`Client.send` calls `_send_handling_auth`, then \
                 `_send_handling_redirects` and `_send_single_request`, which hands the \
                 request to `HTTPTransport.handle_request`. The connection pool's \
                 `handle_request` reads the response; `map_httpcore_exceptions` turns \
                 httpcore exceptions into httpx ones.\n",
            ),
            (
                "guide/timeouts.md",
                "# Timeouts\n\nA `ReadTimeout` is raised when the read operation timed out: \
                 the server sent no data within the read timeout. Give a longer \
                 `timeout=` to the client, or `None` to wait forever.\n",
            ),
        ],
        &[],
    );
    // a trace past 4096 bytes (searched on a window of it) and one under it (searched
    // whole but for its frames: before, its first 64 terms were all the frames')
    for size in [5000, 1500] {
        let trace = python_trace(size);
        let (code, v) = search(t.path(), &[trace.as_str()]);
        assert_eq!(code, 0, "{v}");
        let part = v["searched_as"].as_str().unwrap();
        assert!(
            part.contains("ReadTimeout: The read operation timed out"),
            "{part}"
        );
        assert!(
            !part.contains("handle_request"),
            "frames are not searched: {part}"
        );
        assert!(v["note"].as_str().unwrap().contains("stack"), "{v}");
        assert_eq!(
            paths(&v).first().map(String::as_str),
            Some("guide/timeouts.md"),
            "{v}"
        );
    }
    // a question of several lines that quotes one frame line is searched as written
    let (_, v) = search(
        t.path(),
        &["why does handle_request fail\nafter a retry\n    at handle_request (/app/x.py:3:1)\nthanks"],
    );
    assert!(v.get("searched_as").is_none(), "{v}");
    // eval searches a question as search does
    let q = t.path().join("q.jsonl");
    let line = serde_json::json!({"id": "t1", "query": python_trace(1500),
        "relevant": [{"path": "guide/timeouts.md", "heading": "Timeouts", "grade": 2}]});
    fs::write(&q, format!("{line}\n")).unwrap();
    let o = docfuse(
        t.path(),
        &[
            "eval",
            "--index",
            "idx",
            "--queries",
            q.to_str().unwrap(),
            "--per-query",
            "--json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["reports"][0]["per_query"][0]["first_relevant_rank"], 1,
        "{v}"
    );
}

/// A Python traceback of about `size` bytes through httpx's internals, ending with a
/// `ReadTimeout`.
fn python_trace(size: usize) -> String {
    let mut trace = String::from("Traceback (most recent call last):\n");
    let calls = [
        (
            "httpx/_client.py",
            "send",
            "response = self._send_handling_auth(",
        ),
        (
            "httpx/_client.py",
            "_send_handling_auth",
            "response = self._send_handling_redirects(",
        ),
        (
            "httpx/_client.py",
            "_send_handling_redirects",
            "response = self._send_single_request(request)",
        ),
        (
            "httpx/_client.py",
            "_send_single_request",
            "response = transport.handle_request(request)",
        ),
        (
            "httpx/_transports/default.py",
            "handle_request",
            "with map_httpcore_exceptions():",
        ),
        (
            "httpcore/_sync/connection_pool.py",
            "handle_request",
            "raise exc from None",
        ),
        (
            "httpcore/_sync/connection.py",
            "handle_request",
            "return self._connection.handle_request(request)",
        ),
        (
            "httpcore/_sync/http11.py",
            "_receive_event",
            "data = self._network_stream.read(",
        ),
        (
            "contextlib.py",
            "__exit__",
            "self.gen.throw(typ, value, traceback)",
        ),
    ];
    let mut i = 0;
    while trace.len() < size {
        let (file, func, code) = calls[i % calls.len()];
        trace.push_str(&format!(
            "  File \"/usr/lib/python3.11/site-packages/{file}\", line {}, in {func}\n    {code}\n",
            100 + i * 7
        ));
        i += 1;
    }
    trace.push_str("httpx.ReadTimeout: The read operation timed out\n");
    trace
}

#[test]
fn a_pasted_compiler_diagnostic_is_searched_on_its_message() {
    let t = indexed(
        &[
            NOISE[0],
            (
                "borrowing.md",
                "# References\n\n## Mutable references\n\nYou cannot borrow a value as mutable \
                 more than once at a time: a second mutable reference while the first is in \
                 use is an error.\n",
            ),
            (
                "pool.md",
                "# A worker pool\n\nThe pool keeps each worker in a vector.\n\n```rust\nfn \
                 main() {\n    let mut s = String::new();\n    let r1 = &mut s;\n    \
                 r1.push_str(\"first\");\n    let r2 = &mut s;\n}\n```\n",
            ),
        ],
        &[],
    );
    let diagnostic = "error[E0499]: cannot borrow `s` as mutable more than once at a time\n \
                      --> src/main.rs:5:14\n  |\n4 |     let r1 = &mut s;\n  |              \
                      ------ first mutable borrow occurs here\n5 |     let r2 = &mut s;\n  |   \
                      ^^^^^^ second mutable borrow occurs here\n  = help: see E0499";
    let (code, v) = search(t.path(), &[diagnostic]);
    assert_eq!(code, 0, "{v}");
    // the message and its `= help:` line; not the source excerpt
    assert_eq!(
        v["searched_as"],
        "error[E0499]: cannot borrow `s` as mutable more than once at a time = help: see E0499",
        "{v}"
    );
    assert_eq!(
        paths(&v).first().map(String::as_str),
        Some("borrowing.md"),
        "{v}"
    );
    // a Markdown table is not a source excerpt: a question with one is searched whole
    let (_, v) = search(
        t.path(),
        &["which of these borrows is mutable?\n| a | b |\n| --- | --- |\n| r1 | r2 |"],
    );
    assert!(v.get("searched_as").is_none(), "{v}");
}

/// A command page in the shape of a generated manual: a description of its own and an
/// option block that every command page repeats word for word.
fn command_page(command: &str, description: &str) -> String {
    format!(
        "# tool-{command}(1)\n\n## DESCRIPTION\n\n{description}\n\n## OPTIONS\n\n\
         ### Manifest Options\n\n`--manifest-path` *path*: path to the manifest file. By \
         default the tool searches for it in the current folder and its parents.\n\n\
         `--locked`: asserts that the exact same dependencies and versions are used as \
         when the lock file was generated, and fails when the lock file is missing or \
         would change. Use it where deterministic builds are wanted, such as CI.\n"
    )
}

/// A block stamped on many pages (an option list every command page repeats) restates
/// itself on each: its copies count `template_prior` (0.5), so the section about the
/// asked command comes first. Pages of one name in other folders (a versioned site) are
/// not templates: there each copy is its version's answer.
#[test]
fn a_template_section_ranks_below_the_page_it_is_stamped_on() {
    let pages = [
        (
            "check",
            "Check a local package and all of its dependencies for errors. This will \
             essentially compile the packages without performing the final step of code \
             generation, which is faster than running a build. The compiler will save \
             metadata files to disk so that future runs will reuse them if the source has \
             not been modified.",
        ),
        (
            "build",
            "Compile local packages and all of their dependencies into binaries and \
             libraries, ready to run.",
        ),
        ("test", "Compile the package's tests and run them."),
    ];
    let texts: Vec<(String, String)> = pages
        .iter()
        .map(|(c, d)| (format!("commands/tool-{c}.md"), command_page(c, d)))
        .collect();
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let t = indexed(&files, &[]);
    let q = "tool check dependencies versions";
    for mode in ["lexical", "hybrid"] {
        let (code, v) = search(t.path(), &["--mode", mode, "--explain", q]);
        assert_eq!(code, 0, "{mode}: {v}");
        let first = &v["results"][0];
        assert_eq!(
            (first["path"].as_str(), first["heading_path"][1].as_str()),
            (Some("commands/tool-check.md"), Some("DESCRIPTION")),
            "{mode}: {v}"
        );
    }
    // the prior decides it: at full weight the page's own copy would be first
    let (_, v) = search(t.path(), &["--mode", "lexical", "--explain", q]);
    let score = |last: &str| {
        let r = v["results"].as_array().unwrap().iter().find(|r| {
            r["path"] == "commands/tool-check.md"
                && r["heading_path"].as_array().unwrap().last().unwrap() == last
        });
        r.map_or(0.0, |r| r["score"].as_f64().unwrap())
    };
    assert!(
        score("Manifest Options") / 0.5 > score("DESCRIPTION"),
        "{v}"
    );
    // the text explanation names the prior and ends with what its parts mean
    let o = docfuse(
        t.path(),
        &[
            "search",
            "--index",
            "idx",
            "--mode",
            "hybrid",
            "--explain",
            q,
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("× prior 0.50 (template copy 0.50)"), "{text}");
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.starts_with("legend: ") && last.contains("tf~") && last.contains("z = "),
        "{text}"
    );
    let (_, v) = search(
        t.path(),
        &["--mode", "lexical", "--explain", "locked dependencies"],
    );
    let r = v["results"].as_array().unwrap();
    let copies = r
        .iter()
        .filter(|x| x["heading_path"][2] == "Manifest Options");
    assert_eq!(copies.count(), 3, "{v}");
    for hit in r {
        let copy = hit["heading_path"][2] == "Manifest Options";
        let prior = if copy { 0.5 } else { 1.0 };
        assert_eq!(hit["explain"]["prior"], prior, "{hit}");
    }
    // two pages sharing a block, or one page in three versions' folders: no template
    for names in [
        ["commands/tool-check.md", "commands/tool-build.md"].as_slice(),
        ["v1/tool-check.md", "v2/tool-check.md", "v3/tool-check.md"].as_slice(),
    ] {
        let files: Vec<(&str, &str)> = names.iter().map(|p| (*p, files[0].1)).collect();
        let t = indexed(&files, &[]);
        let (_, v) = search(
            t.path(),
            &["--mode", "lexical", "--explain", "locked dependencies"],
        );
        let r = v["results"].as_array().unwrap();
        assert!(!r.is_empty(), "{names:?}: {v}");
        assert!(
            r.iter().all(|x| x["explain"]["prior"] == 1.0),
            "{names:?}: {v}"
        );
    }
}
