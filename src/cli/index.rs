//! `docfuse index`: build the index (on an existing index: refresh the given roots).

use super::args::IndexArgs;
use super::build_run::{print_report, Vectors};
use crate::config::{merge_json, Field, IndexConfig};
use crate::generation::Source;
use crate::store::Existing;
use anyhow::{bail, Context};
use serde_json::{json, Value};

pub fn run(a: IndexArgs) -> anyhow::Result<i32> {
    if !super::pg::is_db(&a.index) {
        return run_at(a, None);
    }
    // roots checked before anything is written to the database
    check_sources(&Source::Roots(a.roots.clone()))?;
    if a.jsonl.is_some() {
        bail!("an index of a JSONL file cannot be stored in PostgreSQL yet\nhint: index folders of documents into it, or use a folder for --index");
    }
    let run = a.run.clone();
    super::pg::write_command(a, |a| &mut a.index, &run, run_at)
}

/// `index` on the folder `a.index` (a database's writer folder when `db` is given).
fn run_at(a: IndexArgs, db: Option<&super::pg::DbWriter>) -> anyhow::Result<i32> {
    let overrides = overrides_of(&a)?;
    let config = IndexConfig::with_overrides(&overrides)?;
    let source = match &a.jsonl {
        Some(f) => Source::Jsonl(f.clone()),
        None => Source::Roots(a.roots.clone()),
    };
    check_sources(&source)?;
    // A pack is fetched and verified first; it is unpacked under the writer lock.
    let pack = match &a.pack {
        Some(p) => Some(super::pack::fetch_verified(
            p,
            (a.max_pack_bytes, a.max_packs_total_bytes),
            &a.allow_pack_host,
            crate::pack::Limits::default().timeout,
        )?),
        None => None,
    };
    if let Some(p) = &pack {
        let dir = super::pack::dir_of(&a.index, p);
        if super::pack::drop_roots(&a.index, &a.run.drop_root).contains(&dir) {
            anyhow::bail!(
                "the pack `{}` is both ingested (--pack) and dropped (--drop-root)\nhint: give one of them",
                p.manifest.repo
            );
        }
    }
    let source = match (source, &pack) {
        (Source::Roots(mut r), Some(p)) => {
            r.push(super::pack::dir_of(&a.index, p));
            Source::Roots(r)
        }
        (s, _) => s,
    };
    let vectors = Vectors::load(!a.no_embeddings);
    let vectors = match db {
        Some(w) => w.checked(vectors)?,
        None => vectors,
    };
    let mut opts = a.run.build_options(config, overrides, &vectors);
    opts.drop_roots =
        super::pg::still_to_drop(db, super::pack::drop_roots(&a.index, &a.run.drop_root));
    let from = a.pack.as_deref().map(super::pack::source_of);
    let with_source = pack.as_ref().zip(from.as_deref());
    let steps = super::pack::PackSteps::new(&a.index, with_source, &a.run.drop_root);
    let report =
        super::pack::build_with(&steps, opts, |o| super::pg::build(db, &a.index, &source, o))?;
    print_report(&super::pg::shown(db, &a.index), &report, &vectors, a.json)?;
    Ok(super::output::build_exit(&report))
}

/// Fails early, before a model is loaded, when a root or the JSONL file is missing.
fn check_sources(source: &Source) -> anyhow::Result<()> {
    let paths = match source {
        Source::Roots(r) => r.clone(),
        Source::Jsonl(f) => vec![f.clone()],
    };
    for p in paths {
        std::fs::metadata(&p).map_err(|source| crate::Error::Root {
            path: p.clone(),
            source,
        })?;
    }
    Ok(())
}

/// The settings given explicitly: those recorded by an earlier `index` of this folder,
/// then this run's flags (which win).
fn overrides_of(a: &IndexArgs) -> anyhow::Result<Value> {
    let mut over = match Existing::load(&a.index) {
        Ok(Existing::Current(m)) => m.config_overrides.clone(),
        Ok(Existing::Older {
            config_overrides, ..
        }) => config_overrides,
        _ => Value::Null,
    };
    if over.is_null() {
        over = json!({});
    }
    merge_json(&mut over, &flags(a)?);
    Ok(over)
}

/// This run's flags as configuration overrides.
fn flags(a: &IndexArgs) -> anyhow::Result<Value> {
    let mut f = json!({});
    let mut set = |v: Value| merge_json(&mut f, &v);
    if let Some(n) = a.max_tokens {
        set(json!({"chunker": {"max_tokens": n}}));
    }
    if let Some(k1) = a.k1 {
        set(json!({"bm25f": {"k1": k1}}));
    }
    if let Some(b) = a.b {
        set(json!({"bm25f": {"b": b}}));
    }
    if let Some(n) = a.hnsw_min_vectors {
        set(json!({"hnsw_min_vectors": n}));
    }
    if let Some(n) = a.max_file_bytes {
        set(json!({"max_file_bytes": n}));
    }
    if a.hidden {
        set(json!({"walk": {"hidden": true}}));
    }
    if a.no_ignore {
        set(json!({"walk": {"no_ignore": true}}));
    }
    if a.sources {
        set(json!({"walk": {"sources": true}}));
    }
    if let Some(spec) = &a.weights {
        let mut w = IndexConfig::default().bm25f.weights;
        for pair in spec.split(',').filter(|p| !p.trim().is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                bail!("`--weights`: expected FIELD=W, got `{pair}`");
            };
            let field = Field::ALL
                .into_iter()
                .find(|f| f.name() == name.trim())
                .with_context(|| format!("`--weights`: unknown field `{name}` (fields: title, headings, path, symbols, aliases, summary, body, code)"))?;
            w[field.index()] = value
                .trim()
                .parse()
                .with_context(|| format!("`--weights`: `{value}` is not a number"))?;
        }
        set(json!({"bm25f": {"weights": w}}));
    }
    Ok(f)
}
