//! Order statistics: the one definition of a percentile (and so of every
//! median and p95) that `calibrate`, the bill check, the sweep's tables,
//! the report and the transcript view all print.
//!
//! The definition is linear interpolation between the two closest ranks
//! (Hyndman and Fan's type 7, the default of numpy and R): the `p`th
//! percentile of `n` sorted values sits at rank `p/100 · (n − 1)`. It is
//! chosen over nearest rank because it moves continuously with the data
//! (one session more or less does not jump the p95 from one value to
//! another), the median of an even count is the mean of the middle two as
//! readers expect, and it is what a reader reproduces with
//! `numpy.percentile` or pandas from `configs.csv`.
//!
//! An empty input has no percentile: `None`. A figure kept as a plain
//! `f64` stores that as `NaN`, which the formatters of [`crate::format`]
//! print as `–` and JSON writes as `null`.

/// The `p`th percentile (`p` in 0–100, clamped) of `sorted`, which must be
/// in ascending order; `None` when it is empty.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    if n <= 1 {
        return sorted.first().copied();
    }
    let rank = (p / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let frac = rank - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// The `p`th percentile of `values`, which it sorts in place (`NaN`s last).
pub(crate) fn percentile_of(values: &mut [f64], p: f64) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    percentile(values, p)
}

/// The median of `values`, which it sorts in place.
pub fn median_of(values: &mut [f64]) -> Option<f64> {
    percentile_of(values, 50.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_the_closest_ranks() {
        let mut v: Vec<f64> = (1..=10).rev().map(f64::from).collect();
        assert_eq!(median_of(&mut v), Some(5.5));
        let p95 = percentile(&v, 95.0).unwrap();
        assert!((p95 - 9.55).abs() < 1e-12, "{p95}");
        assert_eq!(percentile_of(&mut [3.0, 1.0, 2.0], 95.0), Some(2.9));
        assert_eq!(percentile(&[7.0], 95.0), Some(7.0));
        assert_eq!(percentile(&[1.0, 2.0], 150.0), Some(2.0));
        assert_eq!(percentile(&[1.0, 2.0], -5.0), Some(1.0));
    }

    #[test]
    fn nothing_has_no_percentile() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(median_of(&mut []), None);
    }
}
