//! The real size of what a replay sends: the provider's count of the
//! working history, beside smith's estimate of it.
//!
//! smith decides on its own estimate (bytes / 4 × ratio + overhead), and
//! the replay keeps that decision exactly as smith makes it. What a request
//! costs, and whether it fits the model's window, is the provider's count:
//! for a session whose log measured its messages
//! (`crate::transcript::measured`) every message the replay leaves unchanged
//! counts its measured tokens, a rewritten one its measured tokens scaled by
//! the share of its bytes left, one nothing measured (a summary the policy
//! wrote) the session's density, and every request the agent's fixed prompt
//! on top. Where nothing was measured (smith's own sessions) the real size
//! is the estimate, to the token.

use std::sync::Arc;

use crate::transcript::measured::{counts_without_thinking, Measured};
use crate::transcript::Message;

/// What a session's measurement says about every request beside its
/// messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    /// Tokens of every request that are no message: the fixed prompt.
    pub(crate) fixed: u64,
    /// Tokens per counted byte of a message nothing measured.
    pub(crate) density: f64,
    /// Whether the model stops counting the thinking of earlier turns.
    pub(crate) drops_thinking: bool,
}

impl Sizes {
    /// The sizes of a session measured as `m`.
    pub(crate) fn of(m: &Measured) -> Sizes {
        Sizes {
            fixed: m.fixed_prompt,
            density: m.density,
            drops_thinking: m.drops_thinking,
        }
    }

    /// The sizes of `session`, if its log measured it.
    pub(crate) fn of_session(session: &crate::transcript::Session) -> Option<Sizes> {
        session.measured.as_ref().map(Sizes::of)
    }
}

/// The real count of a working history, kept as the replay changes it.
pub(crate) struct Tracker {
    sizes: Sizes,
    /// Per message of the working history: its real tokens as counted now.
    tokens: Vec<u64>,
    /// Their sum.
    total: u64,
    /// The last message that starts a turn: the assistant messages before
    /// it count without their thinking where the model drops it.
    last_turn: Option<usize>,
    /// What the previous request sent: its messages and real tokens.
    sent: Option<(usize, u64)>,
}

impl Tracker {
    pub(crate) fn new(sizes: Sizes) -> Tracker {
        Tracker {
            sizes,
            tokens: Vec::new(),
            total: 0,
            last_turn: None,
            sent: None,
        }
    }

    fn dropped(&self, i: usize, m: &Message) -> bool {
        counts_without_thinking(i, m, self.last_turn)
    }

    /// Appends `m` to the history `working` (not yet holding it).
    pub(crate) fn push(&mut self, working: &[Arc<Message>], m: &Message) {
        let i = working.len();
        if self.sizes.drops_thinking && m.starts_real_turn() {
            let from = self.last_turn.unwrap_or(0);
            self.last_turn = Some(i);
            for (j, w) in working.iter().enumerate().skip(from) {
                if w.role != crate::transcript::Role::Assistant || w.thinking_bytes() == 0 {
                    continue;
                }
                let now = w.real_tokens(true, self.sizes.density);
                self.total = self.total - self.tokens[j] + now;
                self.tokens[j] = now;
            }
        }
        let t = m.real_tokens(self.dropped(i, m), self.sizes.density);
        self.tokens.push(t);
        self.total += t;
    }

    /// Counts `working` again from scratch: after a compaction replaced it.
    pub(crate) fn reset(&mut self, working: &[Arc<Message>]) {
        self.last_turn = if self.sizes.drops_thinking {
            working.iter().rposition(|m| m.starts_real_turn())
        } else {
            None
        };
        self.tokens = working
            .iter()
            .enumerate()
            .map(|(i, m)| m.real_tokens(self.dropped(i, m), self.sizes.density))
            .collect();
        self.total = self.tokens.iter().sum();
    }

    /// A request sending `working` whose first `first_changed` messages
    /// (all, when `None`) are those of the previous request: the real
    /// tokens it sends and, of them, those a prompt cache could serve
    /// (the fixed prompt and the unchanged prefix).
    pub(crate) fn request(
        &mut self,
        working_len: usize,
        first_changed: Option<usize>,
    ) -> (i64, i64) {
        let fixed = self.sizes.fixed;
        let sent = fixed + self.total;
        let read = match self.sent {
            None => 0,
            Some((prev_len, prev_sent)) => {
                // Thinking the provider stopped counting does not end the
                // cached prefix: the logs read the previous prompt in full.
                let end = first_changed.unwrap_or(prev_len).min(prev_len);
                if end == prev_len && first_changed.is_none() {
                    prev_sent
                } else {
                    fixed
                        + self.tokens[..end.min(self.tokens.len())]
                            .iter()
                            .sum::<u64>()
                }
            }
        };
        self.sent = Some((working_len, sent));
        (sent as i64, read.min(sent) as i64)
    }
}
