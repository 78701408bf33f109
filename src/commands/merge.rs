//! `merge`: the shards of a sweep, joined into the outputs of one sweep.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::sweep::merge;

use super::nothing_read;

/// Join the outputs of `sweep --shard K/N` into those of one sweep.
///
/// Reads DIR/sessions/shard=*/part-0.parquet and
/// DIR/summaries/shard=*/summary.json, checks that every shard 1..N is there
/// and that all ran the same sweep, orders the rows as one process would
/// and recomputes every per-config figure from them. Writes
/// sessions.{parquet,csv}, configs.{parquet,csv} and summary.json, each
/// atomically, identical to an unsharded sweep's except the timing fields
/// of summary.json (elapsed_seconds: the slowest shard's; threads: all
/// shards').
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  for k in 1 2 3 4; do smith-calibrate sweep corpus/ --shard $k/4 --out results/ & done; wait
  smith-calibrate merge results/
  smith-calibrate merge results/ --out merged/ && smith-calibrate report merged/

`report DIR` on a folder of shards that was not merged yet merges it first.
The partition folder is also plain Hive-partitioned Parquet: see docs/guide.md
for the same merge in polars, DuckDB and Spark.")]
pub(crate) struct MergeArgs {
    /// The --out folder the shards wrote into
    #[arg(value_name = "DIR")]
    pub(crate) dir: PathBuf,
    /// Where to write the merged outputs (created if missing) [default: DIR]
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

pub(crate) fn run(args: MergeArgs) -> Result<()> {
    let out = args.out.unwrap_or_else(|| args.dir.clone());
    merge_into(&args.dir, &out)
}

/// Merges the shards of `dir` into `out` and says what was written.
fn merge_into(dir: &std::path::Path, out: &std::path::Path) -> Result<()> {
    let started = std::time::Instant::now();
    let merged = merge::merge(dir, &crate::recommend::decide_json)
        .map_err(|e| nothing_read(format!("{e:#}")))?;
    merged.write(out, started)
}
