//! The cost of merging a sharded sweep: the time and peak memory
//! of `merge` over 100 shards, so the cost is known before anyone relies on
//! it.
//!
//! Run with `cargo bench --bench merge` (release). It generates a corpus
//! with `smith_calibrate::synth`, sweeps it once in this process under a
//! grid of about 100 configs, splits the sessions into the shards
//! `--shard K/100` would give them (the same hash) and writes each shard's
//! part file and summary with the same code the command uses; then it
//! times the merge (reading the 100 parts, ordering the rows, recomputing
//! every per-config figure) and the writing of the merged outputs, and
//! reports the peak RSS of that phase alone. Settings, all optional:
//!
//! - `MERGE_BENCH_SESSIONS`: sessions to generate (default 2000)
//! - `MERGE_BENCH_SHARDS`: shards (default 100)

use std::fs;
use std::path::Path;
use std::time::Instant;

use smith_calibrate::cost::Prices;
use smith_calibrate::sweep::aggregate::summarize;
use smith_calibrate::sweep::dist::{self, ShardPlace};
use smith_calibrate::sweep::figures::Metric;
use smith_calibrate::sweep::grid::{self, GridSpec, Knob};
use smith_calibrate::sweep::merge;
use smith_calibrate::sweep::plan::{self, PolicySpec};
use smith_calibrate::sweep::prices_used::PricesUsed;
use smith_calibrate::sweep::run::{self, Options, Row, Sweep};
use smith_calibrate::sweep::shard::{self, Shard};
use smith_calibrate::sweep::tables::SummaryInput;
use smith_calibrate::synth::{self, CorpusSpec, SizeSpec};
use smith_calibrate::transcript;

fn env_num(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// Resident memory of this process in MB: now (VmRSS) and the peak since the
/// last reset (VmHWM).
fn rss_mb(field: &str) -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Linux: writing 5 to clear_refs resets VmHWM to the current RSS.
fn reset_peak() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            total += if p.is_dir() {
                dir_bytes(&p)
            } else {
                fs::metadata(&p).map_or(0, |m| m.len())
            };
        }
    }
    total
}

fn main() {
    let n_sessions = env_num("MERGE_BENCH_SESSIONS", 2000);
    let n_shards = env_num("MERGE_BENCH_SHARDS", 100) as u32;
    let tmp = tempfile::tempdir().expect("temporary directory");
    let corpus = tmp.path().join("corpus");
    let spec = CorpusSpec {
        seed: 0x5EED_0015,
        sessions: n_sessions,
        shape: None,
        size: SizeSpec::Range(5_000, 40_000),
    };
    for i in 0..n_sessions {
        synth::write_session(&corpus, &spec.session(i)).expect("write a session");
    }
    let corpus_arg = corpus.display().to_string();
    let refs = transcript::resolve(&corpus_arg).expect("the corpus");

    let mut g = GridSpec::default();
    g.set(Knob::MaxTokens, "20000,60000").expect("grid");
    g.set(Knob::CompactAt, "0.55..0.95:0.05").expect("grid");
    g.set(Knob::ResultCap, "128,256,512,1024,2048,4096")
        .expect("grid");
    let grid = grid::build(&g, usize::MAX).expect("grid");
    let plan = plan::build(
        &grid,
        &PolicySpec::default(),
        plan::BaselineKind::Smith,
        usize::MAX,
    )
    .expect("plan");
    let prices: Prices = "3,3.75,0.3".parse().expect("prices");
    let rank_by = Metric::Price;
    let started = Instant::now();
    let opts = Options::silent(None);
    let sweep = run::run(&refs, &plan.setups, &opts).expect("sweep");
    println!(
        "swept {} sessions ({:.1} MB) under {} configs in {:.1}s",
        sweep.sessions.len(),
        sweep.bytes() as f64 / 1e6,
        plan.setups.len(),
        started.elapsed().as_secs_f64()
    );

    // Each shard: the sessions `--shard K/N` takes, written as the command
    // writes them.
    let out = tmp.path().join("out");
    let paths = vec![corpus_arg.clone()];
    let prices_used = PricesUsed::default();
    let input = SummaryInput {
        paths: &paths,
        grid_file: None,
        grid: &grid,
        plan: &plan,
        prices: &prices,
        prices_used: &prices_used,
        rank_by,
    };
    let started = Instant::now();
    let n_configs = plan.setups.len();
    for k in 1..=n_shards {
        let shard = Shard::new(k, n_shards).expect("shard");
        let mut part = Sweep {
            sessions: Vec::new(),
            configs: sweep.configs.clone(),
            rows: Vec::new(),
            unreadable: Vec::new(),
            elapsed: sweep.elapsed,
            threads: sweep.threads,
        };
        let mut ordinals = Vec::new();
        for (s, info) in sweep.sessions.iter().enumerate() {
            if !shard.takes(&shard::key(&corpus, &info.path)) {
                continue;
            }
            let at = part.sessions.len() as u32;
            part.sessions.push(info.clone());
            ordinals.push(s);
            part.rows.extend((0..n_configs).map(|c| Row {
                session: at,
                config: c as u32,
                facts: sweep.row(s, c).facts.clone(),
            }));
        }
        let summaries = summarize(&part, &prices, rank_by);
        let place = ShardPlace {
            shard,
            ordinals: &ordinals,
            skipped_ordinals: &[],
            listed: refs.len(),
        };
        dist::write_shard_files(&out, &place, &part, &summaries, &input).expect("write a shard");
    }
    println!(
        "wrote {n_shards} shards ({:.1} MB of Parquet and JSON) in {:.1}s",
        dir_bytes(&out) as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    drop(sweep);

    let base = rss_mb("VmRSS:");
    reset_peak();
    let started = Instant::now();
    let merged = merge::merge(&out, &|_, _, _| serde_json::Value::Null).expect("merge");
    let merge_secs = started.elapsed().as_secs_f64();
    let merge_peak = rss_mb("VmHWM:");
    let written = smith_calibrate::export::write_all(&out, &merged.export).expect("write");
    let total_secs = started.elapsed().as_secs_f64();
    let peak = rss_mb("VmHWM:");
    let merged_bytes: u64 = written
        .iter()
        .map(|p| fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    println!();
    println!(
        "merge of {} shards: {} sessions, {} rows × {} columns",
        merged.shards,
        merged.sessions,
        merged.rows,
        merged.export.sessions.width()
    );
    println!(
        "  read, order and aggregate: {merge_secs:.2}s ({:.0} rows/s), peak RSS {} MB",
        merged.rows as f64 / merge_secs,
        merge_peak.map_or("?".into(), |p| format!("{p:.0}"))
    );
    println!(
        "  with writing sessions/configs .parquet/.csv and summary.json ({:.1} MB): {total_secs:.2}s, peak RSS {} MB (RSS before the merge: {} MB)",
        merged_bytes as f64 / 1e6,
        peak.map_or("?".into(), |p| format!("{p:.0}")),
        base.map_or("?".into(), |p| format!("{p:.0}"))
    );
}
