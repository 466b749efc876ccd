//! The items of one source file, read from its tree-sitter tree.

use super::Language;
use tree_sitter::{Node, Parser};

/// A signature longer than this many characters is cut (with `…`).
pub const MAX_SIGNATURE_CHARS: usize = 400;

/// At most this many bytes of a body's words are kept.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What an item declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    Function,
    /// A function of a type (an `impl` block's, a class's, a Go receiver's).
    Method,
    Struct,
    Enum,
    Union,
    Trait,
    Interface,
    Class,
    /// A type alias or a Go type that is neither a struct nor an interface.
    Type,
    Const,
    Static,
    Variable,
    /// A nested module or namespace.
    Module,
    Macro,
}

/// One declared item.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Its name; a method's is qualified by its type (`Parser::parse` in Rust,
    /// `Parser.parse` elsewhere).
    pub name: String,
    pub kind: ItemKind,
    /// Visible outside its module: `pub` (Rust), `export` (TypeScript, JavaScript), a name
    /// without a leading `_` (Python), a capitalised name (Go). A method is exported when
    /// it is itself and its type is.
    pub exported: bool,
    /// The declaration without its body, whitespace collapsed, at most
    /// [`MAX_SIGNATURE_CHARS`] characters.
    pub signature: String,
    /// Its doc comment (markers stripped, lines joined with `\n`); empty when none.
    pub doc: String,
    /// 1-based first line of the declaration itself (after its doc comment and
    /// attributes).
    pub start_line: u32,
    /// 1-based last line of the declaration, body included.
    pub end_line: u32,
    /// 1-based first line of its doc comment; `start_line` when it has none.
    pub doc_line: u32,
    /// What its body says: identifiers, comments and string literals, space-separated,
    /// at most [`MAX_BODY_BYTES`].
    pub body: String,
}

/// What an import names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportKind {
    /// A path or module specifier as written: `crate::query::search` (Rust `use`),
    /// `./search` or `react` (TypeScript, JavaScript), `..pkg.mod` or `os.path` (Python),
    /// `example.com/m/pkg` (Go).
    Path,
    /// A Rust child module declared without a body (`mod search;`): its own file.
    ChildModule,
}

/// One import of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// What it names, as written (quotes left out; a grouped Rust `use` tree gives one
    /// import per path: `crate::{a, b}` → `crate::a`, `crate::b`).
    pub target: String,
    pub kind: ImportKind,
    /// 1-based line of the import.
    pub line: u32,
}

/// One source file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub language: Language,
    /// The module's own doc comment: `//!` (Rust), a module docstring (Python), the
    /// comment above `package` (Go), a leading `/** … */` set apart from the first
    /// declaration (TypeScript, JavaScript); empty when none.
    pub doc: String,
    /// Declared items in source order (methods after their type).
    pub items: Vec<Item>,
    /// What it imports, at top level, in source order.
    pub imports: Vec<Import>,
    /// Syntax errors the parser recovered from (0 for a clean parse).
    pub parse_errors: usize,
}

/// Reads the items of `text`, a file of `language`.
///
/// # Errors
/// The grammar cannot be loaded (a version mismatch of tree-sitter and the grammar
/// crate) or the parser gives no tree (it was cancelled).
pub fn read_module(language: Language, text: &str) -> Result<Module, String> {
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .map_err(|e| format!("cannot load the {} grammar: {e}", language.name()))?;
    let tree = parser
        .parse(text, None)
        .ok_or_else(|| format!("the {} parser gave no tree", language.name()))?;
    let root = tree.root_node();
    let mut r = Reader {
        language,
        src: text.as_bytes(),
        items: Vec::new(),
        imports: Vec::new(),
    };
    let top = named_children(root);
    for node in &top {
        r.top(*node);
        r.import(*node);
    }
    if matches!(
        language,
        Language::TypeScript | Language::Tsx | Language::JavaScript
    ) {
        r.mark_script_exports(&top);
    }
    Ok(Module {
        language,
        doc: r.module_doc(&top),
        items: r.items,
        imports: r.imports,
        parse_errors: count_errors(root),
    })
}

/// Most paths one Rust `use` tree gives.
const MAX_USE_PATHS: usize = 64;

/// The paths of a Rust `use` tree, braces expanded: `crate::{config, query::{self,
/// search}}` → `crate::config`, `crate::query`, `crate::query::search`; an alias (`as x`)
/// and a glob (`::*`) dropped.
fn rust_use_paths(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let join = |head: &str| match (prefix.is_empty(), head.is_empty()) {
        (true, _) => head.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}::{head}"),
    };
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        let path = path.trim_end_matches('*').trim_end_matches("::");
        let path = if path == "self" {
            String::new()
        } else {
            path.to_string()
        };
        if out.len() < MAX_USE_PATHS {
            out.push(join(&path));
        }
        return;
    };
    let head = join(tree[..open].trim().trim_end_matches("::"));
    let inner = tree[open + 1..]
        .trim_end()
        .strip_suffix('}')
        .unwrap_or(&tree[open + 1..]);
    let (mut depth, mut start) = (0usize, 0usize);
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        rust_use_paths(&head, part, out);
    }
}

/// The blocks of a Python compound statement: its own `block` children and those of
/// its `elif`/`else`/`except`/`finally` clauses.
fn python_blocks(node: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    for c in named_children(node) {
        match c.kind() {
            "block" => out.push(c),
            "elif_clause"
            | "else_clause"
            | "except_clause"
            | "finally_clause"
            | "except_group_clause" => out.extend(
                named_children(c)
                    .into_iter()
                    .filter(|b| b.kind() == "block"),
            ),
            _ => {}
        }
    }
    out
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn count_errors(root: Node<'_>) -> usize {
    let mut n = 0;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            n += 1;
            continue;
        }
        if node.has_error() {
            stack.extend(named_children(node));
        }
    }
    n
}

struct Reader<'s> {
    language: Language,
    src: &'s [u8],
    items: Vec<Item>,
    imports: Vec<Import>,
}

impl<'s> Reader<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        node.utf8_text(self.src).unwrap_or_default()
    }

    fn field_text(&self, node: Node<'_>, field: &str) -> Option<String> {
        node.child_by_field_name(field)
            .map(|n| self.text(n).to_string())
    }

    fn top(&mut self, node: Node<'_>) {
        match self.language {
            Language::Rust => self.rust(node, node),
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                self.script(node, node, false)
            }
            Language::Python => self.python(node, node, None, true),
            Language::Go => self.go(node),
        }
    }

    /// Adds an item declared by `decl`, documented by the comments above `anchor` (the
    /// node that starts the statement: an `export`, a decorator, the item itself).
    fn push(
        &mut self,
        anchor: Node<'_>,
        decl: Node<'_>,
        name: String,
        kind: ItemKind,
        exported: bool,
    ) {
        if name.is_empty() {
            return;
        }
        let (doc, doc_line) = match self.language {
            Language::Python => (self.docstring(decl), None),
            _ => self.doc_above(anchor),
        };
        let start_line = anchor.start_position().row as u32 + 1;
        let body = decl.child_by_field_name("body");
        let cut_at_body = !matches!(
            kind,
            ItemKind::Struct
                | ItemKind::Enum
                | ItemKind::Union
                | ItemKind::Const
                | ItemKind::Static
                | ItemKind::Variable
                | ItemKind::Type
        );
        let signature = match body.filter(|_| cut_at_body) {
            Some(b) => &self.src[anchor.start_byte()..b.start_byte()],
            None => &self.src[anchor.start_byte()..anchor.end_byte()],
        };
        self.items.push(Item {
            name,
            kind,
            exported,
            signature: signature_of(&String::from_utf8_lossy(signature)),
            doc,
            start_line,
            end_line: anchor.end_position().row as u32 + 1,
            doc_line: doc_line.unwrap_or(start_line),
            body: body.map(|b| self.words(b)).unwrap_or_default(),
        });
    }

    /// The doc comment above `node` and the first line of what belongs to the item
    /// above it: contiguous doc comments, attributes and decorators (`#[derive(…)]`,
    /// `@cache`) and directives directly above it, whether or not a doc comment is there,
    /// so an item's passage holds its attributes.
    fn doc_above(&self, node: Node<'_>) -> (String, Option<u32>) {
        let mut parts: Vec<String> = Vec::new();
        let mut first = None;
        let mut below = node.start_position().row;
        let mut at = node.prev_named_sibling();
        while let Some(prev) = at {
            let kind = prev.kind();
            let gap = below.saturating_sub(prev.end_position().row);
            if gap > 1 {
                break;
            }
            let attribute = kind == "attribute_item" || kind == "decorator";
            if !attribute && !kind.contains("comment") {
                break;
            }
            if attribute || is_directive(self.text(prev)) {
                below = prev.start_position().row;
                first = Some(prev.start_position().row as u32 + 1);
                at = prev.prev_named_sibling();
                continue;
            }
            let Some(text) = self.doc_comment_text(self.text(prev)) else {
                break;
            };
            parts.push(text);
            first = Some(prev.start_position().row as u32 + 1);
            below = prev.start_position().row;
            at = prev.prev_named_sibling();
        }
        parts.reverse();
        (parts.join("\n").trim().to_string(), first)
    }

    /// A comment's text when it is a doc comment in this language, markers stripped.
    fn doc_comment_text(&self, raw: &str) -> Option<String> {
        let raw = raw.trim_end();
        match self.language {
            Language::Rust => {
                if let Some(rest) = raw.strip_prefix("///") {
                    return (!rest.starts_with('/')).then(|| strip_one_space(rest).to_string());
                }
                raw.starts_with("/**").then(|| block_text(raw))
            }
            Language::Go | Language::TypeScript | Language::Tsx | Language::JavaScript => {
                if let Some(rest) = raw.strip_prefix("//") {
                    return Some(strip_one_space(rest).to_string());
                }
                raw.starts_with("/*").then(|| block_text(raw))
            }
            Language::Python => None,
        }
    }

    fn module_doc(&self, top: &[Node<'_>]) -> String {
        match self.language {
            Language::Rust => {
                let lines: Vec<String> = top
                    .iter()
                    .filter(|n| n.kind().contains("comment"))
                    .map(|n| self.text(*n))
                    .filter_map(|t| {
                        t.strip_prefix("//!")
                            .map(|r| strip_one_space(r.trim_end()).to_string())
                            .or_else(|| t.starts_with("/*!").then(|| block_text(t)))
                    })
                    .collect();
                lines.join("\n").trim().to_string()
            }
            // the first statement, after any comments (a shebang, a coding line)
            Language::Python => top
                .iter()
                .find(|n| n.kind() != "comment")
                .map(|n| self.string_statement(*n))
                .unwrap_or_default(),
            Language::Go => top
                .iter()
                .find(|n| n.kind() == "package_clause")
                .map(|p| self.doc_above(*p).0)
                .unwrap_or_default(),
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                // a leading block comment set apart (a blank line) from what follows, or
                // followed by an import (which a doc comment never documents)
                let Some(first) = top.iter().find(|n| n.kind() != "hash_bang_line") else {
                    return String::new();
                };
                let raw = self.text(*first);
                if first.kind() != "comment" || !raw.starts_with("/**") {
                    return String::new();
                }
                let next = first.next_named_sibling();
                let next_row = next.map(|n| n.start_position().row);
                let apart = next_row.is_none_or(|r| r > first.end_position().row + 1)
                    || next.is_some_and(|n| n.kind() == "import_statement");
                if apart || raw.contains("@file") || raw.contains("@module") {
                    block_text(raw)
                } else {
                    String::new()
                }
            }
        }
    }

    /// The text of a statement that is a lone string literal (a docstring); empty else.
    fn string_statement(&self, node: Node<'_>) -> String {
        if node.kind() != "expression_statement" {
            return String::new();
        }
        let Some(s) = node.named_child(0).filter(|s| s.kind() == "string") else {
            return String::new();
        };
        docstring_text(self.text(s))
    }

    /// A Python definition's docstring: the first statement of its body.
    fn docstring(&self, def: Node<'_>) -> String {
        def.child_by_field_name("body")
            .and_then(|b| b.named_child(0))
            .map(|first| self.string_statement(first))
            .unwrap_or_default()
    }

    /// Identifiers, comments and string literals under `node`, space-separated.
    fn words(&self, node: Node<'_>) -> String {
        let mut out = String::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if out.len() >= MAX_BODY_BYTES {
                break;
            }
            let kind = n.kind();
            let leaf = n.named_child_count() == 0;
            let keep = kind.contains("comment")
                || (leaf && (kind.contains("identifier") || kind.contains("string")))
                || kind == "string_content"
                || kind == "string_fragment";
            if keep {
                let t = self.text(n);
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(t);
                continue;
            }
            let mut children = named_children(n);
            children.reverse();
            stack.extend(children);
        }
        cut_at_char(&mut out, MAX_BODY_BYTES);
        out
    }

    fn add_import(&mut self, node: Node<'_>, target: &str, kind: ImportKind) {
        let target = target
            .trim()
            .trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_string();
        if !target.is_empty() {
            self.imports.push(Import {
                target,
                kind,
                line: node.start_position().row as u32 + 1,
            });
        }
    }

    /// The imports a top-level statement makes.
    fn import(&mut self, node: Node<'_>) {
        match (self.language, node.kind()) {
            (Language::Rust, "use_declaration") => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    // `a::{b, c::d}` → `a::b`, `a::c::d`; `a::b as c` → `a::b`
                    let mut paths = Vec::new();
                    rust_use_paths("", self.text(arg), &mut paths);
                    for path in paths {
                        self.add_import(node, &path, ImportKind::Path);
                    }
                }
            }
            (Language::Rust, "mod_item") if node.child_by_field_name("body").is_none() => {
                if let Some(name) = self.field_text(node, "name") {
                    self.add_import(node, &name, ImportKind::ChildModule);
                }
            }
            (Language::TypeScript | Language::Tsx | Language::JavaScript, kind) => {
                if kind == "import_statement" || kind == "export_statement" {
                    if let Some(src) = node.child_by_field_name("source") {
                        let t = self.text(src).to_string();
                        self.add_import(node, &t, ImportKind::Path);
                    }
                }
                if kind == "lexical_declaration"
                    || kind == "variable_declaration"
                    || kind == "expression_statement"
                {
                    for target in self.requires(node) {
                        self.add_import(node, &target, ImportKind::Path);
                    }
                }
            }
            (Language::Python, "import_statement") => {
                let mut cursor = node.walk();
                let names: Vec<String> = node
                    .children_by_field_name("name", &mut cursor)
                    .map(|n| match n.child_by_field_name("name") {
                        Some(inner) => self.text(inner).to_string(),
                        None => self.text(n).to_string(),
                    })
                    .collect();
                for n in names {
                    self.add_import(node, &n, ImportKind::Path);
                }
            }
            (Language::Python, "import_from_statement") => {
                if let Some(m) = node.child_by_field_name("module_name") {
                    let t = self.text(m).to_string();
                    self.add_import(node, &t, ImportKind::Path);
                }
            }
            (Language::Go, "import_declaration") => {
                let mut specs = Vec::new();
                for c in named_children(node) {
                    match c.kind() {
                        "import_spec" => specs.push(c),
                        "import_spec_list" => specs.extend(
                            named_children(c)
                                .into_iter()
                                .filter(|s| s.kind() == "import_spec"),
                        ),
                        _ => {}
                    }
                }
                for s in specs {
                    if let Some(p) = s.child_by_field_name("path") {
                        let t = self.text(p).to_string();
                        self.add_import(s, &t, ImportKind::Path);
                    }
                }
            }
            _ => {}
        }
    }

    /// Marks as exported the items a script exports by name after declaring them:
    /// `export { a, b as c }`, `export default Foo;`, CommonJS `module.exports = { a }`,
    /// `module.exports = Foo`, `module.exports.f = …` and `exports.f = …` (an item this
    /// file does not declare by that name is added as a function).
    fn mark_script_exports(&mut self, top: &[Node<'_>]) {
        let mut names: Vec<(String, Node<'_>)> = Vec::new();
        for node in top {
            match node.kind() {
                "export_statement" if node.child_by_field_name("declaration").is_none() => {
                    for c in named_children(*node) {
                        match c.kind() {
                            "export_clause" => {
                                for spec in named_children(c) {
                                    if let Some(n) = spec.child_by_field_name("name") {
                                        names.push((self.text(n).to_string(), *node));
                                    }
                                }
                            }
                            "identifier" => names.push((self.text(c).to_string(), *node)),
                            _ => {}
                        }
                    }
                }
                "expression_statement" => {
                    let Some(a) = node
                        .named_child(0)
                        .filter(|a| a.kind() == "assignment_expression")
                    else {
                        continue;
                    };
                    let left = a
                        .child_by_field_name("left")
                        .map(|l| self.text(l))
                        .unwrap_or("");
                    let right = a.child_by_field_name("right");
                    if left == "module.exports" {
                        for n in right.map(|r| self.exported_values(r)).unwrap_or_default() {
                            names.push((n, *node));
                        }
                    } else if let Some(prop) = left
                        .strip_prefix("module.exports.")
                        .or_else(|| left.strip_prefix("exports."))
                    {
                        names.push((prop.to_string(), *node));
                    }
                }
                _ => {}
            }
        }
        for (name, at) in names {
            let known = self
                .items
                .iter_mut()
                .filter(|i| i.name == name)
                .fold(false, |_, i| {
                    i.exported = true;
                    true
                });
            if !known && !name.is_empty() {
                let decl = at.named_child(0).unwrap_or(at);
                let value = decl.child_by_field_name("right").unwrap_or(decl);
                self.push(at, value, name, ItemKind::Function, true);
            }
        }
    }

    /// The local names an object or identifier on the right of `module.exports =` names.
    fn exported_values(&self, node: Node<'_>) -> Vec<String> {
        match node.kind() {
            "identifier" => vec![self.text(node).to_string()],
            "object" => named_children(node)
                .into_iter()
                .filter_map(|p| match p.kind() {
                    "shorthand_property_identifier" => Some(self.text(p).to_string()),
                    "pair" => p
                        .child_by_field_name("value")
                        .filter(|v| v.kind() == "identifier")
                        .map(|v| self.text(v).to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The string arguments of `require("…")` calls under `node`.
    fn requires(&self, node: Node<'_>) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "call_expression" {
                let callee = n.child_by_field_name("function").map(|f| self.text(f));
                let arg = n
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string");
                if let (Some("require"), Some(a)) = (callee, arg) {
                    out.push(self.text(a).to_string());
                    continue;
                }
            }
            stack.extend(named_children(n));
        }
        out.reverse();
        out
    }

    // ---- Rust ----------------------------------------------------------------------

    fn rust(&mut self, anchor: Node<'_>, node: Node<'_>) {
        let kind = match node.kind() {
            "function_item" => ItemKind::Function,
            "struct_item" => ItemKind::Struct,
            "enum_item" => ItemKind::Enum,
            "union_item" => ItemKind::Union,
            "trait_item" => ItemKind::Trait,
            "type_item" => ItemKind::Type,
            "const_item" => ItemKind::Const,
            "static_item" => ItemKind::Static,
            "mod_item" => ItemKind::Module,
            "macro_definition" => ItemKind::Macro,
            "impl_item" => return self.rust_impl(node),
            _ => return,
        };
        let name = self.field_text(node, "name").unwrap_or_default();
        let exported = rust_pub(self, node) || kind == ItemKind::Macro && self.exported_macro(node);
        self.push(anchor, node, name, kind, exported);
    }

    fn exported_macro(&self, node: Node<'_>) -> bool {
        let mut at = node.prev_named_sibling();
        while let Some(p) =
            at.filter(|p| p.kind() == "attribute_item" || p.kind().contains("comment"))
        {
            if self.text(p).contains("macro_export") {
                return true;
            }
            at = p.prev_named_sibling();
        }
        false
    }

    fn rust_impl(&mut self, node: Node<'_>) {
        let Some(ty) = self.field_text(node, "type") else {
            return;
        };
        let ty = ty.split('<').next().unwrap_or(&ty).trim().to_string();
        let of_trait = node.child_by_field_name("trait").is_some();
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        // the type's own visibility, when this file declares it (else only the method's)
        let type_exported = self
            .items
            .iter()
            .rev()
            .find(|i| i.name == ty && i.kind != ItemKind::Method && i.kind != ItemKind::Function)
            .is_none_or(|i| i.exported);
        for f in named_children(body) {
            if f.kind() != "function_item" {
                continue;
            }
            let name = self.field_text(f, "name").unwrap_or_default();
            let exported = type_exported && (of_trait || rust_pub(self, f));
            self.push(f, f, format!("{ty}::{name}"), ItemKind::Method, exported);
        }
    }

    // ---- TypeScript and JavaScript ----------------------------------------------------

    fn script(&mut self, anchor: Node<'_>, node: Node<'_>, exported: bool) {
        match node.kind() {
            "export_statement" => {
                if let Some(d) = node.child_by_field_name("declaration") {
                    return self.script(anchor, d, true);
                }
                // `export default function () {}`, `export default class {}`, an arrow:
                // anonymous ones are named `default`
                for c in named_children(node) {
                    let kind = match c.kind() {
                        "function_declaration"
                        | "function_expression"
                        | "generator_function"
                        | "arrow_function"
                        | "function" => ItemKind::Function,
                        "class_declaration" | "class" => ItemKind::Class,
                        _ => continue,
                    };
                    let before = self.items.len();
                    if c.kind() != "arrow_function" {
                        self.script(anchor, c, true);
                    }
                    if self.items.len() == before {
                        self.push(anchor, c, "default".into(), kind, true);
                    }
                    return;
                }
            }
            "ambient_declaration" => {
                for c in named_children(node) {
                    self.script(anchor, c, exported);
                }
            }
            // a namespace that is not exported parses as a statement
            "expression_statement" => {
                for c in named_children(node)
                    .into_iter()
                    .filter(|c| c.kind() == "internal_module")
                {
                    self.script(anchor, c, exported);
                }
            }
            "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "function_expression" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name, ItemKind::Function, exported);
            }
            "class_declaration" | "abstract_class_declaration" | "class" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name.clone(), ItemKind::Class, exported);
                if let Some(body) = node.child_by_field_name("body") {
                    self.script_methods(&name, body, exported);
                }
            }
            "interface_declaration" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name, ItemKind::Interface, exported);
            }
            "type_alias_declaration" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name, ItemKind::Type, exported);
            }
            "enum_declaration" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name, ItemKind::Enum, exported);
            }
            "internal_module" | "module" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                self.push(anchor, node, name.clone(), ItemKind::Module, exported);
                if let Some(body) = node.child_by_field_name("body") {
                    self.namespace_members(&name, body, exported);
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                let constant = self.text(node).trim_start().starts_with("const");
                for d in named_children(node)
                    .into_iter()
                    .filter(|d| d.kind() == "variable_declarator")
                {
                    let Some(name) = d
                        .child_by_field_name("name")
                        .filter(|n| n.kind() == "identifier")
                    else {
                        continue;
                    };
                    let value = d.child_by_field_name("value");
                    let function = value.is_some_and(|v| {
                        matches!(
                            v.kind(),
                            "arrow_function" | "function_expression" | "generator_function"
                        )
                    });
                    let kind = match (function, constant) {
                        (true, _) => ItemKind::Function,
                        (false, true) => ItemKind::Const,
                        (false, false) => ItemKind::Variable,
                    };
                    let name = self.text(name).to_string();
                    // the body of an arrow function is the value's
                    let decl = value.filter(|_| function).unwrap_or(d);
                    self.push_with_body(anchor, decl, name, kind, exported);
                }
            }
            _ => {}
        }
    }

    /// The declarations of a TypeScript namespace's body (`namespace Shapes { export
    /// function area() {} }`), named `Shapes.area`: exported when the member is and
    /// the namespace is. Nested namespaces nest their names.
    fn namespace_members(&mut self, namespace: &str, body: Node<'_>, exported: bool) {
        let first = self.items.len();
        for c in named_children(body) {
            self.script(c, c, false);
        }
        for item in &mut self.items[first..] {
            item.name = format!("{namespace}.{}", item.name);
            item.exported &= exported;
        }
    }

    /// [`Self::push`], the signature cut at `decl`'s body but spanning from `anchor`.
    fn push_with_body(
        &mut self,
        anchor: Node<'_>,
        decl: Node<'_>,
        name: String,
        kind: ItemKind,
        exported: bool,
    ) {
        self.push(anchor, decl, name, kind, exported);
        if let (Some(item), Some(body)) = (self.items.last_mut(), decl.child_by_field_name("body"))
        {
            if kind == ItemKind::Function {
                let sig = &self.src[anchor.start_byte()..body.start_byte()];
                item.signature = signature_of(&String::from_utf8_lossy(sig));
            }
        }
    }

    fn script_methods(&mut self, class: &str, body: Node<'_>, class_exported: bool) {
        for m in named_children(body) {
            if m.kind() != "method_definition"
                && m.kind() != "method_signature"
                && m.kind() != "abstract_method_signature"
            {
                continue;
            }
            let name = self.field_text(m, "name").unwrap_or_default();
            let private = name.starts_with('#')
                || named_children(m)
                    .iter()
                    .any(|c| c.kind() == "accessibility_modifier" && self.text(*c) != "public");
            self.push(
                m,
                m,
                format!("{class}.{name}"),
                ItemKind::Method,
                class_exported && !private,
            );
        }
    }

    // ---- Python ------------------------------------------------------------------------

    fn python(
        &mut self,
        anchor: Node<'_>,
        node: Node<'_>,
        class: Option<&str>,
        exported_scope: bool,
    ) {
        match node.kind() {
            "decorated_definition" => {
                if let Some(def) = node.child_by_field_name("definition") {
                    self.python(anchor, def, class, exported_scope);
                }
            }
            "function_definition" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                let public =
                    !name.starts_with('_') || (name.starts_with("__") && name.ends_with("__"));
                let (name, kind) = match class {
                    Some(c) => (format!("{c}.{name}"), ItemKind::Method),
                    None => (name, ItemKind::Function),
                };
                self.push(anchor, node, name, kind, exported_scope && public);
            }
            "class_definition" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                let exported = !name.starts_with('_');
                self.push(anchor, node, name.clone(), ItemKind::Class, exported);
                if let Some(body) = node.child_by_field_name("body") {
                    for c in named_children(body) {
                        self.python(c, c, Some(&name), exported);
                    }
                }
            }
            "expression_statement" if class.is_none() => {
                let Some(a) = node.named_child(0).filter(|a| a.kind() == "assignment") else {
                    return;
                };
                let Some(left) = a
                    .child_by_field_name("left")
                    .filter(|l| l.kind() == "identifier")
                else {
                    return;
                };
                let name = self.text(left).to_string();
                let constant = name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
                let kind = if constant {
                    ItemKind::Const
                } else {
                    ItemKind::Variable
                };
                let exported = !name.starts_with('_');
                self.push(anchor, node, name, kind, exported);
            }
            // definitions under a top-level `if`/`try`/`with` (a platform or version
            // switch) are the module's too
            "if_statement" | "try_statement" | "with_statement" => {
                for block in python_blocks(node) {
                    for c in named_children(block) {
                        self.python(c, c, class, exported_scope);
                    }
                }
            }
            _ => {}
        }
    }

    // ---- Go ------------------------------------------------------------------------------

    fn go(&mut self, node: Node<'_>) {
        let capital = |s: &str| s.chars().next().is_some_and(char::is_uppercase);
        match node.kind() {
            "function_declaration" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                let exported = capital(&name);
                self.push(node, node, name, ItemKind::Function, exported);
            }
            "method_declaration" => {
                let name = self.field_text(node, "name").unwrap_or_default();
                let recv = node
                    .child_by_field_name("receiver")
                    .map(|r| self.receiver_type(r))
                    .unwrap_or_default();
                let exported = capital(&name) && capital(&recv);
                self.push(
                    node,
                    node,
                    format!("{recv}.{name}"),
                    ItemKind::Method,
                    exported,
                );
            }
            "type_declaration" => {
                let specs = named_children(node);
                let single = specs.len() == 1;
                for s in specs
                    .into_iter()
                    .filter(|s| s.kind() == "type_spec" || s.kind() == "type_alias")
                {
                    let name = self.field_text(s, "name").unwrap_or_default();
                    let kind = match s.child_by_field_name("type").map(|t| t.kind()) {
                        Some("struct_type") => ItemKind::Struct,
                        Some("interface_type") => ItemKind::Interface,
                        _ => ItemKind::Type,
                    };
                    let exported = capital(&name);
                    // a lone spec is documented above `type`; a grouped one above itself
                    let anchor = if single { node } else { s };
                    self.push(anchor, s, name, kind, exported);
                }
            }
            "const_declaration" | "var_declaration" => {
                let kind = if node.kind() == "const_declaration" {
                    ItemKind::Const
                } else {
                    ItemKind::Variable
                };
                let specs: Vec<Node<'_>> = named_children(node)
                    .into_iter()
                    .flat_map(|c| {
                        if c.kind() == "var_spec_list" {
                            named_children(c)
                        } else {
                            vec![c]
                        }
                    })
                    .filter(|s| s.kind() == "const_spec" || s.kind() == "var_spec")
                    .collect();
                let single = specs.len() == 1;
                for s in specs {
                    let anchor = if single { node } else { s };
                    let mut cursor = s.walk();
                    let names: Vec<String> = s
                        .children_by_field_name("name", &mut cursor)
                        .filter(|n| n.kind() == "identifier")
                        .map(|n| self.text(n).to_string())
                        .collect();
                    for name in names {
                        let exported = capital(&name);
                        self.push(anchor, s, name, kind, exported);
                    }
                }
            }
            _ => {}
        }
    }

    /// The type name of a Go receiver (`(p *Parser)` → `Parser`).
    fn receiver_type(&self, params: Node<'_>) -> String {
        let Some(p) = named_children(params)
            .into_iter()
            .find(|p| p.kind() == "parameter_declaration")
        else {
            return String::new();
        };
        let Some(mut t) = p.child_by_field_name("type") else {
            return String::new();
        };
        while t.kind() == "pointer_type" || t.kind() == "generic_type" {
            match t.named_child(0) {
                Some(inner) => t = inner,
                None => break,
            }
        }
        self.text(t).to_string()
    }
}

fn rust_pub(r: &Reader<'_>, node: Node<'_>) -> bool {
    named_children(node)
        .iter()
        .any(|c| c.kind() == "visibility_modifier" && r.text(*c) == "pub")
}

/// A comment that instructs a tool rather than documents the item (`//go:generate`,
/// `//nolint`, `// eslint-disable-next-line`, `// @ts-ignore`, `// prettier-ignore`): not
/// part of a doc comment, and passed over.
fn is_directive(raw: &str) -> bool {
    let t = raw.trim_start_matches('/').trim_start();
    raw.starts_with("//go:")
        || raw.starts_with("//nolint")
        || raw.starts_with("//export ")
        || [
            "eslint-",
            "@ts-",
            "prettier-ignore",
            "istanbul ignore",
            "biome-ignore",
        ]
        .iter()
        .any(|p| t.starts_with(p))
}

fn strip_one_space(s: &str) -> &str {
    s.strip_prefix(' ').unwrap_or(s)
}

/// The text of a `/* … */` or `/** … */` comment: markers and leading ` * ` stripped.
fn block_text(raw: &str) -> String {
    let inner = raw
        .trim_start_matches("/*")
        .trim_start_matches(['*', '!'])
        .trim_end_matches("*/");
    inner
        .lines()
        .map(|l| {
            let t = l.trim_start();
            strip_one_space(t.strip_prefix('*').unwrap_or(t)).trim_end()
        })
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// A Python string literal's text: prefix and quotes stripped, lines dedented.
fn docstring_text(raw: &str) -> String {
    let s = raw.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let s = ["\"\"\"", "'''", "\"", "'"]
        .iter()
        .find_map(|q| s.strip_prefix(q).and_then(|r| r.strip_suffix(q)))
        .unwrap_or(s);
    s.lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// A declaration as one line: whitespace runs collapsed, at most
/// [`MAX_SIGNATURE_CHARS`] characters (cut with `…`).
fn signature_of(text: &str) -> String {
    let mut out = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((at, _)) = out.char_indices().nth(MAX_SIGNATURE_CHARS) {
        out.truncate(at);
        out.push('…');
    }
    out
}

fn cut_at_char(s: &mut String, max: usize) {
    if s.len() > max {
        let mut at = max;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
}
