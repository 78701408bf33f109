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

/// The writer writes exactly the columns of `sweep::columns`, in its
/// order, whatever the sweep varied (a bytes4 sweep at fixed knobs, and one
/// of two estimators, a learned ratio and three policies), in the CSV, the
/// Parquet a shard writes, and `sweep --json`; the readers, which find
/// columns by those names, read every folder back (the report's reader,
/// the merge), and `summary.json` names the schema it follows.
#[test]
fn every_sweep_writes_the_columns_the_readers_name_by_the_column_table() {
    use smith_calibrate::sweep::columns::{self, Col, SCHEMA_VERSION};
    let names = |cols: Vec<columns::Column>| -> Vec<String> {
        cols.into_iter().map(|c| c.name()).collect()
    };
    let (sessions_want, configs_want) = (
        names(columns::sessions_columns()),
        names(columns::configs_columns()),
    );
    let tmp = tempfile::tempdir().unwrap();
    let plain: &[&str] = &["--compact-at", "0.6,0.8"];
    let varied: &[&str] = &[
        "--policy",
        "smith,masking,codex",
        "--estimator",
        "bytes4,o200k",
        "--ratio",
        "1,learn",
    ];
    for (i, flags) in [plain, varied].into_iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        let out_s = out.display().to_string();
        let mut args = vec!["sweep", SESSIONS, "--jobs", "1", "--json", "--out", &out_s];
        args.extend_from_slice(flags);
        let printed = crate::common::sweep_configs(ok(run(&args)).as_bytes());
        let header = |file: &str| -> Vec<String> {
            read_csv(&out.join(file))
                .get_column_names()
                .iter()
                .map(|c| c.to_string())
                .collect()
        };
        assert_eq!(header("sessions.csv"), sessions_want, "{flags:?}");
        assert_eq!(header("configs.csv"), configs_want, "{flags:?}");
        let keys: Vec<String> = printed[0].as_object().unwrap().keys().cloned().collect();
        let mut want = configs_want.clone();
        want.sort();
        let mut keys_sorted = keys;
        keys_sorted.sort();
        assert_eq!(keys_sorted, want, "sweep --json {flags:?}");
        let summary = round_trip(&out.join("summary.json"));
        assert_eq!(summary.schema_version, SCHEMA_VERSION);
        // The report's reader finds every column it needs.
        let read = smith_calibrate::report::data::SweepOutput::read(&out)
            .unwrap_or_else(|e| panic!("{flags:?}: {e:#}"));
        assert_eq!(read.sessions.len(), 12);
    }

    // A shard's part file: the sessions' columns and the ordinal.
    let sharded = tmp.path().join("sharded");
    let sharded_s = sharded.display().to_string();
    for k in ["1/2", "2/2"] {
        ok(run(&[
            "sweep", SESSIONS, "--shard", k, "--out", &sharded_s, "--jobs", "1",
        ]));
    }
    let part = std::fs::File::open(sharded.join("sessions/shard=1/part-0.parquet")).unwrap();
    use polars::prelude::SerReader;
    let part = polars::prelude::ParquetReader::new(part).finish().unwrap();
    let mut want = sessions_want.clone();
    want.push(Col::Ordinal.name().to_string());
    let got: Vec<String> = part
        .get_column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(got, want);
    ok(run(&["merge", &sharded_s]));
    smith_calibrate::report::data::SweepOutput::read(&sharded).expect("the merged folder reads");

    // A summary of another schema is refused, saying so.
    let text = fs::read_to_string(sharded.join("summary.json")).unwrap();
    let other = text.replacen(
        &format!("\"schema_version\": {SCHEMA_VERSION}"),
        "\"schema_version\": 1",
        1,
    );
    assert_ne!(other, text);
    fs::write(sharded.join("summary.json"), other).unwrap();
    let e = smith_calibrate::report::data::SweepOutput::read(&sharded).unwrap_err();
    assert!(format!("{e:#}").contains("schema_version 1"), "{e:#}");
}
