//! The filters of `transcript show`: `--turn`, `--role`, `--tool`, `--grep`.
//!
//! Selection is by message: a message is shown when it passes every filter
//! given, and `--json` writes exactly those messages. `--turn` and `--role`
//! look at the message; `--tool` and `--grep` look at its blocks, and a
//! message passes when one of its blocks does. In the readable rendering the
//! block filters also decide which blocks of a shown message appear (the
//! others are counted, never silently left out), and a call and its result
//! go together: a call matches `--grep` when its result does and the other
//! way round.

use std::str::FromStr;
use std::sync::Arc;

use regex::bytes::{Regex, RegexBuilder};

use crate::transcript::{Block, BlockType, Message, Role};

use super::calls::{block_at, Calls, Pos};

/// The real turn of each message: 1 from the first user message that is not
/// synthetic, one more at each such message, 0 before the first.
pub(crate) fn turn_numbers(messages: &[Arc<Message>]) -> Vec<usize> {
    let mut turn = 0;
    messages
        .iter()
        .map(|m| {
            if m.starts_real_turn() {
                turn += 1;
            }
            turn
        })
        .collect()
}

/// `--turn N`, `A..B` (both included), `A..` or `..B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TurnRange {
    pub(crate) first: usize,
    pub(crate) last: usize,
}

impl TurnRange {
    /// Whether turn `t` is in the range.
    pub(crate) fn contains(&self, t: usize) -> bool {
        self.first <= t && t <= self.last
    }
}

/// Why a `--turn` is no [`TurnRange`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TurnRangeError {
    /// A part that is no turn number, trimmed.
    #[error("{0:?} is not a turn number; write N, A..B, A.. or ..B (turns count from 1)")]
    NotATurn(String),
    #[error("an empty turn; write N, A..B, A.. or ..B")]
    Empty,
    /// A range, as given, whose first turn comes after its last.
    #[error("turn range {0:?} is empty: its first turn comes after its last")]
    Backwards(String),
}

impl FromStr for TurnRange {
    type Err = TurnRangeError;

    fn from_str(s: &str) -> Result<TurnRange, TurnRangeError> {
        let number = |part: &str, default: usize| -> Result<usize, TurnRangeError> {
            let part = part.trim();
            if part.is_empty() {
                return Ok(default);
            }
            part.parse::<usize>()
                .map_err(|_| TurnRangeError::NotATurn(part.to_string()))
        };
        let range = match s.split_once("..") {
            None => {
                let n = number(s, usize::MAX)?;
                if n == usize::MAX {
                    return Err(TurnRangeError::Empty);
                }
                TurnRange { first: n, last: n }
            }
            Some((a, b)) => TurnRange {
                first: number(a, 0)?,
                last: number(b.strip_prefix('=').unwrap_or(b), usize::MAX)?,
            },
        };
        if range.first > range.last {
            return Err(TurnRangeError::Backwards(s.to_string()));
        }
        Ok(range)
    }
}

/// Parses `--role`, for clap (whose value parsers may fail with text).
pub(crate) fn parse_role(s: &str) -> Result<Role, String> {
    Role::parse(s)
        .ok_or_else(|| format!("{s:?} is not a role; use user, assistant, tool or system"))
}

/// Builds the `--grep` pattern: a regular expression, case-insensitive;
/// clap's value parser (which may fail with text).
pub(crate) fn grep_pattern(pattern: &str) -> Result<Regex, String> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .map_err(|e| format!("--grep {pattern:?} is not a valid regular expression: {e}"))
}

/// The filters given; an empty filter selects everything.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    pub(crate) turns: Option<TurnRange>,
    pub(crate) role: Option<Role>,
    pub(crate) tool: Option<String>,
    pub(crate) grep: Option<Regex>,
}

impl Filter {
    /// Whether any filter was given.
    pub(crate) fn is_active(&self) -> bool {
        self.turns.is_some() || self.role.is_some() || self.focuses_blocks()
    }

    /// Whether the filters pick blocks (`--tool`, `--grep`).
    pub(crate) fn focuses_blocks(&self) -> bool {
        self.tool.is_some() || self.grep.is_some()
    }

    /// Which messages are selected.
    pub(crate) fn select(
        &self,
        messages: &[Arc<Message>],
        turns: &[usize],
        calls: &Calls,
    ) -> Vec<bool> {
        (0..messages.len())
            .map(|i| self.message_matches(messages, turns, calls, i))
            .collect()
    }

    /// Whether message `i` passes every filter.
    pub(crate) fn message_matches(
        &self,
        messages: &[Arc<Message>],
        turns: &[usize],
        calls: &Calls,
        i: usize,
    ) -> bool {
        let m = &messages[i];
        if self.role.is_some_and(|r| r != m.role) {
            return false;
        }
        if let Some(range) = self.turns {
            if !turns.get(i).is_some_and(|t| range.contains(*t)) {
                return false;
            }
        }
        if !self.focuses_blocks() {
            return true;
        }
        (0..m.content.len()).any(|j| self.block_matches(messages, calls, (i, j)))
    }

    /// Whether the block at `pos` passes `--tool` and `--grep` (true when
    /// neither was given).
    pub(crate) fn block_matches(&self, messages: &[Arc<Message>], calls: &Calls, pos: Pos) -> bool {
        if let Some(tool) = &self.tool {
            let name = tool_of(messages, calls, pos);
            if !name.is_some_and(|n| n.eq_ignore_ascii_case(tool)) {
                return false;
            }
        }
        if let Some(re) = &self.grep {
            let partner = match block_at(messages, pos).map(|b| b.kind) {
                Some(BlockType::ToolUse) => calls.result_of(pos),
                Some(BlockType::ToolResult) => calls.call_of(pos),
                _ => None,
            };
            let hit = |p: Pos| block_at(messages, p).is_some_and(|b| block_contains(b, re));
            if !hit(pos) && !partner.is_some_and(hit) {
                return false;
            }
        }
        true
    }
}

/// The tool a block belongs to; for an attachment a tool returned, the tool
/// of the result it came with.
fn tool_of<'a>(messages: &'a [Arc<Message>], calls: &Calls, pos: Pos) -> Option<&'a str> {
    let block = block_at(messages, pos)?;
    if block.kind.is_media() {
        let id = block.tool_call_id.as_deref()?;
        let j = messages[pos.0].content.iter().position(|b| {
            b.kind == BlockType::ToolResult && b.tool_call_id.as_deref() == Some(id)
        })?;
        return calls.tool_name(messages, (pos.0, j));
    }
    calls.tool_name(messages, pos)
}

/// Whether any text of the block matches: its text, the tool's name and
/// arguments, an attachment's source and type.
pub(crate) fn block_contains(block: &Block, re: &Regex) -> bool {
    if re.is_match(block.text_bytes()) {
        return true;
    }
    [
        &block.tool_name,
        &block.tool_args,
        &block.source,
        &block.media_type,
    ]
    .into_iter()
    .flatten()
    .any(|s| re.is_match(s.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_ranges_parse_in_every_form() {
        assert_eq!("3".parse(), Ok(TurnRange { first: 3, last: 3 }));
        assert_eq!("2..4".parse(), Ok(TurnRange { first: 2, last: 4 }));
        assert_eq!("2..=4".parse(), Ok(TurnRange { first: 2, last: 4 }));
        assert_eq!(
            "5..".parse(),
            Ok(TurnRange {
                first: 5,
                last: usize::MAX
            })
        );
        assert_eq!("..2".parse(), Ok(TurnRange { first: 0, last: 2 }));
        assert!("4..2".parse::<TurnRange>().is_err());
        assert!("x".parse::<TurnRange>().is_err());
        assert!("".parse::<TurnRange>().is_err());
    }

    #[test]
    fn turns_count_real_user_messages_only() {
        let synthetic = Message::new(Role::User, vec![Block::text("s".as_bytes())], true, None);
        let system = Message::new(
            Role::System,
            vec![Block::text("sys".as_bytes())],
            false,
            None,
        );
        let messages: Vec<Arc<Message>> = vec![
            Arc::new(system),
            Arc::new(Message::user("a".as_bytes())),
            Arc::new(synthetic),
            Arc::new(Message::user("b".as_bytes())),
        ];
        assert_eq!(turn_numbers(&messages), vec![0, 1, 1, 2]);
    }

    #[test]
    fn grep_is_case_insensitive_and_looks_at_arguments() {
        let re = grep_pattern("MAIN\\.rs").unwrap();
        assert!(block_contains(
            &Block::tool_use("1", "read_file", r#"{"path":"src/main.rs"}"#),
            &re
        ));
        assert!(!block_contains(&Block::text("nothing".as_bytes()), &re));
        assert!(grep_pattern("(").is_err());
    }
}
