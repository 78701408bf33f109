//! `masking`: observation masking, SWE-agent's "last N observations".
//!
//! Source: SWE-agent's history processor `last_n_observations`
//! (github.com/SWE-agent/SWE-agent, documented at swe-agent.com), and
//! Lindenbauer et al., "The Complexity Trap: Simple Observation Masking Is
//! as Efficient as LLM Summarization for Agent Context Management" (2025),
//! which found a window of 10 as good as LLM summaries at about half the
//! cost.
//!
//! Rules modelled:
//! - before every request, whatever its size, every tool result older than
//!   the `mask_window` most recent ones is replaced by the one-line
//!   placeholder `Old environment output: (N lines omitted)`, N being the
//!   result's line count;
//! - a result already masked stays as it is; the most recent `mask_window`
//!   results are sent whole.
//!
//! Knob (default): `--mask-window` M (10).
//!
//! Approximated: an observation is one tool result block (SWE-agent has one
//! observation per step; a smith step with parallel calls has several
//! results). SWE-agent keeps the task's first observation; in a smith
//! transcript the task is a user message, which is never masked anyway. The
//! placeholder replaces even a result shorter than itself, as SWE-agent
//! does. There is no threshold and no fallback: a request above the window
//! is counted as exhausted.

use std::sync::Arc;

use crate::engine::{Budget, Compaction, Compactor, EditKind, Stage};
use crate::transcript::{BlockType, Message, Role};

use super::{line_count, untouched, Pass};

/// The placeholder's text before and after the line count.
const PLACEHOLDER_HEAD: &str = "Old environment output: (";
const PLACEHOLDER_TAIL: &str = " lines omitted)";

/// One line on what is modelled (its one knob is named, not valued).
pub(crate) const SUMMARY: &str = "SWE-agent's last-M observations: before every request, results older than the last M become `Old environment output: (N lines omitted)`; one result block counts as one observation, no threshold and no fallback";

/// The placeholder of a result of `lines` lines.
pub(crate) fn placeholder(lines: usize) -> String {
    format!("{PLACEHOLDER_HEAD}{lines}{PLACEHOLDER_TAIL}")
}

/// Whether `text` is a masking placeholder.
pub(crate) fn is_placeholder(text: &[u8]) -> bool {
    text.strip_prefix(PLACEHOLDER_HEAD.as_bytes())
        .and_then(|t| t.strip_suffix(PLACEHOLDER_TAIL.as_bytes()))
        .is_some_and(|n| !n.is_empty() && n.iter().all(u8::is_ascii_digit))
}

/// Observation masking with a window of `window` results.
#[derive(Clone, Debug)]
pub(crate) struct Masking {
    budget: Budget,
    window: usize,
}

impl Masking {
    /// Masking under `budget` (its trigger is the window itself) keeping
    /// `window` results.
    pub(crate) fn new(budget: Budget, window: usize) -> Masking {
        Masking { budget, window }
    }
}

impl Compactor for Masking {
    fn name(&self) -> &str {
        "masking"
    }

    budget_methods!();

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let before = self
            .budget
            .charged(bytes / crate::engine::constants::BYTES_PER_TOKEN);
        let triggered = before > self.budget.trigger_tokens;
        // Newest first: the first `window` results stay, older unmasked ones go.
        let mut seen = 0usize;
        let mut stale: Vec<(usize, usize)> = Vec::new();
        for (i, m) in messages.iter().enumerate().rev() {
            if m.role != Role::Tool {
                continue;
            }
            for (j, b) in m.content.iter().enumerate().rev() {
                if b.kind != BlockType::ToolResult {
                    continue;
                }
                seen += 1;
                if seen > self.window && !is_placeholder(b.text_bytes()) {
                    stale.push((i, j));
                }
            }
        }
        if stale.is_empty() {
            return untouched(before, bytes, triggered);
        }
        let mut pass = Pass::new(messages, bytes, before, triggered);
        pass.stage(Stage::Truncate, |p| {
            for &(i, j) in stale.iter().rev() {
                let lines = line_count(p.w.messages[i].content[j].text_bytes());
                p.rewrite_result(i, j, placeholder(lines).into_bytes(), EditKind::Stubbed);
            }
            true
        });
        pass.finish(&self.budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_recognised_and_nothing_else() {
        assert!(is_placeholder(placeholder(12).as_bytes()));
        assert!(!is_placeholder(
            b"Old environment output: (x lines omitted)"
        ));
        assert!(!is_placeholder(b"Old environment output: ( lines omitted)"));
    }
}
