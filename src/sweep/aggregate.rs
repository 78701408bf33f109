//! From rows to one summary per config: sums (or maxima) over sessions, the
//! distribution over sessions of the figures where one means something, the
//! change against the baseline, the Pareto front and the ranking.

use rayon::prelude::*;
use serde::Serialize;

use crate::engine::Config;
use crate::policy::Setup;
use crate::stats::percentile;

use super::bootstrap::{self, Bootstrap, Interval};
use super::figures::{self, Kind, Metric, LOSS_MEASURE, N};
use super::grid::Grid;
use super::pareto;
use super::run::Sweep;
use crate::cost::Prices;

/// Mean, median and 95th percentile of a figure over the sessions of a
/// config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Stats {
    pub(crate) mean: f64,
    pub(crate) median: f64,
    pub(crate) p95: f64,
}

/// The statistics of `values` (reordered in place), `None` when empty.
pub(crate) fn stats(values: &mut [f64]) -> Option<Stats> {
    values.sort_by(f64::total_cmp);
    let median = percentile(values, 50.0)?;
    let p95 = percentile(values, 95.0)?;
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Some(Stats { mean, median, p95 })
}

/// A change against the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Delta {
    /// `value - baseline`.
    pub(crate) abs: f64,
    /// `abs / |baseline| * 100`; 0 when both are 0, `None` when only the
    /// baseline is (a change from nothing has no percentage).
    pub(crate) pct: Option<f64>,
}

impl Delta {
    /// The change from `base` to `value`.
    pub(crate) fn new(value: f64, base: f64) -> Delta {
        let abs = value - base;
        let pct = if base != 0.0 {
            Some(abs / base.abs() * 100.0)
        } else if abs == 0.0 {
            Some(0.0)
        } else {
            None
        };
        Delta { abs, pct }
    }
}

/// One config over all sessions: the one type of a config's result. The
/// sweep computes it, the tables write it (`configs.*`), the report reads
/// it back from them, `recommend` decides on it, and `summary.json`
/// records a view of it (`summary::ConfigRecord`).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigSummary {
    /// Index into the grid's configs.
    pub index: usize,
    /// The policy and its knobs.
    pub setup: Setup,
    /// The setup's config (for a policy other than smith, only its window,
    /// overhead, ratio and summary size mean something).
    pub config: Config,
    /// See [`Setup::label`].
    pub label: String,
    pub is_baseline: bool,
    /// Sessions replayed.
    pub(crate) sessions: usize,
    /// Per figure: the sum over sessions, or the maximum for a peak.
    pub totals: [f64; N],
    /// Per figure flagged `stats`: mean, median and p95 over sessions.
    pub(crate) stats: [Option<Stats>; N],
    /// Per figure: the change of the total against the baseline's.
    pub deltas: [Delta; N],
    /// On the Pareto front of price against results mangled.
    pub pareto: bool,
    /// 1 for the best config by the ranking figure.
    pub rank: usize,
    /// How sure the change against the baseline is (see
    /// [`super::bootstrap`]); `None` without sessions.
    pub interval: Option<Changes>,
    /// Whether the ranking figure's interval overlaps the best config's,
    /// so the data cannot tell the two apart (never the best itself).
    pub tied: bool,
}

/// The [`bootstrap::CONFIDENCE`] intervals of a config's change against the
/// baseline, in the totals of two figures.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Changes {
    /// The figure configs are ranked by (a recommendation's objective).
    pub(crate) objective: Interval,
    /// The loss measure, [`LOSS_MEASURE`].
    pub(crate) loss: Interval,
}

impl ConfigSummary {
    /// The total of `figure` over the sessions.
    pub fn total(&self, figure: Metric) -> f64 {
        self.totals[figure.index()]
    }

    /// The change of `figure` against the baseline.
    pub(crate) fn delta(&self, figure: Metric) -> Delta {
        self.deltas[figure.index()]
    }
}

/// Summarizes a sweep per config, in config order: totals and statistics,
/// deltas against config [`Grid::BASELINE`], the Pareto front of price
/// against results mangled, and ranks by `rank_by` (lower is
/// better; ties go to fewer results mangled, then lower price, then grid
/// order).
pub fn summarize(sweep: &Sweep, prices: &Prices, rank_by: Metric) -> Vec<ConfigSummary> {
    let value = |s: usize, c: usize| figures::values(&sweep.row(s, c).facts, prices);
    summarize_values(&sweep.configs, sweep.sessions.len(), &value, rank_by)
}

/// The decision on a sweep's summaries, ranked by the figure given, as
/// `verdict.json` holds it. It lives above the sweep (`recommend`), so a
/// merge of shards is handed it rather than reaching up for it.
pub(crate) type Decide<'a> =
    &'a (dyn Fn(&mut [ConfigSummary], &PerSession, Metric) -> serde_json::Value + Sync);

/// What the intervals are drawn from: per session, `[objective, loss]` of
/// the baseline, and of each config its change against the baseline.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerSession {
    pub(crate) baseline: Vec<[f64; 2]>,
    /// `changes[config][session]`.
    pub(crate) changes: Vec<Vec<[f64; 2]>>,
}

/// [`summarize`] from the figures of each (session, config) alone, as
/// `value(session, config)` gives them: what a merge of sharded sweeps has,
/// read back from the session rows, where the replays' facts are gone. The
/// sessions are summed in index order, so the same rows in the same order
/// give the same totals to the last bit.
pub(crate) fn summarize_values(
    configs: &[Setup],
    sessions: usize,
    value: &(dyn Fn(usize, usize) -> [f64; N] + Sync),
    rank_by: Metric,
) -> Vec<ConfigSummary> {
    summarize_values_with(configs, sessions, value, rank_by, &Bootstrap::default()).0
}

/// [`summarize_values`] with the bootstrap's seed and resamples given,
/// also returning each config's per-session changes against the baseline
/// in the ranking figure and the loss measure (what a recommendation
/// chooses from).
pub(crate) fn summarize_values_with(
    configs: &[Setup],
    sessions: usize,
    value: &(dyn Fn(usize, usize) -> [f64; N] + Sync),
    rank_by: Metric,
    draws: &Bootstrap,
) -> (Vec<ConfigSummary>, PerSession) {
    let n_configs = configs.len();
    let priced = priced_sessions(configs, sessions, value);
    let (mut out, columns): (Vec<ConfigSummary>, Vec<Vec<[f64; 2]>>) = (0..n_configs)
        .into_par_iter()
        .map(|c| summarize_config(&configs[c], &priced, value, c, rank_by))
        .unzip();
    let baseline = columns.get(Grid::BASELINE).cloned().unwrap_or_default();
    let changes: Vec<Vec<[f64; 2]>> = columns
        .iter()
        .map(|col| {
            col.iter()
                .zip(&baseline)
                .map(|(v, b)| [v[0] - b[0], v[1] - b[1]])
                .collect()
        })
        .collect();
    for (s, iv) in out
        .iter_mut()
        .zip(bootstrap::intervals(&baseline, &changes, draws))
    {
        s.interval = iv.map(|[objective, loss]| Changes { objective, loss });
    }
    if let Some(base) = out.get(Grid::BASELINE).map(|b| b.totals) {
        for s in &mut out {
            for ((d, &v), &b) in s.deltas.iter_mut().zip(&s.totals).zip(&base) {
                *d = Delta::new(v, b);
            }
        }
    }
    let price = Metric::Price.index();
    let mangled = Metric::ResultsMangled.index();
    let rank_by = rank_by.index();
    let points: Vec<(f64, f64)> = out
        .iter()
        .map(|s| (s.totals[price], s.totals[mangled]))
        .collect();
    for (s, on) in out.iter_mut().zip(pareto::front(&points)) {
        s.pareto = on;
    }
    let mut order: Vec<usize> = (0..n_configs).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&out[a], &out[b]);
        x.totals[rank_by]
            .total_cmp(&y.totals[rank_by])
            .then(x.totals[mangled].total_cmp(&y.totals[mangled]))
            .then(x.totals[price].total_cmp(&y.totals[price]))
            .then(a.cmp(&b))
    });
    for (rank, &i) in order.iter().enumerate() {
        out[i].rank = rank + 1;
    }
    if let Some(&best) = order.first() {
        mark_tied(&mut out, best);
    }
    (out, PerSession { baseline, changes })
}

/// Marks every config whose objective interval overlaps `best`'s as tied
/// with it (and `best` itself as not).
pub(crate) fn mark_tied(summaries: &mut [ConfigSummary], best: usize) {
    let Some(b) = summaries.get(best).and_then(|s| s.interval) else {
        return;
    };
    for (i, s) in summaries.iter_mut().enumerate() {
        s.tied = i != best
            && s.interval
                .is_some_and(|iv| iv.objective.overlaps(&b.objective));
    }
}

/// Per session, whether its dollars are known: a session with a request of
/// a model no price table names has no price (`NaN`, `crate::cost::table`)
/// under any config, and is left out of every figure in dollars, and of a
/// verdict in dollars, rather than counted as free or guessed.
fn priced_sessions(
    configs: &[Setup],
    sessions: usize,
    value: &(dyn Fn(usize, usize) -> [f64; N] + Sync),
) -> Vec<bool> {
    if configs.is_empty() {
        return vec![true; sessions];
    }
    (0..sessions)
        .map(|s| value(s, Grid::BASELINE)[Metric::PriceTotal.index()].is_finite())
        .collect()
}

fn summarize_config(
    setup: &Setup,
    priced: &[bool],
    value: &(dyn Fn(usize, usize) -> [f64; N] + Sync),
    c: usize,
    rank_by: Metric,
) -> (ConfigSummary, Vec<[f64; 2]>) {
    let n_sessions = priced.len();
    let mut totals = [0.0; N];
    let stat_figures: Vec<usize> = Metric::ALL
        .into_iter()
        .filter(|m| m.stats())
        .map(Metric::index)
        .collect();
    let mut samples: Vec<Vec<f64>> = (0..stat_figures.len())
        .map(|_| Vec::with_capacity(n_sessions))
        .collect();
    let mut column = Vec::with_capacity(n_sessions);
    for (s, &known) in priced.iter().enumerate() {
        let v = value(s, c);
        if known || !rank_by.is_price() {
            column.push([v[rank_by.index()], v[LOSS_MEASURE.index()]]);
        }
        for (i, m) in Metric::ALL.into_iter().enumerate() {
            if !known && m.is_price() {
                continue;
            }
            match m.kind() {
                Kind::Count | Kind::Price | Kind::Expected => totals[i] += v[i],
                Kind::Peak => totals[i] = totals[i].max(v[i]),
            }
        }
        for (sample, &i) in samples.iter_mut().zip(&stat_figures) {
            if known || !Metric::ALL[i].is_price() {
                sample.push(v[i]);
            }
        }
    }
    let mut st = [None; N];
    for (sample, &i) in samples.iter_mut().zip(&stat_figures) {
        st[i] = stats(sample);
    }
    let setup = setup.clone();
    let summary = ConfigSummary {
        index: c,
        label: setup.label(),
        config: setup.config,
        setup,
        is_baseline: Grid::is_baseline(c),
        sessions: n_sessions,
        totals,
        stats: st,
        deltas: [Delta {
            abs: 0.0,
            pct: Some(0.0),
        }; N],
        pareto: false,
        rank: 0,
        interval: None,
        tied: false,
    };
    (summary, column)
}
