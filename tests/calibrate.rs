//! `calibrate`: which requests pair with which estimate, the fit, and where
//! smith's engine first compacts; then the fit on the real Claude Code and
//! mini-swe-agent data in `../shared/data`.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use smith_calibrate::calibrate::{self, Excluded, Point, RATIO_MAX, RATIO_MIN};
use smith_calibrate::import::{self, claude_code, mini_swe_agent};
use smith_calibrate::transcript::session_file::{CompactBoundary, RequestUsage, SessionFile};
use smith_calibrate::transcript::{estimate_tokens, Block, Message, Role};

fn msg(role: Role, text: &str) -> Arc<Message> {
    Arc::new(Message::new(
        role,
        vec![Block::text(text.as_bytes().to_vec())],
        false,
        None,
    ))
}

fn usage(message_index: usize, prompt: u64) -> RequestUsage {
    RequestUsage {
        message_index,
        input_tokens: 1,
        cache_creation_input_tokens: 9,
        cache_read_input_tokens: prompt - 10,
        output_tokens: 5,
        model: None,
    }
}

/// user (400 B), assistant (40 B), user (800 B), assistant (40 B),
/// user (1200 B), assistant (40 B).
fn history() -> Vec<Arc<Message>> {
    vec![
        msg(Role::User, &"u".repeat(400)),
        msg(Role::Assistant, &"a".repeat(40)),
        msg(Role::User, &"u".repeat(800)),
        msg(Role::Assistant, &"a".repeat(40)),
        msg(Role::User, &"u".repeat(1200)),
        msg(Role::Assistant, &"a".repeat(40)),
    ]
}

fn file(requests: Vec<RequestUsage>) -> SessionFile {
    let mut f = SessionFile::default();
    f.id = "s".into();
    f.requests = requests;
    f
}

#[test]
fn each_request_pairs_with_the_estimate_of_every_message_before_it() {
    let h = history();
    let f = file(vec![usage(1, 5000), usage(3, 6000), usage(5, 7000)]);
    let p = calibrate::points(&h, &f).unwrap();
    let got: Vec<(u64, u64, usize)> = p
        .iter()
        .map(|p| (p.estimate, p.reported, p.message_index))
        .collect();
    assert_eq!(got, vec![(100, 5000, 1), (310, 6000, 3), (620, 7000, 5)]);
    assert_eq!(p[2].estimate, estimate_tokens(&h[..5]));
}

#[test]
fn after_the_agents_own_compaction_the_context_is_its_summary_and_what_follows() {
    let h = history();
    let mut f = file(vec![usage(1, 5000), usage(3, 6000), usage(5, 7000)]);
    f.compact_boundaries = vec![CompactBoundary {
        message_index: 2,
        requests_before: 1,
        pre_tokens: Some(9000),
        trigger: Some("auto".into()),
        summary_bytes: Some(2000),
        line: 7,
        ..CompactBoundary::default()
    }];
    let p = calibrate::points(&h, &f).unwrap();
    let estimates: Vec<u64> = p.iter().map(|p| p.estimate).collect();
    // 2000 B of summary + the 800 B user message, then + 40 + 1200.
    assert_eq!(estimates, vec![100, 700, 1010]);
    // An unknown summary size leaves the requests after it out.
    f.compact_boundaries[0].summary_bytes = None;
    assert_eq!(calibrate::points(&h, &f).unwrap().len(), 1);
}

#[test]
fn sessions_whose_context_is_not_known_give_no_points() {
    let h = history();
    let mut f = file(vec![usage(1, 5000)]);
    f.context_complete = false;
    assert_eq!(calibrate::points(&h, &f), Err(Excluded::ContextIncomplete));
    assert_eq!(calibrate::points(&h, &file(vec![])), Err(Excluded::NoUsage));
    // A request that does not point at an assistant message is ignored.
    assert_eq!(
        calibrate::points(&h, &file(vec![usage(2, 100)])),
        Err(Excluded::NoUsage)
    );
}

#[test]
fn the_fit_recovers_ratio_and_overhead_and_says_how_far_off_the_defaults_were() {
    let points: Vec<Point> = (1..200u64)
        .map(|i| {
            let estimate = i * 700;
            let noise = [0.98, 1.0, 1.03, 1.0, 0.99][i as usize % 5];
            Point {
                estimate,
                reported: ((estimate + 12_000) as f64 * 1.3 * noise) as u64,
                message_index: i as usize,
            }
        })
        .collect();
    let f = calibrate::fit(&points).unwrap();
    assert!((f.ratio - 1.3).abs() <= 0.01, "{f:?}");
    assert!((f.overhead_tokens as i64 - 12_000).abs() <= 300, "{f:?}");
    let before = calibrate::errors(&points, 1.0, 0);
    let after = calibrate::errors(&points, f.ratio, f.overhead_tokens);
    assert!(before.median > 0.3 && before.bias < -0.3, "{before:?}");
    assert!(after.median < 0.02 && after.p95 <= 0.035, "{after:?}");
}

#[test]
fn the_first_compaction_is_the_first_request_over_the_trigger() {
    // Request k answers (k + 1) × 4000 B of user text and k × 2 B of answers:
    // (k + 1) × 1000 + k / 2 tokens.
    let mut h = Vec::new();
    for _ in 0..10 {
        h.push(msg(Role::User, &"u".repeat(4000)));
        h.push(msg(Role::Assistant, "ok"));
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
            json!({"type": "assistant", "message": {"id": format!("m{i}"), "role": "assistant", "model": "claude-x",
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

/// A session read back from disk: its messages and its `session.json`.
type Loaded = (Vec<Arc<Message>>, SessionFile);

/// Imports `files` and returns every point and the sessions, read back from
/// disk the way `calibrate` reads them.
fn imported_points(
    files: &[PathBuf],
    convert: impl Fn(&Path) -> anyhow::Result<import::ImportedSession> + Sync,
) -> (Vec<Point>, Vec<Loaded>) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    import::import_files(files, &out, convert).unwrap();
    let mut points = Vec::new();
    let mut sessions = Vec::new();
    for r in smith_calibrate::transcript::resolve_all(&[out.display().to_string()]).unwrap() {
        let s = smith_calibrate::transcript::load(&r).unwrap();
        let f = SessionFile::from_meta(s.meta.as_ref().unwrap().raw.as_ref().unwrap()).unwrap();
        if let Ok(p) = calibrate::points(&s.messages, &f) {
            points.extend(p);
        }
        sessions.push((s.messages, f));
    }
    (points, sessions)
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_fit_on_the_real_claude_code_logs_is_within_smiths_bounds() {
    let dir = common::shared_data("claude-code");
    let files = import::find_files(
        &dir,
        Path::new("/nonexistent"),
        &claude_code::is_session_log,
    )
    .unwrap();
    let (points, sessions) = imported_points(&files, |f| Ok(claude_code::import_file(f)?));
    // The compaction requests continue their parent's context: left out,
    // as are the sessions whose log continues a conversation recorded
    // elsewhere (a source whose files were renamed or joined).
    let compaction = |f: &SessionFile| {
        f.source
            .agent_id
            .as_deref()
            .is_some_and(|a| a.starts_with("acompact"))
    };
    assert!(
        sessions.iter().any(|(_, f)| compaction(f)),
        "the sources have compaction agents"
    );
    for (_, f) in &sessions {
        if compaction(f) {
            assert!(!f.context_complete, "{}", f.id);
        }
        if !f.context_complete {
            assert!(f.context_note.is_some(), "{}", f.id);
        }
    }
    assert!(points.len() > 500, "{} points", points.len());
    let fit = calibrate::fit(&points).unwrap();
    assert!((RATIO_MIN..=RATIO_MAX).contains(&fit.ratio), "{fit:?}");
    assert!(fit.constrained.is_none(), "{fit:?}");
    // Claude Code's system prompt and tools are some ten to thirty thousand
    // tokens (the first request of a session reports ~25k with a few bytes
    // of history).
    assert!((10_000..=30_000).contains(&fit.overhead_tokens), "{fit:?}");
    let before = calibrate::errors(&points, 1.0, 0);
    let after = calibrate::errors(&points, fit.ratio, fit.overhead_tokens);
    assert!(after.median < before.median / 3.0, "{before:?} {after:?}");
    assert!(after.p95 < before.p95, "{before:?} {after:?}");

    // Claude Code compacts by itself near 167k tokens; with the fit, smith
    // under a 200k window (trigger 160k) first compacts a few requests from
    // there. A manual /compact comes earlier than either.
    let (mut auto, mut unreached) = (0usize, 0usize);
    for (messages, f) in sessions
        .iter()
        // A log that continues a conversation recorded elsewhere (renamed
        // or joined files) starts above where its estimate does.
        .filter(|(_, f)| f.full_compactions().next().is_some() && f.context_complete)
    {
        // The first compaction that replaced the history (a micro-compaction
        // only clears old results).
        let Some(real) = f.full_compactions().next() else {
            continue;
        };
        let smith = calibrate::first_compaction(
            messages,
            calibrate::compare_config(200_000, fit.ratio, fit.overhead_tokens),
        );
        let Some(smith) = smith else {
            // A manual /compact can come before the window fills; an
            // automatic one below smith's trigger is counted below.
            if real.trigger.as_deref() == Some("auto") {
                println!(
                    "{}: Claude Code compacted by itself, smith never reaches its trigger",
                    f.id
                );
                unreached += 1;
            }
            continue;
        };
        auto += usize::from(real.trigger.as_deref() == Some("auto"));
        // Measured on spotter's sessions (Claude Code 2.1.39); the other
        // sources' versions compact elsewhere, and are printed.
        let measured = f.source.path.contains("/spotter/");
        if real.trigger.as_deref() == Some("auto") {
            let apart = smith.request.abs_diff(real.requests_before);
            if !measured {
                println!(
                    "{}: Claude Code at request {}, smith at {}",
                    f.id, real.requests_before, smith.request
                );
                continue;
            }
            assert!(
                apart <= 25,
                "{}: Claude Code at request {}, smith at {}",
                f.id,
                real.requests_before,
                smith.request
            );
        } else {
            assert!(smith.request > real.requests_before, "{}", f.id);
        }
        // Uncalibrated, smith notices the window filling later, if at all.
        let blind =
            calibrate::first_compaction(messages, calibrate::compare_config(200_000, 1.0, 0));
        assert!(blind.is_none_or(|c| c.request > smith.request), "{}", f.id);
    }
    // Four in five sessions Claude Code compacted by itself go over smith's
    // trigger too (all of spotter's; logs that join sessions or start
    // mid-conversation need not).
    assert!(
        unreached * 5 <= auto + unreached,
        "{unreached} of {}",
        auto + unreached
    );
    println!(
        "claude-code: {} points, ratio {} overhead {} (free {:.4} / {:.0}); median/p95 error {:.1}%/{:.1}% before, {:.1}%/{:.1}% after",
        points.len(),
        fit.ratio,
        fit.overhead_tokens,
        fit.free_ratio,
        fit.free_overhead,
        before.median * 100.0,
        before.p95 * 100.0,
        after.median * 100.0,
        after.p95 * 100.0
    );
}

#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]
#[test]
fn the_fit_on_the_real_mini_swe_agent_run_improves_the_estimate() {
    let dir = common::shared_data("mini-swe-agent/gemini-3-pro-swebench-verified");
    let files = import::find_files(
        &dir,
        Path::new("/nonexistent"),
        &mini_swe_agent::is_trajectory,
    )
    .unwrap();
    let (points, sessions) = imported_points(&files, |f| {
        mini_swe_agent::import_file(f, None, mini_swe_agent::Options::default())
    });
    assert_eq!(sessions.len(), 500);
    let requests: usize = sessions.iter().map(|(_, f)| f.requests.len()).sum();
    assert_eq!(points.len(), requests);
    let fit = calibrate::fit(&points).unwrap();
    assert!((RATIO_MIN..=RATIO_MAX).contains(&fit.ratio), "{fit:?}");
    let before = calibrate::errors(&points, 1.0, 0);
    let after = calibrate::errors(&points, fit.ratio, fit.overhead_tokens);
    assert!(after.median < before.median / 2.0, "{before:?} {after:?}");
    println!(
        "mini-swe-agent: {} points, ratio {} overhead {} (free {:.4} / {:.0}); median/p95 error {:.1}%/{:.1}% before, {:.1}%/{:.1}% after",
        points.len(),
        fit.ratio,
        fit.overhead_tokens,
        fit.free_ratio,
        fit.free_overhead,
        before.median * 100.0,
        before.p95 * 100.0,
        after.median * 100.0,
        after.p95 * 100.0
    );
}

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
