//! `sweep --resume`: a real sweep stopped at a point it signals itself
//! (before the first session, after one, half, all but one), by SIGKILL or
//! Ctrl-C, then resumed, writes the same outputs and the same report as a
//! sweep never interrupted, byte for byte; a changed sweep refuses to
//! resume. The sweep says where it stands through `--test-pause-after`, so
//! no test guesses with a sleep how far it got.
#![cfg(feature = "full")]

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::Command;

use smith_calibrate::sweep::journal;
use smith_calibrate::synth::{self, CorpusSpec, Shape, SizeSpec};

use crate::common::{
    assert_fixture, bin, column_f64, ok_stderr, read_csv, scrub, start_paused, stop, Stop,
};

const SESSIONS: usize = 8;

/// Long sessions that compact often, and soon after one another, under the
/// window and grid below: every figure moves, the misfires' too.
fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 7,
        sessions: SESSIONS,
        shape: Some(Shape::Long),
        size: SizeSpec::Fixed(150_000),
    };
    for i in 0..spec.sessions {
        synth::write_session(dir, &spec.session(i)).unwrap();
    }
}

fn sweep(corpus: &Path, out: &Path, grid: &[&str], extra: &[&str]) -> Command {
    let mut c = bin();
    c.arg("sweep")
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(grid)
        .args([
            "--max-tokens",
            "16000",
            "--thrash-window",
            "5",
            "--jobs",
            "1",
            "--json",
        ])
        .args(extra);
    c
}

const GRID: [&str; 6] = [
    "--compact-at",
    "0.5..0.95:0.05",
    "--compact-to",
    "0.2,0.4",
    "--result-cap",
    "256,1024",
];

/// The files of `dir` (not its folders), summary.json without its timing
/// lines, the report's page with `data` written as `DATA`: the page names
/// the folder it was drawn from.
fn outputs(dir: &Path, data: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
                continue;
            }
            let name = e.path().strip_prefix(dir).unwrap().display().to_string();
            let mut bytes = fs::read(e.path()).unwrap();
            if name == "summary.json" {
                let text = String::from_utf8(bytes).unwrap();
                bytes = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("\"elapsed_seconds\""))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes();
            } else if name.ends_with(".html") {
                let text = String::from_utf8(bytes).unwrap();
                bytes = text
                    .replace(&data.display().to_string(), "DATA")
                    .into_bytes();
            }
            files.insert(name, bytes);
        }
    }
    files
}

#[test]
fn a_sweep_stopped_at_any_session_resumes_to_the_outputs_of_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    corpus(&sessions);

    let whole = tmp.path().join("whole");
    let whole_report = tmp.path().join("whole-report");
    let mut c = sweep(&sessions, &whole, &GRID, &["--report"]);
    c.arg(&whole_report);
    ok_stderr(c.output().unwrap());
    // Every kind of figure moves in this sweep, the one a resume once lost
    // (misfire_repeated, counted from where each misfire happened) too.
    let rows = read_csv(&whole.join("sessions.csv"));
    for figure in ["compactions", "misfire_repeated", "results_lost", "price"] {
        assert!(
            column_f64(&rows, figure).iter().any(|&v| v > 0.0),
            "{figure} is 0 in every row: the test would not see it lost"
        );
    }
    let expected = outputs(&whole, &whole);
    let expected_report = outputs(&whole_report, &whole);
    assert!(expected_report.contains_key("index.html"));

    let half = SESSIONS / 2;
    let points = [
        (0, Stop::Kill),
        (1, Stop::Kill),
        (1, Stop::CtrlC),
        (half, Stop::Kill),
        (SESSIONS - 1, Stop::Kill),
        (SESSIONS - 1, Stop::CtrlC),
    ];
    for (n, how) in points {
        let what = format!("stopped by {how:?} after {n} sessions");
        let out = tmp.path().join(format!("out-{n}-{how:?}"));
        let report = tmp.path().join(format!("report-{n}-{how:?}"));
        let journal_file = journal::dir_for(&out, None).join(journal::JOURNAL);
        let (child, err) = start_paused(sweep(&sessions, &out, &GRID, &["--resume"]), n);
        let (code, said) = stop(child, err, how);
        match how {
            Stop::Kill => assert_eq!(code, None, "{what}: killed by the signal"),
            Stop::CtrlC => {
                assert_eq!(code, Some(130), "{what}: {said}");
                assert!(
                    said.contains(&format!("interrupted after {n} of {SESSIONS} sessions"))
                        && said.contains("run the same command with --resume to continue"),
                    "{what}: {said}"
                );
            }
        }
        assert_eq!(
            journal::count_records(&journal_file),
            n,
            "{what}: every finished session journaled, and no other"
        );
        assert!(
            !out.join("sessions.csv").exists() && !out.join("summary.json").exists(),
            "{what}: no output before the sweep is done"
        );

        let mut dropped = String::new();
        if n == half {
            // A record the kill cut short: half a header and payload.
            let mut f = OpenOptions::new().append(true).open(&journal_file).unwrap();
            f.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, b'{', b'"'])
                .unwrap();
            drop(f);
            dropped = " (dropped 14 bytes of a record cut short)".into();

            // Another grid, or other prices: refused, the journal untouched.
            let before = fs::read(&journal_file).unwrap();
            for (grid, fixture) in [
                (&["--window", "2"][..], "resume/other_grid.stderr"),
                (&["--price", "3,3.75,0.5"][..], "resume/other_prices.stderr"),
            ] {
                let mut args: Vec<&str> = GRID.to_vec();
                args.extend_from_slice(grid);
                let o = sweep(&sessions, &out, &args, &["--resume"])
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert_eq!(o.status.code(), Some(2), "{err}");
                assert_fixture(
                    &scrub(&err, tmp.path()).replace(&format!("out-{n}-{how:?}"), "out"),
                    fixture,
                );
            }
            assert_eq!(fs::read(&journal_file).unwrap(), before);
        }

        let mut c = sweep(&sessions, &out, &GRID, &["--resume", "--report"]);
        c.arg(&report);
        let err = ok_stderr(c.output().unwrap());
        assert!(
            err.contains(&format!(
                "resuming: {n} of {SESSIONS} sessions were finished before; replaying the other {}{dropped}\n",
                SESSIONS - n
            )),
            "{what}: {err}"
        );
        assert!(
            !out.join(journal::DIR).exists(),
            "{what}: the journal is removed once done"
        );
        let got = outputs(&out, &out);
        assert_eq!(
            expected.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{what}"
        );
        for (name, bytes) in &expected {
            assert!(bytes == &got[name], "{what}: {name} differs after resuming");
        }
        let got = outputs(&report, &out);
        assert_eq!(
            expected_report.keys().collect::<Vec<_>>(),
            got.keys().collect::<Vec<_>>(),
            "{what}"
        );
        for (name, bytes) in &expected_report {
            assert!(
                bytes == &got[name],
                "{what}: the report's {name} differs after resuming"
            );
        }
    }
}

#[test]
fn a_changed_input_refuses_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    let spec = CorpusSpec {
        seed: 8,
        sessions: 3,
        shape: None,
        size: SizeSpec::Fixed(20_000),
    };
    for i in 0..spec.sessions {
        synth::write_session(&sessions, &spec.session(i)).unwrap();
    }
    let out = tmp.path().join("out");
    // Leave a journal as an interrupted sweep would: start, then grow a
    // transcript before resuming.
    let dir = journal::dir_for(&out, None);
    let refs = smith_calibrate::transcript::resolve(sessions.to_str().unwrap()).unwrap();
    let setups = vec![smith_calibrate::policy::Setup::smith(Default::default())];
    let prices: smith_calibrate::cost::Prices = "3,3.75,0.3".parse().unwrap();
    let manifest = journal::Manifest::new(&refs, &setups, &prices, None);
    journal::Journal::open(&dir, &manifest, &refs, 1).unwrap();
    let mut f = OpenOptions::new()
        .append(true)
        .open(&refs[1].transcript)
        .unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    let o = bin()
        .arg("sweep")
        .arg(&sessions)
        .arg("--out")
        .arg(&out)
        .arg("--resume")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_fixture(&scrub(&err, tmp.path()), "resume/transcript_changed.stderr");
}
