//! The parts of a [`super::job::Job`] for sweeps that outgrow one process:
//! a shard (take one shard of the sessions, write Hive-partitioned rows)
//! and resuming (journal finished sessions, continue after a kill).
//!
//! Shard K of N writes, into the `--out` folder every shard shares:
//!
//! - `sessions/shard=K/part-0.parquet`: its rows, the columns of
//!   `sessions.parquet` plus `ordinal`, the session's position in the whole
//!   sweep (every shard lists all sessions in the same order before keeping
//!   its own). A Hive partition: polars, DuckDB, Spark and Arrow read the
//!   folder as one table with a `shard` column.
//! - `summaries/shard=K/summary.json`: the shard's own `summary.json`, plus
//!   a `shard` object saying which shard it is, how many sessions the whole
//!   sweep lists, the ordinals of its unreadable sessions, and the grid,
//!   policies and prices as text so the merge builds the same configs.
//!
//! [`super::merge`] reads them back into the outputs of one sweep.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{anyhow, Context, Result};
use polars::prelude::{Column, ParquetCompression, ParquetWriter};

use super::aggregate::ConfigSummary;
use super::columns::Col;
use super::grid::{self, Grid, GridSpec, Knob};
use super::journal::{self, Journal, Manifest, Opened};
use super::plan::Plan;
use super::run::{self, Options, Sweep};
use super::shard::{self, Shard};
use super::summary::{Ordered, Rebuild, ShardRecord};
use super::tables::{self, SummaryInput, SweepCounts};
use crate::cost::Prices;
use crate::policy::Setup;
use crate::transcript::SessionRef;

/// The folder of the shards' rows, one Hive partition per shard.
pub(crate) const SESSIONS_DIR: &str = "sessions";
/// The folder of the shards' summaries.
pub(crate) const SUMMARIES_DIR: &str = "summaries";
/// The one part file of a shard.
pub(crate) const PART_FILE: &str = "part-0.parquet";
/// The column giving a row's session's position in the whole sweep.
pub(crate) const ORDINAL: Col = Col::Ordinal;

/// `OUT/sessions/shard=K/part-0.parquet`.
pub(crate) fn part_path(out: &Path, shard: Shard) -> PathBuf {
    out.join(SESSIONS_DIR)
        .join(format!("shard={}", shard.index))
        .join(PART_FILE)
}

/// `OUT/summaries/shard=K/summary.json`.
pub(crate) fn summary_path(out: &Path, shard: Shard) -> PathBuf {
    out.join(SUMMARIES_DIR)
        .join(format!("shard={}", shard.index))
        .join(super::SUMMARY_FILE)
}

/// `--shard`, from the flag and the environment.
pub(crate) fn shard_of(flag: Option<&str>) -> Result<Option<Shard>> {
    flag.map(|text| Shard::parse(text, &|k| std::env::var(k).ok()))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--shard: {e}"))
}

/// The sessions of `refs` in `shard` (all of them without one), with each
/// one's position among all of `refs`. Each session's key is taken against
/// the first of `paths` that is a directory holding it (see
/// [`shard::key`]).
pub(crate) fn take_shard(
    paths: &[String],
    refs: Vec<SessionRef>,
    shard: Option<Shard>,
) -> (Vec<SessionRef>, Vec<usize>) {
    let Some(shard) = shard else {
        let ordinals = (0..refs.len()).collect();
        return (refs, ordinals);
    };
    let dirs: Vec<&Path> = paths.iter().map(Path::new).filter(|p| p.is_dir()).collect();
    let mut taken = Vec::new();
    let mut ordinals = Vec::new();
    for (i, r) in refs.into_iter().enumerate() {
        let spec = dirs
            .iter()
            .find(|d| r.transcript.starts_with(d))
            .copied()
            .unwrap_or(r.transcript.as_path());
        if shard.takes(&shard::key(spec, &r.transcript)) {
            taken.push(r);
            ordinals.push(i);
        }
    }
    (taken, ordinals)
}

/// Opens (or starts) the journal of a `--resume` sweep into `out` and says
/// what it found; a journal that cannot be opened is the error.
pub(crate) fn open_journal(
    out: &Path,
    shard: Option<Shard>,
    refs: &[SessionRef],
    setups: &[Setup],
    prices: &Prices,
    cost: &crate::cost::session::Settings,
) -> Result<Opened> {
    let dir = journal::dir_for(out, shard);
    let mut manifest = Manifest::new(refs, setups, prices, shard);
    manifest.cost = cost.describe();
    let opened = Journal::open(&dir, &manifest, refs, setups.len())?;
    if opened.continued {
        crate::note!(
            "resuming: {} of {} sessions were finished before; replaying the other {}{}",
            opened.recovered,
            refs.len(),
            refs.len() - opened.recovered,
            match opened.dropped_bytes {
                0 => String::new(),
                n => format!(" (dropped {n} bytes of a record cut short)"),
            }
        );
    } else {
        crate::note!(
            "journal of finished sessions: {} (an interrupted sweep continues with --resume)",
            opened.journal.path().display()
        );
    }
    Ok(opened)
}

/// Runs the sweep, through the journal when there is one. `pause_after`
/// is `--test-pause-after`: see [`crate::interrupt::pause_for_tests`].
pub(crate) fn run_sweep(
    refs: &[SessionRef],
    setups: &[Setup],
    options: &Options,
    cost: &crate::cost::session::Settings,
    journal: Option<&mut Opened>,
    pause_after: Option<usize>,
) -> Result<Sweep> {
    let finished = AtomicUsize::new(0);
    let pause = |n: usize| {
        if pause_after == Some(n) {
            crate::interrupt::pause_for_tests(&format!(
                "paused after {n} sessions (--test-pause-after): waiting for Ctrl-C or the end of stdin"
            ));
        }
    };
    pause(0);
    let finished_one = || pause(finished.fetch_add(1, Ordering::SeqCst) + 1);
    match journal {
        None => run::run_priced(refs, setups, options, Some(cost), Vec::new(), &|_, _, _| {
            finished_one();
            Ok(())
        }),
        Some(opened) => {
            let done = std::mem::take(&mut opened.done);
            let j = &opened.journal;
            let sweep = run::run_priced(
                refs,
                setups,
                options,
                Some(cost),
                done,
                &|i, info, facts| {
                    j.append(i, info, facts)?;
                    finished_one();
                    Ok(())
                },
            )?;
            j.sync()?;
            Ok(sweep)
        }
    }
}

/// What an interrupted sweep with a journal keeps.
pub(crate) fn interrupted_note(journal: Option<&Opened>, sweep: &Sweep) -> String {
    match journal {
        Some(o) => format!(
            "; the rows of {} sessions are kept in {}: run the same command with --resume to continue",
            sweep.sessions.len(),
            o.journal.path().display()
        ),
        None => String::new(),
    }
}

/// Writes a shard's outputs into `out`: `refs` are the shard's sessions,
/// `ordinals` their positions among the `listed` sessions of the sweep.
#[allow(clippy::too_many_arguments)]
pub(crate) fn write_shard(
    out: &Path,
    shard: Shard,
    refs: &[SessionRef],
    ordinals: &[usize],
    listed: usize,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    input: &SummaryInput,
) -> Result<()> {
    // Each session is read or unreadable; both lists name it by transcript.
    let at: HashMap<&Path, usize> = refs
        .iter()
        .zip(ordinals)
        .map(|(r, &o)| (r.transcript.as_path(), o))
        .collect();
    let ordinal = |p: &Path| {
        at.get(p).copied().ok_or_else(|| {
            anyhow!(
                "{}: replayed but not among the shard's sessions",
                p.display()
            )
        })
    };
    let read: Vec<usize> = sweep
        .sessions
        .iter()
        .map(|s| ordinal(&s.path))
        .collect::<Result<_>>()?;
    let skipped: Vec<usize> = sweep
        .unreadable
        .iter()
        .map(|u| ordinal(&u.path))
        .collect::<Result<_>>()?;
    let written = write_shard_files(
        out,
        &ShardPlace {
            shard,
            ordinals: &read,
            skipped_ordinals: &skipped,
            listed,
        },
        sweep,
        summaries,
        input,
    )?;
    let names: Vec<String> = written
        .iter()
        .filter_map(|p| p.strip_prefix(out).ok().map(|p| p.display().to_string()))
        .collect();
    crate::note!(
        "shard {shard}: wrote {} into {}; once every shard is done, `smith-calibrate merge {}` writes the sweep's outputs",
        names.join(", "),
        out.display(),
        out.display()
    );
    Ok(())
}

/// The grid, policies and prices as text that parses back to the same
/// values (Rust prints the shortest decimal that reads back exactly).
pub(crate) fn rebuild_record(grid: &Grid, plan: &Plan, prices: &Prices) -> Rebuild {
    fn list<T: ToString>(v: &[T]) -> String {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }
    // A knob's word (`own`, `learn`) as the word: its number is refused.
    let knob_list = |k: Knob, v: &[f64]| {
        v.iter()
            .map(|x| k.word(*x).map_or_else(|| x.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(",")
    };
    let head = grid.configs[Grid::BASELINE];
    let default_head = grid::default_baseline(&grid_spec_of(grid));
    Rebuild {
        knobs: Ordered(
            grid.axes
                .iter()
                .map(|(k, v)| (k.flag().to_string(), knob_list(*k, v)))
                .collect(),
        ),
        policies: plan.policies.iter().map(|p| p.to_string()).collect(),
        policy_knobs: Ordered(
            plan.policy_axes
                .iter()
                .map(|(k, v)| (k.flag().to_string(), list(v)))
                .collect(),
        ),
        prices: format!(
            "{},{},{}",
            prices.input, prices.cache_write, prices.cache_read
        ),
        baseline: plan.baseline,
        smith_baseline: (default_head != head).then_some(head),
    }
}

/// The spec that builds `grid`'s axes again.
fn grid_spec_of(grid: &Grid) -> GridSpec {
    let mut spec = GridSpec::default();
    for (k, v) in &grid.axes {
        spec.put(*k, v.clone());
    }
    spec
}

/// Where the shard's sessions stand in the whole sweep.
pub struct ShardPlace<'a> {
    pub shard: Shard,
    /// The position in the whole sweep of each of `sweep.sessions`.
    pub ordinals: &'a [usize],
    /// The position of each of `sweep.unreadable`.
    pub skipped_ordinals: &'a [usize],
    /// Sessions the whole sweep lists, over all shards.
    pub listed: usize,
}

/// Writes a shard's part file and summary into `out`, each atomically, and
/// returns their paths.
pub fn write_shard_files(
    out: &Path,
    place: &ShardPlace,
    sweep: &Sweep,
    summaries: &[ConfigSummary],
    input: &SummaryInput,
) -> Result<Vec<PathBuf>> {
    let mut frame = tables::sessions_table(sweep, input.prices)
        .to_frame()
        .context("cannot lay out the shard's rows")?;
    let ordinals: Vec<i64> = sweep
        .rows
        .iter()
        .map(|r| place.ordinals[r.session as usize] as i64)
        .collect();
    frame
        .with_column(Column::new(ORDINAL.name().into(), ordinals))
        .context("cannot add the ordinal column")?;
    let part = part_path(out, place.shard);
    let mut summary = tables::summary(&SweepCounts::of(sweep), summaries, input);
    summary.shard = Some(ShardRecord {
        index: place.shard.index,
        count: place.shard.count,
        assignment:
            "FNV-1a 64 of the transcript's path relative to its PATH argument, modulo count, plus 1"
                .to_string(),
        listed: place.listed,
        skipped_ordinals: place.skipped_ordinals.iter().map(|&o| o as u64).collect(),
        rebuild: rebuild_record(input.grid, input.plan, input.prices),
    });
    let summary_file = summary_path(out, place.shard);
    for path in [&part, &summary_file] {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{}: cannot create", dir.display()))?;
        }
    }
    crate::output::write_atomic_with(&part, |w| {
        ParquetWriter::new(w)
            .with_compression(ParquetCompression::Snappy)
            .finish(&mut frame)
            .map(drop)
    })?;
    let mut text = serde_json::to_vec_pretty(&summary)?;
    text.push(b'\n');
    crate::output::write_atomic(&summary_file, &text)?;
    Ok(vec![part, summary_file])
}
