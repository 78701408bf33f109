//! Sharded sweeps: four processes (`--shard 1/4` … `4/4`) and a merge give
//! the outputs of one process, byte for byte but for the timing fields; a
//! merge with a shard missing, or of two different sweeps, refuses.
#![cfg(feature = "full")]

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::process::Output;

use polars::prelude::{ParquetReader, SerReader};
use smith_calibrate::synth::{self, CorpusSpec, SizeSpec};

use crate::common::{
    assert_fixture, assert_text, bin, column_f64, ok_stderr, read_csv, scrub, start_paused, stderr,
    stop, untimed, Stop, DATA_FILES,
};

/// Mixed sessions in two project folders, and one transcript that cannot
/// be read, so the merge has skipped sessions to put back in order too.
fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 15,
        sessions: 24,
        shape: None,
        size: SizeSpec::Range(20_000, 150_000),
    };
    for i in 0..spec.sessions {
        let project = dir.join(format!("proj-{}", i % 2));
        synth::write_session(&project, &spec.session(i)).unwrap();
    }
    let broken = dir.join("proj-1").join("broken");
    fs::create_dir_all(&broken).unwrap();
    fs::write(broken.join("transcript.jsonl"), "not json at all\n").unwrap();
}

const GRID: [&str; 8] = [
    "--compact-at",
    "0.6,0.8",
    "--result-cap",
    "256,1024",
    "--policy",
    "smith,masking",
    "--mask-window",
    "5,10",
];

fn sweep(corpus: &Path, out: &Path, extra: &[&str]) -> Output {
    bin()
        .arg("sweep")
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(GRID)
        .args(["--max-tokens", "30000", "--jobs", "1", "--json"])
        .args(extra)
        .output()
        .unwrap()
}

/// The sweep's data files in `a` and `b`, byte for byte the same (`what`
/// names the two for the message).
fn same_data_files(a: &Path, b: &Path, what: &str) {
    for name in DATA_FILES {
        assert!(
            fs::read(a.join(name)).unwrap() == fs::read(b.join(name)).unwrap(),
            "{name} differs between {what}"
        );
    }
}

fn paths_in(part: &Path) -> Vec<String> {
    let frame = ParquetReader::new(fs::File::open(part).unwrap())
        .finish()
        .unwrap();
    frame
        .column("path")
        .unwrap()
        .str()
        .unwrap()
        .into_iter()
        .map(|p| p.unwrap().to_string())
        .collect()
}

#[test]
fn four_shards_merged_give_the_outputs_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("corpus");
    corpus(&sessions);
    let single = tmp.path().join("single");
    let err = ok_stderr(sweep(&sessions, &single, &[]));
    assert!(err.contains("1 sessions could not be read"), "{err}");

    let sharded = tmp.path().join("sharded");
    let mut seen = BTreeSet::new();
    let mut total_rows = 0;
    for k in 1..=4 {
        let err = ok_stderr(sweep(&sessions, &sharded, &["--shard", &format!("{k}/4")]));
        assert!(err.contains(&format!("shard {k}/4: ")), "{err}");
        let part = sharded.join(format!("sessions/shard={k}/part-0.parquet"));
        let paths = paths_in(&part);
        assert!(!paths.is_empty(), "shard {k} took no session");
        total_rows += paths.len();
        let mine: BTreeSet<String> = paths.into_iter().collect();
        assert!(seen.is_disjoint(&mine), "shard {k} repeats a session");
        seen.extend(mine);
        assert!(sharded
            .join(format!("summaries/shard={k}/summary.json"))
            .is_file());
    }
    assert_eq!(
        seen.len(),
        24,
        "every readable session in exactly one shard"
    );
    assert!(
        !sharded.join("configs.csv").exists(),
        "shards write no configs"
    );

    // `report` on the folder of shards merges it first.
    let report = tmp.path().join("report");
    let err = ok_stderr(
        bin()
            .arg("report")
            .arg(&sharded)
            .arg("--out")
            .arg(&report)
            .output()
            .unwrap(),
    );
    assert!(err.contains("merged 4 shards (24 sessions"), "{err}");
    assert!(report.join("index.html").is_file());

    same_data_files(&single, &sharded, "one process and four shards");
    // The bootstrap's intervals are among what the merge recomputes, and
    // they are drawn, not left empty.
    let configs = crate::common::read_csv(&sharded.join("configs.csv"));
    let lo = crate::common::column_f64(&configs, "objective_delta_lo");
    let hi = crate::common::column_f64(&configs, "objective_delta_hi");
    assert!(lo.iter().zip(&hi).all(|(l, h)| l <= h));
    assert!(
        lo.iter().zip(&hi).any(|(l, h)| l < h),
        "some config's interval is drawn"
    );
    let rows = fs::read_to_string(single.join("sessions.csv"))
        .unwrap()
        .lines()
        .count()
        - 1;
    assert_eq!(rows, total_rows, "the merged rows are the shards' rows");
    assert_eq!(
        untimed(&single.join("summary.json")),
        untimed(&sharded.join("summary.json"))
    );
    let summary = fs::read_to_string(sharded.join("summary.json")).unwrap();
    assert!(summary.contains("\"sessions_skipped\": 1"), "{summary}");

    // The report of the merged shards is the single run's, file for file.
    let single_report = tmp.path().join("single-report");
    ok_stderr(
        bin()
            .arg("report")
            .arg(&single)
            .arg("--out")
            .arg(&single_report)
            .output()
            .unwrap(),
    );
    let files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (a, b) = (files(&single_report), files(&report));
    assert!(
        a.len() > 3,
        "{:?}",
        a.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(
        a.iter().map(|f| &f.0).collect::<Vec<_>>(),
        b.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        // The page names the folder it was drawn from; nothing else differs.
        let x = if name == "index.html" {
            String::from_utf8(x.clone())
                .unwrap()
                .replace(
                    &single.display().to_string(),
                    &sharded.display().to_string(),
                )
                .into_bytes()
        } else {
            x.clone()
        };
        assert!(&x == y, "report file {name} differs");
    }

    // `merge` again, into another folder: the same files.
    let again = tmp.path().join("again");
    ok_stderr(
        bin()
            .arg("merge")
            .arg(&sharded)
            .arg("--out")
            .arg(&again)
            .output()
            .unwrap(),
    );
    same_data_files(&again, &sharded, "the two merges");
}

#[test]
fn a_merge_with_a_shard_missing_or_of_two_sweeps_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("corpus");
    corpus(&sessions);
    let out = tmp.path().join("out");
    for k in [1, 3] {
        ok_stderr(sweep(&sessions, &out, &["--shard", &format!("{k}/3")]));
    }
    let o = bin().arg("merge").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_text(&scrub(&err, tmp.path()), "smith-calibrate: <DIR>/out: shard 2 of 3 has not finished (no summaries/shard=K/summary.json); run it, then merge again\n");
    assert!(!out.join("configs.csv").exists());

    // Shard 2 of another grid: refused, naming both summaries.
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .arg("--out")
        .arg(&out)
        .args(["--shard", "2/3", "--compact-at", "0.7", "--jobs", "1"])
        .output()
        .unwrap();
    ok_stderr(o);
    let o = bin().arg("merge").arg(&out).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_fixture(&scrub(&err, tmp.path()), "shard/different_sweeps.stderr");
}

#[test]
fn shard_flags_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("corpus");
    corpus(&sessions);
    let out = tmp.path().join("out");
    for (args, fixture) in [
        (vec!["--shard", "5/4"], "shard/out_of_range.stderr"),
        (
            vec!["--shard", "auto"],
            "shard/auto_outside_an_array.stderr",
        ),
    ] {
        let o = bin()
            .arg("sweep")
            .arg(&sessions)
            .arg("--out")
            .arg(&out)
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_fixture(&scrub(&err, tmp.path()), fixture);
    }
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .args(["--shard", "1/2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_text(&stderr(&o), "smith-calibrate: --shard needs --out DIR (the folder every shard writes into) and no --report: draw the report after `merge DIR`\n");

    // A Slurm array task 7 of 0-7 is shard 8 of 8.
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .arg("--out")
        .arg(&out)
        .args(["--shard", "auto", "--jobs", "1"])
        .env("SLURM_ARRAY_TASK_ID", "7")
        .env("SLURM_ARRAY_TASK_MIN", "0")
        .env("SLURM_ARRAY_TASK_MAX", "7")
        .env("SLURM_ARRAY_TASK_COUNT", "8")
        .output()
        .unwrap();
    let err = ok_stderr(o);
    assert!(err.contains("shard 8/8: "), "{err}");
    assert!(out.join("sessions/shard=8/part-0.parquet").is_file());
}

#[test]
fn more_shards_than_sessions_still_merge_to_the_single_run() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("corpus");
    let spec = CorpusSpec {
        seed: 3,
        sessions: 3,
        shape: None,
        size: SizeSpec::Fixed(20_000),
    };
    for i in 0..spec.sessions {
        synth::write_session(&sessions, &spec.session(i)).unwrap();
    }
    let single = tmp.path().join("single");
    ok_stderr(sweep(&sessions, &single, &[]));
    let sharded = tmp.path().join("sharded");
    let mut empty = 0;
    for k in 1..=8 {
        // Through the journal too: a shard resumes into its own journal.
        let err = ok_stderr(sweep(
            &sessions,
            &sharded,
            &["--shard", &format!("{k}/8"), "--resume"],
        ));
        if err.contains(&format!("shard {k}/8: 0 of the 3 sessions")) {
            empty += 1;
        }
    }
    assert!(empty >= 5, "3 sessions leave at least 5 of 8 shards empty");
    assert!(
        !sharded.join(".resume").exists(),
        "finished shards keep no journal"
    );
    ok_stderr(bin().arg("merge").arg(&sharded).output().unwrap());
    same_data_files(&single, &sharded, "one process and the merged shards");
    assert_eq!(
        untimed(&single.join("summary.json")),
        untimed(&sharded.join("summary.json"))
    );
}

/// One process, and 1 to 8 shards merged: the same files, byte for byte
/// (summary.json but for its timing fields). In the sweep of 3 shards, one
/// shard is killed after its first session, at the point it signals, and
/// resumed from its journal.
#[test]
fn any_number_of_shards_merged_give_the_outputs_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("corpus");
    corpus(&sessions);
    let single = tmp.path().join("single");
    ok_stderr(sweep(&sessions, &single, &[]));
    let rows = read_csv(&single.join("sessions.csv"));
    for figure in ["compactions", "misfire_repeated", "results_lost", "price"] {
        assert!(
            column_f64(&rows, figure).iter().any(|&v| v > 0.0),
            "{figure} is 0 in every row: the test would not see it lost"
        );
    }
    for n in 1..=8 {
        let sharded = tmp.path().join(format!("sharded-{n}"));
        for k in 1..=n {
            let shard = format!("{k}/{n}");
            if n == 3 && k == 2 {
                let mut c = bin();
                c.arg("sweep")
                    .arg(&sessions)
                    .arg("--out")
                    .arg(&sharded)
                    .args(GRID)
                    .args(["--max-tokens", "30000", "--jobs", "1", "--json"])
                    .args(["--shard", &shard, "--resume"]);
                let (child, err) = start_paused(c, 1);
                let (code, _) = stop(child, err, Stop::Kill);
                assert_eq!(code, None, "killed");
                let err = ok_stderr(sweep(&sessions, &sharded, &["--shard", &shard, "--resume"]));
                assert!(err.contains("resuming: 1 of "), "{err}");
            } else {
                ok_stderr(sweep(&sessions, &sharded, &["--shard", &shard]));
            }
        }
        let err = ok_stderr(bin().arg("merge").arg(&sharded).output().unwrap());
        assert!(err.contains(&format!("merged {n} shards")), "{err}");
        same_data_files(&single, &sharded, &format!("one process and {n} shards"));
        assert_eq!(
            untimed(&single.join("summary.json")),
            untimed(&sharded.join("summary.json")),
            "{n} shards"
        );
    }
}
