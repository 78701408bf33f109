//! The price of a loss: how likely the agent is to fetch a removed result
//! again, and what fetching it again costs.
//!
//! A result removed from the context is gone for the model; when the rest
//! of the session needs it, the agent calls the tool again. What that costs
//! is what a loss costs: one more request reading the whole context from
//! the cache, the result written into the cache again, and the call the
//! model wrote. How likely it is depends on what the result was (a file
//! read against a command's output) and on whether the loss measure flags
//! it (`still needed`: still current, and used later): [`MODEL`] holds the rates, measured on real
//! compactions (see `calibrate`, which refits them on a user's own logs).
//!
//! A re-fetch, as the real sessions are judged: the same tool with the same
//! arguments, made after the compaction; for a file read, a read of the same
//! path (overlapping lines), unless the file was edited or written after the
//! first read, when reading it again is reading something new (an edit that
//! failed, such as Claude Code's refusal to edit a file not read since the
//! compaction, changed nothing, and the read that follows it is a re-fetch).

use std::sync::Arc;

use serde::Serialize;

pub(crate) use crate::replay::Refetch;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::transcript::{Block, BlockType, Message, Role};

/// What a tool result is to the re-fetch model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultKind {
    /// A file read (`read_file`): the agent reads it again by path.
    FileRead,
    /// A command's output (`bash`).
    Command,
    /// A search (`grep`, `glob`).
    Search,
    /// Any other tool: edits, writes, subagents, the web.
    Other,
}

impl ResultKind {
    pub const ALL: [ResultKind; 4] = [
        ResultKind::FileRead,
        ResultKind::Command,
        ResultKind::Search,
        ResultKind::Other,
    ];

    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            ResultKind::FileRead => "file_read",
            ResultKind::Command => "command",
            ResultKind::Search => "search",
            ResultKind::Other => "other",
        }
    }

    /// The kind of a result of tool `name` (smith's names; an import maps
    /// its agent's names to them).
    pub(crate) fn of_tool(name: &str) -> ResultKind {
        match name {
            "read_file" => ResultKind::FileRead,
            // Claude Code's shell on Windows is a command too.
            "bash" | "PowerShell" => ResultKind::Command,
            "grep" | "glob" => ResultKind::Search,
            _ => ResultKind::Other,
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Whether tool `name` changes a file (so that a read after it is new).
pub(crate) fn writes_files(name: &str) -> bool {
    matches!(name, "edit_file" | "write_file" | "NotebookEdit")
}

/// One cell of the model: removed results of one kind, flagged by the loss
/// measure or not, and how many of them the agent fetched again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Cell {
    pub(crate) kind: ResultKind,
    /// Whether `still needed` (see `crate::loss::Loss::still_needed`)
    /// flagged them.
    pub(crate) flagged: bool,
    pub(crate) removed: u64,
    pub(crate) refetched: u64,
}

impl Cell {
    /// The share fetched again.
    pub(crate) fn rate(&self) -> f64 {
        if self.removed == 0 {
            0.0
        } else {
            self.refetched as f64 / self.removed as f64
        }
    }
}

/// Fewest results a cell's own rate is trusted on; below it, the rate of
/// its kind (both flags), and below that again, of all results.
pub(crate) const MIN_CELL: u64 = 10;

/// The re-fetch model: per kind and flag, the share of removed results
/// fetched again.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Model {
    /// By kind ([`ResultKind::ALL`] order), unflagged then flagged.
    pub(crate) cells: [Cell; 8],
    /// The real compactions the counts come from.
    pub compactions: u64,
}

const fn cell(kind: ResultKind, flagged: bool, removed: u64, refetched: u64) -> Cell {
    Cell {
        kind,
        flagged,
        removed,
        refetched,
    }
}

/// What [`MODEL`] was measured on.
pub(crate) const MEASURED_ON: &str = "the 28 full compactions that removed tool results in the \
Claude Code logs of ../shared/data/claude-code (spotter 5, eduardodmb 11, xiaomoziyi 12; \
Claude Code 2.0.55 to 2.1.150): 2,742 results removed, 50 fetched again as this module \
defines it";

/// The model every replay prices its losses with: the counts of
/// [`MEASURED_ON`], as `calibrate` prints them.
pub const MODEL: Model = Model {
    cells: [
        cell(ResultKind::FileRead, false, 527, 4),
        cell(ResultKind::FileRead, true, 134, 32),
        cell(ResultKind::Command, false, 340, 0),
        cell(ResultKind::Command, true, 419, 14),
        cell(ResultKind::Search, false, 229, 0),
        cell(ResultKind::Search, true, 67, 0),
        cell(ResultKind::Other, false, 686, 0),
        cell(ResultKind::Other, true, 340, 0),
    ],
    compactions: 28,
};

impl Model {
    /// The model of these observations: `(kind, flagged, fetched again)`
    /// per removed result, over `compactions` compactions.
    pub(crate) fn fit(
        observations: impl IntoIterator<Item = (ResultKind, bool, bool)>,
        compactions: u64,
    ) -> Model {
        let mut m = Model {
            cells: MODEL.cells,
            compactions,
        };
        for c in &mut m.cells {
            c.removed = 0;
            c.refetched = 0;
        }
        for (kind, flagged, refetched) in observations {
            let c = &mut m.cells[kind.index() * 2 + usize::from(flagged)];
            c.removed += 1;
            c.refetched += u64::from(refetched);
        }
        m
    }

    /// The chance that a removed result of `kind`, flagged or not, is
    /// fetched again (see [`MIN_CELL`] for cells with too few results).
    pub fn probability(&self, kind: ResultKind, flagged: bool) -> f64 {
        let i = kind.index() * 2;
        let c = self.cells[i + usize::from(flagged)];
        if c.removed >= MIN_CELL {
            return c.rate();
        }
        let (a, b) = (self.cells[i], self.cells[i + 1]);
        if a.removed + b.removed >= MIN_CELL {
            return (a.refetched + b.refetched) as f64 / (a.removed + b.removed) as f64;
        }
        let (n, r) = self
            .cells
            .iter()
            .fold((0, 0), |(n, r), c| (n + c.removed, r + c.refetched));
        if n == 0 {
            0.0
        } else {
            r as f64 / n as f64
        }
    }

    /// The number of re-fetches the model expects of these removed
    /// results, `(kind, flagged)` each.
    pub(crate) fn expected(&self, results: impl IntoIterator<Item = (ResultKind, bool)>) -> f64 {
        results
            .into_iter()
            .map(|(k, f)| self.probability(k, f))
            .sum()
    }
}

/// The call whose result is block `block` of message `message`: a
/// `tool_use` with its id in the assistant message before it.
pub(crate) fn call_of(record: &[Arc<Message>], message: usize, block: usize) -> Option<&Block> {
    let id = record
        .get(message)?
        .content
        .get(block)?
        .tool_call_id
        .as_ref()?;
    record[..message]
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)?
        .content
        .iter()
        .find(|b| b.kind == BlockType::ToolUse && b.tool_call_id.as_ref() == Some(id))
}

/// The file a call names (`path` in smith's tools, `file_path` or
/// `notebook_path` in Claude Code's).
pub(crate) fn file_path(args: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    ["path", "file_path", "notebook_path"]
        .iter()
        .find_map(|k| v.get(k).and_then(|p| p.as_str()))
        .map(str::to_string)
}

/// The lines a file read asked for: from its `offset` (the first line
/// when absent), `limit` of them (to the end when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LinesRead {
    pub(crate) from: u64,
    pub(crate) to: Option<u64>,
}

impl LinesRead {
    /// Whether two reads share a line: another part of the file read is
    /// not the lost part fetched again.
    pub(crate) fn overlaps(&self, other: &LinesRead) -> bool {
        self.to.is_none_or(|t| other.from < t) && other.to.is_none_or(|t| self.from < t)
    }
}

/// [`LinesRead`] of a read call's arguments.
pub(crate) fn lines_read(args: &str) -> LinesRead {
    let v: Option<serde_json::Value> = serde_json::from_str(args).ok();
    let n = |k: &str| v.as_ref().and_then(|v| v.get(k)).and_then(|x| x.as_u64());
    let from = n("offset").unwrap_or(0).max(1);
    LinesRead {
        from,
        to: n("limit").map(|l| from + l),
    }
}

/// The kind of the result at `(message, block)`, and the sizes a re-fetch
/// of it sends: the result's tokens and the call's.
pub(crate) fn describe(
    record: &[Arc<Message>],
    message: usize,
    block: usize,
) -> (ResultKind, u64, u64) {
    let result = record
        .get(message)
        .and_then(|m| m.content.get(block))
        .map_or(0, |b| b.text_bytes().len() as u64);
    let call = call_of(record, message, block);
    let kind = call
        .and_then(|c| c.tool_name.as_deref())
        .map_or(ResultKind::Other, ResultKind::of_tool);
    let call_bytes = call.map_or(0, |c| {
        c.tool_args.as_deref().map_or(0, str::len) + c.tool_name.as_deref().map_or(0, str::len)
    }) as u64;
    (kind, result / BYTES_PER_TOKEN, call_bytes / BYTES_PER_TOKEN)
}

/// Where the agent fetched the result at `(message, block)` again from
/// message `from` on: the assistant message making the call (see the
/// module doc), or `None`.
pub(crate) fn fetched_again(
    record: &[Arc<Message>],
    message: usize,
    block: usize,
    from: usize,
) -> Option<usize> {
    let call = call_of(record, message, block)?;
    let name = call.tool_name.as_deref()?;
    // A call made again after an error is a retry, and a write or an edit
    // made again is the agent's work, not a lost result fetched again.
    let failed = record
        .get(message)
        .and_then(|m| m.content.get(block))
        .is_some_and(|b| b.is_error == Some(true));
    if failed || writes_files(name) {
        return None;
    }
    let args = call.tool_args.as_deref().unwrap_or("");
    let path = (ResultKind::of_tool(name) == ResultKind::FileRead)
        .then(|| file_path(args))
        .flatten();
    let lines = lines_read(args);
    for (i, m) in record.iter().enumerate().skip(message + 1) {
        if m.role != Role::Assistant {
            continue;
        }
        for b in &m.content {
            if b.kind != BlockType::ToolUse {
                continue;
            }
            let (Some(n), a) = (b.tool_name.as_deref(), b.tool_args.as_deref().unwrap_or(""))
            else {
                continue;
            };
            match &path {
                Some(p) => {
                    if file_path(a).as_deref() != Some(p.as_str()) {
                        continue;
                    }
                    if writes_files(n) {
                        // An edit that failed or was refused (Claude
                        // Code's "File has not been read yet") left the
                        // file as it was.
                        if call_failed(record, i, b) {
                            continue;
                        }
                        return None;
                    }
                    if i >= from
                        && ResultKind::of_tool(n) == ResultKind::FileRead
                        && lines_read(a).overlaps(&lines)
                    {
                        return Some(i);
                    }
                }
                None => {
                    if i >= from && n == name && a == args {
                        return Some(i);
                    }
                }
            }
        }
    }
    None
}

/// Whether tool call `b`, made by assistant message `at`, came back as
/// an error (its result is in the tool messages before the next
/// assistant message).
fn call_failed(record: &[Arc<Message>], at: usize, b: &Block) -> bool {
    let Some(id) = &b.tool_call_id else {
        return false;
    };
    record[at + 1..]
        .iter()
        .take_while(|m| m.role != Role::Assistant)
        .flat_map(|m| m.content.iter())
        .any(|r| {
            r.kind == BlockType::ToolResult
                && r.tool_call_id.as_ref() == Some(id)
                && r.is_error == Some(true)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Block, Message, Role};

    fn assistant(call: Block) -> Arc<Message> {
        Arc::new(Message::new(Role::Assistant, vec![call], false, None))
    }

    fn result(id: &str, text: &str, is_error: bool) -> Arc<Message> {
        Arc::new(Message::new(
            Role::Tool,
            vec![Block::tool_result(
                Some(id.into()),
                text.as_bytes().to_vec(),
                is_error,
            )],
            false,
            None,
        ))
    }

    /// A call, its result, then the same call again: where the second is.
    fn again(name: &str, args: &str, is_error: bool) -> Option<usize> {
        let record = vec![
            assistant(Block::tool_use("a", name, args)),
            result("a", "output", is_error),
            assistant(Block::tool_use("b", name, args)),
            result("b", "output", false),
        ];
        fetched_again(&record, 1, 0, 2)
    }

    #[test]
    fn a_call_made_again_is_a_refetch_but_not_a_retry_or_a_repeated_write() {
        let cmd = r#"{"command":"cargo test"}"#;
        assert_eq!(again("bash", cmd, false), Some(2));
        assert_eq!(again("bash", cmd, true), None, "a retry after an error");
        let write = r#"{"path":"/src/a.rs","content":"x"}"#;
        assert_eq!(
            again("write_file", write, false),
            None,
            "the agent's work again"
        );
        assert_eq!(again("edit_file", write, false), None);
    }

    #[test]
    fn a_read_after_a_refused_edit_is_a_refetch_and_after_an_edit_is_not() {
        let read = r#"{"path":"/a.rs"}"#;
        let edit = r#"{"path":"/a.rs","old_string":"x","new_string":"y"}"#;
        let record = |refused: bool| {
            vec![
                assistant(Block::tool_use("a", "read_file", read)),
                result("a", "fn main() {}", false),
                assistant(Block::tool_use("b", "edit_file", edit)),
                result("b", "File has not been read yet.", refused),
                assistant(Block::tool_use("c", "read_file", read)),
                result("c", "fn main() {}", false),
            ]
        };
        assert_eq!(fetched_again(&record(true), 1, 0, 2), Some(4));
        assert_eq!(fetched_again(&record(false), 1, 0, 2), None);
    }

    #[test]
    fn another_part_of_a_file_read_is_not_the_lost_part_fetched_again() {
        let record = |second: &str| {
            vec![
                assistant(Block::tool_use(
                    "a",
                    "read_file",
                    r#"{"path":"/a.rs","offset":1,"limit":100}"#,
                )),
                result("a", "lines 1-100", false),
                assistant(Block::tool_use("b", "read_file", second)),
                result("b", "more", false),
            ]
        };
        let at = |second: &str| fetched_again(&record(second), 1, 0, 2);
        assert_eq!(at(r#"{"path":"/a.rs","offset":101,"limit":100}"#), None);
        assert_eq!(at(r#"{"path":"/a.rs","offset":50,"limit":100}"#), Some(2));
        assert_eq!(at(r#"{"path":"/a.rs"}"#), Some(2), "the whole file again");
        assert_eq!(at(r#"{"path":"/b.rs"}"#), None);
    }
}
