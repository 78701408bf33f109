//! `summary.json` is one typed record (`sweep::summary::Summary`): what a
//! sweep, a shard and a merge write reads back into it and writes out again
//! byte for byte, and every figure (`sweep::figures::Metric`) is a column of
//! the data files.

use std::fs;
use std::path::Path;

use crate::common;
use common::*;
use smith_calibrate::sweep::figures::Metric;
use smith_calibrate::sweep::summary::Summary;

const SESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/sessions");

/// Reads `path` into the record and asserts that writing the record again
/// gives the file's bytes; returns the record.
fn round_trip(path: &Path) -> Summary {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let summary: Summary = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: does not read back: {e}", path.display()));
    let mut again = serde_json::to_string_pretty(&summary).unwrap();
    again.push('\n');
    assert_eq!(again, text, "{}", path.display());
    summary
}

#[test]
fn a_written_summary_reads_back_into_the_record_and_rewrites_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let out_s = out.display().to_string();
    ok(run(&[
        "sweep",
        SESSIONS,
        "--policy",
        "smith,masking,codex",
        "--estimator",
        "bytes4,o200k",
        "--compact-at",
        "0.6,0.8",
        "--rank-by",
        "needed_again",
        "--out",
        &out_s,
        "--jobs",
        "1",
    ]));
    let s = round_trip(&out.join("summary.json"));
    assert_eq!(s.rank_by, Metric::NeededAgain);
    assert_eq!(s.sessions, 12);
    assert_eq!(s.grid.policies.len(), 3);
    assert!(s.shard.is_none());
    let best = s.best.as_ref().unwrap();
    let baseline = s.baseline.as_ref().unwrap();
    assert!(best.delta_vs_baseline.is_some() && baseline.delta_vs_baseline.is_none());
    assert_eq!(best.rank, 1);

    // Each shard's summary (with its `shard` object), and the merge's.
    let sharded = tmp.path().join("sharded");
    let sharded_s = sharded.display().to_string();
    for k in ["1/2", "2/2"] {
        ok(run(&[
            "sweep",
            SESSIONS,
            "--policy",
            "smith,masking",
            "--compact-at",
            "0.6,0.8",
            "--shard",
            k,
            "--out",
            &sharded_s,
            "--jobs",
            "1",
        ]));
    }
    for k in 1..=2 {
        let shard = round_trip(&sharded.join(format!("summaries/shard={k}/summary.json")));
        assert_eq!(shard.shard.map(|r| (r.index, r.count)), Some((k, 2)));
    }
    ok(run(&["merge", &sharded_s]));
    let merged = round_trip(&sharded.join("summary.json"));
    assert!(merged.shard.is_none());
    assert_eq!(merged.sessions, 12);
}

#[test]
fn every_metric_is_a_column_of_both_data_files_and_a_total_of_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    ok(run(&[
        "sweep",
        SESSIONS,
        "--compact-at",
        "0.6,0.8",
        "--out",
        &out.display().to_string(),
        "--jobs",
        "1",
    ]));
    let columns = |file: &str| -> Vec<String> {
        read_csv(&out.join(file))
            .get_column_names()
            .iter()
            .map(|c| c.to_string())
            .collect()
    };
    let (sessions, configs) = (columns("sessions.csv"), columns("configs.csv"));
    for m in Metric::ALL {
        let name = m.name();
        assert!(
            sessions.iter().any(|c| c == name),
            "sessions.csv: no {name}"
        );
        assert!(configs.iter().any(|c| c == name), "configs.csv: no {name}");
        let has = |suffix: &str| configs.iter().any(|c| *c == format!("{name}{suffix}"));
        assert_eq!(has("_delta"), m.delta(), "configs.csv: {name}_delta");
        assert_eq!(has("_mean"), m.stats(), "configs.csv: {name}_mean");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    let totals: Vec<&str> = summary["baseline"]["totals"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(
        totals, names,
        "the totals are every figure, in column order"
    );
}
