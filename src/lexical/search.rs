//! BM25F query execution: analyse, expand prefixes, read postings per field, score with
//! named parts, rank with a stable tie-break, cut at the floor.

use super::accs::{Acc, Accs};
use super::bm25f::{field_tf, idf, pseudo_tf, saturate};
use super::explain::{Explain, FieldExplain, TermExplain};
use super::reader::LexicalIndex;
use crate::analysis::query_terms;
use crate::config::{Field as DocField, PerField, QueryParams};
use crate::error::Result;
use crate::projection::{name_key, symbol_key, StoredChunk};
use std::collections::BTreeMap;
use tantivy::postings::Postings;
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocSet, Searcher, Term, TERMINATED};

/// At most this many query terms are used (the rest of a very long query is ignored).
const MAX_QUERY_TERMS: usize = 64;
/// At most this many dictionary keys are scanned per field when expanding one prefix.
const MAX_PREFIX_SCAN: usize = 4096;

/// A lexical query.
#[derive(Debug, Clone)]
pub struct LexicalQuery<'a> {
    pub text: &'a str,
    /// Results wanted after the floor.
    pub limit: usize,
    pub params: QueryParams,
    /// Attach an [`Explain`] to each hit (never changes the ranking).
    pub explain: bool,
}

/// One ranked chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub score: f32,
    /// Insertion ordinal: order of (root, path, line); the tie-break key.
    pub ord: u64,
    pub chunk: StoredChunk,
    /// Query terms that matched this chunk lexically; stop words count only in a query of
    /// stop words alone (a chunk that shares only `what is the` with the question is not a
    /// lexical match).
    pub matched_terms: Vec<String>,
    pub explain: Option<Explain>,
}

/// A query term with the index terms it matches: itself (weight 1) and prefix expansions.
#[derive(Clone)]
pub(super) struct QTerm {
    pub(super) text: String,
    pub(super) variants: Vec<(String, f32)>,
    /// Weight of the whole term in the score (below 1 for a stop word).
    pub(super) weight: f32,
    /// A stop word: it counts in the text fields only, never in title, headings or
    /// path (so `how do I…` is not won by every heading starting with "How to").
    pub(super) stop: bool,
    /// Says what the query is about: not a stop word written as a plain word (every
    /// term is, in a query of stop words only). Only such terms make a chunk a match for
    /// [`Hit::matched_terms`] and [`LexicalRun::missing_words`].
    content: bool,
    /// How many of `variants` are the word itself and its inflections (`widget` for
    /// `widgets`); the rest are longer words it begins (`capitalize` for `capital`),
    /// which score but do not make the word found ([`LexicalRun::missing_words`]) nor a
    /// chunk a match of it ([`Hit::matched_terms`]).
    pub(super) whole_variants: usize,
    /// The prefix expansions that are inflections of the word (`turned`, `turns` for
    /// `turn`; [`crate::analysis::is_inflected_form`]): they score as prefix expansions
    /// but make the word found, as the inflections before them do.
    pub(super) inflected: Vec<usize>,
    /// The inflections (`variants[1..whole_variants]`) are added to a word the
    /// collection uses (a plural's singular at `plural_weight`): they score, but the
    /// term's document frequency is that of its other variants, so its IDF stays that of
    /// the form the query wrote.
    pub(super) extra_inflections: bool,
}

impl QTerm {
    /// Whether a matched posting is of the word itself or an inflection of it.
    pub(super) fn whole(&self, m: &super::accs::Matched) -> bool {
        let v = m.variant as usize;
        v < self.whole_variants || self.inflected.contains(&v)
    }

    /// Whether variant `v` is an inflection added to a word the collection uses.
    fn added_inflection(&self, v: usize) -> bool {
        super::dfs::added_inflection(self.extra_inflections, self.whole_variants, v)
    }

    /// What a posting of variant `v` with term frequency `tf` adds to its candidate's
    /// frequency: `tf ×` the variant's weight; an added singular counts once per field
    /// (a page that says `macro` thirty times is no more about `macros` than one that
    /// says it once).
    pub(super) fn weighted_tf(&self, v: usize, tf: u32) -> f32 {
        let once = self.added_inflection(v);
        let tf = if once { 1 } else { tf };
        self.variants.get(v).map_or(0.0, |(_, w)| w * tf as f32)
    }
}

/// The runs of CJK characters in `query` as the analyser cuts them (folded: half-width
/// kana made full-width; `・` and other marks between them cut a run), each with its
/// analysed terms (bigrams).
fn cjk_runs(query: &str) -> Vec<(String, Vec<String>)> {
    let mut runs: Vec<String> = Vec::new();
    let mut last_cjk = false;
    for c in crate::analysis::fold(query).chars() {
        let cjk = crate::analysis::is_cjk(c) && c.is_alphanumeric();
        match (cjk, last_cjk, runs.last_mut()) {
            (true, true, Some(run)) => run.push(c),
            (true, _, _) => runs.push(c.to_string()),
            _ => {}
        }
        last_cjk = cjk;
    }
    runs.into_iter()
        .map(|r| {
            let terms = query_terms(&r);
            (r, terms)
        })
        .collect()
}

/// The query term that `qterms[q]` is a part of (`intro_ver` for `ver`), if any.
fn compound_of(qterms: &[QTerm], q: usize) -> Option<usize> {
    let part = qterms[q].text.as_str();
    qterms.iter().position(|t| {
        t.text != part
            && t.text
                .split(|c: char| !c.is_alphanumeric())
                .any(|p| p == part)
    })
}

/// The full outcome of one lexical query: every matching chunk scored and ranked (no
/// floor, no limit). Front ends cut it; fusion reads all of it.
pub struct LexicalRun {
    searcher: Searcher,
    /// The query as written.
    query: String,
    qterms: Vec<QTerm>,
    accs: Accs,
    ranked: Vec<Ranked>,
    /// (chunk ordinal, position in `ranked`), sorted (for [`LexicalIndex::hit_for`]).
    rank_of: Vec<(u64, usize)>,
    /// The analysed terms of the query's identifier-like tokens when a chunk's id or
    /// symbol matched the query exactly (`saveExact` naming `--save-exact`): found, though
    /// no chunk holds the term as written.
    named_terms: Vec<String>,
    /// The chunks whose id or symbol matched the query exactly (ordinals).
    named_ords: Vec<u64>,
    /// `[candidates × query terms]`: the candidate holds the term itself or an
    /// inflection of it (not only longer words the term begins), from one pass over the
    /// matched postings.
    whole: Vec<bool>,
    /// What the whole index holds of each query term (a pruned run's candidates are
    /// not every chunk that holds one).
    found: Found,
    /// The query asks for code (a symbol or path, or words such as `implemented`):
    /// module entries take `QueryParams::module_prior`.
    asks_for_code: bool,
    /// The query asks who owns or maintains something ([`OWNER_WORDS`]): ownership
    /// records and routes take `QueryParams::route_prior`.
    asks_for_owner: bool,
    /// The query asks about changes (`roles::asks_for_changes`): change logs do not take
    /// `QueryParams::changelog_prior`.
    asks_for_changes: bool,
}

impl LexicalRun {
    /// The score of the `k`-th ranked chunk (`None` when fewer are ranked).
    pub(super) fn kth_score(&self, k: usize) -> Option<f32> {
        k.checked_sub(1)
            .and_then(|i| self.ranked.get(i))
            .map(|r| r.parts.score)
    }

    /// The highest base score (`lexical × priors × aboutness × audience`) ranked: what
    /// the exact parts are multiples of.
    pub(super) fn best_base(&self) -> f32 {
        self.ranked
            .iter()
            .map(|r| r.parts.base())
            .fold(0.0f32, f32::max)
    }

    /// Whether candidate `acc` holds query term `q` itself or an inflection of it.
    fn holds_whole(&self, acc: usize, q: usize) -> bool {
        self.whole
            .get(acc * self.qterms.len() + q)
            .copied()
            .unwrap_or(false)
    }
}

/// Each query term's document frequency among `accs` when they are every chunk that
/// holds a term (an exhaustive run): the chunks holding any of its variants in a field
/// it is searched in; for a term whose inflections were added to it
/// ([`QTerm::extra_inflections`]), those holding the word itself or a longer word it
/// begins, so its IDF stays that of the form the query wrote.
fn df_of_candidates(qterms: &[QTerm], accs: &Accs) -> Vec<u64> {
    let mut df = vec![0u64; qterms.len()];
    for i in 0..accs.len() {
        for (q, tf) in accs.tf(i).iter().enumerate() {
            if !qterms[q].extra_inflections && tf.iter().any(|t| *t > 0.0) {
                df[q] += 1;
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for m in accs.matched() {
        let qt = &qterms[m.q as usize];
        let v = m.variant as usize;
        if qt.extra_inflections && !qt.added_inflection(v) && seen.insert((m.acc, m.q)) {
            df[m.q as usize] += 1;
        }
    }
    df
}

/// What the index holds of each query term, by term: a chunk with any of its variants
/// (`any`), a chunk with the word itself or an inflection of it (`whole`).
#[derive(Debug, Clone, Default)]
pub(super) struct Found {
    pub any: Vec<bool>,
    pub whole: Vec<bool>,
}

impl Found {
    /// From the matched postings of every chunk that holds a term.
    fn of_candidates(qterms: &[QTerm], accs: &Accs) -> Found {
        let mut f = Found {
            any: vec![false; qterms.len()],
            whole: vec![false; qterms.len()],
        };
        for m in accs.matched() {
            let q = m.q as usize;
            f.any[q] = true;
            f.whole[q] |= qterms[q].whole(m);
        }
        f
    }
}

/// The query's shape and intents, from its text.
pub(super) fn shape_and_intents(text: &str) -> (QueryShape, Intents) {
    // the query's plain words, read once for both intents
    let words = crate::analysis::plain_query_words(text);
    let shape = QueryShape::with_intent(text, &words);
    let intents = Intents {
        owner: asks_for_owner(&words),
        changes: super::roles::asks_for_changes(text, &words),
    };
    (shape, intents)
}

/// The [`LexicalRun::whole`] table of `accs`.
fn whole_matches(qterms: &[QTerm], accs: &Accs) -> Vec<bool> {
    let nq = qterms.len();
    let mut whole = vec![false; accs.len() * nq];
    for m in accs.matched() {
        let q = m.q as usize;
        if qterms.get(q).is_some_and(|t| t.whole(m)) {
            whole[m.acc as usize * nq + q] = true;
        }
    }
    whole
}

/// One ranked chunk of a [`LexicalRun`], without its stored text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    /// Chunk ordinal.
    pub ord: u64,
    /// `lexical × aboutness + exact parts`.
    pub score: f32,
    /// `lexical × aboutness`, without the exact parts.
    pub base: f32,
    /// Sum of the exact parts, as multiples of the best base score (0 when none applies).
    pub exact_share: f32,
    /// The canonicality part, as a multiple of the best base score.
    pub canon_share: f32,
    /// The share of the query's information the chunk matched, in `[0, 1]`: the
    /// weighted IDF of the query terms it holds in any form over that of all the query's
    /// terms (a content word no chunk holds counts with the IDF of a term in no
    /// document; a stop word no chunk holds does not count).
    pub coverage: f32,
}

impl LexicalRun {
    /// The module prior of chunk `ord` for this query: `module_prior` when the query
    /// asks for code and the chunk is a module or package entry, else 1. Fusion applies
    /// it to the fused score, so the vector side's evidence is weighed as the lexical
    /// side's is.
    pub fn module_prior(&self, index: &LexicalIndex, ord: u64, params: &QueryParams) -> f32 {
        if self.asks_for_code && index.is_code(ord) {
            params.module_prior
        } else {
            1.0
        }
    }

    /// Whether the query asks for code (a symbol, or words such as `implemented` or
    /// `where`) and `index` holds module entries: hybrid mode then weighs its lexical
    /// side by `QueryParams::code_alpha`.
    pub fn asks_for_code_in(&self, index: &LexicalIndex) -> bool {
        self.asks_for_code && index.has_code()
    }

    /// The routing prior of chunk `ord` that holds whatever the chunk matched:
    /// `route_prior` when the query asks who owns something and the chunk is an
    /// ownership record or route, else 1. (A route whose title covers the query takes it
    /// in its lexical score, [`LexicalRun`]'s ranking.)
    pub fn owner_prior(&self, index: &LexicalIndex, ord: u64, params: &QueryParams) -> f32 {
        if self.asks_for_owner && index.is_route(ord) {
            params.route_prior
        } else {
            1.0
        }
    }

    /// The change-log prior of chunk `ord` for this query: `changelog_prior` for a
    /// change log's chunk when the query does not ask about changes, else 1. Fusion
    /// applies it to the vector side too.
    pub fn changelog_prior(&self, index: &LexicalIndex, ord: u64, params: &QueryParams) -> f32 {
        if !self.asks_for_changes && index.is_changelog(ord) {
            params.changelog_prior
        } else {
            1.0
        }
    }

    /// The template prior of chunk `ord`: `template_prior` for a template copy, else 1.
    /// Fusion applies it to the vector side too.
    pub fn template_prior(&self, index: &LexicalIndex, ord: u64, params: &QueryParams) -> f32 {
        match index.is_template(ord) {
            true => params.template_prior,
            false => 1.0,
        }
    }

    /// The query's analysed terms that match some chunk, with their IDF (the weights the
    /// ranking gave them), in query order.
    pub fn term_weights(&self) -> Vec<(String, f32)> {
        let Some(first) = self.ranked.first() else {
            return Vec::new();
        };
        self.qterms
            .iter()
            .zip(first.idf.iter())
            .filter(|(_, (df, _))| *df > 0)
            .map(|(q, (_, idf))| (q.text.clone(), q.weight * idf))
            .collect()
    }

    /// The query's words that say what it is about (stop words aside, unless it has only
    /// those) and that no chunk of the index contains, in query order, as the query wrote
    /// them, lower-cased (`France` → `france`, `ÄÖÜ` → `äöü`; a CJK run none of whose
    /// bigrams any chunk holds, as written). Non-empty means the documentation may not cover
    /// the question: chunks ranked for the other words, or by meaning, are not about it.
    pub fn missing_words(&self) -> Vec<String> {
        self.spelled(self.missing_terms())
    }

    /// [`Self::missing_words`] as analysed terms (folded: `aou` for `ÄÖÜ`), and CJK runs
    /// as written.
    fn missing_terms(&self) -> Vec<String> {
        // a word counts as found when a chunk holds it or an inflection of it, not when
        // only longer words it begins matched (`capital` in `capitalize`)
        let whole = |q: usize| self.found.whole.get(q).copied().unwrap_or(false);
        self.missing_words_by(&whole, &|_| true)
    }

    /// `terms` as the reader wrote them, lower-cased: a term is shown as the query's
    /// word it comes from when that word is the term alone (`äöü`, not its folded
    /// `aou`); otherwise as it is. Repeats are left out.
    fn spelled(&self, terms: Vec<String>) -> Vec<String> {
        let words: Vec<&str> = self
            .query
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .collect();
        let mut out: Vec<String> = Vec::with_capacity(terms.len());
        for t in terms {
            let shown = words
                .iter()
                .find(|w| query_terms(w) == [t.as_str()])
                .map_or(t, |w| w.to_lowercase());
            if !out.contains(&shown) {
                out.push(shown);
            }
        }
        out
    }

    /// [`Self::missing_words`] over the chunks whose ordinal `keep` accepts (a search
    /// under path filters: a word only chunks outside them hold is missing there). Reads
    /// the run's candidates: a run of [`LexicalIndex::run`], not of
    /// [`LexicalIndex::run_top`].
    pub fn missing_words_where(&self, keep: &dyn Fn(u64) -> bool) -> Vec<String> {
        let kept = |q: usize| {
            (0..self.accs.len()).any(|a| self.holds_whole(a, q) && keep(self.accs.get(a).ord))
        };
        self.spelled(self.missing_words_by(&kept, keep))
    }

    /// The missing words when `whole(q)` says whether a chunk looked at holds term `q`
    /// itself or an inflection of it, and `keep` which chunks are looked at.
    fn missing_words_by(
        &self,
        whole: &dyn Fn(usize) -> bool,
        keep: &dyn Fn(u64) -> bool,
    ) -> Vec<String> {
        // the document frequencies the ranking computed (no run: no chunk holds any term)
        let df = self.ranked.first().map(|r| r.idf.as_slice()).unwrap_or(&[]);
        let found = |q: usize| df.get(q).is_some_and(|(d, _)| *d > 0) && whole(q);
        // a compound (`strict-peer-dependencies`, `node_linker`) whose parts are found is
        // not missing: the parts are query terms too, and its other spellings are symbols
        let part_found = |text: &str| {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|p| !p.is_empty() && *p != text)
                .any(|p| (0..self.qterms.len()).any(|q| self.qterms[q].text == p && found(q)))
        };
        let runs = cjk_runs(&self.query);
        let mut out: Vec<String> = Vec::new();
        for (q, term) in self.qterms.iter().enumerate() {
            let named =
                self.named_terms.contains(&term.text) && self.named_ords.iter().any(|&o| keep(o));
            // a CJK run is searched as overlapping bigrams (`京の`, `の天`): a bigram that
            // spans two words is no word of the question, but a run none of whose
            // bigrams any chunk holds is missing as written
            if term.text.chars().any(crate::analysis::is_cjk) {
                let run = runs.iter().find(|(_, terms)| terms.contains(&term.text));
                if let Some((run, terms)) = run {
                    let none = (0..self.qterms.len())
                        .filter(|&i| terms.contains(&self.qterms[i].text))
                        .all(|i| !found(i));
                    if term.content && none && !out.contains(run) {
                        out.push(run.clone());
                    }
                }
                continue;
            }
            if !term.content || found(q) || named || part_found(&term.text) {
                continue;
            }
            // a part of a compound (`ver` of `intro_ver`) is reported as the compound the
            // reader wrote, unless the compound itself is found
            let word = match compound_of(&self.qterms, q) {
                Some(c) if found(c) => continue,
                Some(c) => &self.qterms[c].text,
                None => &term.text,
            };
            if !out.contains(word) {
                out.push(word.clone());
            }
        }
        out
    }

    /// True when no chunk holds any word that says what the query is about, in any form
    /// the lexical side matches (itself, an inflection, a longer word it begins, a named
    /// id or symbol; for a CJK run, any of its bigrams). False for a query without such
    /// words (stop words only count then).
    pub fn holds_no_query_word(&self) -> bool {
        let missing = self.missing_terms();
        let is_missing = |q: usize| {
            missing.contains(&self.qterms[q].text)
                || compound_of(&self.qterms, q)
                    .is_some_and(|c| missing.contains(&self.qterms[c].text))
        };
        let content: Vec<usize> = (0..self.qterms.len())
            .filter(|&q| self.qterms[q].content)
            .collect();
        let by_any_variant = |q: usize| self.found.any.get(q).copied().unwrap_or(false);
        // a CJK bigram is never reported missing (it may span two words), but one that no
        // chunk holds is no evidence either
        let bigram = |q: usize| self.qterms[q].text.chars().any(crate::analysis::is_cjk);
        !content.is_empty()
            && content
                .into_iter()
                .all(|q| (is_missing(q) || bigram(q)) && !by_any_variant(q))
    }

    /// The highest base score (`lexical × aboutness`) this query could reach: every
    /// matched term saturated, all of it in title, headings or path.
    pub fn score_bound(&self, about_gain: f32) -> f32 {
        self.term_weights().iter().map(|(_, idf)| idf).sum::<f32>() * (1.0 + about_gain)
    }

    /// Every matching chunk, best first (ties by ordinal).
    pub fn scored(&self) -> Vec<Scored> {
        let best = self
            .ranked
            .iter()
            .map(|r| r.parts.lexical * r.parts.aboutness)
            .fold(0.0f32, f32::max);
        let mass: Vec<f32> = self
            .qterms
            .iter()
            .zip(self.ranked.first().map(|r| r.idf.as_slice()).unwrap_or(&[]))
            // a stop word no chunk holds is no information the collection lacks
            .map(|(q, (df, idf))| match *df > 0 || q.content {
                true => q.weight * idf,
                false => 0.0,
            })
            .collect();
        let total: f32 = mass.iter().sum();
        self.ranked
            .iter()
            .map(|r| {
                let base = r.parts.base();
                let exact: f32 = r.parts.exact.iter().sum();
                let held: f32 = self
                    .accs
                    .tf(r.acc)
                    .iter()
                    .zip(&mass)
                    .filter(|(tf, _)| tf.iter().any(|t| *t > 0.0))
                    .map(|(_, m)| m)
                    .sum();
                Scored {
                    coverage: if total > 0.0 {
                        (held / total).clamp(0.0, 1.0)
                    } else {
                        0.0
                    },
                    ord: r.ord,
                    score: r.parts.score,
                    base,
                    exact_share: if best > 0.0 { exact / best } else { 0.0 },
                    canon_share: if best > 0.0 {
                        r.parts.canon / best
                    } else {
                        0.0
                    },
                }
            })
            .collect()
    }
}

impl LexicalIndex {
    /// Runs `query` and returns at most `query.limit` hits, best first, dropping those
    /// under `floor × best`.
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] or [`crate::Error::Corrupt`] when the index cannot be read.
    /// Any query text is accepted: one with no term gives an empty list.
    pub fn search(&self, query: &LexicalQuery) -> Result<Vec<Hit>> {
        let run = self.run(query.text, &query.params)?;
        self.cut(&run, query)
    }

    /// The hits of `run`, at most `query.limit`, dropping those under `floor × best`.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when a stored chunk cannot be read.
    pub fn cut(&self, run: &LexicalRun, query: &LexicalQuery) -> Result<Vec<Hit>> {
        let top = run.ranked.first().map_or(0.0, |r| r.parts.score);
        let kept = run
            .ranked
            .iter()
            .take_while(|r| r.parts.score >= query.params.floor * top)
            .take(query.limit)
            .map(|r| self.acc_hit(run, r, query.explain))
            .collect::<Result<Vec<_>>>()?;
        Ok(kept)
    }

    /// Scores every chunk matching `text` (see [`LexicalRun`]).
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when the index cannot be read.
    pub fn run(&self, text: &str, params: &QueryParams) -> Result<LexicalRun> {
        let searcher = self.searcher();
        let qterms = self.query_qterms(&searcher, text, params)?;
        let accs = self.collect(&searcher, &qterms)?;
        let df = df_of_candidates(&qterms, &accs);
        let found = Found::of_candidates(&qterms, &accs);
        self.finish(searcher, text, params, (qterms, accs), df, found)
    }

    /// The run of `text` whose first `k` ranked chunks are exactly those of
    /// [`Self::run`] (the same chunks, scores and order), found without scoring every
    /// posting: see [`super::topk`]. Its candidates are not every chunk that holds a
    /// term, so [`LexicalRun::hit_for`] of a chunk outside its first `k` and
    /// [`LexicalRun::missing_words_where`] need [`Self::run`]. With
    /// `QueryParams::exhaustive`, or settings the bound does not cover (page evidence,
    /// canonicality), it is [`Self::run`].
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when the index cannot be read.
    pub fn run_top(&self, text: &str, params: &QueryParams, k: usize) -> Result<LexicalRun> {
        if !params.exhaustive {
            if let Some(run) = self.pruned_run(text, params, k)? {
                return Ok(run);
            }
        }
        self.run(text, params)
    }

    /// The query's analysed terms, weighted and expanded (stop words at `stop_weight`,
    /// terms of weight 0 dropped).
    pub(super) fn query_qterms(
        &self,
        searcher: &Searcher,
        text: &str,
        params: &QueryParams,
    ) -> Result<Vec<QTerm>> {
        let mut terms = query_terms(text);
        terms.truncate(MAX_QUERY_TERMS);
        let weights = term_weights(text, &terms, params.stop_weight);
        let stops = if params.stop_about {
            term_weights(text, &terms, 0.0)
        } else {
            vec![1.0; terms.len()]
        };
        let content = term_weights(text, &terms, 0.0);
        let mut qterms = self.expand(searcher, terms, params)?;
        for (((q, w), st), c) in qterms.iter_mut().zip(weights).zip(stops).zip(content) {
            q.weight = w;
            q.stop = st == 0.0;
            q.content = c > 0.0;
        }
        qterms.retain(|q| q.weight > 0.0);
        Ok(qterms)
    }

    /// Ranks the candidates `accs` of `qterms` (with the terms' document frequencies
    /// `df` and what the index holds of each, `found`) into a [`LexicalRun`].
    pub(super) fn finish(
        &self,
        searcher: Searcher,
        text: &str,
        params: &QueryParams,
        (qterms, mut accs): (Vec<QTerm>, Accs),
        df: Vec<u64>,
        found: Found,
    ) -> Result<LexicalRun> {
        self.mark_exact(&searcher, text, &mut accs)?;
        mark_whole_identifiers(text, &qterms, &mut accs);
        self.fill_lengths_and_ords(&searcher, &mut accs)?;
        let (shape, intents) = shape_and_intents(text);
        let ranked = if accs.is_empty() {
            Vec::new()
        } else {
            self.rank(&qterms, &accs, params, (shape, intents), &df)
        };
        let mut rank_of: Vec<(u64, usize)> =
            ranked.iter().enumerate().map(|(i, r)| (r.ord, i)).collect();
        rank_of.sort_unstable();
        let named_ords: Vec<u64> = (0..accs.len())
            .map(|i| accs.get(i))
            .filter(|a| a.exact[0] || a.exact[2])
            .map(|a| a.ord)
            .collect();
        let named_terms = if !named_ords.is_empty() {
            text.split_whitespace()
                .filter(|t| looks_like_identifier(t))
                .flat_map(query_terms)
                .collect()
        } else {
            Vec::new()
        };
        let whole = whole_matches(&qterms, &accs);
        Ok(LexicalRun {
            searcher,
            query: text.to_string(),
            qterms,
            accs,
            ranked,
            rank_of,
            whole,
            found,
            named_terms,
            named_ords,
            asks_for_code: shape.asks_for_code(),
            asks_for_owner: intents.owner,
            asks_for_changes: intents.changes,
        })
    }

    /// The hit for chunk `ord` in `run`: its lexical parts if it matched, zeros if not.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] when `ord` is not in the index or its chunk is unreadable.
    pub fn hit_for(&self, run: &LexicalRun, ord: u64, explain: bool) -> Result<Hit> {
        if let Ok(at) = run.rank_of.binary_search_by_key(&ord, |&(o, _)| o) {
            return self.acc_hit(run, &run.ranked[run.rank_of[at].1], explain);
        }
        let addr = self.addr_of(ord)?;
        Ok(Hit {
            score: 0.0,
            ord,
            chunk: self.stored(&run.searcher, addr)?,
            matched_terms: Vec::new(),
            explain: explain.then(|| {
                let zero = Candidate {
                    acc: &Acc::default(),
                    tf: &[],
                    matched: Vec::new(),
                };
                self.explain(&run.qterms, &zero, &Ranked::zero())
            }),
        })
    }

    fn acc_hit(&self, run: &LexicalRun, r: &Ranked, explain: bool) -> Result<Hit> {
        let acc = run.accs.get(r.acc);
        let tf = run.accs.tf(r.acc);
        // a word counts when the chunk holds it or an inflection, not only longer words
        // it begins (the same rule as `missing_words`)
        let matched_terms = (0..run.qterms.len())
            .filter(|&q| run.qterms[q].content && run.holds_whole(r.acc, q))
            .map(|q| run.qterms[q].text.clone())
            .collect();
        let addr = acc
            .addr
            .ok_or_else(|| crate::Error::corrupt(&self.dir, "a candidate has no address"))?;
        Ok(Hit {
            score: r.parts.score,
            ord: acc.ord,
            chunk: self.stored(&run.searcher, addr)?,
            matched_terms,
            explain: explain.then(|| {
                let c = Candidate {
                    acc,
                    tf: &tf,
                    matched: run.accs.matched_of(r.acc),
                };
                self.explain(&run.qterms, &c, r)
            }),
        })
    }

    /// Adds prefix expansions (highest document frequency first, capped) to each term of
    /// at least `prefix_min_chars` characters.
    fn expand(&self, s: &Searcher, terms: Vec<String>, p: &QueryParams) -> Result<Vec<QTerm>> {
        let mut out = Vec::with_capacity(terms.len());
        for text in terms {
            let mut variants = vec![(text.clone(), 1.0)];
            // A word the collection never uses is looked up by its other inflections
            // (`widgets` → `widget`) at full weight; otherwise a plural's singular weighs
            // `plural_weight` and the other inflections `stem_weight`.
            let absent = self.doc_freq(s, &text)? == 0;
            let plural = crate::analysis::minimal_stem(&text) != text;
            let extra = !absent && plural && p.plural_weight > 0.0;
            let w = match (absent, plural) {
                (true, _) => 1.0,
                (false, true) => p.plural_weight.max(p.stem_weight),
                (false, false) => p.stem_weight,
            };
            if w > 0.0 {
                for v in crate::analysis::inflections(&text) {
                    variants.push((v, w));
                }
            }
            // a lone CJK character is indexed only inside the bigrams that hold it (a
            // function character, `的`, is in too many to say anything)
            let function = crate::analysis::is_cjk_function_char(&text);
            if let Some(c) = crate::analysis::lone_cjk(&text).filter(|_| !function) {
                for b in self.bigrams_holding(s, c)? {
                    if !variants.iter().any(|(v, _)| *v == b) {
                        variants.push((b, 1.0));
                    }
                }
            }
            let whole_variants = variants.len();
            if p.prefix_weight > 0.0 && text.chars().count() >= p.prefix_min_chars {
                let mut found: BTreeMap<String, u64> = BTreeMap::new();
                for field in self.fields.text {
                    // The first MAX_PREFIX_SCAN terms of the field's whole dictionary, the
                    // same however the index is cut into segments (each segment's first
                    // MAX_PREFIX_SCAN hold them all).
                    let mut of_field: BTreeMap<String, u64> = BTreeMap::new();
                    for sr in s.segment_readers() {
                        scan_prefix(&*sr.inverted_index(field)?, &text, &mut of_field)?;
                    }
                    for (term, df) in of_field.into_iter().take(MAX_PREFIX_SCAN) {
                        *found.entry(term).or_default() += df;
                    }
                }
                for (v, _) in &variants {
                    found.remove(v);
                }
                let mut exp: Vec<(String, u64)> = found.into_iter().collect();
                exp.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                exp.truncate(p.prefix_max_expansions);
                variants.extend(exp.into_iter().map(|(t, _)| (t, p.prefix_weight)));
            }
            let inflected = (whole_variants..variants.len())
                .filter(|&v| crate::analysis::is_inflected_form(&text, &variants[v].0))
                .collect();
            out.push(QTerm {
                text,
                variants,
                weight: 1.0,
                stop: false,
                content: true,
                whole_variants,
                inflected,
                extra_inflections: extra,
            });
        }
        Ok(out)
    }

    /// The IDF of an analysed term over the chunks ([`idf`]; 0 when no chunk holds it).
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when the index cannot be read.
    pub fn idf_of(&self, term: &str) -> Result<f32> {
        let df = self.doc_freq(&self.searcher(), term)?;
        Ok(if df == 0 { 0.0 } else { idf(self.len(), df) })
    }

    /// Chunks holding `term` in any field (summed over fields: an upper bound; 0 exactly
    /// when no chunk has it).
    fn doc_freq(&self, s: &Searcher, term: &str) -> Result<u64> {
        let mut n = 0u64;
        for sr in s.segment_readers() {
            for &field in &self.fields.text {
                let inv = sr.inverted_index(field)?;
                n += inv
                    .doc_freq(&Term::from_field_text(field, term))
                    .map_err(tantivy::TantivyError::from)? as u64;
            }
        }
        Ok(n)
    }

    /// Reads the postings of every variant in every field; fills per-chunk frequencies.
    pub(super) fn collect(&self, s: &Searcher, qterms: &[QTerm]) -> Result<Accs> {
        let lists = self.lists(s, qterms)?;
        let mut accs = Accs::new(qterms.len(), s.segment_readers().len());
        for (seg, sr) in s.segment_readers().iter().enumerate() {
            for l in lists.of(seg) {
                let qt = &qterms[l.q];
                let mut post = l.postings(IndexRecordOption::WithFreqs)?;
                let mut doc = post.doc();
                while doc != TERMINATED {
                    if !sr.is_deleted(doc) {
                        let i = accs.entry(seg, sr.max_doc(), doc);
                        accs.add(i, l.q, l.f, l.v, qt.weighted_tf(l.v, post.term_freq()));
                    }
                    doc = post.advance();
                }
            }
        }
        Ok(accs)
    }

    fn fill_lengths_and_ords(&self, s: &Searcher, accs: &mut Accs) -> Result<()> {
        // Each segment's readers once; then one pass over the candidates.
        let mut readers = Vec::with_capacity(s.segment_readers().len());
        for sr in s.segment_readers() {
            let norms = self.field_norms(sr)?;
            readers.push((norms, self.segment_ords(sr)?));
        }
        for acc in accs.iter_mut() {
            let Some(addr) = acc.addr else { continue };
            let Some((norms, ords)) = readers.get(addr.segment_ord as usize) else {
                continue;
            };
            for (f, norm) in norms.iter().enumerate() {
                acc.lens[f] = norm.fieldnorm(addr.doc_id) as f32;
            }
            acc.ord = ords.of(addr.doc_id);
        }
        Ok(())
    }

    /// Sets the exact-match flags: whole-query identity always; per-token identity only
    /// for queries of at most two white-space separated tokens.
    pub(super) fn mark_exact(&self, s: &Searcher, query: &str, accs: &mut Accs) -> Result<()> {
        let keys = exact_keys(query);
        let targets: [(Field, &Vec<String>); 3] = [
            (self.fields.id_key, &keys.ids),
            (self.fields.path_key, &keys.ids),
            (self.fields.symbol_key, &keys.symbols),
        ];
        for (seg, sr) in s.segment_readers().iter().enumerate() {
            for (i, (field, keys)) in targets.iter().enumerate() {
                let inv = sr.inverted_index(*field)?;
                for key in keys.iter() {
                    let t = Term::from_field_text(*field, key);
                    let Some(mut post) = inv
                        .read_postings(&t, IndexRecordOption::Basic)
                        .map_err(tantivy::TantivyError::from)?
                    else {
                        continue;
                    };
                    let mut doc = post.doc();
                    while doc != TERMINATED {
                        if !sr.is_deleted(doc) {
                            let at = accs.entry(seg, sr.max_doc(), doc);
                            accs.get_mut(at).exact[i] = true;
                        }
                        doc = post.advance();
                    }
                }
            }
        }
        Ok(())
    }
}

/// Marks an exact symbol match on every chunk whose fields hold a code-like query term
/// (one with `_` or `:` inside, or a `#` before its end: `fencesentinel_last_line_of_code`,
/// `Rc::strong_count`, `CARGO_CFG_TARGET_OS`; not the language names `C#`, `F#`) as one
/// whole token, so a fenced block that names it is not
/// outranked by prose that only shares its parts (`last`, `line`). As for the other
/// per-token exact keys, only in queries of at most two white-space separated tokens: in
/// a longer question the identifier is one clue among several (on the Rust book it cost
/// `mpsc::channel tx.clone() multiple producers` its first rank). Hyphenated and dotted
/// words (`IL-6`, `e.g.`) are left out: on SciFact they cost 0.02 nDCG@10.
pub(super) fn mark_whole_identifiers(query: &str, qterms: &[QTerm], accs: &mut Accs) {
    let whole = whole_identifier_terms(query, qterms);
    if !whole.contains(&true) {
        return;
    }
    let named: Vec<usize> = accs
        .matched()
        .iter()
        .filter(|m| m.variant == 0 && whole[m.q as usize])
        .map(|m| m.acc as usize)
        .collect();
    for i in named {
        accs.get_mut(i).exact[2] = true;
    }
}

/// Which of `qterms` mark an exact symbol match on the chunks holding them whole
/// ([`mark_whole_identifiers`]): all false for a query of more than two tokens.
pub(super) fn whole_identifier_terms(query: &str, qterms: &[QTerm]) -> Vec<bool> {
    let short = query.split_whitespace().count() <= 2;
    qterms
        .iter()
        .map(|q| {
            short && (q.text.contains(['_', ':']) || q.text.trim_end_matches('#').contains('#'))
        })
        .collect()
}

/// The weight of each query term: `stop_weight` for a stop word written as a plain word
/// (outside quotes, not inside an identifier) and for a CJK function character
/// wherever it is written, else 1; all 1 when every term is a stop word.
fn term_weights(text: &str, terms: &[String], stop_weight: f32) -> Vec<f32> {
    if stop_weight >= 1.0 {
        return vec![1.0; terms.len()];
    }
    let plain = crate::analysis::plain_query_words(text);
    let stop: Vec<bool> = terms
        .iter()
        .map(|t| {
            (crate::analysis::is_stop_word(t) && plain.contains(t.as_str()))
                || crate::analysis::is_cjk_function_char(t)
        })
        .collect();
    if stop.iter().all(|s| *s) {
        return vec![1.0; terms.len()];
    }
    stop.iter()
        .map(|&s| if s { stop_weight } else { 1.0 })
        .collect()
}

/// Folded keys a query can name a chunk by: the whole query always; for a query of at
/// most two tokens each token too (for symbols, only identifier-like tokens).
struct ExactKeys {
    /// For ids, aliases and paths.
    ids: Vec<String>,
    symbols: Vec<String>,
}

fn exact_keys(query: &str) -> ExactKeys {
    let whole = query.trim();
    let mut ids = vec![crate::analysis::fold(whole)];
    let mut symbols = vec![symbol_key(whole)];
    symbols.extend(name_key(whole));
    ids.extend(name_key(whole));
    let tokens: Vec<&str> = whole.split_whitespace().collect();
    if tokens.len() <= 2 {
        for t in tokens {
            let t = t.trim_matches(|c: char| "\"'(),;?!".contains(c));
            ids.push(crate::analysis::fold(t));
            if looks_like_identifier(t) {
                symbols.push(symbol_key(t));
                symbols.extend(name_key(t));
                ids.extend(name_key(t));
            }
        }
    }
    for v in [&mut ids, &mut symbols] {
        v.retain(|k| !k.is_empty() && k.len() <= 256);
        v.sort();
        v.dedup();
    }
    ExactKeys { ids, symbols }
}

/// A token that names code rather than a word: it has `_`, `::`, `.`, `-` or `()` inside,
/// or a capital after a lowercase letter (`HashMap`, `or_insert`, `--jobs`, `Vec::new()`).
/// Plain words (`hash`, `Map`) get no per-token symbol identity: they are prose.
fn looks_like_identifier(t: &str) -> bool {
    let inner_capital = t
        .chars()
        .zip(t.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    inner_capital || t.contains(['_', ':', '.', '-', '(', '<', '#'])
}

fn scan_prefix(
    inv: &tantivy::InvertedIndexReader,
    prefix: &str,
    found: &mut BTreeMap<String, u64>,
) -> Result<()> {
    let mut stream = inv
        .terms()
        .range()
        .ge(prefix.as_bytes())
        .into_stream()
        .map_err(tantivy::TantivyError::from)?;
    let mut scanned = 0;
    while stream.advance() && scanned < MAX_PREFIX_SCAN {
        scanned += 1;
        let key = stream.key();
        if !key.starts_with(prefix.as_bytes()) {
            break;
        }
        if let Ok(k) = std::str::from_utf8(key) {
            *found.entry(k.to_string()).or_default() += stream.value().doc_freq as u64;
        }
    }
    Ok(())
}

/// The score parts of one candidate.
#[derive(Debug, Clone, Copy, Default)]
struct Parts {
    /// `(1 − page_weight) × ((1 − section_weight) × own + section_weight × section) +
    /// page_weight × page`.
    lexical: f32,
    /// The chunk's own BM25F.
    own: f32,
    /// The BM25F of the chunk's whole section, and its weight (0: section evidence off).
    section: f32,
    section_weight: f32,
    /// The BM25F of the chunk's whole page, and its weight (0: page evidence off).
    page: f32,
    page_weight: f32,
    aboutness: f32,
    share: f32,
    /// The share of the query's IDF mass the title holds (a route's title covers the
    /// query at [`ROUTE_TITLE_SHARE`]).
    title_share: f32,
    exact: [f32; 3],
    /// The page's canonicality in `[0, 1]` and the part it adds.
    canon_raw: f32,
    canon: f32,
    /// Query-shape prior and audience fit: multipliers on the lexical score (1 when
    /// they do not apply).
    prior: f32,
    audience: f32,
    score: f32,
}

impl Parts {
    /// `lexical × prior × aboutness × audience_fit`: the score before the additive parts.
    fn base(&self) -> f32 {
        self.lexical * self.prior * self.aboutness * self.audience
    }
}

/// What a query looks like, for the query-shape priors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QueryShape {
    /// One or two tokens, one of them a file path (`guide/install.md`, `docs/`).
    Path,
    /// One or two tokens, one of them code (`Foo::bar`, `foo_bar()`, `HashMap`).
    Symbol,
    Words,
    /// Words that ask where code is (`where is … implemented`, `which module declares
    /// …`): [`CODE_INTENT_WORDS`].
    CodeWords,
}

/// Plain query words that ask who owns or maintains a part: a question holding one is
/// answered by ownership records and routes first (`QueryParams::route_prior`).
const OWNER_WORDS: [&str; 10] = [
    "owns",
    "maintain",
    "owned",
    "owner",
    "owners",
    "ownership",
    "maintains",
    "maintainer",
    "maintainers",
    "responsible",
];

/// Whether a query of plain words `words` asks who owns or maintains something
/// ([`OWNER_WORDS`]).
fn asks_for_owner(words: &std::collections::HashSet<String>) -> bool {
    OWNER_WORDS.iter().any(|w| words.contains(*w))
}

/// What a query of words asks for besides its words, read once per query.
#[derive(Debug, Clone, Copy)]
pub(super) struct Intents {
    /// Who owns or maintains something ([`OWNER_WORDS`]).
    owner: bool,
    /// About changes (`roles::asks_for_changes`).
    changes: bool,
}

/// Least share of the query's IDF mass a route's title must hold for the title to cover
/// the query (`QueryParams::route_prior`).
const ROUTE_TITLE_SHARE: f32 = 0.5;

/// Plain query words that ask for code rather than prose: a question holding one is
/// answered by module entries first (`QueryParams::module_prior`).
const CODE_INTENT_WORDS: [&str; 14] = [
    // a location question: in an index with sources, module entries hold locations
    "where",
    "implemented",
    "implements",
    "implementation",
    "defined",
    "defines",
    "declared",
    "declares",
    "declaration",
    "function",
    "module",
    "class",
    "struct",
    "method",
];

impl QueryShape {
    /// [`Self::of`], with [`QueryShape::CodeWords`] for a question of words that asks
    /// for code; `words` are its plain words ([`crate::analysis::plain_query_words`]).
    fn with_intent(query: &str, words: &std::collections::HashSet<String>) -> QueryShape {
        let has = |w: &str| words.contains(w);
        // `code` alone is often another thing (an exit or status code): it asks for code
        // in a question of which (`which code writes the RECORD file`)
        let asks = CODE_INTENT_WORDS.iter().any(|w| has(w)) || (has("code") && has("which"));
        match QueryShape::of(query) {
            QueryShape::Words if asks => QueryShape::CodeWords,
            shape => shape,
        }
    }

    /// Whether module entries answer it first: a symbol, or words asking for code (a
    /// path-shaped query names its file: the path prior answers it).
    pub(super) fn asks_for_code(self) -> bool {
        matches!(self, QueryShape::Symbol | QueryShape::CodeWords)
    }

    fn of(query: &str) -> QueryShape {
        let tokens: Vec<&str> = query.split_whitespace().collect();
        if tokens.is_empty() || tokens.len() > 2 {
            return QueryShape::Words;
        }
        let pathy = |t: &str| {
            let t = t.trim_matches(|c: char| "\"'`(),;?!".contains(c));
            t.trim_matches('/').contains('/')
                || t.rsplit_once('.').is_some_and(|(stem, _)| {
                    !stem.is_empty() && crate::chunk::SourceKind::of_path(t).is_some()
                })
        };
        if tokens.iter().any(|t| pathy(t)) {
            QueryShape::Path
        } else if tokens.iter().any(|t| {
            let t = t.trim_matches('`');
            t.chars().any(char::is_alphabetic) && looks_like_identifier(t)
        }) {
            QueryShape::Symbol
        } else {
            QueryShape::Words
        }
    }
}

/// One candidate as explain reads it.
struct Candidate<'a> {
    acc: &'a Acc,
    tf: &'a [PerField<f32>],
    matched: Vec<super::accs::Matched>,
}

struct Ranked {
    /// The candidate's index in the run's [`Accs`].
    acc: usize,
    /// Chunk ordinal (the tie-break key).
    ord: u64,
    parts: Parts,
    idf: std::sync::Arc<Vec<(u64, f32)>>,
}

impl Ranked {
    /// The parts of a chunk that matched nothing.
    fn zero() -> Ranked {
        Ranked {
            acc: 0,
            ord: 0,
            parts: Parts {
                aboutness: 1.0,
                prior: 1.0,
                audience: 1.0,
                ..Parts::default()
            },
            idf: std::sync::Arc::new(Vec::new()),
        }
    }
}

impl LexicalIndex {
    fn rank(
        &self,
        qterms: &[QTerm],
        accs: &Accs,
        p: &QueryParams,
        (shape, intents): (QueryShape, Intents),
        df: &[u64],
    ) -> Vec<Ranked> {
        let idfs: std::sync::Arc<Vec<(u64, f32)>> =
            std::sync::Arc::new(df.iter().map(|&d| (d, idf(self.n, d))).collect());
        let qw: Vec<f32> = qterms.iter().map(|q| q.weight).collect();
        let mass: f32 = idfs.iter().zip(&qw).map(|((_, i), w)| i * w).sum();
        let w = p.section_weight.clamp(0.0, 1.0);
        let sections = if w > 0.0 { self.sections() } else { None };
        let section_scores = sections.map(|sec| (sec, self.unit_scores(sec, accs, &idfs, &qw)));
        let pw = p.page_weight.clamp(0.0, 1.0);
        let pages = if pw > 0.0 { self.pages() } else { None };
        let page_scores = pages.map(|pg| (pg, self.unit_scores(pg, accs, &idfs, &qw)));
        let mut ranked: Vec<Ranked> = accs
            .iter()
            .enumerate()
            .map(|(i, acc)| {
                let mut base = self.base_parts(acc, &accs.tf(i), &idfs, &qw, mass, p);
                base.own = base.lexical;
                // a chunk that matched no query word (found by an exact key alone) gets
                // no lexical evidence from its section either
                if let (Some((sec, scores)), true) = (&section_scores, base.own > 0.0) {
                    let whole = sec.of(acc.ord).and_then(|s| scores.get(&s)).copied();
                    base.section = whole.unwrap_or(base.lexical);
                    base.section_weight = w;
                    base.lexical = (1.0 - w) * base.own + w * base.section;
                }
                if let (Some((pg, scores)), true) = (&page_scores, base.own > 0.0) {
                    let whole = pg.of(acc.ord).and_then(|s| scores.get(&s)).copied();
                    base.page = whole.unwrap_or(base.lexical);
                    base.page_weight = pw;
                    base.lexical = (1.0 - pw) * base.lexical + pw * base.page;
                }
                Ranked {
                    acc: i,
                    ord: acc.ord,
                    parts: self.with_priors(base, acc, p, shape, intents),
                    idf: idfs.clone(),
                }
            })
            .collect();
        let best = ranked.iter().map(|r| r.parts.base()).fold(0.0f32, f32::max);
        let gains = [p.exact_id_gain, p.exact_path_gain, p.exact_symbol_gain];
        for r in &mut ranked {
            let acc = accs.get(r.acc);
            // a restatement's exact matches count as it does
            let role = self.restatement_prior(acc.ord, p, intents);
            for ((part, hit), gain) in r.parts.exact.iter_mut().zip(acc.exact).zip(gains) {
                *part = if hit { gain * best * role } else { 0.0 };
            }
            r.parts.canon_raw = self.canonicality_of(acc.ord);
            r.parts.canon = if r.parts.lexical > 0.0 {
                p.canon_gain * best * r.parts.canon_raw
            } else {
                0.0
            };
            r.parts.score = r.parts.base() + r.parts.exact.iter().sum::<f32>() + r.parts.canon;
        }
        ranked.retain(|r| r.parts.score > 0.0);
        // a total order (a chunk's ordinal is its own), so an unstable sort ranks the
        // same and needs no scratch copy of every candidate
        ranked.sort_unstable_by(|a, b| {
            b.parts
                .score
                .total_cmp(&a.parts.score)
                .then_with(|| a.ord.cmp(&b.ord))
                .then_with(|| a.acc.cmp(&b.acc))
        });
        ranked
    }

    /// The prior of chunk `ord` as a restatement, on its lexical score and its exact
    /// parts: `changelog_prior` for a change log's chunk (a change log restates what
    /// reference pages define) unless the query asks about changes, times
    /// `template_prior` for a template copy (a block stamped on many pages restates
    /// itself on each); 1 otherwise.
    fn restatement_prior(&self, ord: u64, p: &QueryParams, intents: Intents) -> f32 {
        let changelog = match !intents.changes && self.is_changelog(ord) {
            true => p.changelog_prior,
            false => 1.0,
        };
        match self.is_template(ord) {
            true => changelog * p.template_prior,
            false => changelog,
        }
    }

    /// `parts` with the query-shape prior, the page-role priors and the audience fit
    /// applied: multipliers on a chunk with lexical evidence.
    fn with_priors(
        &self,
        mut parts: Parts,
        acc: &Acc,
        p: &QueryParams,
        shape: QueryShape,
        intents: Intents,
    ) -> Parts {
        if parts.lexical <= 0.0 {
            return parts;
        }
        parts.prior = match shape {
            QueryShape::Path if acc.exact[1] => p.path_prior,
            QueryShape::Symbol if acc.exact[2] => p.symbol_prior,
            _ => 1.0,
        };
        if shape.asks_for_code() && self.is_code(acc.ord) {
            parts.prior *= p.module_prior;
        }
        // an ownership record for a routing question, a route whose title covers the
        // query (the seed's routing priors)
        if self.is_route(acc.ord) && (intents.owner || parts.title_share >= ROUTE_TITLE_SHARE) {
            parts.prior *= p.route_prior;
        }
        // a change log restates what reference pages define
        parts.prior *= self.restatement_prior(acc.ord, p, intents);
        if p.agent && self.for_agents(acc.ord) {
            parts.audience = p.audience_fit;
        }
        parts
    }

    fn base_parts(
        &self,
        acc: &Acc,
        tfs: &[PerField<f32>],
        idfs: &[(u64, f32)],
        qw: &[f32],
        mass: f32,
        p: &QueryParams,
    ) -> Parts {
        let mut lexical = 0.0;
        let mut about_mass = 0.0;
        let mut title_mass = 0.0;
        for (q, tf) in tfs.iter().enumerate() {
            let ptf = pseudo_tf(&self.params, tf, &acc.lens, &self.avg_field_len);
            let w = qw[q];
            lexical += w * idfs[q].1 * saturate(ptf, self.params.k1);
            if DocField::ALL
                .iter()
                .any(|f| f.is_about() && tf[f.index()] > 0.0)
            {
                about_mass += w * idfs[q].1;
            }
            if tf[DocField::Title.index()] > 0.0 {
                title_mass += w * idfs[q].1;
            }
        }
        let of_mass = |m: f32| {
            if lexical > 0.0 && mass > 0.0 {
                m / mass
            } else {
                0.0
            }
        };
        let share = of_mass(about_mass);
        let title_share = of_mass(title_mass);
        Parts {
            lexical,
            aboutness: 1.0 + p.about_gain * share,
            share,
            title_share,
            prior: 1.0,
            audience: 1.0,
            ..Parts::default()
        }
    }

    fn explain(&self, qterms: &[QTerm], c: &Candidate, r: &Ranked) -> Explain {
        let prm = &self.params;
        let acc = c.acc;
        let mut terms = Vec::new();
        for (q, tf) in c.tf.iter().enumerate() {
            let ptf = pseudo_tf(prm, tf, &acc.lens, &self.avg_field_len);
            if ptf <= 0.0 {
                continue;
            }
            let (df, idf) = r.idf[q];
            let contribution = qterms[q].weight * idf * saturate(ptf, prm.k1);
            let fields = DocField::ALL
                .iter()
                .filter(|f| tf[f.index()] > 0.0)
                .map(|f| {
                    let i = f.index();
                    let weighted = field_tf(prm, i, tf[i], acc.lens[i], self.avg_field_len[i]);
                    let mut matched: Vec<String> = c
                        .matched
                        .iter()
                        .filter(|m| m.q as usize == q && m.field as usize == i)
                        .map(|m| qterms[q].variants[m.variant as usize].0.clone())
                        .collect();
                    matched.dedup();
                    FieldExplain {
                        field: f.name(),
                        weight: prm.weights[i],
                        tf: tf[i],
                        length: acc.lens[i],
                        avg_length: self.avg_field_len[i],
                        weighted_tf: weighted,
                        contribution: contribution * weighted / ptf,
                        matched,
                    }
                })
                .collect();
            terms.push(TermExplain {
                term: qterms[q].text.clone(),
                df,
                idf,
                pseudo_tf: ptf,
                contribution,
                fields,
            });
        }
        let p = r.parts;
        Explain {
            score: p.score,
            lexical: p.lexical,
            chunk_lexical: p.own,
            section_lexical: p.section,
            section_weight: p.section_weight,
            page_lexical: p.page,
            page_weight: p.page_weight,
            aboutness: p.aboutness,
            about_share: p.share,
            exact_id: p.exact[0],
            exact_path: p.exact[1],
            exact_symbol: p.exact[2],
            canonicality: p.canon,
            page_canonicality: p.canon_raw,
            prior: p.prior,
            audience_fit: p.audience,
            k1: prm.k1,
            b: prm.b,
            n: self.n,
            terms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_token_keys_only_for_short_queries_and_identifier_like_symbols() {
        let k = exact_keys("HashMap entry");
        assert_eq!(k.symbols, ["hashmap", "hashmap entry"]);
        assert_eq!(k.ids, ["entry", "hashmap", "hashmap entry"]);
        let k = exact_keys("how to use a HashMap");
        assert_eq!(k.symbols, ["how to use a hashmap"]);
        assert_eq!(k.ids, ["how to use a hashmap"]);
        let k = exact_keys("`Vec::new()`");
        assert_eq!(k.symbols, ["vec::new"]);
    }

    #[test]
    fn query_shapes() {
        assert_eq!(QueryShape::of("guide/install.md"), QueryShape::Path);
        assert_eq!(QueryShape::of("read config.md"), QueryShape::Path);
        assert_eq!(QueryShape::of("Rc::strong_count"), QueryShape::Symbol);
        assert_eq!(QueryShape::of("`or_insert()`"), QueryShape::Symbol);
        assert_eq!(
            QueryShape::of("how do I read a config file"),
            QueryShape::Words
        );
        assert_eq!(QueryShape::of("version 1.5"), QueryShape::Words);
    }

    fn shape(q: &str) -> QueryShape {
        QueryShape::with_intent(q, &crate::analysis::plain_query_words(q))
    }

    #[test]
    fn questions_that_ask_for_code() {
        for q in [
            "where is the retry policy implemented",
            "which module declares the parser",
            "where is the code that uploads wheels",
            "where are the DLL dependencies bundled into windows wheels?",
            "which code writes the RECORD file",
            "Rc::strong_count",
        ] {
            assert!(shape(q).asks_for_code(), "{q}");
        }
        for q in [
            "what does exit code 2 mean",
            "how do I publish a crate",
            "the code of the error",
            "guide/install.md",
            "\"where is the function\" in quotes",
        ] {
            assert!(!shape(q).asks_for_code(), "{q}");
        }
    }

    #[test]
    fn identifier_shapes() {
        for t in [
            "HashMap",
            "or_insert",
            "--jobs",
            "Rc::strong_count",
            "x.y",
            "foo()",
        ] {
            assert!(looks_like_identifier(t), "{t}");
        }
        for t in ["hash", "Map", "tasks", "C"] {
            assert!(!looks_like_identifier(t), "{t}");
        }
    }
}
