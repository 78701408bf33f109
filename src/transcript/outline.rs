//! What reading the account needs of a session's messages, without them:
//! each message's role and size, and which user messages are the
//! notifications after which Claude Code sends the prompt anew. A folder's
//! account is read from every session at once, so it is read from
//! outlines, a few bytes a message, rather than from the messages.

use std::borrow::Borrow;

use super::model::{Message, Role};

/// How a user message Claude Code writes when a background task ends
/// begins; the request after it was seen to lose all but the fixed prompt.
pub(crate) const TASK_NOTIFICATION: &str = "<task-notification>";

/// The tag by which newer versions name the task a notification is of.
const TOOL_USE_ID: &str = "<tool-use-id>";

/// One message of an outline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) role: Role,
    /// [`Message::bytes`].
    pub(crate) bytes: u64,
    /// [`rewrites_prompt_at`].
    pub(crate) rewrites: bool,
}

/// A session's messages in outline, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outline {
    pub(crate) messages: Vec<Shape>,
}

/// The outline of no message.
#[cfg(test)]
pub(crate) static EMPTY: Outline = Outline {
    messages: Vec::new(),
};

impl Outline {
    pub(crate) fn of<M: Borrow<Message>>(messages: &[M]) -> Outline {
        Outline {
            messages: messages
                .iter()
                .map(Borrow::borrow)
                .map(|m: &Message| Shape {
                    role: m.role,
                    bytes: m.bytes(),
                    rewrites: rewrites_prompt_at(m),
                })
                .collect(),
        }
    }

    /// Bytes of the messages before the first answer.
    pub(crate) fn lead_bytes(&self) -> u64 {
        self.messages
            .iter()
            .take_while(|m| m.role != Role::Assistant)
            .map(|m| m.bytes)
            .sum()
    }

    /// Whether one of `messages[from..to]` rewrites the prompt.
    pub(crate) fn rewrites_between(&self, from: usize, to: usize) -> bool {
        self.messages
            .get(from.min(to)..to.min(self.messages.len()))
            .unwrap_or(&[])
            .iter()
            .any(|m| m.rewrites)
    }
}

/// Whether `m` is a background task's notification of the kind that
/// rewrites the prompt: the harness then sends the conversation anew after
/// the fixed prompt. Notifications that carry the task's `<tool-use-id>`
/// (newer versions) are appended to the conversation like any message, and
/// the cache reads it in full.
pub(crate) fn rewrites_prompt_at(m: &Message) -> bool {
    m.role == Role::User
        && m.content.iter().any(|b| {
            let text = b.text_lossy();
            text.trim_start().starts_with(TASK_NOTIFICATION) && !text.contains(TOOL_USE_ID)
        })
}
