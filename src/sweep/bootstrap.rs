//! How sure a change against the baseline is: a paired percentile
//! bootstrap over sessions.
//!
//! Sessions are the units that vary (one long session can decide a total),
//! so a resample draws as many sessions as the sweep has, with replacement,
//! and every config is measured on the *same* draw: what each config
//! changes is the sum over the drawn sessions of its per-session change
//! against the baseline. Pairing is what makes the interval honest: the
//! sessions a draw happens to favour move the baseline and the config
//! together, so only their difference is left to vary. Each resample's
//! change is taken as a share of that resample's own baseline total (the
//! ratio of resampled totals, as criterion reports a change relative to its
//! baseline): a config cannot save more than the whole bill in any
//! resample, so no interval passes −100%. The interval is the 2.5th to the
//! 97.5th percentile of the resampled shares (the percentile bootstrap),
//! each percentile by linear interpolation between the two nearest ranks
//! ([`crate::stats::percentile`]), given in the figure's unit at the whole
//! sample's baseline total.
//!
//! Resample `b` draws its sessions from its own stream of the crate's seeded
//! generator ([`crate::synth::rng`]), so the draws depend only on the seed
//! and `b`: the same seed gives the same intervals on any machine, with any
//! number of threads, and a merge of shards (which sees the same sessions in
//! the same order) gives the intervals one process gives.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::stats::percentile;
use crate::synth::rng::{mix64, Rng};

/// The seed a sweep draws its resamples with unless told otherwise.
pub(crate) const DEFAULT_SEED: u64 = 2024;
/// Resamples unless told otherwise: enough that the 2.5th and 97.5th
/// percentiles move by well under a tenth of the interval's width between
/// seeds.
pub const DEFAULT_RESAMPLES: usize = 10_000;
/// The interval's coverage.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// Configs whose resampled sums are held at once: bounds the memory to
/// `resamples × BLOCK × 2` numbers however large the grid.
const BLOCK: usize = 128;

/// How the bootstrap draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bootstrap {
    pub seed: u64,
    /// Resamples drawn; 0 computes no interval.
    pub resamples: usize,
}

impl Default for Bootstrap {
    fn default() -> Bootstrap {
        Bootstrap {
            seed: DEFAULT_SEED,
            resamples: DEFAULT_RESAMPLES,
        }
    }
}

/// A two-sided interval of a change, in the figure's own unit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub(crate) lo: f64,
    pub hi: f64,
}

impl Interval {
    /// Whether the two intervals share a point.
    pub(crate) fn overlaps(&self, other: &Interval) -> bool {
        self.lo <= other.hi && other.lo <= self.hi
    }

    /// The interval as percentages of `base` (`None` when `base` is 0).
    pub(crate) fn pct_of(&self, base: f64) -> Option<Interval> {
        (base != 0.0).then(|| Interval {
            lo: self.lo / base.abs() * 100.0,
            hi: self.hi / base.abs() * 100.0,
        })
    }
    /// The interval as every surface writes it: `=` for no change, else
    /// in percent of the baseline's total `base`, or where that is 0 in
    /// the figure's unit (dollars when `price`, else a whole count).
    pub(crate) fn describe(&self, base: f64, price: bool) -> String {
        if self.lo == 0.0 && self.hi == 0.0 {
            return "=".to_string();
        }
        match self.pct_of(base) {
            Some(p) => format!("{:+.1}%…{:+.1}%", p.lo, p.hi),
            None if price => format!(
                "{}…{}",
                crate::format::money(self.lo),
                crate::format::money(self.hi)
            ),
            None => format!("{:+.0}…{:+.0}", self.lo, self.hi),
        }
    }
}

/// The stream resample `b` draws its sessions from.
pub(crate) fn resample_stream(seed: u64, b: usize) -> Rng {
    Rng::new(seed ^ mix64(b as u64))
}

/// How many times resample `b` draws each of `n` sessions: `n` draws of
/// `stream.below(n)`, in order.
fn multiplicities(seed: u64, b: usize, n: usize) -> Vec<f64> {
    let mut rng = resample_stream(seed, b);
    let mut counts = vec![0.0; n];
    for _ in 0..n {
        counts[rng.below(n as u64) as usize] += 1.0;
    }
    counts
}

/// A config's per-session changes laid out for the resamples' sums: most
/// sessions of a real sweep never reach either config's trigger, so their
/// change is 0 and only the others are kept, with their session; when most
/// change, every session is kept, a column per figure.
enum Column {
    Dense([Vec<f64>; 2]),
    Sparse(Vec<(u32, [f64; 2])>),
}

impl Column {
    fn of(changes: &[[f64; 2]]) -> Column {
        let moving = changes
            .iter()
            .filter(|d| d[0] != 0.0 || d[1] != 0.0)
            .count();
        if moving * 2 > changes.len() {
            Column::Dense([0, 1].map(|f| changes.iter().map(|d| d[f]).collect()))
        } else {
            Column::Sparse(
                changes
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d[0] != 0.0 || d[1] != 0.0)
                    .map(|(s, d)| (s as u32, *d))
                    .collect(),
            )
        }
    }

    /// The sums of both figures over a resample drawing session `s`
    /// `w[s]` times.
    fn sums(&self, w: &[f64]) -> [f64; 2] {
        match self {
            Column::Dense([obj, loss]) => [dot(w, obj), dot(w, loss)],
            Column::Sparse(kept) => kept.iter().fold([0.0, 0.0], |acc, &(s, d)| {
                let m = w[s as usize];
                [acc[0] + m * d[0], acc[1] + m * d[1]]
            }),
        }
    }
}

/// `Σ w[i]·x[i]`, in four running sums so the additions do not wait on
/// each other (the order is fixed, so the result is too).
fn dot(w: &[f64], x: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (wc, xc) = (w.chunks_exact(4), x.chunks_exact(4));
    let tail: f64 = wc
        .remainder()
        .iter()
        .zip(xc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in wc.zip(xc) {
        for k in 0..4 {
            acc[k] += a[k] * b[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// The percentile interval at [`CONFIDENCE`] of already resampled values
/// (reordered in place).
pub(crate) fn percentile_interval(values: &mut [f64]) -> Interval {
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0 * 100.0;
    Interval {
        lo: percentile(values, tail).unwrap_or(f64::NAN),
        hi: percentile(values, 100.0 - tail).unwrap_or(f64::NAN),
    }
}

/// How a figure's resampled changes become an interval: as a share of
/// each resample's own baseline total when the baseline is a positive
/// total of nonnegative session values (a price, a count), so that no
/// resample's change can pass the whole of its baseline (no interval
/// passes −100%), and as the plain sum of changes otherwise (a baseline
/// whose total is 0 has no share to take).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// The baseline's total over every session: a resample's change is
    /// `total × change / resample's baseline`.
    Ratio(f64),
    Sum,
}

impl Scale {
    fn of(baseline: &[[f64; 2]], f: usize) -> Scale {
        let total: f64 = baseline.iter().map(|b| b[f]).sum();
        if total > 0.0 && baseline.iter().all(|b| b[f] >= 0.0) {
            Scale::Ratio(total)
        } else {
            Scale::Sum
        }
    }

    /// A resample's value: its change `change` over a baseline that sums
    /// to `base` in it. `NaN` (left out of the percentiles) for a resample
    /// that drew only sessions whose baseline is 0, where the change has no
    /// share.
    fn value(self, change: f64, base: f64) -> f64 {
        match self {
            Scale::Sum => change,
            Scale::Ratio(_) if base <= 0.0 => f64::NAN,
            Scale::Ratio(total) => total * (change / base),
        }
    }
}

/// Per config, the interval of the change in the total of each of two
/// figures, in the figure's unit. `baseline[s]` is the baseline's value of
/// both figures in session `s`, `changes[c][s]` config `c`'s change
/// against it; every config has the same sessions, in the same order.
/// Each resample's change is taken as a share of that resample's baseline
/// total ([`Scale`]) and expressed at the whole sample's baseline total, so
/// the interval's ends over the baseline's total are the percentile
/// interval of the resampled ratios. `None` for every config when there is
/// no session or no resample.
pub fn intervals(
    baseline: &[[f64; 2]],
    changes: &[Vec<[f64; 2]>],
    settings: &Bootstrap,
) -> Vec<Option<[Interval; 2]>> {
    let n = changes.first().map_or(0, Vec::len);
    if n == 0 || settings.resamples == 0 {
        return vec![None; changes.len()];
    }
    debug_assert_eq!(baseline.len(), n);
    let scales = [0, 1].map(|f| Scale::of(baseline, f));
    let base_columns: [Vec<f64>; 2] = [0, 1].map(|f| baseline.iter().map(|b| b[f]).collect());
    let b_count = settings.resamples;
    let mut out = Vec::with_capacity(changes.len());
    for block in changes.chunks(BLOCK) {
        // Configs that change nothing in any session (the baseline) have
        // a point interval at 0 without drawing.
        let moving: Vec<usize> = (0..block.len())
            .filter(|&c| block[c].iter().any(|d| d[0] != 0.0 || d[1] != 0.0))
            .collect();
        let columns: Vec<Column> = moving.iter().map(|&c| Column::of(&block[c])).collect();
        // values[b][k] for the k-th moving config, both figures.
        let values: Vec<Vec<[f64; 2]>> = (0..b_count)
            .into_par_iter()
            .with_min_len(16)
            .map(|b| {
                let w = multiplicities(settings.seed, b, n);
                let base = [0, 1].map(|f| match scales[f] {
                    Scale::Ratio(_) => dot(&w, &base_columns[f]),
                    Scale::Sum => 0.0,
                });
                columns
                    .iter()
                    .map(|col| {
                        let sums = col.sums(&w);
                        [0, 1].map(|f| scales[f].value(sums[f], base[f]))
                    })
                    .collect()
            })
            .collect();
        let found: Vec<[Interval; 2]> = (0..moving.len())
            .into_par_iter()
            .map(|k| {
                [0, 1].map(|f| {
                    let mut drawn: Vec<f64> = values
                        .iter()
                        .map(|row| row[k][f])
                        .filter(|v| !v.is_nan())
                        .collect();
                    percentile_interval(&mut drawn)
                })
            })
            .collect();
        let zero = Interval { lo: 0.0, hi: 0.0 };
        let mut next = moving.iter().zip(found).peekable();
        for c in 0..block.len() {
            match next.peek() {
                Some((&m, _)) if m == c => {
                    let (_, iv) = next.next().expect("peeked");
                    out.push(Some(iv));
                }
                _ => out.push(Some([zero, zero])),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_that_changes_nothing_has_a_point_interval_at_zero() {
        let changes = vec![vec![[0.0, 0.0]; 5], vec![[-1.0, 0.0]; 5]];
        let iv = intervals(&[[2.0, 0.0]; 5], &changes, &Bootstrap::default());
        assert_eq!(iv[0], Some([Interval { lo: 0.0, hi: 0.0 }; 2]));
        // Every session changes by −1: every resample sums to −5.
        let [obj, loss] = iv[1].unwrap();
        assert_eq!((obj.lo, obj.hi), (-5.0, -5.0));
        assert_eq!((loss.lo, loss.hi), (0.0, 0.0));
    }

    #[test]
    fn the_same_seed_draws_the_same_interval_and_another_seed_another() {
        let changes: Vec<Vec<[f64; 2]>> = (0..300)
            .map(|c| {
                (0..40)
                    .map(|s| [((s * 7 + c) % 11) as f64 - 5.0, (s % 3) as f64])
                    .collect()
            })
            .collect();
        let base: Vec<[f64; 2]> = (0..40).map(|s| [6.0 + (s % 5) as f64, 1.0]).collect();
        let a = intervals(&base, &changes, &Bootstrap::default());
        let b = intervals(&base, &changes, &Bootstrap::default());
        assert_eq!(a, b);
        let other = Bootstrap {
            seed: 7,
            ..Bootstrap::default()
        };
        assert_ne!(a, intervals(&base, &changes, &other));
        assert!(a
            .iter()
            .flatten()
            .all(|[o, l]| o.lo <= o.hi && l.lo <= l.hi));
    }

    #[test]
    fn no_session_or_no_resample_gives_no_interval() {
        assert_eq!(
            intervals(&[], &[Vec::new()], &Bootstrap::default()),
            vec![None]
        );
        let none = Bootstrap {
            resamples: 0,
            ..Bootstrap::default()
        };
        assert_eq!(
            intervals(&[[1.0, 1.0]], &[vec![[1.0, 1.0]]], &none),
            vec![None]
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn no_interval_of_a_nonnegative_figure_passes_minus_100_percent(
            sessions in proptest::collection::vec((0.0f64..50.0, 0.0f64..1.0, 0u8..4), 1..40),
            seed in 0u64..1000,
        ) {
            // Most sessions cheap, a few long ones the whole bill rests on;
            // the config saves nearly everything on some.
            let base: Vec<[f64; 2]> = sessions
                .iter()
                .map(|&(b, _, kind)| [if kind == 0 { b * 40.0 } else { b }, b.floor()])
                .collect();
            let changes = vec![sessions
                .iter()
                .zip(&base)
                .map(|(&(_, keep, _), b)| [b[0] * keep - b[0], (b[1] * keep).floor() - b[1]])
                .collect::<Vec<_>>()];
            let draws = Bootstrap { seed, resamples: 400 };
            if let Some([obj, loss]) = intervals(&base, &changes, &draws)[0] {
                for (iv, f) in [(obj, 0), (loss, 1)] {
                    let total: f64 = base.iter().map(|b| b[f]).sum();
                    if let Some(pct) = iv.pct_of(total) {
                        proptest::prop_assert!(pct.lo >= -100.0 - 1e-9, "{pct:?}");
                        proptest::prop_assert!(pct.lo <= pct.hi);
                    }
                }
            }
        }
    }
}
