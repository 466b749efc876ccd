//! A handoff's `related` areas: the folders whose files the target imports, and those
//! whose files import it, strongest first (most imports), each with one import that
//! proves the relation (`path:line` where it is written).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::graph::GraphContext;
use crate::graph::RelationKind;

/// Most related areas listed per direction.
pub const MAX_RELATED: usize = 5;

/// One area related to a handoff's target by imports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelatedArea {
    /// The folder, root-relative (`.` for the root).
    pub area: String,
    /// `imports` (the target imports files of the area) or `imported_by` (files of the
    /// area import the target).
    pub direction: &'static str,
    /// How many imports join them.
    pub imports: usize,
    /// The first import that proves it: `path:line` where it is written.
    pub evidence: String,
    /// The file it names on the other side.
    pub file: String,
}

/// The areas related by imports to the documents `inside` (snapshot order).
pub(super) fn related_areas(ctx: &GraphContext, inside: &BTreeSet<usize>) -> Vec<RelatedArea> {
    // (direction, area) → (count, evidence, file)
    let mut by: BTreeMap<(&'static str, String), (usize, String, String)> = BTreeMap::new();
    for r in &ctx.graph.relations {
        if r.kind != RelationKind::Imports {
            continue;
        }
        let (from_in, to_in) = (
            inside.contains(&(r.from as usize)),
            inside.contains(&(r.to as usize)),
        );
        let (direction, other) = match (from_in, to_in) {
            (true, false) => ("imports", r.to),
            (false, true) => ("imported_by", r.from),
            _ => continue,
        };
        let file = ctx.path(other);
        let area = match file.rsplit_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => ".".to_string(),
        };
        let slot = by
            .entry((direction, area))
            .or_insert_with(|| (0, format!("{}:{}", ctx.path(r.from), r.line), file.clone()));
        slot.0 += 1;
    }
    let mut out: Vec<RelatedArea> = by
        .into_iter()
        .map(
            |((direction, area), (imports, evidence, file))| RelatedArea {
                area,
                direction,
                imports,
                evidence,
                file,
            },
        )
        .collect();
    out.sort_by(|a, b| {
        (a.direction, std::cmp::Reverse(a.imports), &a.area).cmp(&(
            b.direction,
            std::cmp::Reverse(b.imports),
            &b.area,
        ))
    });
    let mut kept: Vec<RelatedArea> = Vec::new();
    for r in out {
        if kept.iter().filter(|k| k.direction == r.direction).count() < MAX_RELATED {
            kept.push(r);
        }
    }
    kept
}
