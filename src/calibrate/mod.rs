//! Fitting smith's two estimator knobs from sessions whose requests carry
//! the provider's real prompt size.
//!
//! smith charges a request `(estimate + overhead) × ratio` tokens, where the
//! estimate is the history's bytes / 4, `overhead` stands for everything sent
//! that is not history (system prompt, tool definitions) and `ratio` for how
//! far the provider's tokenizer is from bytes / 4. An imported session knows,
//! for each request, both the history the model saw and what the provider
//! counted (`input + cache creation + cache read`), so the two knobs can be
//! fitted: robustly, by least absolute *relative* deviations (a request of
//! 5000 tokens weighs as much as one of 150000, and a few odd requests — a
//! hook's output the log never recorded — do not drag the fit).
//!
//! The fit is constrained to what smith accepts: `ratio` within
//! [[`RATIO_MIN`], [`RATIO_MAX`]] and `overhead ≥ 0`. The objective is
//! convex in `(intercept, slope)`, so the constrained optimum is the free one
//! when that is feasible and otherwise lies on an edge of the feasible
//! region, where it is a weighted median; [`fit`] compares those candidates.

#[cfg(test)]
mod bill_tests;
pub(crate) mod compare;
#[cfg(all(test, feature = "full"))]
mod fit_tests;
pub(crate) mod formats;
pub(crate) mod recorded;
pub(crate) mod session;
pub(crate) mod triggers;
pub(crate) mod usage;
pub(crate) mod validate;

use std::sync::Arc;

use serde::Serialize;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Config, Engine};
use crate::replay;
use crate::stats::percentile_of;
use crate::transcript::session_file::SessionFile;
use crate::transcript::{Message, Role};

/// The range smith clamps its learned ratio to, which the fit keeps to.
pub(crate) use crate::engine::constants::{RATIO_MAX, RATIO_MIN};

/// The context window the compaction comparison assumes: Claude Code's.
pub(crate) const COMPARE_MAX_TOKENS: u64 = 200_000;

/// One request whose context is known: the raw estimate of the history the
/// model saw and the prompt size the provider reported.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Point {
    /// `bytes / 4` of the history before the request, compacted by nothing
    /// but the source agent itself.
    pub(crate) estimate: u64,
    pub(crate) reported: u64,
    /// Index of the answering assistant message.
    pub(crate) message_index: usize,
}

/// Why a session gives no points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Excluded {
    /// Not an import (smith's own sessions carry totals only).
    NotImported,
    /// The model saw messages the transcript does not hold.
    ContextIncomplete,
    /// No request with a reported prompt size.
    NoUsage,
}

/// The requests of one imported session whose real prompt size is known,
/// each paired with the estimate of the history the model saw: every message
/// before it, or, after the source agent compacted, its summary plus the
/// messages since. A request after a compaction whose summary size is unknown
/// is left out.
pub(crate) fn points(
    messages: &[Arc<Message>],
    file: &SessionFile,
) -> Result<Vec<Point>, Excluded> {
    points_of_outline(&crate::transcript::outline::Outline::of(messages), file)
}

/// [`points`] of a session's messages in outline: their roles and sizes
/// are all the points need of them.
pub(crate) fn points_of_outline(
    outline: &crate::transcript::outline::Outline,
    file: &SessionFile,
) -> Result<Vec<Point>, Excluded> {
    let mut before = Vec::with_capacity(outline.messages.len() + 1);
    let mut sum = 0u64;
    before.push(0);
    for m in &outline.messages {
        sum += m.bytes;
        before.push(sum);
    }
    points_with(
        |i| outline.messages.get(i).map(|m| m.role),
        file,
        &before,
        |summary| summary,
        |bytes| bytes / BYTES_PER_TOKEN,
    )
}

/// `[0, u(m0), u(m0) + u(m1), …]`: the units of the history before each
/// message, and of all of it last.
pub(crate) fn running_totals(
    messages: &[Arc<Message>],
    mut units: impl FnMut(&Message) -> u64,
) -> Vec<u64> {
    let mut before = Vec::with_capacity(messages.len() + 1);
    let mut sum = 0u64;
    before.push(0);
    for m in messages {
        sum += units(m);
        before.push(sum);
    }
    before
}

/// The points of `file`'s requests with the history measured in some unit,
/// message `i` being of role `role_of(i)`:
/// `before[i]` units precede message `i` ([`running_totals`]), a summary of
/// `b` bytes counts `summary(b)` units, and `estimate` turns units into the
/// estimate's tokens.
pub(crate) fn points_with(
    role_of: impl Fn(usize) -> Option<Role>,
    file: &SessionFile,
    before: &[u64],
    summary: impl Fn(u64) -> u64,
    estimate: impl Fn(u64) -> u64,
) -> Result<Vec<Point>, Excluded> {
    if !file.context_complete {
        return Err(Excluded::ContextIncomplete);
    }
    let mut out = Vec::new();
    for r in &file.requests {
        let i = r.message_index;
        if role_of(i) != Some(Role::Assistant) || r.prompt_tokens() == 0 {
            continue;
        }
        let boundary = file.full_compactions().rfind(|b| b.message_index <= i);
        let units = match boundary {
            None => before[i],
            Some(b) => match b.summary_bytes {
                Some(bytes) => summary(bytes) + before[i] - before[b.message_index.min(i)],
                None => continue,
            },
        };
        out.push(Point {
            estimate: estimate(units),
            reported: r.prompt_tokens(),
            message_index: i,
        });
    }
    if out.is_empty() {
        return Err(Excluded::NoUsage);
    }
    Ok(out)
}

/// The fitted knobs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Fit {
    /// Rounded to three decimals, within smith's bounds.
    pub(crate) ratio: f64,
    pub(crate) overhead_tokens: u64,
    /// The unconstrained fit `reported ≈ intercept + slope × estimate`:
    /// slope is the free ratio, intercept / slope the free overhead.
    pub(crate) free_ratio: f64,
    pub(crate) free_overhead: f64,
    /// Why the fit differs from the free one, when it does.
    pub(crate) constrained: Option<String>,
}

/// How far a config's charge is from what the provider reported, as
/// fractions of the reported size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Errors {
    /// Median of |charged − reported| / reported.
    pub(crate) median: f64,
    /// 95th percentile of the same.
    pub(crate) p95: f64,
    /// Median of (charged − reported) / reported: negative when smith
    /// undercounts.
    pub(crate) bias: f64,
}

/// The relative errors of charging each point under `ratio` and `overhead`,
/// with smith's own arithmetic (rounding included); `NaN` without points
/// ([`crate::stats`]).
pub(crate) fn errors(points: &[Point], ratio: f64, overhead: u64) -> Errors {
    let budget = Budget::new(&Config {
        ratio,
        overhead_tokens: overhead,
        ..Config::default()
    });
    let mut abs = Vec::with_capacity(points.len());
    let mut signed = Vec::with_capacity(points.len());
    for p in points {
        let e = (budget.charged(p.estimate) as f64 - p.reported as f64) / p.reported as f64;
        abs.push(e.abs());
        signed.push(e);
    }
    let at = |v: &mut [f64], p| percentile_of(v, p).unwrap_or(f64::NAN);
    Errors {
        median: at(&mut abs, 50.0),
        p95: at(&mut abs, 95.0),
        bias: at(&mut signed, 50.0),
    }
}

/// Σ |reported − ratio × (estimate + overhead)| / reported: what the fit
/// minimises.
fn objective(points: &[(f64, f64)], ratio: f64, overhead: f64) -> f64 {
    points
        .iter()
        .map(|(x, y)| (y - ratio * (x + overhead)).abs() / y)
        .sum()
}

/// The weighted median of `(value, weight)` pairs: the point that
/// minimises the weighted sum of absolute deviations, which is what the fit
/// needs. Not a figure anyone reads (those are [`crate::stats`]'s).
fn weighted_median(mut pairs: Vec<(f64, f64)>) -> f64 {
    pairs.retain(|(v, w)| v.is_finite() && *w > 0.0);
    if pairs.is_empty() {
        return 0.0;
    }
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = pairs.iter().map(|p| p.1).sum::<f64>() / 2.0;
    let mut acc = 0.0;
    for (v, w) in &pairs {
        acc += w;
        if acc >= half {
            return *v;
        }
    }
    pairs[pairs.len() - 1].0
}

/// Weighted least squares of `y ≈ a + b x`.
fn wls(points: &[(f64, f64)], weights: &[f64]) -> Option<(f64, f64)> {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for ((x, y), w) in points.iter().zip(weights) {
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
    let det = sw * sxx - sx * sx;
    if !(det.is_finite() && det.abs() > 1e-12 * sw * sxx.max(1.0)) {
        return None;
    }
    let b = (sw * sxy - sx * sy) / det;
    Some(((sy - b * sx) / sw, b))
}

/// Least absolute relative deviations by iteratively reweighted least
/// squares: each round solves a weighted least squares problem whose weights
/// `1 / (y² · |relative residual|)` make it agree with the L1 objective at
/// the current solution.
fn lad_relative(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let mut weights: Vec<f64> = points.iter().map(|(_, y)| 1.0 / (y * y)).collect();
    let (mut a, mut b) = wls(points, &weights)?;
    for _ in 0..500 {
        for ((x, y), w) in points.iter().zip(weights.iter_mut()) {
            let r = ((y - a - b * x) / y).abs().max(1e-7);
            *w = 1.0 / (y * y * r);
        }
        let Some((na, nb)) = wls(points, &weights) else {
            break;
        };
        let done =
            (na - a).abs() <= 1e-6 * a.abs().max(1.0) && (nb - b).abs() <= 1e-9 * b.abs().max(1.0);
        a = na;
        b = nb;
        if done {
            break;
        }
    }
    Some((a, b))
}

/// Fits `reported ≈ (estimate + overhead) × ratio` over `points` within
/// smith's bounds; `None` with no points.
pub(crate) fn fit(points: &[Point]) -> Option<Fit> {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.reported > 0)
        .map(|p| (p.estimate as f64, p.reported as f64))
        .collect();
    if xy.is_empty() {
        return None;
    }
    // With a single estimate (or none varying) there is no slope to fit:
    // the ratio alone explains the sizes.
    let (free_ratio, free_overhead) = match lad_relative(&xy) {
        Some((a, b)) if b.abs() > 1e-12 => (b, a / b),
        _ => (ratio_given_overhead(&xy, 0.0), 0.0),
    };
    let feasible =
        |r: f64, o: f64| (RATIO_MIN..=RATIO_MAX).contains(&r) && o >= 0.0 && o.is_finite();
    let mut candidates: Vec<(f64, f64)> = Vec::new();
    if feasible(free_ratio, free_overhead) {
        candidates.push((free_ratio, free_overhead));
    } else {
        // The edges of the feasible region: no overhead, or the ratio at
        // either bound.
        candidates.push((
            ratio_given_overhead(&xy, 0.0).clamp(RATIO_MIN, RATIO_MAX),
            0.0,
        ));
        for r in [RATIO_MIN, RATIO_MAX] {
            candidates.push((r, overhead_given_ratio(&xy, r).max(0.0)));
        }
    }
    let (ratio, overhead) = candidates
        .into_iter()
        .min_by(|a, b| objective(&xy, a.0, a.1).total_cmp(&objective(&xy, b.0, b.1)))?;
    let constrained = (!feasible(free_ratio, free_overhead)).then(|| {
        format!(
            "the free fit (ratio {free_ratio:.3}, overhead {free_overhead:.0}) is outside what smith accepts (ratio {RATIO_MIN}..{RATIO_MAX}, overhead ≥ 0); this is the best fit within those bounds"
        )
    });
    Some(Fit {
        ratio: ((ratio * 1000.0).round() / 1000.0).clamp(RATIO_MIN, RATIO_MAX),
        overhead_tokens: overhead.max(0.0).round() as u64,
        free_ratio,
        free_overhead,
        constrained,
    })
}

/// The ratio minimising the objective with the overhead fixed: a weighted
/// median of `y / (x + o)` weighted by `(x + o) / y`.
fn ratio_given_overhead(points: &[(f64, f64)], o: f64) -> f64 {
    weighted_median(
        points
            .iter()
            .map(|(x, y)| (y / (x + o), (x + o) / y))
            .collect(),
    )
}

/// The overhead minimising the objective with the ratio fixed: a weighted
/// median of `y / r − x` weighted by `r / y`.
fn overhead_given_ratio(points: &[(f64, f64)], r: f64) -> f64 {
    weighted_median(points.iter().map(|(x, y)| (y / r - x, r / y)).collect())
}

/// Where compaction first acts in a replay of a session.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FirstCompaction {
    /// 0-based request number.
    pub request: usize,
    pub message_index: usize,
    /// Charged tokens of that request before compaction.
    pub before: i64,
}

/// The first request at which smith's engine under `config` is over its
/// trigger when replaying `messages` from the start, if any.
pub fn first_compaction(messages: &[Arc<Message>], config: Config) -> Option<FirstCompaction> {
    first_trigger(messages, &Engine::new(config))
}

/// The first request at which `engine` is over its trigger when replaying
/// `messages` from the start, if any.
pub(crate) fn first_trigger(
    messages: &[Arc<Message>],
    engine: &dyn crate::engine::Compactor,
) -> Option<FirstCompaction> {
    let mut found = None;
    replay::replay_with(messages, engine, |r, _, _| {
        if r.triggered {
            found = Some(FirstCompaction {
                request: r.request,
                message_index: r.message_index,
                before: r.before,
            });
            return false;
        }
        true
    });
    found
}

/// A config for the comparison: smith's defaults with the window, ratio and
/// overhead given.
pub fn compare_config(max_tokens: u64, ratio: f64, overhead: u64) -> Config {
    Config {
        max_tokens,
        ratio,
        overhead_tokens: overhead,
        ..Config::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(pairs: &[(u64, u64)]) -> Vec<Point> {
        pairs
            .iter()
            .map(|&(estimate, reported)| Point {
                estimate,
                reported,
                message_index: 0,
            })
            .collect()
    }

    #[test]
    fn fit_recovers_exact_knobs() {
        let p: Vec<(u64, u64)> = (1..50u64)
            .map(|i| (i * 1000, ((i * 1000 + 5000) as f64 * 1.25) as u64))
            .collect();
        let f = fit(&pts(&p)).unwrap();
        assert_eq!(f.ratio, 1.25);
        assert!((f.overhead_tokens as i64 - 5000).abs() <= 2, "{f:?}");
        assert!(f.constrained.is_none());
    }

    #[test]
    fn fit_ignores_a_few_wild_points() {
        let mut p: Vec<(u64, u64)> = (1..100u64)
            .map(|i| (i * 1000, ((i * 1000 + 2000) as f64 * 1.1) as u64))
            .collect();
        p.push((50_000, 500_000));
        p.push((60_000, 1_000));
        let f = fit(&pts(&p)).unwrap();
        assert!((f.ratio - 1.1).abs() < 0.005, "{f:?}");
        assert!((f.overhead_tokens as i64 - 2000).abs() < 100, "{f:?}");
    }

    #[test]
    fn fit_stays_within_smiths_bounds() {
        // A tokenizer that counts fewer tokens than bytes / 4.
        let p: Vec<(u64, u64)> = (1..50u64).map(|i| (i * 1000, i * 800)).collect();
        let f = fit(&pts(&p)).unwrap();
        assert_eq!(f.ratio, RATIO_MIN);
        assert!(f.constrained.is_some());
        assert!(f.free_ratio < 0.81);
    }

    #[test]
    fn errors_use_smiths_charge() {
        let p = pts(&[(100, 110), (200, 220)]);
        let e = errors(&p, 1.1, 0);
        assert_eq!(e.median, 0.0);
        let before = errors(&p, 1.0, 0);
        assert!((before.median - 10.0 / 110.0).abs() < 1e-9);
        assert!(before.bias < 0.0);
    }
}
