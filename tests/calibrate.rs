//! `calibrate`, the command: where smith's engine first compacts, the fit of
//! an imported log, a closed stdout, and the peer policies and the gating
//! loss on the real data in `../shared/data`. Which requests pair with which
//! estimate and the fit are tested inside the crate (`calibrate::fit_tests`).

use crate::common;
use common::{assistant, user};

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smith_calibrate::calibrate;

#[test]
fn the_first_compaction_is_the_first_request_over_the_trigger() {
    // Request k answers (k + 1) × 4000 B of user text and k × 2 B of answers:
    // (k + 1) × 1000 + k / 2 tokens.
    let mut h = Vec::new();
    for _ in 0..10 {
        h.push(user(&"u".repeat(4000)));
        h.push(assistant("ok"));
    }
    // Trigger 0.8 × 5000 = 4000 tokens: request 3 carries 4001.
    let c = calibrate::first_compaction(&h, calibrate::compare_config(5000, 1.0, 0)).unwrap();
    assert_eq!((c.request, c.message_index, c.before), (3, 7, 4001));
    // With 2000 tokens of overhead, request 1 is exactly at the trigger (not
    // over it) and request 2 is the first over.
    let c = calibrate::first_compaction(&h, calibrate::compare_config(5000, 1.0, 2000)).unwrap();
    assert_eq!(c.request, 2);
    assert!(calibrate::first_compaction(&h, calibrate::compare_config(200_000, 1.0, 0)).is_none());
}

/// Writes a Claude Code log of 30 requests under `dir/projects` whose
/// reported prompts are 1.25 × (estimate + 3000), imports it into
/// `dir/out` and returns that directory.
pub(crate) fn imported_log(dir: &Path) -> PathBuf {
    let input = dir.join("projects").join("p").join("s.jsonl");
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    let mut lines = Vec::new();
    let mut bytes = 0u64;
    let mut parent: Option<String> = None;
    let mut push = |v: Value, lines: &mut Vec<String>| {
        let uuid = format!("00000000-0000-4000-8000-{:012x}", lines.len() + 1);
        let mut v = v;
        v["uuid"] = json!(uuid);
        v["parentUuid"] = json!(parent);
        parent = Some(uuid);
        lines.push(v.to_string());
    };
    for i in 0..30u64 {
        let text = "q".repeat(400 + 137 * i as usize);
        bytes += text.len() as u64;
        push(
            json!({"type": "user", "message": {"role": "user", "content": text}}),
            &mut lines,
        );
        let prompt = ((bytes / 4 + 3000) as f64 * 1.25).round() as u64;
        let answer = "a".repeat(96);
        push(
            json!({"type": "assistant", "message": {"id": format!("m{i}"), "role": "assistant", "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": answer}],
                "usage": {"input_tokens": 2, "cache_creation_input_tokens": 100, "cache_read_input_tokens": prompt - 102, "output_tokens": 9}}}),
            &mut lines,
        );
        bytes += answer.len() as u64;
    }
    std::fs::write(&input, lines.join("\n")).unwrap();
    let out = dir.join("out");
    let r = crate::common::bin()
        .args(["import", "claude-code"])
        .arg(dir.join("projects"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    out
}

/// A Claude Code log whose reported prompt sizes are exactly
/// `(estimate + 3000) × 1.25`, imported and calibrated through the binary.
#[test]
fn the_command_fits_an_imported_log_and_prints_the_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let r = crate::common::bin()
        .arg("calibrate")
        .arg(&out)
        .arg("--json")
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    let fit = &v["fits"][0];
    assert_eq!(fit["format"], "claude-code");
    assert_eq!(fit["requests"], 30);
    assert_eq!(fit["flags"], "--ratio 1.25 --overhead 3000");
    assert!(fit["after"]["p95"].as_f64().unwrap() < 0.001, "{fit}");
    assert!(fit["before"]["median"].as_f64().unwrap() > 0.2, "{fit}");
    let text = crate::common::bin()
        .arg("calibrate")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // The whole report, ending in the flags for replay and sweep:
    // --ratio 1.25 --overhead 3000.
    common::assert_fixture(&common::scrub(&text, tmp.path()), "calibrate/fit.txt");

    // smith's own sessions carry no usage per request: nothing to fit.
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(
        plain.join("transcript.jsonl"),
        "{\"role\":\"user\",\"content\":[]}\n",
    )
    .unwrap();
    let r = crate::common::bin()
        .arg("calibrate")
        .arg(&plain)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
}

/// A reader gone before anything was written (`| head`): calibrate and
/// import stop quietly with success instead of reporting a broken pipe.
#[test]
fn a_closed_stdout_ends_calibrate_and_import_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = imported_log(tmp.path());
    let again = tmp.path().join("again");
    let projects = tmp.path().join("projects");
    let runs: [Vec<&std::ffi::OsStr>; 3] = [
        vec!["calibrate".as_ref(), out.as_os_str()],
        vec!["calibrate".as_ref(), out.as_os_str(), "--json".as_ref()],
        vec![
            "import".as_ref(),
            "claude-code".as_ref(),
            projects.as_os_str(),
            "--out".as_ref(),
            again.as_os_str(),
        ],
    ];
    for args in runs {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let r = crate::common::bin()
            .args(&args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(r.status.success(), "{args:?}: {:?} {err}", r.status);
        assert!(!err.contains("smith-calibrate:"), "{args:?}: {err}");
    }
}

// --------------------------------------------------------------- real data

/// `calibrate --json`'s peer-trigger rows for one shared source, by version:
/// (version, compactions, same, earlier, later).
fn peer_triggers(source: &str) -> Vec<(String, u64, u64, u64, u64)> {
    let dir = common::shared_data(source);
    let out = common::ok(common::output(
        common::bin().args(["calibrate", "--json"]).arg(&dir),
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    v["peer_triggers"]["by_version"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (
                r["version"].as_str().unwrap().to_string(),
                n("compactions"),
                n("same"),
                n("early"),
                n("late"),
            )
        })
        .collect()
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_peer_policies_are_held_against_the_agents_own_compactions_per_version() {
    // Claude Code 2.1.39 and later compact 33k below the window, as the
    // `claude-code` policy does: the same request, or one earlier.
    for source in ["claude-code/spotter", "claude-code/eduardodmb"] {
        let rows = peer_triggers(source);
        assert!(!rows.is_empty(), "{source}");
        for (version, n, same, early, late) in rows {
            assert_eq!(late, 0, "{source} {version}");
            assert_eq!(same + early, n, "{source} {version}");
            assert!(same >= early, "{source} {version}");
        }
    }
    // 2.0.76 and 2.1.6 compacted about 44k below it: the policy is later.
    let old = peer_triggers("claude-code/xiaomoziyi");
    let versions: Vec<&str> = old.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(versions, ["2.0.76", "2.1.6"]);
    assert!(old.iter().all(|r| r.4 == r.1 && r.1 > 0), "{old:?}");
    // Codex checks after an answer, within a turn: the policy, checking
    // the request about to go, is earlier.
    let codex = peer_triggers("codex/msrnic");
    assert_eq!(codex, [("0.114.0".to_string(), 2, 0, 2, 0)]);
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_gating_loss_predicts_real_refetches_on_every_source_read_in_place() {
    let sources = [
        "claude-code/spotter",
        "claude-code/eduardodmb",
        "claude-code/xiaomoziyi",
    ];
    let dirs: Vec<std::path::PathBuf> = sources.iter().map(|s| common::shared_data(s)).collect();
    let out = common::ok(common::output(
        common::bin().arg("calibrate").arg("--json").args(&dirs),
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows = v["real_compactions"]["validation"].as_array().unwrap();
    for dir in &dirs {
        // Each folder is its own source, though its logs are read in place.
        let name = dir.to_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r["source"] == name)
            .unwrap_or_else(|| panic!("{name} is not a source: {rows:?}"));
        let refetched = row["refetched"].as_u64().unwrap();
        if refetched < 8 {
            continue;
        }
        let s = &row["still_needed"];
        // No lift: every re-fetch was flagged, none of the rest was.
        let lift = s["lift"].as_f64().unwrap_or(f64::INFINITY);
        let recall = s["recall"].as_f64().unwrap();
        assert!(lift >= 3.0 && recall >= 0.75, "{name}: {s}");
    }
}

/// smith's own sessions record their usage in total: `calibrate` holds each
/// against its replay and fits the ratio and overhead they were billed at.
#[test]
fn calibrate_checks_smiths_recorded_usage_on_the_bundled_sessions() {
    let text = crate::common::ok(
        crate::common::bin()
            .args(["calibrate", "datasets/sessions", "--wide"])
            .output()
            .unwrap(),
    );
    assert!(text.contains("smith's recorded usage"), "{text}");
    assert!(text.contains("anthropic: ratio 1.299"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&crate::common::ok(
        crate::common::bin()
            .args(["calibrate", "datasets/sessions", "--json"])
            .output()
            .unwrap(),
    ))
    .unwrap();
    let sessions = json["usage_check"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 12);
    for s in sessions {
        assert!(s["billed_error"].as_f64().unwrap().abs() < 0.06, "{s}");
        assert!(s["not_whole"].is_null(), "{s}");
    }
}
