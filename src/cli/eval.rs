//! `docfuse eval`: ranking quality on labelled questions.

use super::args::EvalArgs;
use super::output::{print_json, print_line};
use crate::engine::{DocIndex, SearchOptions};
use crate::eval::{evaluate, read_beir, read_docfuse, unmatched_labels, EvalReport};
use crate::fusion::Fusion;
use anyhow::{bail, Context};

pub fn run(a: EvalArgs) -> anyhow::Result<i32> {
    let questions = match &a.qrels {
        Some(qrels) => read_beir(&a.queries, qrels)?,
        None => read_docfuse(&a.queries)?,
    };
    if questions.is_empty() {
        bail!("no judged question in `{}`", a.queries.display());
    }
    let index = DocIndex::open(&a.index)?;
    for (id, label) in unmatched_labels(&index, &questions)? {
        eprintln!("warning: question `{id}`: label `{label}` matches no chunk of the index (a path not indexed, or a heading not found in it)");
    }
    let mut reports = Vec::new();
    for m in &a.mode {
        for (label, opts) in settings(a.sweep.as_deref())? {
            let mut opts = opts;
            opts.mode = *m;
            if let Some(f) = &a.fusion {
                let swept_fusion = a.sweep.as_deref().is_some_and(|s| {
                    ["alpha=", "mm_alpha=", "cal=", "rrf_k="]
                        .iter()
                        .any(|p| s.starts_with(p))
                });
                if !swept_fusion {
                    opts.fusion = parse_fusion(f)?;
                }
            }
            let mut r = evaluate(&index, &questions, m.name(), &opts)?;
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
        print_json(&serde_json::json!({ "queries_file": a.queries, "reports": reports }))?;
    } else {
        print_table(&reports)?;
    }
    check_floors(&a, &reports)
}

/// The search settings to evaluate: the defaults, or one per value of a `--sweep`.
fn settings(sweep: Option<&str>) -> anyhow::Result<Vec<(String, SearchOptions)>> {
    let Some(spec) = sweep else {
        return Ok(vec![(String::new(), SearchOptions::default())]);
    };
    let Some((name, values)) = spec.split_once('=') else {
        bail!("`--sweep`: expected NAME=V,V,..., got `{spec}`");
    };
    let mut out = Vec::new();
    for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let label = format!("{}={v}", name.trim());
        let num = || {
            v.parse::<f32>()
                .with_context(|| format!("`--sweep`: `{v}` is not a number"))
        };
        let fusion = match name.trim() {
            "alpha" => Some(match crate::engine::DEFAULT_FUSION {
                Fusion::Calibrated { noise, tmm, .. } => Fusion::Calibrated {
                    alpha: num()?,
                    noise,
                    tmm,
                },
                _ => Fusion::Convex { alpha: num()? },
            }),
            "mm_alpha" => Some(Fusion::Convex { alpha: num()? }),
            "cal" => {
                let parts: Vec<&str> = v.split(':').collect();
                let n = |i: usize| -> anyhow::Result<f32> {
                    parts
                        .get(i)
                        .with_context(|| format!("`--sweep cal=ALPHA:NOISE[:tmm],…`: got `{v}`"))?
                        .parse()
                        .with_context(|| format!("`{v}`: not a number"))
                };
                Some(Fusion::Calibrated {
                    alpha: n(0)?,
                    noise: n(1)?,
                    tmm: parts.get(2) == Some(&"tmm"),
                })
            }
            "rrf_k" => Some(Fusion::Rrf {
                k: num()?,
                lexical_weight: 1.0,
                vector_weight: 1.0,
            }),
            _ => None,
        };
        if let Some(fusion) = fusion {
            out.push((
                label,
                SearchOptions {
                    fusion,
                    ..SearchOptions::default()
                },
            ));
            continue;
        }
        let mut params = serde_json::to_value(crate::config::QueryParams::default())?;
        let slot = params
            .get_mut(name.trim())
            .with_context(|| format!("`--sweep`: unknown setting `{name}`"))?;
        *slot =
            serde_json::from_str(v).with_context(|| format!("`--sweep`: `{v}` is not a number"))?;
        let params = serde_json::from_value(params)
            .with_context(|| format!("`--sweep`: `{v}` does not fit `{name}`"))?;
        out.push((
            format!("{}={v}", name.trim()),
            SearchOptions {
                params,
                ..SearchOptions::default()
            },
        ));
    }
    Ok(out)
}

/// `cal:ALPHA:NOISE[:tmm]`, `mm:ALPHA` or `rrf:K`.
fn parse_fusion(spec: &str) -> anyhow::Result<Fusion> {
    let parts: Vec<&str> = spec.split(':').collect();
    let num = |i: usize| -> anyhow::Result<f32> {
        parts
            .get(i)
            .with_context(|| format!("`--fusion {spec}`: missing a number"))?
            .parse()
            .with_context(|| format!("`--fusion {spec}`: not a number"))
    };
    Ok(match parts[0] {
        "cal" => Fusion::Calibrated {
            alpha: num(1)?,
            noise: num(2)?,
            tmm: parts.get(3) == Some(&"tmm"),
        },
        "mm" => Fusion::Convex { alpha: num(1)? },
        "rrf" => Fusion::Rrf {
            k: num(1)?,
            lexical_weight: 1.0,
            vector_weight: 1.0,
        },
        other => bail!("`--fusion`: unknown method `{other}` (cal:ALPHA:NOISE, mm:ALPHA, rrf:K)"),
    })
}

fn print_table(reports: &[EvalReport]) -> anyhow::Result<()> {
    print_line("mode                    queries  nDCG@10  R@1    R@5    R@10   R@100  MRR@10  none@10  p50 ms  p95 ms")?;
    for r in reports {
        let m = &r.metrics;
        print_line(&format!(
            "{:<23} {:>7}  {:.4}   {:.3}  {:.3}  {:.3}  {:.3}  {:.4}  {:.3}    {:.2}    {:.2}",
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
