//! `smith-calibrate sweep`: many sessions under a grid of configs, ranked
//! against smith's defaults.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::builder::PossibleValuesParser;
use clap::Args;
use comfy_table::Cell;

use crate::cost::Prices;
use crate::engine::budget::OWN_WINDOW;
use crate::engine::Config;
use crate::estimate::Estimator;
use crate::format::{money, right, table, tokens};
use crate::policy::Policy;
use crate::recommend::{self, Verdict};
use crate::sweep::aggregate::{summarize_values_with, ConfigSummary, Delta, PerSession};
use crate::sweep::bootstrap::Bootstrap;
use crate::sweep::figures::{self, Metric};
use crate::sweep::grid::Grid;
use crate::sweep::grid::{self, GridSpec, Knob};
use crate::sweep::journal::Opened;
use crate::sweep::plan;
use crate::sweep::plan::Plan;
use crate::sweep::run::{self, Options, Sweep};
use crate::sweep::shard::Shard;
use crate::sweep::tables::{self, SummaryInput};
use crate::transcript::{self, SessionRef};

use super::policy_args::PolicyArgs;
use super::{nothing_read, usage, Exit, Failure};

/// Replay many sessions under a grid of configs and rank the configs.
///
/// Every knob takes a list (0.7,0.8,0.9), an inclusive range with a step
/// (0.4..0.6:0.05), or both (256,512..2048:512); the sweep runs their
/// cartesian product, minus combinations whose target is at or above their
/// trigger. smith's defaults are always in the grid as the baseline, and
/// every figure is also shown as a change against it.
///
/// --policy adds other agents' compaction policies, modelled on the same
/// estimate and cost model: smith's knobs vary only for smith, the others
/// run under every --max-tokens, --overhead, --ratio and --summary-tokens
/// value and every value of their own knobs (each also a list or range:
/// --mask-window 5,10,20), and all are ranked together. A grid file holds
/// smith's knobs only.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  smith-calibrate sweep datasets/ --compact-at 0.7,0.8,0.9 --compact-to 0.4..0.6:0.05
  smith-calibrate sweep --max-tokens 64000,120000,200000 --result-cap 256,512,2048 --top 10
  smith-calibrate sweep ~/.smith/sessions --grid grid.toml --out results/ --rank-by results_mangled
  smith-calibrate sweep datasets/ --window 1..5 --json | jq '.configs[0]'
  smith-calibrate sweep datasets/ --policy smith,masking,claude-code,codex --max-tokens 200000
  smith-calibrate sweep datasets/ --policy masking --mask-window 5,10,20 --rank-by needed_again
  smith-calibrate sweep datasets/ --estimator bytes4,o200k --compact-at 0.7,0.8
  smith-calibrate sweep corpus/ --shard 3/8 --out results/   # one of 8 machines; then:
  smith-calibrate merge results/
  smith-calibrate sweep corpus/ --shard auto --resume --out results/   # in a Slurm array task
  smith-calibrate sweep corpus/ --out results/ --resume      # again after a crash: continues
  smith-calibrate sweep imported/ --cache-ttl 1h --cache-min-tokens 4096 --rank-by price_total
  smith-calibrate sweep imported/ --ratio 1.515 --overhead 17165 --cold-compact-at 0.55,0.65

A grid file (TOML) uses the flags' names as keys:
  compact-at = [0.7, 0.8, 0.9]
  compact-to = \"0.4..0.6:0.05\"
  max-tokens = 120000
Flags given on the command line replace the file's values for that knob.

--out DIR writes sessions.parquet/.csv (a row per session and config),
configs.parquet/.csv (a row per config: sums, medians, p95, changes against
the baseline, intervals, rank), summary.json and verdict.json, each whole or
not at all; --report DIR also draws them. The verdict under the table is
`recommend`'s. The columns, the loss measures, the prices, sharding and
resuming are described in docs/guide.md.")]
pub struct SweepArgs {
    #[command(flatten)]
    pub swept: Swept,
    /// A TOML file of knob values (keys as the flags above)
    #[arg(long, value_name = "FILE", help_heading = "Grid")]
    pub grid: Option<PathBuf>,
    /// Refuse grids with more configs than this
    #[arg(long, value_name = "N", default_value_t = grid::MAX_CONFIGS, help_heading = "Grid")]
    pub max_configs: usize,
    /// Token estimators smith's engine runs under, a knob like the others:
    /// bytes4 (smith's bytes / 4), chars4, o200k, cl100k, claude2,
    /// or all
    /// [default: bytes4]. Example: --estimator bytes4,o200k
    #[arg(long, value_name = "LIST", help_heading = "Grid")]
    pub estimator: Option<String>,
    // Boxed: fifteen optional flags would double the size of the command.
    #[command(flatten)]
    pub policies: Box<PolicyArgs>,

    /// Prices per million tokens: input,cache_write,cache_read, for every
    /// session instead of its model's row of the price table
    /// [default: per model; 3,3.75,0.3 (Sonnet) where the model is unknown]
    #[arg(long, value_name = "I,W,R")]
    pub price: Option<Prices>,
    #[command(flatten)]
    pub cost: Box<crate::commands::cost_args::CostArgs>,
    #[command(flatten, next_help_heading = "Cost model")]
    pub account: crate::commands::account_args::AccountArgs,
    /// The figure configs are ranked by, lowest first
    #[arg(long, value_name = "FIGURE", default_value = crate::recommend::DEFAULT_OBJECTIVE.name(),
          value_parser = PossibleValuesParser::new(Metric::rankable().map(Metric::name)))]
    pub rank_by: String,
    /// Show only the best N configs (the baseline is always shown)
    /// [default: 20 in the table, all with --json]
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Write sessions.{parquet,csv}, configs.{parquet,csv} and summary.json
    /// into DIR (created if missing)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also draw the report (index.html and PNG charts, as `report` does)
    /// into DIR; the data files go there too unless --out is given
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Print the config table as JSON: an object of its "schema_version"
    /// and its "configs", one object per config, best first
    #[arg(long)]
    pub json: bool,
    /// Fail (exit 1, writing nothing) if any line or session had to be
    /// skipped
    #[arg(long)]
    pub strict: bool,
    /// Take only shard K of N of the sessions and write them as a Hive
    /// partition of --out (see below); `auto` takes K and N from a Slurm
    /// array or a Kubernetes Indexed Job. Example: --shard 3/8
    #[arg(long, value_name = "K/N|auto|auto/N", help_heading = "Scale")]
    pub shard: Option<String>,
    /// Journal finished sessions under --out, and continue an interrupted
    /// sweep from its journal instead of starting over. Example: sweep
    /// corpus/ --out results/ --resume
    #[arg(long, help_heading = "Scale")]
    pub resume: bool,
    /// Worker threads [default: one per core]
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// A compaction within N requests of the previous one counts as
    /// repeated (column misfire_repeated), e.g. --thrash-window 5
    #[arg(long, value_name = "N", default_value_t = crate::replay::DEFAULT_THRASH_WINDOW,
          value_parser = crate::replay::misfire::parse_thrash_window)]
    pub thrash_window: usize,
    /// For the tests only, hidden: after N sessions are finished (and
    /// journaled, with --resume; 0: before the first), say so on stderr and
    /// wait for Ctrl-C or the end of stdin, so a test interrupts or kills
    /// the sweep at a known point rather than after a guessed time.
    #[arg(long, value_name = "N", hide = true)]
    pub test_pause_after: Option<usize>,
}

/// What a command that sweeps reads: the sessions and smith's knobs, the
/// same flags for `sweep` and `recommend`.
#[derive(Args, Debug)]
pub struct Swept {
    #[arg(value_name = "PATHS", help = super::SESSIONS_OR_HOME_HELP)]
    pub paths: Vec<String>,
    #[command(flatten)]
    pub select: super::select_args::SelectArgs,

    /// smith's knobs, each a list (from the knob table).
    #[command(flatten)]
    pub knobs: super::knob_args::Given<Knob>,
    /// Also replay windows and thresholds smith itself refuses (compact-at
    /// of 1 or more, compact-to at or above compact-at, or 0): for
    /// exploring the engine, never for a config.toml
    #[arg(long, help_heading = "Grid")]
    pub beyond_smith: bool,
    /// What every config is compared with: recorded (each session's agent's
    /// own run as its log recorded it, at the session's own window),
    /// defaults (smith's), or a smith config.toml whose [context] is the
    /// baseline [default: recorded when every session is another agent's
    /// log, else smith's defaults (recommend: your config.toml)]
    #[arg(long, value_name = "recorded|defaults|FILE", help_heading = "Grid")]
    pub baseline: Option<BaselineArg>,
}

/// What `--baseline` asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum BaselineArg {
    Recorded,
    Defaults,
    File(PathBuf),
}

/// A `--baseline` that names nothing it can be.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is neither recorded, defaults nor a smith config.toml that exists")]
pub struct BaselineArgError(String);

impl std::str::FromStr for BaselineArg {
    type Err = BaselineArgError;

    fn from_str(text: &str) -> Result<BaselineArg, BaselineArgError> {
        match text {
            "recorded" => Ok(BaselineArg::Recorded),
            "defaults" => Ok(BaselineArg::Defaults),
            path if Path::new(path).is_file() => Ok(BaselineArg::File(PathBuf::from(path))),
            other => Err(BaselineArgError(other.to_string())),
        }
    }
}

/// The baseline a sweep settled on, with what outputs call it.
pub(crate) struct Settled {
    pub grid: Grid,
    pub kind: plan::BaselineKind,
    /// Where it came from, for people: `the agents' own runs, as their logs
    /// recorded them`.
    pub source: String,
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

/// The grid of `spec` with the baseline `arg` asks for (`None`: the
/// default, `smith` where the sessions are smith's), each knob within
/// `limit`. `others`: every session is another agent's log. Sessions of
/// other agents replay at their own window unless the flags gave one.
pub(crate) fn settle(
    arg: Option<&BaselineArg>,
    smith: (Config, String),
    mut spec: GridSpec,
    others: bool,
    window_given: bool,
    limit: usize,
) -> Result<Settled> {
    if others && !window_given {
        spec.put(Knob::MaxTokens, vec![OWN_WINDOW as f64]);
    }
    let recorded = match arg {
        Some(a) => *a == BaselineArg::Recorded,
        None => others,
    };
    let (head, source) = match arg {
        Some(BaselineArg::Defaults) => (None, "smith's defaults".to_string()),
        Some(BaselineArg::File(path)) => {
            let context = crate::recommend::smith_config::read(path);
            for w in &context.warnings {
                crate::note!("warning: {w}");
            }
            (
                Some(context.config),
                format!("the [context] of {}", path.display()),
            )
        }
        _ => (Some(smith.0).filter(|c| *c != Config::default()), smith.1),
    };
    let grid = match head {
        Some(h) => grid::build_around(
            &spec,
            limit,
            crate::recommend::smith_config::under_grid(&h, &spec),
        ),
        None => grid::build(&spec, limit),
    }
    .map_err(usage)?;
    let (kind, source) = if recorded {
        (plan::BaselineKind::Recorded, RECORDED_SOURCE.to_string())
    } else {
        (plan::BaselineKind::Smith, source)
    };
    Ok(Settled { grid, kind, source })
}

/// What outputs call the recorded baseline.
const RECORDED_SOURCE: &str =
    "what happened: each session's agent's own run as its log recorded it, at the session's own window";

/// Rows of the terminal table when `--top` is not given.
const DEFAULT_TOP: usize = 20;

/// Bytes of kept rows above which the sweep says how much memory it will
/// hold: the rows are small, but sessions × configs can still be billions.
const ROW_MEMORY_WARNING: f64 = 2e9;

impl SweepArgs {
    /// The grid the flags and the grid file describe.
    fn spec(&self) -> Result<GridSpec> {
        let spec = match &self.grid {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    usage(format!(
                        "{}: cannot read the grid file: {e}",
                        path.display()
                    ))
                })?;
                GridSpec::from_toml(path, &text).map_err(usage)?
            }
            None => GridSpec::default(),
        };
        self.swept.overridden(spec)
    }
}

/// A sweep checked and resolved before any session is read, so that a bad
/// flag, grid or folder fails in a second rather than after the work.
struct Planned {
    /// The flat prices of the outputs' header and of rows the cost model
    /// did not meter; each session is priced at its model's row unless
    /// `--price`.
    price: Prices,
    cost: crate::cost::session::Settings,
    grid: Grid,
    plan: Plan,
    rank_by: Metric,
    /// The PATHS as given (or the sessions directory).
    paths: Vec<String>,
    /// The sessions this process replays: its shard's, with `--shard`;
    /// each one's position among the `listed` sessions of the whole sweep.
    refs: Vec<SessionRef>,
    ordinals: Vec<usize>,
    listed: usize,
    shard: Option<Shard>,
    /// Where the data files go: `--out`, else `--report`.
    data_dir: Option<PathBuf>,
    options: Options,
    /// What the baseline is, for people.
    baseline_source: String,
}

impl Planned {
    /// What `summary.json` says besides the tables: the one description
    /// of this sweep every writer (one process, a shard) is given.
    fn summary_input<'a>(&'a self, args: &'a SweepArgs) -> SummaryInput<'a> {
        SummaryInput {
            paths: &self.paths,
            grid_file: args.grid.as_deref(),
            grid: &self.grid,
            plan: &self.plan,
            prices: &self.price,
            rank_by: self.rank_by,
        }
    }
}

pub fn run(args: SweepArgs) -> Result<()> {
    let planned = plan_sweep(&args)?;
    let (sweep, journal) = run_planned(&planned, &args)?;
    let price = &planned.price;
    let value = |s: usize, c: usize| figures::values(&sweep.row(s, c).facts, price);
    let (mut summaries, per) = summarize_values_with(
        &sweep.configs,
        sweep.sessions.len(),
        &value,
        planned.rank_by,
        &Bootstrap::default(),
    );
    // A shard sees only its sessions: the merge decides on all of them.
    let verdict = planned.shard.is_none().then(|| {
        decide_verdict(
            &mut summaries,
            &per,
            &recommend::Settings::for_sweep(planned.rank_by),
        )
    });
    write(
        &planned,
        &args,
        &sweep,
        &summaries,
        verdict.as_ref(),
        journal,
    )?;
    print(&planned, &args, &sweep, &summaries, verdict.as_ref())
}

/// The verdict on a sweep's configs ([`recommend::decide`]), with a note
/// while the folds are drawn: the one decision `sweep`, `merge` and
/// `recommend` make, so that none of them contradicts another on the same
/// sessions.
/// [`decide_verdict`] by the sweep's settings for `rank_by`, as
/// `verdict.json` holds it: the decision handed to a merge of shards and
/// to a report compared with another baseline.
pub(crate) fn decide_json(
    summaries: &mut [ConfigSummary],
    per: &PerSession,
    rank_by: crate::sweep::figures::Metric,
) -> serde_json::Value {
    let settings = recommend::Settings::for_sweep(rank_by);
    serde_json::to_value(decide_verdict(summaries, per, &settings))
        .unwrap_or(serde_json::Value::Null)
}

pub(crate) fn decide_verdict(
    summaries: &mut [ConfigSummary],
    per: &PerSession,
    settings: &recommend::Settings,
) -> Verdict {
    let started = std::time::Instant::now();
    let spinner = crate::messages::spinner(format!(
        "deciding: {} resamples over {} folds",
        settings.draws.resamples, settings.folds
    ));
    let verdict = recommend::decide(summaries, per, settings);
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

/// The configs (smith's grid, the other policies', under every estimator)
/// and the sessions (selected, sharded) of the sweep the flags describe,
/// with the output folders made ready.
fn plan_sweep(args: &SweepArgs) -> Result<Planned> {
    let rank_by = Metric::from_name(&args.rank_by)
        .ok_or_else(|| usage(format!("--rank-by: no figure named {}", args.rank_by)))?;
    let (paths, refs) = args.swept.sessions()?;
    let (grid, plan, given, baseline_source) = configs_of(args, &refs)?;

    let shard = super::sweep_dist::shard_of(args.shard.as_deref())?;
    if shard.is_some() && (args.out.is_none() || args.report.is_some()) {
        return Err(usage(
            "--shard needs --out DIR (the folder every shard writes into) and no --report: draw the report after `merge DIR`",
        ));
    }
    if args.resume && args.out.is_none() && args.report.is_none() {
        return Err(usage("--resume needs --out DIR: the journal is kept there"));
    }
    let data_dir = prepare_dirs(args.out.as_deref(), args.report.as_deref(), &refs)?;
    let cost = args.account.settings(args.cost.settings(args.price));
    let listed = refs.len();
    // Every session of the plan, not only the shard's, prices the account.
    let accounts = super::account_args::accounts(&refs, &cost);
    let (refs, ordinals) = super::sweep_dist::take_shard(&paths, refs, shard);
    if let Some(shard) = shard {
        crate::note!("shard {shard}: {} of the {listed} sessions", refs.len());
    }
    warn_of_memory(refs.len(), plan.setups.len());
    let mut options = Options::for_terminal(args.jobs.map(|j| j as usize));
    // Where the grid leaves ratio or overhead, each session replays under
    // its own (its saved ratio, or what its recorded usage teaches).
    options.given = given;
    options.accounts = accounts;
    Ok(Planned {
        price: args.price.unwrap_or_default(),
        cost,
        grid,
        plan,
        rank_by,
        paths,
        refs,
        ordinals,
        listed,
        shard,
        data_dir,
        options,
        baseline_source,
    })
}

/// The grid of smith's knobs, the plan of every policy's configs under
/// every estimator, and which of ratio and overhead the grid fixes; with a
/// note for each thing the flags asked for that changes nothing.
fn configs_of(
    args: &SweepArgs,
    refs: &[SessionRef],
) -> Result<(Grid, Plan, crate::calibrate::session::Given, String)> {
    let spec = args.spec()?;
    let window_given = spec.get(Knob::MaxTokens).is_some();
    let settled = settle(
        args.swept.baseline.as_ref(),
        (Config::default(), "smith's defaults".to_string()),
        spec.clone(),
        all_by_other_agents(refs),
        window_given,
        args.max_configs,
    )?;
    let grid = settled.grid;
    grid::check_smith_rule(&grid, args.swept.beyond_smith).map_err(usage)?;
    if grid.impossible > 0 {
        crate::note!(
            "left out {} of {} combinations whose target is at or above their trigger (compact-to >= compact-at): compaction would aim above where it starts",
            grid.impossible,
            spec.product_len()
        );
    }
    let policy_spec = args.policies.spec()?;
    let unused = policy_spec.unused();
    if !unused.is_empty() {
        let flags: Vec<String> = unused.iter().map(|k| format!("--{}", k.flag())).collect();
        crate::note!(
            "note: {} change nothing: their policies are not in --policy",
            flags.join(", ")
        );
    }
    if !policy_spec.policies.contains(&Policy::Smith) && grid.configs.len() > 1 {
        crate::note!(
            "note: smith is not in --policy, so smith's grid is left out; only its defaults remain, as the baseline"
        );
    }
    let mut plan =
        plan::build(&grid, &policy_spec, settled.kind, args.max_configs).map_err(usage)?;
    if let Some(list) = &args.estimator {
        let estimators =
            Estimator::parse_list(list).map_err(|e| usage(format!("--estimator: {e}")))?;
        plan.setups = crate::sweep::estimators::expand(&plan.setups, &estimators);
        if plan.setups.len() > args.max_configs {
            return Err(usage(format!(
                "the sweep has {} configs with {} estimators, more than the limit of {}; use fewer values, or raise --max-configs",
                plan.setups.len(),
                estimators.len(),
                args.max_configs
            )));
        }
    }
    Ok((grid, plan, spec.given(), settled.source))
}

/// Says how much memory the rows will hold when that is a lot: the rows
/// are small, but sessions × configs can still be billions.
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

/// Replays the planned sessions, through the journal with `--resume`, and
/// stops (writing nothing) where the run was interrupted or, under
/// `--strict`, had to skip something.
fn run_planned(p: &Planned, args: &SweepArgs) -> Result<(Sweep, Option<Opened>)> {
    // Ctrl-C stops the run at the next session and writes nothing: the
    // outputs already in the folder stay as they were.
    crate::interrupt::install();
    let mut journal = match (args.resume, &p.data_dir) {
        (true, Some(dir)) => Some(super::sweep_dist::open_journal(
            dir,
            p.shard,
            &p.refs,
            &p.plan.setups,
            &p.price,
            &p.cost,
        )?),
        _ => None,
    };
    let mut sweep = super::sweep_dist::run_sweep(
        &p.refs,
        &p.plan.setups,
        &p.options,
        &p.cost,
        journal.as_mut(),
        args.test_pause_after,
    )?;
    for row in &mut sweep.rows {
        row.facts.set_thrash_window(args.thrash_window);
    }
    let kept = match &p.data_dir {
        Some(dir) => format!(
            "; {} keeps its previous outputs, if any{}",
            dir.display(),
            super::sweep_dist::interrupted_note(journal.as_ref(), &sweep)
        ),
        None => String::new(),
    };
    // A shard may hold only unreadable sessions; the merge counts them.
    finished(&sweep, p.refs.len(), args.strict, p.shard.is_some(), &kept)?;
    let mb = sweep.bytes() as f64 / 1e6;
    let secs = sweep.elapsed.as_secs_f64();
    crate::note!(
        "replayed {} sessions ({mb:.1} MB{}) under {} configs in {secs:.1}s ({:.1} MB/s, {} threads){}",
        sweep.sessions.len(),
        match sweep.lines_skipped() {
            0 => String::new(),
            n => format!(", {n} bad lines skipped"),
        },
        p.plan.setups.len(),
        if secs > 0.0 { mb / secs } else { 0.0 },
        sweep.threads,
        match sweep.unreadable.len() {
            0 => String::new(),
            n => format!("; {n} sessions could not be read"),
        },
    );
    Ok((sweep, journal))
}

/// Stops a run whose results must not be written: interrupted by Ctrl-C
/// (`kept` says what the output folder keeps), with skips under
/// `--strict`, or with no session read at all (unless `empty_ok`).
pub(crate) fn finished(
    sweep: &Sweep,
    asked: usize,
    strict: bool,
    empty_ok: bool,
    kept: &str,
) -> Result<()> {
    if crate::interrupt::interrupted() {
        return Err(Failure {
            exit: Exit::Interrupted,
            message: format!(
                "interrupted after {} of {asked} sessions: nothing was written{kept}",
                sweep.sessions.len() + sweep.unreadable.len(),
            ),
        }
        .into());
    }
    if strict && (sweep.lines_skipped() > 0 || !sweep.unreadable.is_empty()) {
        return Err(nothing_read(format!(
            "{} bad lines and {} unreadable sessions (see above) and --strict was given: nothing was written",
            sweep.lines_skipped(),
            sweep.unreadable.len()
        )));
    }
    if sweep.sessions.is_empty() && !empty_ok {
        return Err(nothing_read(format!(
            "none of the {asked} sessions could be read (see above)"
        )));
    }
    Ok(())
}

/// Writes the outputs: a shard's partition, or the data files; then
/// removes the finished journal and draws the report.
fn write(
    p: &Planned,
    args: &SweepArgs,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    verdict: Option<&Verdict>,
    journal: Option<Opened>,
) -> Result<()> {
    let Some(dir) = &p.data_dir else {
        return Ok(());
    };
    let input = p.summary_input(args);
    match p.shard {
        Some(shard) => super::sweep_dist::write_shard(
            dir,
            shard,
            &p.refs,
            &p.ordinals,
            p.listed,
            sweep,
            summaries,
            &input,
        )?,
        None => {
            let verdict = verdict.expect("a sweep of every session decides");
            let written = write_data(dir, sweep, summaries, verdict, &input)?;
            let names: Vec<String> = written
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            crate::note!("wrote {} into {}", names.join(", "), dir.display());
        }
    }
    if let Some(opened) = journal {
        opened.journal.finish(dir)?;
    }
    draw_report(Some(dir), args.report.as_deref())
}

/// Writes a sweep's data files (see [`tables::export`]) into `dir`, each
/// atomically, and returns their paths.
pub(crate) fn write_data(
    dir: &Path,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    verdict: &Verdict,
    input: &SummaryInput,
) -> Result<Vec<PathBuf>> {
    let verdict = serde_json::to_value(verdict).context("cannot lay out the verdict")?;
    let export = tables::export(sweep, summaries, input.prices, input, verdict)
        .context("cannot lay out the results as tables")?;
    crate::export::write_all(dir, &export)
}

/// `--report DIR`: the report of the data files in `data`, if both are
/// given.
pub(crate) fn draw_report(data: Option<&Path>, report: Option<&Path>) -> Result<()> {
    if let (Some(data), Some(dir)) = (data, report) {
        let spinner = crate::messages::spinner("drawing the report");
        let written = crate::report::write_default(data, dir);
        spinner.finish_and_clear();
        let written = written?;
        super::report::say_written(&written);
    }
    Ok(())
}

/// The ranked configs on stdout: with `--json` an object of the schema
/// version and the configs' rows, else the terminal table and the cost
/// model's note.
fn print(
    p: &Planned,
    args: &SweepArgs,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    verdict: Option<&Verdict>,
) -> Result<()> {
    let order = tables::rank_order(summaries);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = if args.json {
        let top = args.top.unwrap_or(order.len());
        let shown: Vec<usize> = order.iter().copied().take(top).collect();
        let table = tables::configs_table(summaries);
        let printed = serde_json::json!({
            "schema_version": crate::sweep::columns::SCHEMA_VERSION,
            "configs": table.rows_json(&shown),
        });
        serde_json::to_writer_pretty(&mut out, &printed)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        let top = args.top.unwrap_or(DEFAULT_TOP);
        let prices = prices_used(&p.refs, args.price, &p.price);
        let chosen = verdict.and_then(|v| v.chosen.as_ref()).map(|c| c.config);
        let heading = Heading {
            prices: &prices,
            sessions: sweep.sessions.len(),
            baseline: &p.baseline_source,
            calibration: crate::sweep::summary::CalibrationRecord::of(
                sweep.rows.iter().map(|r| &r.facts.calibration),
            )
            .map(|c| c.describe(sweep.rows.len())),
        };
        let table = terminal_table(summaries, &order, top, p.rank_by, &heading, chosen);
        let note = crate::sweep::cost_note::note(summaries, Some(&p.cost));
        let decision = verdict.map_or(
            "No verdict: a shard decides nothing; `merge` decides on every shard's sessions."
                .to_string(),
            |v| format!("Verdict: {}", v.sentence),
        );
        let mut out = crate::screen::Wrapping::new(&mut out);
        writeln!(out, "{table}")
            .and_then(|()| writeln!(out, "{note}"))
            .and_then(|()| writeln!(out, "{decision}"))
            .and_then(|()| out.flush())
    };
    Ok(result?)
}

/// The prices the sweep's price stands on: `--price` for every request
/// where given, else each imported request's model's row of the price table
/// (with how many requests), and the flat default for sessions that record
/// no model (smith's own).
fn prices_used(refs: &[SessionRef], given: Option<Prices>, flat: &Prices) -> String {
    if let Some(p) = given {
        return format!("{p} (--price, for every request)");
    }
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut unrecorded = 0usize;
    let mut smith = crate::cost::session::SmithPrices::default();
    for r in refs {
        // The metadata the replay reads: a log read in place has no
        // session.json on disk, only the one converted with it.
        let value = transcript::locate::read_meta(r)
            .ok()
            .flatten()
            .and_then(|m| m.raw);
        let file = value
            .as_ref()
            .and_then(crate::transcript::session_file::SessionFile::from_meta);
        let Some(file) = file else {
            if !smith.add(value.as_ref()) {
                unrecorded += 1;
            }
            continue;
        };
        for q in &file.requests {
            let model = q.model.as_deref().or(file.model.as_deref()).unwrap_or("");
            let row = crate::cost::table::lookup(model).row;
            match rows.iter_mut().find(|x| x.0 == row) {
                Some(x) => x.1 += 1,
                None => rows.push((row, 1)),
            }
        }
    }
    if rows.is_empty() && smith.is_empty() {
        return flat.to_string();
    }
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut parts: Vec<String> = rows
        .iter()
        .map(|(row, n)| {
            let p = &crate::cost::MODEL_PRICES[*row];
            format!("{} {} ({n} requests)", p.family, p.prices())
        })
        .collect();
    parts.extend(smith.describe());
    if unrecorded > 0 {
        parts.push(format!(
            "{flat} for the {unrecorded} sessions that record no model"
        ));
    }
    let per = if smith.is_empty() {
        "per request's model"
    } else {
        "per request's model (smith's own sessions: the provider and model each session.json names)"
    };
    // One model a line: a header of many models stays readable.
    let lines: String = parts.iter().map(|p| format!("\n  {p}")).collect();
    format!("{per}:{lines}")
}

impl Swept {
    /// `spec` with each knob the flags give replaced by the flags' values.
    pub fn overridden(&self, spec: GridSpec) -> Result<GridSpec> {
        let mut given = GridSpec::default();
        for (knob, text) in &self.knobs.0 {
            given.set(*knob, text).map_err(usage)?;
        }
        Ok(spec.overridden_by(&given))
    }

    /// The sessions: those PATHS name (by default `$SMITH_HOME/sessions`),
    /// as the selection flags keep them; with the paths as given, for the
    /// outputs that record them. Nothing found is an error (exit 1).
    pub fn sessions(&self) -> Result<(Vec<String>, Vec<SessionRef>)> {
        let paths: Vec<String> = if self.paths.is_empty() {
            let dir = transcript::locate::sessions_dir();
            if !dir.is_dir() {
                return Err(nothing_read(format!(
                    "{}: no sessions directory; give PATHS, or set SMITH_HOME to where smith keeps its sessions",
                    dir.display()
                )));
            }
            vec![dir.display().to_string()]
        } else {
            self.paths.clone()
        };
        let refs = self.select.apply(resolve(&paths))?;
        if refs.is_empty() {
            return Err(nothing_read(format!(
                "no transcript found in {}",
                paths.join(", ")
            )));
        }
        Ok((paths, refs))
    }
}

/// Resolves every PATH, reporting (and passing over) those that name
/// nothing, keeping each transcript once.
pub(crate) fn resolve(paths: &[String]) -> Vec<SessionRef> {
    // A PATH that names nothing is reported and passed over, so the
    // resolver never fails.
    transcript::locate::resolve_each(paths, |spec| {
        Ok(crate::import::direct::resolve(spec).unwrap_or_else(|e| {
            crate::note!("{e:#}; skipped");
            Vec::new()
        }))
    })
    .unwrap_or_default()
}

/// Where the data files go (`--out`, else `--report`), with both folders
/// made ready by [`prepare_out_dir`].
pub(crate) fn prepare_dirs(
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

/// Creates `--out` before the sweep, so a bad directory fails in a second
/// rather than after the work, and refuses a session directory that is being
/// read: the tool never writes among smith's own files.
pub(crate) fn prepare_out_dir(dir: &Path, refs: &[SessionRef]) -> Result<()> {
    if dir.join(transcript::locate::TRANSCRIPT_FILE).exists() {
        return Err(usage(format!(
            "--out {}: that is a session directory; write the results somewhere else",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        usage(format!(
            "--out {}: cannot create the directory: {e}",
            dir.display()
        ))
    })?;
    let out = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let inside = refs
        .iter()
        .find(|r| std::fs::canonicalize(r.dir()).is_ok_and(|session| session == out));
    if let Some(r) = inside {
        return Err(usage(format!(
            "--out {}: {} is read from there; write the results somewhere else",
            dir.display(),
            r.transcript.display()
        )));
    }
    Ok(())
}

/// A change in percent, `=` for none and `new` for a change from zero.
fn pct(d: Delta) -> String {
    crate::format::change(d.pct)
}

/// A change as a signed whole number.
fn abs(d: Delta) -> String {
    if d.abs == 0.0 {
        "=".to_string()
    } else {
        format!("{:+.0}", d.abs)
    }
}

/// The interval of a config's change in `figure` against the baseline, as
/// percentages of the baseline's total (`base`), or in the figure's unit
/// when the baseline's total is 0.
pub fn interval_text(s: &ConfigSummary, figure: Metric, base: f64) -> String {
    let Some(iv) = s.interval else {
        return "-".to_string();
    };
    let iv = if figure == crate::sweep::figures::LOSS_MEASURE {
        iv.loss
    } else {
        iv.objective
    };
    if iv.lo == 0.0 && iv.hi == 0.0 {
        return "=".to_string();
    }
    match iv.pct_of(base) {
        Some(p) => format!("{:+.1}%…{:+.1}%", p.lo, p.hi),
        None if figure.is_price() => format!("{}…{}", money(iv.lo), money(iv.hi)),
        None => format!("{:+.0}…{:+.0}", iv.lo, iv.hi),
    }
}

/// What a column of the terminal table shows of its figure, and how.
#[derive(Clone, Copy)]
enum Shows {
    /// The total over sessions.
    Total(fn(f64) -> String),
    /// The change of the total against the baseline.
    Change(fn(Delta) -> String),
}

/// The columns of the terminal table after the config's own: header, the
/// figure, what of it. A ranking figure none of them shows gets columns of
/// its own.
const COLUMNS: [(&str, Metric, Shows); 13] = [
    ("price", Metric::Price, Shows::Total(money)),
    ("Δ price", Metric::Price, Shows::Change(pct)),
    ("tokens sent", Metric::TokensSent, Shows::Total(tokens)),
    ("cache write", Metric::CacheWrite, Shows::Total(tokens)),
    ("Δ write", Metric::CacheWrite, Shows::Change(pct)),
    ("mangled", Metric::ResultsMangled, Shows::Total(count)),
    ("Δ mangled", Metric::ResultsMangled, Shows::Change(abs)),
    ("still needed", figures::LOSS_MEASURE, Shows::Total(count)),
    ("refetched", Metric::Refetched, Shows::Total(count)),
    ("compactions", Metric::Compactions, Shows::Total(count)),
    ("summaries", Metric::Summaries, Shows::Total(count)),
    ("exhausted", Metric::Exhausted, Shows::Total(count)),
    ("peak", Metric::PeakTokens, Shows::Total(tokens)),
];

/// A whole number.
fn count(v: f64) -> String {
    format!("{v:.0}")
}

/// A cell of a column of [`COLUMNS`].
fn cell(s: &ConfigSummary, figure: Metric, shows: Shows) -> String {
    match shows {
        Shows::Total(f) => f(s.total(figure)),
        Shows::Change(f) => f(s.delta(figure)),
    }
}

/// The figures a terminal too narrow for every column keeps after the
/// ranking figure and its interval: the loss the verdict gates on, then
/// the price and the tool results it mangled.
const KEEP_FIRST: [&str; 6] = [
    "still needed",
    "price",
    "Δ price",
    "mangled",
    "Δ mangled",
    "refetched",
];

/// The terminal table's columns, the one to keep longest first: the rank
/// and the config, the ranking figure and its interval (`ci_at` and the
/// columns before it), then [`KEEP_FIRST`]; the rest follow in their order.
fn keep_first(header: &[String], ci_at: usize) -> Vec<usize> {
    let named = KEEP_FIRST
        .iter()
        .filter_map(|name| header.iter().position(|h| h == name));
    (0..=ci_at).chain(named).collect()
}

/// What the lines around the table say: the prices, the sessions and the
/// baseline.
struct Heading<'a> {
    prices: &'a str,
    sessions: usize,
    baseline: &'a str,
    /// The ratio and overhead the rows used where sessions chose them.
    calibration: Option<String>,
}

/// The ranked configs: the best `top`, and the baseline wherever it ranks.
fn terminal_table(
    summaries: &[ConfigSummary],
    order: &[usize],
    top: usize,
    rank_by: Metric,
    heading: &Heading,
    chosen: Option<usize>,
) -> String {
    let Heading {
        prices,
        sessions,
        baseline,
        ref calibration,
    } = *heading;
    let extra = !COLUMNS.iter().any(|&(_, figure, _)| figure == rank_by);
    let mut header = vec![
        "#".to_string(),
        "policy".to_string(),
        "config".to_string(),
        String::new(),
    ];
    if extra {
        header.push(rank_by.to_string());
        header.push(format!("Δ {rank_by}"));
    }
    header.extend(COLUMNS.iter().map(|(h, _, _)| h.to_string()));
    // The interval beside the change it bounds: after the ranking figure's
    // own columns, or after price's.
    let ci_at = if extra || rank_by == Metric::Price {
        6
    } else {
        4
    };
    header.insert(ci_at, format!("Δ {rank_by} 95% CI"));
    let priority = keep_first(&header, ci_at);
    let mut table = table(header);
    table.priority(priority);

    let mut rows: Vec<usize> = order.iter().copied().take(top).collect();
    let base = summaries.iter().position(|s| s.is_baseline);
    for extra in [base, chosen].into_iter().flatten() {
        if !rows.contains(&extra) {
            rows.push(extra);
        }
    }
    let hidden = summaries.len() - rows.len();
    let base_total = summaries
        .iter()
        .find(|s| s.is_baseline)
        .map_or(0.0, |b| b.total(rank_by));
    for i in rows {
        let s = &summaries[i];
        let mut marks = Vec::new();
        if s.is_baseline {
            marks.push("baseline");
        }
        if chosen == Some(i) {
            marks.push("chosen");
        }
        if s.pareto {
            marks.push("★");
        }
        if s.tied {
            marks.push("tied");
        }
        let mut cells = vec![
            right(s.rank),
            Cell::new(s.setup.policy),
            Cell::new(s.setup.knobs_label()),
            Cell::new(marks.join(" ")),
        ];
        if extra {
            let v = s.total(rank_by);
            let d = s.delta(rank_by);
            let v = if rank_by.is_price() {
                money(v)
            } else if rank_by.kind() == crate::sweep::figures::Kind::Expected {
                format!("{v:.1}")
            } else {
                format!("{v:.0}")
            };
            cells.push(right(v));
            cells.push(right(pct(d)));
        }
        for &(_, figure, shows) in &COLUMNS {
            cells.push(right(cell(s, figure, shows)));
        }
        cells.insert(ci_at, right(interval_text(s, rank_by, base_total)));
        table.add_row(cells);
    }
    let paragraph = crate::screen::paragraph;
    let ci = paragraph(&[
        &format!(
            "95% CI: paired bootstrap over sessions ({} resamples, seed {}); chosen: the verdict's config (below); tied: its",
            crate::sweep::bootstrap::DEFAULT_RESAMPLES,
            crate::sweep::bootstrap::DEFAULT_SEED,
        ),
        "interval overlaps the chosen config's (the first config's when the verdict keeps the baseline).",
    ]);
    let loss = paragraph(&[
        "still needed: results shortened or removed while still current whose lost identifiers, paths or numbers a later",
        "message used (the loss the verdict gates on); refetched: results whose call was made again (a proxy: the rest of",
        "each session is what the agent that recorded it did next).",
    ]);
    format!(
        "{sessions} sessions under {} configs, ranked by {rank_by} (lowest first); prices {prices}\n{table}\n\
         ★ on the Pareto front: no other config is both cheaper and mangles fewer tool results.\n\
         {ci}\n\
         Δ: change against the baseline, {baseline}. mangled: tool results cut to their head or stubbed.\n\
         {loss}{}{}",
        summaries.len(),
        calibration.as_ref().map_or(String::new(), |c| format!("\n{c}.")),
        if hidden > 0 {
            format!("\n{hidden} more configs not shown (--top N, or --out DIR for all)")
        } else {
            String::new()
        }
    )
}
