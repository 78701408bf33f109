//! One decision: on the same sessions and grid, the verdict `sweep` writes
//! and prints, the config its table marks, `recommend`'s verdict and the
//! report's headline are one and the same.

use std::fs;
use std::path::Path;

use serde_json::Value;
use smith_calibrate::commands::recommend::{DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO};
use smith_calibrate::format::escape_html;

use crate::common::*;

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");

/// Runs `sweep` (with its report) and `recommend` over `sessions` under
/// `recommend`'s own grid, and checks that every output gives the one
/// verdict; returns it.
fn one_verdict(sessions: &Path) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let (swept, report, recommended) = (
        tmp.path().join("sweep"),
        tmp.path().join("report"),
        tmp.path().join("recommend"),
    );
    let grid = [
        "--compact-at",
        DEFAULT_COMPACT_AT,
        "--compact-to",
        DEFAULT_COMPACT_TO,
    ];
    let table = ok(output(
        bin()
            .arg("sweep")
            .arg(sessions)
            .args(grid)
            .args(["--top", "1000"])
            .arg("--out")
            .arg(&swept)
            .arg("--report")
            .arg(&report),
    ));
    let printed = ok(output(
        bin()
            .arg("recommend")
            .arg(sessions)
            .arg("--json")
            .arg("--out")
            .arg(&recommended),
    ));
    let read = |p: &Path| -> Value { serde_json::from_slice(&fs::read(p).unwrap()).unwrap() };
    let from_sweep = read(&swept.join("verdict.json"));
    let from_recommend: Value = serde_json::from_str(&printed).unwrap();
    // recommend also decides under smith's other engine, in a line of its
    // own; the verdict is the sweep's.
    let mut decided = from_recommend.clone();
    let other = decided
        .as_object_mut()
        .unwrap()
        .remove("other_engine")
        .expect("recommend says what the other engine would choose");
    assert_eq!(other["engine"], "next");
    assert!(
        other["line"]
            .as_str()
            .unwrap()
            .starts_with("under --engine next"),
        "{other}"
    );
    assert_eq!(from_sweep["engine"], "0.4");
    assert_eq!(
        from_sweep,
        decided,
        "sweep and recommend decide differently on {}",
        sessions.display()
    );
    assert_eq!(read(&recommended.join("verdict.json")), from_recommend);

    let sentence = from_sweep["sentence"].as_str().unwrap();
    assert!(
        table.contains(&format!("Verdict: {sentence}")),
        "the sweep prints its verdict:\n{table}"
    );
    // The table marks the chosen config, and only it; none when the
    // verdict keeps the baseline.
    let marked: Vec<&str> = table
        .lines()
        .filter(|l| l.split('┆').nth(3).is_some_and(|m| m.contains("chosen")))
        .collect();
    match from_sweep["chosen"]["label"].as_str() {
        Some(label) => {
            assert_eq!(marked.len(), 1, "{table}");
            assert!(marked[0].contains(label.split(' ').nth(1).unwrap()));
        }
        None => assert!(marked.is_empty(), "{table}"),
    }
    let page = fs::read_to_string(report.join("index.html")).unwrap();
    assert!(
        page.contains(&format!(
            "Verdict: <strong>{}</strong>",
            escape_html(sentence)
        )),
        "the report's headline is the verdict"
    );
    if from_sweep["change"] == true {
        assert!(page.contains("The recommended config against the baseline"));
    } else {
        assert!(!page.contains("The recommended config against the baseline"));
    }
    from_sweep
}

#[test]
fn sweep_recommend_and_report_give_one_verdict_on_the_bundled_sessions() {
    let v = one_verdict(Path::new(SESSIONS));
    assert_eq!(v["loss_measure"], "still_needed");
    assert_eq!(v["objective"], "price_with_refetch");
}

#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn sweep_recommend_and_report_give_one_verdict_on_every_shared_claude_code_source() {
    for source in [
        "spotter",
        "eduardodmb",
        "xiaomoziyi",
        "4thehalibit",
        "kaceybui",
    ] {
        one_verdict(&shared_data(&format!("claude-code/{source}")));
    }
}
