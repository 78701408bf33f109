//! The verdict on a sweep: which config to write into smith's
//! `config.toml`, how sure that is, and whether the choice holds on
//! sessions it was not chosen on.
//!
//! The rule ([`choose`]): among the configs smith would accept
//! ([`smith_config::accepts_config`]) whose change in the loss measure
//! passes `--max-loss` (by default: the upper end of its interval at or
//! below zero, so the data say with 95% confidence it loses no more than
//! the baseline), and whose whole interval of the change in the objective
//! lies below zero (better than the baseline beyond the bootstrap's
//! noise), the one with the lowest objective. No such config, too few
//! sessions to trust an interval ([`MIN_SESSIONS`]), or a choice whose
//! saving vanishes out of sample ([`cross_validate`]): keep the baseline.
//!
//! Out of sample, the sessions are split into `k` folds; the rule chooses
//! on `k − 1` of them (its own intervals drawn from those sessions only)
//! and the held-out fold measures the chosen config's saving. The sum over
//! folds is what following this procedure saved on sessions it had not
//! seen, which is what a user should expect of next month's sessions.

mod refused;
pub mod smith_config;
#[cfg(all(test, feature = "full"))]
mod verdict_tests;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::engine::Config;
use crate::policy::Policy;
use crate::sweep::aggregate::{mark_tied, ConfigSummary, PerSession};
use crate::sweep::bootstrap::{self, Bootstrap, Interval};
use crate::sweep::figures::{Metric, LOSS_MEASURE};
use crate::sweep::grid::Grid;
use crate::synth::rng::{mix64, Rng};

/// The figure a verdict minimises unless `--objective` (or `sweep
/// --rank-by`) says otherwise: the whole price with what the lost results
/// are expected to cost when fetched again, so that a config cheap only
/// because it loses what the agent needs is not the cheapest.
pub(crate) const DEFAULT_OBJECTIVE: Metric = Metric::PriceWithRefetch;

/// Fewest sessions a recommendation is made from. A percentile bootstrap
/// over fewer units undercovers: its resamples take few distinct values
/// (with 5 sessions there are only 126 distinct draws), one session can be
/// the whole difference, and five folds would hold a session or two each.
pub const MIN_SESSIONS: usize = 10;

/// Folds of the out-of-sample check unless `--folds` says otherwise.
pub(crate) const DEFAULT_FOLDS: usize = 5;

/// Salt of the stream that deals sessions into folds, so the folds do not
/// depend on the bootstrap's draws.
const FOLD_STREAM: u64 = 0xf01d;

/// How much more loss a recommendation may cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MaxLoss {
    /// No worse than the baseline at 95% confidence: the interval's upper
    /// end is at or below 0.
    Baseline,
    /// At most this many more (the interval's upper end).
    Extra(f64),
    /// At most this percentage of the baseline's total more.
    Percent(f64),
    /// No constraint.
    Any,
}

impl MaxLoss {
    /// Whether a change in the loss measure with this interval is allowed,
    /// the baseline's total being `base`.
    pub(crate) fn allows(&self, loss: &Interval, base: f64) -> bool {
        match *self {
            MaxLoss::Baseline => loss.hi <= 0.0,
            MaxLoss::Extra(n) => loss.hi <= n,
            MaxLoss::Percent(p) => loss.hi <= p / 100.0 * base.abs(),
            MaxLoss::Any => true,
        }
    }
}

/// A `--max-loss` that is none of [`MaxLoss`]'s forms; the text, trimmed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: write baseline, any, a count such as 5, or a percentage such as 2%")]
pub(crate) struct MaxLossError(pub(crate) String);

impl FromStr for MaxLoss {
    type Err = MaxLossError;

    fn from_str(s: &str) -> Result<MaxLoss, MaxLossError> {
        let s = s.trim();
        let bad = || MaxLossError(s.to_string());
        match s {
            "baseline" => Ok(MaxLoss::Baseline),
            "any" => Ok(MaxLoss::Any),
            _ => {
                let (number, pct) = match s.strip_suffix('%') {
                    Some(n) => (n, true),
                    None => (s, false),
                };
                let v: f64 = number.trim().parse().map_err(|_| bad())?;
                if !v.is_finite() || v < 0.0 {
                    return Err(bad());
                }
                Ok(if pct {
                    MaxLoss::Percent(v)
                } else {
                    MaxLoss::Extra(v)
                })
            }
        }
    }
}

impl fmt::Display for MaxLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxLoss::Baseline => f.write_str("baseline"),
            MaxLoss::Extra(n) => write!(f, "{n}"),
            MaxLoss::Percent(p) => write!(f, "{p}%"),
            MaxLoss::Any => f.write_str("any"),
        }
    }
}

/// What a recommendation is asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// The figure to minimise: the one the summaries were ranked by, whose
    /// intervals they carry.
    pub(crate) objective: Metric,
    pub(crate) max_loss: MaxLoss,
    pub(crate) draws: Bootstrap,
    pub(crate) folds: usize,
    /// Evidence rows besides the baseline and the chosen config.
    pub(crate) top: usize,
}

/// Evidence rows a verdict lists unless told otherwise.
pub(crate) const DEFAULT_TOP: usize = 10;

impl Settings {
    /// What a sweep decides with when it is asked nothing more: its ranking
    /// figure as the objective and `recommend`'s defaults for the rest, so
    /// that a sweep and `recommend` over the same grid and sessions give
    /// the same verdict.
    pub fn for_sweep(objective: Metric) -> Settings {
        Settings {
            objective,
            max_loss: MaxLoss::Baseline,
            draws: Bootstrap::default(),
            folds: DEFAULT_FOLDS,
            top: DEFAULT_TOP,
        }
    }
}

/// One config as the evidence shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub(crate) config: usize,
    pub label: String,
    /// The policy it ran: `smith`, or `recorded` for a baseline that is what
    /// the agents did.
    #[serde(default)]
    pub(crate) policy: String,
    pub max_tokens: u64,
    pub compact_at: f64,
    pub compact_to: f64,
    pub(crate) result_cap: usize,
    pub(crate) window: usize,
    /// smith would accept its `[context]` values.
    pub accepted: bool,
    /// Its loss passes `--max-loss`.
    pub(crate) loss_ok: bool,
    pub(crate) baseline: bool,
    pub(crate) chosen: bool,
    /// Its objective's interval overlaps the chosen (or best) config's.
    pub(crate) tied: bool,
    pub(crate) objective: f64,
    /// Change in the objective against the baseline, in percent of the
    /// baseline's total, and its interval.
    pub(crate) objective_change_pct: Option<f64>,
    pub objective_interval_pct: Option<Interval>,
    pub(crate) loss: f64,
    /// Change in the loss measure's total, and its interval (counts).
    pub(crate) loss_change: f64,
    pub(crate) loss_interval: Option<Interval>,
}

impl Evidence {
    /// The objective's change against the baseline in percent, as
    /// [`crate::format::change`] writes it; `-` where there is none.
    pub(crate) fn objective_change_text(&self) -> String {
        match self.objective_change_pct {
            None => "-".to_string(),
            p => crate::format::change(p),
        }
    }

    /// The objective's change as every surface writes it: `=` for none,
    /// `-` for no interval.
    pub(crate) fn objective_interval_text(&self) -> String {
        // Already in percent: of a base of 100.
        self.objective_interval_pct
            .map_or("-".to_string(), |iv| iv.describe(100.0, false))
    }

    /// The loss measure's change, `=` for none.
    pub(crate) fn loss_change_text(&self) -> String {
        if self.loss_change == 0.0 {
            "=".to_string()
        } else {
            signed_count(self.loss_change)
        }
    }

    /// The loss measure's interval, `=` for none, `-` for no interval.
    pub(crate) fn loss_interval_text(&self) -> String {
        self.loss_interval.map_or("-".to_string(), |iv| {
            if iv.lo == 0.0 && iv.hi == 0.0 {
                "=".to_string()
            } else {
                format!("{}…{}", signed_count(iv.lo), signed_count(iv.hi))
            }
        })
    }
}

/// A signed count, with a decimal where a percentile fell between two.
pub(crate) fn signed_count(x: f64) -> String {
    if (x * 10.0).round() % 10.0 == 0.0 {
        format!("{x:+.0}")
    } else {
        format!("{x:+.1}")
    }
}

/// One fold of the out-of-sample check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Fold {
    /// Sessions held out.
    pub(crate) sessions: usize,
    /// What the rule chose on the other folds (`None`: keep the baseline).
    pub(crate) chosen: Option<String>,
    /// Objective saved on the held-out sessions (baseline minus chosen).
    pub(crate) saving: f64,
    /// Change in the loss measure on them.
    pub(crate) loss_change: f64,
}

/// The k-fold check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutOfSample {
    pub(crate) folds: Vec<Fold>,
    /// Sum of the folds' savings, and as a percentage of the baseline's
    /// total over every session.
    pub saving: f64,
    pub saving_pct: Option<f64>,
    pub(crate) loss_change: f64,
}

/// What adapting the config per session could still gain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Headroom {
    /// The accepted config with the lowest objective over all sessions.
    pub(crate) best_single: String,
    pub(crate) best_single_saving_pct: Option<f64>,
    /// Each session under its own best accepted config, in hindsight.
    pub(crate) hindsight_saving_pct: Option<f64>,
    /// The two apart: what the best single config leaves on the table,
    /// in percent of the baseline's total.
    pub headroom_pct: Option<f64>,
    pub(crate) headroom: f64,
}

/// The verdict, as `recommend` prints it, writes it (`--json`,
/// [`crate::export::VERDICT_FILE`]) and the report shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether to change the configuration.
    pub change: bool,
    /// The verdict in one sentence.
    pub sentence: String,
    /// Why the baseline is kept, when it is.
    pub(crate) reason: Option<String>,
    pub objective: Metric,
    pub(crate) loss_measure: Metric,
    pub max_loss: String,
    pub sessions: usize,
    pub configs: usize,
    /// Configs smith would accept.
    pub accepted: usize,
    pub(crate) min_sessions: usize,
    pub(crate) confidence: f64,
    pub(crate) bootstrap: Bootstrap,
    pub baseline: Evidence,
    pub chosen: Option<Evidence>,
    /// The chosen config's saving over all sessions (baseline minus
    /// chosen), and in percent of the baseline's total.
    pub(crate) in_sample_saving: f64,
    pub in_sample_saving_pct: Option<f64>,
    pub out_of_sample: Option<OutOfSample>,
    pub headroom: Option<Headroom>,
    /// The `[context]` table to paste (the baseline's when it is kept).
    pub snippet: String,
    /// For smith's maintainers, when the window or the result cap was swept.
    pub maintainers_note: Option<String>,
    /// The baseline, the chosen config and the best by the objective.
    pub evidence: Vec<Evidence>,
    /// The engine every config replayed under (docs/engine.md §4.9).
    #[serde(default)]
    pub engine: crate::engine::EngineVersion,
    /// What the same rule chose on the same sessions under smith's other
    /// engine, where `recommend` replayed it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_engine: Option<OtherEngine>,
}

/// The verdict under smith's other engine, in one line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OtherEngine {
    pub engine: crate::engine::EngineVersion,
    /// The config it would choose (`None`: it keeps the baseline).
    pub chosen: Option<String>,
    /// Its saving over the baseline in percent of the baseline's total.
    pub saving_pct: Option<f64>,
    /// The line: "under --engine next (smith after #118, unreleased) it
    /// would …".
    pub line: String,
}

impl OtherEngine {
    /// `v`, decided under `engine`, as the other engine's line.
    pub fn of(v: &Verdict) -> OtherEngine {
        let engine = v.engine;
        let what = match &v.chosen {
            Some(c) => format!(
                "it would choose {} ({} {})",
                c.label,
                v.in_sample_saving_pct
                    .map_or("-".to_string(), |p| format!("{:+.1}%", -p)),
                v.objective.name()
            ),
            None => format!("it would keep {}", v.baseline.label),
        };
        OtherEngine {
            engine,
            chosen: v.chosen.as_ref().map(|c| c.label.clone()),
            saving_pct: v.chosen.as_ref().and(v.in_sample_saving_pct),
            line: format!("under --engine {engine} ({}) {what}", engine.describe()),
        }
    }
}

/// Whether config `c` is one smith could be told to run: smith's own
/// policy, with `[context]` values it accepts.
fn accepted(s: &ConfigSummary) -> bool {
    s.setup.policy == Policy::Smith
        && s.setup.knobs.cold_compact_at == 0.0
        && smith_config::accepts_config(&s.config)
}

/// The rule: the config (never the baseline) with the lowest objective
/// total among those `eligible`, whose loss interval `max_loss` allows and
/// whose objective interval lies wholly below 0; `None` to keep the
/// baseline. `totals[c]` are the changes' sums `[objective, loss]`;
/// `base_loss` the baseline's loss total over the same sessions.
pub(crate) fn choose(
    totals: &[[f64; 2]],
    intervals: &[Option<[Interval; 2]>],
    eligible: &[bool],
    max_loss: MaxLoss,
    base_loss: f64,
) -> Option<usize> {
    (0..totals.len())
        .filter(|&c| c != Grid::BASELINE && eligible[c])
        .filter(|&c| {
            intervals[c]
                .is_some_and(|[obj, loss]| obj.hi < 0.0 && max_loss.allows(&loss, base_loss))
        })
        .min_by(|&a, &b| {
            totals[a][0]
                .total_cmp(&totals[b][0])
                .then(totals[a][1].total_cmp(&totals[b][1]))
                .then(a.cmp(&b))
        })
}

fn sums(changes: &[Vec<[f64; 2]>]) -> Vec<[f64; 2]> {
    changes
        .iter()
        .map(|col| {
            col.iter()
                .fold([0.0, 0.0], |a, d| [a[0] + d[0], a[1] + d[1]])
        })
        .collect()
}

/// Deals `n` sessions into `k` folds at random (seeded): `fold[s]`.
pub(crate) fn deal(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Rng::new(seed ^ mix64(FOLD_STREAM));
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut fold = vec![0; n];
    for (i, &s) in order.iter().enumerate() {
        fold[s] = i % k.max(1);
    }
    fold
}

/// The out-of-sample check: for each fold, [`choose`] on the other folds
/// (intervals drawn from their sessions alone), then the chosen config's
/// saving on the fold.
pub(crate) fn cross_validate(
    per: &PerSession,
    labels: &[String],
    eligible: &[bool],
    settings: &Settings,
) -> Vec<Fold> {
    let n = per.baseline.len();
    let fold = deal(n, settings.folds, settings.draws.seed);
    // Only the configs the rule may choose need intervals: each resample's
    // draw depends on the seed and its number alone, so leaving the others
    // out changes none of theirs.
    let candidates: Vec<usize> = (0..per.changes.len())
        .filter(|&c| c != Grid::BASELINE && eligible[c])
        .collect();
    (0..settings.folds)
        .map(|f| {
            let train: Vec<usize> = (0..n).filter(|&s| fold[s] != f).collect();
            let held: Vec<usize> = (0..n).filter(|&s| fold[s] == f).collect();
            let sub: Vec<Vec<[f64; 2]>> = per
                .changes
                .iter()
                .map(|col| train.iter().map(|&s| col[s]).collect())
                .collect();
            let train_base: Vec<[f64; 2]> = train.iter().map(|&s| per.baseline[s]).collect();
            let picked: Vec<Vec<[f64; 2]>> = candidates.iter().map(|&c| sub[c].clone()).collect();
            let mut intervals = vec![None; sub.len()];
            for (&c, iv) in
                candidates
                    .iter()
                    .zip(bootstrap::intervals(&train_base, &picked, &settings.draws))
            {
                intervals[c] = iv;
            }
            let base_loss: f64 = train_base.iter().map(|b| b[1]).sum();
            let chosen = choose(
                &sums(&sub),
                &intervals,
                eligible,
                settings.max_loss,
                base_loss,
            );
            let (saving, loss_change) = match chosen {
                Some(c) => held.iter().fold((0.0, 0.0), |(a, l), &s| {
                    (a - per.changes[c][s][0], l + per.changes[c][s][1])
                }),
                None => (0.0, 0.0),
            };
            Fold {
                sessions: held.len(),
                chosen: chosen.map(|c| labels[c].clone()),
                saving,
                loss_change,
            }
        })
        .collect()
}

fn pct(v: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| v / base.abs() * 100.0)
}

/// The headroom over the accepted configs.
fn headroom(per: &PerSession, labels: &[String], eligible: &[bool], base: f64) -> Option<Headroom> {
    let totals = sums(&per.changes);
    let best = (0..totals.len())
        .filter(|&c| eligible[c])
        .min_by(|&a, &b| totals[a][0].total_cmp(&totals[b][0]).then(a.cmp(&b)))?;
    let hindsight: f64 = (0..per.baseline.len())
        .map(|s| {
            (0..totals.len())
                .filter(|&c| eligible[c])
                .map(|c| per.changes[c][s][0])
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    let single = totals[best][0];
    Some(Headroom {
        best_single: labels[best].clone(),
        best_single_saving_pct: pct(-single, base),
        hindsight_saving_pct: pct(-hindsight, base),
        headroom: single - hindsight,
        headroom_pct: pct(single - hindsight, base),
    })
}

fn evidence(
    s: &ConfigSummary,
    settings: &Settings,
    base: &ConfigSummary,
    chosen: Option<usize>,
) -> Evidence {
    let obj = settings.objective;
    let base_obj = base.total(obj);
    let base_loss = base.total(LOSS_MEASURE);
    Evidence {
        config: s.index,
        label: s.label.clone(),
        policy: s.setup.policy.to_string(),
        max_tokens: s.config.max_tokens,
        compact_at: s.config.compact_at,
        compact_to: s.config.compact_to,
        result_cap: s.config.result_cap,
        window: s.config.window_turns,
        accepted: accepted(s),
        loss_ok: s
            .interval
            .is_some_and(|iv| settings.max_loss.allows(&iv.loss, base_loss)),
        baseline: s.is_baseline,
        chosen: chosen == Some(s.index),
        tied: s.tied,
        objective: s.total(obj),
        objective_change_pct: pct(s.total(obj) - base_obj, base_obj),
        objective_interval_pct: s.interval.and_then(|iv| iv.objective.pct_of(base_obj)),
        loss: s.total(LOSS_MEASURE),
        loss_change: s.total(LOSS_MEASURE) - base_loss,
        loss_interval: s.interval.map(|iv| iv.loss),
    }
}

/// A number of the objective's unit, for a sentence: dollars for a price.
pub(crate) fn amount(metric: Metric, v: f64) -> String {
    if metric.is_price() {
        crate::format::money(v)
    } else {
        format!("{v:.0}")
    }
}

/// The in-sample saving for a person: the amount and its share of the
/// baseline, or, when the verdict keeps the baseline, that there is none
/// (an amount of nothing and a percentage of nothing said no more).
pub(crate) fn saving_in_sample(v: &Verdict) -> String {
    match (&v.chosen, v.in_sample_saving_pct) {
        (None, _) => "none: the verdict keeps the baseline".to_string(),
        (Some(_), Some(p)) => format!(
            "{} ({p:.1}% of the baseline)",
            amount(v.objective, v.in_sample_saving)
        ),
        (Some(_), None) => amount(v.objective, v.in_sample_saving),
    }
}

/// The verdict on `summaries` (ranked by `settings.objective`, in grid
/// order, the baseline first) and their per-session changes. Marks the
/// configs tied with the chosen one.
pub fn decide(summaries: &mut [ConfigSummary], per: &PerSession, settings: &Settings) -> Verdict {
    let obj = settings.objective;
    let n = per.baseline.len();
    let eligible: Vec<bool> = summaries.iter().map(accepted).collect();
    let labels: Vec<String> = summaries.iter().map(|s| s.label.clone()).collect();
    let base_obj = summaries[Grid::BASELINE].total(obj);
    let base_loss = summaries[Grid::BASELINE].total(LOSS_MEASURE);
    let totals = sums(&per.changes);
    let intervals: Vec<Option<[Interval; 2]>> = summaries
        .iter()
        .map(|s| s.interval.map(|iv| [iv.objective, iv.loss]))
        .collect();
    let in_sample = choose(&totals, &intervals, &eligible, settings.max_loss, base_loss);
    let enough = n >= MIN_SESSIONS && settings.folds >= 2 && n >= settings.folds;
    let out_of_sample = enough.then(|| {
        let folds = cross_validate(per, &labels, &eligible, settings);
        let saving: f64 = folds.iter().map(|f| f.saving).sum();
        OutOfSample {
            saving,
            saving_pct: pct(saving, base_obj),
            loss_change: folds.iter().map(|f| f.loss_change).sum(),
            folds,
        }
    });
    let in_sample_saving = in_sample.map_or(0.0, |c| -totals[c][0]);
    let reason = kept_because(
        n,
        in_sample.is_some(),
        out_of_sample.as_ref(),
        in_sample_saving,
        settings,
    );
    let chosen = if reason.is_none() { in_sample } else { None };
    if let Some(c) = chosen {
        mark_tied(summaries, c);
    }
    let base = &summaries[Grid::BASELINE];
    let chosen_ev = chosen.map(|c| evidence(&summaries[c], settings, base, chosen));
    let rows = evidence_rows(summaries, &eligible, chosen, in_sample, settings);
    let target: &Config = &chosen.map_or(base, |c| &summaries[c]).config;
    let sentence = match (&chosen_ev, &reason) {
        (Some(c), _) => change_sentence(
            c,
            base,
            settings,
            n,
            pct(in_sample_saving, base_obj).unwrap_or(0.0),
            out_of_sample.as_ref().and_then(|o| o.saving_pct),
        ),
        (None, Some(why)) => format!("{} ({}): {why}.", keep_words(base), base.label),
        (None, None) => format!("{} ({}).", keep_words(base), base.label),
    };
    // Sessions of a model no price table names have no dollars: a verdict
    // in dollars is made without them, and says so.
    let left_out = summaries[Grid::BASELINE].sessions.saturating_sub(n);
    let sentence = if obj.is_price() && left_out > 0 {
        format!(
            "{sentence} Made on the priced sessions only: {} left out, their models in no price table.",
            crate::format::plural(left_out, "session")
        )
    } else {
        sentence
    };
    Verdict {
        change: chosen.is_some(),
        sentence,
        reason,
        objective: obj,
        loss_measure: LOSS_MEASURE,
        max_loss: settings.max_loss.to_string(),
        sessions: n,
        configs: summaries.len(),
        accepted: eligible.iter().filter(|&&e| e).count(),
        min_sessions: MIN_SESSIONS,
        confidence: bootstrap::CONFIDENCE,
        bootstrap: settings.draws,
        baseline: evidence(base, settings, base, chosen),
        chosen: chosen_ev,
        in_sample_saving: if chosen.is_some() {
            in_sample_saving
        } else {
            0.0
        },
        in_sample_saving_pct: chosen.and_then(|_| pct(in_sample_saving, base_obj)),
        out_of_sample,
        headroom: headroom(per, &labels, &eligible, base_obj),
        snippet: smith_config::snippet(target),
        maintainers_note: maintainers_note(summaries, base, target),
        evidence: rows
            .iter()
            .map(|&i| evidence(&summaries[i], settings, base, chosen))
            .collect(),
        // The recorded baseline is no smith config: the smith rows say.
        engine: summaries
            .iter()
            .find(|s| s.setup.policy == Policy::Smith)
            .map_or(crate::engine::EngineVersion::RELEASED, |s| s.config.engine),
        other_engine: None,
    }
}

/// Why the baseline is kept over `n` sessions (`None`: it is not): too few
/// sessions, no config better beyond its interval (`found` is false), or a
/// saving that vanishes out of sample.
fn kept_because(
    n: usize,
    found: bool,
    out_of_sample: Option<&OutOfSample>,
    in_sample_saving: f64,
    settings: &Settings,
) -> Option<String> {
    let obj = settings.objective;
    if n < MIN_SESSIONS {
        Some(format!(
            "{n} sessions are too few to trust an interval (a recommendation needs {MIN_SESSIONS})"
        ))
    } else if !found {
        Some(format!(
            "no config smith accepts is better in {obj} than the baseline beyond its 95% interval{}",
            match settings.max_loss {
                MaxLoss::Any => String::new(),
                m => format!(" while keeping {LOSS_MEASURE} within --max-loss {m}"),
            }
        ))
    } else if out_of_sample.is_none_or(|o| o.saving <= 0.0) {
        Some(format!(
            "the saving vanishes out of sample: chosen on {} of {} folds, the configs saved {} on the folds they were not chosen on (in sample: {})",
            settings.folds - 1,
            settings.folds,
            out_of_sample.map_or("nothing".to_string(), |o| amount(obj, o.saving)),
            amount(obj, in_sample_saving)
        ))
    } else {
        None
    }
}

/// The configs the evidence shows, in order: the baseline, the chosen
/// one, the in-sample choice, the best the loss constraint allows, then
/// the best by the objective up to `settings.top` more.
fn evidence_rows(
    summaries: &[ConfigSummary],
    eligible: &[bool],
    chosen: Option<usize>,
    in_sample: Option<usize>,
    settings: &Settings,
) -> Vec<usize> {
    let obj = settings.objective;
    let base_loss = summaries[Grid::BASELINE].total(LOSS_MEASURE);
    let mut order: Vec<usize> = (0..summaries.len()).collect();
    order.sort_by(|&a, &b| {
        summaries[a]
            .total(obj)
            .total_cmp(&summaries[b].total(obj))
            .then(a.cmp(&b))
    });
    let mut rows: Vec<usize> = vec![Grid::BASELINE];
    rows.extend(chosen);
    rows.extend(in_sample.filter(|c| Some(*c) != chosen));
    // The best config the loss constraint allows, significant or not: what
    // the constraint leaves on the table is evidence too.
    let allowed = order.iter().copied().find(|&i| {
        i != Grid::BASELINE
            && eligible[i]
            && summaries[i]
                .interval
                .is_some_and(|iv| settings.max_loss.allows(&iv.loss, base_loss))
    });
    if let Some(a) = allowed.filter(|a| !rows.contains(a)) {
        rows.push(a);
    }
    for &i in &order {
        if rows.len() >= settings.top + 2 {
            break;
        }
        if !rows.contains(&i) {
            rows.push(i);
        }
    }
    rows
}

/// For smith's maintainers, when the window or the result cap was swept:
/// both are constants in smith's code, which `target` may or may not keep.
fn maintainers_note(
    summaries: &[ConfigSummary],
    base: &ConfigSummary,
    target: &Config,
) -> Option<String> {
    let swept_constants = summaries.iter().any(|s| {
        s.config.window_turns != base.config.window_turns
            || s.config.result_cap != base.config.result_cap
    });
    swept_constants.then(|| {
        let d = Config::default();
        if target.window_turns != d.window_turns || target.result_cap != d.result_cap {
            format!(
                "For smith's maintainers: the chosen config also runs with a recency window of {} turns and a result cap of {} bytes; \
                 both are constants in smith's code (context.cr: {} turns, {} bytes), which no config.toml can change",
                target.window_turns, target.result_cap, d.window_turns, d.result_cap
            )
        } else {
            format!(
                "For smith's maintainers: the recency window and the result cap were swept, and the chosen config keeps smith's constants ({} turns, {} bytes)",
                d.window_turns, d.result_cap
            )
        }
    })
}

/// What keeping the baseline means: the user's configuration, or, where
/// the baseline is what the agents did, their own compaction.
fn keep_words(base: &ConfigSummary) -> &'static str {
    if base.setup.policy == Policy::Recorded {
        "Keep the agent's own compaction: no smith config beats the recorded run"
    } else {
        "Keep your configuration"
    }
}

/// The verdict's sentence when it changes the config to `c`: saving
/// `saving_pct` of the baseline's objective over `n` sessions in sample,
/// `oos_pct` out of sample.
fn change_sentence(
    c: &Evidence,
    base: &ConfigSummary,
    settings: &Settings,
    n: usize,
    saving_pct: f64,
    oos_pct: Option<f64>,
) -> String {
    let obj = settings.objective;
    let loss_words = match settings.max_loss {
        MaxLoss::Baseline => format!("{LOSS_MEASURE} no worse than now at 95% confidence"),
        MaxLoss::Any => format!("{LOSS_MEASURE} not constrained"),
        m => format!("{LOSS_MEASURE} within --max-loss {m}"),
    };
    format!(
        "Set compact_at = {} and compact_to = {}{}: {obj} {} against {} {} ({saving_pct:.1}% lower; 95% CI of the change {}) over {n} sessions, {} on sessions it was not chosen on ({}-fold), with {loss_words}.",
        c.compact_at,
        c.compact_to,
        if c.max_tokens != base.config.max_tokens && c.max_tokens != crate::engine::budget::OWN_WINDOW {
            format!(" with max_tokens = {}", c.max_tokens)
        } else {
            String::new()
        },
        amount(obj, c.objective),
        amount(obj, base.total(obj)),
        if base.setup.policy == Policy::Recorded {
            "in the recorded run"
        } else {
            "now"
        },
        c.objective_interval_pct
            .map_or("-".to_string(), |iv| format!("{:+.1}% … {:+.1}%", iv.lo, iv.hi)),
        oos_pct.map_or("-".to_string(), |p| format!("{p:.1}% lower")),
        settings.folds
    )
}

/// The verdict on a sweep's configs ([`decide`]), with a note while the
/// folds are drawn: the one decision `sweep`, `merge` and `recommend` make,
/// so that none of them contradicts another on the same sessions.
pub(crate) fn decide_verdict(
    summaries: &mut [ConfigSummary],
    per: &PerSession,
    settings: &Settings,
) -> Verdict {
    let started = std::time::Instant::now();
    let spinner = crate::messages::spinner(format!(
        "deciding: {} resamples over {} folds",
        settings.draws.resamples, settings.folds
    ));
    let verdict = decide(summaries, per, settings);
    spinner.finish_and_clear();
    if started.elapsed().as_secs_f64() >= 1.0 {
        crate::note!(
            "decided in {:.1}s ({} folds of {} resamples)",
            started.elapsed().as_secs_f64(),
            settings.folds,
            settings.draws.resamples
        );
    }
    verdict
}

/// [`decide_verdict`] by the sweep's settings for `rank_by`, as
/// `verdict.json` holds it: the decision handed to a merge of shards and
/// to a report compared with another baseline.
pub(crate) fn decide_json(
    summaries: &mut [ConfigSummary],
    per: &PerSession,
    rank_by: Metric,
) -> serde_json::Value {
    serde_json::to_value(decide_verdict(
        summaries,
        per,
        &Settings::for_sweep(rank_by),
    ))
    .unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_loss_reads_its_four_forms() {
        assert_eq!("baseline".parse(), Ok(MaxLoss::Baseline));
        assert_eq!("any".parse(), Ok(MaxLoss::Any));
        assert_eq!("3".parse(), Ok(MaxLoss::Extra(3.0)));
        assert_eq!("2.5%".parse(), Ok(MaxLoss::Percent(2.5)));
        assert!("-1".parse::<MaxLoss>().is_err());
        assert!("lots"
            .parse::<MaxLoss>()
            .unwrap_err()
            .to_string()
            .contains("baseline"));
        let iv = Interval { lo: -1.0, hi: 2.0 };
        assert!(!MaxLoss::Baseline.allows(&iv, 100.0));
        assert!(MaxLoss::Extra(2.0).allows(&iv, 100.0));
        assert!(MaxLoss::Percent(2.0).allows(&iv, 100.0));
        assert!(!MaxLoss::Percent(1.0).allows(&iv, 100.0));
    }

    #[test]
    fn folds_are_even_and_depend_on_the_seed() {
        let f = deal(23, 5, 1);
        for k in 0..5 {
            let size = f.iter().filter(|&&x| x == k).count();
            assert!(size == 4 || size == 5, "{size}");
        }
        assert_eq!(f, deal(23, 5, 1));
        assert_ne!(f, deal(23, 5, 2));
    }
}
