//! `smith-calibrate recommend`: sweep smith's thresholds around the user's
//! own configuration and say what to write into `config.toml`, how sure
//! that is, and whether it holds on sessions it was not chosen on.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use comfy_table::{Cell, CellAlignment};

use crate::engine::{Config, EngineVersion};
use crate::recommend::smith_config::{self, Source};
use crate::recommend::{self, Evidence, MaxLoss, Settings, Verdict};
use crate::sweep::bootstrap::{Bootstrap, DEFAULT_RESAMPLES, DEFAULT_SEED};
use crate::sweep::figures::Metric;
use crate::sweep::grid::{self, GridSpec, Knob};
use crate::sweep::job::Job;
use crate::sweep::plan::PolicySpec;
use crate::transcript;

use super::usage;

/// The default grid of `compact_at` (smith accepts below 1).
pub const DEFAULT_COMPACT_AT: &str = "0.6..0.95:0.05";
/// The default grid of `compact_to` (smith accepts above 0, below
/// `compact_at`; pairs at or above it are left out).
pub const DEFAULT_COMPACT_TO: &str = "0.2..0.7:0.05";

/// Say what to put in smith's config.toml, how sure that is, and whether it
/// holds on sessions it was not chosen on.
///
/// The baseline is your own configuration: the [context] table of
/// $SMITH_HOME/config.toml as smith reads it (max_tokens, compact_at,
/// compact_to; smith's defaults where it gives none or smith would reject
/// it). recommend sweeps compact_at × compact_to around it (default
/// 0.6..0.95:0.05 × 0.2..0.7:0.05, under your max_tokens; replace either
/// with the sweep's own flags, or sweep --max-tokens too), prices and
/// measures every config as `sweep` does, and picks the config with the
/// lowest --objective among those smith accepts, that keep the loss
/// measure (still_needed) within --max-loss, and that are better than the
/// baseline beyond their 95% interval. `sweep` decides by the same rule.
#[derive(Args, Debug)]
#[command(mut_arg("compact-at", |a| default_shown(a, DEFAULT_COMPACT_AT)))]
#[command(mut_arg("compact-to", |a| default_shown(a, DEFAULT_COMPACT_TO)))]
#[command(mut_arg("max-tokens", |a| default_shown(a, "your max_tokens, smith's 120000 without one")))]
#[command(after_help = "Examples:
  smith-calibrate recommend        # your sessions and config under $SMITH_HOME
  smith-calibrate recommend datasets/sessions --json | jq .sentence
  smith-calibrate recommend imported/ --ratio 1.515 --overhead 17165 --max-tokens 200000
  smith-calibrate recommend --compact-at 0.7..0.9:0.02 --objective price --max-loss 2%
  smith-calibrate recommend datasets/sessions --report reports/verdict --seed 7 --resamples 20000
  smith-calibrate recommend datasets/ --for-maintainers --window 2,3,5 --result-cap 256,1024

The verdict keeps your configuration unless a config smith accepts is better
in --objective beyond its 95% interval (a paired bootstrap over sessions, the
ratio of resampled totals), keeps still_needed within --max-loss, and still
saves out of sample (--folds); never with fewer than 10 sessions. --window
and --result-cap are swept only with --for-maintainers. The method, with its
figures on the shared logs: docs/guide.md.")]
pub(crate) struct RecommendArgs {
    #[command(flatten)]
    pub(crate) swept: super::swept_args::Swept,
    /// Also sweep --window and --result-cap, which are constants in
    /// smith's code: for smith's maintainers, not for a config.toml
    #[arg(long, help_heading = "Grid")]
    pub(crate) for_maintainers: bool,
    /// smith's config file whose [context] is the baseline
    /// [default: $SMITH_HOME/config.toml]
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,

    /// The figure to minimise, any column of the sweep's figures.
    /// Example: --objective price
    #[arg(long, value_name = "FIGURE", default_value = recommend::DEFAULT_OBJECTIVE.name(),
          value_parser = PossibleValuesParser::new(Metric::ALL.map(Metric::name)))]
    pub(crate) objective: String,
    /// How much more of the loss measure (still_needed) a recommendation
    /// may cost: baseline (no worse at 95% confidence), a count (5), a
    /// percentage of the baseline's (2%), or any
    #[arg(long, value_name = "LIMIT", default_value = "baseline")]
    pub(crate) max_loss: MaxLoss,
    /// Seed of the bootstrap's resamples and of the folds
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED, help_heading = "Confidence")]
    pub(crate) seed: u64,
    /// Bootstrap resamples
    #[arg(long, value_name = "N", default_value_t = DEFAULT_RESAMPLES, help_heading = "Confidence",
          value_parser = clap::value_parser!(u32).range(100..=10_000_000).map(|v| v as usize))]
    pub(crate) resamples: usize,
    /// Folds of the out-of-sample check (by session)
    #[arg(long, value_name = "K", default_value_t = recommend::DEFAULT_FOLDS, help_heading = "Confidence",
          value_parser = clap::value_parser!(u32).range(2..=1000).map(|v| v as usize))]
    pub(crate) folds: usize,

    #[command(flatten)]
    pub(crate) prices: super::cost_args::PriceArg,
    #[command(flatten)]
    pub(crate) cost: Box<super::cost_args::CostArgs>,
    #[command(flatten)]
    pub(crate) account: super::account_args::AccountArgs,
    /// Evidence rows besides the baseline and the chosen config
    #[arg(long, value_name = "N", default_value_t = recommend::DEFAULT_TOP)]
    pub(crate) top: usize,
    /// Print the verdict as JSON
    #[arg(long)]
    pub(crate) json: bool,
    /// Write the sweep's data files and verdict.json into DIR
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Also draw the report into DIR, the verdict its first section; the
    /// data files go there too unless --out is given
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
    /// Fail (exit 1, writing nothing) if any line or session had to be
    /// skipped
    #[arg(long)]
    pub(crate) strict: bool,
    /// Worker threads [default: one per core]
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) jobs: Option<u32>,
}

/// `arg` with the default `recommend` uses in its help instead of smith's:
/// it sweeps a grid around the user's own config.
fn default_shown(arg: clap::Arg, shown: &str) -> clap::Arg {
    let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    let head = help
        .rsplit_once(" [default: ")
        .map_or(help.as_str(), |(h, _)| h);
    let text = format!("{head} [default: {shown}]");
    arg.help(text)
}

/// The knobs that are constants in smith's code.
const MAINTAINERS_KNOBS: [Knob; 2] = [Knob::Window, Knob::ResultCap];

impl RecommendArgs {
    /// The grid: the default thresholds under the baseline's window, then
    /// the flags.
    fn spec(&self, baseline: &Config) -> Result<GridSpec> {
        for k in MAINTAINERS_KNOBS {
            if self.swept.knobs.get(k).is_some() && !self.for_maintainers {
                return Err(usage(format!(
                    "--{} is a constant in smith's code, not a setting of config.toml; sweep it with --for-maintainers",
                    k.flag()
                )));
            }
        }
        let mut spec = GridSpec::default();
        spec.set(Knob::CompactAt, DEFAULT_COMPACT_AT)
            .map_err(usage)?;
        spec.set(Knob::CompactTo, DEFAULT_COMPACT_TO)
            .map_err(usage)?;
        spec.set(Knob::MaxTokens, &baseline.max_tokens.to_string())
            .map_err(usage)?;
        self.swept.overridden(spec)
    }
}

pub(crate) fn run(args: RecommendArgs) -> Result<()> {
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| transcript::locate::smith_home().join(smith_config::CONFIG_FILE));
    let (json, decision) = (args.json, (args.max_loss, args.folds, args.top));
    let job = job(args, &config_path)?;
    let engine = single_engine(&job.spec)?;
    let planned = job.clone().plan()?;
    let (max_loss, folds, top) = decision;
    let settings = Settings {
        objective: planned.rank_by,
        max_loss,
        draws: planned.draws,
        folds,
        top,
    };
    // The same rule on the same sessions under smith's other engine, so the
    // verdict can say in one line what a smith with (or without) #118 would
    // be told. It writes nothing.
    let other = EngineVersion::ALL.into_iter().find(|&e| e != engine);
    let other = match other {
        Some(e) => {
            crate::note!(
                "replaying under --engine {e} too, for the line that compares the engines"
            );
            let mut job = job;
            job.spec.put(Knob::Engine, vec![e.code()]);
            (job.out, job.report, job.resume) = (None, None, false);
            let outcome = job
                .plan()?
                .execute(|summaries, per| recommend::decide_verdict(summaries, per, &settings))?;
            outcome.verdict.as_ref().map(recommend::OtherEngine::of)
        }
        None => None,
    };
    let outcome = planned.execute(|summaries, per| {
        let mut v = recommend::decide_verdict(summaries, per, &settings);
        v.other_engine = other.clone();
        v
    })?;
    if let (Some(data), Some(dir)) = (&planned.data_dir, &planned.report) {
        crate::report::draw(data, dir)?.say();
    }
    let verdict = outcome
        .verdict
        .context("recommend decides on every session: it takes no shard")?;
    print(
        &outcome.tokens.describe(),
        outcome.calibration.as_deref(),
        &verdict,
        json,
        &planned.baseline_source,
        &config_path,
    )
}

/// The one engine `recommend` decides for: it tells a user of one smith
/// what to write, and reports the other engine in a line of its own.
fn single_engine(spec: &GridSpec) -> Result<EngineVersion> {
    match spec.get(Knob::Engine) {
        None => Ok(EngineVersion::RELEASED),
        Some([one]) => Ok(EngineVersion::from_code(*one).unwrap_or(EngineVersion::RELEASED)),
        Some(_) => Err(usage(
            "--engine: recommend decides for one engine, the smith you run, and says in one line what the other would choose; to rank both side by side, use sweep --engine 0.4,next",
        )),
    }
}

/// The sweep around the user's config the flags describe: smith's policy
/// alone, the grid's limit, the bootstrap and objective of the flags.
fn job(args: RecommendArgs, config_path: &Path) -> Result<Job> {
    let cost = args
        .account
        .settings(args.cost.settings(args.prices.install()));
    let context = smith_config::read(config_path);
    for w in &context.warnings {
        crate::note!("warning: {w}");
    }
    let spec = args.spec(&context.config)?;
    let objective = Metric::from_name(&args.objective)
        .ok_or_else(|| usage(format!("--objective: no figure named {}", args.objective)))?;
    let (paths, refs) = args.swept.sessions()?;
    let from = match &context.source {
        Source::File(p) => format!("the [context] of {}", p.display()),
        Source::Defaults(p) => format!("smith's defaults ({} does not exist)", p.display()),
    };
    Ok(Job {
        paths,
        refs,
        spec,
        grid_file: None,
        window_given: args.swept.knobs.get(Knob::MaxTokens).is_some(),
        max_configs: grid::MAX_CONFIGS,
        beyond_smith: args.swept.beyond_smith,
        baseline: args.swept.baseline.as_ref().map(|b| b.baseline()),
        own: (context.config, from),
        policies: PolicySpec::default(),
        estimators: None,
        price: args.prices.flat(),
        cost,
        rank_by: objective,
        draws: Bootstrap {
            seed: args.seed,
            resamples: args.resamples,
        },
        shard: None,
        resume: false,
        out: args.out,
        report: args.report,
        strict: args.strict,
        jobs: args.jobs.map(|j| j as usize),
        thrash_window: None,
        pause_after: None,
        say_left_out: false,
    })
}

/// The verdict on stdout: as JSON, or for a person with the calibration
/// the rows used.
fn print(
    tokens: &str,
    calibration: Option<&str>,
    verdict: &Verdict,
    json: bool,
    from: &str,
    config_path: &Path,
) -> Result<()> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = if json {
        serde_json::to_writer_pretty(&mut out, verdict)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        let mut text = text(verdict, from, config_path);
        text.push_str(&format!("Units: {tokens}.\n"));
        if let Some(c) = calibration {
            text.push_str(&format!("{c}.\n"));
        }
        let mut out = crate::screen::Wrapping::new(&mut out);
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    };
    Ok(result?)
}

/// The verdict for a person: the sentence, the evidence, the snippet.
pub(crate) fn text(v: &Verdict, from: &str, path: &std::path::Path) -> String {
    let mut s = String::new();
    s.push_str(&v.sentence);
    s.push('\n');
    if let Some(o) = &v.other_engine {
        s.push_str(&format!("{}.\n", o.line));
    }
    s.push('\n');
    s.push_str(&format!(
        "{} sessions under {} configs of smith's engine {} ({}), {} of them ones smith accepts; baseline {} from {from}\n",
        v.sessions,
        v.configs,
        v.engine,
        v.engine.describe(),
        v.accepted,
        v.baseline.label
    ));
    s.push_str(&format!("{}\n", evidence_table(v)));
    let obj = v.objective;
    let money = |x: f64| recommend::amount(obj, x);
    let saving_pct = |p: Option<f64>| p.map_or("-".to_string(), crate::format::percent_tenths);
    s.push_str(&format!(
        "saving in sample:     {}\n",
        recommend::saving_in_sample(v)
    ));
    match &v.out_of_sample {
        Some(o) => {
            let folds: Vec<String> = o
                .folds
                .iter()
                .map(|f| {
                    format!(
                        "{} ({} sessions: {})",
                        money(f.saving),
                        f.sessions,
                        f.chosen.as_deref().unwrap_or("kept the baseline")
                    )
                })
                .collect();
            s.push_str(&format!(
                "saving out of sample: {} ({}) over {} folds, {} {}: {}\n",
                money(o.saving),
                saving_pct(o.saving_pct),
                o.folds.len(),
                v.loss_measure,
                crate::recommend::signed_count(o.loss_change),
                folds.join("; ")
            ));
        }
        None => s.push_str(&format!(
            "saving out of sample: not measured (fewer than {} sessions)\n",
            v.min_sessions
        )),
    }
    if let Some(h) = &v.headroom {
        s.push_str(&format!(
            "headroom:             {} ({}): each session under its own best config in hindsight saves {}, the best single config ({}) {}\n",
            money(h.headroom),
            saving_pct(h.headroom_pct),
            saving_pct(h.hindsight_saving_pct),
            h.best_single,
            saving_pct(h.best_single_saving_pct)
        ));
    }
    if let Some(e) = v.best_refused().filter(|_| !v.change) {
        s.push_str(&format!(
            "best refused:         {}: {}\n",
            e.label,
            v.refused_because(e)
        ));
    }
    s.push('\n');
    if v.change {
        s.push_str(&format!(
            "Paste into {} in place of its [context] table:\n\n{}\n",
            path.display(),
            v.snippet
        ));
    } else if v.baseline.policy == crate::policy::Policy::Recorded.as_str() {
        s.push_str("Nothing to change: no config of smith's beats what the agents did.\n\n");
    } else {
        s.push_str(&format!(
            "Nothing to change. Your [context], as smith reads it:\n\n{}\n",
            v.snippet
        ));
    }
    if let Some(note) = &v.maintainers_note {
        s.push_str(&format!("{note}.\n\n"));
    }
    s.push_str(&format!(
        "95% CI: paired bootstrap over sessions ({} resamples, seed {}), as a change of the baseline's total. \
         tied: the interval overlaps the chosen (else the best) config's. loss: {} outside --max-loss {}.\n",
        v.bootstrap.resamples, v.bootstrap.seed, v.loss_measure, v.max_loss
    ));
    s
}

fn evidence_table(v: &Verdict) -> crate::screen::Table {
    let obj = v.objective;
    let mut table = crate::format::table(vec![
        "config".to_string(),
        String::new(),
        "smith accepts".to_string(),
        obj.to_string(),
        format!("Δ {obj}"),
        "95% CI".to_string(),
        v.loss_measure.to_string(),
        format!("Δ {}", v.loss_measure),
        "95% CI".to_string(),
    ]);
    let value = |x: f64| recommend::amount(obj, x);
    for e in &v.evidence {
        let marks = marks(e);
        let cells = vec![
            Cell::new(&e.label),
            Cell::new(marks.join(" ")),
            Cell::new(if e.accepted { "yes" } else { "no" }),
            Cell::new(value(e.objective)).set_alignment(CellAlignment::Right),
            Cell::new(e.objective_change_text()).set_alignment(CellAlignment::Right),
            Cell::new(e.objective_interval_text()).set_alignment(CellAlignment::Right),
            Cell::new(format!("{:.0}", e.loss)).set_alignment(CellAlignment::Right),
            Cell::new(e.loss_change_text()).set_alignment(CellAlignment::Right),
            Cell::new(e.loss_interval_text()).set_alignment(CellAlignment::Right),
        ];
        table.add_row(cells);
    }
    table
}

fn marks(e: &Evidence) -> Vec<&'static str> {
    let mut m = Vec::new();
    if e.baseline {
        m.push("baseline");
    }
    if e.chosen {
        m.push("chosen");
    }
    if e.tied {
        m.push("tied");
    }
    if !e.baseline && !e.loss_ok {
        m.push("loss");
    }
    m
}
