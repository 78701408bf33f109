//! `smith-calibrate sweep`: many sessions under a grid of configs, ranked
//! against smith's defaults. The flags become a [`Job`]; the verdict is
//! `recommend`'s rule, the table `view::sweep_table`'s.

use std::path::PathBuf;

use anyhow::Result;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use crate::engine::Config;
use crate::recommend;
use crate::sweep::bootstrap::Bootstrap;
use crate::sweep::figures::Metric;
use crate::sweep::grid::{self, GridSpec, Knob};
use crate::sweep::job::Job;

use super::policy_args::PolicyArgs;
use super::swept_args::Swept;
use super::usage;

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
pub(crate) struct SweepArgs {
    #[command(flatten)]
    pub(crate) swept: Swept,
    /// A TOML file of knob values (keys as the flags above)
    #[arg(long, value_name = "FILE", help_heading = "Grid")]
    pub(crate) grid: Option<PathBuf>,
    /// Refuse grids with more configs than this
    #[arg(long, value_name = "N", default_value_t = grid::MAX_CONFIGS, help_heading = "Grid")]
    pub(crate) max_configs: usize,
    /// Token estimators smith's engine runs under, a knob like the others:
    /// bytes4 (smith's bytes / 4), chars4, o200k, cl100k, claude2,
    /// or all
    /// [default: bytes4]. Example: --estimator bytes4,o200k
    #[arg(long, value_name = "LIST", help_heading = "Grid")]
    pub(crate) estimator: Option<String>,
    // Boxed: fifteen optional flags would double the size of the command.
    #[command(flatten)]
    pub(crate) policies: Box<PolicyArgs>,

    #[command(flatten)]
    pub(crate) prices: crate::commands::cost_args::PriceArg,
    #[command(flatten)]
    pub(crate) cost: Box<crate::commands::cost_args::CostArgs>,
    #[command(flatten)]
    pub(crate) account: crate::commands::account_args::AccountArgs,
    /// The figure configs are ranked by, lowest first
    #[arg(long, value_name = "FIGURE", default_value = crate::recommend::DEFAULT_OBJECTIVE.name(),
          value_parser = PossibleValuesParser::new(Metric::rankable().map(Metric::name))
              .try_map(|name| Metric::from_name(&name).ok_or("not a figure")))]
    pub(crate) rank_by: Metric,
    /// Show only the best N configs (the baseline is always shown)
    /// [default: 20 in the table, all with --json]
    #[arg(long, value_name = "N")]
    pub(crate) top: Option<usize>,
    /// Write sessions.{parquet,csv}, configs.{parquet,csv} and summary.json
    /// into DIR (created if missing)
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Also draw the report (index.html and PNG charts, as `report` does)
    /// into DIR; the data files go there too unless --out is given
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
    /// Print the config table as JSON: an object of its "schema_version"
    /// and its "configs", one object per config, best first
    #[arg(long)]
    pub(crate) json: bool,
    /// Fail (exit 1, writing nothing) if any line or session had to be
    /// skipped
    #[arg(long)]
    pub(crate) strict: bool,
    /// Take only shard K of N of the sessions and write them as a Hive
    /// partition of --out (see below); `auto` takes K and N from a Slurm
    /// array or a Kubernetes Indexed Job. Example: --shard 3/8
    #[arg(long, value_name = "K/N|auto|auto/N", help_heading = "Scale")]
    pub(crate) shard: Option<String>,
    /// Journal finished sessions under --out, and continue an interrupted
    /// sweep from its journal instead of starting over. Example: sweep
    /// corpus/ --out results/ --resume
    #[arg(long, help_heading = "Scale")]
    pub(crate) resume: bool,
    /// Worker threads [default: one per core]
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) jobs: Option<u32>,
    /// A compaction within N requests of the previous one counts as
    /// repeated (column misfire_repeated), e.g. --thrash-window 5
    #[arg(long, value_name = "N", default_value_t = crate::replay::DEFAULT_THRASH_WINDOW,
          value_parser = crate::replay::misfire::parse_thrash_window)]
    pub(crate) thrash_window: usize,
    /// For the tests only, hidden: after N sessions are finished (and
    /// journaled, with --resume; 0: before the first), say so on stderr and
    /// wait for Ctrl-C or the end of stdin, so a test interrupts or kills
    /// the sweep at a known point rather than after a guessed time.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) test_pause_after: Option<usize>,
}

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

    /// The sweep the flags describe.
    fn job(self) -> Result<Job> {
        let (paths, refs) = self.swept.sessions()?;
        let spec = self.spec()?;
        let baseline = self.swept.baseline.as_ref().map(|b| b.baseline());
        let policies = self.policies.spec()?;
        Ok(Job {
            paths,
            refs,
            window_given: spec.get(Knob::MaxTokens).is_some(),
            spec,
            grid_file: self.grid,
            max_configs: self.max_configs,
            beyond_smith: self.swept.beyond_smith,
            baseline,
            own: (Config::default(), "smith's defaults".to_string()),
            policies,
            estimators: self.estimator,
            price: self.prices.install(),
            cost: self
                .account
                .settings(self.cost.settings(self.prices.flat())),
            rank_by: self.rank_by,
            draws: Bootstrap::default(),
            shard: self.shard,
            resume: self.resume,
            out: self.out,
            report: self.report,
            strict: self.strict,
            jobs: self.jobs.map(|j| j as usize),
            thrash_window: Some(self.thrash_window),
            pause_after: self.test_pause_after,
            say_left_out: true,
        })
    }
}

pub(crate) fn run(args: SweepArgs) -> Result<()> {
    let (json, top) = (args.json, args.top);
    let job = args.job()?;
    let settings = recommend::Settings::for_sweep(job.rank_by);
    let planned = job.plan()?;
    let outcome =
        planned.execute(|summaries, per| recommend::decide_verdict(summaries, per, &settings))?;
    if let (Some(data), Some(dir)) = (&planned.data_dir, &planned.report) {
        crate::report::draw(data, dir)?.say();
    }
    let shown = if json {
        crate::view::sweep_table::print_json(&outcome, &planned.prices_used, top)
    } else {
        let prices = planned.prices_used();
        crate::view::sweep_table::print(&planned, &outcome, &prices, top)
    };
    Ok(shown?)
}
