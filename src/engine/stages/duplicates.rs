//! Stage 1: reads that a later identical read superseded.
//!
//! Only `read_file`, `grep` and `glob` take part: the same `bash` command run
//! twice is a before and an after, not a duplicate. The earlier result gives
//! way to a note saying why it is not there, so the model understands the gap.

use std::collections::HashMap;

use crate::engine::constants::{SUPERSEDABLE_TOOLS, SUPERSEDED_MARKER};
use crate::engine::working::Working;
use crate::engine::{Edit, EditKind};
use std::sync::Arc;

use crate::transcript::{Block, BlockType, Message, Str};

use super::Ledger;

/// The key of a call: tool name and compact JSON of its arguments ("" when
/// it has none).
type CallKey = (Str, Str);

/// Which call each id names and which id is the newest of each key.
///
/// smith builds `id → key` in a hash that keeps the position where an id was
/// first seen and the key it was last given, then takes the last id per key
/// in that order. Duplicate ids are rare but real (hand-merged logs), and
/// this reproduces smith's choice for them too.
struct Calls {
    by_id: HashMap<Str, CallKey>,
    newest: HashMap<CallKey, Str>,
}

impl Calls {
    fn new(messages: &[Arc<Message>]) -> Calls {
        let mut order: Vec<Str> = Vec::new();
        let mut by_id: HashMap<Str, CallKey> = HashMap::new();
        let no_args: Str = Str::from("");
        for message in messages {
            for block in &message.content {
                if block.kind != BlockType::ToolUse {
                    continue;
                }
                let (Some(id), Some(name)) = (&block.tool_call_id, &block.tool_name) else {
                    continue;
                };
                let args = block.tool_args.clone().unwrap_or_else(|| no_args.clone());
                if by_id.insert(id.clone(), (name.clone(), args)).is_none() {
                    order.push(id.clone());
                }
            }
        }
        let mut newest = HashMap::with_capacity(order.len());
        for id in order {
            newest.insert(by_id[&id].clone(), id);
        }
        Calls { by_id, newest }
    }
}

/// The note that replaces a superseded result of `bytes` bytes.
pub fn superseded_stub(tool: &str, bytes: usize) -> String {
    format!(
        "[{tool}: {SUPERSEDED_MARKER}, {} KiB omitted by smith]",
        bytes / 1024
    )
}

/// Replaces each superseded read before the `window_turns` window.
pub fn run(w: &mut Working, target: i64, window_turns: usize, ledger: &mut Ledger) -> bool {
    let protected_from = w.window_start(window_turns);
    let positions = w.tool_result_positions(protected_from);
    let mut changed = false;
    // Built on first need: the stage only rewrites results, never calls, so
    // the table stays true while it runs.
    let mut calls: Option<Calls> = None;
    for (index, block_index) in positions {
        if w.fits(target) {
            return changed;
        }
        let block = &w.messages[index].content[block_index];
        let Some(id) = block.tool_call_id.clone() else {
            continue;
        };
        let calls = calls.get_or_insert_with(|| Calls::new(&w.messages));
        let Some(key) = calls.by_id.get(&id) else {
            continue;
        };
        if !SUPERSEDABLE_TOOLS.contains(&key.0.as_ref()) || calls.newest.get(key) == Some(&id) {
            continue;
        }
        let text_len = block.text_len();
        let stub = superseded_stub(&key.0, text_len);
        if stub.len() >= text_len {
            continue;
        }
        let is_error = block.is_error.unwrap_or(false);
        let before = w.messages[index].bytes();
        w.replace_block(
            index,
            block_index,
            Block::tool_result(Some(id), stub.into_bytes(), is_error),
        );
        ledger.effects.reads_superseded += 1;
        ledger.edits.push(Edit {
            message: index,
            block: Some(block_index),
            kind: EditKind::Superseded,
            bytes_before: before,
            bytes_after: w.messages[index].bytes(),
        });
        changed = true;
    }
    changed
}
