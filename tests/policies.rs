//! The commands with other agents' policies: replay, show and sweep. The
//! policies' own rules are tested inside the crate (`policy_tests`).
#![cfg(feature = "full")]

use crate::common;

use common::policies::write_loss_session;
use common::*;

#[test]
fn replay_with_a_policy_reports_it_and_its_loss() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_loss_session(dir.path());
    let out = bin()
        .args([
            "replay",
            p.to_str().unwrap(),
            "--policy",
            "masking",
            "--mask-window",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["policy"], "masking");
    assert_eq!(v["label"], "masking 120k M1");
    assert_eq!(
        v["results_lost"], 1,
        "c2 is still the newest result at the last request"
    );
    assert_eq!(v["needed_again"], 1);
    assert_eq!(v["refetched"], 1);
    let two = bin()
        .args(["replay", p.to_str().unwrap(), "--policy", "masking,codex"])
        .output()
        .unwrap();
    assert_eq!(two.status.code(), Some(2));
}

#[test]
fn show_at_marks_a_masked_result_as_a_stub() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_loss_session(dir.path());
    let out = bin()
        .args([
            "transcript",
            "show",
            p.to_str().unwrap(),
            "--at",
            "2",
            "--policy",
            "masking",
            "--mask-window",
            "1",
            "--no-pager",
            "--color",
            "never",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("config: masking 120k M1"), "{text}");
    assert!(
        text.contains("at this request: result collapsed to a stub"),
        "{text}"
    );
}

#[test]
fn sweep_with_several_policies_ranks_them_together_and_writes_the_policy_column() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_loss_session(dir.path());
    let out_dir = dir.path().join("out");
    let out = bin()
        .args([
            "sweep",
            p.to_str().unwrap(),
            "--policy",
            "smith,masking,codex",
            "--mask-window",
            "1,2",
            "--rank-by",
            "needed_again",
            "--out",
            out_dir.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = common::sweep_configs(&out.stdout);
    assert_eq!(rows.len(), 4, "baseline, masking M1 and M2, codex");
    let policies: Vec<&str> = rows.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert!(policies.contains(&"masking") && policies.contains(&"codex"));
    let needed: Vec<i64> = rows
        .iter()
        .map(|r| r["needed_again"].as_i64().unwrap())
        .collect();
    assert!(
        needed.windows(2).all(|w| w[0] <= w[1]),
        "ranked by needed_again: {needed:?}"
    );
    let m1 = rows
        .iter()
        .find(|r| r["config_label"] == "masking 120k M1")
        .unwrap();
    assert_eq!(
        (m1["mask_window"].as_i64(), m1["needed_again"].as_i64()),
        (Some(1), Some(1))
    );
    assert!(rows.iter().find(|r| r["policy"] == "codex").unwrap()["mask_window"].is_null());
    let csv = std::fs::read_to_string(out_dir.join("configs.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in [
        "policy",
        "mask_window",
        "clear_keep",
        "needed_again",
        "refetched",
        "results_lost",
    ] {
        assert!(header.split(',').any(|c| c == col), "{col} in {header}");
    }
}
