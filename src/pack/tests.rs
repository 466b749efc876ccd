use super::*;
use std::fs;

fn docs() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir_all(d.path().join("guide")).unwrap();
    fs::write(
        d.path().join("README.md"),
        "# Tasks service\n\nSchedules tasks.\n",
    )
    .unwrap();
    fs::write(d.path().join("guide/start.md"), "# Start\n\nRun it.\n").unwrap();
    fs::write(
        d.path().join("openapi.yaml"),
        "openapi: 3.0.0\ninfo: {title: T, version: '1'}\npaths: {}\n",
    )
    .unwrap();
    fs::write(d.path().join("main.rs"), "fn main() {}\n").unwrap();
    d
}

fn packed(d: &Path) -> (PackManifest, Vec<u8>) {
    let out = d.join("p.tar.gz");
    let m = write(&d.join("src"), "tasks", "1.2.0", &out, Default::default()).unwrap();
    (m, fs::read(out).unwrap())
}

use std::path::Path;

fn setup() -> (tempfile::TempDir, PackManifest, Vec<u8>) {
    let t = tempfile::tempdir().unwrap();
    let src = docs();
    fs::rename(src.path(), t.path().join("src")).unwrap();
    let (m, bytes) = packed(t.path());
    (t, m, bytes)
}

/// A tar.gz of raw entries: (name bytes, type, body); names are written as given.
fn raw_pack(entries: &[(&[u8], tar::EntryType, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for (name, kind, body) in entries {
        let mut h = tar::Header::new_old();
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_size(body.len() as u64);
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        if *kind == tar::EntryType::Symlink {
            h.set_link_name("/etc/passwd").unwrap();
        }
        h.set_cksum();
        b.append(&h, *body).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

fn manifest_json(files: &[(&str, &[u8])]) -> Vec<u8> {
    let m = PackManifest {
        format: PACK_FORMAT,
        repo: "tasks".into(),
        version: "1".into(),
        created_at: "2026-12-02T00:00:00Z".into(),
        files: files
            .iter()
            .map(|(p, b)| PackFile {
                path: p.to_string(),
                size: b.len() as u64,
                sha256: crate::hashing::sha256_hex(b),
            })
            .collect(),
    };
    serde_json::to_vec(&m).unwrap()
}

#[test]
fn a_written_pack_reads_back_with_its_documentation_only() {
    let (_t, m, bytes) = setup();
    let paths: Vec<&str> = m.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["README.md", "guide/start.md", "openapi.yaml"]);
    assert_eq!((m.repo.as_str(), m.version.as_str()), ("tasks", "1.2.0"));
    assert!(
        m.created_at.ends_with('Z') && m.created_at.len() == 20,
        "{}",
        m.created_at
    );
    let p = read(bytes.clone(), &Limits::default()).unwrap();
    assert_eq!(p.manifest, m);
    assert_eq!(
        p.file("guide/start.md").unwrap().unwrap(),
        b"# Start\n\nRun it.\n"
    );
}

#[test]
fn install_keeps_unchanged_files_and_removes_dropped_ones() {
    let (t, _m, bytes) = setup();
    let packs = t.path().join("index/packs");
    let p = read(bytes.clone(), &Limits::default()).unwrap();
    let first = install(&p, &packs).unwrap();
    assert_eq!((first.written, first.kept, first.removed), (3, 0, 0));
    let readme = packs.join("tasks/README.md");
    let mtime = fs::metadata(&readme).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));

    fs::write(
        t.path().join("src/guide/start.md"),
        "# Start\n\nRun it twice.\n",
    )
    .unwrap();
    fs::remove_file(t.path().join("src/openapi.yaml")).unwrap();
    let (_, bytes) = packed(t.path());
    let again = install(&read(bytes.clone(), &Limits::default()).unwrap(), &packs).unwrap();
    assert_eq!((again.written, again.kept, again.removed), (1, 1, 1));
    assert_eq!(fs::metadata(&readme).unwrap().modified().unwrap(), mtime);
    assert!(!packs.join("tasks/openapi.yaml").exists());
    assert_eq!(
        fs::read_to_string(packs.join("tasks/guide/start.md")).unwrap(),
        "# Start\n\nRun it twice.\n"
    );
    let leftovers: Vec<_> = fs::read_dir(&packs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers, ["tasks"]);
}

#[test]
fn unsafe_or_altered_packs_are_refused_whole() {
    let ok: &[u8] = b"# A\n";
    let m = manifest_json(&[("a.md", ok)]);
    let reg = tar::EntryType::Regular;
    let twice = manifest_json(&[("a.md", ok), ("a.md", ok)]);
    let nested = manifest_json(&[("a", ok), ("a/b.md", ok)]);
    let good = raw_pack(&[(b"pack.json", reg, &m), (b"docs/a.md", reg, ok)]);
    assert!(read(good.clone(), &Limits::default()).is_ok());
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "..",
            raw_pack(&[(b"pack.json", reg, &m), (b"docs/../../a.md", reg, ok)]),
        ),
        (
            "absolute",
            raw_pack(&[(b"pack.json", reg, &m), (b"/docs/a.md", reg, ok)]),
        ),
        (
            "Symlink",
            raw_pack(&[
                (b"pack.json", reg, &m),
                (b"docs/a.md", tar::EntryType::Symlink, b""),
            ]),
        ),
        (
            "Link",
            raw_pack(&[
                (b"pack.json", reg, &m),
                (b"docs/a.md", tar::EntryType::Link, b""),
            ]),
        ),
        (
            "does not match",
            raw_pack(&[(b"pack.json", reg, &m), (b"docs/a.md", reg, b"# B\n")]),
        ),
        (
            "in the pack but not in `pack.json`",
            raw_pack(&[
                (b"pack.json", reg, &m),
                (b"docs/a.md", reg, ok),
                (b"docs/b.md", reg, ok),
            ]),
        ),
        (
            "outside",
            raw_pack(&[
                (b"pack.json", reg, &m),
                (b"docs/a.md", reg, ok),
                (b"other.md", reg, ok),
            ]),
        ),
        ("not `pack.json`", raw_pack(&[(b"docs/a.md", reg, ok)])),
        (
            "not `pack.json`",
            raw_pack(&[(b"docs/a.md", reg, ok), (b"pack.json", reg, &m)]),
        ),
        (
            "does not match",
            raw_pack(&[
                (b"pack.json", reg, &m),
                (b"docs/a.md", reg, b"# A longer\n"),
            ]),
        ),
        (
            "a path twice",
            raw_pack(&[(b"pack.json", reg, &twice), (b"docs/a.md", reg, ok)]),
        ),
        (
            "also a folder",
            raw_pack(&[
                (b"pack.json", reg, &nested),
                (b"docs/a", reg, ok),
                (b"docs/a/b.md", reg, ok),
            ]),
        ),
        ("not a readable", b"not a tarball at all".to_vec()),
    ];
    for (why, bytes) in cases {
        let e = read(bytes.clone(), &Limits::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{why}: {e}");
    }
    let small = Limits {
        max_unpacked_bytes: 3,
        ..Limits::default()
    };
    let e = read(good.clone(), &small).unwrap_err().to_string();
    assert!(e.contains("more than 3 bytes"), "{e}");
    let tiny = Limits {
        max_pack_bytes: 10,
        ..Limits::default()
    };
    assert!(read(good.clone(), &tiny)
        .unwrap_err()
        .to_string()
        .contains("over the limit"));
}

#[test]
fn codes() {
    for c in ["tasks", "a", "billing-api", "v1.2_x"] {
        assert!(valid_code(c), "{c}");
    }
    for c in ["", "Tasks", "-x", "a/b", "a b", &"x".repeat(65)] {
        assert!(!valid_code(c), "{c}");
    }
    assert_eq!(code_from_name("My Service!"), "my-service-");
    assert_eq!(code_from_name("..."), "docs");
    assert!(valid_code(&code_from_name("My Service!")));
}

#[cfg(unix)]
#[test]
fn pack_sources_with_passwords_are_the_owners_only() {
    use super::{record_source, sources, SOURCES_FILE};
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let packs = d.path().join("packs");
    let url = "https://user:s3cret@docs.example.com/billing.tar.gz";
    record_source(&packs, "billing", url).unwrap();
    let file = packs.join(SOURCES_FILE);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    // stored as given: the password is needed to pull the pack again
    assert_eq!(sources(&packs).unwrap()["billing"], url);
    // an older, world-readable file is tightened when read
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(sources(&packs).unwrap().len(), 1);
    assert_eq!(mode(&file), 0o600);
    record_source(&packs, "orders", "/tmp/orders.tar.gz").unwrap();
    assert_eq!(mode(&file), 0o600);
}

#[test]
fn a_decompression_bomb_is_refused_by_ratio_and_packs_share_a_disk_budget() {
    let t = tempfile::tempdir().unwrap();
    let src = t.path().join("src");
    fs::create_dir_all(&src).unwrap();
    // 24 MiB of one repeated line: gzip makes it hundreds of times smaller
    fs::write(src.join("big.md"), "la\n".repeat(16 << 20 >> 1)).unwrap();
    let out = t.path().join("bulk.tar.gz");
    write(&src, "bulk", "1", &out, Default::default()).unwrap();
    let bytes = fs::read(out).unwrap();
    assert!(bytes.len() < (16 << 20) / 100, "{} bytes", bytes.len());
    let e = read(bytes.clone(), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("unpack to more than"), "{e}");
    let budget = Limits::default().unpacked_budget(bytes.len() as u64);
    assert_eq!(budget, MIN_UNPACKED_ALLOWANCE);
    // the same pack within a looser ratio reads
    let loose = Limits {
        max_ratio: 10_000,
        ..Limits::default()
    };
    let big = read(bytes, &loose).unwrap();

    // two packs on one disk budget: the second is refused, the first stays; the first
    // again (its own earlier version not counted) is taken
    let (_t2, _m, small_bytes) = setup();
    let packs = t.path().join("index/packs");
    let tight = Limits {
        max_ratio: 10_000,
        max_total_bytes: 26 << 20,
        ..Limits::default()
    };
    let big = Pack {
        limits: tight,
        ..big
    };
    install(&big, &packs).unwrap();
    let mut small = read(small_bytes, &tight).unwrap();
    small.manifest.files.push(PackFile {
        path: "padding.md".into(),
        size: 2 << 20,
        sha256: String::new(),
    });
    let e = install(&small, &packs).unwrap_err().to_string();
    assert!(e.contains("over the budget of 27262976 bytes"), "{e}");
    assert!(!packs.join("tasks").exists());
    assert_eq!(install(&big, &packs).unwrap().kept, 1);
}

#[cfg(unix)]
#[test]
fn a_pack_written_to_a_device_or_fifo_never_replaces_it() {
    use std::os::unix::fs::FileTypeExt;
    let (t, _m, _bytes) = setup();
    let src = t.path().join("src");
    write(
        &src,
        "tasks",
        "1",
        Path::new("/dev/null"),
        Default::default(),
    )
    .unwrap();
    let null = fs::metadata("/dev/null").unwrap();
    assert!(
        null.file_type().is_char_device(),
        "/dev/null is still a device"
    );
    // a FIFO: read on the other side, still a FIFO afterwards
    let fifo = t.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read(fifo).unwrap())
        };
        write(&src, "tasks", "1", &fifo, Default::default()).unwrap();
        let got = reader.join().unwrap();
        assert_eq!(&got[..2], b"\x1f\x8b", "a gzip stream came through");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }
    let e = write(&src, "tasks", "1", t.path(), Default::default()).unwrap_err();
    assert!(e.to_string().contains("is a folder"), "{e}");
}
