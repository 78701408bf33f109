//! The sweep: the grid (lists, ranges, TOML, impossible combinations, the
//! baseline), the rows against per-session replays, the aggregates, the
//! Pareto front, the cost model, the output files and `--json`.
#![cfg(feature = "full")]

use crate::common;
use crate::test_support::sweep::*;
use common::*;
use polars::prelude::{DataFrame, ParquetReader, SerReader};
use smith_calibrate::cost::Prices;
use smith_calibrate::engine::{Config, Engine};
use smith_calibrate::loss;
use smith_calibrate::replay::SessionFacts;
use smith_calibrate::sweep::aggregate::summarize;
use smith_calibrate::sweep::figures::{self, Metric};
use smith_calibrate::sweep::grid::{self, GridSpec, Knob};
use smith_calibrate::sweep::run::{self, Options};
use smith_calibrate::transcript::{self, Block, BlockType, Message, Role, SessionRef};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

// ---------------------------------------------------------------- helpers

/// A session of `turns` real turns that exercises every stage under a small
/// window: thinking, an image, repeated reads, large results, and turns to
/// summarize away. `seed` varies the sizes.
fn busy_session(turns: usize, seed: usize) -> Vec<Arc<Message>> {
    let mut h = Vec::new();
    for t in 0..turns {
        h.push(user(&format!(
            "turn {t}: {}",
            filler_str(100 + (t * 37 + seed * 11) % 300)
        )));
        let mut blocks = vec![thinking(&filler_str(200 + (t * 13 + seed) % 400), "sig")];
        let id = format!("c{t}");
        let path = format!("{{\"path\":\"src/f{}.rs\"}}", (t + seed) % 3);
        blocks.push(Block::tool_use(&id, "read_file", &path));
        h.push(assistant_blocks(blocks));
        let size = 300 + ((t * 7919 + seed * 104_729) % 6000);
        let mut result = vec![result_block(&id, &filler(size))];
        if t % 5 == seed % 5 {
            result.push(media(
                BlockType::Image,
                Some(&id),
                Some("shot.png"),
                Some("image/png"),
            ));
        }
        h.push(arc(Message::new(Role::Tool, result, false, None)));
        h.push(assistant(&format!("done with turn {t}")));
    }
    h
}

/// Small windows so that every config compacts, in several ways.
fn test_configs() -> Vec<Config> {
    let mut spec = GridSpec::default();
    spec.set(Knob::MaxTokens, "3000,6000").unwrap();
    spec.set(Knob::CompactAt, "0.7,0.9").unwrap();
    spec.set(Knob::CompactTo, "0.3,0.5").unwrap();
    spec.set(Knob::SummaryTokens, "0,100").unwrap();
    grid::build(&spec, 1000).unwrap().configs
}

fn quiet(jobs: usize) -> Options {
    Options::silent(Some(jobs))
}

fn refs_of(paths: &[PathBuf]) -> Vec<SessionRef> {
    paths.iter().map(|p| SessionRef::file(p.clone())).collect()
}

fn read_parquet(path: &Path) -> DataFrame {
    ParquetReader::new(fs::File::open(path).unwrap())
        .finish()
        .unwrap()
}

// -------------------------------------------------------- command + files

fn corpus(dir: &Path) -> Vec<PathBuf> {
    (0..3)
        .map(|s| {
            write_session(
                &dir.join("sessions"),
                &format!("s{s}"),
                &busy_session(10 + 5 * s, s),
            )
        })
        .collect()
}

const GRID_ARGS: [&str; 6] = [
    "--max-tokens",
    "3000,6000",
    "--compact-at",
    "0.7,0.9",
    "--compact-to",
    "0.3..0.5:0.2",
];

// ------------------------------------------------------------------- runs

#[test]
fn sweep_rows_equal_the_replay_of_each_session_under_each_config() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..4)
        .map(|s| write_session(dir.path(), &format!("s{s}"), &busy_session(12 + 9 * s, s)))
        .collect();
    let configs = test_configs();
    assert!(configs.len() > 10);
    let sweep = run::run(&refs_of(&paths), &smith(&configs), &quiet(2)).unwrap();
    assert_eq!(sweep.sessions.len(), 4);
    assert_eq!(sweep.rows.len(), 4 * configs.len());
    let prices = Prices::default();
    let mut summed = vec![SessionFacts::default(); configs.len()];
    for (s, path) in paths.iter().enumerate() {
        assert_eq!(
            sweep.sessions[s].path, *path,
            "sessions keep the order given"
        );
        let session = transcript::session::load_path(path).unwrap();
        for (c, config) in configs.iter().enumerate() {
            let expected = loss::replay(&session.messages, &Engine::new(*config));
            let row = sweep.row(s, c);
            assert_eq!((row.session as usize, row.config as usize), (s, c));
            assert_eq!(row.facts, expected, "session {s} config {c}");
            let f = &mut summed[c];
            f.requests += expected.requests;
            f.compactions += expected.compactions;
            f.tokens_sent += expected.tokens_sent;
            f.cache_write += expected.cache_write;
            f.effects.add(&expected.effects);
            f.peak_tokens = f.peak_tokens.max(expected.peak_tokens);
        }
    }
    // The configs' totals are the sums of the per-session replays.
    let summaries = summarize(&sweep, &prices, Metric::Price);
    let mut any_mangled = false;
    for (c, s) in summaries.iter().enumerate() {
        let f = &summed[c];
        assert_eq!(s.total(Metric::Requests), f.requests as f64);
        assert_eq!(s.total(Metric::Compactions), f.compactions as f64);
        assert_eq!(s.total(Metric::TokensSent), f.tokens_sent as f64);
        assert_eq!(s.total(Metric::CacheWrite), f.cache_write as f64);
        assert_eq!(
            s.total(Metric::ResultsMangled),
            f.effects.results_mangled() as f64
        );
        assert_eq!(
            s.total(Metric::ReclaimedTruncate),
            f.effects.reclaimed[3] as f64
        );
        assert_eq!(s.total(Metric::PeakTokens), f.peak_tokens as f64);
        any_mangled |= f.effects.results_mangled() > 0;
    }
    assert!(
        any_mangled,
        "the test configs must compact for this test to mean something"
    );
    assert!(summaries.iter().any(|s| s.total(Metric::Summaries) > 0.0));
    assert!(summaries.iter().any(|s| s.total(Metric::Drops) > 0.0));
}

#[test]
fn sweep_gives_the_same_rows_on_one_thread_and_on_two() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..3)
        .map(|s| write_session(dir.path(), &format!("s{s}"), &busy_session(15, s)))
        .collect();
    let configs = test_configs();
    let one = run::run(&refs_of(&paths), &smith(&configs), &quiet(1)).unwrap();
    let two = run::run(&refs_of(&paths), &smith(&configs), &quiet(2)).unwrap();
    assert_eq!(one.rows, two.rows);
    assert_eq!((one.threads, two.threads), (1, 2));
}

#[test]
fn sweep_reports_unreadable_sessions_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let good = write_session(dir.path(), "good", &busy_session(5, 1));
    // One bad line in the middle of an otherwise good transcript.
    let mut text = fs::read_to_string(&good).unwrap();
    text.insert_str(text.find('\n').unwrap() + 1, "{not json\n");
    fs::write(&good, text).unwrap();
    let garbage = dir.path().join("garbage/transcript.jsonl");
    fs::create_dir_all(garbage.parent().unwrap()).unwrap();
    fs::write(&garbage, "nope\nstill nope\n").unwrap();
    let missing = dir.path().join("missing/transcript.jsonl");
    let refs = refs_of(&[garbage.clone(), good.clone(), missing.clone()]);
    let sweep = run::run(&refs, &smith(&[Config::default()]), &quiet(2)).unwrap();
    assert_eq!(sweep.sessions.len(), 1);
    assert_eq!(sweep.sessions[0].path, good);
    assert_eq!(sweep.sessions[0].lines_skipped, 1);
    assert_eq!(sweep.lines_skipped(), 1);
    let bad: Vec<&PathBuf> = sweep.unreadable.iter().map(|u| &u.path).collect();
    assert_eq!(bad, vec![&garbage, &missing]);
    assert_text(
        &scrub(&sweep.unreadable[0].reason, dir.path()),
        "no message could be read (2 lines, 2 skipped)",
    );
    assert_text(
        &scrub(&sweep.unreadable[1].reason, dir.path()),
        "<DIR>/missing/transcript.jsonl: cannot read: No such file or directory (os error 2)",
    );
    assert_eq!(sweep.rows.len(), 1);
}

#[test]
fn sweep_without_configs_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), "s", &busy_session(6, 0));
    let sweep = run::run(&refs_of(std::slice::from_ref(&path)), &[], &quiet(1)).unwrap();
    assert_eq!(sweep.sessions.len(), 1);
    assert!(sweep.rows.is_empty());
    assert_eq!(sweep.bytes(), fs::metadata(&path).unwrap().len());
    assert_eq!(sweep.sessions[0].messages, 24);
}

// ------------------------------------------------------------------- cost

#[test]
fn cost_of_three_requests_reads_the_unchanged_prefix_and_writes_the_rest() {
    // 400-byte user turns and 40-byte answers, far below any trigger:
    // request 0 sends [u0] = 100 tokens, all written;
    // request 1 sends [u0 a1 u2] = 210, reads 100 (u0), writes 110;
    // request 2 sends [u0 .. u4] = 320, reads 210, writes 110.
    let h = vec![
        user(&filler_str(400)),
        assistant(&filler_str(40)),
        user(&filler_str(400)),
        assistant(&filler_str(40)),
        user(&filler_str(400)),
        assistant(&filler_str(40)),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(dir.path(), "three", &h);
    let sweep = run::run(&refs_of(&[path]), &smith(&[Config::default()]), &quiet(1)).unwrap();
    let f = &sweep.row(0, 0).facts;
    assert_eq!(
        (f.requests, f.tokens_sent, f.cache_read, f.cache_write),
        (3, 630, 310, 320)
    );
    let prices = Prices::default();
    let cost = prices.cost(f);
    assert!((cost.price - (320.0 * 3.75 + 310.0 * 0.30) / 1e6).abs() < 1e-15);
    assert!((cost.price - 0.001293).abs() < 1e-12);
    assert!((cost.price_uncached - 630.0 * 3.0 / 1e6).abs() < 1e-15);
    let v = figures::values(f, &prices);
    assert_eq!(v[Metric::Price.index()], cost.price);
    assert_eq!(v[Metric::PriceUncached.index()], cost.price_uncached);
}

#[test]
fn out_dir_holds_every_file_and_they_read_back() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let out = dir.path().join("results");
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .args(GRID_ARGS)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // 2 × 2 × 2 = 8, none impossible, none the baseline: 9 configs.
    let configs = 9;
    let mut names: Vec<String> = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "configs.csv",
            "configs.parquet",
            "sessions.csv",
            "sessions.parquet",
            "summary.json",
            "verdict.json"
        ],
        "no temporary file is left behind"
    );

    let sessions = read_parquet(&out.join("sessions.parquet"));
    assert_eq!(sessions.height(), 3 * configs);
    let columns: Vec<String> = sessions
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    for c in [
        "session",
        "path",
        "config",
        "config_label",
        "max_tokens",
        "compact_at",
        "compact_to",
        "result_cap",
        "window_turns",
        "overhead_tokens",
        "ratio",
        "summary_tokens",
        "is_baseline",
        "requests",
        "triggered",
        "compactions",
        "fires_thinking",
        "fires_drop",
        "reclaimed_thinking",
        "reclaimed_truncate",
        "results_mangled",
        "results_truncated",
        "results_stubbed",
        "reads_superseded",
        "thinking_dropped",
        "attachments_removed",
        "summaries",
        "drops",
        "messages_summarized",
        "target_misses",
        "exhausted",
        "peak_tokens",
        "tokens_sent",
        "cache_read",
        "cache_write",
        "price",
        "price_uncached",
        "lines_skipped",
        "bytes",
    ] {
        assert!(columns.iter().any(|n| n == c), "sessions has no column {c}");
    }
    let csv = read_csv(&out.join("sessions.csv"));
    assert_eq!(csv.height(), 3 * configs);
    assert_eq!(csv.get_column_names(), sessions.get_column_names());
    let baseline_rows = sessions
        .column("is_baseline")
        .unwrap()
        .bool()
        .unwrap()
        .sum()
        .unwrap();
    assert_eq!(baseline_rows, 3);

    let cfg = read_parquet(&out.join("configs.parquet"));
    assert_eq!(cfg.height(), configs);
    let cfg_csv = read_csv(&out.join("configs.csv"));
    assert_eq!(cfg_csv.height(), configs);
    for c in [
        "config_label",
        "trigger_tokens",
        "target_tokens",
        "is_baseline",
        "sessions",
        "price",
        "price_mean",
        "price_median",
        "price_p95",
        "price_delta",
        "price_delta_pct",
        "results_mangled_delta",
        "pareto",
        "rank",
    ] {
        assert!(cfg.column(c).is_ok(), "configs has no column {c}");
    }
    let ranks: Vec<i64> = cfg
        .column("rank")
        .unwrap()
        .i64()
        .unwrap()
        .into_no_null_iter()
        .collect();
    let mut sorted = ranks.clone();
    sorted.sort();
    assert_eq!(sorted, (1..=configs as i64).collect::<Vec<_>>());
    // The configs' totals are the sums of the sessions' rows.
    let total: i64 = sessions
        .column("tokens_sent")
        .unwrap()
        .i64()
        .unwrap()
        .into_no_null_iter()
        .sum();
    let cfg_total: i64 = cfg
        .column("tokens_sent")
        .unwrap()
        .i64()
        .unwrap()
        .into_no_null_iter()
        .sum();
    assert_eq!(total, cfg_total);

    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["sessions"], 3);
    assert_eq!(summary["grid"]["configs"], configs);
    assert_eq!(
        summary["grid"]["axes"]["compact_to"],
        serde_json::json!([0.3, 0.5])
    );
    assert_eq!(
        summary["grid"]["axes"]["max_tokens"],
        serde_json::json!([3000, 6000])
    );
    assert_eq!(summary["prices"]["cache_write"], 3.75);
    assert_eq!(summary["baseline"]["label"], Config::default().label());
    assert_eq!(summary["best"]["rank"], 1);
    assert!(summary["pareto_front"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
}

#[test]
fn json_flag_prints_the_ranked_config_table() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .args(GRID_ARGS)
        .args(["--json", "--rank-by", "results_mangled", "-j", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = sweep_configs(&o.stdout);
    assert_eq!(rows.len(), 9);
    let ranks: Vec<i64> = rows.iter().map(|r| r["rank"].as_i64().unwrap()).collect();
    assert_eq!(ranks, (1..=9).collect::<Vec<_>>(), "best first");
    let mangled: Vec<f64> = rows
        .iter()
        .map(|r| r["results_mangled"].as_f64().unwrap())
        .collect();
    assert!(mangled.windows(2).all(|w| w[0] <= w[1]), "{mangled:?}");
    assert_eq!(rows.iter().filter(|r| r["is_baseline"] == true).count(), 1);
    assert!(rows[0].get("price_delta_pct").is_some());
    // Not a terminal: no progress bar on stderr.
    let err = stderr(&o);
    assert!(!err.contains("ETA"), "{err}");
    assert!(err.contains("replayed 3 sessions"), "{err}");

    let top = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .args(GRID_ARGS)
        .args(["--json", "--top", "2"])
        .output()
        .unwrap();
    let rows = sweep_configs(&top.stdout);
    assert_eq!(rows.len(), 2);
}

#[test]
fn terminal_table_marks_the_baseline_and_the_pareto_front() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .args(GRID_ARGS)
        .args(["--top", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // The whole table: the baseline, the ★ of the Pareto front, the labels.
    assert_fixture(&out, "sweep/table_top3.txt");
    // The best 3, and the baseline below them unless it is one of them.
    let base_line = out.lines().find(|l| l.contains("baseline")).unwrap();
    let base_rank: usize = base_line
        .split('┆')
        .next()
        .unwrap()
        .trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .unwrap();
    let hidden = if base_rank > 3 { 5 } else { 6 };
    assert!(
        out.contains(&format!("{hidden} more configs not shown")),
        "{out}"
    );
}

#[test]
fn bad_grids_are_usage_errors_and_nothing_readable_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let sessions = dir.path().join("sessions");
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .args(["--compact-to", "0.4..0.6"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), dir.path()), "smith-calibrate: --compact-to: range \"0.4..0.6\" needs a step for a fractional knob, as in 0.4..0.6:0.05\n");
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .args([
            "--compact-at",
            "0.1..0.9:0.01",
            "--compact-to",
            "0.1..0.9:0.01",
            "--max-configs",
            "1000",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), dir.path()), "smith-calibrate: the grid has 6561 configs (81 compact-at × 81 compact-to), more than the limit of 1000; use fewer values or larger steps, or raise --max-configs\n");

    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .args([
            "--compact-at",
            "0.5,0.8",
            "--compact-to",
            "0.5,0.6",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("left out 2 of 4 combinations"),
        "{}",
        stderr(&o)
    );

    let empty = dir.path().join("empty/transcript.jsonl");
    fs::create_dir_all(empty.parent().unwrap()).unwrap();
    fs::write(&empty, "garbage\n").unwrap();
    let o = bin().arg("sweep").arg(&empty).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_fixture(
        &scrub(&stderr(&o), dir.path()),
        "sweep/nothing_readable.stderr",
    );

    let o = bin().arg("sweep").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_text(&stderr(&o), "smith-calibrate: /nonexistent-smith-home/sessions: no sessions directory; give PATHS, or set SMITH_HOME to where smith keeps its sessions\n");
}

#[test]
fn grid_file_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let grid = dir.path().join("grid.toml");
    fs::write(
        &grid,
        "max-tokens = [3000]\ncompact-to = \"0.3..0.4:0.1\"\n",
    )
    .unwrap();
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .arg("--grid")
        .arg(&grid)
        .args(["--compact-at", "0.6,0.7", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = sweep_configs(&o.stdout);
    // baseline + 1 max-tokens × 2 compact-at × 2 compact-to
    assert_eq!(rows.len(), 5);
    assert!(rows
        .iter()
        .filter(|r| r["is_baseline"] == false)
        .all(|r| r["max_tokens"] == 3000));
}

#[test]
fn out_dir_must_not_be_a_session_directory() {
    let dir = tempfile::tempdir().unwrap();
    let paths = corpus(dir.path());
    let session_dir = paths[0].parent().unwrap();
    let o = bin()
        .arg("sweep")
        .arg(dir.path().join("sessions"))
        .arg("--out")
        .arg(session_dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), dir.path()), "smith-calibrate: --out <DIR>/sessions/s0: that is a session directory; write the results somewhere else\n");
    // A transcript outside a session directory: its directory is an input.
    let loose = dir.path().join("loose");
    fs::create_dir_all(&loose).unwrap();
    fs::copy(&paths[0], loose.join("run.jsonl")).unwrap();
    let o = bin()
        .arg("sweep")
        .arg(loose.join("run.jsonl"))
        .arg("--out")
        .arg(&loose)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(&scrub(&stderr(&o), dir.path()), "smith-calibrate: --out <DIR>/loose: <DIR>/loose/run.jsonl is read from there; write the results somewhere else\n");
    let names: Vec<_> = fs::read_dir(&loose)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "nothing written beside the input");
}
