//! smith's learned ratio replayed (`--ratio learn`), the ratio and overhead a
//! session chooses when the flags leave them to it, and the misfire of a
//! compaction that summarises only its previous summary.

use std::fs;
use std::path::Path;

use serde_json::Value;
use smith_calibrate::engine::Config;
use smith_calibrate::replay;
use smith_calibrate::synth::{self, SessionSpec, Shape};

use crate::common::{assistant, bin, ok, user, write_session};

/// Three requests of 100, 300 and 500 history tokens (every message 400
/// bytes), billed 300, 600 and 900 prompt tokens.
fn hand_made(dir: &Path, context_ratio: Option<f64>) -> std::path::PathBuf {
    let text = "x".repeat(400);
    let messages = [
        user(&text),
        assistant(&text),
        user(&text),
        assistant(&text),
        user(&text),
        assistant(&text),
    ];
    let transcript = write_session(dir, "hand", &messages);
    let mut meta = serde_json::json!({
        "id": "hand",
        "source": {"format": "claude-code", "path": "hand.jsonl"},
        "context_complete": true,
        "requests": [
            {"message_index": 1, "input_tokens": 300},
            {"message_index": 3, "input_tokens": 500, "cache_read_input_tokens": 100},
            {"message_index": 5, "input_tokens": 900},
        ],
    });
    if let Some(r) = context_ratio {
        meta["context_ratio"] = r.into();
    }
    let dir = transcript.parent().unwrap().to_path_buf();
    fs::write(dir.join("session.json"), meta.to_string()).unwrap();
    dir
}

fn trace(args: &[&str]) -> Vec<Value> {
    ok(bin()
        .arg("replay")
        .args(args)
        .arg("--trace")
        .output()
        .unwrap())
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

fn summary(args: &[&str]) -> Value {
    serde_json::from_str(&ok(bin()
        .arg("replay")
        .args(args)
        .arg("--json")
        .output()
        .unwrap()))
    .unwrap()
}

#[test]
fn smiths_recalibration_is_replayed_request_by_request() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = hand_made(tmp.path(), None);
    let d = dir.to_str().unwrap();
    let lines = trace(&[d, "--ratio", "learn", "--overhead", "100"]);
    // smith: observed = billed / (history + overhead), the ratio moves 30%
    // of the way there, and is in force from the next request.
    let r0 = 1.0;
    let r1 = r0 + (300.0 / (100.0 + 100.0) - r0) * 0.3;
    let r2 = r1 + (600.0 / (300.0 + 100.0) - r1) * 0.3;
    assert_eq!(r1, 1.15);
    let ratios: Vec<f64> = lines.iter().map(|l| l["ratio"].as_f64().unwrap()).collect();
    assert_eq!(ratios, vec![r0, r1, r2]);
    // Each request charged at its own ratio, rounded half to even.
    let before: Vec<i64> = lines
        .iter()
        .map(|l| l["before"].as_i64().unwrap())
        .collect();
    assert_eq!(
        before,
        vec![
            200,
            ((300.0 + 100.0) * r1).round_ties_even() as i64,
            ((500.0 + 100.0) * r2).round_ties_even() as i64
        ]
    );
    assert_eq!(before[1], 460);

    // From the context_ratio the session saved.
    let saved = hand_made(&tmp.path().join("saved"), Some(1.4));
    let lines = trace(&[
        saved.to_str().unwrap(),
        "--ratio",
        "learn",
        "--overhead",
        "100",
    ]);
    let s1 = 1.4 + (1.5 - 1.4) * 0.3;
    let s2 = s1 + (1.5 - s1) * 0.3;
    let ratios: Vec<f64> = lines.iter().map(|l| l["ratio"].as_f64().unwrap()).collect();
    assert_eq!(ratios, vec![1.4, s1, s2]);

    // Clamped to smith's bounds: billed far above, then far below.
    assert_eq!(
        smith_calibrate::engine::learn::recalibrate(1.9, 100, 1000),
        2.0
    );
    assert_eq!(
        smith_calibrate::engine::learn::recalibrate(1.1, 100, 10),
        1.0
    );
}

#[test]
fn an_imported_session_learns_by_default_with_its_fitted_overhead() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = hand_made(tmp.path(), None);
    let d = dir.to_str().unwrap();
    let s = summary(&[d]);
    // The three requests lie on 1.5 × (history + 100): the fit's overhead.
    assert_eq!(s["calibration"]["ratio_mode"], "learned");
    assert_eq!(s["calibration"]["overhead_mode"], "fitted");
    assert_eq!(s["calibration"]["overhead_tokens"], 100);
    assert_eq!(s["calibration"]["observations"], 3);
    assert_eq!(s["label"], "120k 0.80/0.50 cap512 w3 oh100 rlearn");
    // Flags win: the replay is the one of before, and says nothing new.
    let plain = summary(&[d, "--ratio", "1", "--overhead", "0"]);
    assert!(plain.get("calibration").is_none(), "{plain}");
    assert_eq!(plain["label"], "120k 0.80/0.50 cap512 w3");
}

#[test]
fn explicit_ratio_1_and_overhead_0_replay_as_before_sessions_could_choose() {
    let tmp = tempfile::tempdir().unwrap();
    // An imported session, and the same transcript with no session.json:
    // what every replay of it was before.
    let dir = hand_made(tmp.path(), Some(1.7));
    let bare = tmp.path().join("bare");
    fs::create_dir_all(&bare).unwrap();
    fs::copy(dir.join("transcript.jsonl"), bare.join("transcript.jsonl")).unwrap();
    let flags = ["--ratio", "1", "--overhead", "0"];
    let t = |p: &Path, extra: &[&str]| {
        ok(bin()
            .arg("replay")
            .arg(p)
            .args(extra)
            .arg("--trace")
            .output()
            .unwrap())
    };
    // The imported session's trace adds the provider's count of each
    // request; the engine's own keys are those of the bare transcript.
    let engine_keys = |trace: String| -> Vec<serde_json::Value> {
        trace
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                let o = v.as_object_mut().unwrap();
                for k in ["real_after", "real_read", "real_write", "overflow"] {
                    assert!(o.remove(k).is_some(), "{k} missing from {l}");
                }
                v
            })
            .collect()
    };
    let bare_trace: Vec<serde_json::Value> = t(&bare, &[])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(engine_keys(t(&dir, &flags)), bare_trace);
    assert_ne!(engine_keys(t(&dir, &[])), bare_trace);

    // A smith session of the bundled data with a context_ratio saved.
    let src = Path::new("datasets/sessions/session-1753333600-68c254");
    let smith = tmp.path().join("smith");
    fs::create_dir_all(&smith).unwrap();
    fs::copy(src.join("transcript.jsonl"), smith.join("transcript.jsonl")).unwrap();
    let mut meta: Value =
        serde_json::from_str(&fs::read_to_string(src.join("session.json")).unwrap()).unwrap();
    meta["context_ratio"] = 1.5.into();
    fs::write(smith.join("session.json"), meta.to_string()).unwrap();
    let window = ["--max-tokens", "32000"];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { [&window[..], extra].concat() };
    assert_eq!(t(&smith, &with(&flags)), t(src, &window));
    let history = |p: &Path, extra: &[&str]| {
        ok(bin()
            .arg("replay")
            .arg(p)
            .args(extra)
            .args(["--emit-history-at", "30"])
            .output()
            .unwrap())
    };
    assert_eq!(history(&smith, &with(&flags)), history(src, &window));
    // Without --ratio it replays at the ratio it saved, and says so.
    let s = summary(&[smith.to_str().unwrap(), "--max-tokens", "32000"]);
    assert_eq!(s["calibration"]["ratio_mode"], "saved");
    assert_eq!(s["config"]["ratio"], 1.5);
    assert_ne!(t(&smith, &window), t(src, &window));
}

#[test]
fn learn_works_in_sweep_show_and_the_session_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = hand_made(tmp.path(), None);
    let out = tmp.path().join("out");
    ok(bin()
        .args(["sweep", "--ratio", "1,learn", "--overhead", "100", "--out"])
        .arg(&out)
        .arg(&dir)
        .output()
        .unwrap());
    let configs = fs::read_to_string(out.join("configs.csv")).unwrap();
    assert!(
        configs.lines().next().unwrap().contains("ratio_mode"),
        "{configs}"
    );
    assert!(configs.contains("rlearn"), "{configs}");
    let sessions = fs::read_to_string(out.join("sessions.csv")).unwrap();
    assert!(sessions.contains(",learned,"), "{sessions}");
    let summary: Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["calibration"]["ratio_learned"], 1);

    let shown = ok(bin()
        .args(["transcript", "show"])
        .arg(&dir)
        .args(["--at", "2", "--ratio", "learn"])
        .output()
        .unwrap());
    assert!(!shown.is_empty());
    let page = tmp.path().join("page.html");
    ok(bin()
        .args(["transcript", "show"])
        .arg(&dir)
        .args(["--ratio", "learn", "--html"])
        .arg(&page)
        .output()
        .unwrap());
    assert!(fs::read_to_string(&page).unwrap().contains("ratio learned"));
    // A ratio of 0 is still no ratio.
    let o = bin()
        .arg("replay")
        .arg(&dir)
        .args(["--ratio", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn one_long_agentic_turn_summarises_its_own_summary_under_smiths_defaults() {
    let messages = synth::generate_history(25, SessionSpec::of_mb(Shape::Agentic, 0.8));
    let facts = replay::replay(
        &messages,
        &smith_calibrate::engine::Engine::new(Config::default()),
    );
    assert!(facts.summaries >= 2, "{facts:?}");
    assert!(facts.misfire_resummarized >= 1, "{facts:?}");
    let found: Vec<_> = facts
        .counted_misfires()
        .filter(|m| m.kind == replay::MisfireKind::Resummarized)
        .collect();
    assert_eq!(found.len() as u64, facts.misfire_resummarized);
    // Each one bought no room: the summary replaced a summary.
    assert!(found.iter().all(|m| m.after >= m.before), "{found:?}");
    // Reproducible from the seed.
    assert_eq!(
        synth::transcript_bytes(25, SessionSpec::of_mb(Shape::Agentic, 0.8)),
        synth::transcript_bytes(25, SessionSpec::of_mb(Shape::Agentic, 0.8))
    );
}

#[test]
fn the_table_says_which_ratio_and_overhead_the_rows_used_when_not_the_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = crate::direct::projects(tmp.path());
    let sweep = |extra: &[&str]| {
        let o = crate::common::output(
            crate::common::bin()
                .arg("sweep")
                .arg(&projects)
                .args(["--compact-at", "0.7,0.8"])
                .args(extra),
        );
        assert!(o.status.success(), "{}", crate::common::stderr(&o));
        crate::common::stdout(&o)
    };
    let own = sweep(&[]);
    // 3 sessions under the recorded run and two smith configs.
    let line = own
        .lines()
        .find(|l| l.starts_with("ratio and overhead: "))
        .unwrap_or_else(|| panic!("{own}"));
    assert_eq!(
        line,
        "ratio and overhead: each session's own where the grid left them, not the config label's: of 9 rows, 9 at the ratio learned as smith learns it, 0 at the ratio the session saved, 9 with the overhead fitted on the session's requests."
    );
    // Given, the knobs are the label's, and nothing is said.
    let given = sweep(&["--ratio", "1.2", "--overhead", "100"]);
    assert!(!given.contains("ratio and overhead: "), "{given}");
}
