//! The merge that turns a folder of shards (as [`super::dist`] writes
//! them) into the outputs of one sweep.
//!
//! The merge reads every part, orders the rows by (`ordinal`, `config`)
//! (the order one process writes them in), and recomputes every per-config
//! figure from those rows, so `configs.*`, `sessions.*` and `summary.json`
//! come out as one process would have written them; only the timing fields
//! (`elapsed_seconds`: the slowest shard's; `threads`: all shards') differ.

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use polars::prelude::{DataFrame, DataType, IdxCa, IdxSize, ParquetReader, SerReader};

use crate::export::Export;
use crate::policy::{Policy, PolicyKnob};

use super::aggregate::{summarize_values_with, Decide};
use super::bootstrap::Bootstrap;
use super::columns::Col;
use super::dist::{part_path, ORDINAL, SESSIONS_DIR, SUMMARIES_DIR};
use super::figures::{Metric, N};
use super::grid::{self, Grid, GridSpec, Knob};
use super::plan::{self, Plan, PolicySpec};
use super::run::Unreadable;
use super::shard::Shard;
use super::summary::{ShardRecord, Summary};
use super::tables::{self, SummaryInput, SweepCounts};
use crate::cost::PriceError;
use crate::cost::Prices;

/// Whether `dir` holds the outputs of sharded sweeps.
pub(crate) fn has_shards(dir: &Path) -> bool {
    dir.join(SUMMARIES_DIR).is_dir()
}

/// A folder of shards merged: what to write, and how much it held.
pub struct Merged {
    pub export: Export,
    pub shards: u32,
    pub sessions: usize,
    pub rows: usize,
}

impl Merged {
    /// Writes the merged outputs into `out`, each atomically, and says what
    /// was written and how long the merge since `started` took.
    pub(crate) fn write(&self, out: &Path, started: std::time::Instant) -> Result<()> {
        let written = crate::export::write_all(out, &self.export)?;
        let names: Vec<String> = written
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        crate::note!(
            "merged {} shards ({} sessions, {} rows) in {:.1}s: wrote {} into {}",
            self.shards,
            self.sessions,
            self.rows,
            started.elapsed().as_secs_f64(),
            names.join(", "),
            out.display()
        );
        Ok(())
    }
}

/// One shard's summary, read.
struct ShardSummary {
    file: PathBuf,
    /// `K` of the folder `shard=K` it was found in.
    index: u32,
    summary: Summary,
    /// The summary's `shard` object, which a shard's summary always has.
    shard: ShardRecord,
}

/// What reading `path` in `dir` failed for: `dir` is not `folder`.
pub(crate) fn not_the_folder(path: &Path, dir: &Path, folder: &str) -> String {
    format!(
        "{}: cannot read it; is {} {folder}?",
        path.display(),
        dir.display()
    )
}

fn read_summaries(dir: &Path) -> Result<Vec<ShardSummary>> {
    let root = dir.join(SUMMARIES_DIR);
    let entries = std::fs::read_dir(&root)
        .with_context(|| not_the_folder(&root, dir, "the --out folder of `sweep --shard K/N`"))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("{}: cannot read", root.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(index) = name
            .strip_prefix("shard=")
            .and_then(|k| k.parse::<u32>().ok())
        else {
            continue;
        };
        let file = entry.path().join(super::SUMMARY_FILE);
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            // A shard still running (or killed) has its folder but no summary.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => bail!("{}: cannot read: {e}", file.display()),
        };
        let mut summary: Summary = serde_json::from_str(&text).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => anyhow!(
                "{}: {e}; not the summary of a shard this version wrote",
                file.display()
            ),
            _ => anyhow::Error::new(e).context(format!("{}: not valid JSON", file.display())),
        })?;
        let shard = summary.shard.take().ok_or_else(|| {
            anyhow!(
                "{}: no /shard; not the summary of a shard this version wrote",
                file.display()
            )
        })?;
        out.push(ShardSummary {
            file,
            index,
            summary,
            shard,
        });
    }
    out.sort_by_key(|s| s.index);
    Ok(out)
}

/// What two shards of one sweep must agree on, named by where it is in
/// the summary.
type Agreement = (&'static str, fn(&ShardSummary, &ShardSummary) -> bool);

const SAME: [Agreement; 7] = [
    ("/shard/count", |a, b| a.shard.count == b.shard.count),
    ("/shard/listed", |a, b| a.shard.listed == b.shard.listed),
    ("/shard/rebuild", |a, b| a.shard.rebuild == b.shard.rebuild),
    ("/paths", |a, b| a.summary.paths == b.summary.paths),
    ("/grid/file", |a, b| {
        a.summary.grid.file == b.summary.grid.file
    }),
    ("/rank_by", |a, b| a.summary.rank_by == b.summary.rank_by),
    ("/tool", |a, b| a.summary.tool == b.summary.tool),
];

/// The grid, plan and prices a shard's summary describes.
fn rebuild(s: &ShardSummary) -> Result<(Grid, Plan, Prices)> {
    let bad = |what: &dyn std::fmt::Display| anyhow!("{}: {what}", s.file.display());
    let r = &s.shard.rebuild;
    let mut spec = GridSpec::default();
    for (flag, values) in &r.knobs.0 {
        let knob = Knob::from_key(flag).ok_or_else(|| bad(&format!("no knob {flag}")))?;
        spec.set(knob, values).map_err(|e| bad(&e))?;
    }
    let grid = match r.smith_baseline {
        Some(head) => grid::build_around(&spec, usize::MAX, head),
        None => grid::build(&spec, usize::MAX),
    }
    .map_err(|e| bad(&e))?;
    let mut policies = PolicySpec::default();
    policies.policies = r
        .policies
        .iter()
        .map(|p| p.parse::<Policy>().map_err(|e| bad(&e)))
        .collect::<Result<_>>()?;
    for (flag, values) in &r.policy_knobs.0 {
        let knob = PolicyKnob::ALL
            .into_iter()
            .find(|k| k.flag() == flag)
            .ok_or_else(|| bad(&format!("no policy knob {flag}")))?;
        policies.set(knob, values).map_err(|e| bad(&e))?;
    }
    let plan = plan::build(&grid, &policies, r.baseline, usize::MAX).map_err(|e| bad(&e))?;
    let prices: Prices = r.prices.parse().map_err(|e: PriceError| bad(&e))?;
    Ok((grid, plan, prices))
}

fn read_part(path: &Path) -> Result<DataFrame> {
    let file = File::open(path).with_context(|| {
        format!(
            "{}: cannot open the shard's rows; its summary is there, so the folder was changed since: run the shard again",
            path.display()
        )
    })?;
    ParquetReader::new(file)
        .finish()
        .with_context(|| format!("{}: not a Parquet file a shard wrote", path.display()))
}

fn floats(frame: &DataFrame, what: &str, name: &str) -> Result<Vec<f64>> {
    let column = frame
        .column(name)
        .map_err(|_| anyhow!("{what}: no column {name}"))?
        .cast(&DataType::Float64)
        .with_context(|| format!("{what}: column {name} is not numeric"))?;
    let values = column
        .f64()
        .with_context(|| format!("{what}: column {name} is not numeric"))?;
    values
        .into_iter()
        .enumerate()
        .map(|(row, v)| match v {
            Some(v) => Ok(v),
            // A session's dollars are null where its model is in no price
            // table: unknown, as the sweep had them.
            None if Metric::from_name(name).is_some_and(Metric::is_price) => Ok(f64::NAN),
            None => Err(anyhow!("{what}: row {row}: {name} is missing")),
        })
        .collect()
}

/// Merges the shards in `dir` into the outputs of one sweep, the verdict
/// made by `decide` on every shard's sessions. Refuses a folder where a
/// shard is missing, or whose shards ran different sweeps.
pub fn merge(dir: &Path, decide: Decide) -> Result<Merged> {
    let shards = read_summaries(dir)?;
    let count = check_shards(dir, &shards)?;
    let first = &shards[0];
    let (grid, plan, prices) = rebuild(first)?;
    let n_configs = plan.setups.len();
    let rank_by = first.summary.rank_by;

    let mut frame = read_rows(dir, &shards, count, n_configs)?;
    let what = format!("{}/{SESSIONS_DIR}", dir.display());
    let labels: Vec<String> = plan.setups.iter().map(|s| s.label()).collect();
    check_rows(&mut frame, &what, &labels)?;
    let rows = frame.height();
    let n_sessions = rows.checked_div(n_configs).unwrap_or(0);
    let columns: Vec<Vec<f64>> = Metric::ALL
        .into_iter()
        .map(|m| floats(&frame, &what, m.name()))
        .collect::<Result<_>>()?;
    let value = |s: usize, c: usize| -> [f64; N] {
        let r = s * n_configs + c;
        std::array::from_fn(|i| columns[i][r])
    };
    let (mut summaries, per) = summarize_values_with(
        &plan.setups,
        n_sessions,
        &value,
        rank_by,
        &Bootstrap::default(),
    );
    let verdict = decide(&mut summaries, &per, rank_by);

    let totals = ShardTotals::of(&shards)?;
    let listed = first.shard.listed;
    if n_sessions + totals.unreadable.len() != listed {
        bail!(
            "{}: the shards hold {n_sessions} sessions and {} unreadable ones, but the sweep lists {listed}: a shard was written with another list of sessions; run the shards again",
            dir.display(),
            totals.unreadable.len()
        );
    }
    if n_sessions == 0 {
        bail!(
            "{}: none of the {listed} sessions could be read in any shard",
            dir.display()
        );
    }
    let counts = SweepCounts {
        sessions: n_sessions,
        unreadable: &totals.unreadable,
        lines_skipped: totals.lines_skipped as usize,
        bytes: totals.bytes,
        elapsed_seconds: totals.elapsed,
        threads: totals.threads as usize,
        configs: n_configs,
        thrash_window: first.summary.thrash_window,
        calibration: totals.calibration,
    };
    let input = SummaryInput {
        paths: &first.summary.paths,
        grid_file: first.summary.grid.file.as_deref(),
        grid: &grid,
        plan: &plan,
        prices: &prices,
        // Every shard planned every session, so each says the same.
        prices_used: &first.summary.prices.used,
        rank_by,
    };
    let summary = tables::summary(&counts, &summaries, &input)
        .to_value()
        .context("cannot lay out the summary")?;
    let export = Export {
        sessions: frame,
        configs: tables::configs_table(&summaries)
            .to_frame()
            .context("cannot lay out the configs")?,
        summary,
        verdict,
    };
    Ok(Merged {
        export,
        shards: count,
        sessions: n_sessions,
        rows,
    })
}

/// That the shards are all of one sweep, each in its own folder, none
/// missing and none beyond the count; returns the count.
fn check_shards(dir: &Path, shards: &[ShardSummary]) -> Result<u32> {
    let Some(first) = shards.first() else {
        bail!(
            "{}: no shard has finished (no {SUMMARIES_DIR}/shard=K/summary.json)",
            dir.display()
        );
    };
    let count = first.shard.count;
    for s in shards {
        for (pointer, agree) in SAME {
            if !agree(s, first) {
                bail!(
                    "{} and {} disagree on {pointer}: they are shards of different sweeps; put each sweep's shards in a folder of its own",
                    first.file.display(),
                    s.file.display()
                );
            }
        }
        if s.shard.index != s.index {
            bail!(
                "{}: the summary of shard {} is in the folder of shard {}",
                s.file.display(),
                s.shard.index,
                s.index
            );
        }
    }
    let present: Vec<u32> = shards.iter().map(|s| s.index).collect();
    let missing: Vec<String> = (1..=count)
        .filter(|k| !present.contains(k))
        .map(|k| k.to_string())
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: shard{} {} of {count} {} not finished (no {SUMMARIES_DIR}/shard=K/summary.json); run {}, then merge again",
            dir.display(),
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", "),
            if missing.len() > 1 { "have" } else { "has" },
            if missing.len() > 1 { "them" } else { "it" },
        );
    }
    if let Some(extra) = present.iter().find(|&&k| k > count) {
        bail!(
            "{}: shard {extra} is beyond the {count} shards of the sweep",
            dir.display()
        );
    }
    Ok(count)
}

/// Every shard's rows in one frame, ordered by (`ordinal`, `config`) as one
/// process writes them, without the ordinal.
fn read_rows(
    dir: &Path,
    shards: &[ShardSummary],
    count: u32,
    n_configs: usize,
) -> Result<DataFrame> {
    let path_of = |s: &ShardSummary| {
        part_path(
            dir,
            Shard {
                index: s.index,
                count,
            },
        )
    };
    let mut frame: Option<DataFrame> = None;
    for s in shards {
        let path = path_of(s);
        let part = read_part(&path)?;
        let expected = s.summary.sessions * n_configs;
        if part.height() != expected {
            bail!(
                "{}: {} rows, but its summary counts {expected} ({} sessions × {n_configs} configs): the folder was changed since; run the shard again",
                path.display(),
                part.height(),
                s.summary.sessions
            );
        }
        match &mut frame {
            None => frame = Some(part),
            Some(f) => {
                f.vstack_mut(&part).with_context(|| {
                    format!(
                        "{}: its columns differ from the other shards'",
                        path.display()
                    )
                })?;
            }
        }
    }
    let frame = frame.ok_or_else(|| anyhow!("{}: no shard", dir.display()))?;
    let what = format!("{}/{SESSIONS_DIR}", dir.display());
    let ordinals = floats(&frame, &what, ORDINAL.name())?;
    let configs = floats(&frame, &what, Col::Config.name())?;
    let mut order: Vec<usize> = (0..frame.height()).collect();
    order.sort_by(|&a, &b| {
        ordinals[a]
            .total_cmp(&ordinals[b])
            .then(configs[a].total_cmp(&configs[b]))
    });
    let idx: Vec<IdxSize> = order.iter().map(|&i| i as IdxSize).collect();
    let mut frame = frame
        .take(&IdxCa::from_vec("index".into(), idx))
        .context("cannot order the merged rows")?;
    frame.as_single_chunk_par();
    Ok(frame)
}

/// That the ordered rows are one per config of each session, in grid
/// order, under the labels of the grid the summaries describe; then drops
/// the ordinal.
fn check_rows(frame: &mut DataFrame, what: &str, labels: &[String]) -> Result<()> {
    let n_configs = labels.len().max(1);
    let ordinals = floats(frame, what, ORDINAL.name())?;
    let configs = floats(frame, what, Col::Config.name())?;
    let row_labels = frame
        .column(Col::ConfigLabel.name())
        .ok()
        .and_then(|c| c.str().ok().cloned())
        .ok_or_else(|| anyhow!("{what}: no column {}", Col::ConfigLabel.name()))?;
    for r in 0..frame.height() {
        let c = r % n_configs;
        let first_of_session = (r / n_configs) * n_configs;
        if configs[r] != c as f64 || ordinals[r] != ordinals[first_of_session] {
            bail!(
                "{what}: the rows of session {} are not one per config: a shard was written twice or by another sweep; run the shards again",
                ordinals[r]
            );
        }
        if row_labels.get(r) != Some(labels[c].as_str()) {
            bail!(
                "{what}: config {c} is {:?} in the rows but {:?} in the grid the summaries describe",
                row_labels.get(r),
                labels[c]
            );
        }
    }
    *frame = frame
        .drop(ORDINAL.name())
        .context("cannot drop the ordinal column")?;
    Ok(())
}

/// The counts of the shards' summaries added up: the unreadable sessions
/// in the whole sweep's order, lines and bytes read, and the timing fields
/// (the slowest shard's time, every shard's threads).
struct ShardTotals {
    unreadable: Vec<Unreadable>,
    lines_skipped: u64,
    bytes: u64,
    elapsed: f64,
    threads: u64,
    calibration: Option<super::summary::CalibrationRecord>,
}

impl ShardTotals {
    fn of(shards: &[ShardSummary]) -> Result<ShardTotals> {
        let mut unreadable: Vec<(u64, Unreadable)> = Vec::new();
        let mut t = ShardTotals {
            unreadable: Vec::new(),
            lines_skipped: 0,
            bytes: 0,
            elapsed: 0.0,
            threads: 0,
            calibration: None,
        };
        for s in shards {
            let skipped = &s.summary.skipped;
            let at = &s.shard.skipped_ordinals;
            if skipped.len() != at.len() {
                bail!(
                    "{}: skipped and shard.skipped_ordinals differ in length",
                    s.file.display()
                );
            }
            for (u, &o) in skipped.iter().zip(at) {
                unreadable.push((o, u.clone()));
            }
            t.lines_skipped += s.summary.lines_skipped as u64;
            t.bytes += s.summary.bytes;
            t.elapsed = t.elapsed.max(s.summary.elapsed_seconds);
            t.threads += s.summary.threads as u64;
            t.calibration =
                super::summary::CalibrationRecord::add(t.calibration, s.summary.calibration);
        }
        unreadable.sort_by_key(|(o, _)| *o);
        t.unreadable = unreadable.into_iter().map(|(_, u)| u).collect();
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;
    use crate::policy::Setup;
    use crate::replay::every_field;
    use crate::sweep::aggregate::{summarize, ConfigSummary, PerSession};
    use crate::sweep::dist::{write_shard_files, ShardPlace};
    use crate::sweep::figures;
    use crate::sweep::run::{Row, SessionInfo, Sweep};

    const SESSIONS: usize = 5;

    fn info(i: usize) -> SessionInfo {
        SessionInfo {
            label: format!("session-{i}"),
            path: PathBuf::from(format!("/corpus/s{i}/transcript.jsonl")),
            bytes: 1_000 + i as u64,
            lines: 50 + i,
            lines_skipped: i % 2,
            messages: 40 + i,
        }
    }

    /// The sessions `take` of a sweep over [`SESSIONS`] sessions and
    /// `configs`, each row's facts set in every field and different from
    /// every other row's; and unreadable ones where `broken` says.
    fn sweep_of(configs: &[Setup], take: &[usize], broken: &[usize]) -> Sweep {
        let mut rows = Vec::new();
        for (s, &i) in take.iter().enumerate() {
            for c in 0..configs.len() {
                rows.push(Row {
                    session: s as u32,
                    config: c as u32,
                    facts: every_field::set((i * configs.len() + c) as u64),
                });
            }
        }
        Sweep {
            sessions: take.iter().map(|&i| info(i)).collect(),
            configs: configs.to_vec(),
            rows,
            unreadable: broken
                .iter()
                .map(|&i| Unreadable {
                    path: PathBuf::from(format!("/corpus/broken{i}/transcript.jsonl")),
                    reason: "not json".into(),
                })
                .collect(),
            elapsed: Duration::from_millis(take.len() as u64),
            threads: 1,
        }
    }

    /// Every file `--out` holds, summary.json without its timing lines.
    fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let mut bytes = std::fs::read(e.path()).unwrap();
                if name == crate::sweep::SUMMARY_FILE {
                    let text = String::from_utf8(bytes).unwrap();
                    bytes = crate::sweep::summary::untimed(&text).into_bytes();
                }
                (name, bytes)
            })
            .collect()
    }

    /// Rows whose every field and every figure is set, written by two
    /// shards and merged, give the files one process writes, byte for
    /// byte; every figure of [`Metric::ALL`] is a column of the merged rows
    /// with the value of the facts it came from.
    #[test]
    fn a_merge_keeps_every_figure_of_every_row() {
        let fixture = tables::Fixture::new(&[Policy::Smith, Policy::Masking]);
        let (plan, prices, input) = (&fixture.plan, &fixture.prices, fixture.input());
        let rank_by = input.rank_by;
        let configs = &plan.setups;
        assert!(configs.len() >= 3, "{}", configs.len());
        let tmp = tempfile::tempdir().unwrap();

        // What the verdict is decided on, as a verdict: the same sessions'
        // changes, in the same order, however the sweep was run.
        let decide = |_: &mut [ConfigSummary], per: &PerSession, by: Metric| serde_json::json!({"by": by.name(), "baseline": per.baseline, "changes": per.changes});
        let all: Vec<usize> = (0..SESSIONS).collect();
        let single = sweep_of(configs, &all, &[SESSIONS]);
        let value = |s: usize, c: usize| figures::values(&single.row(s, c).facts, prices);
        let (mut summaries, per) = crate::sweep::aggregate::summarize_values_with(
            configs,
            SESSIONS,
            &value,
            rank_by,
            &Bootstrap::default(),
        );
        let verdict = decide(&mut summaries, &per, rank_by);
        let export = tables::export(&single, &summaries, prices, &input, verdict).unwrap();
        let one = tmp.path().join("one");
        crate::export::write_all(&one, &export).unwrap();

        let sharded = tmp.path().join("sharded");
        let listed = SESSIONS + 1;
        for (k, take, broken) in [(1, vec![0, 2, 4], vec![]), (2, vec![1, 3], vec![SESSIONS])] {
            let part = sweep_of(configs, &take, &broken);
            let summaries = summarize(&part, prices, rank_by);
            let place = ShardPlace {
                shard: Shard::new(k, 2).unwrap(),
                ordinals: &take,
                skipped_ordinals: &broken,
                listed,
            };
            write_shard_files(&sharded, &place, &part, &summaries, &input).unwrap();
        }
        let merged = merge(&sharded, &decide).unwrap();
        assert_eq!((merged.shards, merged.sessions), (2, SESSIONS));

        for m in Metric::ALL {
            let column = floats(&merged.export.sessions, "merged", m.name()).unwrap();
            for (r, row) in single.rows.iter().enumerate() {
                let want = figures::values(&row.facts, prices)[m.index()];
                assert!(want != 0.0, "{m} is 0 in the rows under test: set it");
                assert!(
                    column[r] == want,
                    "row {r}: {m} is {want} in one process, {} merged",
                    column[r]
                );
            }
        }
        crate::export::write_all(&sharded, &merged.export).unwrap();
        let (a, b) = (files(&one), files(&sharded));
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
        for (name, bytes) in &a {
            assert!(bytes == &b[name], "{name} differs once merged");
        }
    }
}
