//! Effective configuration: BM25F field weights, k1 and b, chunk budget, file byte budget,
//! prefix expansion, the result floor. Recorded in the manifest and hashed.
//!
//! Must not import anything but `error` and `hashing` (foundation layer).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Chunker settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ChunkerConfig {
    /// Token budget of one chunk; tokens are estimated as `ceil(bytes / 4)` of the chunk text.
    /// A section over budget is cut at blank lines outside fenced code; a fence over the
    /// budget stays whole. Default 256: about the 256 word pieces MiniLM reads, and the best
    /// hybrid nDCG@10 on the Rust-book dev set among 256, 512 and whole sections
    /// (`benches/QUALITY.md`).
    pub max_tokens: usize,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        ChunkerConfig { max_tokens: 256 }
    }
}

/// The projected fields that BM25F scores, in a fixed order (the index of [`Field::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    Title,
    Headings,
    Path,
    Symbols,
    Aliases,
    Summary,
    Body,
    /// What a source item's body says (identifiers, comments, string literals); empty
    /// for documents.
    Code,
}

/// How many fields BM25F scores ([`Field::ALL`]).
pub const FIELDS: usize = 8;

impl Field {
    /// All fields, in index order.
    pub const ALL: [Field; FIELDS] = [
        Field::Title,
        Field::Headings,
        Field::Path,
        Field::Symbols,
        Field::Aliases,
        Field::Summary,
        Field::Body,
        Field::Code,
    ];

    /// Stable lowercase name, as in JSON and `--explain`.
    pub fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Headings => "headings",
            Field::Path => "path",
            Field::Symbols => "symbols",
            Field::Aliases => "aliases",
            Field::Summary => "summary",
            Field::Body => "body",
            Field::Code => "code",
        }
    }

    /// Position in [`Field::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for a field only some chunks have (`code`: source items): its average
    /// length, BM25F's length norm, is taken over the chunks (or units) that have it,
    /// not over all, so a documentation corpus's empty fields do not make every
    /// item's body look long.
    pub fn is_sparse(self) -> bool {
        matches!(self, Field::Code)
    }

    /// True for the fields that say what a chunk is about (aboutness): title, headings, path.
    pub fn is_about(self) -> bool {
        matches!(self, Field::Title | Field::Headings | Field::Path)
    }
}

/// Per-field values, indexed by [`Field::index`].
pub type PerField<T> = [T; FIELDS];

/// BM25F parameters (Robertson & Zaragoza, 2009, "The Probabilistic Relevance Framework:
/// BM25 and Beyond", §3.5): one saturation `k1` over the weighted, per-field
/// length-normalised term frequencies; one length-normalisation strength `b` for all fields.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25fParams {
    /// Term-frequency saturation, > 0. Default 1.2.
    pub k1: f32,
    /// Length normalisation, in [0, 1]. Default 0.75.
    pub b: f32,
    /// Field weights in [`Field::ALL`] order. Default title 4, headings 3, path 2,
    /// symbols 3, aliases 2, summary 2, body 1, code 0.5. A list of seven (written
    /// before the `code` field existed) reads with code's default.
    #[serde(deserialize_with = "weights")]
    pub weights: PerField<f32>,
}

impl Default for Bm25fParams {
    fn default() -> Self {
        Bm25fParams {
            k1: 1.2,
            b: 0.75,
            weights: [4.0, 3.0, 2.0, 3.0, 2.0, 2.0, 1.0, CODE_WEIGHT],
        }
    }
}

/// Default weight of the `code` field: below the body's, since what a body says is
/// weaker evidence of what an item is for than its doc comment and signature.
pub const CODE_WEIGHT: f32 = 0.5;

/// Reads field weights: [`FIELDS`] numbers, or the seven of an index written before the
/// `code` field (code then weighs [`CODE_WEIGHT`]).
fn weights<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PerField<f32>, D::Error> {
    let v: Vec<f32> = Vec::deserialize(d)?;
    let mut w = Bm25fParams::default().weights;
    match v.len() {
        FIELDS => w.copy_from_slice(&v),
        7 => w[..7].copy_from_slice(&v),
        n => {
            return Err(serde::de::Error::custom(format!(
                "`weights` has {n} numbers; expected {FIELDS} (title, headings, path, symbols, aliases, summary, body, code)"
            )))
        }
    }
    Ok(w)
}

/// Query-side settings that do not change the index.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueryParams {
    /// Query terms of at least this many characters also match longer index terms by prefix.
    pub prefix_min_chars: usize,
    /// At most this many prefix expansions per query term (highest document frequency first).
    pub prefix_max_expansions: usize,
    /// Weight of a prefix-expanded term's frequency relative to the exact term (0..=1).
    pub prefix_weight: f32,
    /// Results scoring under `floor × best` are dropped (default 0: keep every result
    /// up to the limit; a floor is only applied when asked for).
    pub floor: f32,
    /// Aboutness gain: `aboutness = 1 + about_gain × share`. Default 0.2.
    pub about_gain: f32,
    /// Exact-match parts as multiples of the best lexical score among the candidates.
    pub exact_id_gain: f32,
    pub exact_path_gain: f32,
    pub exact_symbol_gain: f32,
    /// Weight of a stop word of the query (an English one written as a plain word outside
    /// quotes, never part of an identifier; a CJK function character such as `的`) in the
    /// lexical score: 1 counts it like any word, 0 drops
    /// it. A query of stop words only keeps them all at full weight.
    #[serde(default = "one")]
    pub stop_weight: f32,
    /// Stop words match the text fields only, never title, headings or path.
    #[serde(default)]
    pub stop_about: bool,
    /// Weight of a query term's other inflections (`widgets` ↔ `widget`, `libraries` ↔
    /// `library`) relative to the term itself (0 turns them off).
    #[serde(default)]
    pub stem_weight: f32,
    /// Weight of a plural query word's singular (`widgets` → `widget`, `differs` →
    /// `differ`) relative to the word itself, also when the collection uses the plural:
    /// a plural in a question matches the singular in the text, always, and the exact
    /// form scores higher. (A word the collection never uses gets all its inflections
    /// at full weight.)
    #[serde(default = "plural_weight")]
    pub plural_weight: f32,
    /// Canonicality gain: a chunk with lexical evidence gains `canon_gain × best ×
    /// canonicality` of its page (log-scaled PageRank in `[0, 1]`, `graph::pagerank`),
    /// where `best` is the best lexical score among the candidates. 0 turns it off.
    #[serde(default)]
    pub canon_gain: f32,
    /// Graph-proximity gain: a chunk whose page lies within two relations of one of the
    /// ten strongest lexical hits gains `prox_gain × best × proximity`
    /// (`graph::proximity`, in `[0, 1]`), where `best` is the best score of the mode; a
    /// page reached only through the graph is surfaced with that part alone. 0 turns it
    /// off (the part is still computed for `--explain`).
    #[serde(default)]
    pub prox_gain: f32,
    /// Favour documentation written for agents (`search --agent`): the lexical score of
    /// such a chunk is multiplied by `audience_fit`.
    #[serde(default)]
    pub agent: bool,
    /// The audience-fit multiplier for agent documentation under `agent` (≥ 1).
    #[serde(default = "audience_fit")]
    pub audience_fit: f32,
    /// Query-shape prior: a path-shaped query (`guide/install.md`) multiplies the lexical
    /// score of the chunks whose file it names by this (1: off; default 1.2).
    #[serde(default = "path_prior")]
    pub path_prior: f32,
    /// Query-shape prior: a symbol-shaped query (`Foo::bar`, `foo_bar()`) multiplies the
    /// lexical score of the chunks holding that symbol by this (1: off).
    #[serde(default = "one")]
    pub symbol_prior: f32,
    /// Query-shape prior for code: a symbol- or path-shaped query, or a question that
    /// asks for code (`where is … implemented`, `which module declares …`), multiplies
    /// the lexical score of module entries (source files, their items) and package
    /// entries by this (1: off). No effect on an index without sources.
    #[serde(default = "module_prior")]
    pub module_prior: f32,
    /// Routing prior: an ownership record or an intent or change route of a project
    /// file (`docfuse.toml`) is multiplied by this when the query asks who owns or
    /// maintains something, or when the record's title holds at least half the query's
    /// IDF mass (the seed's "a route whose title covers the query"). 1: off. No effect
    /// on an index without a project file.
    #[serde(default = "route_prior")]
    pub route_prior: f32,
    /// Lexical weight of calibrated fusion for a question that asks for code in an
    /// index with sources (the fusion's `alpha` when that is higher): MiniLM is trained
    /// on prose, and a code question's evidence is in names and paths, which the lexical
    /// side matches exactly. Default 0.75 (`benches/QUALITY.md`, maturin).
    #[serde(default = "code_alpha")]
    pub code_alpha: f32,
    /// Lexical share by information matched: hybrid fusion multiplies its lexical side
    /// by `coverage ^ info_share`, where `coverage` is the largest share of the query's
    /// IDF mass one of the lexical side's top candidates holds
    /// (`lexical::Scored::coverage`), so a lexical list that matched only `how do I`
    /// and a common word weighs less than one that matched the question's rare words.
    /// 0: off; default 0.5 (`benches/QUALITY.md`, round 4).
    #[serde(default = "info_share")]
    pub info_share: f32,
    /// Page-role prior: a chunk of a change log (`CHANGELOG.md`, `HISTORY.rst`,
    /// `release-notes/…`; `chunk::is_changelog`) or of a change-log section of another
    /// page (`## Release notes`, `# Stabilized and removed features`;
    /// `chunk::is_changelog_section`) is multiplied by this, on both sides
    /// of fusion, unless the question asks about changes (`changed`, `deprecated`,
    /// `v1.80`, …): its entries restate settings that reference pages define. 1: off.
    #[serde(default = "changelog_prior")]
    pub changelog_prior: f32,
    /// Page-role prior: a template copy (a chunk whose visible text is on three or more
    /// pages of distinct names, such as an option block every command page repeats;
    /// `generation::template_sections`) is multiplied by this, on both sides of fusion:
    /// each copy restates the others, and the section about the asked command should
    /// come first. 1: off.
    #[serde(default = "template_prior")]
    pub template_prior: f32,

    /// Section evidence: a chunk's lexical score is `(1 − w) × its own BM25F + w × the
    /// BM25F of its whole section` (all the section's pieces as one document: body and
    /// symbol frequencies and lengths summed, the summary of its first piece, title,
    /// headings, path and aliases as every piece has them; Callan, 1994). 0: off;
    /// default 0.75.
    #[serde(default = "section_weight")]
    pub section_weight: f32,
    /// Page evidence: the lexical score (after section evidence) becomes
    /// `(1 − w) × it + w × the BM25F of the chunk's whole page`, every chunk of its file
    /// as one document (body, symbol and heading frequencies and lengths summed;
    /// Callan, 1994). 0: off, the default (measured in `benches/QUALITY.md`).
    #[serde(default)]
    pub page_weight: f32,
    /// Score every posting of every query term in lexical mode instead of finding the
    /// top results with score bounds (`lexical::topk`): the same results, slower; for
    /// checking that claim (`docfuse eval --exhaustive`). Default false.
    #[serde(default)]
    pub exhaustive: bool,
}

fn audience_fit() -> f32 {
    1.5
}

/// Default [`QueryParams::plural_weight`]: small, so the singular makes a section a
/// match without outweighing the written form. Chosen on the three dev sets: 0.25–1
/// lowered the Rust book's hybrid MRR@10 by 0.006–0.017 (the singular of `macros`,
/// `functions`, `threads` is in every section of their chapter), 0.05 by 0.002, within
/// the lexical floors (`benches/QUALITY.md`, round 3).
fn plural_weight() -> f32 {
    0.05
}

/// Default [`QueryParams::info_share`]: chosen on the three dev sets and checked on
/// SciFact (0.25–0.75 all raise hybrid; 1 and 2 lower the Rust book).
fn info_share() -> f32 {
    0.5
}

/// Default [`QueryParams::changelog_prior`]: a change log's entry counts half. On the
/// Cargo book (the dev set with a change log; none of its questions is answered there)
/// 0.9–0.3 raise nDCG@10 of every mode and change no MRR@10 by more than +0.011
/// (`benches/QUALITY.md`, round 4).
fn changelog_prior() -> f32 {
    0.5
}

/// Default [`QueryParams::template_prior`]: a template copy counts half, as a change
/// log's entry does. On the Cargo book (507 copies in 30 command pages) 0.3–0.7 give the
/// same nDCG@10 and MRR@10 of hybrid, 0.9 most of the gain (`benches/QUALITY.md`,
/// round 7).
fn template_prior() -> f32 {
    0.5
}

fn section_weight() -> f32 {
    0.75
}

fn module_prior() -> f32 {
    1.5
}

fn code_alpha() -> f32 {
    0.75
}

fn route_prior() -> f32 {
    1.5
}

fn path_prior() -> f32 {
    1.2
}

impl Default for QueryParams {
    fn default() -> Self {
        QueryParams {
            prefix_min_chars: 4,
            prefix_max_expansions: 16,
            prefix_weight: 0.5,
            floor: 0.0,
            about_gain: 0.2,
            exact_id_gain: 1.0,
            exact_path_gain: 0.5,
            exact_symbol_gain: 0.5,
            stop_weight: 1.0,
            stop_about: false,
            stem_weight: 0.0,
            plural_weight: plural_weight(),
            canon_gain: 0.0,
            prox_gain: 0.0,
            agent: false,
            audience_fit: audience_fit(),
            path_prior: 1.2,
            symbol_prior: 1.0,
            module_prior: module_prior(),
            route_prior: route_prior(),
            code_alpha: code_alpha(),
            info_share: info_share(),
            changelog_prior: changelog_prior(),
            template_prior: template_prior(),

            section_weight: section_weight(),
            page_weight: 0.0,
            exhaustive: false,
        }
    }
}

/// How the walk treats hidden entries and ignore rules; recorded with the index (it
/// shapes which files are indexed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WalkOptions {
    /// Walk hidden files and folders (names starting with `.`), as `rg --hidden`.
    /// Version-control folders (`.git`, …) are skipped regardless.
    #[serde(default)]
    pub hidden: bool,
    /// Ignore `.gitignore` / `.ignore` rules and walk dependency and build-output
    /// folders too (`node_modules`, `target`, …), as `rg --no-ignore`.
    #[serde(default)]
    pub no_ignore: bool,
    /// Index source files (Rust, TypeScript/TSX, JavaScript/JSX, Python, Go) as module
    /// entries and package manifests (`package.json`, `Cargo.toml`, `pyproject.toml`,
    /// `go.mod`) as package entries, beside the documentation. Off by default.
    #[serde(default)]
    pub sources: bool,
}

fn one() -> f32 {
    1.0
}

/// Everything that shapes an index build. Hashed into the manifest's `config_hash`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IndexConfig {
    pub bm25f: Bm25fParams,
    pub chunker: ChunkerConfig,
    /// Files larger than this many bytes are read only up to it (cut at a line end), with a warning.
    pub max_file_bytes: u64,
    /// Collections with at least this many vectors also get an HNSW graph (default 50,000,
    /// where HNSW overtakes exact search; see `benches/vector.rs`).
    #[serde(default = "default_hnsw_min_vectors")]
    pub hnsw_min_vectors: usize,
    /// Which entries the walk of the roots includes.
    #[serde(default)]
    pub walk: WalkOptions,
}

fn default_hnsw_min_vectors() -> usize {
    50_000
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            bm25f: Bm25fParams::default(),
            chunker: ChunkerConfig::default(),
            max_file_bytes: 4 * 1024 * 1024,
            hnsw_min_vectors: default_hnsw_min_vectors(),
            walk: WalkOptions::default(),
        }
    }
}

impl IndexConfig {
    /// Checks every value's range.
    ///
    /// # Errors
    /// [`Error::Config`] naming the first value out of range.
    pub fn validate(&self) -> Result<()> {
        let p = &self.bm25f;
        if !(p.k1 > 0.0 && p.k1.is_finite()) {
            return Err(Error::Config(format!("k1 must be > 0, got {}", p.k1)));
        }
        if !(0.0..=1.0).contains(&p.b) {
            return Err(Error::Config(format!("b must be in [0, 1], got {}", p.b)));
        }
        if let Some(w) = p.weights.iter().find(|w| !(**w >= 0.0 && w.is_finite())) {
            return Err(Error::Config(format!(
                "field weights must be >= 0, got {w}"
            )));
        }
        if self.chunker.max_tokens < 16 {
            return Err(Error::Config(format!(
                "chunk budget must be >= 16 tokens, got {}",
                self.chunker.max_tokens
            )));
        }
        Ok(())
    }

    /// docfuse's defaults with `overrides` applied: a JSON object over this struct's
    /// shape (`{"bm25f": {"k1": 1.5}, "walk": {"hidden": true}}`); objects merge key by
    /// key, anything else replaces. `null` gives the defaults.
    ///
    /// # Errors
    /// [`Error::Config`] when the overrides do not fit the shape or a value is out of range.
    pub fn with_overrides(overrides: &serde_json::Value) -> Result<IndexConfig> {
        let mut base = serde_json::to_value(IndexConfig::default())
            .map_err(|e| Error::Config(e.to_string()))?;
        merge_json(&mut base, overrides);
        let c: IndexConfig = serde_json::from_value(base)
            .map_err(|e| Error::Config(format!("recorded settings do not fit: {e}")))?;
        c.validate()?;
        Ok(c)
    }

    /// sha256 over the JSON of this configuration.
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        crate::hashing::sha256_hex(&json)
    }
}

/// Whether the environment variable `var` turns a feature off: `off`, `0`, `false` or `no`
/// (any case, spaces around ignored). Unset, empty, `on`, `1`, `true` or `yes` leave it
/// on; anything else leaves it on too, with a warning naming the values understood (once
/// per variable and process).
pub fn env_switched_off(var: &str) -> bool {
    let Some(raw) = std::env::var_os(var) else {
        return false;
    };
    let v = raw.to_string_lossy().trim().to_ascii_lowercase();
    match switch_value(&v) {
        Some(on) => !on,
        None => {
            warn_once(var, &v);
            false
        }
    }
}

/// `Some(true)` for a value that turns a switch on (or is empty), `Some(false)` for one
/// that turns it off, `None` for anything else.
fn switch_value(v: &str) -> Option<bool> {
    match v {
        "" | "on" | "1" | "true" | "yes" => Some(true),
        "off" | "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

fn warn_once(var: &str, value: &str) {
    static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let Ok(mut warned) = WARNED.lock() else {
        return;
    };
    if !warned.iter().any(|w| w == var) {
        warned.push(var.to_string());
        tracing::warn!("{var}={value} is not understood (use `off`, `0`, `false` or `no` to turn it off; `on`, `1`, `true` or `yes` to keep it on): left on");
    }
}

/// Merges `over` into `base`: objects key by key, anything else replaces.
pub fn merge_json(base: &mut serde_json::Value, over: &serde_json::Value) {
    match (base, over) {
        (serde_json::Value::Object(b), serde_json::Value::Object(o)) => {
            for (k, v) in o {
                merge_json(b.entry(k.clone()).or_insert(serde_json::Value::Null), v);
            }
        }
        (_, serde_json::Value::Null) => {}
        (b, o) => *b = o.clone(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn switch_values_on_off_and_unknown() {
        for on in ["", "on", "1", "true", "yes"] {
            assert_eq!(switch_value(on), Some(true), "{on}");
        }
        for off in ["off", "0", "false", "no"] {
            assert_eq!(switch_value(off), Some(false), "{off}");
        }
        for unknown in ["disabled", "of", "2"] {
            assert_eq!(switch_value(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn overrides_apply_over_the_defaults() {
        let c = IndexConfig::with_overrides(
            &serde_json::json!({"bm25f": {"k1": 1.5}, "walk": {"hidden": true}}),
        )
        .unwrap();
        assert_eq!(c.bm25f.k1, 1.5);
        assert_eq!(c.bm25f.b, 0.75);
        assert!(c.walk.hidden && !c.walk.no_ignore);
        assert_eq!(
            IndexConfig::with_overrides(&serde_json::Value::Null).unwrap(),
            IndexConfig::default()
        );
        assert!(IndexConfig::with_overrides(&serde_json::json!({"bm25f": {"b": 3.0}})).is_err());
    }

    use super::*;

    #[test]
    fn default_weights_follow_the_documented_order() {
        let w = Bm25fParams::default().weights;
        assert_eq!(w[Field::Title.index()], 4.0);
        assert_eq!(w[Field::Headings.index()], 3.0);
        assert_eq!(w[Field::Symbols.index()], 3.0);
        assert_eq!(w[Field::Path.index()], 2.0);
        assert_eq!(w[Field::Aliases.index()], 2.0);
        assert_eq!(w[Field::Summary.index()], 2.0);
        assert_eq!(w[Field::Body.index()], 1.0);
        assert_eq!(w[Field::Code.index()], CODE_WEIGHT);
    }

    #[test]
    fn seven_weights_of_an_older_index_read_with_the_code_default() {
        let old: Bm25fParams =
            serde_json::from_str(r#"{"k1": 1.2, "b": 0.75, "weights": [5, 3, 2, 3, 2, 2, 1]}"#)
                .unwrap();
        assert_eq!(old.weights[0], 5.0);
        assert_eq!(old.weights[Field::Code.index()], CODE_WEIGHT);
        let bad = serde_json::from_str::<Bm25fParams>(r#"{"k1": 1, "b": 0.5, "weights": [1, 2]}"#);
        assert!(bad.unwrap_err().to_string().contains("expected 8"));
    }

    #[test]
    fn out_of_range_values_are_refused() {
        let mut c = IndexConfig::default();
        c.bm25f.b = 1.5;
        assert!(c.validate().unwrap_err().to_string().contains("b must be"));
        let mut c = IndexConfig::default();
        c.bm25f.k1 = 0.0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn hash_changes_with_any_weight() {
        let a = IndexConfig::default();
        let mut b = a;
        b.bm25f.weights[6] = 1.5;
        assert_ne!(a.hash(), b.hash());
        assert_eq!(a.hash(), IndexConfig::default().hash());
    }
}
