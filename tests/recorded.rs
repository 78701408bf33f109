//! The replay reproduces the bill: a hand-made Claude Code log whose
//! per-request usage, compactions and summaries are known, held to each
//! part (tokens measured per message, the check after each compaction, the
//! `recorded` policy in a replay and a sweep, `calibrate`'s recorded replay
//! against the bill check); then every shared source.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use smith_calibrate::stats::median_of;

use crate::common::{self, column_f64, ok, ok_stderr, read_csv};

/// Tokens of every request that are no message.
const FIXED: u64 = 1_000;

/// The prompts the log records, request by request: the fixed prompt and
/// a 400-byte question (100 tokens at 4 bytes a token); then each answer
/// (80 bytes, 20 tokens) and the next question; after the first full
/// compaction its 200-byte summary (50 tokens) and a question; after the
/// second the same, and 300 tokens the transcript does not hold (files
/// the harness re-attached): the compaction whose kept messages do not
/// add up.
const PROMPTS: [u64; 5] = [1_100, 1_220, 1_340, 1_150, 1_450];

/// A log under construction: uuids chained, one line a minute.
struct Log {
    lines: Vec<String>,
}

impl Log {
    fn push(&mut self, mut v: Value) -> &mut Log {
        let n = self.lines.len() + 1;
        let o = v.as_object_mut().unwrap();
        o.insert(
            "uuid".into(),
            json!(format!("00000000-0000-4000-8000-{n:012x}")),
        );
        if n > 1 {
            o.insert(
                "parentUuid".into(),
                json!(format!("00000000-0000-4000-8000-{:012x}", n - 1)),
            );
        }
        o.insert("sessionId".into(), json!("sess"));
        o.insert(
            "timestamp".into(),
            json!(format!("2026-02-10T10:{:02}:00.000Z", n)),
        );
        self.lines.push(v.to_string());
        self
    }

    fn user(&mut self, byte: char) -> &mut Log {
        let text = byte.to_string().repeat(400);
        self.push(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    /// An answer to a request of `prompt` tokens reading `read` of them.
    fn answer(&mut self, id: &str, prompt: u64, read: u64) -> &mut Log {
        self.push(json!({"type": "assistant", "message": {
            "model": "claude-opus-4-6", "id": id, "role": "assistant",
            "content": [{"type": "text", "text": "z".repeat(80)}],
            "usage": {"input_tokens": 0, "cache_read_input_tokens": read,
                      "cache_creation_input_tokens": prompt - read, "output_tokens": 20}}}))
    }

    fn compaction(&mut self, byte: char) -> &mut Log {
        self.push(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                         "compactMetadata": {"trigger": "auto", "preTokens": 1400}}))
            .push(json!({"type": "user", "isCompactSummary": true,
                         "message": {"role": "user", "content": byte.to_string().repeat(200)}}))
    }
}

/// Writes the log under `dir/projects/p/sess.jsonl` and returns the
/// projects folder.
fn write_log(dir: &Path) -> PathBuf {
    let mut log = Log { lines: Vec::new() };
    let [p1, p2, p3, p4, p5] = PROMPTS;
    log.user('a')
        .answer("r1", p1, 0)
        .user('b')
        .answer("r2", p2, p1)
        .user('c')
        .answer("r3", p3, p2)
        .compaction('S')
        .user('d')
        .answer("r4", p4, FIXED)
        .compaction('T')
        .user('e')
        .answer("r5", p5, FIXED);
    let projects = dir.join("projects");
    fs::create_dir_all(projects.join("p")).unwrap();
    fs::write(
        projects.join("p").join("sess.jsonl"),
        log.lines.join("\n") + "\n",
    )
    .unwrap();
    projects
}

#[test]
fn the_recorded_replay_sends_what_the_log_recorded_and_checks_each_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = write_log(tmp.path());
    let file = projects.join("p").join("sess.jsonl");

    // The replay of the agent's own run sends each recorded prompt.
    let trace = ok(common::run(&[
        "replay".as_ref(),
        file.as_os_str(),
        "--policy".as_ref(),
        "recorded".as_ref(),
        "--trace".as_ref(),
    ]));
    let requests: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sent: Vec<u64> = requests
        .iter()
        .map(|r| r["real_after"].as_u64().unwrap())
        .collect();
    assert_eq!(sent, PROMPTS);
    let strategies: Vec<&str> = requests
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    assert_eq!(
        strategies,
        ["none", "none", "none", "summarized", "summarized"]
    );
    // After a summary only the fixed prompt is still cached.
    assert_eq!(requests[3]["real_read"], FIXED);

    // calibrate: the attribution's check after each compaction, and the
    // recorded replay against the log.
    let v: Value = serde_json::from_str(&ok(common::run(&[
        "calibrate".as_ref(),
        projects.as_os_str(),
        "--json".as_ref(),
    ])))
    .unwrap();
    let s = &v["recorded_replay"]["sessions"][0];
    assert_eq!(s["recorded_tokens"], PROMPTS.iter().sum::<u64>());
    assert_eq!(s["replayed_tokens"], s["recorded_tokens"]);
    let checks = s["compaction_checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{s}");
    let error = |c: &Value| {
        (c["predicted"].as_f64().unwrap() - c["recorded"].as_f64().unwrap())
            / c["recorded"].as_f64().unwrap()
    };
    // The first adds up: 1,000 fixed, 50 of summary, 100 of question.
    assert_eq!(checks[0]["recorded"], PROMPTS[3]);
    assert!(error(&checks[0]).abs() < 0.005, "{}", checks[0]);
    // The second misses the 300 tokens the transcript does not hold.
    assert_eq!(checks[1]["recorded"], PROMPTS[4]);
    let expected = -300.0 / PROMPTS[4] as f64;
    assert!(
        (error(&checks[1]) - expected).abs() < 0.005,
        "{}",
        checks[1]
    );
    // The recorded replay's price is held against the recorded bill; the
    // bill check's prediction of the same requests is the same figure.
    let bill = &v["bill"]["sessions"][0];
    assert!(
        (s["recorded_usd"].as_f64().unwrap() - bill["recorded_usd"].as_f64().unwrap()).abs()
            < 1e-12
    );
    println!(
        "hand-made log: recorded ${}, recorded replay ${}, bill check ${}",
        s["recorded_usd"], s["replayed_usd"], bill["predicted_usd"]
    );
    assert!(
        (s["replayed_usd"].as_f64().unwrap() - bill["predicted_usd"].as_f64().unwrap()).abs()
            < 1e-9,
        "{s}\n{bill}"
    );

    // A sweep with the recorded policy: a row like every other policy's.
    let out = tmp.path().join("sweep");
    ok_stderr(common::run(&[
        "sweep".as_ref(),
        projects.as_os_str(),
        "--policy".as_ref(),
        "smith,recorded".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    let rows = read_csv(&out.join("sessions.csv"));
    let policy = rows.column("policy").unwrap().str().unwrap().clone();
    let at = (0..rows.height())
        .find(|&i| policy.get(i) == Some("recorded"))
        .expect("a recorded row");
    assert_eq!(
        column_f64(&rows, "real_tokens_sent")[at],
        PROMPTS.iter().sum::<u64>() as f64
    );
    assert_eq!(column_f64(&rows, "summaries")[at], 2.0);
    assert_eq!(column_f64(&rows, "price_summarizer")[at], 0.0);
}

/// The shared sources, each with the median |price error| per session its
/// recorded replay keeps at the default parts (docs/recorded.md gives the
/// figures; the bound is the figure measured, rounded up, plus half a
/// point).
const PRICE_BOUNDS: [(&str, f64); 8] = [
    ("claude-code/spotter", 0.015),
    ("claude-code/eduardodmb", 0.080),
    ("claude-code/xiaomoziyi", 0.011),
    ("claude-code/4thehalibit", 0.045),
    ("claude-code/kaceybui", 0.040),
    ("codex/msrnic", 0.099),
    ("codex/property-estimator", 0.079),
    ("mini-swe-agent", 0.138),
];

/// On every shared source, the recorded replay sends each session's
/// recorded prompt tokens (median ≤ 0.5%, every session whose transcript
/// holds its whole context within 2%), and its price is the bill check's,
/// session by session (one pricing path), within the source's bound: the
/// figures are printed.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn on_every_shared_source_the_recorded_replay_reproduces_the_recorded_prompt() {
    for (source, bound) in PRICE_BOUNDS {
        let dir = common::shared_data(source);
        let v: Value = serde_json::from_str(&ok(common::run(&[
            "calibrate".as_ref(),
            dir.as_os_str(),
            "--json".as_ref(),
        ])))
        .unwrap();
        let sessions = v["recorded_replay"]["sessions"].as_array().unwrap();
        let mut errors: Vec<f64> = Vec::new();
        let mut price: Vec<f64> = Vec::new();
        let mut bill: Vec<f64> = Vec::new();
        let checks: Vec<f64> = sessions
            .iter()
            .flat_map(|s| s["compaction_checks"].as_array().unwrap().clone())
            .map(|c| {
                (c["predicted"].as_f64().unwrap() - c["recorded"].as_f64().unwrap())
                    / c["recorded"].as_f64().unwrap()
            })
            .collect();
        for s in sessions {
            price.push(s["price_error"].as_f64().unwrap().abs());
            if s.get("incomplete").is_none() {
                let e = s["token_error"].as_f64().unwrap().abs();
                assert!(
                    e <= 0.02,
                    "{source}: {} sends {:+.2}%",
                    s["session"],
                    100.0 * e
                );
                errors.push(e);
            }
        }
        let billed = v["bill"]["sessions"].as_array().unwrap();
        assert_eq!(billed.len(), sessions.len(), "{source}");
        for (s, b) in sessions.iter().zip(billed) {
            assert_eq!(s["session"], b["session"], "{source}");
            assert_eq!(
                s["price_error"], b["error"],
                "{source}: the bill check's figure is the recorded replay's"
            );
            bill.push(b["error"].as_f64().unwrap().abs());
        }
        let median = |v: &mut Vec<f64>| median_of(v).unwrap_or(0.0);
        let worst = checks
            .iter()
            .copied()
            .fold(0.0f64, |a, b| if b.abs() > a.abs() { b } else { a });
        let (t, p, b) = (median(&mut errors), median(&mut price), median(&mut bill));
        println!(
            "{source}: {} sessions ({} whole); prompt tokens median |error| {:.2}%; price median |error| {:.2}% (bill check {:.2}%); {} compactions checked, worst {:+.1}%",
            sessions.len(),
            errors.len(),
            100.0 * t,
            100.0 * p,
            100.0 * b,
            checks.len(),
            100.0 * worst
        );
        assert!(t <= 0.005, "{source}: median token error {t}");
        assert!(p <= bound, "{source}: price median |error| {p}");
    }
}
