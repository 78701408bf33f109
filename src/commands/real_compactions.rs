//! `calibrate`'s account of the source agent's own compactions: what each
//! removed, what the agent used and fetched again afterwards and what that
//! cost; the loss measure held against those re-fetches, per source and
//! pooled; the re-fetch model refitted on these logs; and each source's
//! model predicting the others' re-fetches.

use std::io::{self, Write};

use comfy_table::Cell;
use serde::Serialize;

use crate::format::{money, or_none, percent, right, signed_percent, table, NONE};
use crate::loss::real::{observations, RealCompaction, Scores, Tally};
use crate::loss::refetch::{Model, ResultKind, MEASURED_ON, MODEL};
use crate::screen::Table;

/// Name of the pooled group in the tables.
pub const POOLED: &str = "pooled";

/// Everything `calibrate` says about real compactions.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct RealReport {
    pub(crate) compactions: Vec<RealCompaction>,
    /// Per source, then pooled.
    pub(crate) validation: Vec<Validation>,
    /// The re-fetch model refitted on these logs, and the one replays use.
    pub(crate) model: Model,
    pub(crate) bundled_model: Model,
    pub(crate) bundled_measured_on: &'static str,
    /// Per pair of sources: the model of one predicting the other.
    pub(crate) cross_source: Vec<CrossSource>,
}

/// One group's validation figures.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Validation {
    #[serde(flatten)]
    pub(crate) tally: Tally,
    /// `needed again` with the offline stand-in summary, with the real
    /// summary's text visible, and "the summary mentions it".
    pub(crate) standin: Scores,
    pub(crate) with_summary: Scores,
    /// `still needed`: the measure improved on these figures.
    pub(crate) still_needed: Scores,
    pub(crate) mentioned: Scores,
    pub(crate) summary_retention: Option<f64>,
}

/// A model fitted on `fitted_on` predicting the re-fetches of `predicted`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CrossSource {
    pub(crate) fitted_on: String,
    pub(crate) fit_compactions: u64,
    pub(crate) predicted: String,
    pub(crate) expected: f64,
    pub(crate) actual: usize,
    /// `(expected − actual) / actual`.
    pub(crate) relative_error: Option<f64>,
}

fn validation(tally: Tally) -> Validation {
    Validation {
        standin: tally.scores(tally.standin),
        with_summary: tally.scores(tally.with_summary),
        still_needed: tally.scores(tally.still_needed),
        mentioned: tally.scores(tally.mentioned),
        summary_retention: tally.retention(),
        tally,
    }
}

/// The report of these compactions (every compaction of the sessions
/// read, in session order).
pub(crate) fn build(compactions: Vec<RealCompaction>) -> RealReport {
    let mut sources: Vec<String> = Vec::new();
    for c in &compactions {
        if !sources.contains(&c.source) {
            sources.push(c.source.clone());
        }
    }
    let of = |s: &str| -> Vec<RealCompaction> {
        compactions
            .iter()
            .filter(|c| c.source == s)
            .cloned()
            .collect()
    };
    // The compactions a fit rests on: those that removed something.
    // The agent's own misfires are left out, as the validation leaves them.
    let fit = |rows: &[RealCompaction]| {
        let rows: Vec<RealCompaction> = rows.iter().filter(|c| !c.misfire).cloned().collect();
        Model::fit(
            observations(&rows),
            rows.iter().filter(|c| c.results > 0).count() as u64,
        )
    };
    let model = fit(&compactions);
    let mut validation_rows = Vec::new();
    let mut groups: Vec<(String, Vec<RealCompaction>)> =
        sources.iter().map(|s| (s.clone(), of(s))).collect();
    if sources.len() > 1 {
        groups.push((POOLED.to_string(), compactions.clone()));
    }
    for (name, rows) in &groups {
        let mut t = Tally::new(name);
        for c in rows {
            t.add(c);
            t.add_expected(c, &model);
        }
        validation_rows.push(validation(t));
    }
    let mut cross = Vec::new();
    for a in &sources {
        let rows_a = of(a);
        let m = fit(&rows_a);
        for b in sources.iter().filter(|b| *b != a) {
            let rows_b: Vec<RealCompaction> = of(b).into_iter().filter(|c| !c.misfire).collect();
            let expected: f64 = rows_b
                .iter()
                .map(|c| m.expected(c.removed.iter().map(|r| (r.kind, r.still_needed))))
                .sum();
            let actual: usize = rows_b.iter().map(|c| c.refetched).sum();
            cross.push(CrossSource {
                fitted_on: a.clone(),
                fit_compactions: m.compactions,
                predicted: b.clone(),
                expected,
                actual,
                relative_error: (actual > 0).then(|| (expected - actual as f64) / actual as f64),
            });
        }
    }
    RealReport {
        compactions,
        validation: validation_rows,
        model,
        bundled_model: MODEL,
        bundled_measured_on: MEASURED_ON,
        cross_source: cross,
    }
}

fn times(x: Option<f64>) -> String {
    x.map_or(NONE.into(), |v| format!("{v:.2}×"))
}

/// The printed account: each compaction, the loss measure against the
/// re-fetches, the refitted model, and each source's model predicting the
/// others.
pub(crate) fn write_text(out: &mut dyn Write, r: &RealReport) -> io::Result<()> {
    if r.compactions.is_empty() {
        return writeln!(out, "real compactions: none in these sessions\n");
    }
    writeln!(
        out,
        "real compactions: {} (the source agent's own), what each removed and what the agent did after it",
        r.compactions.len()
    )?;
    writeln!(out, "{}", compactions_table(&r.compactions))?;
    writeln!(
        out,
        "re-fetched: the same call again after the compaction (a file read: the same path and an overlapping range of lines, unless the file was edited or written since the first read; not a retry after an error, nor a write or an edit made again)\n"
    )?;
    let misfires = r.compactions.iter().filter(|c| c.misfire).count();
    if misfires > 0 {
        writeln!(
            out,
            "{misfires} of the agent's automatic compactions came within one request of its previous one (or of the session's start): its own misfires, left out of what follows\n"
        )?;
    }

    writeln!(
        out,
        "the loss measure against the real re-fetches (lift: re-fetch rate of the flagged / of the rest; recall: re-fetches flagged; precision: flags re-fetched)"
    )?;
    writeln!(out, "{}", validation_table(&r.validation))?;
    writeln!(
        out,
        "summary retention: the share of the removed results' tokens used later that the real summary holds (the replay's stand-in assumes 0)\n"
    )?;

    writeln!(
        out,
        "re-fetch model refitted on these logs: {} compactions, {} removed results (replays use the bundled one, {} compactions: src/loss/refetch.rs)",
        r.model.compactions,
        r.model.cells.iter().map(|c| c.removed).sum::<u64>(),
        r.bundled_model.compactions
    )?;
    writeln!(out, "{}", model_table(&r.model, &r.bundled_model))?;
    if !r.cross_source.is_empty() {
        writeln!(
            out,
            "\nthe model fitted on one source predicting the re-fetches of another"
        )?;
        writeln!(out, "{}", cross_source_table(&r.cross_source))?;
    }
    writeln!(out)
}

fn compactions_table(compactions: &[RealCompaction]) -> Table {
    let mut t = table(vec![
        "source",
        "session",
        "#",
        "kind",
        "request",
        "results removed",
        "summary mentions",
        "used after",
        "needed again (stand-in / summary)",
        "re-fetched",
        "re-fetch cost (requests, tokens, $)",
    ]);
    for c in compactions {
        t.add_row(vec![
            Cell::new(&c.source),
            Cell::new(&c.session),
            right(c.number),
            Cell::new(&c.kind),
            right(c.request),
            right(n(c.results)),
            right(n(c.mentioned)),
            right(n(c.used_after)),
            right(format!("{} / {}", n(c.flagged), n(c.flagged_with_summary))),
            right(n(c.refetched)),
            right(format!(
                "{}, {}, {}",
                n(c.refetch_requests),
                n(c.refetch_tokens),
                money(c.refetch_dollars)
            )),
        ]);
    }
    t
}

/// A count as every table writes it, with thousands separators.
fn n(v: impl TryInto<u64>) -> String {
    crate::format::whole(v.try_into().unwrap_or(u64::MAX))
}

/// Per source (and pooled), one row per measure: the source's totals on
/// its first row only.
fn validation_table(validation: &[Validation]) -> Table {
    let mut t = table(vec![
        "source",
        "compactions",
        "removed",
        "re-fetched",
        "flagged by",
        "flagged",
        "lift",
        "recall",
        "precision",
        "summary retention",
        "re-fetch $",
    ]);
    for v in validation {
        for (k, (name, s)) in [
            ("needed again, stand-in", &v.standin),
            ("needed again, real summary", &v.with_summary),
            ("still needed", &v.still_needed),
            ("summary mentions it", &v.mentioned),
        ]
        .into_iter()
        .enumerate()
        {
            let first = k == 0;
            let blank = |x: String| if first { x } else { String::new() };
            t.add_row(vec![
                Cell::new(blank(v.tally.source.clone())),
                right(blank(n(v.tally.compactions))),
                right(blank(n(v.tally.removed))),
                right(blank(n(v.tally.refetched))),
                Cell::new(name),
                right(n(s.flagged)),
                right(times(s.lift)),
                right(or_none(s.recall, percent)),
                right(or_none(s.precision, percent)),
                right(blank(or_none(v.summary_retention, percent))),
                right(blank(money(v.tally.refetch_dollars))),
            ]);
        }
    }
    t
}

/// The refitted model's cells beside the rates replays use.
fn model_table(model: &Model, bundled: &Model) -> Table {
    let mut t = table(vec![
        "kind",
        "still needed",
        "removed",
        "re-fetched",
        "rate",
        "used",
        "bundled rate used",
    ]);
    for kind in ResultKind::ALL {
        for flagged in [false, true] {
            let Some(c) = model
                .cells
                .iter()
                .find(|c| c.kind == kind && c.flagged == flagged)
            else {
                continue;
            };
            t.add_row(vec![
                Cell::new(kind.as_str()),
                Cell::new(if flagged { "yes" } else { "no" }),
                right(n(c.removed)),
                right(n(c.refetched)),
                right(or_none((c.removed > 0).then(|| c.rate()), percent)),
                right(percent(model.probability(kind, flagged))),
                right(percent(bundled.probability(kind, flagged))),
            ]);
        }
    }
    t
}

fn cross_source_table(cross: &[CrossSource]) -> Table {
    let mut t = table(vec![
        "fitted on",
        "its compactions",
        "predicts",
        "expected",
        "real",
        "error",
    ]);
    for c in cross {
        t.add_row(vec![
            Cell::new(&c.fitted_on),
            right(c.fit_compactions),
            Cell::new(&c.predicted),
            right(format!("{:.1}", c.expected)),
            right(c.actual),
            right(or_none(c.relative_error, signed_percent)),
        ]);
    }
    t
}
