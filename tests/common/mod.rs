//! What the integration tests share: the builders and checks of
//! `src/test_support.rs` (shared with the tests inside the crate), and
//! running the binary as a user's scripts do.
#![allow(dead_code)]

pub mod chromium;
pub mod terminal;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Output, Stdio};

pub(crate) use crate::test_support::*;

/// The binary, as a user's scripts run it: no `$SMITH_HOME`, Claude Code
/// or Codex folder to resolve an id against, no colour, no batch-scheduler
/// array index for `--shard auto` to find. Callers add arguments, a working
/// directory or input, then run it with [`output`].
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_smith-calibrate"));
    c.env("SMITH_HOME", "/nonexistent-smith-home")
        .env("CLAUDE_CONFIG_DIR", "/nonexistent-claude-config")
        .env("CODEX_HOME", "/nonexistent-codex-home")
        .env("NO_COLOR", "1")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX");
    c
}

/// Runs `c` to its end. Whatever the input, the binary must not panic: a
/// panic fails the test here, with the command and its standard error.
pub fn output(c: &mut Command) -> Output {
    let o = c.output().expect("the binary runs");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{c:?}: {err}");
    o
}

/// Runs the binary with `args` (see [`bin`] and [`output`]).
pub fn run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    output(bin().args(args))
}

/// What a run with `args` printed and how it ended: standard output,
/// standard error and the exit code, for tests that check all three.
pub fn run_text<S: AsRef<OsStr>>(args: &[S]) -> (String, String, Option<i32>) {
    let o = run(args);
    (stdout(&o), stderr(&o), o.status.code())
}

/// Standard output as text (invalid UTF-8 shown as U+FFFD).
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text (invalid UTF-8 shown as U+FFFD).
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The standard output of a run that must succeed; on failure, the exit
/// status and standard error.
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstderr:\n{}",
        o.status.code(),
        stderr(&o)
    );
    stdout(&o)
}

/// The standard error of a run that must exit 0 (for commands whose
/// progress and notes go there); on failure, the exit status and it.
pub fn ok_stderr(o: Output) -> String {
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    err
}

/// Starts the sweep `c` paused by `--test-pause-after n`, and returns it
/// once it says it has paused there (it then waits for Ctrl-C or the end of
/// its stdin), with the rest of its stderr to read: a test stops a sweep at
/// a point the sweep signals, never after a guessed time.
// The child is handed to the caller, who stops and waits for it.
#[allow(clippy::zombie_processes)]
pub fn start_paused(mut c: Command, n: usize) -> (Child, BufReader<ChildStderr>) {
    let mut child = c
        .arg("--test-pause-after")
        .arg(n.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            let status = child.wait().unwrap();
            panic!("the sweep ended ({status}) before pausing after {n} sessions: {said}");
        }
        said.push_str(&line);
        if line.starts_with(&format!("paused after {n} sessions ")) {
            return (child, err);
        }
    }
}

/// How a test stops a paused sweep.
#[derive(Clone, Copy, Debug)]
pub enum Stop {
    /// SIGKILL: no handler runs, nothing is flushed or closed.
    Kill,
    /// SIGINT, as Ctrl-C: the sweep stops and says what it kept.
    CtrlC,
}

pub fn stop(mut child: Child, mut err: BufReader<ChildStderr>, how: Stop) -> (Option<i32>, String) {
    match how {
        Stop::Kill => child.kill().unwrap(),
        Stop::CtrlC => {
            let status = Command::new("kill")
                .arg("-INT")
                .arg(child.id().to_string())
                .status()
                .unwrap();
            assert!(status.success(), "kill -INT");
        }
    }
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    (child.wait().unwrap().code(), rest)
}

/// The data files a sweep writes.
pub const DATA_FILES: [&str; 4] = [
    "configs.csv",
    "configs.parquet",
    "sessions.csv",
    "sessions.parquet",
];

/// summary.json at `path` without its timing fields, which only say how
/// long and on how many threads the work ran.
pub fn untimed(path: &Path) -> String {
    smith_calibrate::sweep::summary::untimed(&std::fs::read_to_string(path).unwrap())
}

/// The configs `sweep --json` printed, once its schema version is checked.
pub fn sweep_configs(stdout: &[u8]) -> Vec<serde_json::Value> {
    let printed: serde_json::Value = serde_json::from_slice(stdout).expect("sweep --json: JSON");
    assert_eq!(
        printed["schema_version"],
        smith_calibrate::sweep::columns::SCHEMA_VERSION,
        "sweep --json: schema_version"
    );
    printed["configs"]
        .as_array()
        .expect("sweep --json: configs")
        .clone()
}
