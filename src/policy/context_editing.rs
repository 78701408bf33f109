//! `context-editing`: Anthropic's server-side tool result clearing,
//! `clear_tool_uses_20250919`.
//!
//! Source: Anthropic's API documentation, "Context editing"
//! (docs.claude.com/en/docs/build-with-claude/context-editing): when the
//! input exceeds the trigger (default 100000 input tokens), the oldest tool
//! results are cleared in chronological order and replaced with placeholder
//! text, keeping the most recent `keep` tool uses (default 3); `clear_at_least`
//! sets the least a clearing must reclaim (otherwise it is not applied);
//! `exclude_tools` lists tools whose results are never cleared.
//!
//! Rules modelled:
//! - nothing happens at or below the trigger (`--context-editing-trigger`
//!   charged tokens, whatever the window);
//! - above it, every tool result except the `clear_keep` most recent ones
//!   (counted over all tools) and those of `exclude_tools` is replaced by
//!   `[cleared]`, if together that reclaims at least `clear_at_least`
//!   tokens; otherwise nothing is cleared.
//!
//! Knobs (defaults): `--context-editing-trigger` (100000), `--clear-keep`
//! (3), `--clear-at-least` (0), `--exclude-tools` (none).
//!
//! Approximated: the placeholder text (the API's own is not documented;
//! `[cleared]` is what LangChain's mirror of the strategy writes); tool
//! inputs are never cleared (`clear_tool_inputs` false, the default);
//! thinking is left as recorded; tokens are smith's estimate, not the
//! API's count. A result is cleared only when the placeholder is shorter.

use std::sync::Arc;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Compaction, Compactor, Stage};
use crate::transcript::Message;

use super::knobs::{Described, PolicyKnob};
use super::{name_in, tool_names, tool_of, untouched, Pass};

/// What a cleared result says.
pub(crate) const PLACEHOLDER: &str = "[cleared]";

/// One line on what is modelled, with the values its knobs took.
pub(crate) fn describe(v: &Described) -> String {
    let least = PolicyKnob::ClearAtLeast;
    // At its default of 0 every clearing happens; the name says so.
    let least = if v.values(least) == [0.0] {
        least.field()
    } else {
        v.text(least)
    };
    format!(
        "Anthropic context editing (clear_tool_uses_20250919): above {} input tokens, clear every tool result but the {} most recent (minus exclude_tools), if that reclaims at least {least} tokens; the placeholder text is approximated and tool inputs are kept",
        v.text(PolicyKnob::ContextEditingTrigger),
        v.text(PolicyKnob::ClearKeep),
    )
}

/// Anthropic's tool result clearing.
#[derive(Clone, Debug)]
pub(crate) struct ContextEditing {
    budget: Budget,
    keep: usize,
    at_least: u64,
    exclude: Vec<String>,
}

impl ContextEditing {
    /// Clearing under `budget` (its trigger is the clearing trigger).
    pub(crate) fn new(
        budget: Budget,
        keep: usize,
        at_least: u64,
        exclude: Vec<String>,
    ) -> ContextEditing {
        ContextEditing {
            budget,
            keep,
            at_least,
            exclude,
        }
    }
}

impl Compactor for ContextEditing {
    fn name(&self) -> &str {
        "context-editing"
    }

    budget_methods!();

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        if before <= self.budget.trigger_tokens {
            return untouched(before, bytes, false);
        }
        let mut pass = Pass::new(messages, bytes, before, true);
        let results = pass.w.tool_result_positions(messages.len());
        let older = &results[..results.len().saturating_sub(self.keep)];
        let names = tool_names(messages);
        let exclude: Vec<&str> = self.exclude.iter().map(String::as_str).collect();
        let doomed: Vec<(usize, usize)> = older
            .iter()
            .copied()
            .filter(|&(i, j)| {
                let b = &messages[i].content[j];
                let excluded = tool_of(&names, b).is_some_and(|n| name_in(n, &exclude));
                !excluded && b.text_len() > PLACEHOLDER.len()
            })
            .collect();
        let reclaim: u64 = doomed
            .iter()
            .map(|&(i, j)| (messages[i].content[j].text_len() - PLACEHOLDER.len()) as u64)
            .sum::<u64>()
            / BYTES_PER_TOKEN;
        if doomed.is_empty() || reclaim < self.at_least {
            return untouched(before, bytes, true);
        }
        pass.stage(Stage::Truncate, |p| {
            let mut changed = false;
            for &(i, j) in &doomed {
                changed |= p.clear_result(i, j, PLACEHOLDER);
            }
            changed
        });
        pass.finish(&self.budget)
    }
}
