//! Answering a query in the requested mode: lexical, vector, or the fusion of both.

use super::hit::{FusionExplain, Hit, HitExplain, Mode, SearchOptions, SearchResponse};
use super::opened::OpenGeneration;
use super::proximity::ProximityPart;
use super::vectors::{VectorPart, VectorSide};
use crate::config::QueryParams;
use crate::error::{Error, Result};
use crate::fusion::{fuse, Candidate};
use crate::lexical::{LexicalQuery, LexicalRun, Scored};
use crate::vector::{CosineStats, VectorSearch};
use std::collections::HashMap;

/// Candidates a question with an operator in it is searched among before those holding
/// the operator are put first.
const OPERATOR_POOL: usize = 50;

/// The operator's share of the order among the passages that hold it, when the
/// question's words say what it is about (1 when they are stop words only).
const OPERATOR_SHARE: f32 = 0.25;

/// Each side contributes at least this many candidates to the fusion.
pub const FUSION_DEPTH: usize = 100;

/// `ef_search` of HNSW queries (at least the fusion depth).
const EF_SEARCH: usize = 128;

/// The parts of an opened index a search reads.
#[derive(Clone, Copy)]
pub(super) struct Parts<'a> {
    pub g: &'a OpenGeneration,
    pub v: &'a VectorPart,
    pub p: &'a ProximityPart,
    /// The query's vector made ahead of the search, if any.
    pub prepared: Option<&'a super::vectors::PreparedQuery>,
}

impl<'a> Parts<'a> {
    /// Ranks chunks for `query` in `opts.mode`, best first.
    ///
    /// `auto` answers with hybrid when the vector side is usable, else lexically with the
    /// reason in [`SearchResponse::degraded`].
    ///
    /// # Errors
    /// [`Error::VectorsUnavailable`] for an explicit `vector` or `hybrid` request when the
    /// vector side is not usable; [`Error::Corrupt`]/[`Error::Tantivy`] when the index
    /// cannot be read; [`Error::Embedder`] when the query cannot be embedded. Any query
    /// text is accepted.
    pub(super) fn search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResponse> {
        self.search_with_operators(query, opts)
            .map_err(|e| match e {
                // A tantivy failure is damage to this index: say so, with the hint.
                Error::Tantivy(t) => Error::corrupt(self.g.dir(), format!("lexical index: {t}")),
                other => other,
            })
    }

    /// A question of words that also writes an operator (`what does ?? do`): its words'
    /// ranking over [`OPERATOR_POOL`] candidates, joined by the operator's own ranking
    /// ([`super::symbols::symbol_search`]) over as many. The passages that hold an
    /// operator come first, ordered by the words' score plus [`OPERATOR_SHARE`] × the
    /// operator's, each divided by its best (all of the operator's when the words are
    /// stop words only); the rest follow in the words' order. The operators join the
    /// matched terms.
    fn search_with_operators(&self, query: &str, opts: &SearchOptions) -> Result<SearchResponse> {
        let operators = super::symbols::operators_in(query);
        if operators.is_empty() || super::symbols::is_symbol_query(query) {
            return self.search_modes(query, opts);
        }
        let wide = SearchOptions {
            limit: opts.limit.max(OPERATOR_POOL),
            ..*opts
        };
        let mut r = self.search_modes(query, &wide)?;
        let by_symbol = super::symbols::symbol_search(
            self.g,
            &operators.join(" "),
            OPERATOR_POOL,
            0.0,
            super::symbols::RolePriors::for_query(query, &opts.params),
            false,
        )?;
        let best = |hits: &[super::hit::Hit]| hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
        let (words_best, symbol_best) = (best(&r.hits), best(&by_symbol.hits));
        let part = |s: f32, of: f32| if of > 0.0 { s / of } else { 0.0 };
        let symbol_part: HashMap<u64, f32> = by_symbol
            .hits
            .iter()
            .map(|h| (h.ord, part(h.score, symbol_best)))
            .collect();
        // the operator's share: all of it when the words are only stop words (`what does
        // ?? do`), a quarter when they say what the question is about
        let share = match crate::analysis::query_terms(query)
            .iter()
            .any(|t| !crate::analysis::is_stop_word(t))
        {
            true => OPERATOR_SHARE,
            false => 1.0,
        };
        let mut holders: Vec<(f32, super::hit::Hit)> = Vec::new();
        let mut rest = Vec::new();
        for h in r.hits.drain(..) {
            let holds = operators
                .iter()
                .any(|o| super::symbols::holds(&h.chunk.text, o));
            // (past the operator's own best passages, its part is 0)
            let sp = symbol_part.get(&h.ord).copied().unwrap_or(0.0);
            match holds {
                true => holders.push((share * sp + part(h.score, words_best), h)),
                false => rest.push(h),
            }
        }
        let seen: std::collections::HashSet<u64> = holders.iter().map(|(_, h)| h.ord).collect();
        for h in by_symbol.hits {
            if !seen.contains(&h.ord) {
                holders.push((share * symbol_part[&h.ord], h));
            }
        }
        holders.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.ord.cmp(&b.1.ord)));
        // scores in the words' scale, above every passage without the operator, in order
        let scale = if words_best > 0.0 { words_best } else { 1.0 };
        for (combined, h) in &mut holders {
            h.score = scale * (1.0 + *combined / 2.0);
            for o in &operators {
                if super::symbols::holds(&h.chunk.text, o) && !h.matched_terms.contains(o) {
                    h.matched_terms.push(o.clone());
                }
            }
        }
        r.hits = holders
            .into_iter()
            .map(|(_, h)| h)
            .chain(rest)
            .take(opts.limit)
            .collect();
        r.weights.extend(by_symbol.weights);
        Ok(r)
    }

    fn search_modes(&self, query: &str, opts: &SearchOptions) -> Result<SearchResponse> {
        // `??`, `=>`, `🚀`: no word to look up and a vector of noise; matched as written
        if super::symbols::is_symbol_query(query) {
            let mut r = super::symbols::symbol_search(
                self.g,
                query,
                opts.limit,
                opts.params.floor,
                super::symbols::RolePriors::for_query(query, &opts.params),
                opts.explain,
            )?;
            if matches!(opts.mode, Mode::Vector | Mode::Hybrid) {
                r.degraded = Some(
                    "a query of symbols is matched as written (its vector would be noise)".into(),
                );
            }
            return Ok(r);
        }
        if opts.mode == Mode::Lexical {
            return self.lexical_search(query, opts);
        }
        // no usable vector side: `auto` answers lexically saying why, the others fail
        let without_vectors = |reason: String| match opts.mode {
            Mode::Auto => {
                let mut r = self.lexical_search(query, opts)?;
                r.degraded = Some(reason);
                Ok(r)
            }
            _ => Err(Error::VectorsUnavailable(reason)),
        };
        let side = match self.v.query_side_with(self.g, query, self.prepared)? {
            Ok(side) => side,
            Err(reason) => return without_vectors(reason),
        };
        let mode = if opts.mode == Mode::Vector {
            Mode::Vector
        } else {
            Mode::Hybrid
        };
        let run = self.g.lexical_run(query, &opts.params)?;
        let dense = match Dense::of(self.g, &run, side, opts, mode) {
            Ok(d) => d,
            Err(reason) => return without_vectors(reason),
        };
        if self.only_noise(query, &run, &dense) {
            return Ok(SearchResponse {
                hits: Vec::new(),
                mode,
                degraded: None,
                weights: run.term_weights(),
                missing_words: run.missing_words(),
                neighbours_only: false,
            });
        }
        self.fused_search(run, opts, mode, dense)
    }

    /// True when no passage holds a word of the query and its nearest chunk is no nearer
    /// than made-up words get ([`VectorPart::noise_ceiling`]): nothing answers it, and
    /// its nearest neighbours would be noise shown as answers.
    fn only_noise(&self, query: &str, run: &LexicalRun, dense: &Dense<'_>) -> bool {
        if !run.holds_no_query_word() {
            return false;
        }
        let top = dense.top.first().map_or(f32::MIN, |t| t.1);
        self.v
            .noise_ceiling(self.g, super::vectors::ProbeScript::of(query))
            .is_some_and(|ceiling| top <= ceiling)
    }

    /// The lexical ranking alone, cut by floor and limit.
    fn lexical_search(&self, query: &str, opts: &SearchOptions) -> Result<SearchResponse> {
        let q = LexicalQuery {
            text: query,
            limit: opts.limit,
            params: opts.params,
            explain: opts.explain,
        };
        // proximity re-ranks the whole lexical list; otherwise only its first `limit`
        // (and the anchors explain reads) are needed
        let run = match opts.params.prox_gain > 0.0 {
            true => self.g.lexical_run(query, &opts.params)?,
            false => {
                let k = opts.limit.max(super::proximity::ANCHORS);
                self.g.lexical_top(query, &opts.params, k)?
            }
        };
        let weights = run.term_weights();
        let hits = if opts.params.prox_gain > 0.0 {
            self.p.lexical_with_proximity(self.g, &run, opts)?
        } else {
            let mut hits: Vec<Hit> = self
                .g
                .lexical()
                .cut(&run, &q)?
                .into_iter()
                .map(Into::into)
                .collect();
            if opts.explain {
                self.p.explain_proximity(self.g, &run.scored(), &mut hits);
            }
            hits
        };
        Ok(SearchResponse {
            hits,
            weights,
            mode: Mode::Lexical,
            degraded: None,
            missing_words: run.missing_words(),
            neighbours_only: false,
        })
    }

    fn fused_search(
        &self,
        run: LexicalRun,
        opts: &SearchOptions,
        mode: Mode,
        dense: Dense<'a>,
    ) -> Result<SearchResponse> {
        let depth = opts.limit.max(FUSION_DEPTH);
        let lexical = run.scored();
        let stats = dense.stats;
        let calibration = crate::fusion::Calibration {
            cosine_mean: stats.mean,
            cosine_std: stats.std,
            vectors: stats.n,
            lexical_bound: run.score_bound(opts.params.about_gain),
        };
        let cosine = |ord: u64| dense.cosine(ord);
        let has_vector = |ord: u64| dense.has_vector(ord);
        let cands = candidates(&lexical, &dense.top, &cosine, &has_vector, depth, mode);
        let fusion = code_fusion(opts, run.asks_for_code_in(self.g.lexical()));
        let list_share = information_share(&lexical, depth, &opts.params);
        let mut fused = match mode {
            // vector mode: every vector hit, in cosine order; (1 + cos) / 2 keeps a
            // negative cosine above zero and in its order
            Mode::Vector => cands
                .iter()
                .filter(|c| c.has_vector && c.vector_rank.is_some())
                .map(|c| crate::fusion::Fused {
                    key: c.key,
                    score: ((1.0 + c.cosine) / 2.0).max(f32::MIN_POSITIVE),
                    lexical_part: 0.0,
                    vector_part: c.cosine,
                })
                .collect(),
            _ => {
                let mut f = fuse(&cands, &fusion, &calibration);
                for x in &mut f {
                    x.lexical_part *= list_share;
                    x.score = x.lexical_part + x.vector_part;
                }
                f.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
                f
            }
        };
        // The exact parts keep a named id, path or symbol on top, as in lexical mode;
        // canonicality breaks near-ties among hits with lexical evidence.
        let best = fused.first().map_or(0.0, |f| f.score);
        let shares: HashMap<u64, (f32, f32)> = lexical
            .iter()
            .map(|s| (s.ord, (s.exact_share, s.canon_share)))
            .collect();
        let parts = |ord: u64| match (mode, shares.get(&ord)) {
            (Mode::Hybrid, Some(&(exact, canon))) => (exact * best, canon * best),
            _ => (0.0, 0.0),
        };
        let bonus = |ord: u64| {
            let (exact, canon) = parts(ord);
            exact + canon
        };
        let module_prior = |ord: u64| run.module_prior(self.g.lexical(), ord, &opts.params);
        let owner_prior = |ord: u64| run.owner_prior(self.g.lexical(), ord, &opts.params);
        let changelog_prior = |ord: u64| run.changelog_prior(self.g.lexical(), ord, &opts.params);
        let template_prior = |ord: u64| run.template_prior(self.g.lexical(), ord, &opts.params);
        for f in &mut fused {
            // the lexical part already holds the priors (in its lexical score)
            let prior = module_prior(f.key)
                * owner_prior(f.key)
                * changelog_prior(f.key)
                * template_prior(f.key);
            if mode == Mode::Hybrid {
                f.score += f.vector_part * (prior - 1.0);
            } else {
                f.score *= prior;
            }
            f.score += bonus(f.key);
        }
        // graph proximity to the strongest lexical hits (hybrid only: it needs them)
        let prox = match mode {
            Mode::Hybrid => self
                .p
                .proximity(self.g, &lexical, opts.params.prox_gain, opts.explain),
            _ => None,
        };
        let present = lexical
            .iter()
            .map(|s| s.ord)
            .chain(cands.iter().map(|c| c.key));
        let only = add_proximity(prox.as_ref(), &mut fused, present, best, opts.limit);
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        let top = fused.first().map_or(0.0, |f| f.score);
        let by_ord: HashMap<u64, &Candidate> = cands.iter().map(|c| (c.key, c)).collect();
        let hits = fused
            .iter()
            .filter(|f| f.score > 0.0 && f.score >= opts.params.floor * top)
            .take(opts.limit)
            .map(|f| {
                let graph_only = only.contains(&f.key);
                // a graph-only page is shown at the section its link names
                let ord = match (&prox, graph_only) {
                    (Some(p), true) => p.surface(self.g, f.key),
                    _ => f.key,
                };
                let c = match by_ord.get(&ord) {
                    Some(c) => **c,
                    None => candidate(ord, None, 0.0, &cosine, &has_vector),
                };
                let explain = FusionExplain {
                    fusion,
                    lexical_score: c.lexical,
                    lexical_rank: c.lexical_rank,
                    cosine: c.cosine,
                    vector_rank: c.vector_rank,
                    cosine_z: calibration.z(c.cosine),
                    information_share: list_share,
                    lexical_part: f.lexical_part,
                    vector_part: f.vector_part,
                    exact_bonus: parts(f.key).0,
                    canonicality_bonus: parts(f.key).1,
                    module_prior: module_prior(f.key),
                    route_prior: owner_prior(f.key),
                    changelog_prior: changelog_prior(f.key),
                    template_prior: template_prior(f.key),
                };
                let mut hit =
                    self.fused_hit(&run, ord, f.score, opts.explain.then_some(explain))?;
                super::proximity::mark(prox.as_ref(), &mut hit, best, graph_only);
                Ok(hit)
            })
            .collect::<Result<Vec<Hit>>>()?;
        Ok(SearchResponse {
            hits,
            mode,
            degraded: None,
            weights: run.term_weights(),
            missing_words: run.missing_words(),
            neighbours_only: run.holds_no_query_word(),
        })
    }

    fn fused_hit(
        &self,
        run: &LexicalRun,
        ord: u64,
        score: f32,
        fusion: Option<FusionExplain>,
    ) -> Result<Hit> {
        let h = self.g.lexical().hit_for(run, ord, fusion.is_some())?;
        Ok(Hit {
            score,
            ord,
            match_line: h.chunk.start_line,
            snippet: String::new(),
            chunk: h.chunk,
            matched_terms: h.matched_terms,
            confidence: crate::graph::Confidence::Observed,
            explain: h.explain.map(|lexical| HitExplain {
                lexical,
                fusion,
                proximity: None,
            }),
        })
    }
}

/// The union of both sides' top `depth`, each with its true score on both sides.
fn candidates(
    lexical: &[Scored],
    vector: &[(u64, f32)],
    cosine: &dyn Fn(u64) -> f32,
    has_vector: &dyn Fn(u64) -> bool,
    depth: usize,
    mode: Mode,
) -> Vec<Candidate> {
    let mut out: HashMap<u64, Candidate> = HashMap::new();
    let lex_rank: HashMap<u64, (u32, f32)> = lexical
        .iter()
        .enumerate()
        .map(|(i, s)| (s.ord, (i as u32 + 1, s.base)))
        .collect();
    let add = |ord: u64| {
        let (rank, base) = lex_rank
            .get(&ord)
            .copied()
            .map_or((None, 0.0), |(r, b)| (Some(r), b));
        let rank = rank.filter(|r| (*r as usize) <= depth);
        candidate(ord, rank, base, cosine, has_vector)
    };
    if mode == Mode::Hybrid {
        for s in lexical.iter().take(depth) {
            out.insert(s.ord, add(s.ord));
        }
    }
    for (i, (ord, _)) in vector.iter().enumerate() {
        let ord = *ord;
        let c = out.entry(ord).or_insert_with(|| add(ord));
        c.vector_rank = Some(i as u32 + 1);
    }
    let mut v: Vec<Candidate> = out.into_values().collect();
    v.sort_by_key(|c| c.key);
    v
}

/// The lexical share by information matched: the best coverage among the lexical
/// side's top `depth` (`lexical::Scored::coverage`) `^ info_share`; 1 when it is off.
fn information_share(lexical: &[Scored], depth: usize, params: &QueryParams) -> f32 {
    if params.info_share <= 0.0 {
        return 1.0;
    }
    let best = lexical
        .iter()
        .take(depth)
        .map(|s| s.coverage)
        .fold(0.0f32, f32::max);
    best.powf(params.info_share)
}

/// A candidate with its lexical rank and base score, its cosine and no vector rank yet.
fn candidate(
    ord: u64,
    lexical_rank: Option<u32>,
    lexical: f32,
    cosine: &dyn Fn(u64) -> f32,
    has_vector: &dyn Fn(u64) -> bool,
) -> Candidate {
    Candidate {
        key: ord,
        lexical,
        lexical_rank,
        cosine: cosine(ord),
        vector_rank: None,
        has_vector: has_vector(ord),
    }
}

/// Adds each fused chunk's proximity part and the graph-only pages (at most `limit`, as
/// their first chunk, scored by that part alone) when the gain is positive; returns the
/// graph-only keys. `present`: every chunk with evidence of its own.
fn add_proximity(
    prox: Option<&super::proximity::ProximityRun<'_>>,
    fused: &mut Vec<crate::fusion::Fused>,
    present: impl Iterator<Item = u64>,
    best: f32,
    limit: usize,
) -> std::collections::HashSet<u64> {
    let Some(p) = prox else {
        return Default::default();
    };
    for f in fused.iter_mut() {
        f.score += p.part(f.key, best);
    }
    let only = p.graph_only(present, limit);
    fused.extend(only.iter().map(|&ord| crate::fusion::Fused {
        key: ord,
        score: p.part(ord, best),
        lexical_part: 0.0,
        vector_part: 0.0,
    }));
    only.into_iter().collect()
}

/// A query's vector side, answered: the nearest chunks, the cosine statistics and each
/// candidate's cosine (from the generation's vectors, or from the attached store).
struct Dense<'a> {
    top: Vec<(u64, f32)>,
    stats: CosineStats,
    cosines: Cosines<'a>,
}

enum Cosines<'a> {
    Local(&'a VectorSearch, Vec<f32>),
    /// Every candidate's cosine, asked of the store with the query; absent: no vector.
    Known(HashMap<u64, f32>),
}

impl<'a> Dense<'a> {
    /// The vector side of `run`'s query: the top `depth` chunks and, from a store, the
    /// cosines of the lexical candidates fused with them (hybrid).
    ///
    /// Errors: why a store could not answer.
    fn of(
        index: &OpenGeneration,
        run: &LexicalRun,
        (side, qvec): (VectorSide<'a>, Vec<f32>),
        opts: &SearchOptions,
        mode: Mode,
    ) -> std::result::Result<Dense<'a>, String> {
        let depth = opts.limit.max(FUSION_DEPTH);
        let ef = EF_SEARCH.max(depth);
        match side {
            VectorSide::Local(vectors) => {
                let (top, stats) = vectors.top_with_stats(&qvec, depth, ef);
                Ok(Dense {
                    top: top.into_iter().map(|(r, c)| (r as u64, c)).collect(),
                    stats,
                    cosines: Cosines::Local(vectors, qvec),
                })
            }
            VectorSide::Remote(store, identity_key) => {
                let also: Vec<u64> = match mode {
                    Mode::Hybrid => run.scored().iter().take(depth).map(|s| s.ord).collect(),
                    _ => Vec::new(),
                };
                let a = store.search(index, &qvec, &identity_key, depth, ef, &also)?;
                Ok(Dense {
                    top: a.top,
                    stats: a.stats,
                    cosines: Cosines::Known(a.cosines),
                })
            }
        }
    }

    /// The cosine of chunk `ord` with the query (0 without a vector).
    fn cosine(&self, ord: u64) -> f32 {
        match &self.cosines {
            Cosines::Local(v, q) => v.cosine(ord as usize, q),
            Cosines::Known(m) => m.get(&ord).copied().unwrap_or(0.0),
        }
    }

    fn has_vector(&self, ord: u64) -> bool {
        match &self.cosines {
            Cosines::Local(v, _) => v.set.has_vector(ord as usize),
            Cosines::Known(m) => m.contains_key(&ord),
        }
    }
}

/// The fusion of a query: `opts.fusion`; the default fusion's lexical weight becomes
/// `code_alpha` (clamped to `[0, 1]`) for a question that asks for code in an index with
/// sources. A fusion the caller chose (`--fusion`, a sweep) is kept as it is.
fn code_fusion(opts: &SearchOptions, asks_for_code: bool) -> crate::fusion::Fusion {
    match opts.fusion {
        crate::fusion::Fusion::Calibrated { noise, tmm, .. }
            if asks_for_code && opts.fusion == super::hit::DEFAULT_FUSION =>
        {
            crate::fusion::Fusion::Calibrated {
                alpha: opts.params.code_alpha.clamp(0.0, 1.0),
                noise,
                tmm,
            }
        }
        f => f,
    }
}

#[cfg(test)]
mod code_fusion_tests {
    use super::*;
    use crate::fusion::Fusion;

    fn alpha(f: Fusion) -> f32 {
        match f {
            Fusion::Calibrated { alpha, .. } => alpha,
            _ => f32::NAN,
        }
    }

    #[test]
    fn a_code_question_takes_code_alpha_unless_the_caller_chose_a_fusion() {
        let opts = SearchOptions::default();
        assert_eq!(alpha(code_fusion(&opts, true)), 0.75);
        assert_eq!(
            alpha(code_fusion(&opts, false)),
            alpha(super::super::hit::DEFAULT_FUSION)
        );
        let chosen = SearchOptions {
            fusion: Fusion::Calibrated {
                alpha: 0.3,
                noise: 1.0,
                tmm: false,
            },
            ..SearchOptions::default()
        };
        assert_eq!(alpha(code_fusion(&chosen, true)), 0.3);
        let mut wild = SearchOptions::default();
        wild.params.code_alpha = 7.0;
        assert_eq!(alpha(code_fusion(&wild, true)), 1.0);
    }
}
