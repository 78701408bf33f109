//! The loss measured on real compactions, through the commands: the
//! hand-made log of `test_support::real_compactions` imported, calibrated
//! and replayed; then every compaction of the shared Claude Code logs. Its
//! parts are tested inside the crate (`loss::real_tests`).

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;
use smith_calibrate::loss::refetch::{ResultKind, MODEL};
use smith_calibrate::sweep::figures::Metric;

use common::real_compactions::*;

/// The log of [`write_log`] imported into `dir/imports`, which it returns.
fn imported_log(dir: &Path) -> PathBuf {
    let log = write_log(dir);
    let out = dir.join("imports");
    common::ok(common::run(&[
        "import".as_ref(),
        "claude-code".as_ref(),
        log.parent().unwrap().as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]));
    out
}

#[test]
fn calibrate_prints_and_exports_the_real_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let text = common::ok(common::run(&["calibrate".as_ref(), out.as_os_str()]));
    assert!(text.contains("real compactions: 2"), "{text}");
    assert!(
        text.contains("the loss measure against the real re-fetches"),
        "{text}"
    );
    assert!(
        text.contains("re-fetch model refitted on these logs: 2 compactions"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&common::ok(common::run(&[
        "calibrate".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
    ])))
    .unwrap();
    let r = &json["real_compactions"];
    assert_eq!(r["compactions"].as_array().unwrap().len(), 2);
    assert_eq!(r["compactions"][0]["refetched"], 1);
    assert_eq!(r["validation"][0]["removed"], 5);
    assert_eq!(r["validation"][0]["standin"]["recall"], 1.0);
    assert_eq!(r["bundled_model"]["compactions"], MODEL.compactions);
}

#[test]
fn a_replay_prices_its_expected_refetches() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let session = fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().is_some_and(|n| n == "cc-sess"))
        .unwrap();
    // Masking all but the last result loses the others.
    let json: Value = serde_json::from_str(&common::ok(common::run(&[
        "replay".as_ref(),
        session.as_os_str(),
        "--json".as_ref(),
        "--policy".as_ref(),
        "masking".as_ref(),
        "--mask-window".as_ref(),
        "1".as_ref(),
    ])))
    .unwrap();
    let lost = json["results_lost"].as_u64().unwrap();
    let still = json["still_needed"].as_u64().unwrap();
    let expected = json["refetch_expected"].as_f64().unwrap();
    assert!(lost > 0, "{json}");
    // Each lost result weighs between the model's least and largest rate.
    let rates: Vec<f64> = ResultKind::ALL
        .iter()
        .flat_map(|&k| [MODEL.probability(k, false), MODEL.probability(k, true)])
        .collect();
    let (lo, hi) = rates
        .iter()
        .fold((1.0f64, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
    assert!(
        expected >= lo * lost as f64 - 1e-9 && expected <= hi * lost as f64 + 1e-9,
        "{json}"
    );
    assert!(still <= lost);
    let cost = &json["cost"];
    let total = cost["price_total"].as_f64().unwrap();
    let refetch = cost["price_refetch"].as_f64().unwrap();
    assert_eq!(
        cost["price_with_refetch"].as_f64().unwrap(),
        total + refetch
    );
    assert_eq!(refetch > 0.0, expected > 0.0, "{json}");
    // Both figures are sweep figures, rankable.
    for m in [Metric::RefetchExpected, Metric::PriceWithRefetch] {
        assert!(Metric::rankable().any(|r| r == m), "{m}");
    }
}

/// Every compaction of the shared Claude Code logs appears in `calibrate`,
/// full and micro, and every full one carries its summary.
#[test]
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
fn every_real_compaction_of_the_shared_logs_appears() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    let mut want_full = 0usize;
    let mut want_micro = 0usize;
    for source in ["spotter", "eduardodmb", "xiaomoziyi"] {
        let data = common::shared_data(&format!("claude-code/{source}"));
        for entry in walk(&data) {
            let text = fs::read_to_string(&entry).unwrap_or_default();
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<Value>(line) else {
                    continue;
                };
                if v["type"] == "system" && v["isSidechain"] != true {
                    match v["subtype"].as_str() {
                        Some("compact_boundary") => want_full += 1,
                        Some("microcompact_boundary") => want_micro += 1,
                        _ => {}
                    }
                }
            }
        }
        let out = tmp.path().join(source);
        common::output(
            common::bin()
                .args(["import", "claude-code"])
                .arg(&data)
                .arg("--out")
                .arg(&out),
        );
        dirs.push(out);
    }
    let json: Value = serde_json::from_str(&common::ok(common::run(
        &std::iter::once("calibrate".into())
            .chain(dirs.iter().map(|d| d.as_os_str().to_owned()))
            .chain(std::iter::once("--json".into()))
            .collect::<Vec<std::ffi::OsString>>(),
    )))
    .unwrap();
    let rows = json["real_compactions"]["compactions"].as_array().unwrap();
    let full: Vec<&Value> = rows.iter().filter(|r| r["kind"] == "full").collect();
    let micro = rows.iter().filter(|r| r["kind"] == "microcompact").count();
    assert_eq!(full.len(), want_full);
    assert_eq!(micro, want_micro);
    assert!(full.iter().filter(|r| r["summary_bytes"].is_u64()).count() >= want_full - 1);
    let v = &json["real_compactions"]["validation"];
    let pooled = v.as_array().unwrap().last().unwrap();
    assert_eq!(
        pooled["source"],
        smith_calibrate::commands::real_compactions::POOLED
    );
    assert!(pooled["refetched"].as_u64().unwrap() > 0);
    // The improved measure predicts re-fetches on every source.
    for s in v.as_array().unwrap() {
        if s["refetched"].as_u64().unwrap() > 0 {
            assert!(s["still_needed"]["recall"].as_f64().unwrap() >= 0.8, "{s}");
        }
    }
    assert_eq!(
        json["real_compactions"]["cross_source"]
            .as_array()
            .unwrap()
            .len(),
        6
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
    out
}
