//! `recorded`: the agent's own run, as its log says it went.
//!
//! Source: the session's own log. An imported session keeps the agent's
//! compactions where they happened (`transcript::measured::AgentRun`):
//! Claude Code's `compact_boundary` with the `isCompactSummary` message
//! that follows it and its `microcompact_boundary` with the results it
//! cleared, Codex's `compacted` item with its `replacement_history`.
//!
//! Rules modelled:
//! - before the first request after one of the agent's compactions, the
//!   history becomes what the agent carried on with: for a full compaction
//!   the messages it kept (Codex's recent user messages), its summary as
//!   recorded, then the messages since; for a micro-compaction the history
//!   with the results it named cleared to `[Old tool result content
//!   cleared]`;
//! - nothing else is ever compacted, whatever the window.
//!
//! No knob: the run is the log's. A session recorded by smith itself has
//! no other agent's compactions; its recorded run is smith's engine under
//! the config given (smith's defaults unless set), which is what smith ran.
//!
//! Approximated: what the harness re-attached after a compaction and the
//! log does not keep (Claude Code's re-read files and todo list in system
//! reminders) is not in the history; `calibrate` prints, after each
//! compaction, how far the measured history is from the next recorded
//! prompt.

use std::ops::Range;
use std::sync::Arc;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::record::Summarized;
use crate::engine::working::Working;
use crate::engine::{Budget, Compaction, Compactor, EditKind, Stage};
use crate::transcript::measured::{compacted, AgentRun, Origin, CLEARED_RESULT};
use crate::transcript::{BlockType, Message, Role};

use super::{untouched, Pass};

/// One line on what is modelled.
pub(crate) const SUMMARY: &str = "the agent's own run: its compactions at the requests its log records them, with its own summaries and cleared results; nothing else compacted";

/// The agent's recorded compactions, replayed where they happened.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    budget: Budget,
    run: Arc<AgentRun>,
    /// The session's transcript: where a full compaction's kept messages
    /// come from.
    transcript: Arc<[Arc<Message>]>,
    /// Per request: the transcript index of the message answering it.
    answers: Arc<[usize]>,
}

impl Recorded {
    /// The run `run` of the session whose transcript is `transcript`,
    /// charged under `budget`.
    pub(crate) fn new(budget: Budget, run: Arc<AgentRun>, transcript: &[Arc<Message>]) -> Recorded {
        let answers = transcript
            .iter()
            .enumerate()
            .filter(|(_, m)| m.role == Role::Assistant)
            .map(|(i, _)| i)
            .collect();
        Recorded {
            budget,
            run,
            transcript: transcript.into(),
            answers,
        }
    }

    /// The transcript messages appended since the previous request (the
    /// tail of the working history), and the compactions that happened
    /// among them, before request `request`.
    fn due(&self, request: usize) -> Option<(Range<usize>, Range<usize>)> {
        let &end = self.answers.get(request)?;
        let start = match request {
            0 => 0,
            r => self.answers[r - 1],
        };
        let first = |b: &crate::transcript::session_file::CompactBoundary| {
            if request == 0 {
                b.message_index <= end
            } else {
                b.message_index > start && b.message_index <= end
            }
        };
        let list = &self.run.compactions;
        let from = list.iter().position(first)?;
        let to = from + list[from..].iter().take_while(|b| first(b)).count();
        Some((start..end, from..to))
    }
}

impl Compactor for Recorded {
    fn name(&self) -> &str {
        "recorded"
    }

    budget_methods!();

    fn compact_measured(&self, _messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        untouched(before, bytes, false)
    }

    fn compact_request(&self, request: usize, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let before = self.budget.charged(bytes / BYTES_PER_TOKEN);
        let Some((tail, due)) = self.due(request) else {
            return untouched(before, bytes, false);
        };
        // The working history ends with the transcript's messages since the
        // previous request; what comes before is the run's earlier history.
        let tail_start = messages.len().saturating_sub(tail.len());
        let mut origins: Vec<Option<Origin>> = (0..messages.len())
            .map(|i| (i >= tail_start).then(|| Origin::Message(tail.start + i - tail_start)))
            .collect();
        let mut pass = Pass::new(messages, bytes, before, true);
        // A full compaction's figures: the estimate before it, where it cut
        // and how many messages its summary stands for.
        let mut summary: Option<(u64, usize, usize)> = None;
        for j in due {
            let b = &self.run.compactions[j];
            let is_before = |o: &Option<Origin>| !matches!(o, Some(Origin::Message(i)) if *i >= b.message_index);
            if b.is_full() {
                let from = pass.w.tokens();
                let cut = origins.iter().filter(|o| is_before(o)).count();
                let context = origins
                    .iter()
                    .copied()
                    .zip(pass.w.messages.iter().cloned())
                    .collect();
                let summary_message = Arc::new(self.run.summary(j));
                let out = compacted(j, b, context, &self.transcript, summary_message);
                let carried = out
                    .iter()
                    .take_while(|(o, _)| !matches!(o, Some(Origin::Summary(_))))
                    .count();
                origins = out.iter().map(|(o, _)| *o).collect();
                let history: Vec<Arc<Message>> = out.into_iter().map(|(_, m)| m).collect();
                let history_bytes = history.iter().map(|m| m.bytes()).sum();
                pass.w = Working::new(&history, history_bytes);
                let replaced = cut.saturating_sub(carried);
                summary = Some(match summary {
                    None => (from, cut, replaced),
                    Some((f, c, r)) => (f, c, r + replaced),
                });
            } else {
                pass.stage(Stage::Truncate, |p| {
                    let mut cleared = false;
                    for (i, origin) in origins.iter().enumerate() {
                        if !is_before(origin) {
                            continue;
                        }
                        for k in 0..p.w.messages[i].content.len() {
                            let block = &p.w.messages[i].content[k];
                            let named = block.kind == BlockType::ToolResult
                                && block
                                    .tool_call_id
                                    .as_deref()
                                    .is_some_and(|id| b.cleared_tool_ids.iter().any(|c| c == id))
                                && block.text_bytes() != CLEARED_RESULT.as_bytes();
                            if named {
                                let text = CLEARED_RESULT.as_bytes().to_vec();
                                p.rewrite_result(i, k, text, EditKind::Stubbed);
                                cleared = true;
                            }
                        }
                    }
                    cleared
                });
            }
        }
        match summary {
            Some((from, cut, replaced)) => pass.finish_replaced(from, cut, replaced, &self.budget),
            None => pass.finish(&self.budget),
        }
    }
}

impl super::Pass {
    /// The history as it stands after the agent's own summary replaced
    /// `replaced` of the `cut` messages before it, from an estimate of
    /// `from` tokens.
    fn finish_replaced(
        mut self,
        from: u64,
        cut: usize,
        replaced: usize,
        budget: &Budget,
    ) -> Compaction {
        self.charge_steps(budget);
        let to = self.w.tokens();
        let summary = Summarized {
            stage: Stage::Summarize,
            bytes: self.w.bytes,
            messages: self.w.messages,
            from,
            to,
            cut,
            replaced,
        };
        self.record
            .summarized(summary, budget, self.before, self.triggered)
    }
}
