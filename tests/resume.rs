//! `sweep --resume`: a real sweep killed with SIGKILL midway, then resumed,
//! writes the same outputs as a sweep never interrupted; a changed sweep
//! refuses to resume.
#![cfg(feature = "full")]

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use smith_calibrate::sweep::journal;
use smith_calibrate::synth::{self, CorpusSpec, Shape, SizeSpec};

use crate::common::{assert_fixture, bin, ok_stderr, scrub};

const SESSIONS: usize = 40;

/// Long sessions that compact often under the grid below, so each takes a
/// while and the sweep is still running when the journal has its first
/// rows.
fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 7,
        sessions: SESSIONS,
        shape: Some(Shape::Long),
        size: SizeSpec::Fixed(500_000),
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
        .args(["--jobs", "1", "--json"])
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
/// lines.
fn outputs(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut bytes = fs::read(e.path()).unwrap();
            if name == "summary.json" {
                let text = String::from_utf8(bytes).unwrap();
                bytes = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("\"elapsed_seconds\""))
                    .collect::<Vec<_>>()
                    .join("\n")
                    .into_bytes();
            }
            (name, bytes)
        })
        .collect()
}

#[test]
fn a_sweep_killed_midway_resumes_to_the_outputs_of_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    corpus(&sessions);

    let whole = tmp.path().join("whole");
    ok_stderr(sweep(&sessions, &whole, &GRID, &[]).output().unwrap());

    let out = tmp.path().join("out");
    let journal_file = journal::dir_for(&out, None).join(journal::JOURNAL);
    let mut child = sweep(&sessions, &out, &GRID, &["--resume"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while journal::count_records(&journal_file) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no session journaled"
        );
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended early");
        sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs.
    child.wait().unwrap();
    let kept = journal::count_records(&journal_file);
    eprintln!("killed with {kept} of {SESSIONS} sessions journaled");
    assert!(
        kept > 0 && kept < SESSIONS,
        "killed midway: {kept} of {SESSIONS} sessions journaled"
    );
    assert!(
        !out.join("sessions.csv").exists() && !out.join("summary.json").exists(),
        "no output before the sweep is done"
    );
    // A record the kill cut short: half a header and payload.
    let mut f = OpenOptions::new().append(true).open(&journal_file).unwrap();
    f.write_all(&[200, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, b'{', b'"'])
        .unwrap();
    drop(f);

    // Another grid, or other prices: refused, the journal untouched.
    let before = fs::read(&journal_file).unwrap();
    // Each refusal whole: it cannot resume, saying why (the grid or the
    // policies changed; --price was 3,3.75,0.3, now 3,3.75,0.5).
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
        assert_fixture(&scrub(&err, tmp.path()), fixture);
    }
    assert_eq!(fs::read(&journal_file).unwrap(), before);

    let err = ok_stderr(
        sweep(&sessions, &out, &GRID, &["--resume"])
            .output()
            .unwrap(),
    );
    assert!(
        err.contains(&format!(
            "resuming: {kept} of {SESSIONS} sessions were finished before; replaying the other {}",
            SESSIONS - kept
        )) && err.contains("dropped 14 bytes"),
        "{err}"
    );
    assert!(
        !out.join(journal::DIR).exists(),
        "the journal is removed once done"
    );
    let (a, b) = (outputs(&whole), outputs(&out));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(bytes == &b[name], "{name} differs after resuming");
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
    let prices: smith_calibrate::sweep::Prices = "3,3.75,0.3".parse().unwrap();
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
