//! `calibrate --validate`: each part of the price model held against sources
//! it was not fitted on. Every source in turn is treated as unseen: the
//! fitted parts (the fixed prompt, the account's shares) are fitted on the
//! other sources, and the held-out source's bill error is measured with the
//! defaults and with each part switched the other way. A part whose
//! switching lowers the held-out error is one the defaults should not carry
//! as they are.

use rayon::prelude::*;
use serde::Serialize;

use super::recorded;
use crate::cost::bill::{self, Input, Part, Parts, LONG_SESSION, LONG_SESSION_BOUND};
use crate::cost::session::Settings;
use crate::stats::median_of;
use crate::transcript::session_file::SessionFile;

/// One source held out under one variant of the model.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) source: String,
    /// The part switched from its default; `None`: the defaults.
    pub(crate) part: Option<&'static str>,
    /// Whether that part is on in this variant.
    pub(crate) on: bool,
    pub(crate) sessions: usize,
    /// Of |per-session error|.
    pub(crate) median_error: f64,
    /// Error on the source's total.
    pub(crate) total_error: f64,
    /// Sessions of [`LONG_SESSION`] requests or more, and of them those
    /// within [`LONG_SESSION_BOUND`].
    pub(crate) long_sessions: usize,
    pub(crate) long_within_bound: usize,
}

/// What switching one part does, over every held-out source.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct PartVerdict {
    pub(crate) part: &'static str,
    pub(crate) default_on: bool,
    /// Held-out sources whose median error is lower, higher, with the part
    /// switched from its default.
    pub(crate) sources_better_switched: usize,
    pub(crate) sources_worse_switched: usize,
    /// The mean over sources of the held-out median error: with the
    /// defaults, and with the part switched.
    pub(crate) mean_median_default: f64,
    pub(crate) mean_median_switched: f64,
    /// The same of |total error|.
    pub(crate) mean_total_default: f64,
    pub(crate) mean_total_switched: f64,
    /// Whether the defaults are supported: switching the part does not
    /// lower the mean held-out median error.
    pub(crate) supported: bool,
}

/// The validation: every row, and the verdict per part.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Validation {
    pub(crate) sources: Vec<String>,
    pub(crate) rows: Vec<Row>,
    pub(crate) parts: Vec<PartVerdict>,
}

/// Holds each of `sources` (a name and its sessions' inputs) out in turn,
/// under `base` and with each part switched. `None` with fewer than two
/// sources: nothing can be held out.
pub(crate) fn validate(
    sources: &[(String, Vec<Input>)],
    base: &Settings,
    window: &(dyn Fn(&SessionFile) -> u64 + Sync),
) -> Option<Validation> {
    if sources.len() < 2 {
        return None;
    }
    let variants: Vec<(Option<Part>, Settings)> = std::iter::once((None, *base))
        .chain(Part::ALL.into_iter().map(|p| {
            let parts: Parts = base.parts.with(p, !base.parts.on(p));
            (Some(p), Settings { parts, ..*base })
        }))
        .collect();
    let jobs: Vec<(usize, usize)> = (0..sources.len())
        .flat_map(|s| (0..variants.len()).map(move |v| (s, v)))
        .collect();
    let rows: Vec<Row> = jobs
        .par_iter()
        .map(|&(s, v)| {
            let (name, held) = &sources[s];
            let (part, settings) = &variants[v];
            let others: Vec<Input> = sources
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != s)
                .flat_map(|(_, (_, i))| i.iter().cloned())
                .collect();
            let fit = bill::fit(&others, &settings.bill());
            let views = bill::read_fitted(held, &settings.bill(), &fit);
            let checks = recorded::check(held, views, settings, window, &|_| String::new()).bill;
            row(name, *part, settings, &checks)
        })
        .collect();
    let parts = Part::ALL
        .into_iter()
        .map(|p| verdict(p, base, &rows))
        .collect();
    Some(Validation {
        sources: sources.iter().map(|(n, _)| n.clone()).collect(),
        rows,
        parts,
    })
}

fn row(
    source: &str,
    part: Option<Part>,
    settings: &Settings,
    checks: &[bill::SessionCheck],
) -> Row {
    let mut errors: Vec<f64> = checks
        .iter()
        .map(|c| c.error.abs())
        .filter(|e| e.is_finite())
        .collect();
    let recorded: f64 = checks.iter().map(|c| c.recorded_usd).sum();
    let predicted: f64 = checks.iter().map(|c| c.predicted_usd).sum();
    let long: Vec<&bill::SessionCheck> = checks
        .iter()
        .filter(|c| c.requests >= LONG_SESSION)
        .collect();
    Row {
        source: source.to_string(),
        part: part.map(Part::as_str),
        on: part.is_none_or(|p| settings.parts.on(p)),
        sessions: checks.len(),
        median_error: median_of(&mut errors).unwrap_or(0.0),
        total_error: bill::relative(predicted, recorded),
        long_sessions: long.len(),
        long_within_bound: long
            .iter()
            .filter(|c| c.error.abs() <= LONG_SESSION_BOUND)
            .count(),
    }
}

fn verdict(p: Part, base: &Settings, rows: &[Row]) -> PartVerdict {
    let name = p.as_str();
    let defaults: Vec<&Row> = rows.iter().filter(|r| r.part.is_none()).collect();
    let (mut better, mut worse) = (0, 0);
    let (mut md, mut ms, mut td, mut ts) = (0.0, 0.0, 0.0, 0.0);
    for d in &defaults {
        let Some(s) = rows
            .iter()
            .find(|r| r.part == Some(name) && r.source == d.source)
        else {
            continue;
        };
        better += usize::from(s.median_error < d.median_error - 1e-12);
        worse += usize::from(s.median_error > d.median_error + 1e-12);
        md += d.median_error;
        ms += s.median_error;
        td += d.total_error.abs();
        ts += s.total_error.abs();
    }
    let n = defaults.len().max(1) as f64;
    PartVerdict {
        part: name,
        default_on: base.parts.on(p),
        sources_better_switched: better,
        sources_worse_switched: worse,
        mean_median_default: md / n,
        mean_median_switched: ms / n,
        mean_total_default: td / n,
        mean_total_switched: ts / n,
        supported: ms / n >= md / n - 1e-12,
    }
}

/// The validation as `calibrate` prints it: the verdict per part, then the
/// defaults' error per held-out source.
pub(crate) fn write_text(out: &mut dyn std::io::Write, v: &Validation) -> std::io::Result<()> {
    use crate::format::{right, table};
    writeln!(
        out,
        "price model held out ({} sources, each fitted on the others): the held-out bill error with the defaults and with each part switched",
        v.sources.len()
    )?;
    let pct = |x: f64| format!("{:.2}%", x * 100.0);
    let mut t = table(vec![
        "part",
        "default",
        "median error: default → switched",
        "|total error|: default → switched",
        "sources better / worse switched",
        "defaults",
    ]);
    for p in &v.parts {
        t.add_row(vec![
            comfy_table::Cell::new(p.part),
            comfy_table::Cell::new(if p.default_on { "on" } else { "off" }),
            right(format!(
                "{} → {}",
                pct(p.mean_median_default),
                pct(p.mean_median_switched)
            )),
            right(format!(
                "{} → {}",
                pct(p.mean_total_default),
                pct(p.mean_total_switched)
            )),
            right(format!(
                "{} / {}",
                p.sources_better_switched, p.sources_worse_switched
            )),
            comfy_table::Cell::new(if p.supported {
                "supported"
            } else {
                "switch it"
            }),
        ]);
    }
    writeln!(out, "{t}")?;
    let mut t = table(vec![
        "held-out source",
        "sessions",
        "median error",
        "total error",
        "long within 15%",
    ]);
    for r in v.rows.iter().filter(|r| r.part.is_none()) {
        t.add_row(vec![
            comfy_table::Cell::new(&r.source),
            right(r.sessions.to_string()),
            right(pct(r.median_error)),
            right(format!("{:+.2}%", r.total_error * 100.0)),
            right(format!("{}/{}", r.long_within_bound, r.long_sessions)),
        ]);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "(means over the held-out sources of each source's median |per-session error| and |total error|; every part per source: --json .price_validation.rows)\n"
    )
}
