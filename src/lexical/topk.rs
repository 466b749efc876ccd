//! The top k of a lexical query without scoring every posting: MaxScore (Turtle & Flood,
//! 1995, "Query evaluation: strategies and optimizations", IP&M 31(6)) at the level of
//! sections, with the same top k as [`LexicalIndex::run`] — the same chunks, scores
//! and order.
//!
//! A term's share of any score is at most `weight × IDF` (the BM25F saturation
//! `tf~ / (k1 + tf~)` is below 1, for a chunk and for its section alike). Terms are
//! taken in order of that bound, highest first, as *essential* terms; every chunk of
//! a section where an essential term occurs (or a chunk an exact key names) is a
//! candidate and is scored in full — every query term's postings read at its
//! documents only, by skipping. A chunk outside the candidates holds, in itself and in
//! its section, only the other terms, so its score is at most the sum of their bounds
//! times the largest multipliers a chunk without an exact match can take (aboutness,
//! priors, audience fit). When that is below the k-th candidate's score (and the best
//! candidate's base score, which the exact parts are multiples of), the candidates'
//! ranking is the whole index's for its first k. Otherwise the next term becomes
//! essential, and so on; with every term essential the candidates are every chunk that
//! holds one.
//!
//! Document frequencies come from [`super::dfs`] (the whole index, remembered), not
//! from the candidates.

use super::accs::Accs;
use super::bm25f::idf;
use super::dfs::TermSpec;
use super::lists::Lists;
use super::reader::LexicalIndex;
use super::search::{shape_and_intents, whole_identifier_terms, Found, LexicalRun, QTerm};
use crate::config::QueryParams;
use crate::error::Result;
use std::collections::BTreeMap;
use tantivy::postings::{Postings, SegmentPostings};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Searcher, TERMINATED};

/// Past this share of the index's chunks as candidates, scoring every posting costs
/// about as much: the exhaustive run is used. (At 4× rust-docs, 0.5 took a quarter
/// off the CPU time of 0.2 over the 110 dev questions: a long question of common words
/// made a fifth of the index candidates, and the exhaustive run then scored all of it.)
const MAX_CANDIDATE_SHARE: f64 = 0.5;

/// Bounds are compared with this relative margin, for the rounding of `f32` sums.
const MARGIN: f32 = 1e-4;

/// Candidate documents by segment (ascending, no repeats).
type Targets = BTreeMap<usize, Vec<DocId>>;

impl LexicalIndex {
    /// The pruned run of `text` for its first `k` results (see the module docs), or
    /// `None` when the exhaustive run should be used: `k` is 0, the query has no term,
    /// page evidence or canonicality is on (the bound does not cover them), or the
    /// candidates would be a large share of the index.
    ///
    /// # Errors
    /// [`crate::Error::Tantivy`] when the index cannot be read.
    pub(super) fn pruned_run(
        &self,
        text: &str,
        p: &QueryParams,
        k: usize,
    ) -> Result<Option<LexicalRun>> {
        // k of at least every chunk: nothing to leave out
        if k == 0 || k as u64 >= self.n || p.page_weight > 0.0 || p.canon_gain > 0.0 {
            return Ok(None);
        }
        let s = self.searcher();
        let qterms = self.query_qterms(&s, text, p)?;
        if qterms.is_empty() {
            return Ok(None);
        }
        let mut df = Vec::with_capacity(qterms.len());
        let mut found = Found::default();
        for q in &qterms {
            let t = self
                .stats_cache
                .term_stats(&self.fields.text, &s, &spec_of(q))?;
            df.push(t.df);
            found.any.push(t.any);
            found.whole.push(t.whole);
        }
        let bound: Vec<f32> = qterms
            .iter()
            .zip(&df)
            .map(|(q, &d)| match d {
                0 => 0.0,
                d => q.weight.max(0.0) * idf(self.n, d),
            })
            .collect();
        let (shape, _) = shape_and_intents(text);
        let gain = self.outside_gain(p, shape.asks_for_code());
        if !gain.is_finite() {
            // priors too large to bound (an `f32` overflow): score everything
            return Ok(None);
        }
        let whole_ids = whole_identifier_terms(text, &qterms);
        let order = essential_order(&whole_ids, &bound);
        let forced = whole_ids.iter().filter(|w| **w).count();
        // the query's IDF mass, as the ranking weighs aboutness by it
        let mass: f32 = qterms
            .iter()
            .zip(&df)
            .map(|(q, &d)| q.weight * idf(self.n, d))
            .sum();
        let rest_of = |j: usize| {
            let rest: f32 = order[j..].iter().map(|&q| bound[q]).sum();
            // a chunk holding only these terms has at most their share of the mass in
            // title, headings and path
            let share = match mass > 0.0 {
                true => (rest / mass).min(1.0),
                false => 1.0,
            };
            let about = (1.0 + p.about_gain * share).max(1.0);
            rest * about * gain * (1.0 + MARGIN)
        };
        let exact = self.exact_ords(&s, text)?;
        let lists = self.lists(&s, &qterms)?;
        let mut j = forced.max(1).min(order.len());
        loop {
            let Some(targets) = self.candidates(&s, &lists, &order[..j], &exact, p)? else {
                tracing::debug!(
                    k,
                    essential = j,
                    "top k: too many candidates, every posting scored"
                );
                return Ok(None);
            };
            let accs = self.collect_in(&s, (&qterms, &lists), &targets)?;
            let run = self.finish(
                s.clone(),
                text,
                p,
                (qterms.clone(), accs),
                df.clone(),
                found.clone(),
            )?;
            let rest = rest_of(j);
            let kth = run.kth_score(k);
            tracing::debug!(
                k,
                essential = j,
                terms = order.len(),
                candidates = targets.values().map(Vec::len).sum::<usize>(),
                rest,
                kth,
                "top k"
            );
            // with every term essential the candidates are every chunk that holds one
            let all = j >= order.len();
            if all || rest <= 0.0 || kth.is_some_and(|t| rest < t && rest <= run.best_base()) {
                return Ok(Some(run));
            }
            // the fewest essential terms whose rest is under this k-th score (which
            // only grows as candidates are added); with fewer than k candidates, all
            j = match kth {
                None => order.len(),
                Some(kth) => (j + 1..order.len())
                    .find(|&i| rest_of(i) < kth)
                    .unwrap_or(order.len()),
            };
        }
    }

    /// The ordinals of the chunks an exact key of `text` names (id, path, symbol).
    fn exact_ords(&self, s: &Searcher, text: &str) -> Result<Vec<u64>> {
        let mut named = Accs::new(0, s.segment_readers().len());
        self.mark_exact(s, text, &mut named)?;
        let mut ords = Vec::with_capacity(named.len());
        for acc in named.iter() {
            let Some(addr) = acc.addr else { continue };
            let sr = s.segment_reader(addr.segment_ord);
            ords.push(self.segment_ords(sr)?.of(addr.doc_id));
        }
        Ok(ords)
    }

    /// Every chunk of every section where a term of `essential` occurs, and of the
    /// sections of `exact`, by segment; `None` past [`MAX_CANDIDATE_SHARE`] of the index.
    fn candidates(
        &self,
        s: &Searcher,
        lists: &Lists,
        essential: &[usize],
        exact: &[u64],
        p: &QueryParams,
    ) -> Result<Option<Targets>> {
        let mut ords: Vec<u64> = exact.to_vec();
        for (seg, sr) in s.segment_readers().iter().enumerate() {
            let seg_ords = self.segment_ords(sr)?;
            for l in lists.of(seg).iter().filter(|l| essential.contains(&l.q)) {
                let mut post = l.postings(IndexRecordOption::Basic)?;
                let mut doc = post.doc();
                while doc != TERMINATED {
                    if !sr.is_deleted(doc) {
                        ords.push(seg_ords.of(doc));
                    }
                    doc = post.advance();
                }
            }
        }
        ords.sort_unstable();
        ords.dedup();
        ords.retain(|&o| o < self.n);
        if ords.len() as f64 > MAX_CANDIDATE_SHARE * self.n as f64 {
            return Ok(None);
        }
        let ords = self.whole_sections(ords, p);
        let mut targets = Targets::new();
        for ord in ords {
            let addr = self.addr_of(ord)?;
            targets
                .entry(addr.segment_ord as usize)
                .or_default()
                .push(addr.doc_id);
        }
        for docs in targets.values_mut() {
            docs.sort_unstable();
            docs.dedup();
        }
        Ok(Some(targets))
    }

    /// `ords` with every other chunk of their sections (wherever they are: a box can
    /// interrupt a section), ascending, when section evidence is on.
    fn whole_sections(&self, ords: Vec<u64>, p: &QueryParams) -> Vec<u64> {
        let sections = match p.section_weight > 0.0 {
            true => self.sections(),
            false => None,
        };
        let Some(sec) = sections else {
            return ords;
        };
        let mut out: Vec<u64> = Vec::with_capacity(ords.len());
        let mut done: std::collections::HashSet<u32> = std::collections::HashSet::new();
        for ord in ords {
            out.push(ord);
            if let Some(first) = sec.of(ord) {
                if done.insert(first) {
                    out.extend(sec.members(first));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every query term's postings read at the `targets` documents only (skipping to
    /// each), in the order an exhaustive run reads them (segment, field, term,
    /// variant), so each candidate's and each section's sums are the same.
    fn collect_in(
        &self,
        s: &Searcher,
        (qterms, lists): (&[QTerm], &Lists),
        targets: &Targets,
    ) -> Result<Accs> {
        let mut accs = Accs::new(qterms.len(), s.segment_readers().len());
        let mut is_target: Vec<u64> = Vec::new();
        for (&seg, docs) in targets {
            let sr = s.segment_reader(seg as u32);
            is_target.clear();
            is_target.resize((sr.max_doc() as usize).div_ceil(64), 0);
            for &d in docs {
                is_target[d as usize / 64] |= 1u64 << (d % 64);
            }
            let wanted = |d: DocId| is_target[d as usize / 64] & (1u64 << (d % 64)) != 0;
            for l in lists.of(seg) {
                let (f, q, v) = (l.f, l.q, l.v);
                let qt = &qterms[q];
                let mut post = l.postings(IndexRecordOption::WithFreqs)?;
                // the shorter side drives: a short list is read whole, a long one is
                // skipped along to each target (both in document order)
                let add = |accs: &mut Accs, d: DocId, post: &SegmentPostings| {
                    if sr.is_deleted(d) {
                        return;
                    }
                    let i = accs.entry(seg, sr.max_doc(), d);
                    accs.add(i, q, f, v, qt.weighted_tf(v, post.term_freq()));
                };
                if (post.doc_freq() as usize) <= docs.len() {
                    let mut d = post.doc();
                    while d != TERMINATED {
                        if wanted(d) {
                            add(&mut accs, d, &post);
                        }
                        d = post.advance();
                    }
                    continue;
                }
                for &d in docs {
                    let at = match post.doc() < d {
                        true => post.seek(d),
                        false => post.doc(),
                    };
                    if at == TERMINATED {
                        break;
                    }
                    if at == d {
                        add(&mut accs, d, &post);
                    }
                }
            }
        }
        Ok(accs)
    }
}

/// The postings `q` is read from.
fn spec_of(q: &QTerm) -> TermSpec<'_> {
    TermSpec {
        variants: &q.variants,
        whole_variants: q.whole_variants,
        inflected: &q.inflected,
        extra_inflections: q.extra_inflections,
        stop: q.stop,
    }
}

/// The order terms become essential in: those that mark exact symbol matches first
/// (every chunk holding them must be a candidate), then by bound, highest first (ties
/// in query order).
fn essential_order(forced: &[bool], bound: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..bound.len()).collect();
    order.sort_by(|&a, &b| {
        forced[b]
            .cmp(&forced[a])
            .then(bound[b].total_cmp(&bound[a]))
            .then(a.cmp(&b))
    });
    order
}

impl LexicalIndex {
    /// The largest factor besides aboutness a chunk without an exact match can
    /// multiply its lexical score by: each prior or fit that raises a score, where the
    /// index has chunks it applies to.
    fn outside_gain(&self, p: &QueryParams, asks_for_code: bool) -> f32 {
        let up = |x: f32| x.max(1.0);
        let priors = &self.priors;
        let module = match asks_for_code && !priors.code.is_empty() {
            true => up(p.module_prior),
            false => 1.0,
        };
        let route = match priors.routes.is_empty() {
            true => 1.0,
            false => up(p.route_prior),
        };
        let changelog = match priors.changelog.is_empty() {
            true => 1.0,
            false => up(p.changelog_prior),
        };
        let template = match priors.template.is_empty() {
            true => 1.0,
            false => up(p.template_prior),
        };
        let audience = match p.agent && priors.for_agents.iter().any(|a| *a) {
            true => up(p.audience_fit),
            false => 1.0,
        };
        module * route * changelog * template * audience
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_terms_first_then_the_highest_bounds() {
        let order = essential_order(&[false, true, false, false], &[1.0, 0.1, 3.0, 1.0]);
        assert_eq!(order, [1, 2, 0, 3]);
    }
}
