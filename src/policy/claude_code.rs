//! `claude-code`: Claude Code's auto-compact with micro-compaction first.
//!
//! Source: Anthropic's Claude Code documentation (docs.claude.com, "Manage
//! Claude's context": `/compact` and auto-compact summarise the
//! conversation when the context window is nearly full) and public
//! analyses of its behaviour (micro-compaction of old tool results to
//! `[Old tool result content cleared]`, keeping the most recent ones; the
//! auto-compact threshold at the window minus 20000 tokens reserved for the
//! summary's output and a 13000-token buffer).
//!
//! Rules modelled:
//! - nothing happens below the trigger, `max_tokens - 33000` charged tokens;
//! - at or above it, first every result of `Read`, `Bash`, `Grep`, `Glob`,
//!   `WebSearch`, `WebFetch`, `Edit` and `Write` (also under smith's names
//!   `read_file`, `bash`, `grep`, `glob`, `web_search`, `web_fetch`,
//!   `edit_file`, `write_file`) except the `keep` most recent of them is
//!   replaced by `[Old tool result content cleared]`;
//! - if the request is still at or above the trigger, the whole history is
//!   replaced by a summary.
//!
//! Knobs (defaults): `--claude-code-keep` (5), `--claude-code-reserve`
//! (33000 = 20000 summary output + 13000 buffer).
//!
//! Held against the logs (`calibrate`'s peer-trigger table): Claude Code
//! 2.1.39 to 2.1.148 compact where this reserve puts the trigger (the same
//! request, or one earlier); 2.0.76 and 2.1.6 compacted 35k to 45k below
//! the window, about `--claude-code-reserve 45000` (their larger output
//! reservation), so the default is the newer versions'.
//!
//! Approximated: the summary is smith's offline stand-in of
//! `summary_tokens` tokens (Claude Code's is model-written, up to 20000
//! tokens, and is followed by re-reads of recently used files, which are not
//! modelled). Micro-compaction runs here only at the trigger; Claude Code
//! also runs it on its own schedule (idle time, cache editing). A result is
//! cleared only when the placeholder is shorter.

use std::sync::Arc;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Compaction, Compactor, Stage};
use crate::transcript::Message;

use super::knobs::{Described, PolicyKnob};
use super::{name_in, tool_names, tool_of, untouched, Pass, Summarizer};

/// What a cleared result says.
pub(crate) const PLACEHOLDER: &str = "[Old tool result content cleared]";

/// The tools whose old results are cleared: Claude Code's names and
/// smith's (which the Claude Code importer maps them to).
pub(crate) const CLEARABLE_TOOLS: [&str; 16] = [
    "Read",
    "read_file",
    "Bash",
    "bash",
    "Grep",
    "grep",
    "Glob",
    "glob",
    "WebSearch",
    "web_search",
    "WebFetch",
    "web_fetch",
    "Edit",
    "edit_file",
    "Write",
    "write_file",
];

/// One line on what is modelled, with the values its knobs took.
pub(crate) fn describe(v: &Described) -> String {
    // Claude Code's own names: every other entry of the list.
    let tools: Vec<&str> = CLEARABLE_TOOLS.iter().step_by(2).copied().collect();
    format!(
        "Claude Code: at the window minus {} tokens, clear old {} results keeping the {} most recent, then summarise the whole history if still above; the summary is smith's offline stand-in and recently read files are not re-attached",
        v.text(PolicyKnob::ClaudeCodeReserve),
        tools.join("/"),
        v.text(PolicyKnob::ClaudeCodeKeep),
    )
}

/// Claude Code's compaction.
#[derive(Clone, Debug)]
pub(crate) struct ClaudeCode {
    budget: Budget,
    keep: usize,
    summarizer: Summarizer,
}

impl ClaudeCode {
    /// Claude Code under `budget` (trigger at the window minus the
    /// reserve), keeping `keep` clearable results.
    pub(crate) fn new(budget: Budget, keep: usize, summarizer: Summarizer) -> ClaudeCode {
        ClaudeCode {
            budget,
            keep,
            summarizer,
        }
    }
}

impl Compactor for ClaudeCode {
    fn name(&self) -> &str {
        "claude-code"
    }

    budget_methods!();

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let trigger = self.budget.trigger_tokens;
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        if before < trigger {
            return untouched(before, bytes, false);
        }
        let mut pass = Pass::new(messages, bytes, before, true);
        let names = tool_names(messages);
        let clearable: Vec<(usize, usize)> = pass
            .w
            .tool_result_positions(messages.len())
            .into_iter()
            .filter(|&(i, j)| {
                tool_of(&names, &messages[i].content[j])
                    .is_some_and(|n| name_in(n, &CLEARABLE_TOOLS))
            })
            .collect();
        let stale = &clearable[..clearable.len().saturating_sub(self.keep)];
        pass.stage(Stage::Truncate, |p| {
            let mut changed = false;
            for &(i, j) in stale {
                changed |= p.clear_result(i, j, PLACEHOLDER);
            }
            changed
        });
        if pass.charged(&self.budget) >= trigger {
            return pass.summarize_all(Vec::new(), &self.summarizer, &self.budget);
        }
        pass.finish(&self.budget)
    }
}
