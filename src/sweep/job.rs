//! A sweep described without a command line: the sessions, the grid, the
//! policies, the cost model, the outputs. `sweep` and `recommend` map their
//! flags to a [`Job`]; [`Job::plan`] checks and resolves it before any
//! session is read, [`Planned::execute`] replays it, decides its verdict by
//! the rule it is handed (`crate::recommend`'s, above this layer) and writes
//! its data files. Drawing the report is `crate::report`'s and printing the
//! table `crate::view`'s: each takes the [`Outcome`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};

use super::account::Accounts;
use super::aggregate::{summarize_values_with, ConfigSummary, PerSession};
use super::bootstrap::Bootstrap;
use super::dist;
use super::figures::{self, Metric};
use super::grid::{self, Grid, GridSpec, Knob};
use super::journal::Opened;
use super::plan::{self, Plan, PolicySpec};
use super::prices_used::PricesUsed;
use super::run::{self, Options, Sweep};
use super::shard::Shard;
use super::tables::{self, SummaryInput};
use crate::cost::Prices;
use crate::engine::budget::OWN_WINDOW;
use crate::engine::Config;
use crate::estimate::Estimator;
use crate::policy::Policy;
use crate::transcript::{self, SessionRef};

/// Why a job stopped; the command decides the exit status of each.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JobError {
    /// The job as described cannot run: a bad grid, shard, folder or
    /// combination of settings.
    #[error("{0}")]
    Plan(String),
    /// Nothing that may be written was read (or a skip under strictness).
    #[error("{0}")]
    NothingRead(String),
    /// Stopped by Ctrl-C.
    #[error("{0}")]
    Interrupted(String),
}

/// What every config is compared with, when the job names it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Baseline {
    /// Each session's agent's own run, as its log recorded it.
    Recorded,
    /// smith's default config.
    Defaults,
    /// A config read from a smith config file; `source` says where from,
    /// for people.
    Config { config: Config, source: String },
}

/// A sweep: what it replays, under which configs, priced how, written where.
#[derive(Clone)]
pub(crate) struct Job {
    /// The paths as given (or the sessions directory), for the outputs that
    /// record them.
    pub(crate) paths: Vec<String>,
    /// The sessions they resolve to, selected.
    pub(crate) refs: Vec<SessionRef>,
    /// smith's knobs, each a list.
    pub(crate) spec: GridSpec,
    /// The grid file the spec was read from, for summary.json.
    pub(crate) grid_file: Option<PathBuf>,
    /// Whether the window was given (else other agents' sessions replay at
    /// their own).
    pub(crate) window_given: bool,
    /// Refuse grids with more configs than this.
    pub(crate) max_configs: usize,
    /// Also replay thresholds smith itself refuses.
    pub(crate) beyond_smith: bool,
    /// The baseline asked for; `None`: recorded where every session is
    /// another agent's, else `own`.
    pub(crate) baseline: Option<Baseline>,
    /// The baseline where none is asked for and the sessions are smith's,
    /// with where it came from.
    pub(crate) own: (Config, String),
    /// The policies besides smith's grid, with their knobs.
    pub(crate) policies: PolicySpec,
    /// The token estimators smith's configs run under (a list such as
    /// `bytes4,o200k`); `None`: each config's own.
    pub(crate) estimators: Option<String>,
    /// Prices for every session instead of its model's row.
    pub(crate) price: Option<Prices>,
    pub(crate) cost: crate::cost::session::Settings,
    /// The figure configs are ranked by, lowest first.
    pub(crate) rank_by: Metric,
    /// The bootstrap of every interval.
    pub(crate) draws: Bootstrap,
    /// One shard of the sessions (`K/N`, `auto`, `auto/N`).
    pub(crate) shard: Option<String>,
    /// Journal finished sessions and continue from the journal.
    pub(crate) resume: bool,
    /// Where the data files go.
    pub(crate) out: Option<PathBuf>,
    /// Where the report is drawn (the data files too, without `out`).
    pub(crate) report: Option<PathBuf>,
    /// Fail, writing nothing, if any line or session had to be skipped.
    pub(crate) strict: bool,
    /// Worker threads; `None`: one per core.
    pub(crate) jobs: Option<usize>,
    /// The thrash window of every row, where not the replay's default.
    pub(crate) thrash_window: Option<usize>,
    /// For the tests: pause after this many sessions.
    pub(crate) pause_after: Option<usize>,
    /// Say how many combinations the grid left out: a grid someone wrote
    /// leaves them out by mistake, `recommend`'s default triangle by design.
    pub(crate) say_left_out: bool,
}

/// The baseline a job settled on, with what outputs call it.
struct Settled {
    grid: Grid,
    kind: plan::BaselineKind,
    source: String,
}

/// What outputs call the recorded baseline.
const RECORDED_SOURCE: &str =
    "what happened: each session's agent's own run as its log recorded it, at the session's own window";

/// Bytes of kept rows above which the sweep says how much memory it will
/// hold: the rows are small, but sessions × configs can still be billions.
const ROW_MEMORY_WARNING: f64 = 2e9;

/// A job checked and resolved before any session is read, so that a bad
/// setting, grid or folder fails in a second rather than after the work.
pub(crate) struct Planned {
    /// The flat prices of the outputs' header and of rows the cost model
    /// did not meter; each session is priced at its model's row unless
    /// `price` was given.
    pub(crate) price: Prices,
    /// What every surface says the prices stood on.
    pub(crate) prices_used: PricesUsed,
    pub(crate) cost: crate::cost::session::Settings,
    pub(crate) grid: Grid,
    pub(crate) plan: Plan,
    pub(crate) rank_by: Metric,
    pub(crate) draws: Bootstrap,
    /// The paths as given.
    pub(crate) paths: Vec<String>,
    grid_file: Option<PathBuf>,
    /// The sessions this process replays: its shard's, with a shard; each
    /// one's position among the `listed` sessions of the whole sweep.
    pub(crate) refs: Vec<SessionRef>,
    ordinals: Vec<usize>,
    listed: usize,
    pub(crate) shard: Option<Shard>,
    /// Where the data files go: `out`, else `report`.
    pub(crate) data_dir: Option<PathBuf>,
    pub(crate) report: Option<PathBuf>,
    options: Options,
    resume: bool,
    strict: bool,
    thrash_window: Option<usize>,
    pause_after: Option<usize>,
    /// What the baseline is, for people.
    pub(crate) baseline_source: String,
}

/// A job's replay, with the journal it kept (removed by [`Planned::close`]).
struct Ran {
    sweep: Sweep,
    journal: Option<Opened>,
}

/// A finished job: its replay, every config's summary against the
/// baseline, and the verdict (`V`: the rule's), which a shard leaves to
/// the merge of every shard's sessions.
pub(crate) struct Outcome<V> {
    pub(crate) sweep: Sweep,
    pub(crate) summaries: Vec<ConfigSummary>,
    pub(crate) verdict: Option<V>,
    /// The ratio and overhead the rows used where sessions chose them.
    pub(crate) calibration: Option<String>,
    /// What the token figures count (as `summary.json` says).
    pub(crate) tokens: super::units::TokenUnits,
    /// What the cost model assumed, and what of it moved the ranking.
    pub(crate) cost_note: String,
}

/// What [`Planned::write`] wrote.
enum Written {
    /// No folder was given.
    Nothing,
    /// A shard's partition (said on stderr as it was written).
    Shard,
    /// The data files, each whole.
    Data(Vec<PathBuf>),
}

/// Whether every session was recorded by another agent than smith: then
/// the baseline is what happened, and each replays at its own window.
pub(crate) fn all_by_other_agents(refs: &[SessionRef]) -> bool {
    use rayon::prelude::*;
    !refs.is_empty()
        && refs
            .par_iter()
            .all(transcript::locate::recorded_by_another_agent)
}

/// `context`'s config under the sweep's calibration (ratio, overhead),
/// summary size and engine (its first), which are not smith's settings: a
/// smith config as a sweep's baseline.
pub(crate) fn under_grid(context: &Config, spec: &GridSpec) -> Config {
    let mut b = *context;
    for k in [
        Knob::Overhead,
        Knob::Ratio,
        Knob::SummaryTokens,
        Knob::Engine,
    ] {
        if let Some(v) = spec.get(k).and_then(<[f64]>::first) {
            k.set(&mut b, *v);
        }
    }
    b
}

fn plan_error(e: impl std::fmt::Display) -> anyhow::Error {
    JobError::Plan(format!("{e:#}")).into()
}

impl Job {
    /// The grid of the spec with the baseline asked for, each knob within
    /// the limit. Sessions of other agents replay at their own window
    /// unless one was given.
    fn settle(&self) -> Result<Settled> {
        let others = all_by_other_agents(&self.refs);
        let mut spec = self.spec.clone();
        if others && !self.window_given {
            spec.put(Knob::MaxTokens, vec![OWN_WINDOW as f64]);
        }
        let recorded = match &self.baseline {
            Some(b) => *b == Baseline::Recorded,
            None => others,
        };
        let (head, source) = match &self.baseline {
            Some(Baseline::Defaults) => (None, "smith's defaults".to_string()),
            Some(Baseline::Config { config, source }) => (Some(*config), source.clone()),
            _ => (
                Some(self.own.0).filter(|c| *c != Config::default()),
                self.own.1.clone(),
            ),
        };
        let grid = match head {
            Some(h) => grid::build_around(&spec, self.max_configs, under_grid(&h, &spec)),
            None => grid::build(&spec, self.max_configs),
        }
        .map_err(plan_error)?;
        let (kind, source) = if recorded {
            (plan::BaselineKind::Recorded, RECORDED_SOURCE.to_string())
        } else {
            (plan::BaselineKind::Smith, source)
        };
        Ok(Settled { grid, kind, source })
    }

    /// The grid of smith's knobs and the plan of every policy's configs
    /// under every estimator, with the baseline's description; with a note
    /// for each thing asked for that changes nothing.
    fn configs(&self) -> Result<(Grid, Plan, String)> {
        let settled = self.settle()?;
        let grid = settled.grid;
        grid::check_smith_rule(&grid, self.beyond_smith).map_err(plan_error)?;
        if self.say_left_out && grid.impossible > 0 {
            crate::note!(
                "left out {} of {} combinations whose target is at or above their trigger (compact-to >= compact-at): compaction would aim above where it starts",
                grid.impossible,
                self.spec.product_len()
            );
        }
        let unused = self.policies.unused();
        if !unused.is_empty() {
            let flags: Vec<String> = unused.iter().map(|k| format!("--{}", k.flag())).collect();
            crate::note!(
                "note: {} change nothing: their policies are not in --policy",
                flags.join(", ")
            );
        }
        if !self.policies.policies.contains(&Policy::Smith) && grid.configs.len() > 1 {
            crate::note!(
                "note: smith is not in --policy, so smith's grid is left out; only its defaults remain, as the baseline"
            );
        }
        let mut plan = plan::build(&grid, &self.policies, settled.kind, self.max_configs)
            .map_err(plan_error)?;
        if let Some(list) = &self.estimators {
            let estimators =
                Estimator::parse_list(list).map_err(|e| plan_error(format!("--estimator: {e}")))?;
            plan.setups = super::estimators::expand(&plan.setups, &estimators);
            if plan.setups.len() > self.max_configs {
                return Err(plan_error(format!(
                    "the sweep has {} configs with {} estimators, more than the limit of {}; use fewer values, or raise --max-configs",
                    plan.setups.len(),
                    estimators.len(),
                    self.max_configs
                )));
            }
        }
        Ok((grid, plan, settled.source))
    }

    /// The configs (smith's grid, the other policies', under every
    /// estimator) and the sessions (sharded) of the job, with the output
    /// folders made ready.
    pub(crate) fn plan(self) -> Result<Planned> {
        let (grid, plan, baseline_source) = self.configs()?;
        let shard = dist::shard_of(self.shard.as_deref()).map_err(plan_error)?;
        if shard.is_some() && (self.out.is_none() || self.report.is_some()) {
            return Err(plan_error(
                "--shard needs --out DIR (the folder every shard writes into) and no --report: draw the report after `merge DIR`",
            ));
        }
        if self.resume && self.out.is_none() && self.report.is_none() {
            return Err(plan_error(
                "--resume needs --out DIR: the journal is kept there",
            ));
        }
        let data_dir = prepare_dirs(self.out.as_deref(), self.report.as_deref(), &self.refs)?;
        let listed = self.refs.len();
        // Every session of the plan, not only the shard's, prices the account.
        let accounts = read_accounts(&self.refs, &self.cost);
        // And says the prices: each shard the whole sweep's, as a merge does.
        let prices_used = PricesUsed::of(&self.refs, self.price, self.price.unwrap_or_default());
        let (refs, ordinals) = dist::take_shard(&self.paths, self.refs, shard);
        if let Some(shard) = shard {
            crate::note!("shard {shard}: {} of the {listed} sessions", refs.len());
        }
        warn_of_memory(refs.len(), plan.setups.len());
        let mut options = Options::for_terminal(self.jobs);
        // Where the grid leaves ratio or overhead, each session replays under
        // its own (its saved ratio, or what its recorded usage teaches).
        options.given = self.spec.given();
        options.accounts = accounts;
        Ok(Planned {
            price: self.price.unwrap_or_default(),
            prices_used,
            cost: self.cost,
            grid,
            plan,
            rank_by: self.rank_by,
            draws: self.draws,
            paths: self.paths,
            grid_file: self.grid_file,
            refs,
            ordinals,
            listed,
            shard,
            data_dir,
            report: self.report,
            options,
            resume: self.resume,
            strict: self.strict,
            thrash_window: self.thrash_window,
            pause_after: self.pause_after,
            baseline_source,
        })
    }
}

/// The account's cache beyond each imported session of `refs`, under
/// `cost`, said on stderr when there is one.
fn read_accounts(refs: &[SessionRef], cost: &crate::cost::session::Settings) -> Arc<Accounts> {
    let spinner = crate::messages::spinner(format!(
        "reading the account: the cache beyond each of {} sessions",
        refs.len()
    ));
    let accounts = super::account::of(refs, cost);
    spinner.finish_and_clear();
    if !accounts.is_empty() {
        crate::note!(
            "cache: {} imported sessions priced {} (--per-session-cache: each alone; --log-alone: by the logs alone)",
            accounts.len(),
            cost.cache_scope()
        );
    }
    Arc::new(accounts)
}

/// Says how much memory the rows will hold when that is a lot.
fn warn_of_memory(sessions: usize, configs: usize) {
    let rows = sessions.saturating_mul(configs);
    let row_bytes = rows.saturating_mul(std::mem::size_of::<run::Row>()) as f64;
    if row_bytes > ROW_MEMORY_WARNING {
        crate::note!(
            "note: {sessions} sessions × {configs} configs keep {rows} rows, about {:.1} GB in memory; \
             narrow the grid or sweep fewer sessions at a time if that is too much",
            row_bytes / 1e9
        );
    }
}

/// Where the data files go (`out`, else `report`), with both folders made
/// ready by [`prepare_out_dir`].
fn prepare_dirs(
    out: Option<&Path>,
    report: Option<&Path>,
    refs: &[SessionRef],
) -> Result<Option<PathBuf>> {
    let data = out.or(report);
    for dir in [data, report].into_iter().flatten() {
        prepare_out_dir(dir, refs)?;
    }
    Ok(data.map(Path::to_path_buf))
}

/// Creates an output folder before the sweep, so a bad directory fails in
/// a second rather than after the work, and refuses a session directory
/// that is being read: the tool never writes among smith's own files.
fn prepare_out_dir(dir: &Path, refs: &[SessionRef]) -> Result<()> {
    if dir.join(transcript::locate::TRANSCRIPT_FILE).exists() {
        return Err(plan_error(format!(
            "--out {}: that is a session directory; write the results somewhere else",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        plan_error(format!(
            "--out {}: cannot create the directory: {e}",
            dir.display()
        ))
    })?;
    let out = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let inside = refs
        .iter()
        .find(|r| std::fs::canonicalize(r.dir()).is_ok_and(|session| session == out));
    if let Some(r) = inside {
        return Err(plan_error(format!(
            "--out {}: {} is read from there; write the results somewhere else",
            dir.display(),
            r.transcript.display()
        )));
    }
    Ok(())
}

impl Planned {
    /// Replays the sessions, summarizes the configs, decides the verdict by
    /// `decide` (not for a shard), writes the data files with it and
    /// removes the journal: what `sweep` and `recommend` do alike.
    pub(crate) fn execute<V: serde::Serialize>(
        &self,
        decide: impl FnOnce(&mut [ConfigSummary], &PerSession) -> V,
    ) -> Result<Outcome<V>> {
        let mut ran = self.run()?;
        say_replayed(&ran.sweep, self.plan.setups.len());
        let (mut summaries, per) = self.summarize(&ran.sweep);
        // A shard sees only its sessions: the merge decides on all of them.
        let verdict = self.shard.is_none().then(|| decide(&mut summaries, &per));
        let laid_out = verdict
            .as_ref()
            .map(serde_json::to_value)
            .transpose()
            .context("cannot lay out the verdict")?;
        let written = self.write(&ran.sweep, &summaries, laid_out)?;
        if let (Written::Data(paths), Some(dir)) = (&written, &self.data_dir) {
            let names: Vec<String> = paths
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            crate::note!("wrote {} into {}", names.join(", "), dir.display());
        }
        self.close(&mut ran)?;
        let sweep = ran.sweep;
        let calibration =
            super::summary::CalibrationRecord::of(sweep.rows.iter().map(|r| &r.facts.calibration));
        Ok(Outcome {
            cost_note: super::cost_note::note(&summaries, Some(&self.cost)),
            tokens: super::summary::CalibrationRecord::units(
                calibration.as_ref(),
                summaries.iter().map(|s| s.setup.estimator),
                self.plan.baseline,
            ),
            calibration: calibration.map(|c| c.describe(sweep.rows.len())),
            sweep,
            summaries,
            verdict,
        })
    }

    /// What `summary.json` says besides the tables: the one description
    /// of this sweep every writer (one process, a shard) is given.
    pub(crate) fn summary_input(&self) -> SummaryInput<'_> {
        SummaryInput {
            paths: &self.paths,
            grid_file: self.grid_file.as_deref(),
            grid: &self.grid,
            plan: &self.plan,
            prices: &self.price,
            prices_used: &self.prices_used,
            rank_by: self.rank_by,
        }
    }

    /// Replays the planned sessions, through the journal when resuming, and
    /// stops (writing nothing) where the run was interrupted or, under
    /// strictness, had to skip something.
    fn run(&self) -> Result<Ran> {
        // Ctrl-C stops the run at the next session and writes nothing: the
        // outputs already in the folder stay as they were.
        crate::interrupt::install();
        let mut journal = match (self.resume, &self.data_dir) {
            (true, Some(dir)) => Some(
                dist::open_journal(
                    dir,
                    self.shard,
                    &self.refs,
                    &self.plan.setups,
                    &self.price,
                    &self.cost,
                )
                .map_err(plan_error)?,
            ),
            _ => None,
        };
        let mut sweep = dist::run_sweep(
            &self.refs,
            &self.plan.setups,
            &self.options,
            &self.cost,
            journal.as_mut(),
            self.pause_after,
        )?;
        if let Some(window) = self.thrash_window {
            for row in &mut sweep.rows {
                row.facts.set_thrash_window(window);
            }
        }
        let kept = match &self.data_dir {
            Some(dir) => format!(
                "; {} keeps its previous outputs, if any{}",
                dir.display(),
                dist::interrupted_note(journal.as_ref(), &sweep)
            ),
            None => String::new(),
        };
        // A shard may hold only unreadable sessions; the merge counts them.
        finished(
            &sweep,
            self.refs.len(),
            self.strict,
            self.shard.is_some(),
            &kept,
        )?;
        Ok(Ran { sweep, journal })
    }

    /// Every config's summary against the baseline, ranked by the job's
    /// figure, with the per-session values the verdict resamples.
    fn summarize(&self, sweep: &Sweep) -> (Vec<ConfigSummary>, PerSession) {
        let value = |s: usize, c: usize| figures::values(&sweep.row(s, c).facts, &self.price);
        summarize_values_with(
            &sweep.configs,
            sweep.sessions.len(),
            &value,
            self.rank_by,
            &self.draws,
        )
    }

    /// Writes the outputs: a shard's partition, or the data files with the
    /// verdict (laid out as `verdict.json`); a sweep of every session must
    /// be given one.
    fn write(
        &self,
        sweep: &Sweep,
        summaries: &[ConfigSummary],
        verdict: Option<serde_json::Value>,
    ) -> Result<Written> {
        let Some(dir) = &self.data_dir else {
            return Ok(Written::Nothing);
        };
        let input = self.summary_input();
        match self.shard {
            Some(shard) => {
                dist::write_shard(
                    dir,
                    shard,
                    &self.refs,
                    &self.ordinals,
                    self.listed,
                    sweep,
                    summaries,
                    &input,
                )?;
                Ok(Written::Shard)
            }
            None => {
                let verdict =
                    verdict.context("a sweep of every session is written with its verdict")?;
                let export = tables::export(sweep, summaries, input.prices, &input, verdict)
                    .context("cannot lay out the results as tables")?;
                Ok(Written::Data(crate::export::write_all(dir, &export)?))
            }
        }
    }

    /// The prices the sweep's price stands on, as the terminal's header
    /// prints them ([`PricesUsed::text`]).
    pub(crate) fn prices_used(&self) -> String {
        self.prices_used.text()
    }

    /// Removes the journal of a finished run, once its outputs are written.
    fn close(&self, ran: &mut Ran) -> Result<()> {
        match (ran.journal.take(), &self.data_dir) {
            (Some(opened), Some(dir)) => opened.journal.finish(dir),
            _ => Ok(()),
        }
    }
}

/// How much was replayed, how fast, and what could not be read.
fn say_replayed(sweep: &Sweep, configs: usize) {
    let mb = sweep.bytes() as f64 / 1e6;
    let secs = sweep.elapsed.as_secs_f64();
    crate::note!(
        "replayed {} sessions ({mb:.1} MB{}) under {configs} configs in {secs:.1}s ({:.1} MB/s, {} threads){}",
        sweep.sessions.len(),
        match sweep.lines_skipped() {
            0 => String::new(),
            n => format!(", {n} bad lines skipped"),
        },
        if secs > 0.0 { mb / secs } else { 0.0 },
        sweep.threads,
        match sweep.unreadable.len() {
            0 => String::new(),
            n => format!("; {n} sessions could not be read"),
        },
    );
}

/// Stops a run whose results must not be written: interrupted by Ctrl-C
/// (`kept` says what the output folder keeps), with skips under `strict`,
/// or with no session read at all (unless `empty_ok`).
fn finished(sweep: &Sweep, asked: usize, strict: bool, empty_ok: bool, kept: &str) -> Result<()> {
    if crate::interrupt::interrupted() {
        return Err(JobError::Interrupted(format!(
            "interrupted after {} of {asked} sessions: nothing was written{kept}",
            sweep.sessions.len() + sweep.unreadable.len(),
        ))
        .into());
    }
    if strict && (sweep.lines_skipped() > 0 || !sweep.unreadable.is_empty()) {
        return Err(JobError::NothingRead(format!(
            "{} bad lines and {} unreadable sessions (see above) and --strict was given: nothing was written",
            sweep.lines_skipped(),
            sweep.unreadable.len()
        ))
        .into());
    }
    if sweep.sessions.is_empty() && !empty_ok {
        return Err(JobError::NothingRead(format!(
            "none of the {asked} sessions could be read (see above)"
        ))
        .into());
    }
    Ok(())
}
