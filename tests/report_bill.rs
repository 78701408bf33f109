//! The report's "How far to trust the price" section: on imported sessions
//! with recorded usage it shows the figures `calibrate --json` gives for the
//! same sessions; on smith's own sessions it says in one line that there is
//! no bill to check.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smith_calibrate::format::{money, percent, signed_percent};

use crate::common::{assert_fixture, ok, run};

/// A Claude Code log of `turns` requests whose recorded usage grows, with a
/// cold cache after a long pause halfway.
fn claude_log(dir: &Path, id: &str, turns: usize, seed: u64) -> PathBuf {
    let mut lines = Vec::new();
    let mut cached = 0u64;
    for t in 0..turns {
        let minute = if t < turns / 2 { t } else { t + 20 };
        lines.push(
            json!({"type": "user", "uuid": format!("00000000-0000-4000-8000-{:012}", 2 * t),
                   "sessionId": id, "timestamp": format!("2026-02-10T21:{minute:02}:00.000Z"),
                   "message": {"role": "user", "content": "x".repeat(4000 + 700 * t + seed as usize)}})
            .to_string(),
        );
        let written = 1200 + 180 * t as u64 + seed;
        let (read, write) = if t == turns / 2 {
            (0, cached + written)
        } else {
            (cached, written)
        };
        cached += written;
        lines.push(
            json!({"type": "assistant", "uuid": format!("00000000-0000-4000-8000-{:012}", 2 * t + 1),
                   "sessionId": id, "timestamp": format!("2026-02-10T21:{minute:02}:05.000Z"),
                   "message": {"id": format!("msg_{id}_{t}"), "role": "assistant", "model": "claude-sonnet-4-5",
                               "content": [{"type": "text", "text": "ok ".repeat(50)}],
                               "usage": {"input_tokens": 3, "cache_read_input_tokens": read,
                                         "cache_creation_input_tokens": write, "output_tokens": 60}}})
            .to_string(),
        );
    }
    let path = dir.join(format!("{id}.jsonl"));
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

fn section(html: &str) -> &str {
    let start = html
        .find("<section id=\"trust\">")
        .expect("the section is there");
    let end = start + html[start..].find("</section>").unwrap();
    &html[start..end]
}

#[test]
fn the_report_checks_imported_sessions_bill_as_calibrate_does() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let a = claude_log(&logs, "aaaa", 8, 0);
    let b = claude_log(&logs, "bbbb", 12, 37);
    let imported = tmp.path().join("imported");
    let (a, b, imported_s) = (
        a.display().to_string(),
        b.display().to_string(),
        imported.display().to_string(),
    );
    ok(run(&[
        "import",
        "claude-code",
        &a,
        &b,
        "--out",
        &imported_s,
    ]));
    let v: Value = serde_json::from_str(&ok(run(&["calibrate", &imported_s, "--json"]))).unwrap();
    let s = &v["bill"]["summary"][0];
    let report = tmp.path().join("report");
    let report_s = report.display().to_string();
    ok(run(&[
        "sweep",
        &imported_s,
        "--compact-at",
        "0.6,0.8",
        "--report",
        &report_s,
    ]));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let sec = section(&html);
    // Before any ranking.
    assert!(html.find("<section id=\"trust\">") < html.find("id=\"configs\""));
    let f = |k: &str| s[k].as_f64().unwrap_or_else(|| panic!("{k}: {s}"));
    let row = format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        s["format"].as_str().unwrap(),
        s["sessions"],
        s["requests"],
        money(f("recorded_usd")),
        money(f("predicted_usd")),
        signed_percent(f("total_error")),
        percent(f("median_error")),
        percent(f("p95_error")),
    );
    assert!(sec.contains(&row), "{row}\nnot in\n{sec}");
    assert_eq!(s["sessions"], 2);
    assert!(sec.contains("as <code>calibrate</code> fits it"), "{sec}");
    assert!(
        sec.contains(&signed_percent(s["worst"]["error"].as_f64().unwrap())),
        "{sec}"
    );
    for (cause, m) in s["misses"].as_object().unwrap() {
        let shown = format!("{cause}: {}", m["cache_write"]);
        assert!(sec.contains(&shown), "{shown} not in {sec}");
    }
    assert!(!s["misses"].as_object().unwrap().is_empty());
    // The shares of the account's cache beyond the log the check priced
    // by, per kind of session, as calibrate counts them.
    for u in s["unlogged"].as_array().unwrap() {
        let w = &u["warm_elsewhere"];
        let shown = format!("{} sessions", u["kind"].as_str().unwrap());
        assert!(sec.contains(&shown), "{shown} not in {sec}");
        let shown = format!("{} of {} requests", w["events"], w["seen"]);
        assert!(sec.contains(&shown), "{shown} not in {sec}");
    }
    assert!(!s["unlogged"].as_array().unwrap().is_empty());
}

#[test]
fn a_sweep_of_smith_sessions_checks_their_recorded_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report");
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    ok(run(&[
        "sweep",
        &datasets.display().to_string(),
        "--compact-at",
        "0.6,0.8",
        "--report",
        &report.display().to_string(),
    ]));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    let sec = section(&html);
    assert!(!sec.contains("bill-none"), "{sec}");
    assert!(
        sec.contains("smith's own sessions record the tokens"),
        "{sec}"
    );
    assert_eq!(sec.matches("</td></tr>").count(), 12, "{sec}");
    assert!(
        sec.contains("anthropic: ratio 1.2994, overhead 2404"),
        "{sec}"
    );
}

#[test]
fn a_sweep_of_sessions_without_usage_says_there_is_no_bill_to_check() {
    let tmp = tempfile::tempdir().unwrap();
    let (sessions, report) = (tmp.path().join("sessions"), tmp.path().join("report"));
    crate::common::write_session(
        &sessions,
        "s",
        &[crate::common::user("hello"), crate::common::assistant("hi")],
    );
    ok(run(&[
        "sweep",
        &sessions.display().to_string(),
        "--report",
        &report.display().to_string(),
    ]));
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    // One line saying there is no bill to check, and no table.
    assert_fixture(section(&html), "report_bill/no_usage_section.html");
}
