//! Sweep throughput: sessions/s and MB/s for 1 config and for 100 configs,
//! the parse-alone floor in the same run, 1 thread against 2, and peak RSS.
//!
//! Run with `cargo bench --bench sweep` (release). Settings, all optional:
//!
//! - `SWEEP_BENCH_MB`: megabytes of transcripts to generate (default 200)
//! - `SWEEP_BENCH_DIR`: sweep this directory instead of generating one
//! - `SWEEP_BENCH_CONFIGS`: configs of the large grid (default 100)
//! - `SWEEP_BENCH_THREADS`: threads of the parallel runs (default 2)
//! - `SWEEP_BENCH_SCALE_ALL=1`: also time the large grid on 1 thread
//! - `SWEEP_BENCH_ESTIMATORS`: estimators whose sweep of the large grid is
//!   timed against the bytes4 sweep (default `o200k,cl100k`; `none` skips)
//!
//! The goals: the large grid costs at most 10× one config, since
//! every session is parsed once whatever the grid; 2 threads are at least
//! 1.8× one; peak RSS stays near the largest session times the threads,
//! never near the corpus. A sweep under a real tokenizer costs at
//! most 3× the bytes4 sweep of the same grid, since each session's texts are
//! tokenized once and every config reuses the counts.
//!
//! The corpus comes from `smith_calibrate::synth` (realistic sessions with
//! thinking, repeated reads, large results, attachments), streamed to a
//! temporary directory; nothing of it is kept in memory while writing.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use smith_calibrate::cost::session::Settings;
use smith_calibrate::engine::Config;
use smith_calibrate::estimate::Estimator;
use smith_calibrate::policy::Setup;
use smith_calibrate::sweep::grid::{self, GridSpec, Knob};
use smith_calibrate::sweep::run::{self, Options, Sweep};
use smith_calibrate::synth::{self, CorpusSpec, SizeSpec};
use smith_calibrate::transcript::{self, SessionRef};

fn env_num(name: &str, default: f64) -> f64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// Generates about `mb` megabytes of sessions under `dir` with
/// [`smith_calibrate::synth`], sessions of 0.2 to 4 MB of mixed shapes,
/// each streamed to disk as it is generated.
fn generate(dir: &Path, mb: f64) -> anyhow::Result<(usize, u64)> {
    let total = (mb * 1e6) as u64;
    let corpus = CorpusSpec {
        seed: 0x5EED_5EEB,
        sessions: usize::MAX,
        shape: None,
        size: SizeSpec::Range(200_000, 4_000_000),
    };
    let (mut n, mut written) = (0usize, 0u64);
    while written < total {
        written += synth::write_session(dir, &corpus.session(n))?.bytes;
        n += 1;
    }
    Ok((n, written))
}

/// Peak resident memory of this process in MB since the last reset.
fn peak_rss_mb() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Resets the peak so the next phase reports its own (Linux: writing 5 to
/// clear_refs resets VmHWM to the current RSS).
fn reset_peak() {
    let _ = fs::write("/proc/self/clear_refs", "5");
}

struct Measure {
    what: String,
    threads: usize,
    configs: usize,
    sessions: usize,
    mb: f64,
    secs: f64,
    peak_mb: Option<f64>,
}

fn time(what: &str, refs: &[SessionRef], configs: &[Config], threads: usize) -> Measure {
    let setups: Vec<Setup> = configs.iter().copied().map(Setup::smith).collect();
    time_setups(what, refs, &setups, threads, None)
}

/// [`time`], pricing every replay with the cost model when `cost` is given
/// (what the `sweep` command does).
fn time_with(
    what: &str,
    refs: &[SessionRef],
    configs: &[Config],
    threads: usize,
    cost: Option<&Settings>,
) -> Measure {
    let setups: Vec<Setup> = configs.iter().copied().map(Setup::smith).collect();
    time_setups(what, refs, &setups, threads, cost)
}

fn time_setups(
    what: &str,
    refs: &[SessionRef],
    setups: &[Setup],
    threads: usize,
    cost: Option<&Settings>,
) -> Measure {
    reset_peak();
    let opts = Options::silent(Some(threads));
    let started = Instant::now();
    let sweep: Sweep =
        run::run_priced(refs, setups, &opts, cost, Vec::new(), &|_, _, _| Ok(())).expect("sweep");
    let secs = started.elapsed().as_secs_f64();
    let m = Measure {
        what: what.to_string(),
        threads,
        configs: setups.len(),
        sessions: sweep.sessions.len(),
        mb: sweep.bytes() as f64 / 1e6,
        secs,
        peak_mb: peak_rss_mb(),
    };
    println!(
        "{:<22} {:>7} {:>7} {:>8} {:>9.2} {:>10.1} {:>9.1} {:>12.0} {:>10}",
        m.what,
        m.threads,
        m.configs,
        m.sessions,
        m.secs,
        m.sessions as f64 / m.secs,
        m.mb / m.secs,
        (m.sessions * m.configs.max(1)) as f64 / m.secs,
        m.peak_mb.map_or("?".to_string(), |p| format!("{p:.0}")),
    );
    m
}

fn main() {
    let mb = env_num("SWEEP_BENCH_MB", 200.0);
    let n_configs = env_num("SWEEP_BENCH_CONFIGS", 100.0) as usize;
    let threads = env_num("SWEEP_BENCH_THREADS", 2.0) as usize;
    let scale_all = std::env::var("SWEEP_BENCH_SCALE_ALL").is_ok_and(|v| v == "1");
    let estimators: Vec<Estimator> = match std::env::var("SWEEP_BENCH_ESTIMATORS") {
        Ok(v) if v == "none" => Vec::new(),
        Ok(v) => {
            Estimator::parse_list(&v).unwrap_or_else(|e| panic!("SWEEP_BENCH_ESTIMATORS: {e}"))
        }
        Err(_) => vec![Estimator::O200k, Estimator::Cl100k],
    };

    let _keep;
    let dir: PathBuf = match std::env::var_os("SWEEP_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let tmp = tempfile::tempdir().expect("temporary directory");
            let started = Instant::now();
            let (n, bytes) = generate(tmp.path(), mb).expect("generate the corpus");
            println!(
                "generated {n} sessions, {:.1} MB in {:.1}s under {}",
                bytes as f64 / 1e6,
                started.elapsed().as_secs_f64(),
                tmp.path().display()
            );
            let path = tmp.path().to_path_buf();
            _keep = tmp;
            path
        }
    };
    let refs = transcript::locate::resolve_path(&dir).expect("sessions to sweep");
    let largest = refs
        .iter()
        .filter_map(|r| fs::metadata(&r.transcript).ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0);

    // The large grid: windows × trigger × target × result cap, first N.
    let mut spec = GridSpec::default();
    spec.set(Knob::MaxTokens, "64000,120000,200000,500000,1000000")
        .expect("grid");
    spec.set(Knob::CompactAt, "0.7..0.9:0.05").expect("grid");
    spec.set(Knob::CompactTo, "0.3..0.6:0.1").expect("grid");
    spec.set(Knob::ResultCap, "256,512,1024,2048")
        .expect("grid");
    let mut many = grid::build(&spec, 100_000).expect("grid").configs;
    many.truncate(n_configs.max(1));
    let one = vec![Config::default()];

    println!(
        "{} sessions, largest {:.1} MB; peak RSS is per phase (VmHWM after resetting it)",
        refs.len(),
        largest as f64 / 1e6
    );
    println!(
        "{:<22} {:>7} {:>7} {:>8} {:>9} {:>10} {:>9} {:>12} {:>10}",
        "phase",
        "threads",
        "configs",
        "sessions",
        "seconds",
        "sessions/s",
        "MB/s",
        "replays/s",
        "peak MB"
    );
    // Warm the page cache so the first phase is not a disk benchmark.
    let _ = run::run(&refs, &[], &Options::silent(Some(threads)));

    let parse_n = time("parse only", &refs, &[], threads);
    let parse_1 = time("parse only", &refs, &[], 1);
    let one_n = time("sweep 1 config", &refs, &one, threads);
    let one_1 = time("sweep 1 config", &refs, &one, 1);
    let many_n = time(
        &format!("sweep {} configs", many.len()),
        &refs,
        &many,
        threads,
    );
    // The cost model's per-request pricing, in the same pass as the replay.
    let priced_n = time_with(
        &format!("priced {} configs", many.len()),
        &refs,
        &many,
        threads,
        Some(&Settings::default()),
    );
    println!(
        "the cost model's pricing: {:.1}% of the sweep's time",
        (priced_n.secs / many_n.secs - 1.0) * 100.0
    );
    let many_1 = scale_all.then(|| time(&format!("sweep {} configs", many.len()), &refs, &many, 1));
    // A tokenizer is built once per process on first use (o200k and cl100k
    // from the gzipped vocabularies in `assets/tokenizers/`): timed here on
    // its own, so the sweep figures below are counting and replay alone.
    // bpe-openai's precomputed tables, linked into this benchmark only, are
    // what the binary loaded before; their load time is the comparison.
    for &e in estimators.iter().filter(|e| e.is_tokenizer()) {
        let started = Instant::now();
        e.text_units(b"build the tokenizer");
        let built = started.elapsed().as_secs_f64() * 1e3;
        let prebuilt: Option<fn() -> &'static bpe_openai::Tokenizer> = match e {
            Estimator::O200k => Some(bpe_openai::o200k_base),
            Estimator::Cl100k => Some(bpe_openai::cl100k_base),
            _ => None,
        };
        let before = prebuilt
            .map(|f| {
                let started = Instant::now();
                f().count("load the tables");
                format!(
                    " (bpe-openai's precomputed tables: {:.0} ms)",
                    started.elapsed().as_secs_f64() * 1e3
                )
            })
            .unwrap_or_default();
        println!("{e}: tokenizer built in {built:.0} ms, once per process{before}");
    }
    let by_estimator: Vec<(Estimator, Measure)> = estimators
        .iter()
        .filter(|&&e| e != Estimator::Bytes4)
        .map(|&e| {
            let setups: Vec<Setup> = many
                .iter()
                .map(|&c| Setup::smith(c).with_estimator(e))
                .collect();
            let what = format!("sweep {} configs {e}", many.len());
            (e, time_setups(&what, &refs, &setups, threads, None))
        })
        .collect();

    println!();
    println!(
        "{} configs cost {:.2}× one config (goal ≤ 10×); parse is {:.0}% of the 1-config sweep",
        many.len(),
        many_n.secs / one_n.secs,
        parse_n.secs / one_n.secs * 100.0
    );
    println!(
        "{threads} threads vs 1: parse {:.2}×, 1-config sweep {:.2}×{} (goal ≥ 1.8× at 2)",
        parse_1.secs / parse_n.secs,
        one_1.secs / one_n.secs,
        many_1
            .as_ref()
            .map(|m| format!(", {}-config sweep {:.2}×", many.len(), m.secs / many_n.secs))
            .unwrap_or_default()
    );
    for (e, m) in &by_estimator {
        println!(
            "{e}: a sweep of {} configs costs {:.2}× the bytes4 sweep of the same grid (goal ≤ 3×)",
            many.len(),
            m.secs / many_n.secs
        );
    }
    let peak = [&parse_n, &one_n, &many_n]
        .iter()
        .chain(
            by_estimator
                .iter()
                .map(|(_, m)| m)
                .collect::<Vec<_>>()
                .iter(),
        )
        .filter_map(|m| m.peak_mb)
        .fold(0.0, f64::max);
    println!(
        "peak RSS {peak:.0} MB against a corpus of {:.0} MB and a largest session of {:.1} MB × {threads} threads",
        one_n.mb,
        largest as f64 / 1e6
    );
}
