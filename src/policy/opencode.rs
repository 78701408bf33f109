//! `opencode`: sst/opencode's pruning and compaction.
//!
//! Source: the public repository sst/opencode
//! (`packages/opencode/src/session/compaction.ts`): an overflow check
//! against the model's window minus its output reserve, a summary that
//! replaces everything before it, and `prune`, which walks back through the
//! history, skips the last two user turns, protects the most recent 40000
//! tokens of tool output, stops at a summary or at an output it already
//! cleared, and clears the older outputs to
//! `[Old tool result content cleared]` only if that reclaims more than
//! 20000 tokens.
//!
//! Rules modelled:
//! - pruning as above, at the first request of every real turn (opencode
//!   prunes when its loop ends, before the next prompt; here over the
//!   history before that prompt) and again when the request is above the
//!   trigger;
//! - above the trigger, `max_tokens - opencode_reserve` charged tokens,
//!   after pruning, the whole history is replaced by the summary;
//! - results of the `skill` tool are never pruned.
//!
//! Knobs (defaults): `--opencode-reserve` (20000), `--prune-protect`
//! (40000), `--prune-minimum` (20000), `--prune-turns` (2).
//!
//! Approximated: opencode's per-output estimate is characters / 4, here
//! bytes / 4; its reserve is the model's output limit capped at 32000,
//! modelled as a fixed 20000; on overflow opencode summarises without
//! pruning first; the summary is smith's offline stand-in, and opencode's
//! "continue" message after it is not added. A result is cleared only when
//! the placeholder is shorter.

use std::sync::Arc;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Compaction, Compactor, Stage};
use crate::transcript::{BlockType, Message, Role};

use super::knobs::{Described, PolicyKnob};
use super::{is_summary_note, name_in, tool_names, tool_of, untouched, Pass, Summarizer};

/// Tools whose output is never pruned.
pub(crate) const PROTECTED_TOOLS: [&str; 1] = ["skill"];
/// What a pruned output says.
pub(crate) const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// One line on what is modelled, with the values its knobs took.
pub(crate) fn describe(v: &Described) -> String {
    let reserve = v.text(PolicyKnob::OpencodeReserve);
    format!(
        "opencode: prune at each new prompt and at the window minus {reserve} (skip the last {} user turns, protect the newest {} tokens of tool output, clear older outputs only if that reclaims more than {} tokens), then summarise the whole history if still above; its output reserve is modelled as a fixed {reserve} tokens and the summary is smith's offline stand-in",
        v.text(PolicyKnob::PruneTurns),
        v.text(PolicyKnob::PruneProtect),
        v.text(PolicyKnob::PruneMinimum),
    )
}

/// opencode's pruning and compaction.
#[derive(Clone, Debug)]
pub(crate) struct Opencode {
    budget: Budget,
    protect: u64,
    minimum: u64,
    turns: usize,
    summarizer: Summarizer,
}

impl Opencode {
    /// opencode under `budget` (trigger at the window minus the reserve).
    pub(crate) fn new(
        budget: Budget,
        protect: u64,
        minimum: u64,
        turns: usize,
        summarizer: Summarizer,
    ) -> Opencode {
        Opencode {
            budget,
            protect,
            minimum,
            turns,
            summarizer,
        }
    }

    /// Prunes the outputs before `end`; whether it cleared any.
    fn prune(&self, p: &mut Pass, end: usize) -> bool {
        let names = tool_names(&p.w.messages[..end]);
        let mut turns = 0usize;
        let mut total = 0u64;
        let mut pruned = 0u64;
        let mut doomed: Vec<(usize, usize)> = Vec::new();
        'walk: for i in (0..end).rev() {
            let m = &p.w.messages[i];
            if m.role == Role::User {
                if is_summary_note(m) {
                    break;
                }
                turns += 1;
            }
            if turns < self.turns || m.role != Role::Tool {
                continue;
            }
            for (j, b) in m.content.iter().enumerate().rev() {
                if b.kind != BlockType::ToolResult {
                    continue;
                }
                if b.text_bytes() == PLACEHOLDER.as_bytes() {
                    break 'walk;
                }
                if tool_of(&names, b).is_some_and(|n| name_in(n, &PROTECTED_TOOLS)) {
                    continue;
                }
                let estimate = b.text_len() as u64 / BYTES_PER_TOKEN;
                total += estimate;
                if total > self.protect {
                    pruned += estimate;
                    doomed.push((i, j));
                }
            }
        }
        if pruned <= self.minimum {
            return false;
        }
        let mut changed = false;
        for &(i, j) in doomed.iter().rev() {
            changed |= p.clear_result(i, j, PLACEHOLDER);
        }
        changed
    }
}

impl Compactor for Opencode {
    fn name(&self) -> &str {
        "opencode"
    }

    budget_methods!();

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let trigger = self.budget.trigger_tokens;
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        let triggered = before > trigger;
        // A new prompt: opencode's loop ended just before it, and pruned then.
        let new_prompt = messages.last().is_some_and(|m| m.starts_real_turn())
            && messages.iter().any(|m| m.role == Role::Assistant);
        if !triggered && !new_prompt {
            return untouched(before, bytes, false);
        }
        let mut pass = Pass::new(messages, bytes, before, triggered);
        let end = if triggered {
            messages.len()
        } else {
            messages.len() - 1
        };
        pass.stage(Stage::Truncate, |p| self.prune(p, end));
        if triggered && pass.charged(&self.budget) > trigger {
            return pass.summarize_all(Vec::new(), &self.summarizer, &self.budget);
        }
        pass.finish(&self.budget)
    }
}
