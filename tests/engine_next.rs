//! `--engine`: smith after #118 beside smith 0.4, as a user runs them.

use crate::common::{bin, ok, write_session};
use crate::test_support::engines::{changelog_session, CHANGELOG_FLAGS};

/// The trace lines of `replay --trace` on the changelog session under
/// `engine`.
fn trace(engine: &str) -> Vec<serde_json::Value> {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_session(tmp.path(), "s", &changelog_session());
    let out = ok(bin()
        .arg("replay")
        .arg(&path)
        .args(CHANGELOG_FLAGS)
        .args(["--engine", engine, "--trace"])
        .output()
        .unwrap());
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn replay_engine_next_reproduces_smiths_changelog_and_0_4_summarizes_as_before() {
    let next = trace("next");
    let last = next.last().unwrap();
    assert_eq!(last["before"], 60_212);
    assert_eq!(last["after"], 34_249);
    assert_eq!(last["strategy"], "truncated");
    assert_eq!(last["stages"], serde_json::json!(["truncate"]));
    assert_eq!(last["results_truncated"], 14);
    assert_eq!(last["messages_summarized"], 0);
    assert!(last.get("summary").is_none(), "no summarizer call: {last}");
    let old = trace("0.4");
    let last = old.last().unwrap();
    assert_eq!(last["before"], 60_212);
    assert_eq!(last["strategy"], "summarized");
    assert_eq!(last["messages_summarized"], 2);
    assert_eq!(old[..old.len() - 1], next[..next.len() - 1]);
}

#[test]
fn an_unknown_engine_is_refused_naming_the_engines() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_session(tmp.path(), "s", &changelog_session());
    for (cmd, value) in [("replay", "0.5"), ("sweep", "0.4,nxt"), ("replay", "1")] {
        let o = bin()
            .arg(cmd)
            .arg(&path)
            .args(["--engine", value])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd} --engine {value}: {err}");
        assert!(err.contains("0.4, next"), "{cmd} --engine {value}: {err}");
    }
}

#[test]
fn sweep_ranks_both_engines_side_by_side_against_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    write_session(tmp.path(), "s", &changelog_session());
    let out = ok(bin()
        .arg("sweep")
        .arg(tmp.path())
        .args(CHANGELOG_FLAGS)
        .args(["--engine", "0.4,next", "--json"])
        .output()
        .unwrap());
    let rows = crate::common::sweep_configs(out.as_bytes());
    let row = |label: &str| {
        rows.iter()
            .find(|r| r["config_label"] == label)
            .unwrap_or_else(|| panic!("no row {label}: {rows:?}"))
    };
    // The baseline is smith's defaults under the first engine given.
    let baseline = row("120k 0.80/0.50 cap512 w3");
    assert_eq!(baseline["is_baseline"], true);
    assert_eq!(baseline["engine"], "0.4");
    let old = row("70k 0.85/0.50 cap512 w3");
    let next = row("70k 0.85/0.50 cap512 w3 engine next");
    assert_eq!(
        (old["engine"].as_str(), next["engine"].as_str()),
        (Some("0.4"), Some("next"))
    );
    assert_eq!(
        (old["summaries"].as_u64(), next["summaries"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        (
            old["results_truncated"].as_u64(),
            next["results_truncated"].as_u64()
        ),
        (Some(0), Some(14))
    );
    // The fix's effect is the difference of the two rows' changes.
    let delta = |r: &serde_json::Value| r["summaries_delta"].as_f64().unwrap();
    assert_eq!(delta(next) - delta(old), -1.0);
}
