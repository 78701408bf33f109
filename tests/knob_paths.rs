//! Every policy knob of the knob table, each at a value other than its
//! default, and both of smith's engines, through every path a sweep's
//! configs take: the command line,
//! the plan, every exporter (CSV, Parquet, `sweep --json`, `summary.json`),
//! the resume journal, a sharded sweep merged, and the report's reading of
//! the folder. The knobs and their values come from the table, so a knob
//! added to it is checked here without a line of this file changing, and
//! a path that leaves one out fails.
#![cfg(feature = "full")]

use std::fs;
use std::path::Path;
use std::process::Command;

use polars::prelude::{DataFrame, DataType, ParquetReader, SerReader};
use serde_json::Value as Json;
use smith_calibrate::policy::{Knobs, Policy, PolicyKnob, Value};
use smith_calibrate::synth::{self, CorpusSpec, SizeSpec};

use crate::common::{
    bin, ok_stderr, read_csv, start_paused, stop, sweep_configs, untimed, Stop, DATA_FILES,
};

const SESSIONS: usize = 6;

fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 21,
        sessions: SESSIONS,
        shape: None,
        size: SizeSpec::Range(20_000, 80_000),
    };
    for i in 0..spec.sessions {
        let project = dir.join(format!("proj-{}", i % 2));
        synth::write_session(&project, &spec.session(i)).unwrap();
    }
}

/// A value of `k` other than its default that it accepts.
fn other(k: PolicyKnob) -> Value {
    let v = match k.get(&Knobs::default()) {
        Value::Names(_) => Value::Names(vec!["Memory".into(), "todo".into()]),
        Value::Number(d) if k.is_integer() => Value::Number(d + 1.0),
        Value::Number(0.0) => Value::Number(0.5),
        Value::Number(d) => Value::Number(d / 2.0),
    };
    k.check(&v).unwrap();
    v
}

/// Every policy, and every policy knob at [`other`].
fn args() -> Vec<String> {
    let mut a = vec![
        "--policy".to_string(),
        Policy::names().replace(' ', ""),
        "--max-tokens".into(),
        "30000".into(),
    ];
    for k in PolicyKnob::ALL {
        a.push(format!("--{}", k.flag()));
        a.push(other(k).to_string());
    }
    a.push("--engine".into());
    a.push(ENGINES.into());
    a
}

/// smith's engines, both swept.
const ENGINES: &str = "0.4,next";

/// smith's rows of `frame` name each engine, by name, and no other.
fn both_engines_in(frame: &DataFrame, what: &str) {
    let policies = cells(frame, "policy", true);
    let engines: std::collections::BTreeSet<String> = cells(frame, "engine", true)
        .iter()
        .zip(&policies)
        .filter(|(_, p)| p.as_str() == Some("smith"))
        .map(|(e, _)| e.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        engines.into_iter().collect::<Vec<_>>().join(","),
        ENGINES,
        "{what}: the engine column"
    );
}

fn sweep(corpus: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = bin();
    c.arg("sweep")
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(args())
        .args(["--jobs", "1"])
        .args(extra);
    c
}

/// Whether a cell holds `v`: a number, or names as the files write them.
fn holds(cell: &Json, v: &Value) -> bool {
    match v {
        Value::Number(x) => cell.as_f64() == Some(*x),
        Value::Names(n) => cell.as_str() == Some(n.join(",").as_str()),
    }
}

/// The column `name` of `frame` as JSON cells.
fn cells(frame: &DataFrame, name: &str, names: bool) -> Vec<Json> {
    let column = frame
        .column(name)
        .unwrap_or_else(|_| panic!("no column {name}"));
    if names {
        column
            .str()
            .unwrap()
            .into_iter()
            .map(|v| Json::from(v.unwrap_or_default()))
            .collect()
    } else {
        column
            .cast(&DataType::Float64)
            .unwrap()
            .f64()
            .unwrap()
            .into_iter()
            .map(|v| v.map_or(Json::Null, Json::from))
            .collect()
    }
}

/// Every knob's column in `frame` holds its value in some row of its
/// policy, and nothing else in the rows of its policy but its default.
fn every_knob_in(frame: &DataFrame, what: &str) {
    let policies = cells(frame, "policy", true);
    for k in PolicyKnob::ALL {
        let v = other(k);
        let names = matches!(v, Value::Names(_));
        let column = cells(frame, &k.field(), names);
        let default = k.get(&Knobs::default());
        let mine: Vec<&Json> = column
            .iter()
            .zip(&policies)
            .filter(|(_, p)| p.as_str() == Some(k.policy().as_str()))
            .map(|(c, _)| c)
            .collect();
        assert!(
            mine.iter().any(|c| holds(c, &v)),
            "{what}: {} never holds {v} in a {} row",
            k.field(),
            k.policy()
        );
        assert!(
            mine.iter().all(|c| holds(c, &v) || holds(c, &default)),
            "{what}: {}: {mine:?}",
            k.field()
        );
    }
}

/// The data files and summary of `dir`, summary.json without its timing
/// lines.
fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = DATA_FILES
        .into_iter()
        .map(|name| (name.to_string(), fs::read(dir.join(name)).unwrap()))
        .collect();
    out.push((
        "summary.json".to_string(),
        untimed(&dir.join("summary.json")).into_bytes(),
    ));
    out
}

#[test]
fn every_policy_knob_and_the_engine_survive_every_exporter_the_journal_a_merge_and_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    corpus(&sessions);
    let whole = tmp.path().join("whole");
    let o = sweep(&sessions, &whole, &["--json"]).output().unwrap();
    let json = String::from_utf8(o.stdout.clone()).unwrap();
    ok_stderr(o);

    // Every exporter.
    for name in ["configs.csv", "sessions.csv"] {
        every_knob_in(&read_csv(&whole.join(name)), name);
        both_engines_in(&read_csv(&whole.join(name)), name);
    }
    for name in ["configs.parquet", "sessions.parquet"] {
        let frame = ParquetReader::new(fs::File::open(whole.join(name)).unwrap())
            .finish()
            .unwrap();
        every_knob_in(&frame, name);
        both_engines_in(&frame, name);
    }
    let labels: Vec<String> = sweep_configs(json.as_bytes())
        .iter()
        .filter(|r| r["policy"] == "smith")
        .map(|r| format!("{} {}", r["engine"], r["config_label"]))
        .collect();
    assert!(
        labels
            .iter()
            .all(|l| l.starts_with("\"next\"") == l.contains(" engine next")),
        "sweep --json: engine and label agree: {labels:?}"
    );
    let rows = sweep_configs(json.as_bytes());
    for k in PolicyKnob::ALL {
        let v = other(k);
        assert!(
            rows.iter()
                .any(|r| r["policy"] == k.policy().as_str() && holds(&r[k.field()], &v)),
            "sweep --json: {} never holds {v}",
            k.field()
        );
    }
    let summary: Json =
        serde_json::from_str(&fs::read_to_string(whole.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["grid"]["axes"]["engine"],
        serde_json::json!(["0.4", "next"]),
        "summary.json: the engine axis"
    );
    for k in PolicyKnob::ALL {
        let axis = summary["grid"]["policy_axes"][k.field()]
            .as_array()
            .unwrap_or_else(|| panic!("summary.json: no axis {}", k.field()))
            .clone();
        let v = other(k);
        let found = axis.iter().any(|a| match (&v, a) {
            (Value::Names(n), Json::Array(a)) => a
                .iter()
                .map(|t| t.as_str())
                .eq(n.iter().map(|t| Some(t.as_str()))),
            (Value::Number(x), a) => a.as_f64() == Some(*x),
            _ => false,
        });
        assert!(found, "summary.json: {} {axis:?} lacks {v}", k.field());
    }

    // The report reads every config's setup back from the files: the same
    // label as the sweep's, and every knob's value.
    let read = smith_calibrate::report::data::SweepOutput::read(&whole).unwrap();
    for c in &read.configs {
        assert_eq!(c.setup.label(), c.label, "config {}", c.index);
    }
    for k in PolicyKnob::ALL {
        let v = other(k);
        assert!(
            read.configs
                .iter()
                .any(|c| c.setup.policy == k.policy() && k.get(&c.setup.knobs) == v),
            "the report read no config with {} at {v}",
            k.field()
        );
    }
    assert!(
        read.configs
            .iter()
            .any(|c| c.config.engine == smith_calibrate::engine::EngineVersion::Next),
        "the report read no config of engine next"
    );
    let expected = outputs(&whole);

    // Two shards merged: the same files.
    let sharded = tmp.path().join("sharded");
    for k in 1..=2 {
        ok_stderr(
            sweep(&sessions, &sharded, &["--shard", &format!("{k}/2")])
                .output()
                .unwrap(),
        );
    }
    ok_stderr(bin().arg("merge").arg(&sharded).output().unwrap());
    for (name, bytes) in &expected {
        if name != "summary.json" {
            assert!(
                bytes == &fs::read(sharded.join(name)).unwrap(),
                "{name} differs after a merge"
            );
        }
    }

    // Killed after two sessions, then resumed from the journal: the same
    // files.
    let resumed = tmp.path().join("resumed");
    let (child, err) = start_paused(sweep(&sessions, &resumed, &["--resume"]), 2);
    let (code, _) = stop(child, err, Stop::Kill);
    assert_eq!(code, None);
    let err = ok_stderr(sweep(&sessions, &resumed, &["--resume"]).output().unwrap());
    assert!(err.contains("resuming: 2 of 6 sessions"), "{err}");
    let got = outputs(&resumed);
    for ((name, a), (_, b)) in expected.iter().zip(&got) {
        assert!(a == b, "{name} differs after resuming");
    }
}
