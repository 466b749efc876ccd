//! Docs packs end to end through the CLI: `docfuse pack`, `index --pack` from a file and
//! from an HTTP server in the test, re-ingesting (unchanged, one page changed), refusing
//! altered packs without touching the index, and `refresh --drop-root pack:CODE`.

use crate::common;
use common::*;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

fn service_docs(dir: &Path) {
    fs::create_dir_all(dir.join("guide")).unwrap();
    fs::write(
        dir.join("README.md"),
        "# Petstore service\n\nKeeps the pets of the store.\n",
    )
    .unwrap();
    fs::write(
        dir.join("guide/feeding.md"),
        "# Feeding\n\nFeed the pets twice a day.\n",
    )
    .unwrap();
    fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openapi/petstore.yaml"),
        dir.join("openapi.yaml"),
    )
    .unwrap();
}

#[track_caller]
fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// `docfuse pack svc -o svc.tar.gz --repo pets --json` with `extra` flags.
#[track_caller]
fn pack(p: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "pack",
        "svc",
        "-o",
        "svc.tar.gz",
        "--repo",
        "pets",
        "--json",
    ];
    args.extend_from_slice(extra);
    json_of(&docfuse(p, &args))
}

#[track_caller]
fn top(d: &Path, query: &str) -> serde_json::Value {
    let o = docfuse(d, &["search", "--json", "-n", "3", query]);
    json_of(&o)["results"][0].clone()
}

#[test]
fn a_pack_is_ingested_updated_refused_when_altered_and_dropped() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    service_docs(&p.join("svc"));
    fs::create_dir(p.join("own")).unwrap();
    fs::write(p.join("own/notes.md"), "# Notes\n\nOur own widgets.\n").unwrap();

    let v = pack(p, &["--version", "1.0.0"]);
    assert_eq!(
        (v["repo"].as_str(), v["files"].as_u64()),
        (Some("pets"), Some(3))
    );
    let body = Arc::new(Mutex::new(fs::read(p.join("svc.tar.gz")).unwrap()));
    let url = format!("{}/packs/pets.tar.gz", serve_bytes(body.clone()));

    json_of(&docfuse(p, &["index", "--no-embeddings", "--json", "own"]));
    let v = json_of(&docfuse(
        p,
        &[
            "index",
            "--json",
            "--no-embeddings",
            "--allow-pack-host",
            "127.0.0.1",
            "--pack",
            &url,
        ],
    ));
    assert_eq!(v["files"]["added"].as_u64(), Some(3), "{v}");
    assert_eq!(v["documents"].as_u64(), Some(4));
    // Its pages and its API operations are searchable, its lines exact.
    let hit = top(p, "List all pets");
    assert_eq!(hit["path"], "openapi.yaml", "{hit}");
    assert!(
        hit["heading_path"].to_string().contains("GET /pets"),
        "{hit}"
    );
    assert_eq!(top(p, "feed pets twice")["path"], "guide/feeding.md");
    assert_eq!(top(p, "widgets")["path"], "notes.md");

    // The same pack again: nothing is added or changed.
    let v = json_of(&docfuse(
        p,
        &[
            "index",
            "--json",
            "--no-embeddings",
            "--allow-pack-host",
            "127.0.0.1",
            "--pack",
            &url,
        ],
    ));
    assert_eq!(
        (
            v["chunk_diff"]["added"].as_u64(),
            v["chunk_diff"]["changed"].as_u64()
        ),
        (Some(0), Some(0)),
        "{v}"
    );

    // One page changed: only its file is changed.
    fs::write(
        p.join("svc/guide/feeding.md"),
        "# Feeding\n\nFeed the pets three times a day.\n",
    )
    .unwrap();
    pack(p, &[]);
    *body.lock().unwrap() = fs::read(p.join("svc.tar.gz")).unwrap();
    let v = json_of(&docfuse(
        p,
        &[
            "index",
            "--json",
            "--no-embeddings",
            "--allow-pack-host",
            "127.0.0.1",
            "--pack",
            &url,
        ],
    ));
    assert_eq!(
        (
            v["files"]["changed"].as_u64(),
            v["files"]["added"].as_u64(),
            v["files"]["removed"].as_u64()
        ),
        (Some(1), Some(0), Some(0)),
        "{v}"
    );
    assert_eq!(top(p, "three times a day")["path"], "guide/feeding.md");

    // An altered pack is refused whole: the index and the unpacked files stay as they were.
    let status_before = json_of(&docfuse(p, &["status", "--json"]));
    let mut bad = body.lock().unwrap().clone();
    let n = bad.len();
    bad[n / 2] ^= 0xff;
    *body.lock().unwrap() = bad;
    let o = docfuse(
        p,
        &[
            "index",
            "--no-embeddings",
            "--pack",
            &url,
            "--allow-pack-host",
            "127.0.0.1",
        ],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("pack refused"), "{}", stderr(&o));
    // without the allow-list, a loopback URL is refused by policy before any connection
    let o = docfuse(p, &["index", "--no-embeddings", "--pack", &url]);
    assert_ne!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(e.contains("refused by the pack URL policy"), "{e}");
    assert!(e.contains("--allow-pack-host 127.0.0.1"), "{e}");
    let o = docfuse(
        p,
        &[
            "index",
            "--no-embeddings",
            "--pack",
            &url,
            "--allow-pack-host",
            "127.0.0.1",
            "--max-pack-bytes",
            "100",
        ],
    );
    assert!(
        stderr(&o).contains("larger than the limit"),
        "{}",
        stderr(&o)
    );
    let status_after = json_of(&docfuse(p, &["status", "--json"]));
    assert_eq!(status_before["generation"], status_after["generation"]);
    assert!(p.join(".docfuse/packs/pets/guide/feeding.md").is_file());

    // Dropping the pack's repository: its documents leave, the other root stays.
    let v = json_of(&docfuse(
        p,
        &["refresh", "--json", "--drop-root", "pack:pets"],
    ));
    assert_eq!(v["documents"].as_u64(), Some(1), "{v}");
    assert_eq!(top(p, "widgets")["path"], "notes.md");
    // Nothing of it is found any more (exit 1: no result).
    let o = docfuse(p, &["search", "--json", "List all pets"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["results"].as_array().map(Vec::len), Some(0), "{v}");
    assert!(!p.join(".docfuse/packs/pets").exists());
}

#[test]
fn a_pack_stays_a_root_of_its_own_inside_an_indexed_folder() {
    let src = tempfile::tempdir().unwrap();
    service_docs(&src.path().join("svc"));
    pack(src.path(), &[]);
    let file = src.path().join("svc.tar.gz");
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    fs::write(p.join("notes.md"), "# Notes\n\nOur own widgets.\n").unwrap();

    // The index folder (./.docfuse, with its packs/) lies inside the root `.`, whose walk
    // skips it: the pack must not be merged into `.` and lost.
    json_of(&docfuse(p, &["index", "--no-embeddings", "--json", "."]));
    let o = docfuse(
        p,
        &["index", "--no-embeddings", "--pack", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(top(p, "List all pets")["path"], "openapi.yaml");
    json_of(&docfuse(p, &["index", "--no-embeddings", "--json", "."]));
    assert_eq!(top(p, "List all pets")["path"], "openapi.yaml");
    assert_eq!(top(p, "widgets")["path"], "notes.md");
    let v = json_of(&docfuse(
        p,
        &["refresh", "--json", "--drop-root", "pack:pets"],
    ));
    assert_eq!(v["documents"].as_u64(), Some(1), "{v}");
}

#[test]
fn a_pack_whose_build_fails_is_neither_left_unpacked_nor_recorded() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    for d in ["own", "gone"] {
        fs::create_dir_all(p.join(d)).unwrap();
        fs::write(p.join(d).join("a.md"), "# A\n\nA page.\n").unwrap();
    }
    json_of(&docfuse(
        p,
        &["index", "--no-embeddings", "--json", "own", "gone"],
    ));
    fs::remove_dir_all(p.join("gone")).unwrap();
    service_docs(&p.join("svc"));
    pack(p, &[]);
    let o = docfuse(p, &["index", "--no-embeddings", "--pack", "svc.tar.gz"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is missing"), "{}", stderr(&o));
    assert!(!p.join(".docfuse/packs/pets").exists());
    assert!(!p.join(".docfuse/packs/.sources.json").exists());
    // once the root is dropped, the same pack goes in and its source is recorded
    json_of(&docfuse(
        p,
        &[
            "index",
            "--no-embeddings",
            "--json",
            "--drop-root",
            "gone",
            "--pack",
            "svc.tar.gz",
        ],
    ));
    let sources = fs::read_to_string(p.join(".docfuse/packs/.sources.json")).unwrap();
    let want = fs::canonicalize(p.join("svc.tar.gz")).unwrap();
    assert!(sources.contains(want.to_str().unwrap()), "{sources}");
}

#[test]
fn dropping_the_only_pack_leaves_an_empty_index_that_takes_it_again() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    service_docs(&p.join("svc"));
    pack(p, &[]);
    let first = json_of(&docfuse(
        p,
        &["index", "--no-embeddings", "--json", "--pack", "svc.tar.gz"],
    ));
    assert!(first["chunks"].as_u64().unwrap() > 0, "{first}");
    let gone = json_of(&docfuse(
        p,
        &["refresh", "--json", "--drop-root", "pack:pets"],
    ));
    assert_eq!(
        (gone["documents"].as_u64(), gone["chunks"].as_u64()),
        (Some(0), Some(0)),
        "{gone}"
    );
    assert!(!p.join(".docfuse/packs/pets").exists());
    let o = docfuse(p, &["search", "--json", "feed the pets"]);
    assert_eq!(o.status.code(), Some(1), "no results: {}", stdout(&o));
    let o = docfuse(p, &["status", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let again = json_of(&docfuse(
        p,
        &["index", "--no-embeddings", "--json", "--pack", "svc.tar.gz"],
    ));
    assert_eq!(again["chunks"], first["chunks"], "{again}");
    assert_eq!(top(p, "feed the pets")["path"], "guide/feeding.md");
}

/// A pack, and a page in it, whose names are near the file system's 255-byte limit are
/// written and ingested: no temporary name grows from them.
#[test]
fn names_near_the_file_name_limit_are_packed_and_ingested() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path();
    service_docs(&p.join("svc"));
    let page = format!("{}.md", "p".repeat(248));
    fs::write(
        p.join("svc").join(&page),
        "# Long\n\nA page named at the limit.\n",
    )
    .unwrap();
    let out = format!("{}.tar.gz", "n".repeat(248));
    let o = docfuse(p, &["pack", "svc", "-o", &out, "--repo", "pets", "--json"]);
    json_of(&o);
    let v = json_of(&docfuse(
        p,
        &["index", "--json", "--no-embeddings", "--pack", &out],
    ));
    assert_eq!(v["files"]["added"].as_u64(), Some(4), "{v}");
    assert_eq!(top(p, "a page named at the limit")["path"], page.as_str());
    let leftovers: Vec<String> = walkdir(p)
        .into_iter()
        .filter(|n| n.starts_with(".docfuse-tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every file name under `dir`, recursively.
fn walkdir(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap().flatten() {
        let path = e.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
        }
        out.push(e.file_name().to_string_lossy().into_owned());
    }
    out
}
