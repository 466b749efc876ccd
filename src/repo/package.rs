//! Package manifests: a package's name, description, workspace members and checks.

/// File names read as package manifests.
pub const MANIFEST_NAMES: [&str; 4] = ["package.json", "Cargo.toml", "pyproject.toml", "go.mod"];

/// Whether a file name (the last segment of a path) is a package manifest.
pub fn is_manifest_name(name: &str) -> bool {
    MANIFEST_NAMES.contains(&name)
}

/// The tool that runs a package's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Manager {
    Npm,
    Pnpm,
    Yarn,
    Bun,
    Cargo,
    Pip,
    Uv,
    Poetry,
    Go,
}

impl Manager {
    /// The command that runs script `name` of a `package.json` with this manager.
    fn run_script(self, name: &str) -> String {
        let tool = match self {
            Manager::Pnpm => "pnpm",
            Manager::Yarn => "yarn",
            Manager::Bun => "bun",
            _ => "npm",
        };
        // `test` is a command of its own in every manager; any other script goes through
        // `run` (`yarn check` would run Yarn 1's own dependency check, not the script)
        match name {
            "test" => format!("{tool} test"),
            _ => format!("{tool} run {name}"),
        }
    }
}

/// Where a package's checks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChecksSource {
    /// The manifest's own scripts (`package.json` `scripts`).
    PackageScripts,
    /// The package manager's default (`cargo test`, `npm test`, `pytest`, `go test ./...`).
    ManagerDefault,
}

/// One check: a name and the command that runs it, from the package's folder.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    pub name: String,
    pub command: String,
}

/// A package, read from its manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// The manifest's path, `/`-separated, relative to the repository root.
    pub manifest: String,
    /// Its folder (`""` at the root).
    pub dir: String,
    /// The manifest's name; the folder's name when the manifest has none (a virtual
    /// workspace, a `package.json` without `name`), the repository's for the root.
    pub name: String,
    /// The manifest's description; empty when none.
    pub description: String,
    pub manager: Manager,
    /// Workspace members as the manifest writes them (globs kept).
    pub members: Vec<String>,
    pub checks: Vec<Check>,
    pub checks_source: ChecksSource,
}

/// Script names of a `package.json` that are checks, in the order they are listed.
const CHECK_SCRIPTS: [&str; 9] = [
    "test",
    "lint",
    "check",
    "typecheck",
    "type-check",
    "types",
    "format:check",
    "fmt:check",
    "test:unit",
];

/// Reads the manifest at `path` (relative to the repository root) whose text is `text`;
/// `siblings` are the lockfile names found in its folder or, for a workspace member,
/// the nearest folder above it that has one (a lockfile chooses the manager when the
/// manifest does not name it).
/// `root_name` names a package at the root whose manifest has no name (the
/// repository's folder name).
///
/// # Errors
/// The manifest does not parse (the message names the file and the place).
pub fn read_package(
    path: &str,
    text: &str,
    siblings: &[&str],
    root_name: &str,
) -> Result<Package, String> {
    let (dir, file) = match path.rsplit_once('/') {
        Some((d, f)) => (d.to_string(), f),
        None => (String::new(), path),
    };
    let folder_name = if dir.is_empty() {
        root_name.to_string()
    } else {
        dir.rsplit('/').next().unwrap_or(&dir).to_string()
    };
    let has = |f: &str| siblings.contains(&f);
    let mut p = match file {
        "package.json" => package_json(text, has)?,
        "Cargo.toml" => cargo_toml(text)?,
        "pyproject.toml" => pyproject(text, has)?,
        "go.mod" => go_mod(text),
        other => return Err(format!("`{other}` is not a package manifest")),
    };
    p.manifest = path.to_string();
    p.dir = dir;
    if p.name.trim().is_empty() {
        p.name = folder_name;
    }
    Ok(p)
}

fn empty(manager: Manager) -> Package {
    Package {
        manifest: String::new(),
        dir: String::new(),
        name: String::new(),
        description: String::new(),
        manager,
        members: Vec::new(),
        checks: Vec::new(),
        checks_source: ChecksSource::ManagerDefault,
    }
}

fn default_check(name: &str, command: &str) -> Vec<Check> {
    vec![Check {
        name: name.to_string(),
        command: command.to_string(),
    }]
}

fn package_json(text: &str, has: impl Fn(&str) -> bool) -> Result<Package, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("package.json does not parse: {e}"))?;
    // the `packageManager` field (Corepack: `pnpm@9.1.0`) names it, else the lockfile
    let declared = v["packageManager"]
        .as_str()
        .and_then(|m| match m.split('@').next() {
            Some("pnpm") => Some(Manager::Pnpm),
            Some("yarn") => Some(Manager::Yarn),
            Some("bun") => Some(Manager::Bun),
            Some("npm") => Some(Manager::Npm),
            _ => None,
        });
    let manager = if let Some(m) = declared {
        m
    } else if has("pnpm-lock.yaml") {
        Manager::Pnpm
    } else if has("yarn.lock") {
        Manager::Yarn
    } else if has("bun.lockb") || has("bun.lock") {
        Manager::Bun
    } else {
        Manager::Npm
    };
    let mut p = empty(manager);
    p.name = v["name"].as_str().unwrap_or_default().to_string();
    p.description = v["description"].as_str().unwrap_or_default().to_string();
    p.members = match &v["workspaces"] {
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|m| m.as_str().map(str::to_string))
            .collect(),
        serde_json::Value::Object(o) => o
            .get("packages")
            .and_then(|x| x.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let scripts = v["scripts"].as_object();
    let npm_placeholder = |cmd: &str| cmd.contains("no test specified");
    let checks: Vec<Check> = CHECK_SCRIPTS
        .iter()
        .filter(|s| {
            scripts
                .and_then(|m| m.get(**s))
                .and_then(|c| c.as_str())
                .is_some_and(|c| !npm_placeholder(c))
        })
        .map(|s| Check {
            name: s.to_string(),
            command: manager.run_script(s),
        })
        .collect();
    if checks.is_empty() {
        p.checks = default_check("test", &manager.run_script("test"));
    } else {
        p.checks = checks;
        p.checks_source = ChecksSource::PackageScripts;
    }
    Ok(p)
}

fn cargo_toml(text: &str) -> Result<Package, String> {
    let v: toml::Table = text
        .parse()
        .map_err(|e| format!("Cargo.toml does not parse: {e}"))?;
    let mut p = empty(Manager::Cargo);
    if let Some(pkg) = v.get("package").and_then(|x| x.as_table()) {
        p.name = pkg
            .get("name")
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string();
        p.description = pkg
            .get("description")
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string();
    }
    if let Some(ws) = v.get("workspace").and_then(|x| x.as_table()) {
        p.members = ws
            .get("members")
            .and_then(|x| x.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
    }
    let workspace = !p.members.is_empty();
    p.checks = default_check(
        "test",
        if workspace {
            "cargo test --workspace"
        } else {
            "cargo test"
        },
    );
    Ok(p)
}

fn pyproject(text: &str, has: impl Fn(&str) -> bool) -> Result<Package, String> {
    let v: toml::Table = text
        .parse()
        .map_err(|e| format!("pyproject.toml does not parse: {e}"))?;
    let manager = if has("uv.lock") {
        Manager::Uv
    } else if has("poetry.lock") {
        Manager::Poetry
    } else {
        Manager::Pip
    };
    let mut p = empty(manager);
    let project = v.get("project").and_then(|x| x.as_table());
    let poetry = v
        .get("tool")
        .and_then(|t| t.get("poetry"))
        .and_then(|x| x.as_table());
    let field = |k: &str| {
        project
            .and_then(|t| t.get(k))
            .or_else(|| poetry.and_then(|t| t.get(k)))
            .and_then(|x| x.as_str())
            .unwrap_or_default()
            .to_string()
    };
    p.name = field("name");
    p.description = field("description");
    p.checks = default_check(
        "test",
        match manager {
            Manager::Uv => "uv run pytest",
            Manager::Poetry => "poetry run pytest",
            _ => "pytest",
        },
    );
    Ok(p)
}

fn go_mod(text: &str) -> Package {
    let mut p = empty(Manager::Go);
    p.name = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| {
            m.split("//")
                .next()
                .unwrap_or(m)
                .trim()
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_default();
    p.checks = default_check("test", "go test ./...");
    p
}
