//! `report`: HTML and PNG charts from a sweep's output folder.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::report::{self, Loss, Metric, Selection, SweepOutput};

use super::{nothing_read, usage};

/// Draw a sweep's results: one self-contained index.html and a PNG per chart.
///
/// Reads configs.parquet, sessions.parquet and summary.json from the folder
/// `sweep --out` wrote, replays the chosen sessions again for their context
/// curves, and writes the report folder. The page has no scripts and loads
/// nothing: it opens offline from disk and prints.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  smith-calibrate sweep datasets/sessions --compact-at 0.7,0.8,0.9 --out results/ds
  smith-calibrate report results/ds --out reports/ds
  smith-calibrate report results/ds --metric results_mangled --session fix-parser
  smith-calibrate report results/ds --config 3      # the third-ranked config, not the best
  smith-calibrate sweep datasets/sessions --compact-at 0.7,0.8,0.9 --report reports/ds  # both
  smith-calibrate sweep datasets/sessions --policy smith,masking,codex --out results/pol
  smith-calibrate report results/pol --config codex --loss results_mangled
  smith-calibrate report results/sharded   # shards of `sweep --shard K/N`: merged first

The report folder holds index.html (open it in a browser) and cost-loss.png,
heatmap.png, stages.png, distribution.png and context-<session>.png; a sweep
of several policies adds policies.png and a table of each policy's best
config. Every config is replayed under its own policy.")]
pub(crate) struct ReportArgs {
    /// The folder `smith-calibrate sweep --out` wrote
    #[arg(value_name = "SWEEP_OUT_DIR")]
    pub(crate) dir: PathBuf,
    /// Where to write index.html and the PNGs (created if missing)
    /// [default: SWEEP_OUT_DIR itself, beside the data files, as `sweep
    /// --report` writes them]
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// A session to chart request by request: its label as in sessions.csv,
    /// or its transcript path; repeat for more [default: the 3 whose tokens
    /// sent changed most]
    #[arg(long = "session", value_name = "LABEL")]
    pub(crate) sessions: Vec<String>,
    /// The figure the heatmap shows; tokens_sent also puts tokens instead of
    /// price on the cost axis
    #[arg(long, value_enum, default_value_t = Metric::Price)]
    pub(crate) metric: Metric,
    /// The config compared with the baseline: a rank (1 = best), a config
    /// label, or a policy (its best config) [default: the verdict's config,
    /// else 1]
    #[arg(long, value_name = "RANK|LABEL|POLICY")]
    pub(crate) config: Option<String>,
    /// The loss the cost-against-loss chart and the distribution count:
    /// results cut or stubbed, results lost while still current that a
    /// later message used (the verdict's loss measure), results a later
    /// message needed again current or not, or results shortened or
    /// removed by any means [default: still_needed]
    #[arg(long, value_enum)]
    pub(crate) loss: Option<Loss>,
    /// Compare with this config instead of the sweep's baseline: `recorded`
    /// (the agents' own run), `defaults` (smith's default config), a
    /// config's label as configs.csv has it, or its index; every change,
    /// interval, rank and the verdict are worked out again from the session
    /// rows [default: the sweep's baseline; with this flag the report goes
    /// to SWEEP_OUT_DIR/baseline-<config>/ unless --out is given]
    #[arg(long, value_name = "recorded|defaults|LABEL")]
    pub(crate) baseline: Option<String>,
    /// Also write a page per session named under "Compactions that went
    /// wrong" into sessions/ beside index.html (the chat, the timeline, each
    /// compaction's ledger) and link every request named there to it, e.g.
    /// report results/ --session-pages
    #[arg(long)]
    pub(crate) session_pages: bool,
}

pub(crate) fn run(args: ReportArgs) -> Result<()> {
    // A folder of shards not merged yet: merge it first, into itself.
    if !args.dir.join(report::data::SUMMARY_FILE).exists()
        && crate::sweep::merge::has_shards(&args.dir)
    {
        let started = std::time::Instant::now();
        let merged = crate::sweep::merge::merge(&args.dir, &crate::recommend::decide_json)
            .map_err(|e| nothing_read(format!("{e:#}")))?;
        merged.write(&args.dir, started)?;
    }
    let mut data = SweepOutput::read(&args.dir).map_err(|e| nothing_read(format!("{e:#}")))?;
    let rebased = match &args.baseline {
        Some(pick) => {
            let base = data
                .config_named(pick)
                .map_err(|e| usage(format!("{e:#}")))?;
            rebase(&mut data, base)?;
            Some(base)
        }
        None => None,
    };
    let mut selection = Selection::new(&data, args.config.as_deref(), &args.sessions)
        .map_err(|e| usage(e.to_string()))?;
    selection.session_pages = args.session_pages;
    let out = args.out.unwrap_or_else(|| match rebased {
        // Beside the sweep's own report, never over it: the data files
        // there keep the sweep's baseline.
        Some(b) => args
            .dir
            .join(format!("baseline-{}", file_safe(&data.configs[b].label))),
        None => args.dir.clone(),
    });
    if out
        .join(crate::transcript::locate::TRANSCRIPT_FILE)
        .exists()
    {
        return Err(usage(format!(
            "--out {}: that is a session directory; write the report somewhere else",
            out.display()
        )));
    }
    let loss = args.loss.unwrap_or(Loss::DEFAULT);
    let spinner = crate::messages::spinner("drawing the report");
    let written = report::write(&data, &selection, args.metric, loss, &out);
    spinner.finish_and_clear();
    let written = written?;
    written.say();
    Ok(())
}

/// `data` compared with config `base`, its verdict decided again by the
/// sweep's rule.
fn rebase(data: &mut SweepOutput, base: usize) -> Result<()> {
    let spinner = crate::messages::spinner("comparing every config with the new baseline");
    let done = data.rebase(base, &crate::recommend::decide_json);
    spinner.finish_and_clear();
    done?;
    crate::note!("compared with {}", data.baseline_name());
    Ok(())
}

/// A config's label as a folder name: letters, digits, `.` and `-` kept,
/// anything else `_`.
fn file_safe(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
