//! Which result answers which tool call.
//!
//! A call (`tool_use`) and its result (`tool_result`) live in different
//! messages and are tied only by `tool_call_id`. Walking the history in
//! order, each result is paired with the oldest call with its id that has no
//! result yet: that is how a provider matches them, and it keeps a reused id
//! from pairing a late result with an early call twice. What is left over on
//! either side is kept too: a call nobody answered and a result whose call is
//! missing are exactly what a reader of a damaged transcript must see.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::transcript::{Block, BlockType, Message};

/// A block's position: (message index, block index).
pub(crate) type Pos = (usize, usize);

/// The pairing of calls and results over one list of messages.
#[derive(Clone, Debug, Default)]
pub(crate) struct Calls {
    result_of: HashMap<Pos, Pos>,
    call_of: HashMap<Pos, Pos>,
    /// Every call, in order.
    pub(crate) calls: Vec<Pos>,
    /// Every result, in order.
    pub(crate) results: Vec<Pos>,
}

impl Calls {
    /// Pairs the calls and results of `messages`.
    pub(crate) fn new(messages: &[Arc<Message>]) -> Calls {
        let mut calls = Calls::default();
        let mut waiting: HashMap<&str, VecDeque<Pos>> = HashMap::new();
        for (i, m) in messages.iter().enumerate() {
            for (j, b) in m.content.iter().enumerate() {
                match b.kind {
                    BlockType::ToolUse => {
                        calls.calls.push((i, j));
                        if let Some(id) = b.tool_call_id.as_deref() {
                            waiting.entry(id).or_default().push_back((i, j));
                        }
                    }
                    BlockType::ToolResult => {
                        calls.results.push((i, j));
                        let call = b
                            .tool_call_id
                            .as_deref()
                            .and_then(|id| waiting.get_mut(id))
                            .and_then(VecDeque::pop_front);
                        if let Some(call) = call {
                            calls.result_of.insert(call, (i, j));
                            calls.call_of.insert((i, j), call);
                        }
                    }
                    _ => {}
                }
            }
        }
        calls
    }

    /// The result answering the call at `call`, if there is one.
    pub(crate) fn result_of(&self, call: Pos) -> Option<Pos> {
        self.result_of.get(&call).copied()
    }

    /// The call the result at `result` answers, if it can be found.
    pub(crate) fn call_of(&self, result: Pos) -> Option<Pos> {
        self.call_of.get(&result).copied()
    }

    /// Calls with no result.
    pub(crate) fn unanswered(&self) -> impl Iterator<Item = Pos> + '_ {
        self.calls
            .iter()
            .copied()
            .filter(|c| !self.result_of.contains_key(c))
    }

    /// Results with no call.
    pub(crate) fn orphans(&self) -> impl Iterator<Item = Pos> + '_ {
        self.results
            .iter()
            .copied()
            .filter(|r| !self.call_of.contains_key(r))
    }

    /// The tool a block belongs to: a call's own name, a result's call's
    /// name, else the name the result carries itself.
    pub(crate) fn tool_name<'a>(&self, messages: &'a [Arc<Message>], pos: Pos) -> Option<&'a str> {
        let block = block_at(messages, pos)?;
        match block.kind {
            BlockType::ToolUse => block.tool_name.as_deref(),
            BlockType::ToolResult => self
                .call_of(pos)
                .and_then(|c| block_at(messages, c))
                .and_then(|c| c.tool_name.as_deref())
                .or(block.tool_name.as_deref()),
            _ => None,
        }
    }
}

/// The block at `pos`, if it exists.
pub(crate) fn block_at(messages: &[Arc<Message>], pos: Pos) -> Option<&Block> {
    messages.get(pos.0)?.content.get(pos.1)
}

/// Attachments a tool returned alongside a result: media blocks in the same
/// message carrying the result's `tool_call_id`. They belong under the
/// result wherever it is shown.
pub(crate) fn companions(message: &Message, result_block: usize) -> Vec<usize> {
    let Some(id) = message
        .content
        .get(result_block)
        .and_then(|b| b.tool_call_id.as_deref())
    else {
        return Vec::new();
    };
    message
        .content
        .iter()
        .enumerate()
        .filter(|(_, b)| b.kind.is_media() && b.tool_call_id.as_deref() == Some(id))
        .map(|(j, _)| j)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Message, Role};

    fn tool(blocks: Vec<Block>) -> Arc<Message> {
        Arc::new(Message::new(Role::Tool, blocks, false, None))
    }

    fn assistant(blocks: Vec<Block>) -> Arc<Message> {
        Arc::new(Message::new(Role::Assistant, blocks, false, None))
    }

    #[test]
    fn each_result_pairs_with_the_oldest_waiting_call_of_its_id() {
        let messages = vec![
            assistant(vec![
                Block::tool_use("a", "read_file", "{}"),
                Block::tool_use("a", "grep", "{}"),
            ]),
            tool(vec![
                Block::tool_result(Some("a".into()), "1".as_bytes(), false),
                Block::tool_result(Some("a".into()), "2".as_bytes(), false),
                Block::tool_result(Some("a".into()), "3".as_bytes(), false),
            ]),
        ];
        let calls = Calls::new(&messages);
        assert_eq!(calls.result_of((0, 0)), Some((1, 0)));
        assert_eq!(calls.result_of((0, 1)), Some((1, 1)));
        assert_eq!(calls.orphans().collect::<Vec<_>>(), vec![(1, 2)]);
        assert_eq!(calls.tool_name(&messages, (1, 1)), Some("grep"));
    }

    #[test]
    fn a_result_before_its_call_or_with_no_id_is_an_orphan() {
        let messages = vec![
            tool(vec![Block::tool_result(
                Some("x".into()),
                "r".as_bytes(),
                false,
            )]),
            assistant(vec![Block::tool_use("x", "bash", "{}")]),
            tool(vec![Block::tool_result(None, "r".as_bytes(), false)]),
        ];
        let calls = Calls::new(&messages);
        assert_eq!(calls.orphans().count(), 2);
        assert_eq!(calls.unanswered().collect::<Vec<_>>(), vec![(1, 0)]);
    }
}
