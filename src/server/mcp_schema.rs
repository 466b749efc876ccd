//! The input schemas the MCP tools publish: plain JSON Schema (draft 2020-12) that
//! strict validators accept — one `type` per property, ranges with `minimum`/`maximum`,
//! enums inlined, no custom `format`, no `$ref`, no `$schema`, a description on every
//! property, no extra properties. Written by hand (not derived) so that what clients see
//! is exactly what the argument parser ([`crate::retriever::search_args`]) enforces.

use crate::retriever::{MAX_LIMIT, MAX_PASTED_BYTES};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The fields `search_docs` accepts.
pub const SEARCH_FIELDS: &[&str] = &[
    "query",
    "limit",
    "mode",
    "path_prefix",
    "globs",
    "exclude",
    "kinds",
    "floor",
    "group",
    "agent",
];

/// Default `limit` of `search_docs`.
pub const SEARCH_DEFAULT_LIMIT: usize = 5;

fn object(v: Value) -> Arc<Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(Map::new()),
    }
}

/// Input schema of `search_docs`.
pub fn search_docs() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_PASTED_BYTES,
                "description": "The question or keywords, e.g. \"how do I publish a crate\" or \"HashMap entry\"."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": SEARCH_DEFAULT_LIMIT,
                "description": format!("Most passages to return, 1 to {MAX_LIMIT} (default {SEARCH_DEFAULT_LIMIT}).")
            },
            "mode": {
                "type": "string",
                "enum": ["auto", "lexical", "vector", "hybrid"],
                "default": "auto",
                "description": "auto (hybrid when the index has usable vectors, else lexical), lexical (BM25F word matching), vector (semantic similarity) or hybrid (both fused)."
            },
            "path_prefix": {
                "type": "string",
                "description": "Only passages whose path (relative to the indexed root) starts with this, e.g. \"guide/\"."
            },
            "globs": {
                "type": "array",
                "items": {"type": "string", "description": "A glob over the root-relative path, e.g. \"commands/*.md\"."},
                "maxItems": 64,
                "description": "Only passages whose path matches one of these globs (`*` stays within a folder, `**` crosses folders)."
            },
            "exclude": {
                "type": "array",
                "items": {"type": "string", "description": "A glob over the root-relative path."},
                "maxItems": 64,
                "description": "Leave out passages whose path matches one of these globs."
            },
            "kinds": {
                "type": "array",
                "items": {"type": "string", "enum": ["document", "module", "area", "package", "intent", "change"], "description": "An entry kind."},
                "maxItems": 6,
                "description": "Only entries of these kinds: document (documentation passages), module (a source file's entry and its items: functions, types, methods; indexed with `index --sources`), area (a folder that holds modules: the module hits of each folder as one result, its best passage cited), package (a package manifest: name, description, checks; or a docfuse.toml ownership record: the unit's id, path, agent document, checks), intent and change (a docfuse.toml route: a question or change of this title concerns these paths)."
            },
            "floor": {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "Drop passages scoring under this share of the best score (default 0: keep every result up to the limit)."
            },
            "agent": {
                "type": "boolean",
                "default": false,
                "description": "Favour documentation written for agents (AGENTS.md, CLAUDE.md, front matter audience: agent) among the passages that match."
            },
            "group": {
                "type": "boolean",
                "default": true,
                "description": "One result per section, its best-matching chunk standing for it (default); false returns raw chunks, several of one section possibly."
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }))
}

/// Input schema of `read_passage`.
pub fn read_passage() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {
            "id": {
                "type": "string",
                "description": "A result id from search_docs, e.g. \"guide/install.md#install/from-source\": reads that section (override the lines with start_line/end_line)."
            },
            "path": {
                "type": "string",
                "description": "A file path relative to the indexed root, as shown in search results, e.g. \"guide/install.md\". Paths outside the indexed roots are refused."
            },
            "start_line": {
                "type": "integer",
                "minimum": 1,
                "description": "First line to read, 1-based (default: the section's first line, or 1). To continue a cut answer, pass its next_start_line."
            },
            "end_line": {
                "type": "integer",
                "minimum": 1,
                "description": "Last line to read, inclusive (default: the section's last line with an id, else the end of the file; a line past the end is clamped). Long ranges come in pages."
            },
            "root": {
                "type": "integer",
                "minimum": 0,
                "description": "Root number (the `root` of a search result); required when several indexed roots hold the same path."
            }
        },
        "additionalProperties": false
    }))
}

/// Input schema of `read_document`.
pub fn read_document() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "minLength": 1,
                "description": "A file path relative to the indexed root, as shown in search results, e.g. \"guide/install.md\". Paths outside the indexed roots are refused."
            },
            "root": {
                "type": "integer",
                "minimum": 0,
                "description": "Root number (the `root` of a search result); required when several indexed roots hold the same path."
            },
            "from": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Position of the first section to return, 0-based: the previous answer's next_from."
            }
        },
        "required": ["path"],
        "additionalProperties": false
    }))
}

/// Input schema of `handoff`.
pub fn handoff() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {
            "target": {
                "type": "string",
                "minLength": 1,
                "description": "What you are about to work on: a document path relative to the indexed root (\"guide/install.md\"), a folder (\"guide/\"), a section id from search_docs, or a document's title or alias."
            },
            "caveats": {
                "type": "boolean",
                "default": false,
                "description": "Also list what may make the answer incomplete: a stale index, chunks waiting for vectors, skipped files, no agent document."
            }
        },
        "required": ["target"],
        "additionalProperties": false
    }))
}

/// Input schema of `index_status` (no arguments).
pub fn no_arguments() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {},
        "additionalProperties": false
    }))
}
