//! `CODEOWNERS` (GitHub and GitLab): who owns which paths. Patterns follow gitignore
//! rules, read with the `ignore` crate's matcher; the last matching rule of the file wins
//! (GitHub's rule). GitLab combines the last match of each section; here a rule's section
//! is recorded, and the last match across the file is the owner.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::Path;

/// One rule of a `CODEOWNERS` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRule {
    /// The path pattern as written (gitignore syntax).
    pub pattern: String,
    /// Its owners (`@user`, `@org/team`, an e-mail); a GitLab rule without owners takes
    /// its section's default owners; empty when neither names any.
    pub owners: Vec<String>,
    /// 1-based line of the rule.
    pub line: u32,
    /// The GitLab section it sits in (`[Docs]` → `Docs`), if any.
    pub section: Option<String>,
}

/// The rules of one `CODEOWNERS` file, with a matcher per rule.
pub struct Owners {
    rules: Vec<OwnerRule>,
    matchers: Vec<Gitignore>,
    /// Per rule: whether it also owns what lies below a folder it matches (not for a
    /// `dir/*` pattern, which GitHub documents as matching direct children only).
    nested: Vec<bool>,
}

/// A fixed root the matchers are built at, so that relative paths can be matched.
const ROOT: &str = "/codeowners-root";

impl Owners {
    /// The rules, in file order (a rule whose pattern the matcher refused is left out).
    pub fn rules(&self) -> &[OwnerRule] {
        &self.rules
    }

    /// The rule that owns `path` (`/`-separated, relative to the repository root; a
    /// folder when `is_dir`): the last rule whose pattern matches it or a folder above it.
    pub fn owner_of(&self, path: &str, is_dir: bool) -> Option<&OwnerRule> {
        let full = Path::new(ROOT).join(path.trim_start_matches('/'));
        (0..self.rules.len())
            .rev()
            .find(|&i| {
                let m = &self.matchers[i];
                match self.nested[i] {
                    true => m.matched_path_or_any_parents(&full, is_dir).is_ignore(),
                    false => m.matched(&full, is_dir).is_ignore(),
                }
            })
            .map(|i| &self.rules[i])
    }
}

/// Reads a `CODEOWNERS` file. Comments (`#`), blank lines and GitLab section headers
/// (`[Section]`, `^[Optional]`, `[Section][2] @default-owner`) are not rules; a pattern
/// written with `\ ` keeps its space.
pub fn read_codeowners(text: &str) -> Owners {
    let mut rules = Vec::new();
    let mut matchers = Vec::new();
    let mut nested = Vec::new();
    let mut section: Option<(String, Vec<String>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(head) = section_header(line) {
            section = Some(head);
            continue;
        }
        let (pattern, rest) = split_pattern(line);
        let mut owners: Vec<String> = rest
            .split_whitespace()
            .take_while(|t| !t.starts_with('#'))
            .map(str::to_string)
            .collect();
        if owners.is_empty() {
            if let Some((_, defaults)) = &section {
                owners = defaults.clone();
            }
        }
        let mut b = GitignoreBuilder::new(ROOT);
        if b.add_line(None, &pattern).is_err() {
            continue;
        }
        let Ok(m) = b.build() else {
            continue;
        };
        matchers.push(m);
        nested.push(!pattern.ends_with("/*"));
        rules.push(OwnerRule {
            pattern,
            owners,
            line: i as u32 + 1,
            section: section.as_ref().map(|(name, _)| name.clone()),
        });
    }
    Owners {
        rules,
        matchers,
        nested,
    }
}

/// A GitLab section header: its name and default owners.
fn section_header(line: &str) -> Option<(String, Vec<String>)> {
    let l = line.strip_prefix('^').unwrap_or(line);
    let rest = l.strip_prefix('[')?;
    let end = rest.find(']')?;
    // `[Dd]ocs/ @x` is a pattern: a header's `]` ends its first word
    let after_name = &rest[end + 1..];
    if !(after_name.is_empty() || after_name.starts_with([' ', '\t', '['])) {
        return None;
    }
    let name = rest[..end].trim().to_string();
    let mut after = &rest[end + 1..];
    // an approval count: `[Section][2]`
    if let Some(r) = after.strip_prefix('[') {
        after = r.split_once(']').map_or("", |(_, a)| a);
    }
    let owners = after
        .split_whitespace()
        .take_while(|t| !t.starts_with('#'))
        .map(str::to_string)
        .collect();
    Some((name, owners))
}

/// The pattern (with `\ ` kept as a space) and the rest of the line.
fn split_pattern(line: &str) -> (String, &str) {
    let mut pattern = String::new();
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|(_, n)| *n == ' ') => {
                pattern.push(' ');
                chars.next();
            }
            c if c.is_whitespace() => return (pattern, &line[i..]),
            c => pattern.push(c),
        }
    }
    (pattern, "")
}
