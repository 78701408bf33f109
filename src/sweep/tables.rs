//! A sweep as tables: the rows of `sessions.*` and `configs.*`, and the
//! object of `summary.json`. The columns are those of [`super::columns`],
//! in its order, named by it: every column in every sweep, whatever it
//! varied.

use std::path::Path;

use serde_json::Value;

use crate::engine::{Budget, Config};
use crate::export::{Columns, Export, Values};
use crate::knob::Kind as KnobKind;
use crate::policy::{PolicyKnob, Setup, Value as KnobValue};

use super::aggregate::ConfigSummary;
use super::columns::{Col, Column, Stat, SCHEMA_VERSION};
use super::figures::{self, Kind, Metric, N};
use super::grid::{Grid, Knob};
use super::run::{Sweep, Unreadable};
use super::summary::{
    AxisValue, ConfigRecord, CostModel, Deltas, FrontPoint, GridRecord, Ordered, PriceRecord,
    Summary, Totals, PRICE_UNIT,
};
use crate::cost::Prices;

/// The knob columns of `configs`, in [`Knob::ALL`] order, named by field.
pub(crate) fn knob_columns(out: &mut Columns, configs: &[&Config]) {
    for k in Knob::ALL {
        let values = if k.kind() == KnobKind::Word {
            Values::Str(configs.iter().map(|c| k.text(c)).collect())
        } else if k.is_integer() {
            Values::Int(configs.iter().map(|c| k.get(c) as i64).collect())
        } else {
            Values::Float(configs.iter().map(|c| k.get(c)).collect())
        };
        out.push(k.field(), values);
    }
}

/// The columns that say how each row's ratio and overhead were chosen:
/// `ratio_mode` (`fixed`, `saved`: the session's `context_ratio`, or
/// `learned`), `ratio_start` and `ratio_end` (the ratio at its first and
/// last request), `overhead_used` and `window_used`.
pub(crate) const CALIBRATION_COLUMNS: [Col; 5] = [
    Col::RatioMode,
    Col::RatioStart,
    Col::RatioEnd,
    Col::OverheadUsed,
    Col::WindowUsed,
];

/// [`CALIBRATION_COLUMNS`] of `rows`, each of config `configs[i]` with the
/// calibration the replay chose, if any.
pub(crate) fn calibration_columns(
    out: &mut Columns,
    configs: &[&Config],
    chosen: &[Option<crate::engine::learn::Calibration>],
) {
    let plain = |c: &Config| crate::engine::learn::Calibration {
        ratio_mode: crate::engine::learn::RatioMode::Fixed,
        ratio_start: Budget::new(c).ratio,
        ratio_end: Budget::new(c).ratio,
        observations: 0,
        overhead_mode: crate::engine::learn::OverheadMode::Config,
        overhead_tokens: c.overhead_tokens,
        window_tokens: c.max_tokens,
        own_window: false,
    };
    let rows: Vec<crate::engine::learn::Calibration> = configs
        .iter()
        .zip(chosen)
        .map(|(c, x)| x.unwrap_or_else(|| plain(c)))
        .collect();
    out.push(
        CALIBRATION_COLUMNS[0],
        Values::Str(
            rows.iter()
                .map(|r| r.ratio_mode.as_str().to_string())
                .collect(),
        ),
    );
    out.push(
        CALIBRATION_COLUMNS[1],
        Values::Float(rows.iter().map(|r| r.ratio_start).collect()),
    );
    out.push(
        CALIBRATION_COLUMNS[2],
        Values::Float(rows.iter().map(|r| r.ratio_end).collect()),
    );
    out.push(
        CALIBRATION_COLUMNS[3],
        Values::Int(rows.iter().map(|r| r.overhead_tokens as i64).collect()),
    );
    out.push(
        CALIBRATION_COLUMNS[4],
        Values::Int(rows.iter().map(|r| r.window_tokens as i64).collect()),
    );
}

/// `ratio_mode` of the configs table: `learned` or `fixed`.
fn ratio_mode_column(out: &mut Columns, configs: &[&Config]) {
    out.push(
        Col::RatioMode,
        Values::Str(
            configs
                .iter()
                .map(|c| {
                    let mode = if c.learns_ratio() {
                        crate::engine::learn::RatioMode::Learned
                    } else {
                        crate::engine::learn::RatioMode::Fixed
                    };
                    mode.as_str().to_string()
                })
                .collect(),
        ),
    );
}

/// The `policy` and `estimator` columns and each policy's own knobs: null
/// where the row is another policy's, names comma-separated (empty where
/// they do not apply).
pub(crate) fn policy_columns(out: &mut Columns, setups: &[&Setup]) {
    out.push(
        Col::Policy,
        Values::Str(setups.iter().map(|s| s.policy.to_string()).collect()),
    );
    out.push(
        Col::Estimator,
        Values::Str(setups.iter().map(|s| s.estimator.to_string()).collect()),
    );
    for k in PolicyKnob::ALL {
        let value = |s: &&Setup| (s.policy == k.policy()).then(|| k.get(&s.knobs));
        let number = |s: &&Setup| value(s).as_ref().and_then(KnobValue::number);
        let values = match k.kind() {
            KnobKind::Names => Values::Str(
                setups
                    .iter()
                    .map(|s| value(s).map_or_else(String::new, |v| v.to_string()))
                    .collect(),
            ),
            KnobKind::Count => {
                Values::OptInt(setups.iter().map(|s| number(s).map(|v| v as i64)).collect())
            }
            KnobKind::Fraction | KnobKind::Factor | KnobKind::Word => {
                Values::OptFloat(setups.iter().map(number).collect())
            }
        };
        out.push(k.field(), values);
    }
}

/// A figure's column from its values: whole numbers as integers.
fn figure_column(m: Metric, values: Vec<f64>) -> Values {
    match m.kind() {
        Kind::Count | Kind::Peak => Values::Int(values.into_iter().map(|v| v as i64).collect()),
        // A session of a model no price table names has no dollars: null,
        // not 0 (`crate::cost::table`).
        Kind::Price => Values::OptFloat(
            values
                .into_iter()
                .map(|v| v.is_finite().then_some(v))
                .collect(),
        ),
        Kind::Expected => Values::Float(values),
    }
}

/// One row per session and config: `session`, `path`, `config`,
/// `config_label`, `policy`, smith's knobs, the policies' knobs,
/// `is_baseline`, every figure, `lines_skipped` and `bytes`.
pub(crate) fn sessions_table(sweep: &Sweep, prices: &Prices) -> Columns {
    let rows = &sweep.rows;
    let session = |r: &super::run::Row| &sweep.sessions[r.session as usize];
    let config = |r: &super::run::Row| &sweep.configs[r.config as usize];
    let mut out = Columns::new();
    out.push(
        Col::Session,
        Values::Str(rows.iter().map(|r| session(r).label.clone()).collect()),
    );
    out.push(
        Col::Path,
        Values::Str(
            rows.iter()
                .map(|r| session(r).path.display().to_string())
                .collect(),
        ),
    );
    out.push(
        Col::Config,
        Values::Int(rows.iter().map(|r| r.config as i64).collect()),
    );
    let labels: Vec<String> = sweep.configs.iter().map(Setup::label).collect();
    out.push(
        Col::ConfigLabel,
        Values::Str(
            rows.iter()
                .map(|r| labels[r.config as usize].clone())
                .collect(),
        ),
    );
    let setups: Vec<&Setup> = rows.iter().map(config).collect();
    policy_columns(&mut out, &setups);
    let configs: Vec<&Config> = setups.iter().map(|s| &s.config).collect();
    knob_columns(&mut out, &configs);
    let chosen: Vec<_> = rows.iter().map(|r| r.facts.calibration).collect();
    calibration_columns(&mut out, &configs, &chosen);
    out.push(
        Col::IsBaseline,
        Values::Bool(
            rows.iter()
                .map(|r| Grid::is_baseline(r.config as usize))
                .collect(),
        ),
    );
    let mut columns: Vec<Vec<f64>> = (0..N).map(|_| Vec::with_capacity(rows.len())).collect();
    for r in rows {
        let v = figures::values(&r.facts, prices);
        for (col, x) in columns.iter_mut().zip(v) {
            col.push(x);
        }
    }
    for (m, col) in Metric::ALL.into_iter().zip(columns) {
        out.push(m.name(), figure_column(m, col));
    }
    out.push(
        Col::LinesSkipped,
        Values::Int(
            rows.iter()
                .map(|r| session(r).lines_skipped as i64)
                .collect(),
        ),
    );
    out.push(
        Col::Bytes,
        Values::Int(rows.iter().map(|r| session(r).bytes as i64).collect()),
    );
    out
}

/// One row per config, in grid order: `config`, `config_label`, `policy`,
/// the policies' knobs, smith's knobs, `trigger_tokens`, `target_tokens`
/// (where the config's policy acts and what it aims at), `is_baseline`,
/// `sessions`, every
/// figure's total (sum over sessions, maximum for peaks), `<figure>_mean`,
/// `_median` and `_p95` for the figures with a distribution, `<figure>_delta`
/// and `<figure>_delta_pct` against the baseline for the rankable figures,
/// the intervals ([`INTERVAL_COLUMNS`]), `pareto` and `rank`.
pub(crate) fn configs_table(summaries: &[ConfigSummary]) -> Columns {
    let mut out = Columns::new();
    out.push(
        Col::Config,
        Values::Int(summaries.iter().map(|s| s.index as i64).collect()),
    );
    out.push(
        Col::ConfigLabel,
        Values::Str(summaries.iter().map(|s| s.label.clone()).collect()),
    );
    let setups: Vec<&Setup> = summaries.iter().map(|s| &s.setup).collect();
    policy_columns(&mut out, &setups);
    let configs: Vec<&Config> = summaries.iter().map(|s| &s.config).collect();
    knob_columns(&mut out, &configs);
    ratio_mode_column(&mut out, &configs);
    let budgets: Vec<Option<Budget>> = summaries.iter().map(|s| s.setup.fixed_budget()).collect();
    out.push(
        Col::TriggerTokens,
        Values::OptInt(
            budgets
                .iter()
                .map(|b| b.map(|b| b.trigger_tokens))
                .collect(),
        ),
    );
    out.push(
        Col::TargetTokens,
        Values::OptInt(budgets.iter().map(|b| b.map(|b| b.target_tokens)).collect()),
    );
    out.push(
        Col::IsBaseline,
        Values::Bool(summaries.iter().map(|s| s.is_baseline).collect()),
    );
    out.push(
        Col::Sessions,
        Values::Int(summaries.iter().map(|s| s.sessions as i64).collect()),
    );
    for m in Metric::ALL {
        out.push(
            m.name(),
            figure_column(m, summaries.iter().map(|s| s.total(m)).collect()),
        );
    }
    for m in Metric::ALL.into_iter().filter(|m| m.stats()) {
        let i = m.index();
        let stat = |pick: fn(&super::aggregate::Stats) -> f64| {
            Values::OptFloat(
                summaries
                    .iter()
                    .map(|s| s.stats[i].as_ref().map(pick))
                    .collect(),
            )
        };
        for (which, pick) in Stat::ALL.into_iter().zip(STAT_OF) {
            out.push(Column::Stat(m, which).name(), stat(pick));
        }
    }
    for m in Metric::rankable() {
        out.push(
            Column::Delta(m).name(),
            Values::Float(summaries.iter().map(|s| s.delta(m).abs).collect()),
        );
        out.push(
            Column::DeltaPct(m).name(),
            Values::OptFloat(summaries.iter().map(|s| s.delta(m).pct).collect()),
        );
    }
    interval_columns(&mut out, summaries);
    out.push(
        Col::Pareto,
        Values::Bool(summaries.iter().map(|s| s.pareto).collect()),
    );
    out.push(
        Col::Rank,
        Values::Int(summaries.iter().map(|s| s.rank as i64).collect()),
    );
    out
}

/// Each of [`Stat::ALL`] of a figure's [`super::aggregate::Stats`].
const STAT_OF: [fn(&super::aggregate::Stats) -> f64; 3] = [|s| s.mean, |s| s.median, |s| s.p95];

/// The columns of each config's intervals (see
/// [`super::bootstrap`]): the change against the baseline in the ranking
/// figure's total (`objective_delta_lo`, `_hi`) and in the loss measure's
/// (`loss_delta_lo`, `_hi`), null without sessions; and `tied`, whether
/// the objective's interval overlaps the best config's.
pub const INTERVAL_COLUMNS: [Col; 5] = [
    Col::ObjectiveDeltaLo,
    Col::ObjectiveDeltaHi,
    Col::LossDeltaLo,
    Col::LossDeltaHi,
    Col::Tied,
];

fn interval_columns(out: &mut Columns, summaries: &[ConfigSummary]) {
    let ends: [fn(&super::aggregate::Changes) -> f64; 4] = [
        |c| c.objective.lo,
        |c| c.objective.hi,
        |c| c.loss.lo,
        |c| c.loss.hi,
    ];
    for (name, end) in INTERVAL_COLUMNS.into_iter().zip(ends) {
        out.push(
            name,
            Values::OptFloat(
                summaries
                    .iter()
                    .map(|s| s.interval.as_ref().map(end))
                    .collect(),
            ),
        );
    }
    out.push(
        INTERVAL_COLUMNS[4],
        Values::Bool(summaries.iter().map(|s| s.tied).collect()),
    );
}

/// The indices of `summaries` in rank order.
pub(crate) fn rank_order(summaries: &[ConfigSummary]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..summaries.len()).collect();
    order.sort_by_key(|&i| summaries[i].rank);
    order
}

/// What `summary.json` says besides the tables.
#[derive(Clone, Debug)]
pub struct SummaryInput<'a> {
    /// What was asked for: the PATHS, or the sessions directory.
    pub paths: &'a [String],
    /// The grid file, if one was given.
    pub grid_file: Option<&'a Path>,
    pub grid: &'a Grid,
    /// The policies and their knobs' values.
    pub plan: &'a super::plan::Plan,
    pub prices: &'a Prices,
    /// What the prices stood on, per model.
    pub prices_used: &'a super::prices_used::PricesUsed,
    /// The figure configs were ranked by.
    pub rank_by: Metric,
}

/// What the data files' round-trip tests write: smith's grid at compact-at
/// 0.7 and 0.8 under some policies, at fixed prices, ranked by price.
#[cfg(test)]
pub(crate) struct Fixture {
    pub(crate) grid: Grid,
    pub(crate) plan: super::plan::Plan,
    pub(crate) prices: Prices,
    pub(crate) prices_used: super::prices_used::PricesUsed,
    pub(crate) paths: Vec<String>,
}

#[cfg(test)]
impl Fixture {
    pub(crate) fn new(policies: &[crate::policy::Policy]) -> Fixture {
        let mut spec = super::grid::GridSpec::default();
        spec.set(Knob::CompactAt, "0.7,0.8").unwrap();
        let grid = super::grid::build(&spec, usize::MAX).unwrap();
        let mut spec = super::plan::PolicySpec::default();
        spec.policies = policies.to_vec();
        let plan = super::plan::build(
            &grid,
            &spec,
            crate::sweep::plan::BaselineKind::Smith,
            usize::MAX,
        )
        .unwrap();
        Fixture {
            grid,
            plan,
            prices: "3,3.75,0.3".parse().unwrap(),
            prices_used: super::prices_used::PricesUsed::default(),
            paths: vec!["/corpus".to_string()],
        }
    }

    pub(crate) fn input(&self) -> SummaryInput<'_> {
        SummaryInput {
            paths: &self.paths,
            grid_file: None,
            grid: &self.grid,
            plan: &self.plan,
            prices: &self.prices,
            prices_used: &self.prices_used,
            rank_by: Metric::Price,
        }
    }
}

/// The counts `summary.json` gives about the sessions of a sweep: from a
/// [`Sweep`] run here, or added up over the shards of a sharded one.
#[derive(Clone, Debug)]
pub(crate) struct SweepCounts<'a> {
    pub(crate) sessions: usize,
    /// Sessions that could not be read, in the order they were given.
    pub(crate) unreadable: &'a [Unreadable],
    pub(crate) lines_skipped: usize,
    pub(crate) bytes: u64,
    /// Timing fields: wall time and worker threads (over shards, the
    /// longest shard's time and every shard's threads).
    pub(crate) elapsed_seconds: f64,
    pub(crate) threads: usize,
    pub(crate) configs: usize,
    /// `--thrash-window`: the misfire figures' window.
    pub(crate) thrash_window: usize,
    /// The rows whose ratio or overhead the session chose.
    pub(crate) calibration: Option<super::summary::CalibrationRecord>,
}

impl<'a> SweepCounts<'a> {
    /// The counts of a sweep run in this process.
    pub(crate) fn of(sweep: &'a Sweep) -> SweepCounts<'a> {
        SweepCounts {
            sessions: sweep.sessions.len(),
            unreadable: &sweep.unreadable,
            lines_skipped: sweep.lines_skipped(),
            bytes: sweep.bytes(),
            elapsed_seconds: sweep.elapsed.as_secs_f64(),
            threads: sweep.threads,
            configs: sweep.configs.len(),
            thrash_window: sweep
                .rows
                .first()
                .map_or(crate::replay::DEFAULT_THRASH_WINDOW, |r| r.facts.window()),
            calibration: super::summary::CalibrationRecord::of(
                sweep.rows.iter().map(|r| &r.facts.calibration),
            ),
        }
    }
}

impl ConfigRecord {
    /// A config's knobs, label, budget and totals; its deltas against the
    /// baseline `with_deltas`.
    fn of(s: &ConfigSummary, with_deltas: bool) -> ConfigRecord {
        let b = s.setup.fixed_budget();
        ConfigRecord {
            index: s.index,
            label: s.label.clone(),
            policy: s.setup.policy,
            config: s.config,
            policy_knobs: serde_json::to_value(&s.setup.knobs).unwrap_or(Value::Null),
            trigger_tokens: b.map(|b| b.trigger_tokens),
            target_tokens: b.map(|b| b.target_tokens),
            rank: s.rank,
            pareto: s.pareto,
            totals: Totals(s.totals),
            estimator: s.setup.estimator,
            delta_vs_baseline: with_deltas.then(|| {
                Deltas(
                    Metric::rankable()
                        .map(|m| (m, s.deltas[m.index()]))
                        .collect(),
                )
            }),
        }
    }
}

/// An axis of knob values as the summary writes it: a word knob's by name.
fn axis(k: Knob, values: &[f64]) -> Vec<AxisValue> {
    values
        .iter()
        .map(|&x| match (k.kind(), k.word(x)) {
            (KnobKind::Word, Some(w)) => AxisValue::Word(w.to_string()),
            _ => AxisValue::new(x, k.is_integer()),
        })
        .collect()
}

/// A policy knob's axis as the summary writes it.
fn policy_axis(k: PolicyKnob, values: &[KnobValue]) -> Vec<AxisValue> {
    values
        .iter()
        .map(|v| match v {
            KnobValue::Number(x) => AxisValue::new(*x, k.is_integer()),
            KnobValue::Names(n) => AxisValue::Names(n.clone()),
        })
        .collect()
}

/// `summary.json`: what was swept (paths, sessions read and skipped, the
/// grid's axes, prices), the baseline, the best config by rank, and the
/// Pareto front.
pub(crate) fn summary(
    sweep: &SweepCounts,
    summaries: &[ConfigSummary],
    input: &SummaryInput,
) -> Summary {
    let order = rank_order(summaries);
    Summary {
        schema_version: SCHEMA_VERSION,
        tool: concat!("smith-calibrate ", env!("CARGO_PKG_VERSION")).to_string(),
        paths: input.paths.to_vec(),
        sessions: sweep.sessions,
        sessions_skipped: sweep.unreadable.len(),
        skipped: sweep.unreadable.to_vec(),
        lines_skipped: sweep.lines_skipped,
        bytes: sweep.bytes,
        elapsed_seconds: sweep.elapsed_seconds,
        threads: sweep.threads,
        thrash_window: sweep.thrash_window,
        grid: GridRecord {
            file: input.grid_file.map(Path::to_path_buf),
            axes: Ordered(
                input
                    .grid
                    .axes
                    .iter()
                    .map(|(k, v)| (k.field().to_string(), axis(*k, v)))
                    .collect(),
            ),
            configs: sweep.configs,
            smith_configs: input.grid.configs.len(),
            impossible_left_out: input.grid.impossible,
            policies: input.plan.policies.clone(),
            policy_axes: Ordered(
                input
                    .plan
                    .policy_axes
                    .iter()
                    .map(|(k, v)| (k.field(), policy_axis(*k, v)))
                    .collect(),
            ),
            baseline: input.plan.baseline,
        },
        prices: PriceRecord {
            input: input.prices.input,
            cache_write: input.prices.cache_write,
            cache_read: input.prices.cache_read,
            unit: PRICE_UNIT.to_string(),
            used: input.prices_used.clone(),
        },
        rank_by: input.rank_by,
        cost_model: CostModel {
            sessions_with_lifetime: summaries
                .iter()
                .find(|s| s.is_baseline)
                .map_or(0.0, |s| s.total(Metric::TtlApplied)),
            note: super::cost_note::note(summaries, None),
        },
        baseline: summaries
            .get(Grid::BASELINE)
            .map(|s| ConfigRecord::of(s, false)),
        best: order
            .first()
            .map(|&i| ConfigRecord::of(&summaries[i], true)),
        pareto_front: order
            .iter()
            .map(|&i| &summaries[i])
            .filter(|s| s.pareto)
            .map(|s| FrontPoint {
                label: s.label.clone(),
                policy: s.setup.policy,
                price: s.total(Metric::Price),
                results_mangled: s.total(Metric::ResultsMangled) as i64,
                needed_again: s.total(Metric::NeededAgain) as i64,
            })
            .collect(),
        calibration: sweep.calibration,
        tokens: super::summary::CalibrationRecord::units(
            sweep.calibration.as_ref(),
            summaries.iter().map(|s| s.setup.estimator),
            input.plan.baseline,
        ),
        shard: None,
    }
}

/// Everything `--out` writes, as DataFrames and JSON.
pub(crate) fn export(
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    prices: &Prices,
    input: &SummaryInput,
    verdict: serde_json::Value,
) -> anyhow::Result<Export> {
    Ok(Export {
        sessions: sessions_table(sweep, prices).to_frame()?,
        configs: configs_table(summaries).to_frame()?,
        summary: summary(&SweepCounts::of(sweep), summaries, input).to_value()?,
        verdict,
    })
}
