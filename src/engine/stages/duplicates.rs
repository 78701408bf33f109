//! Stage 1: reads that a later identical read superseded.
//!
//! Only `read_file`, `grep` and `glob` take part: the same `bash` command run
//! twice is a before and an after, not a duplicate. The earlier result gives
//! way to a note saying why it is not there, so the model understands the gap.

use foldhash::HashMap;

use crate::engine::constants::{SUPERSEDABLE_TOOLS, SUPERSEDED_MARKER};
use crate::engine::record::Recorder;
use crate::engine::working::Working;
use crate::engine::EditKind;
use std::sync::Arc;

use crate::transcript::{Block, BlockType, Message};

/// The key of a call: tool name and compact JSON of its arguments ("" when
/// it has none).
type CallKey<'a> = (&'a str, &'a str);

/// Which call each id names and which id is the newest of each key.
///
/// smith builds `id → key` in a hash that keeps the position where an id was
/// first seen and the key it was last given, then takes the last id per key
/// in that order. Duplicate ids are rare but real (hand-merged logs), and
/// this reproduces smith's choice for them too.
struct Calls<'a> {
    /// Each id with the key it was last given, in the order ids were first
    /// seen.
    calls: Vec<(&'a str, CallKey<'a>)>,
    /// Where each id is in `calls`.
    by_id: HashMap<&'a str, usize>,
    /// The newest id of each key of a supersedable tool (no other key is
    /// ever looked up).
    newest: HashMap<CallKey<'a>, &'a str>,
}

impl<'a> Calls<'a> {
    fn new(messages: &'a [Arc<Message>]) -> Calls<'a> {
        let mut calls: Vec<(&'a str, CallKey<'a>)> = Vec::new();
        let mut by_id: HashMap<&'a str, usize> = HashMap::default();
        for message in messages {
            for block in &message.content {
                if block.kind != BlockType::ToolUse {
                    continue;
                }
                let (Some(id), Some(name)) =
                    (block.tool_call_id.as_deref(), block.tool_name.as_deref())
                else {
                    continue;
                };
                let key = (name, block.tool_args.as_deref().unwrap_or(""));
                match by_id.entry(id) {
                    std::collections::hash_map::Entry::Occupied(e) => calls[*e.get()].1 = key,
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert(calls.len());
                        calls.push((id, key));
                    }
                }
            }
        }
        let mut newest = HashMap::default();
        for &(id, key) in &calls {
            if SUPERSEDABLE_TOOLS.contains(&key.0) {
                newest.insert(key, id);
            }
        }
        Calls {
            calls,
            by_id,
            newest,
        }
    }

    /// The key id `id` was last given.
    fn key(&self, id: &str) -> Option<CallKey<'a>> {
        self.by_id.get(id).map(|&i| self.calls[i].1)
    }
}

/// The note that replaces a superseded result of `bytes` bytes.
pub(crate) fn superseded_stub(tool: &str, bytes: usize) -> String {
    format!(
        "[{tool}: {SUPERSEDED_MARKER}, {} KiB omitted by smith]",
        bytes / 1024
    )
}

/// Replaces each superseded read before the `window_turns` window.
///
/// Decided first against a running total, then applied: the decisions only
/// depend on that total, and deciding on a borrowed history lets the call
/// table borrow its strings instead of copying them.
pub(crate) fn run(
    w: &mut Working,
    target: i64,
    window_turns: usize,
    record: &mut Recorder,
) -> bool {
    let protected_from = w.window_start(window_turns);
    let positions = w.tool_result_positions(protected_from);
    let mut plan: Vec<(usize, usize, Block)> = Vec::new();
    {
        let messages = &w.messages;
        let measure = &w.measure;
        let mut bytes = w.bytes;
        // Built on first need; the stage rewrites results, never calls.
        let mut calls: Option<Calls> = None;
        for (index, block_index) in positions {
            if (measure.tokens(bytes) as i64) <= target {
                break;
            }
            let block = &messages[index].content[block_index];
            let Some(id) = block.tool_call_id.as_deref() else {
                continue;
            };
            let calls = calls.get_or_insert_with(|| Calls::new(messages));
            let Some(key) = calls.key(id) else {
                continue;
            };
            if !SUPERSEDABLE_TOOLS.contains(&key.0) || calls.newest.get(&key) == Some(&id) {
                continue;
            }
            let text_len = block.text_len();
            let stub = superseded_stub(key.0, text_len);
            if stub.len() >= text_len {
                continue;
            }
            let rewritten = Block::tool_result(
                block.tool_call_id.clone(),
                stub.into_bytes(),
                block.is_error.unwrap_or(false),
            );
            bytes = bytes - measure.block(block) + measure.block(&rewritten);
            plan.push((index, block_index, rewritten));
        }
    }
    let changed = !plan.is_empty();
    for (index, block_index, rewritten) in plan {
        let before = w.messages[index].bytes();
        w.replace_block(index, block_index, rewritten);
        let after = w.messages[index].bytes();
        record.edit(
            index,
            Some(block_index),
            EditKind::Superseded,
            before,
            after,
        );
    }
    changed
}
