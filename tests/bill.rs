//! The bill check: imports keep what the logs say about each request, and on
//! the real sessions in `../shared/data` the price reproduces what was
//! billed within the bounds of issue 16 (printed, so the figures are in the
//! test log). Without `../shared/data` (a user's clone) the real-data tests
//! are reported as ignored; `SMITH_CALIBRATE_SHARED_DATA=/path/to/shared/data` points
//! them elsewhere.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::run_text;
use smith_calibrate::import::claude_code;

fn line(v: Value) -> String {
    v.to_string()
}

/// An assistant line of response `id` with `usage`.
fn answer(n: usize, id: &str, time: &str, usage: Value) -> String {
    line(json!({
        "type": "assistant", "uuid": format!("00000000-0000-4000-8000-{n:012}"),
        "sessionId": "sess", "timestamp": time,
        "message": {"id": id, "role": "assistant", "model": "claude-opus-4-6",
                    "content": [{"type": "text", "text": "ok"}], "usage": usage}
    }))
}

#[test]
fn claude_code_import_keeps_each_requests_time_and_cache_lifetimes() {
    let log = [
        line(
            json!({"type": "user", "uuid": "00000000-0000-4000-8000-000000000001",
                    "sessionId": "sess", "timestamp": "2026-02-10T21:00:00.000Z",
                    "message": {"role": "user", "content": "hello"}}),
        ),
        // One response over two lines, its usage growing: the first time
        // and the largest figures are kept.
        answer(
            2,
            "msg_a",
            "2026-02-10T21:00:05.000Z",
            json!({
            "input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 9000,
            "output_tokens": 1,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 9000}}),
        ),
        answer(
            3,
            "msg_a",
            "2026-02-10T21:00:09.000Z",
            json!({
            "input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 9000,
            "output_tokens": 40,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 9000}}),
        ),
        line(
            json!({"type": "user", "uuid": "00000000-0000-4000-8000-000000000004",
                    "sessionId": "sess", "timestamp": "2026-02-10T21:07:00.000Z",
                    "message": {"role": "user", "content": "more"}}),
        ),
        // An older log: no split of the writes.
        answer(
            5,
            "msg_b",
            "2026-02-10T21:07:02.000Z",
            json!({
            "input_tokens": 3, "cache_read_input_tokens": 9003, "cache_creation_input_tokens": 50,
            "output_tokens": 7}),
        ),
    ]
    .join("\n");
    let s = claude_code::convert(Cursor::new(log), Path::new("sess.jsonl")).unwrap();
    let r = &s.file.request_records;
    assert_eq!(r.len(), 2);
    assert_eq!(r.len(), s.file.requests.len());
    assert_eq!(r[0].message_index, s.file.requests[0].message_index);
    assert_eq!(r[0].timestamp.as_deref(), Some("2026-02-10T21:00:05.000Z"));
    assert_eq!(
        (r[0].cache_write_5m, r[0].cache_write_1h),
        (Some(0), Some(9000))
    );
    assert_eq!(s.file.requests[0].output_tokens, 40);
    assert_eq!(r[1].timestamp.as_deref(), Some("2026-02-10T21:07:02.000Z"));
    assert_eq!((r[1].cache_write_5m, r[1].cache_write_1h), (None, None));
    // Written to session.json and read back.
    let v = serde_json::to_value(&s.file).unwrap();
    assert_eq!(v["request_records"][0]["cache_write_1h"], 9000);
}

#[test]
fn a_sweep_given_ratio_and_overhead_compares_with_a_baseline_under_them() {
    use smith_calibrate::engine::Config;
    use smith_calibrate::sweep::{grid, GridSpec, Knob};
    let mut spec = GridSpec::default();
    spec.set(Knob::Ratio, "1.515").unwrap();
    spec.set(Knob::Overhead, "17165").unwrap();
    spec.set(Knob::MaxTokens, "120000,200000").unwrap();
    let g = grid::build(&spec, 100).unwrap();
    let base = &g.configs[0];
    assert_eq!((base.ratio, base.overhead_tokens), (1.515, 17165));
    // smith's own thresholds otherwise, and the label says the calibration.
    let d = Config::default();
    assert_eq!(
        (base.max_tokens, base.compact_at, base.compact_to),
        (d.max_tokens, d.compact_at, d.compact_to)
    );
    assert!(
        grid::label(base).ends_with("oh17165 r1.515"),
        "{}",
        grid::label(base)
    );
    // The baseline is not repeated among the other configs.
    assert_eq!(g.configs.iter().filter(|c| *c == base).count(), 1);
    // Without them the baseline is smith's defaults, as before.
    let g = grid::build(&GridSpec::default(), 100).unwrap();
    assert_eq!(g.configs[0], Config::default());
}

// --------------------------------------------------------------- real data

/// `<shared data>/<sub>`: see `common::shared_data`; every test calling this
/// is reported as ignored where the data is absent.
fn data(sub: &str) -> Option<PathBuf> {
    Some(crate::common::shared_data(sub))
}

/// Imports `inputs` with `format` and returns `calibrate --json`'s bill
/// summary of the one format.
fn bill_summary(format: &str, inputs: &[PathBuf], out: &Path) -> Value {
    let mut args = vec!["import".to_string(), format.to_string()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    let (_, err, code) = run_text(&args);
    assert_eq!(code, Some(0), "{err}");
    let (text, err, code) = run_text(&[
        "calibrate".into(),
        out.display().to_string(),
        "--json".into(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&text).unwrap();
    v["bill"]["summary"][0].clone()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// The Claude Code sources in `../shared/data/claude-code`, each with the
/// requests it records and the bounds its bill check keeps under the
/// default parts: the median |per-session error|, the |error on the
/// total|, the share of its long sessions within 15% and of its miss writes
/// attributed to a cause. The defaults are those the held-out validation
/// supports (tests/price_validation.rs), not the best in sample: the
/// account's one cache and the eviction share, off by default, bring
/// eduardodmb's median and xiaomoziyi's total closer here and are checked
/// switched on below. The long sessions outside 15% are those whose early
/// evictions (a request reading only the fixed prompt seconds after its
/// predecessor) the model does not see.
const CLAUDE_CODE_SOURCES: [(&str, u64, f64, f64, f64, f64); 3] = [
    ("spotter", 899, 0.02, 0.05, 1.0, 0.96),
    ("eduardodmb", 4533, 0.08, 0.03, 0.92, 0.97),
    // One request two of its logs hold is billed once. 5 long sessions of
    // 7 within 15% at the held-out defaults (6 with `fixed_prompt_fit`).
    ("xiaomoziyi", 1278, 0.02, 0.08, 0.71, 0.91),
];

/// `calibrate --json`'s bill check of the sessions imported into `out`
/// (with `flags`).
fn bill_of(out: &Path, flags: &[&str]) -> Value {
    let mut args = vec![
        "calibrate".to_string(),
        out.display().to_string(),
        "--json".into(),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    let (text, err, code) = run_text(&args);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&text).unwrap();
    v["bill"].clone()
}

/// The figures of the table, as one line.
fn figures_line(source: &str, s: &Value) -> String {
    format!(
        "{source}: median |error| {:.1}%, total {:+.1}%, sessions of ≥50 requests within 15% {} of {} (worst {}), p95 {:.0}% (short sessions {:.0}%), miss writes attributed {:.1}% (harness_rewrite {:.1}%), {} shared reads",
        f(&s["median_error"]) * 100.0,
        f(&s["total_error"]) * 100.0,
        s["long_within_bound"],
        s["long_sessions"],
        s["worst_long"]["error"]
            .as_f64()
            .map_or("-".into(), |e| format!("{:+.1}%", e * 100.0)),
        f(&s["p95_error"]) * 100.0,
        s["p95_error_short"].as_f64().unwrap_or(0.0) * 100.0,
        f(&s["attributed"]) * 100.0,
        s["misses"]["harness_rewrite"]["cache_write"]
            .as_f64()
            .unwrap_or(0.0)
            / f(&s["miss_cache_write"]).max(1.0)
            * 100.0,
        s["shared_reads"],
    )
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_bill_check_on_every_real_claude_code_source_is_within_the_goals() {
    let tmp = tempfile::tempdir().unwrap();
    for (source, requests, median_bound, total_bound, long_floor, attributed_floor) in
        CLAUDE_CODE_SOURCES
    {
        let Some(dir) = data(&format!("claude-code/{source}")) else {
            return;
        };
        let out = tmp.path().join(source);
        let s = bill_summary("claude-code", &[dir], &out);
        println!("{}", figures_line(source, &s));
        let shared = bill_of(&out, &["--part", "shared_cache=on"])["summary"][0].clone();
        println!("  one account's cache: {}", figures_line(source, &shared));
        let evicted = bill_of(&out, &["--part", "eviction_share=on"])["summary"][0].clone();
        println!(
            "  with the eviction share: {}",
            figures_line(source, &evicted)
        );
        let log = bill_of(&out, &["--log-alone"])["summary"][0].clone();
        println!("  by the log alone: {}", figures_line(source, &log));
        assert!(!s["unlogged"].as_array().unwrap().is_empty(), "{source}");
        assert_eq!(s["format"], "claude-code");
        assert_eq!(
            s["requests"], requests,
            "{source}: every request with recorded usage"
        );
        let (median, total, attributed) = (
            f(&s["median_error"]),
            f(&s["total_error"]),
            f(&s["attributed"]),
        );
        let long = f(&s["long_within_bound"]) / f(&s["long_sessions"]).max(1.0);
        assert!(
            median <= median_bound,
            "{source}: median per-session error {median}"
        );
        assert!(
            total.abs() <= total_bound,
            "{source}: error on the total {total}"
        );
        assert!(
            long >= long_floor,
            "{source}: long sessions within 15%: {long}"
        );
        assert!(
            attributed >= attributed_floor,
            "{source}: attributed {attributed}"
        );
        assert!(f(&s["ttl_applied"]) > 0.0, "{source}");
        // The prices used are named, every request under one of them.
        let used: u64 = s["prices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["requests"].as_u64().unwrap())
            .sum();
        assert_eq!(used, requests, "{source}: {}", s["prices"]);
        // One timeline, asked for: the account's cache serves some first
        // requests; each session alone (the default), none.
        assert!(f(&shared["shared_reads"]) > 0.0, "{source}");
        assert_eq!(s["shared_reads"], 0, "{source}");
    }
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn a_compaction_agent_whose_parent_is_missing_reads_the_parents_cached_context() {
    // eduardodmb's logs lack the main sessions of some compaction agents:
    // their one request reads the parent's context from the cache all the
    // same, all but the agent's own instruction.
    let Some(dir) = data("claude-code/eduardodmb") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("e");
    bill_summary("claude-code", &[dir], &out);
    let bill = bill_of(&out, &["--bill-requests"]);
    let orphans: Vec<&Value> = bill["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["session"].as_str().unwrap().contains("agent-acompact"))
        .filter(|c| {
            let parent = c["session"]
                .as_str()
                .unwrap()
                .split("-agent-")
                .next()
                .unwrap();
            !out.join(parent).exists()
        })
        .collect();
    assert!(orphans.len() >= 10, "{}", orphans.len());
    let mut near = 0;
    for c in &orphans {
        let d = &c["detail"][0];
        let (rec, pred) = (
            f(&d["recorded"]["cache_read"]),
            f(&d["predicted"]["cache_read"]),
        );
        if (pred - rec).abs() / rec.max(1.0) < 0.07 {
            near += 1;
        } else {
            println!("{}: read {pred} predicted, {rec} recorded", c["session"]);
        }
    }
    println!(
        "{near} of {} compaction agents without their parent read within 7% of the record",
        orphans.len()
    );
    assert!(
        near * 10 >= orphans.len() * 8,
        "{near} of {}",
        orphans.len()
    );
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_bill_check_on_the_real_mini_swe_agent_run_is_held_against_the_recorded_cost() {
    let Some(dir) = data("mini-swe-agent/gemini-3-pro-swebench-verified") else {
        return;
    };
    let mut trajs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".traj.json"))
        .collect();
    trajs.sort();
    trajs.truncate(60);
    let tmp = tempfile::tempdir().unwrap();
    let s = bill_summary("mini-swe-agent", &trajs, &tmp.path().join("msa"));
    let b = &s["billed"];
    println!("{}", serde_json::to_string_pretty(b).unwrap());
    println!(
        "mini-swe-agent vs recorded cost: the table on recorded usage {:+.2}% on the total (median {:.2}%); the model's prediction {:+.2}% on the total, median |error| {:.1}%, worst {:+.1}%",
        f(&b["priced_total_error"]) * 100.0,
        f(&b["priced_median_error"]) * 100.0,
        f(&b["predicted_total_error"]) * 100.0,
        f(&b["predicted_median_error"]) * 100.0,
        f(&b["predicted_worst"]["error"]) * 100.0,
    );
    assert_eq!(b["sessions"], 60, "every trajectory records its cost");
    // The table's Gemini prices reproduce what OpenRouter billed.
    assert!(f(&b["priced_total_error"]).abs() < 0.01);
    assert!(f(&b["priced_median_error"]).abs() < 0.001);
    // Implicit caching promises no hit: the prediction is reported, and
    // must at least not be wilder than pricing every token uncached.
    assert!(f(&b["predicted_total_error"]).abs() < 0.5);
}

/// The Claude Code logs in `dir` imported into `tmp`, each session's
/// messages with what its records say about every request.
fn imported_with_records(
    dir: &Path,
    tmp: &Path,
) -> Vec<(
    Vec<std::sync::Arc<smith_calibrate::transcript::Message>>,
    smith_calibrate::cost::session::Recorded,
)> {
    use smith_calibrate::cost::session::Recorded;
    use smith_calibrate::transcript::session_file::SessionFile;
    let out = tmp.join("cc");
    let (_, err, code) = run_text(&[
        "import".into(),
        "claude-code".into(),
        dir.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    smith_calibrate::transcript::resolve_all(&[out.display().to_string()])
        .unwrap()
        .iter()
        .map(|r| {
            let s = smith_calibrate::transcript::load(r).unwrap();
            let f = SessionFile::from_meta(s.meta.as_ref().unwrap().raw.as_ref().unwrap()).unwrap();
            let recorded = Recorded::from_file(&f, &s.messages);
            (s.messages, recorded)
        })
        .collect()
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn on_the_real_claude_code_logs_the_ranking_under_the_old_and_the_new_price_is_reported() {
    use smith_calibrate::cost::session::{price_replay, Settings};
    use smith_calibrate::cost::Prices;
    use smith_calibrate::engine::Config;
    use smith_calibrate::policy::Setup;
    use smith_calibrate::sweep::{grid, GridSpec, Knob};
    // spotter's sessions, mostly Opus: the assertion on the prices below is
    // about them.
    let Some(dir) = data("claude-code/spotter") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let sessions = imported_with_records(&dir, tmp.path());
    // The calibration of issue 16.5 and smith's thresholds around its
    // defaults, at two windows.
    let mut spec = GridSpec::default();
    spec.set(Knob::Ratio, "1.515").unwrap();
    spec.set(Knob::Overhead, "17165").unwrap();
    spec.set(Knob::MaxTokens, "120000,200000").unwrap();
    spec.set(Knob::CompactAt, "0.7,0.8,0.9").unwrap();
    spec.set(Knob::CompactTo, "0.3,0.5").unwrap();
    let g = grid::build(&spec, 100).unwrap();
    let flat = Prices::default();
    let mut rows: Vec<(String, f64, f64, f64, u64)> = Vec::new();
    for c in &g.configs {
        let engine = Setup::smith(*c).compactor();
        let (mut old, mut new, mut summarizer, mut expired) = (0.0, 0.0, 0.0, 0);
        for (messages, rec) in &sessions {
            let (facts, p) = price_replay(
                messages,
                engine.as_ref(),
                Some(rec),
                c.summary_tokens,
                &Settings::default(),
            );
            old += flat.cost(&facts).price;
            new += p.price;
            summarizer += p.summarizer;
            expired += p.expired;
        }
        rows.push((grid::label(c), old, new, summarizer, expired));
    }
    let rank = |key: fn(&(String, f64, f64, f64, u64)) -> f64| {
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by(|&a, &b| key(&rows[a]).total_cmp(&key(&rows[b])));
        let mut r = vec![0; rows.len()];
        for (place, i) in order.into_iter().enumerate() {
            r[i] = place + 1;
        }
        r
    };
    let old_rank = rank(|r| r.1);
    let new_rank = rank(|r| r.2);
    println!("config | old flat price (rank) | new model price (rank) | of it summarizer | expired requests");
    for (i, r) in rows.iter().enumerate() {
        println!(
            "{}{} | ${:.2} ({}) | ${:.2} ({}) | ${:.2} | {}",
            r.0,
            if i == 0 { " [baseline]" } else { "" },
            r.1,
            old_rank[i],
            r.2,
            new_rank[i],
            r.3,
            r.4
        );
    }
    let best_old = old_rank.iter().position(|&x| x == 1).unwrap();
    let best_new = new_rank.iter().position(|&x| x == 1).unwrap();
    println!(
        "smith's defaults (calibrated): rank {} of {} under the old price, {} under the new; best: {} (old) / {} (new); ranking {}",
        old_rank[0],
        rows.len(),
        new_rank[0],
        rows[best_old].0,
        rows[best_new].0,
        if old_rank == new_rank { "unchanged" } else { "changed" }
    );
    // Mostly Opus at $5 input with output and one-hour writes: the model's
    // price is above the flat Sonnet price of the old model.
    assert!(rows.iter().all(|r| r.2 > r.1), "{rows:?}");
    // The records' times reach the replay: the lifetime applied somewhere.
    assert!(rows.iter().any(|r| r.4 > 0), "no request expired");
    assert_eq!(g.configs[0].ratio, 1.515);
    assert_eq!(g.configs[0].compact_at, Config::default().compact_at);
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn compacting_while_the_cache_is_cold_on_the_real_claude_code_logs() {
    use smith_calibrate::cost::session::{price_replay, Settings};
    use smith_calibrate::cost::CacheTtl;
    use smith_calibrate::engine::{Config, Engine};
    use smith_calibrate::policy::cold::{cold_requests, ColdCompact};
    let Some(dir) = data("claude-code") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let sessions = imported_with_records(&dir, tmp.path());
    let config = Config {
        ratio: 1.515,
        overhead_tokens: 17165,
        ..Config::default()
    };
    for ttl in [None, Some(CacheTtl::FiveMinutes)] {
        let mut settings = Settings::default();
        settings.ttl = ttl;
        let mut line = format!(
            "cache lifetime {}:",
            ttl.map_or("from the records".into(), |t| t.to_string())
        );
        let mut base_price = 0.0;
        for cold_at in [None, Some(0.55), Some(0.65), Some(0.75)] {
            let (mut price, mut compactions, mut cold_n) = (0.0, 0, 0);
            for (messages, rec) in &sessions {
                let lifetime = ttl.or(rec.tier()).unwrap_or(CacheTtl::FiveMinutes);
                let cold = cold_requests(messages, rec, lifetime);
                cold_n += cold.iter().filter(|c| **c).count();
                let engine = ColdCompact::new(config, cold_at, cold);
                let (facts, p) = price_replay(
                    messages,
                    &engine,
                    Some(rec),
                    config.summary_tokens,
                    &settings,
                );
                if cold_at.is_none() {
                    // Off, it is smith's engine to the figure.
                    let (smith, _) = price_replay(
                        messages,
                        &Engine::new(config),
                        Some(rec),
                        config.summary_tokens,
                        &settings,
                    );
                    assert_eq!(facts, smith);
                }
                price += p.price;
                compactions += facts.compactions;
            }
            if cold_at.is_none() {
                base_price = price;
            }
            line.push_str(&format!(
                " | cold-compact-at {}: ${price:.2} ({:+.2}%), {compactions} compactions, {cold_n} cold requests",
                cold_at.map_or("off".into(), |f| f.to_string()),
                (price - base_price) / base_price * 100.0
            ));
        }
        println!("{line}");
    }
}

/// The Codex CLI rollouts in `../shared/data/codex`, with their requests and
/// the compactions Codex made.
const CODEX_SOURCES: [(&str, u64, usize); 2] = [("msrnic", 952, 2), ("property-estimator", 559, 0)];

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn the_bill_check_runs_on_the_real_codex_rollouts_under_openais_automatic_caching() {
    let tmp = tempfile::tempdir().unwrap();
    for (source, requests, compactions) in CODEX_SOURCES {
        let Some(dir) = data(&format!("codex/{source}")) else {
            return;
        };
        let out = tmp.path().join(source);
        let s = bill_summary("codex", &[dir], &out);
        println!("codex {}", figures_line(source, &s));
        assert_eq!(s["format"], "codex");
        assert_eq!(s["requests"], requests, "{source}");
        // Every request at an OpenAI row: cached input at the discount,
        // writes at the plain input price.
        for p in s["prices"].as_array().unwrap() {
            assert_eq!(p["provider"], "openai", "{source}: {p}");
            assert_eq!(p["cache_write_5m"], p["input"], "{source}: {p}");
        }
        assert_eq!(
            f(&s["recorded"]["cache_write_5m"]),
            0.0,
            "OpenAI bills no writes"
        );
        // By the log alone (a hit on the whole previous prompt, in
        // 128-token steps) the prediction is under the record: the cache
        // serves less than the previous prompt more often. The share of
        // warm prefixes the other sessions lost early (eviction_share, off
        // by default: held out, it makes the Claude Code sources worse)
        // brings the total within 5%.
        let log = bill_of(&out, &["--log-alone"])["summary"][0].clone();
        println!("  by the log alone: codex {}", figures_line(source, &log));
        let evicted = bill_of(&out, &["--part", "eviction_share=on"])["summary"][0].clone();
        println!(
            "  with the eviction share: codex {}",
            figures_line(source, &evicted)
        );
        let (total, alone) = (f(&evicted["total_error"]), f(&log["total_error"]));
        assert!((-0.15..0.0).contains(&alone), "{source}: total {alone}");
        assert!(total.abs() < 0.05, "{source}: total {total}");
        assert!(
            f(&s["median_error"]) < 0.10,
            "{source}: {}",
            s["median_error"]
        );
        // Misses count the input sent again, though nothing is written.
        if s["misses"].as_object().is_some_and(|m| !m.is_empty()) {
            assert!(f(&s["miss_cache_write"]) > 0.0, "{source}");
            assert!(
                f(&s["attributed"]) < 1.0,
                "{source}: some misses stay unexplained"
            );
        }
        // Codex's own compactions are boundaries with their summaries.
        let mut found = 0;
        for r in smith_calibrate::transcript::resolve_all(&[out.display().to_string()]).unwrap() {
            let s = smith_calibrate::transcript::load(&r).unwrap();
            let file = smith_calibrate::transcript::session_file::SessionFile::from_meta(
                s.meta.as_ref().unwrap().raw.as_ref().unwrap(),
            )
            .unwrap();
            assert_eq!(file.provider.as_deref(), Some("openai"));
            assert!(smith_calibrate::import::pairing_problems(&s.messages).is_empty());
            for b in &file.compact_boundaries {
                assert!(
                    b.summary.as_deref().is_some_and(|t| !t.is_empty()),
                    "{}",
                    file.id
                );
                found += 1;
            }
        }
        assert_eq!(found, compactions, "{source}");
    }
}
