//! `calibrate --validate`: every optional part of the price model held
//! against sources it was not fitted on, and `--part` switching one.

use serde_json::Value;

use crate::calibrate::imported_log;
use crate::common;

fn calibrate_json(args: &[&std::ffi::OsStr]) -> Value {
    let out = common::bin()
        .arg("calibrate")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("calibrate --json prints JSON")
}

#[test]
fn each_source_is_held_out_under_every_part() {
    let tmp = tempfile::tempdir().unwrap();
    let a = imported_log(&tmp.path().join("a"));
    let b = imported_log(&tmp.path().join("b"));
    let v = calibrate_json(&[a.as_os_str(), b.as_os_str(), "--validate".as_ref()]);
    let pv = &v["price_validation"];
    assert_eq!(pv["sources"].as_array().unwrap().len(), 2);
    let parts = pv["parts"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["part"].as_str().unwrap()).collect();
    assert!(names.contains(&"rewrite_cause") && names.contains(&"cold_read_share"));
    // The defaults and each part switched, for each source.
    let rows = pv["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2 * (parts.len() + 1));
    for r in rows {
        assert_eq!(r["sessions"], 1, "{r}");
        assert!(r["median_error"].as_f64().unwrap().is_finite());
    }
    // The settings name every part.
    assert_eq!(
        v["bill"]["settings"]["parts"].as_object().unwrap().len(),
        parts.len()
    );
    assert_eq!(v["bill"]["settings"]["parts"]["rewrite_cause"], true);
    assert_eq!(v["bill"]["settings"]["parts"]["shared_cache"], false);
    assert_eq!(v["bill"]["settings"]["parts"]["cold_read_share"], true);
}

#[test]
fn one_source_cannot_be_held_out_and_a_part_switches_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let a = imported_log(&tmp.path().join("a"));
    let out = common::bin()
        .arg("calibrate")
        .arg(&a)
        .arg("--validate")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--validate: one source only"));
    let v = calibrate_json(&[
        a.as_os_str(),
        "--part".as_ref(),
        "rewrite_cause=on".as_ref(),
    ]);
    assert_eq!(v["bill"]["settings"]["parts"]["rewrite_cause"], true);
    let bad = common::bin()
        .arg("calibrate")
        .arg(&a)
        .args(["--part", "rewrite=on"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("NAME one of: shared_cache"), "{err}");
}

/// The defaults are what the held-out table supports: on the shared
/// sources, no single part switched lowers the mean held-out median error.
#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_defaults_are_what_the_held_out_sources_support() {
    let data = common::shared_data("");
    let mut args: Vec<std::ffi::OsString> = Vec::new();
    for sub in ["claude-code", "codex"] {
        for e in std::fs::read_dir(data.join(sub)).unwrap() {
            args.push(e.unwrap().path().into());
        }
    }
    args.push(data.join("mini-swe-agent").into());
    args.sort();
    args.push("--validate".into());
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let v = calibrate_json(&refs);
    let pv = &v["price_validation"];
    assert_eq!(pv["sources"].as_array().unwrap().len(), 8);
    for p in pv["parts"].as_array().unwrap() {
        eprintln!(
            "{:<24} default {:<5} held-out median {:.2}% -> {:.2}% switched",
            p["part"].as_str().unwrap(),
            p["default_on"],
            p["mean_median_default"].as_f64().unwrap() * 100.0,
            p["mean_median_switched"].as_f64().unwrap() * 100.0
        );
        assert_eq!(
            p["supported"], true,
            "switching {} lowers the held-out error: {p}",
            p["part"]
        );
    }
}
