//! The estimator comparison of `calibrate --estimator` as a table, a verdict
//! per format, and JSON.

use std::io::{self, Write};

use comfy_table::Cell;

use crate::calibrate::compare::{self, EstimatorFit};
use crate::estimate::Estimator;
use crate::format::{percent, right, table};

/// Fits every estimator of `list` on `samples` (see [`compare::compare`]).
pub(crate) fn compare(samples: &[compare::Sample<'_>], list: &[Estimator]) -> Vec<EstimatorFit> {
    compare::compare(samples, list)
}

/// The comparison as JSON: the fits and a verdict per format.
pub(crate) fn json(fits: &[EstimatorFit]) -> serde_json::Value {
    let mut formats: Vec<&str> = Vec::new();
    for f in fits {
        if !formats.contains(&f.format.as_str()) {
            formats.push(&f.format);
        }
    }
    serde_json::json!({
        "fits": fits,
        "verdicts": formats
            .iter()
            .filter_map(|f| compare::verdict(fits, f))
            .collect::<Vec<_>>(),
    })
}

/// One table per format: relative error against the recorded prompt sizes
/// before (ratio 1, overhead 0) and after each estimator's fit, the fit, and
/// the counting time; then the verdict.
pub(crate) fn write_text(out: &mut dyn Write, fits: &[EstimatorFit]) -> io::Result<()> {
    let mut formats: Vec<&str> = Vec::new();
    for f in fits {
        if !formats.contains(&f.format.as_str()) {
            formats.push(&f.format);
        }
    }
    for format in formats {
        writeln!(
            out,
            "\n{format}: token estimators against the recorded prompt sizes (|error| = |charged − reported| / reported)"
        )?;
        let mut t = table(vec![
            "estimator",
            "requests",
            "median before",
            "p95 before",
            "worst before",
            "fit (ratio, overhead)",
            "median after",
            "p95 after",
            "worst after",
            "ms per MB",
            "load ms",
        ]);
        for f in fits.iter().filter(|f| f.format == format) {
            t.add_row(vec![
                Cell::new(f.estimator.name()),
                right(f.requests.to_string()),
                right(percent(f.before.median)),
                right(percent(f.before.p95)),
                right(percent(f.worst_before)),
                right(format!("{}, {}", f.fit.ratio, f.fit.overhead_tokens)),
                right(percent(f.after.median)),
                right(percent(f.after.p95)),
                right(percent(f.worst_after)),
                right(format!("{:.1}", f.ms_per_mb)),
                right(format!("{:.0}", f.load_ms)),
            ]);
        }
        writeln!(out, "{t}")?;
        if let Some(v) = compare::verdict(fits, format) {
            writeln!(out, "verdict: {v}")?;
        }
    }
    Ok(())
}
