//! Builders and checks shared by the tests inside the crate and the
//! integration tests (`tests/tests.rs` includes this folder): small smith
//! histories whose byte counts are easy to reason about, the shared real
//! data, fixed outputs compared whole; and, one file each, the fixtures of
//! an area whose tests are on both sides. Written against `smith_calibrate::`
//! paths, which name the crate from inside it too (`lib.rs`), and
//! `crate::test_support`, which `tests/tests.rs` declares too.
#![allow(dead_code)]

pub(crate) mod sweep;

#[cfg(feature = "full")]
pub(crate) mod policies;

pub(crate) mod real_compactions;

pub(crate) mod claude_code_log;

pub(crate) mod estimators;

pub(crate) mod engines;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use smith_calibrate::engine::Config;
use smith_calibrate::transcript::{Block, BlockType, Message, Role, Str};

pub(crate) fn arc(m: Message) -> Arc<Message> {
    Arc::new(m)
}

pub(crate) fn user(text: &str) -> Arc<Message> {
    arc(Message::user(text.as_bytes().to_vec()))
}

pub(crate) fn synthetic_user(text: &str) -> Arc<Message> {
    arc(Message::new(
        Role::User,
        vec![Block::text(text.as_bytes().to_vec())],
        true,
        None,
    ))
}

pub(crate) fn assistant(text: &str) -> Arc<Message> {
    arc(Message::new(
        Role::Assistant,
        vec![Block::text(text.as_bytes().to_vec())],
        false,
        None,
    ))
}

pub(crate) fn thinking(text: &str, signature: &str) -> Block {
    Block {
        kind: BlockType::Thinking,
        text: Some(text.as_bytes().to_vec().into()),
        signature: Some(signature.into()),
        ..Block::default()
    }
}

pub(crate) fn assistant_blocks(blocks: Vec<Block>) -> Arc<Message> {
    arc(Message::new(Role::Assistant, blocks, false, None))
}

/// An assistant message calling one tool.
pub(crate) fn call(id: &str, tool: &str, args: &str) -> Arc<Message> {
    assistant_blocks(vec![Block::tool_use(id, tool, args)])
}

pub(crate) fn result_block(id: &str, text: &[u8]) -> Block {
    Block {
        kind: BlockType::ToolResult,
        text: Some(text.to_vec().into()),
        tool_call_id: Some(Str::from(id)),
        ..Block::default()
    }
}

/// A tool message with one result.
pub(crate) fn result(id: &str, text: &[u8]) -> Arc<Message> {
    arc(Message::new(
        Role::Tool,
        vec![result_block(id, text)],
        false,
        None,
    ))
}

pub(crate) fn media(
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
pub(crate) fn filler(n: usize) -> Vec<u8> {
    b"abcdefghij".iter().copied().cycle().take(n).collect()
}

pub(crate) fn filler_str(n: usize) -> String {
    String::from_utf8(filler(n)).unwrap()
}

/// A config with a 1000-token window: trigger 800, target 500.
pub(crate) fn small(max_tokens: u64) -> Config {
    Config {
        max_tokens,
        ..Config::default()
    }
}

pub(crate) fn text_of(m: &Message, block: usize) -> Vec<u8> {
    m.content[block].text_bytes().to_vec()
}

pub(crate) fn total_bytes(h: &[Arc<Message>]) -> u64 {
    h.iter().map(|m| m.bytes()).sum()
}

/// Writes `messages` as `<dir>/<name>/transcript.jsonl` and returns its path.
pub(crate) fn write_session(dir: &Path, name: &str, messages: &[Arc<Message>]) -> PathBuf {
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
pub(crate) fn shared_data(sub: &str) -> PathBuf {
    let dir = Path::new(env!("SHARED_DATA_DIR")).join(sub);
    assert!(
        dir.is_dir(),
        "{} is absent: this test reads the shared real data",
        dir.display()
    );
    dir
}

/// Asserts that `actual` is `expected` to the byte, showing both in full
/// (and the first line that differs) when it is not: the check for an output
/// that is fixed, where a fragment would let the rest change unseen.
#[track_caller]
pub(crate) fn assert_text(actual: &str, expected: &str) {
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
pub(crate) fn scrub(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "<DIR>");
    match dir.file_name().and_then(|n| n.to_str()) {
        Some(name) => text.replace(name, "<NAME>"),
        None => text,
    }
}

/// Asserts that `actual` is the committed file `tests/fixtures/<name>`; with
/// `BLESS=1` in the environment, writes it instead (then review the diff).
#[track_caller]
pub(crate) fn assert_fixture(actual: &str, name: &str) {
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
pub(crate) fn read_csv(path: &Path) -> polars::prelude::DataFrame {
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
pub(crate) fn column_f64(frame: &polars::prelude::DataFrame, name: &str) -> Vec<f64> {
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

/// Every tool_use id has exactly one tool_result with that id after it, and
/// every tool_result answers an earlier tool_use.
pub(crate) fn pairing_holds(h: &[Arc<Message>]) -> Result<(), String> {
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
