//! Ctrl-C during a real sweep: the run stops, says so, exits 130, and the
//! output folder holds either the previous outputs, byte for byte, or none;
//! never a half-written file or a leftover temporary.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use smith_calibrate::synth::{self, CorpusSpec, Shape, SizeSpec};

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    match fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap())
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    fs::read(e.path()).unwrap(),
                )
            })
            .collect(),
        Err(_) => BTreeMap::new(),
    }
}

/// Enough long sessions that a debug sweep of the grid below takes many
/// seconds.
fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 99,
        sessions: 40,
        shape: Some(Shape::Long),
        size: SizeSpec::Fixed(1_000_000),
    };
    for i in 0..spec.sessions {
        synth::write_session(dir, &spec.session(i)).unwrap();
    }
}

fn sweep(corpus: &Path, out: &Path, grid: &[&str]) -> Command {
    let mut c = crate::common::bin();
    c.arg("sweep")
        .arg(corpus)
        .arg("--out")
        .arg(out)
        .args(grid)
        .args(["--jobs", "1"]);
    c
}

/// Starts a long sweep, interrupts it once it is under way, and returns its
/// exit code and stderr.
fn interrupt(corpus: &Path, out: &Path) -> (Option<i32>, String) {
    let grid = [
        "--compact-at",
        "0.3..0.95:0.05",
        "--compact-to",
        "0.1..0.6:0.05",
        "--result-cap",
        "256,512,1024",
    ];
    let child = sweep(corpus, out, &grid)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .arg("-INT")
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -INT");
    let output = child.wait_with_output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    assert!(took < Duration::from_secs(60), "stopping took {took:?}");
    (output.status.code(), err)
}

#[test]
fn ctrl_c_during_a_sweep_keeps_the_previous_outputs_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    corpus(&sessions);
    let out = tmp.path().join("out");
    let first = sweep(&sessions, &out, &[]).output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before = files(&out);
    assert!(before.contains_key("sessions.csv") && before.contains_key("summary.json"));

    let (code, err) = interrupt(&sessions, &out);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains("interrupted after") && err.contains("nothing was written"),
        "{err}"
    );
    assert!(err.contains("keeps its previous outputs"), "{err}");
    assert_eq!(
        files(&out),
        before,
        "the previous outputs, whole, and no temporary files"
    );
}

#[test]
fn ctrl_c_during_a_first_sweep_leaves_no_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let sessions = tmp.path().join("sessions");
    corpus(&sessions);
    let out = tmp.path().join("out");
    let (code, err) = interrupt(&sessions, &out);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        files(&out).is_empty(),
        "{:?}",
        files(&out).keys().collect::<Vec<_>>()
    );
}
