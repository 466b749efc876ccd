//! One validation for every interface. The request-level rules (query present and
//! short enough, limit range, floor range, filters, mode) live here, with their wording;
//! the CLI, the HTTP API, the MCP tools and the library all go through
//! [`validate_search`], and the two JSON front ends read their arguments with [`Args`],
//! so a wrong type names the parameter and the range it must be in.

use super::filter::{PathFilter, PathFilters};
use super::passage::PassageRequest;
use super::{Mode, RetrieveError, RetrieveOptions};
use serde_json::{Map, Value};

pub use crate::read::MAX_QUERY_BYTES;

/// Longest query accepted, in bytes (an error message or a log pasted whole). One longer
/// than [`MAX_QUERY_BYTES`] is searched on its most informative part
/// ([`crate::read::focus`]), with a note.
pub const MAX_PASTED_BYTES: usize = 32 * 1024;
/// Most results one search returns.
pub const MAX_LIMIT: usize = 100;
/// Longest path prefix or glob, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;

fn bad(message: String) -> RetrieveError {
    RetrieveError::InvalidRequest(message)
}

/// Checks a search: the query (not empty or blank, at most [`MAX_QUERY_BYTES`]; a query
/// of symbols only, `??` or `=>`, is matched as written), the limit
/// (1..=[`MAX_LIMIT`]), the floor ([0, 1]) and the filters (compiled).
///
/// # Errors
/// [`RetrieveError::InvalidRequest`] naming the parameter, what it must be and what it was.
pub fn validate_search(
    query: &str,
    options: &RetrieveOptions,
) -> Result<PathFilter, RetrieveError> {
    if crate::analysis::is_blank(query) {
        return Err(bad("`query` is empty: give a question or keywords".into()));
    }
    if query.len() > MAX_PASTED_BYTES {
        return Err(bad(format!(
            "`query` is {} bytes long; at most {MAX_PASTED_BYTES} bytes are accepted",
            query.len()
        )));
    }
    validate_options(options)
}

/// Checks a search's options (limit, floor, filters) without its query.
///
/// # Errors
/// As [`validate_search`].
pub fn validate_options(options: &RetrieveOptions) -> Result<PathFilter, RetrieveError> {
    check_limit(options.limit)?;
    if let Some(f) = options.floor {
        check_floor(f as f64)?;
    }
    let f = &options.filters;
    for p in f
        .path_prefix
        .iter()
        .chain(&f.globs)
        .chain(&f.exclude)
        .chain(&f.kinds)
    {
        if p.len() > MAX_PATTERN_BYTES {
            return Err(bad(format!(
                "a path filter is {} bytes long; at most {MAX_PATTERN_BYTES} bytes are accepted",
                p.len()
            )));
        }
    }
    PathFilter::compile(f)
}

fn check_limit(limit: usize) -> Result<(), RetrieveError> {
    if (1..=MAX_LIMIT).contains(&limit) {
        Ok(())
    } else {
        Err(bad(format!(
            "`limit` must be an integer in 1..={MAX_LIMIT}, got {limit}"
        )))
    }
}

fn check_floor(f: f64) -> Result<(), RetrieveError> {
    if (0.0..=1.0).contains(&f) {
        Ok(())
    } else {
        Err(bad(format!("`floor` must be a number in [0, 1], got {f}")))
    }
}

/// The arguments of a JSON request (an HTTP body, an MCP tool call), read one by one
/// with the parameter named in every error. Integers may be written as `3` or `3.0`;
/// strings are never converted to numbers.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
    /// Name of the thing being read, for messages (`the request`, `search_docs`).
    what: &'static str,
}

impl<'a> Args<'a> {
    /// Reads `value` as an object whose keys are all in `known`.
    ///
    /// # Errors
    /// When `value` is not an object or has a key outside `known`.
    pub fn new(
        value: &'a Value,
        known: &[&str],
        what: &'static str,
    ) -> Result<Self, RetrieveError> {
        let Some(map) = value.as_object() else {
            return Err(bad(format!(
                "{what} must be a JSON object, got {}",
                kind(value)
            )));
        };
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(bad(format!(
                "unknown field `{k}` in {what}; fields: {}",
                known.join(", ")
            )));
        }
        Ok(Args { map, what })
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    /// A string argument.
    ///
    /// # Errors
    /// When present and not a string.
    pub fn string(&self, name: &str) -> Result<Option<String>, RetrieveError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(bad(format!("`{name}` must be a string, got {}", kind(v)))),
        }
    }

    /// A required string argument.
    ///
    /// # Errors
    /// When missing or not a string.
    pub fn required_string(&self, name: &str) -> Result<String, RetrieveError> {
        self.string(name)?
            .ok_or_else(|| bad(format!("`{name}` is required in {}", self.what)))
    }

    /// An integer in `range` (`3` or `3.0`).
    ///
    /// # Errors
    /// When present and not an integer in the range.
    pub fn integer(
        &self,
        name: &str,
        range: std::ops::RangeInclusive<u64>,
    ) -> Result<Option<u64>, RetrieveError> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let n = match v {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }),
            _ => None,
        };
        let shown = match v {
            Value::String(s) => format!("{s:?} (a string)"),
            other => other.to_string(),
        };
        match n {
            Some(n) if range.contains(&n) => Ok(Some(n)),
            _ => Err(bad(format!(
                "`{name}` must be an integer in {}..={}, got {shown}",
                range.start(),
                range.end()
            ))),
        }
    }

    /// A number.
    ///
    /// # Errors
    /// When present and not a number.
    pub fn number(&self, name: &str) -> Result<Option<f64>, RetrieveError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(v) => Err(bad(format!("`{name}` must be a number, got {}", kind(v)))),
        }
    }

    /// A boolean.
    ///
    /// # Errors
    /// When present and not a boolean.
    pub fn boolean(&self, name: &str) -> Result<Option<bool>, RetrieveError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(bad(format!(
                "`{name}` must be true or false, got {}",
                kind(v)
            ))),
        }
    }

    /// A list of strings (a single string is taken as a list of one).
    ///
    /// # Errors
    /// When present and not strings.
    pub fn strings(&self, name: &str) -> Result<Vec<String>, RetrieveError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(bad(format!(
                        "`{name}` must be a list of strings, got an item that is {}",
                        kind(other)
                    ))),
                })
                .collect(),
            Some(v) => Err(bad(format!(
                "`{name}` must be a list of strings, got {}",
                kind(v)
            ))),
        }
    }

    /// A search mode.
    ///
    /// # Errors
    /// When present and not one of `auto`, `lexical`, `vector`, `hybrid`.
    pub fn mode(&self, name: &str) -> Result<Option<Mode>, RetrieveError> {
        match self.string(name)? {
            None => Ok(None),
            Some(s) => s.parse::<Mode>().map(Some).map_err(bad),
        }
    }

    /// A nested object of arguments.
    ///
    /// # Errors
    /// As [`Args::new`].
    pub fn object(&self, name: &str, known: &[&str]) -> Result<Option<Args<'a>>, RetrieveError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => Args::new(v, known, "`filters`").map(Some),
        }
    }
}

/// What a JSON value is, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A search read from JSON arguments, before [`validate_search`].
#[derive(Debug, Clone, PartialEq)]
pub struct SearchArgs {
    pub query: String,
    pub options: RetrieveOptions,
    /// Add each result's passage text (`content`).
    pub include_content: bool,
}

/// Reads a search from JSON: `query` (required), `limit` (default `default_limit`),
/// `mode`, `floor`, `explain`, `include_content`, and the path filters either flat
/// (`path_prefix`, `globs`, `exclude`, `kinds`: the MCP tools) or under `filters` (HTTP).
///
/// # Errors
/// [`RetrieveError::InvalidRequest`] naming the first bad argument.
pub fn search_args(
    value: &Value,
    known: &[&str],
    what: &'static str,
    default_limit: usize,
) -> Result<SearchArgs, RetrieveError> {
    let a = Args::new(value, known, what)?;
    let query = a.required_string("query")?;
    let limit = a
        .integer("limit", 1..=MAX_LIMIT as u64)?
        .map_or(default_limit, |n| n as usize);
    let floor = a.number("floor")?;
    if let Some(f) = floor {
        check_floor(f)?;
    }
    let filters = match a.object("filters", &["path_prefix", "globs", "exclude", "kinds"])? {
        Some(f) => path_filters(&f)?,
        None => path_filters(&a)?,
    };
    let options = RetrieveOptions {
        limit,
        mode: a.mode("mode")?.unwrap_or(Mode::Auto),
        filters,
        floor: floor.map(|f| f as f32),
        explain: a.boolean("explain")?.unwrap_or(false),
        group: a.boolean("group")?.unwrap_or(true),
        agent: a.boolean("agent")?.unwrap_or(false),
    };
    validate_search(&query, &options)?;
    Ok(SearchArgs {
        query,
        options,
        include_content: a.boolean("include_content")?.unwrap_or(false),
    })
}

fn path_filters(a: &Args) -> Result<PathFilters, RetrieveError> {
    Ok(PathFilters {
        path_prefix: a.string("path_prefix")?,
        globs: a.strings("globs")?,
        exclude: a.strings("exclude")?,
        kinds: a.strings("kinds")?,
    })
}

/// Reads a passage request from JSON: `id`, or `path` with `start_line`, `end_line`,
/// `root`.
///
/// # Errors
/// [`RetrieveError::InvalidRequest`] naming the first bad argument.
pub fn passage_args(value: &Value, what: &'static str) -> Result<PassageRequest, RetrieveError> {
    let a = Args::new(
        value,
        &["id", "path", "root", "start_line", "end_line"],
        what,
    )?;
    let line = |name| {
        a.integer(name, 1..=u32::MAX as u64)
            .map(|n| n.map(|n| n as u32))
    };
    Ok(PassageRequest {
        id: a.string("id")?,
        path: a.string("path")?,
        root: a.integer("root", 0..=u32::MAX as u64)?.map(|n| n as usize),
        start_line: line("start_line")?,
        end_line: line("end_line")?,
    })
}

/// A [`super::DocumentRequest`] from `value` (a JSON object: `path`, optional `root` and
/// `from`), for `GET /v1/document` and MCP; `what` names it in errors.
///
/// # Errors
/// [`RetrieveError::InvalidRequest`] for an unknown field, a missing `path` or a value of
/// the wrong type or range.
pub fn document_args(
    value: &Value,
    what: &'static str,
) -> Result<super::DocumentRequest, RetrieveError> {
    let a = Args::new(value, &["path", "root", "from"], what)?;
    let path = a.string("path")?.ok_or_else(|| {
        RetrieveError::InvalidRequest(format!(
            "missing `path` in {what}: a file path relative to an indexed root, as in search results"
        ))
    })?;
    Ok(super::DocumentRequest {
        path,
        root: a.integer("root", 0..=u32::MAX as u64)?.map(|n| n as usize),
        from: a.integer("from", 0..=u32::MAX as u64)?.unwrap_or(0) as usize,
    })
}

/// The options' own check, beside the rules it applies.
impl RetrieveOptions {
    /// Checks the limit (1..=[`MAX_LIMIT`]) and floor ([0, 1]) and compiles the filters
    /// (the query is checked by [`validate_search`], which calls this).
    ///
    /// # Errors
    /// [`RetrieveError::InvalidRequest`] naming the parameter out of range or the bad glob.
    pub fn validate(&self) -> Result<PathFilter, RetrieveError> {
        validate_options(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MCP: &[&str] = &[
        "query",
        "limit",
        "mode",
        "path_prefix",
        "globs",
        "exclude",
        "floor",
    ];

    fn err(v: Value) -> String {
        search_args(&v, MCP, "search_docs", 5)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn arguments_as_real_clients_send_them() {
        let a = search_args(&json!({"query": "x", "limit": 3.0}), MCP, "search_docs", 5).unwrap();
        assert_eq!(a.options.limit, 3);
        assert_eq!(
            err(json!({"query": "x", "limit": "3"})),
            "`limit` must be an integer in 1..=100, got \"3\" (a string)"
        );
        assert_eq!(
            err(json!({"query": "x", "limit": 2.5})),
            "`limit` must be an integer in 1..=100, got 2.5"
        );
        assert_eq!(
            err(json!({"query": "x", "limit": 0})),
            "`limit` must be an integer in 1..=100, got 0"
        );
        assert_eq!(
            err(json!({"query": 42})),
            "`query` must be a string, got a number"
        );
        assert_eq!(
            err(json!({"limit": 3})),
            "`query` is required in search_docs"
        );
        assert_eq!(
            err(json!({"query": "  "})),
            "`query` is empty: give a question or keywords"
        );
        assert!(err(json!({"query": "x", "mode": "fast"})).contains("`mode` must be one of"));
        assert!(err(json!({"query": "x", "nope": 1})).starts_with("unknown field `nope`"));
        assert_eq!(
            err(json!({"query": "x", "floor": 2})),
            "`floor` must be a number in [0, 1], got 2"
        );
        assert!(
            err(json!({"query": "x", "globs": [1]})).contains("`globs` must be a list of strings")
        );
        assert!(err(json!({"query": "x".repeat(40_000)})).contains("at most 32768 bytes"));
        assert!(validate_search(&"x ".repeat(3000), &RetrieveOptions::default()).is_ok());
        // symbols are searched as written
        for words in [
            "C++",
            "東京",
            "42",
            "what is it",
            "--gc",
            "???!!!",
            "🚀",
            "{{< >}}",
        ] {
            assert!(
                validate_search(words, &RetrieveOptions::default()).is_ok(),
                "{words}"
            );
        }
        assert!(err(json!("x")).contains("must be a JSON object"));
    }

    #[test]
    fn passage_arguments_name_the_parameter() {
        let p = passage_args(
            &json!({"path": "a.md", "start_line": 2.0, "end_line": 9}),
            "read_passage",
        )
        .unwrap();
        assert_eq!((p.start_line, p.end_line), (Some(2), Some(9)));
        let e =
            passage_args(&json!({"path": "a.md", "start_line": 0}), "read_passage").unwrap_err();
        assert!(
            e.to_string()
                .contains("`start_line` must be an integer in 1..="),
            "{e}"
        );
        let e = passage_args(&json!({"id": 5}), "read_passage").unwrap_err();
        assert_eq!(e.to_string(), "`id` must be a string, got a number");
    }
}
