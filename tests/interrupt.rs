//! Ctrl-C during a real sweep: the run stops, says so, exits 130, and the
//! output folder holds either the previous outputs, byte for byte, or none;
//! never a half-written file or a leftover temporary. The signal is sent
//! once the sweep says it is under way (`--test-pause-after`), never after
//! a guessed time.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use smith_calibrate::synth::{self, CorpusSpec, Shape, SizeSpec};

use crate::common::{start_paused, stop, Stop};

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

/// A few long sessions: the sweep is interrupted after the first.
fn corpus(dir: &Path) {
    let spec = CorpusSpec {
        seed: 99,
        sessions: 4,
        shape: Some(Shape::Long),
        size: SizeSpec::Fixed(100_000),
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
        .args(["--max-tokens", "16000", "--jobs", "1"]);
    c
}

/// Starts a sweep, interrupts it once it has finished its first session,
/// and returns its exit code and stderr.
fn interrupt(corpus: &Path, out: &Path) -> (Option<i32>, String) {
    let grid = ["--compact-at", "0.5,0.7,0.9", "--result-cap", "256,1024"];
    let (child, err) = start_paused(sweep(corpus, out, &grid), 1);
    let (code, err) = stop(child, err, Stop::CtrlC);
    assert!(!err.contains("panicked"), "{err}");
    (code, err)
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
        err.contains("interrupted after 1 of 4 sessions") && err.contains("nothing was written"),
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
    assert!(err.contains("interrupted after 1 of 4 sessions"), "{err}");
    assert!(
        files(&out).is_empty(),
        "{:?}",
        files(&out).keys().collect::<Vec<_>>()
    );
}
