//! `calibrate --estimator LIST`: every estimator fitted to the same recorded
//! prompt sizes, side by side.
//!
//! For each estimator the requests are those [`crate::calibrate::points`]
//! takes (a known context and a reported prompt size), measured with that
//! estimator instead of bytes / 4, then fitted with the same robust fit and
//! judged with the same charge arithmetic. So the only thing that differs
//! between two rows is how text became tokens.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::calibrate::{self, Errors, Excluded, Fit, Point};
use crate::engine::{Budget, Config};
use crate::format::percent;
use crate::transcript::session_file::SessionFile;
use crate::transcript::Message;

use crate::estimate::{Estimator, Measure};

/// The gain in median relative error, after both fits, below which a
/// tokenizer is not worth running instead of a fitted bytes / 4: one point
/// of error is well inside what a 3–5 % trigger margin already absorbs. A
/// tokenizer must also not make the p95 worse: the trigger has to hold for
/// the bad requests, not the typical one.
pub(crate) const WORTH_GAIN: f64 = 0.01;

/// [`calibrate::points`] with the history measured by `measure`. Under
/// bytes4 it is the same list. A summary the source agent wrote is known by
/// its size in bytes only, so under another estimator it is counted at the
/// session's own units per byte.
pub(crate) fn points_measured(
    messages: &[Arc<Message>],
    file: &SessionFile,
    measure: &Measure,
) -> Result<Vec<Point>, Excluded> {
    if measure.is_bytes4() {
        return calibrate::points(messages, file);
    }
    if !file.context_complete {
        return Err(Excluded::ContextIncomplete);
    }
    let mut bytes = 0u64;
    let before = calibrate::running_totals(messages, |m| {
        bytes += m.bytes();
        measure.message(m)
    });
    let units = before[messages.len()];
    let per_byte = if bytes == 0 {
        1.0
    } else {
        units as f64 / bytes as f64
    };
    calibrate::points_with(
        |i| messages.get(i).map(|m| m.role),
        file,
        &before,
        |summary| (summary as f64 * per_byte).round() as u64,
        |units| measure.tokens(units),
    )
}

/// The largest |charged − reported| / reported over `points`.
pub(crate) fn worst(points: &[Point], ratio: f64, overhead: u64) -> f64 {
    let budget = Budget::new(&Config {
        ratio,
        overhead_tokens: overhead,
        ..Config::default()
    });
    points
        .iter()
        .map(|p| {
            ((budget.charged(p.estimate) as f64 - p.reported as f64) / p.reported as f64).abs()
        })
        .fold(0.0, f64::max)
}

/// One estimator fitted on one source format.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct EstimatorFit {
    pub(crate) format: String,
    pub(crate) estimator: Estimator,
    pub(crate) sessions: usize,
    pub(crate) requests: usize,
    pub(crate) fit: Fit,
    /// Errors with ratio 1 and no overhead, and with the fit.
    pub(crate) before: Errors,
    pub(crate) after: Errors,
    pub(crate) worst_before: f64,
    pub(crate) worst_after: f64,
    /// Megabytes of history measured, and the wall time it took per
    /// megabyte (all sessions, counted in parallel on every core), the
    /// vocabulary already loaded.
    pub(crate) mb: f64,
    pub(crate) ms_per_mb: f64,
    /// Loading the vocabulary, once per process.
    pub(crate) load_ms: f64,
    /// What to pass to `replay` and `sweep`.
    pub(crate) flags: String,
}

/// A session to compare on: its format, its messages, its import record.
pub(crate) struct Sample<'a> {
    pub(crate) format: &'a str,
    pub(crate) messages: &'a [Arc<Message>],
    pub(crate) file: &'a SessionFile,
}

/// Fits every estimator on each format's sessions. Formats in the order
/// first met, estimators in the order given.
pub(crate) fn compare(samples: &[Sample<'_>], estimators: &[Estimator]) -> Vec<EstimatorFit> {
    use rayon::prelude::*;
    let mut formats: Vec<&str> = Vec::new();
    for s in samples {
        if !formats.contains(&s.format) {
            formats.push(s.format);
        }
    }
    let mut out = Vec::new();
    for format in formats {
        let mine: Vec<&Sample> = samples.iter().filter(|s| s.format == format).collect();
        for &e in estimators {
            let loading = Instant::now();
            e.text_units(b"load the vocabulary before timing");
            let load_ms = loading.elapsed().as_secs_f64() * 1e3;
            let started = Instant::now();
            let measured: Vec<(Result<Vec<Point>, Excluded>, u64)> = mine
                .par_iter()
                .map(|s| {
                    let measure = Measure::for_session(e, s.messages);
                    let pts = points_measured(s.messages, s.file, &measure);
                    let bytes: u64 = s.messages.iter().map(|m| m.bytes()).sum();
                    (pts, bytes)
                })
                .collect();
            let secs = started.elapsed().as_secs_f64();
            let mut points = Vec::new();
            let (mut sessions, mut bytes) = (0usize, 0u64);
            for (pts, b) in measured {
                bytes += b;
                if let Ok(p) = pts {
                    sessions += 1;
                    points.extend(p);
                }
            }
            let Some(fit) = calibrate::fit(&points) else {
                continue;
            };
            let mb = bytes as f64 / 1e6;
            out.push(EstimatorFit {
                format: format.to_string(),
                estimator: e,
                sessions,
                requests: points.len(),
                before: calibrate::errors(&points, 1.0, 0),
                after: calibrate::errors(&points, fit.ratio, fit.overhead_tokens),
                worst_before: worst(&points, 1.0, 0),
                worst_after: worst(&points, fit.ratio, fit.overhead_tokens),
                mb,
                ms_per_mb: if mb > 0.0 { secs * 1e3 / mb } else { 0.0 },
                load_ms,
                flags: format!(
                    "--estimator {e} --ratio {} --overhead {}",
                    fit.ratio, fit.overhead_tokens
                ),
                fit,
            });
        }
    }
    out
}

/// The one-line answer for a format: which estimator, with which fit, is
/// closest to the recorded prompt sizes, and whether its gain over a fitted
/// bytes / 4 is worth a tokenizer ([`WORTH_GAIN`]).
pub(crate) fn verdict(fits: &[EstimatorFit], format: &str) -> Option<String> {
    let mine: Vec<&EstimatorFit> = fits.iter().filter(|f| f.format == format).collect();
    let best = mine
        .iter()
        .min_by(|a, b| a.after.median.total_cmp(&b.after.median))?;
    let head = format!(
        "{format}: closest is {} with ratio {} and overhead {} (median error {}, p95 {})",
        best.estimator,
        best.fit.ratio,
        best.fit.overhead_tokens,
        percent(best.after.median),
        percent(best.after.p95)
    );
    let Some(bytes4) = mine.iter().find(|f| f.estimator == Estimator::Bytes4) else {
        return Some(format!("{head}; bytes4 was not compared"));
    };
    if best.estimator == Estimator::Bytes4 {
        return Some(format!(
            "{head}: a fitted bytes / 4 is already the closest; no tokenizer needed"
        ));
    }
    let gain = bytes4.after.median - best.after.median;
    let p95_loss = best.after.p95 - bytes4.after.p95;
    let against = format!(
        "fitted bytes4: median {}, p95 {}; counting costs {:.0} ms per MB against {:.1}",
        percent(bytes4.after.median),
        percent(bytes4.after.p95),
        best.ms_per_mb,
        bytes4.ms_per_mb
    );
    Some(if gain >= WORTH_GAIN && p95_loss <= 0.0 {
        format!(
            "{head}: {:.1} points better than {against}; worth the tokenizer",
            gain * 100.0
        )
    } else if gain >= WORTH_GAIN {
        format!(
            "{head}: {:.1} points better at the median but {:.1} worse at p95 than {against}; not worth a tokenizer",
            gain * 100.0,
            p95_loss * 100.0
        )
    } else {
        format!(
            "{head}: only {:.1} points better than {against}; not worth a tokenizer",
            gain * 100.0
        )
    })
}
