use super::*;

#[test]
fn package_json_name_description_scripts_and_lockfile_manager() {
    let text = r#"{"name": "@acme/search", "description": "Query ranking",
        "scripts": {"build": "tsc", "test": "vitest run", "lint": "eslint .", "typecheck": "tsc --noEmit"},
        "workspaces": ["packages/*"]}"#;
    let p = read_package(
        "packages/search/package.json",
        text,
        &["package.json", "pnpm-lock.yaml"],
        "repo",
    )
    .unwrap();
    assert_eq!(
        (p.name.as_str(), p.description.as_str(), p.dir.as_str()),
        ("@acme/search", "Query ranking", "packages/search")
    );
    assert_eq!(p.manager, Manager::Pnpm);
    assert_eq!(p.checks_source, ChecksSource::PackageScripts);
    let checks: Vec<(&str, &str)> = p
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.command.as_str()))
        .collect();
    assert_eq!(
        checks,
        vec![
            ("test", "pnpm test"),
            ("lint", "pnpm run lint"),
            ("typecheck", "pnpm run typecheck")
        ]
    );
    assert_eq!(p.members, vec!["packages/*".to_string()]);
}

#[test]
fn package_json_without_checks_gets_the_managers_default_and_the_folder_name() {
    // npm's placeholder test script is no check
    let text = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
    let p = read_package("tools/cli/package.json", text, &[], "repo").unwrap();
    assert_eq!(p.name, "cli");
    assert_eq!(p.manager, Manager::Npm);
    assert_eq!(p.checks_source, ChecksSource::ManagerDefault);
    assert_eq!(p.checks[0].command, "npm test");
    let y = read_package("package.json", "{}", &["yarn.lock"], "myrepo").unwrap();
    assert_eq!(
        (y.name.as_str(), y.checks[0].command.as_str()),
        ("myrepo", "yarn test")
    );
    let npm_lint = read_package("package.json", r#"{"scripts": {"lint": "x"}}"#, &[], "r").unwrap();
    assert_eq!(npm_lint.checks[0].command, "npm run lint");
    // Yarn 1's own `check` is not the script: scripts go through `run`
    let y = read_package(
        "package.json",
        r#"{"scripts": {"check": "x"}}"#,
        &["yarn.lock"],
        "r",
    )
    .unwrap();
    assert_eq!(y.checks[0].command, "yarn run check");
    // Corepack's `packageManager` field wins over a lockfile
    let corepack = r#"{"packageManager": "pnpm@9.1.0", "scripts": {"test": "vitest"}}"#;
    let c = read_package("package.json", corepack, &["package-lock.json"], "r").unwrap();
    assert_eq!(
        (c.manager, c.checks[0].command.as_str()),
        (Manager::Pnpm, "pnpm test")
    );
}

#[test]
fn cargo_python_and_go_manifests() {
    let c = read_package(
        "crates/core/Cargo.toml",
        "[package]\nname = \"core\"\ndescription = \"The core\"\n",
        &[],
        "r",
    )
    .unwrap();
    assert_eq!(
        (
            c.name.as_str(),
            c.description.as_str(),
            c.checks[0].command.as_str()
        ),
        ("core", "The core", "cargo test")
    );
    let ws = read_package(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\", \"cli\"]\n",
        &[],
        "mono",
    )
    .unwrap();
    assert_eq!(ws.name, "mono");
    assert_eq!(ws.members, vec!["crates/*".to_string(), "cli".to_string()]);
    assert_eq!(ws.checks[0].command, "cargo test --workspace");
    let py = read_package(
        "pyproject.toml",
        "[project]\nname = \"fastlib\"\ndescription = \"Fast\"\n",
        &["uv.lock"],
        "r",
    )
    .unwrap();
    assert_eq!(
        (py.name.as_str(), py.manager, py.checks[0].command.as_str()),
        ("fastlib", Manager::Uv, "uv run pytest")
    );
    let poetry = read_package("pyproject.toml", "[tool.poetry]\nname = \"p\"\n", &[], "r").unwrap();
    assert_eq!(
        (poetry.name.as_str(), poetry.checks[0].command.as_str()),
        ("p", "pytest")
    );
    let go = read_package(
        "svc/go.mod",
        "module example.com/acme/svc // the service\n\ngo 1.22\n",
        &[],
        "r",
    )
    .unwrap();
    assert_eq!(
        (go.name.as_str(), go.checks[0].command.as_str()),
        ("example.com/acme/svc", "go test ./...")
    );
}

#[test]
fn a_broken_manifest_is_an_error_naming_it() {
    let e = read_package("package.json", "{not json", &[], "r").unwrap_err();
    assert!(e.contains("package.json does not parse"), "{e}");
    let e = read_package("Cargo.toml", "[package\n", &[], "r").unwrap_err();
    assert!(e.contains("Cargo.toml does not parse"), "{e}");
    assert!(is_manifest_name("go.mod") && !is_manifest_name("go.sum"));
}

#[test]
fn codeowners_last_match_wins_with_gitlab_sections() {
    let text = "# owners\n*            @acme/all\n/docs/       @acme/docs\nsrc/query/** @alice @bob # ranking\nmy\\ file.md  @carol\n\n[Search][2] @acme/search\nsrc/search/\n^[Optional]\n*.lock\n";
    let o = read_codeowners(text);
    assert_eq!(o.rules().len(), 6);
    let who = |p: &str| o.owner_of(p, false).map(|r| (r.owners.join(" "), r.line));
    assert_eq!(who("README.md"), Some(("@acme/all".into(), 2)));
    assert_eq!(who("docs/guide/x.md"), Some(("@acme/docs".into(), 3)));
    assert_eq!(who("src/query/rank.ts"), Some(("@alice @bob".into(), 4)));
    assert_eq!(who("my file.md"), Some(("@carol".into(), 5)));
    // a GitLab rule without owners takes its section's defaults
    let r = o.owner_of("src/search/index.ts", false).unwrap();
    assert_eq!(
        (r.owners.clone(), r.section.as_deref()),
        (vec!["@acme/search".to_string()], Some("Search"))
    );
    let lock = o.owner_of("Cargo.lock", false).unwrap();
    assert_eq!(
        (lock.owners.len(), lock.section.as_deref()),
        (0, Some("Optional"))
    );
    assert!(read_codeowners("# nothing\n")
        .owner_of("a", false)
        .is_none());
}
