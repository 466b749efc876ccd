//! `docfuse eval`: ranking quality on labelled questions.

use super::args::EvalArgs;
use super::output::{print_json, print_line};
use crate::eval::{evaluate_at, read_beir, read_docfuse, unjudged, unmatched_labels, EvalReport};
use crate::fusion::Fusion;
use crate::read::{DocIndex, SearchOptions};
use anyhow::{bail, Context};

pub fn run(a: EvalArgs) -> anyhow::Result<i32> {
    let questions = match &a.qrels {
        Some(qrels) => read_beir(&a.queries, qrels)?,
        None => read_docfuse(&a.queries)?,
    };
    let left_out = unjudged(&questions);
    for id in &left_out {
        eprintln!("warning: question `{id}` has no relevant label (none with grade 1 or more): it is left out of the metrics");
    }
    if questions.len() == left_out.len() {
        bail!(
            "no judged question in `{}`: give each question at least one `relevant` label with a path and heading",
            a.queries.display()
        );
    }
    let index = DocIndex::open(&a.index)?;
    for (id, label) in unmatched_labels(&index, &questions)? {
        eprintln!("warning: question `{id}`: label `{label}` matches no chunk of the index (a path not indexed, or a heading not found in it)");
    }
    let fusion = a.fusion.as_deref().map(parse_fusion).transpose()?;
    let sweep = settings(a.sweep.as_deref())?;
    if fusion.is_some() && sweep.iter().any(|(_, _, swept)| *swept) {
        bail!("`--fusion` and a fusion `--sweep` both set the fusion: give one of them");
    }
    let mut reports = Vec::new();
    for m in &a.mode {
        for (label, opts, _) in &sweep {
            let mut opts = *opts;
            opts.mode = *m;
            if let Some(f) = fusion {
                opts.fusion = f;
            }
            let mut r = evaluate_at(&index, &questions, m.name(), &opts, a.depth as usize)?;
            if !label.is_empty() {
                r.mode = format!("{} {label}", m.name());
            }
            reports.push(r);
        }
    }
    if let Some(path) = &a.run {
        let run: String = reports
            .iter()
            .map(|r| r.trec_run(&r.mode.replace(' ', "_")))
            .collect();
        std::fs::write(path, run).with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    if !a.per_query {
        for r in &mut reports {
            r.per_query.clear();
        }
    }
    if a.json {
        print_json(&serde_json::json!({
            "queries_file": a.queries,
            "unjudged": left_out,
            "reports": reports
        }))?;
    } else {
        print_table(&reports)?;
    }
    check_floors(&a, &reports)
}

/// The search settings to evaluate: the defaults, or one per value of a `--sweep`; each
/// with its label and whether the sweep sets the fusion.
fn settings(sweep: Option<&str>) -> anyhow::Result<Vec<(String, SearchOptions, bool)>> {
    let Some(spec) = sweep else {
        return Ok(vec![(String::new(), SearchOptions::default(), false)]);
    };
    let Some((name, values)) = spec.split_once('=') else {
        bail!("`--sweep`: expected NAME=V,V,..., got `{spec}`");
    };
    let mut out = Vec::new();
    for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let label = format!("{}={v}", name.trim());
        let (alpha, noise) = match crate::read::DEFAULT_FUSION {
            Fusion::Calibrated { alpha, noise, .. } => (alpha, noise),
            _ => (0.45, 0.5),
        };
        let fusion = match name.trim() {
            "alpha" => Some(format!("cal:{v}:{noise}")),
            "noise" => Some(format!("cal:{alpha}:{v}")),
            "cal" => Some(format!("cal:{v}")),
            "mm_alpha" => Some(format!("mm:{v}")),
            "rrf_k" => Some(format!("rrf:{v}")),
            _ => None,
        }
        .map(|spec| parse_fusion(&spec))
        .transpose()
        .with_context(|| format!("`--sweep {label}`"))?;
        if let Some(fusion) = fusion {
            out.push((
                label,
                SearchOptions {
                    fusion,
                    ..SearchOptions::default()
                },
                true,
            ));
            continue;
        }
        if name.trim() == "floor" {
            bail!("`--sweep floor`: eval judges the whole ranking, with no floor (`search --floor` cuts a list)");
        }
        let mut params = serde_json::to_value(crate::config::QueryParams::default())?;
        let slot = params
            .get_mut(name.trim())
            .with_context(|| format!("`--sweep`: unknown setting `{name}`"))?;
        *slot = serde_json::from_str(v).with_context(|| {
            format!("`--sweep`: `{v}` is not a value of `{name}` (a number, or true/false)")
        })?;
        let params = serde_json::from_value(params)
            .with_context(|| format!("`--sweep`: `{v}` does not fit `{name}`"))?;
        out.push((
            label,
            SearchOptions {
                params,
                ..SearchOptions::default()
            },
            false,
        ));
    }
    Ok(out)
}

/// `cal:ALPHA:NOISE[:tmm]`, `mm:ALPHA` or `rrf:K`: α in [0, 1], NOISE a finite number of
/// standard deviations, K > 0.
fn parse_fusion(spec: &str) -> anyhow::Result<Fusion> {
    let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
    let num = |i: usize| -> anyhow::Result<f32> {
        let x: f32 = parts
            .get(i)
            .with_context(|| format!("`{spec}`: missing a number"))?
            .parse()
            .with_context(|| format!("`{spec}`: not a number"))?;
        anyhow::ensure!(x.is_finite(), "`{spec}`: not a finite number");
        Ok(x)
    };
    let alpha = |i: usize| -> anyhow::Result<f32> {
        let a = num(i)?;
        anyhow::ensure!((0.0..=1.0).contains(&a), "`{spec}`: α must be in [0, 1]");
        Ok(a)
    };
    Ok(match parts[0] {
        "cal" => Fusion::Calibrated {
            alpha: alpha(1)?,
            noise: num(2)?,
            tmm: parts.get(3) == Some(&"tmm"),
        },
        "mm" => Fusion::Convex { alpha: alpha(1)? },
        "rrf" => Fusion::Rrf {
            k: {
                let k = num(1)?;
                anyhow::ensure!(k > 0.0, "`{spec}`: k must be above 0");
                k
            },
            lexical_weight: 1.0,
            vector_weight: 1.0,
        },
        other => bail!("`--fusion`: unknown method `{other}` (cal:ALPHA:NOISE, mm:ALPHA, rrf:K)"),
    })
}

fn print_table(reports: &[EvalReport]) -> anyhow::Result<()> {
    // the mode column as wide as its longest label (`hybrid section_weight=0.75`)
    let w = reports
        .iter()
        .map(|r| r.mode.chars().count())
        .max()
        .unwrap_or(0)
        .max(23);
    print_line(&format!(
        "{:<w$} queries  nDCG@10  R@1    R@5    R@10   R@100  MRR@10  none@10  p50 ms  p95 ms",
        "mode"
    ))?;
    for r in reports {
        let m = &r.metrics;
        print_line(&format!(
            "{:<w$} {:>7}  {:.4}   {:.3}  {:.3}  {:.3}  {:.3}  {:.4}  {:.3}  {:>6.2}  {:>6.2}",
            r.mode,
            r.queries,
            m.ndcg10,
            m.recall1,
            m.recall5,
            m.recall10,
            m.recall100,
            m.mrr10,
            m.no_hit10,
            r.latency_ms_median,
            r.latency_ms_p95
        ))?;
        for q in &r.per_query {
            print_line(&format!(
                "  {:<12} first relevant at {:<5} nDCG@10 {:.3}  {}",
                q.id,
                q.first_relevant_rank.map_or("-".into(), |r| r.to_string()),
                q.metrics.ndcg10,
                q.query
            ))?;
        }
    }
    Ok(())
}

fn check_floors(a: &EvalArgs, reports: &[EvalReport]) -> anyhow::Result<i32> {
    for r in reports {
        if let Some(min) = a.min_recall5 {
            if r.metrics.recall5 < min {
                bail!(
                    "{}: recall@5 {:.4} is below the floor {min}",
                    r.mode,
                    r.metrics.recall5
                );
            }
        }
        if let Some(min) = a.min_mrr10 {
            if r.metrics.mrr10 < min {
                bail!(
                    "{}: MRR@10 {:.4} is below the floor {min}",
                    r.mode,
                    r.metrics.mrr10
                );
            }
        }
    }
    Ok(super::EXIT_OK)
}
