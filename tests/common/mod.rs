//! Builders shared by the integration tests: small smith histories whose
//! byte counts are easy to reason about.
#![allow(dead_code)]

pub mod chromium;
pub mod terminal;

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::sync::Arc;

use smith_calibrate::engine::Config;
use smith_calibrate::transcript::{Block, BlockType, Message, Role, Str};

pub fn arc(m: Message) -> Arc<Message> {
    Arc::new(m)
}

pub fn user(text: &str) -> Arc<Message> {
    arc(Message::user(text.as_bytes().to_vec()))
}

pub fn synthetic_user(text: &str) -> Arc<Message> {
    arc(Message::new(
        Role::User,
        vec![Block::text(text.as_bytes().to_vec())],
        true,
        None,
    ))
}

pub fn assistant(text: &str) -> Arc<Message> {
    arc(Message::new(
        Role::Assistant,
        vec![Block::text(text.as_bytes().to_vec())],
        false,
        None,
    ))
}

pub fn thinking(text: &str, signature: &str) -> Block {
    Block {
        kind: BlockType::Thinking,
        text: Some(text.as_bytes().to_vec().into()),
        signature: Some(signature.into()),
        ..Block::default()
    }
}

pub fn assistant_blocks(blocks: Vec<Block>) -> Arc<Message> {
    arc(Message::new(Role::Assistant, blocks, false, None))
}

/// An assistant message calling one tool.
pub fn call(id: &str, tool: &str, args: &str) -> Arc<Message> {
    assistant_blocks(vec![Block::tool_use(id, tool, args)])
}

pub fn result_block(id: &str, text: &[u8]) -> Block {
    Block {
        kind: BlockType::ToolResult,
        text: Some(text.to_vec().into()),
        tool_call_id: Some(Str::from(id)),
        ..Block::default()
    }
}

/// A tool message with one result.
pub fn result(id: &str, text: &[u8]) -> Arc<Message> {
    arc(Message::new(
        Role::Tool,
        vec![result_block(id, text)],
        false,
        None,
    ))
}

pub fn media(
    kind: BlockType,
    id: Option<&str>,
    source: Option<&str>,
    media_type: Option<&str>,
) -> Block {
    Block {
        kind,
        tool_call_id: id.map(Str::from),
        source: source.map(Str::from),
        media_type: media_type.map(Str::from),
        ..Block::default()
    }
}

/// Text of `n` ASCII bytes.
pub fn filler(n: usize) -> Vec<u8> {
    b"abcdefghij".iter().copied().cycle().take(n).collect()
}

pub fn filler_str(n: usize) -> String {
    String::from_utf8(filler(n)).unwrap()
}

/// A config with a 1000-token window: trigger 800, target 500.
pub fn small(max_tokens: u64) -> Config {
    Config {
        max_tokens,
        ..Config::default()
    }
}

pub fn text_of(m: &Message, block: usize) -> Vec<u8> {
    m.content[block].text_bytes().to_vec()
}

pub fn total_bytes(h: &[Arc<Message>]) -> u64 {
    h.iter().map(|m| m.bytes()).sum()
}

/// Every tool_use id has exactly one tool_result with that id after it, and
/// every tool_result answers an earlier tool_use.
pub fn pairing_holds(h: &[Arc<Message>]) -> Result<(), String> {
    use std::collections::HashMap;
    let mut calls: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, m) in h.iter().enumerate() {
        for b in &m.content {
            let Some(id) = b.tool_call_id.as_deref() else {
                continue;
            };
            match b.kind {
                BlockType::ToolUse => {
                    calls.insert(id, (i, 0));
                }
                BlockType::ToolResult => match calls.get_mut(id) {
                    Some((at, n)) if *at < i => *n += 1,
                    _ => return Err(format!("result {id} at {i} answers no earlier call")),
                },
                _ => {}
            }
        }
    }
    for (id, (_, n)) in calls {
        if n != 1 {
            return Err(format!("call {id} has {n} results"));
        }
    }
    Ok(())
}

/// Writes `messages` as `<dir>/<name>/transcript.jsonl` and returns its path.
pub fn write_session(dir: &Path, name: &str, messages: &[Arc<Message>]) -> PathBuf {
    let session = dir.join(name);
    std::fs::create_dir_all(&session).unwrap();
    let mut buf = Vec::new();
    for m in messages {
        m.write_json(&mut buf);
        buf.push(b'\n');
    }
    let path = session.join("transcript.jsonl");
    std::fs::write(&path, buf).unwrap();
    path
}

/// `<shared data>/<sub>`: real Claude Code logs and mini-swe-agent runs,
/// `../shared/data` beside the repository where the project is developed
/// (`SMITH_CALIBRATE_SHARED_DATA` names another place), absent in a user's
/// clone. Every test that calls this carries
/// `#[cfg_attr(not(has_shared_data), ignore = "needs ../shared/data")]`
/// (`build.rs` sets `has_shared_data` and `SHARED_DATA_DIR`), so without the
/// data the runner reports it as ignored; run with `--ignored` anyway, it
/// fails here, saying what is missing.
pub fn shared_data(sub: &str) -> PathBuf {
    let dir = Path::new(env!("SHARED_DATA_DIR")).join(sub);
    assert!(
        dir.is_dir(),
        "{} is absent: this test reads the shared real data",
        dir.display()
    );
    dir
}

/// The binary, as a user's scripts run it: no `$SMITH_HOME` to resolve
/// against, no colour, no batch-scheduler array index for `--shard auto` to
/// find. Callers add arguments, a working directory or input, then run it
/// with [`output`].
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_smith-calibrate"));
    c.env("SMITH_HOME", "/nonexistent-smith-home")
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

/// Asserts that `actual` is `expected` to the byte, showing both in full
/// (and the first line that differs) when it is not: the check for an output
/// that is fixed, where a fragment would let the rest change unseen.
#[track_caller]
pub fn assert_text(actual: &str, expected: &str) {
    if actual == expected {
        return;
    }
    let first = actual
        .lines()
        .zip(expected.lines())
        .position(|(a, e)| a != e)
        .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
    panic!(
        "output differs from line {}:\n--- expected\n{expected}\n--- actual\n{actual}\n---",
        first + 1
    );
}

/// `text` with every mention of the temporary folder `dir` written
/// `<DIR>` and of its random name (a session named after its folder)
/// `<NAME>`, so that an output naming its input compares whole.
pub fn scrub(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "<DIR>");
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(name) => text.replace(name, "<NAME>"),
        None => text,
    }
}

/// Asserts that `actual` is the committed file `tests/fixtures/<name>`; with
/// `BLESS=1` in the environment, writes it instead (then review the diff).
#[track_caller]
pub fn assert_fixture(actual: &str, name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", path.display()));
    assert_text(actual, &expected);
}

/// A CSV file the tool wrote, read back with polars.
#[cfg(feature = "full")]
pub fn read_csv(path: &Path) -> polars::prelude::DataFrame {
    use polars::prelude::{CsvReadOptions, SerReader};
    CsvReadOptions::default()
        .with_has_header(true)
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .unwrap()
        .finish()
        .unwrap()
}

/// A numeric column of a frame as `f64`, NaN where it is null.
#[cfg(feature = "full")]
pub fn column_f64(frame: &polars::prelude::DataFrame, name: &str) -> Vec<f64> {
    use polars::prelude::DataType;
    frame
        .column(name)
        .unwrap_or_else(|_| panic!("no column {name}"))
        .cast(&DataType::Float64)
        .unwrap()
        .f64()
        .unwrap()
        .into_iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect()
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
