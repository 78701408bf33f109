//! The history under compaction, with a running byte total (under another
//! estimator than bytes4, a running total of that estimator's units).
//!
//! Each message is measured once when it is built; a rewrite adjusts the total
//! by the difference, so "does it fit yet?" costs nothing per candidate and
//! agrees exactly with an estimate over the finished history.

use std::sync::Arc;

use crate::estimate::Measure;
use crate::transcript::{Block, Message};

/// A copy-on-write view of the history: unchanged messages stay the same
/// `Arc`s as in the caller's history.
pub(crate) struct Working {
    pub(crate) messages: Vec<Arc<Message>>,
    /// The history's size in `measure`'s units: bytes under smith's bytes4.
    pub(crate) bytes: u64,
    /// Lowest index rewritten so far, if any.
    pub(crate) first_changed: Option<usize>,
    /// Indices of the messages that start a real turn, in order. Roles and
    /// the synthetic flag never change under stages 0–2, so this is computed
    /// once.
    pub(crate) turn_starts: Vec<usize>,
    /// How messages are measured: smith's bytes unless the engine was given
    /// another estimator.
    pub(crate) measure: Measure,
}

impl Working {
    pub(crate) fn new(messages: &[Arc<Message>], bytes: u64) -> Working {
        Working::measured(messages, bytes, Measure::bytes())
    }

    /// A working history whose size `units` is in `measure`'s units.
    pub(crate) fn measured(messages: &[Arc<Message>], units: u64, measure: Measure) -> Working {
        let bytes = units;
        let turn_starts = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.starts_real_turn())
            .map(|(i, _)| i)
            .collect();
        Working {
            messages: messages.to_vec(),
            bytes,
            first_changed: None,
            turn_starts,
            measure,
        }
    }

    /// The raw history estimate.
    pub(crate) fn tokens(&self) -> u64 {
        self.measure.tokens(self.bytes)
    }

    /// Whether the history fits a raw allowance.
    pub(crate) fn fits(&self, target: i64) -> bool {
        (self.tokens() as i64) <= target
    }

    /// Where the last `turns` real turns begin: the `turns`-th last real user
    /// message, index 0 when there are `turns` or fewer, and past the end
    /// (nothing protected) when `turns` is 0.
    pub(crate) fn window_start(&self, turns: usize) -> usize {
        if turns == 0 {
            return self.messages.len();
        }
        let starts = &self.turn_starts;
        if starts.len() <= turns {
            0
        } else {
            starts[starts.len() - turns]
        }
    }

    /// Replaces message `index`.
    pub(crate) fn replace(&mut self, index: usize, message: Message) {
        let old = self.measure.message(&self.messages[index]);
        self.bytes = self.bytes - old + self.measure.message(&message);
        self.messages[index] = Arc::new(message);
        self.first_changed = Some(self.first_changed.map_or(index, |f| f.min(index)));
    }

    /// Rebuilds one block of one message, keeping the rest, its role,
    /// synthetic flag and id.
    pub(crate) fn replace_block(&mut self, index: usize, block_index: usize, block: Block) {
        let mut content = self.messages[index].content.clone();
        content[block_index] = block;
        let rebuilt = self.messages[index].with_content(content);
        self.replace(index, rebuilt);
    }

    /// Replaces the text of result `(index, block_index)` the way smith
    /// rebuilds a result: only its call id and error flag carry over. Returns
    /// the message's bytes before and after.
    pub(crate) fn rewrite_result(
        &mut self,
        index: usize,
        block_index: usize,
        text: Vec<u8>,
    ) -> (u64, u64) {
        let old = &self.messages[index].content[block_index];
        let rebuilt = Block::tool_result(
            old.tool_call_id.clone(),
            text,
            old.is_error.unwrap_or(false),
        );
        let before = self.messages[index].bytes();
        self.replace_block(index, block_index, rebuilt);
        (before, self.messages[index].bytes())
    }

    /// Positions `(message, block)` of every tool result in a `tool` message
    /// before `end`, in transcript order.
    pub(crate) fn tool_result_positions(&self, end: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (i, m) in self.messages[..end.min(self.messages.len())]
            .iter()
            .enumerate()
        {
            if m.role != crate::transcript::Role::Tool {
                continue;
            }
            for (j, b) in m.content.iter().enumerate() {
                if b.kind == crate::transcript::BlockType::ToolResult {
                    out.push((i, j));
                }
            }
        }
        out
    }
}
