//! Progress on the steps a person waits for, on a terminal only: under a
//! pseudo-terminal (`script`, from util-linux) each step's spinner is drawn
//! on stderr; piped, stderr carries none of it.

use std::path::Path;
use std::process::Command;

use crate::common;

/// Runs the binary with `args` under a pseudo-terminal, its stdout sent to
/// /dev/null; returns what the terminal showed (stderr), or `None` where
/// this machine has no `script`.
fn on_a_terminal(args: &[&str]) -> Option<String> {
    let bin = env!("CARGO_BIN_EXE_smith-calibrate");
    let quoted: Vec<String> = std::iter::once(bin)
        .chain(args.iter().copied())
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let out = Command::new("script")
        .args([
            "-qec",
            &format!("{} > /dev/null", quoted.join(" ")),
            "/dev/null",
        ])
        .env("SMITH_HOME", "/nonexistent-smith-home")
        .env("NO_COLOR", "1")
        .output();
    match out {
        Ok(o) => {
            assert!(o.status.success(), "{args:?}: {o:?}");
            Some(String::from_utf8_lossy(&o.stdout).replace('\r', "\n"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped: no `script` (util-linux) to make a terminal");
            None
        }
        Err(e) => panic!("script: {e}"),
    }
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
