//! Shared by `index` and `refresh`: run a build with a progress bar on a terminal (a
//! progress line every few seconds off it, for CI logs and agents) and print its summary
//! (one line, or JSON).

use super::output::{print_json, print_line};
use crate::generation::Source;
use crate::write::{build_in, BuildOptions, BuildReport, FolderStore, IndexStore, Phase};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// Seconds between progress lines when stderr is not a terminal (`DOCFUSE_PROGRESS_SECS`
/// overrides; 0 prints every step).
const PLAIN_PROGRESS_SECS: u64 = 10;

/// Runs `build` with a progress bar on stderr (when stderr is not a terminal: a line when
/// a phase starts and every [`PLAIN_PROGRESS_SECS`] seconds), prints its warnings on
/// stderr, and returns its report.
pub fn run_build(
    index: &Path,
    source: &Source,
    opts: &BuildOptions,
) -> anyhow::Result<BuildReport> {
    run_build_in(&mut FolderStore::new(index), source, opts)
}

/// [`run_build`] into any store (a folder, or a database's [`crate::pgstore::PgStore`]).
pub fn run_build_in(
    store: &mut dyn IndexStore,
    source: &Source,
    opts: &BuildOptions,
) -> anyhow::Result<BuildReport> {
    let shown = store.shown();
    let bar = ProgressBar::new(0);
    let mut plain = (!std::io::stderr().is_terminal()).then(PlainProgress::new);
    let mut phase = None;
    let report = build_in(store, source, opts, &mut |p| {
        if p.phase == Phase::Waiting {
            eprintln!("waiting for another docfuse writing `{shown}`…");
            return;
        }
        if let Some(plain) = &mut plain {
            plain.update(p);
            return;
        }
        if phase != Some(p.phase) {
            phase = Some(p.phase);
            bar.reset();
            bar.set_style(style(p.phase));
        }
        bar.set_length(p.total);
        bar.set_position(p.done);
    });
    bar.finish_and_clear();
    let report = report.with_context(|| format!("cannot build the index at `{shown}`"))?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    Ok(report)
}

/// Prints a build summary: JSON, or one line (plus a line of skip counts and one per
/// partial file on stderr).
pub fn print_report(
    index: &Path,
    r: &BuildReport,
    vectors: &Vectors,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        return print_json(&report_json(index, r, vectors));
    }
    print_line(&report_line(index, r, vectors))
}

/// A build summary as JSON (`index --json`, `refresh --json`, refresh jobs, `ingest
/// --json`): the report's fields, `index` and `vectors` (the index has vectors).
pub fn report_json(index: &Path, r: &BuildReport, vectors: &Vectors) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["index"] = serde_json::json!(index);
    v["vectors"] = serde_json::json!(vectors.wanted && r.vectors_unavailable.is_none());
    v
}

/// The one-line summary of a build (after its notes on stderr: skip counts, partial
/// files, missing vectors).
pub fn report_line(index: &Path, r: &BuildReport, vectors: &Vectors) -> String {
    if !r.skipped_entries.is_empty() {
        let parts: Vec<String> = r
            .skipped_entries
            .iter()
            .map(|(k, n)| format!("{n} {}", k.name().replace('_', " ")))
            .collect();
        eprintln!(
            "skipped: {} (see `docfuse status --json`)",
            parts.join(", ")
        );
    }
    for p in &r.partial {
        eprintln!("partial: {p} (its last indexed text is kept)");
    }
    if let Some(why) = &r.vectors_unavailable {
        eprintln!("warning: no vectors for new or changed chunks: {why}\nhint: fix the model, then run `docfuse refresh` to embed them");
    }
    if r.skipped {
        // not "fresh" while chunks lack a vector: `status` would say stale
        let (state, done, tail) = match &r.vectors_unavailable {
            None => ("is fresh", "nothing to do", ""),
            Some(_) => (
                "has every file as indexed",
                "nothing re-read",
                "; its chunks without a vector stay lexical-only until the model loads (warning above)",
            ),
        };
        return format!(
            "`{}` {state}: {} documents, {} chunks, generation {} ({done}, {} ms){tail}",
            index.display(),
            r.documents,
            r.chunks,
            r.generation,
            r.elapsed_ms
        );
    }
    if r.documents == 0 {
        eprintln!("warning: no .md, .markdown, .mdx, .txt or OpenAPI spec file found under the roots: the index is empty\nhint: check the paths, or `--hidden`/`--no-ignore` if the files are hidden or ignored");
    }
    let f = &r.files;
    let c = &r.chunk_diff;
    let vec_part = if vectors.wanted {
        let pending = if r.pending > 0 {
            format!(", {} pending", r.pending)
        } else {
            String::new()
        };
        format!(
            "; {} embedded, {} reused{pending}{}",
            r.embedded,
            r.reused,
            why_embedded(r)
        )
    } else {
        "; lexical only".into()
    };
    let touched = if f.touched > 0 {
        format!(" ({} touched, same content)", f.touched)
    } else {
        String::new()
    };
    format!(
        "indexed {} into {} in {} ms → `{}` (generation {}); files +{} ~{} -{}{touched}; chunks +{} ~{} ={} -{}{vec_part}{}",
        count(r.documents, "document"),
        count(r.chunks, "chunk"),
        r.elapsed_ms,
        index.display(),
        r.generation,
        f.added,
        f.changed,
        f.removed,
        c.added,
        c.changed,
        c.unchanged,
        c.removed,
        match r.warnings.len() {
            0 => String::new(),
            n => format!("; {n} warning(s)"),
        }
    )
}

/// Progress as plain lines on stderr: `embedding 340/1594 chunks (21 %), 26.3/s, about
/// 48 s left`, when a phase starts and then at most every interval.
struct PlainProgress {
    every: Duration,
    phase: Option<Phase>,
    started: Instant,
    last: Instant,
}

impl PlainProgress {
    fn new() -> Self {
        let secs = std::env::var("DOCFUSE_PROGRESS_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(PLAIN_PROGRESS_SECS);
        let now = Instant::now();
        PlainProgress {
            every: Duration::from_secs(secs),
            phase: None,
            started: now,
            last: now,
        }
    }

    fn update(&mut self, p: crate::write::Progress) {
        let now = Instant::now();
        let unit = if p.phase == Phase::Embedding {
            "chunk"
        } else {
            "document"
        };
        let verb = if p.phase == Phase::Embedding {
            "embedding"
        } else {
            "indexing"
        };
        if self.phase != Some(p.phase) {
            self.phase = Some(p.phase);
            self.started = now;
            self.last = now;
            eprintln!("{verb} {}…", count(p.total, unit));
            return;
        }
        if now.duration_since(self.last) < self.every || p.total == 0 {
            return;
        }
        self.last = now;
        let secs = now.duration_since(self.started).as_secs_f64().max(1e-3);
        let rate = p.done as f64 / secs;
        let left = if rate > 0.0 {
            format!(
                ", about {:.0} s left",
                (p.total.saturating_sub(p.done)) as f64 / rate
            )
        } else {
            String::new()
        };
        eprintln!(
            "{verb} {}/{} {unit}s ({} %), {}{left}",
            p.done,
            p.total,
            p.done * 100 / p.total,
            rate_text(rate, unit)
        );
    }
}

/// `1 document`, `3 documents`.
fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn style(phase: Phase) -> ProgressStyle {
    let template = match phase {
        Phase::Embedding => "{spinner} embedding {pos}/{len} chunks, {rate}, eta {eta} {wide_bar}",
        _ => "{spinner} indexing {pos}/{len} documents [{elapsed}] {wide_bar}",
    };
    ProgressStyle::with_template(template)
        .map(|s| {
            s.with_key(
                "rate",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&rate_text(state.per_sec(), "chunk"));
                },
            )
        })
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A rate for people: `36 chunks/s`, `1.5 chunks/s` (one decimal under 10 only);
/// `-` before there is one.
fn rate_text(per_sec: f64, unit: &str) -> String {
    match per_sec {
        r if !r.is_finite() || r <= 0.0 => format!("- {unit}s/s"),
        r if r < 10.0 => format!("{r:.1} {unit}s/s"),
        r => format!("{r:.0} {unit}s/s"),
    }
}

/// Whether a run wants vectors, and the embedder it loaded (or why it could not).
pub struct Vectors {
    pub wanted: bool,
    pub embedder: Option<Box<dyn crate::embed::Embedder>>,
    pub unavailable: Option<String>,
}

impl Vectors {
    /// Loads the default embedder when vectors are `wanted`; when it cannot be loaded,
    /// says why on stderr and goes on: the build records the reason, keeps the vectors
    /// it has (by hash) and a later refresh that can load the model fills in the rest.
    pub fn load(wanted: bool) -> Vectors {
        if !wanted {
            return Vectors {
                wanted,
                embedder: None,
                unavailable: None,
            };
        }
        match crate::embed::load_default_embedder() {
            Ok(e) => Vectors {
                wanted,
                embedder: Some(e),
                unavailable: None,
            },
            Err(e) => {
                let why = match e {
                    crate::Error::VectorsUnavailable(w) => w,
                    other => other.to_string(),
                };
                let first = why.lines().next().unwrap_or_default().to_string();
                eprintln!("warning: vector search unavailable: {why}\nwarning: indexing lexically; vectors follow once the model loads (`docfuse refresh`)");
                Vectors {
                    wanted,
                    embedder: None,
                    unavailable: Some(first),
                }
            }
        }
    }
}

/// ` (the embedder changed: A → B)` when a build embedded every chunk again for that
/// reason, else empty.
pub(super) fn why_embedded(r: &crate::write::BuildReport) -> String {
    r.embedder_changed
        .as_ref()
        .map_or(String::new(), |why| format!(" ({why})"))
}

#[cfg(test)]
mod rate_tests {
    #[test]
    fn a_rate_has_no_more_digits_than_it_means() {
        assert_eq!(
            super::rate_text(1_040_751.364_6, "chunk"),
            "1040751 chunks/s"
        );
        assert_eq!(super::rate_text(36.4, "chunk"), "36 chunks/s");
        assert_eq!(super::rate_text(1.54, "document"), "1.5 documents/s");
        assert_eq!(super::rate_text(f64::NAN, "chunk"), "- chunks/s");
    }
}
