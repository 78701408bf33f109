//! Progress on the steps a person waits for, on a terminal only: under a
//! pseudo-terminal (`script`, from util-linux) each step's spinner is drawn
//! on stderr; piped, stderr carries none of it.

use std::path::Path;

use crate::common;

/// Runs the binary with `args` under a pseudo-terminal, its stdout sent to
/// /dev/null; returns what the terminal showed (stderr), or `None` where
/// this machine has no `script`.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let (status, shown) = common::terminal::run(args, 100, "> /dev/null")?;
    assert!(status.success(), "{args:?}: {shown}");
    Some(shown)
}

fn piped_stderr(args: &[&str]) -> String {
    let o = common::output(common::bin().args(args));
    assert!(o.status.success(), "{args:?}: {}", common::stderr(&o));
    common::stderr(&o)
}

#[test]
fn the_steps_a_person_waits_for_show_progress_on_a_terminal_only() {
    let tmp = tempfile::tempdir().unwrap();
    let projects = crate::direct::projects(tmp.path());
    let projects = projects.to_str().unwrap();
    let sweep_out = tmp.path().join("sweep");
    let report_out = tmp.path().join("report");
    let (sweep_out, report_out) = (path(&sweep_out), path(&report_out));
    let steps: [(&[&str], &[&str]); 3] = [
        (
            &["calibrate", projects],
            &["reading 3 sessions", "calibrating on 3 sessions"],
        ),
        (
            &[
                "sweep",
                projects,
                "--compact-at",
                "0.7,0.8",
                "--out",
                sweep_out,
            ],
            &["reading the account", "deciding: "],
        ),
        (
            &["report", sweep_out, "--out", report_out],
            &["drawing the report"],
        ),
    ];
    for (args, said) in steps {
        let Some(terminal) = on_a_terminal(args) else {
            return;
        };
        let piped = piped_stderr(args);
        for s in said {
            assert!(
                terminal.contains(s),
                "{args:?} on a terminal: {s:?} in\n{terminal}"
            );
            assert!(!piped.contains(s), "{args:?} piped: {s:?} in\n{piped}");
        }
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}
