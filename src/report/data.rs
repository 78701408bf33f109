//! Reading a sweep's output folder back: `configs.parquet`,
//! `sessions.parquet` and `summary.json`, as `sweep --out` writes them (see
//! `sweep::tables`). Columns are found by the names of
//! `sweep::columns`, the writer's, so a column the sweep adds later changes
//! nothing here; a column missing is an error that says to run the sweep
//! again.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use polars::prelude::{DataFrame, DataType, ParquetReader, SerReader};

use crate::engine::Config;
use crate::policy::{Policy, PolicyKnob, Setup, Value};
use crate::recommend::Verdict;
use crate::sweep::aggregate::{Changes, Delta, Stats};
use crate::sweep::bootstrap::Interval;
use crate::sweep::columns::Col;
use crate::sweep::columns::{Column, Stat};
use crate::sweep::figures::Metric;
use crate::sweep::grid::Knob;
use crate::sweep::summary::Summary;

/// The files of a sweep's output folder the report reads.
pub(crate) use crate::sweep::{CONFIGS_FILE, SESSIONS_FILE, SUMMARY_FILE};

/// One config of the sweep, read back from `configs.parquet` into the
/// type the sweep summarised it in: the report reads what was written, not
/// a copy of its own.
pub(crate) use crate::sweep::aggregate::ConfigSummary;

/// One session of the sweep.
#[derive(Clone, Debug)]
pub struct SessionRow {
    /// The name the sweep gave it (session name or id, else file name).
    pub label: String,
    /// Its transcript, to read it again.
    pub(crate) path: PathBuf,
    /// Bytes of transcript and bad lines skipped when the sweep read it.
    pub(crate) bytes: u64,
    pub(crate) lines_skipped: u64,
}

/// A sweep's output folder, read.
#[derive(Debug)]
pub struct SweepOutput {
    pub(crate) dir: PathBuf,
    /// `summary.json`, read through the record the sweep wrote it with.
    pub(crate) summary: Summary,
    /// `verdict.json`, when `recommend` wrote the folder; see
    /// [`SweepOutput::verdict`].
    verdict: Option<Verdict>,
    /// Every config, in grid order: `configs[i].index == i`.
    pub configs: Vec<ConfigSummary>,
    /// Every session, in the order the sweep read them.
    pub sessions: Vec<SessionRow>,
    /// `sessions.parquet`, for per-session figures.
    frame: DataFrame,
    /// Per row of `frame`: its session (into `sessions`) and config.
    row_session: Vec<usize>,
    row_config: Vec<usize>,
}

fn read_parquet(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).with_context(|| {
        format!(
            "{}: cannot open it; run `smith-calibrate sweep PATHS --out {}` to write it",
            path.display(),
            path.parent()
                .map_or(".".into(), |p| p.display().to_string())
        )
    })?;
    ParquetReader::new(file)
        .finish()
        .with_context(|| format!("{}: not a Parquet file a sweep wrote", path.display()))
}

/// A column's values as `f64` (integers converted, missing values `NaN`).
fn floats(frame: &DataFrame, file: &str, name: &str) -> Result<Vec<f64>> {
    let column = column(frame, file, name)?
        .cast(&DataType::Float64)
        .with_context(|| format!("{file}: column {name} is not numeric"))?;
    Ok(column
        .f64()
        .with_context(|| format!("{file}: column {name} is not numeric"))?
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect())
}

fn strings(frame: &DataFrame, file: &str, name: &str) -> Result<Vec<String>> {
    Ok(column(frame, file, name)?
        .str()
        .with_context(|| format!("{file}: column {name} is not text"))?
        .into_iter()
        .map(|v| v.unwrap_or_default().to_string())
        .collect())
}

/// A knob's column as the numbers that hold its values: a word knob's
/// names read back as the knob reads them on the command line.
fn knob_values(frame: &DataFrame, file: &str, k: Knob) -> Result<Vec<f64>> {
    if k.kind() != crate::knob::Kind::Word {
        return floats(frame, file, k.field());
    }
    strings(frame, file, k.field())?
        .iter()
        .map(|t| match k.parse_one(t) {
            Ok(crate::engine::knobs::Typed::Word(v)) => Ok(v),
            _ => Err(anyhow!(
                "{file}: column {}: {t:?} is not one of its values",
                k.field()
            )),
        })
        .collect()
}

/// A policy knob's column as its values, `None` where null (the default).
fn policy_knob(frame: &DataFrame, file: &str, k: PolicyKnob) -> Result<Vec<Option<Value>>> {
    Ok(if k.kind() == crate::knob::Kind::Names {
        strings(frame, file, &k.field())?
            .iter()
            .map(|t| Some(Value::Names(crate::knob::names(t))))
            .collect()
    } else {
        floats(frame, file, &k.field())?
            .into_iter()
            .map(|v| (!v.is_nan()).then_some(Value::Number(v)))
            .collect()
    })
}

fn bools(frame: &DataFrame, file: &str, name: &str) -> Result<Vec<bool>> {
    Ok(column(frame, file, name)?
        .bool()
        .with_context(|| format!("{file}: column {name} is not true/false"))?
        .into_iter()
        .map(|v| v.unwrap_or(false))
        .collect())
}

fn column<'a>(frame: &'a DataFrame, file: &str, name: &str) -> Result<&'a polars::prelude::Column> {
    frame.column(name).map_err(|_| {
        anyhow!(
            "{file}: no column {name}; it was written by another version of smith-calibrate: run the sweep again"
        )
    })
}

/// A count column as indices; a negative or fractional value is an error.
fn indices(frame: &DataFrame, file: &str, name: &str) -> Result<Vec<usize>> {
    floats(frame, file, name)?
        .into_iter()
        .enumerate()
        .map(|(row, v)| {
            if v >= 0.0 && v.fract() == 0.0 {
                Ok(v as usize)
            } else {
                Err(anyhow!("{file}: row {row}: {name} is {v}, not an index"))
            }
        })
        .collect()
}

/// Each figure's statistics over sessions, `None` for a figure without
/// them or a config without sessions: `[figure][stat][row]`.
fn read_stats(frame: &DataFrame, file: &str) -> Result<Vec<Option<Vec<Vec<f64>>>>> {
    Metric::ALL
        .into_iter()
        .map(|m| {
            m.stats()
                .then(|| {
                    Stat::ALL
                        .into_iter()
                        .map(|s| floats(frame, file, &Column::Stat(m, s).name()))
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()
        })
        .collect()
}

/// The configs of `configs.parquet`, sorted by their grid index, with
/// their changes against the baseline computed from the totals as the
/// sweep computed them.
fn read_configs(frame: &DataFrame, file: &str) -> Result<Vec<ConfigSummary>> {
    let index = indices(frame, file, Col::Config.name())?;
    let labels = strings(frame, file, Col::ConfigLabel.name())?;
    let knobs: Vec<Vec<f64>> = Knob::ALL
        .iter()
        .map(|&k| knob_values(frame, file, k))
        .collect::<Result<_>>()?;
    let policies = strings(frame, file, Col::Policy.name())?;
    let policy_knobs: Vec<Vec<Option<Value>>> = PolicyKnob::ALL
        .into_iter()
        .map(|k| policy_knob(frame, file, k))
        .collect::<Result<_>>()?;
    let estimators = strings(frame, file, Col::Estimator.name())?;
    let baseline = bools(frame, file, Col::IsBaseline.name())?;
    let pareto = bools(frame, file, Col::Pareto.name())?;
    let rank = indices(frame, file, Col::Rank.name())?;
    let [o_lo, o_hi, l_lo, l_hi, tied] = crate::sweep::tables::INTERVAL_COLUMNS;
    let ends: Vec<Vec<f64>> = [o_lo, o_hi, l_lo, l_hi]
        .into_iter()
        .map(|c| floats(frame, file, c.name()))
        .collect::<Result<_>>()?;
    let tied = bools(frame, file, tied.name())?;
    let interval = |lo: &[f64], hi: &[f64], r: usize| {
        (!lo[r].is_nan() && !hi[r].is_nan()).then_some(Interval {
            lo: lo[r],
            hi: hi[r],
        })
    };
    let totals: Vec<Vec<f64>> = Metric::ALL
        .into_iter()
        .map(|m| floats(frame, file, m.name()))
        .collect::<Result<_>>()?;
    let sessions = indices(frame, file, Col::Sessions.name())?;
    let stats = read_stats(frame, file)?;
    let stats_of = |r: usize| -> [Option<Stats>; crate::sweep::figures::N] {
        std::array::from_fn(|i| {
            let [mean, median, p95] = stats[i].as_deref()? else {
                return None;
            };
            (!mean[r].is_nan()).then_some(Stats {
                mean: mean[r],
                median: median[r],
                p95: p95[r],
            })
        })
    };
    let mut rows: Vec<ConfigSummary> = (0..frame.height())
        .map(|r| {
            let mut config = Config::default();
            for (k, column) in Knob::ALL.into_iter().zip(&knobs) {
                k.set(&mut config, column[r]);
            }
            let setup = Setup::from_columns(&policies[r], config, |k| {
                policy_knobs[k as usize][r].clone()
            })
            .map_err(|e| anyhow!("{file}: config {}: {e}", index[r]))?;
            let setup = setup.with_estimator(
                crate::estimate::Estimator::parse(&estimators[r])
                    .map_err(|e| anyhow!("{file}: config {}: {e}", index[r]))?,
            );
            let interval = match (
                interval(&ends[0], &ends[1], r),
                interval(&ends[2], &ends[3], r),
            ) {
                (Some(objective), Some(loss)) => Some(Changes { objective, loss }),
                _ => None,
            };
            Ok(ConfigSummary {
                index: index[r],
                label: labels[r].clone(),
                config: setup.config,
                setup,
                is_baseline: baseline[r],
                sessions: sessions[r],
                totals: std::array::from_fn(|i| totals[i][r]),
                stats: stats_of(r),
                deltas: [Delta::new(0.0, 0.0); crate::sweep::figures::N],
                pareto: pareto[r],
                rank: rank[r],
                interval,
                tied: tied[r],
            })
        })
        .collect::<Result<_>>()?;
    rows.sort_by_key(|c| c.index);
    if rows.iter().enumerate().any(|(i, c)| c.index != i) {
        return Err(anyhow!(
            "{file}: the config column is not 0..{}; run the sweep again",
            rows.len()
        ));
    }
    if rows.is_empty() {
        return Err(anyhow!("{file}: no configs; run the sweep again"));
    }
    if let Some(base) = rows.iter().find(|c| c.is_baseline).map(|b| b.totals) {
        for c in &mut rows {
            c.deltas = std::array::from_fn(|i| Delta::new(c.totals[i], base[i]));
        }
    }
    Ok(rows)
}

/// What a config is as a baseline: what the agents did, smith's default
/// config, or another config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BaselineRole {
    Recorded,
    SmithDefaults,
    Other,
}

fn role(c: &ConfigSummary) -> BaselineRole {
    let d = Config::default();
    let k = &c.config;
    if c.setup.policy == crate::policy::Policy::Recorded {
        BaselineRole::Recorded
    } else if c.setup.policy == crate::policy::Policy::Smith
        && (k.compact_at, k.compact_to, k.result_cap, k.window_turns)
            == (d.compact_at, d.compact_to, d.result_cap, d.window_turns)
    {
        BaselineRole::SmithDefaults
    } else {
        BaselineRole::Other
    }
}

/// What outputs call the baseline `base`, a singular noun for sentences:
/// the recorded run (what the agents did), smith's default config, or the
/// config by its label (a user's).
pub(crate) fn baseline_name(base: &ConfigSummary) -> String {
    match role(base) {
        BaselineRole::Recorded => "the recorded run".to_string(),
        BaselineRole::SmithDefaults => "smith's default config".to_string(),
        BaselineRole::Other => format!("the baseline ({})", base.label),
    }
}

/// `verdict.json`, which `recommend` writes beside the sweep's files.
fn read_verdict(dir: &Path) -> Result<Option<Verdict>> {
    let path = dir.join(crate::export::VERDICT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(anyhow!("{}: cannot read: {e}", path.display())),
    };
    // `null`: the files were written with no decision (a test's).
    serde_json::from_str::<Option<Verdict>>(&text).with_context(|| {
        format!(
            "{}: not a verdict this version of smith-calibrate wrote: run `recommend` again",
            path.display()
        )
    })
}

impl SweepOutput {
    /// The verdict of `recommend`, if it wrote one for these very files
    /// (a later `sweep --out` into the folder leaves it behind: its
    /// sessions, configs or baseline then differ, and it is not shown).
    pub fn verdict(&self) -> Option<&Verdict> {
        self.verdict.as_ref().filter(|v| {
            v.sessions == self.sessions.len()
                && v.configs == self.configs.len()
                && self
                    .baseline()
                    .is_ok_and(|b| self.configs[b].label == v.baseline.label)
        })
    }

    /// Reads the folder `sweep --out DIR` wrote.
    pub fn read(dir: &Path) -> Result<SweepOutput> {
        let summary_path = dir.join(SUMMARY_FILE);
        let text = std::fs::read_to_string(&summary_path).with_context(|| {
            crate::sweep::merge::not_the_folder(
                &summary_path,
                dir,
                "the folder `smith-calibrate sweep --out` wrote",
            )
        })?;
        let summary: Summary = serde_json::from_str(&text).map_err(|e| {
            let what = match e.classify() {
                serde_json::error::Category::Data => {
                    "it was written by another version of smith-calibrate: run the sweep again"
                }
                _ => "not valid JSON",
            };
            anyhow::Error::new(e).context(format!("{}: {what}", summary_path.display()))
        })?;

        let verdict = read_verdict(dir)?;
        let configs_path = dir.join(CONFIGS_FILE);
        let configs = read_configs(
            &read_parquet(&configs_path)?,
            &configs_path.display().to_string(),
        )?;

        let sessions_path = dir.join(SESSIONS_FILE);
        let file = sessions_path.display().to_string();
        let frame = read_parquet(&sessions_path)?;
        let labels = strings(&frame, &file, Col::Session.name())?;
        let paths = strings(&frame, &file, Col::Path.name())?;
        let bytes = floats(&frame, &file, Col::Bytes.name())?;
        let skipped = floats(&frame, &file, Col::LinesSkipped.name())?;
        let row_config = indices(&frame, &file, Col::Config.name())?;
        if let Some(c) = row_config.iter().find(|&&c| c >= configs.len()) {
            return Err(anyhow!(
                "{file}: config {c} is not in {CONFIGS_FILE}; the two files are from different sweeps: run the sweep again"
            ));
        }
        let mut sessions: Vec<SessionRow> = Vec::new();
        let mut by_path: HashMap<&str, usize> = HashMap::new();
        let mut row_session = Vec::with_capacity(frame.height());
        for r in 0..frame.height() {
            let s = *by_path.entry(paths[r].as_str()).or_insert_with(|| {
                sessions.push(SessionRow {
                    label: labels[r].clone(),
                    path: PathBuf::from(&paths[r]),
                    bytes: bytes[r] as u64,
                    lines_skipped: skipped[r] as u64,
                });
                sessions.len() - 1
            });
            row_session.push(s);
        }
        if sessions.is_empty() {
            return Err(anyhow!("{file}: no sessions; run the sweep again"));
        }
        let out = SweepOutput {
            dir: dir.to_path_buf(),
            summary,
            verdict,
            configs,
            sessions,
            frame,
            row_session,
            row_config,
        };
        out.baseline()?;
        Ok(out)
    }

    /// The setup session `s` replayed under with config `c`: the config's,
    /// with the ratio and overhead the session chose where it chose them
    /// (the sessions table's calibration columns), so that a chart or a
    /// session page replays the row the sweep counted. Replay it through
    /// `crate::calibrate::session::for_session` with every knob given.
    pub(crate) fn setup_of(&self, s: usize, c: usize) -> Setup {
        let mut setup = self.configs[c].setup.clone();
        let file = SESSIONS_FILE;
        let (Ok(mode), Ok(start), Ok(overhead)) = (
            strings(&self.frame, file, Col::RatioMode.name()),
            floats(&self.frame, file, Col::RatioStart.name()),
            floats(&self.frame, file, Col::OverheadUsed.name()),
        ) else {
            return setup;
        };
        let Some(r) =
            (0..self.frame.height()).find(|&r| self.row_session[r] == s && self.row_config[r] == c)
        else {
            return setup;
        };
        if overhead[r].is_finite() && overhead[r] >= 0.0 {
            setup.config.overhead_tokens = overhead[r] as u64;
        }
        // A config at each session's own window replays at the one this
        // session's row was replayed under.
        if let Ok(window) = floats(&self.frame, file, Col::WindowUsed.name()) {
            if window[r].is_finite() && window[r] >= 1.0 {
                setup.config.max_tokens = window[r] as u64;
            }
        }
        if mode[r] == crate::engine::learn::RatioMode::Learned.as_str() {
            setup.config.ratio = crate::engine::learn::LEARN;
        } else if start[r].is_finite() && start[r] > 0.0 {
            setup.config.ratio = start[r];
        }
        setup
    }

    /// What every chart and table calls the baseline: the recorded run,
    /// smith's defaults, or the config by its label.
    pub fn baseline_name(&self) -> String {
        let Some(base) = self.baseline().ok().map(|b| &self.configs[b]) else {
            return "the baseline".to_string();
        };
        baseline_name(base)
    }

    /// The index of the baseline config.
    pub fn baseline(&self) -> Result<usize> {
        self.configs
            .iter()
            .position(|c| c.is_baseline)
            .ok_or_else(|| {
                anyhow!(
                    "{}: no config is flagged as the baseline; run the sweep again",
                    self.dir.join(CONFIGS_FILE).display()
                )
            })
    }

    /// Config indices, best rank first.
    pub fn by_rank(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.configs.len()).collect();
        order.sort_by_key(|&i| (self.configs[i].rank, i));
        order
    }

    /// The policies of the sweep's configs, in [`Policy::ALL`] order. smith
    /// is always among them: its defaults are the baseline.
    pub fn policies(&self) -> Vec<Policy> {
        Policy::ALL
            .into_iter()
            .filter(|p| self.configs.iter().any(|c| c.setup.policy == *p))
            .collect()
    }

    /// Whether the sweep compared policies (more than smith alone): the
    /// report then adds its comparison and tells configs apart by policy.
    pub fn compares_policies(&self) -> bool {
        self.configs.iter().any(|c| c.setup.policy != Policy::Smith)
    }

    /// Whether smith's own grid was swept, not only its defaults as the
    /// baseline (`summary.json` lists the policies asked for; a sweep that
    /// does not say had smith).
    pub(crate) fn smith_swept(&self) -> bool {
        self.summary.grid.policies.contains(&Policy::Smith)
    }

    /// How a chart or table names config `i`: its label, which names the
    /// policy for every policy but smith; with policies compared, smith's
    /// too.
    pub(crate) fn name(&self, i: usize) -> String {
        let c = &self.configs[i];
        if c.setup.policy == Policy::Smith && self.compares_policies() {
            format!("smith {}", c.label)
        } else {
            c.label.clone()
        }
    }

    /// The windows (`max_tokens`) of the sweep's configs, ascending.
    pub fn windows(&self) -> Vec<u64> {
        let mut w: Vec<u64> = self.configs.iter().map(|c| c.config.max_tokens).collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// The best-ranked config of `policy`, at `window` when given: the row a
    /// comparison of policies shows for it.
    pub fn best_of(&self, policy: Policy, window: Option<u64>) -> Option<usize> {
        (0..self.configs.len())
            .filter(|&i| self.configs[i].setup.policy == policy)
            .filter(|&i| window.is_none_or(|w| self.configs[i].config.max_tokens == w))
            .min_by_key(|&i| (self.configs[i].rank, i))
    }

    /// The config `pick` names, for `report --baseline`: `recorded` (the
    /// agents' own run), `defaults` (smith's default config), a config's
    /// label, or its index in the grid.
    pub fn config_named(&self, pick: &str) -> Result<usize> {
        let pick = pick.trim();
        let by_role =
            |r: BaselineRole| (0..self.configs.len()).find(|&i| role(&self.configs[i]) == r);
        let found = match pick {
            "recorded" => by_role(BaselineRole::Recorded),
            "defaults" => by_role(BaselineRole::SmithDefaults),
            _ => (0..self.configs.len())
                .find(|&i| self.configs[i].label == pick)
                .or_else(|| pick.parse().ok().filter(|&i| i < self.configs.len())),
        };
        found.ok_or_else(|| {
            anyhow!(
                "--baseline {pick:?}: not a config of this sweep; give `recorded`, `defaults`, a config's label as configs.csv has it ({}), or its index",
                self.configs
                    .iter()
                    .take(3)
                    .map(|c| format!("{:?}", c.label))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }

    /// The sweep compared with config `base` instead of the one it was run
    /// against: every change, interval, rank and tie summarised again from
    /// the session rows, and the verdict decided again by `decide` (the
    /// same rule as the sweep's), so that the report is the one a sweep
    /// with that baseline would have drawn. The configs keep their places.
    pub fn rebase(&mut self, base: usize, decide: crate::sweep::aggregate::Decide) -> Result<()> {
        let n = self.configs.len();
        // Summarised with `base` first, as the sweep puts its baseline.
        let order: Vec<usize> = std::iter::once(base)
            .chain((0..n).filter(|&c| c != base))
            .collect();
        let figures: Vec<Vec<Vec<f64>>> = Metric::ALL
            .into_iter()
            .map(|m| self.per_session(m))
            .collect::<Result<_>>()?;
        let value = |s: usize, j: usize| -> [f64; crate::sweep::figures::N] {
            std::array::from_fn(|i| figures[i][s][order[j]])
        };
        let setups: Vec<Setup> = order
            .iter()
            .map(|&c| self.configs[c].setup.clone())
            .collect();
        let rank_by = self.summary.rank_by;
        let (mut summaries, per) = crate::sweep::aggregate::summarize_values_with(
            &setups,
            self.sessions.len(),
            &value,
            rank_by,
            &crate::sweep::bootstrap::Bootstrap::default(),
        );
        let verdict = decide(&mut summaries, &per, rank_by);
        let mut verdict: Option<Verdict> =
            serde_json::from_value(verdict).context("the verdict decided on the new baseline")?;
        if let Some(v) = verdict.as_mut() {
            for e in std::iter::once(&mut v.baseline)
                .chain(v.chosen.as_mut())
                .chain(v.evidence.iter_mut())
            {
                e.config = order[e.config];
            }
        }
        let mut configs = self.configs.clone();
        for (j, mut s) in summaries.into_iter().enumerate() {
            let c = order[j];
            s.index = c;
            s.label = self.configs[c].label.clone();
            s.setup = self.configs[c].setup.clone();
            s.config = self.configs[c].config;
            configs[c] = s;
        }
        self.configs = configs;
        self.verdict = verdict;
        Ok(())
    }

    /// `figure` for every session under every config: `[session][config]`,
    /// `NaN` where the sweep has no row.
    pub fn per_session(&self, figure: Metric) -> Result<Vec<Vec<f64>>> {
        let file = self.dir.join(SESSIONS_FILE).display().to_string();
        let values = floats(&self.frame, &file, figure.name())?;
        let mut out = vec![vec![f64::NAN; self.configs.len()]; self.sessions.len()];
        for (r, v) in values.into_iter().enumerate() {
            out[self.row_session[r]][self.row_config[r]] = v;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use super::*;
    use crate::replay::every_field;
    use crate::sweep::aggregate::summarize;
    use crate::sweep::run::{Row, SessionInfo, Sweep};
    use crate::sweep::tables;

    /// What the sweep summarised, written and read back, is the same
    /// [`ConfigSummary`] in every field: rows whose every fact is set, over
    /// two of smith's configs and two other policies.
    #[test]
    fn the_configs_read_back_are_the_summaries_written() {
        let fixture = tables::Fixture::new(&[Policy::Smith, Policy::Masking, Policy::Codex]);
        let (plan, prices, input) = (&fixture.plan, &fixture.prices, fixture.input());
        let configs = &plan.setups;
        let sessions = 4;
        let mut rows = Vec::new();
        for s in 0..sessions {
            for c in 0..configs.len() {
                rows.push(Row {
                    session: s as u32,
                    config: c as u32,
                    facts: every_field::set((s * configs.len() + c) as u64),
                });
            }
        }
        let sweep = Sweep {
            sessions: (0..sessions)
                .map(|i| SessionInfo {
                    label: format!("session-{i}"),
                    path: PathBuf::from(format!("/corpus/s{i}/transcript.jsonl")),
                    bytes: 1_000 + i as u64,
                    lines: 50,
                    lines_skipped: 0,
                    messages: 40,
                })
                .collect(),
            configs: configs.clone(),
            rows,
            unreadable: Vec::new(),
            elapsed: Duration::from_millis(1),
            threads: 1,
        };
        let written = summarize(&sweep, prices, Metric::Price);
        let export =
            tables::export(&sweep, &written, prices, &input, serde_json::Value::Null).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        crate::export::write_all(tmp.path(), &export).unwrap();
        let read = SweepOutput::read(tmp.path()).unwrap();
        assert_eq!(read.configs.len(), written.len());
        for (r, w) in read.configs.iter().zip(&written) {
            assert_eq!(r, w, "config {}", w.index);
        }
    }
}
