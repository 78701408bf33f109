//! What one compaction did, recorded as it does it: the one bookkeeping type
//! that smith's stages and every other agent's policy (`crate::policy`)
//! report into, so an edit is counted, a stage credited and a summary
//! accounted the same way whoever made them.
//!
//! Each kind of record is one method: [`Recorder::edit`] lists a rewrite and
//! counts it under the counter its kind feeds, [`Recorder::fired`] notes a
//! stage that changed something, [`Recorder::reclaimed`] credits a stage
//! with tokens, [`Recorder::summary`] accounts a summary or drop note. The
//! record then becomes what the replay takes: a [`Compaction`] of the
//! history the stages left ([`Recorder::staged`]) or of a summarised one
//! ([`Recorder::summarized`]), or the [`Admitted`] of a message cut on
//! arrival ([`Recorder::admitted`]).

use std::sync::Arc;

use crate::transcript::Message;

use super::working::Working;
use super::{Admitted, Budget, Compaction, Edit, EditKind, Effects, Stage, Strategy};

/// The effects, edits and stages of one compaction (or one arrival) so far.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    effects: Effects,
    edits: Vec<Edit>,
    /// Stages that changed something, in the order they first did.
    stages: Vec<Stage>,
}

/// A history whose messages before `cut` a summary (or drop note) replaced:
/// what [`Recorder::summarized`] reports.
pub(crate) struct Summarized {
    /// [`Stage::Summarize`], or [`Stage::Drop`] for a failing summarizer's
    /// note.
    pub(crate) stage: Stage,
    /// The history as it is sent: any carried messages, the note, then the
    /// messages from `cut` on.
    pub(crate) messages: Vec<Arc<Message>>,
    /// Its size in the compactor's units.
    pub(crate) bytes: u64,
    /// The raw estimate before the summary (after the other stages) and
    /// after it.
    pub(crate) from: u64,
    pub(crate) to: u64,
    /// Where the history was cut.
    pub(crate) cut: usize,
    /// Messages the note stands for: `cut` less those carried beside it.
    pub(crate) replaced: usize,
}

impl Recorder {
    /// Lists a rewrite of message `message` (block `block`, when it rewrote
    /// one) from `bytes_before` to `bytes_after` bytes and counts it: the
    /// one place that says which counter each kind of edit feeds.
    pub(crate) fn edit(
        &mut self,
        message: usize,
        block: Option<usize>,
        kind: EditKind,
        bytes_before: u64,
        bytes_after: u64,
    ) {
        let e = &mut self.effects;
        match kind {
            EditKind::ThinkingDropped { blocks } => e.thinking_dropped += blocks as u64,
            EditKind::AttachmentsRemoved { blocks } => e.attachments_removed += blocks as u64,
            EditKind::Superseded => e.reads_superseded += 1,
            EditKind::HeadKept => e.results_truncated += 1,
            EditKind::Stubbed => e.results_stubbed += 1,
        }
        self.edits.push(Edit {
            message,
            block,
            kind,
            bytes_before,
            bytes_after,
        });
    }

    /// Notes that `stage` changed something: each stage is listed once, in
    /// the order it first did.
    pub(crate) fn fired(&mut self, stage: Stage) {
        if !self.stages.contains(&stage) {
            self.stages.push(stage);
        }
    }

    /// Credits `stage` with `tokens` reclaimed (charged tokens in a
    /// compaction, see [`super::reclaimed_charged`]; raw ones for a result
    /// capped on arrival, which nothing charges).
    pub(crate) fn reclaimed(&mut self, stage: Stage, tokens: i64) {
        self.effects.reclaimed[stage.index()] += tokens;
    }

    /// Accounts a summary or drop note at `stage` standing for `replaced`
    /// messages, which took the charged estimate down by `tokens` (negative
    /// when the note is larger than what it replaced).
    pub(crate) fn summary(&mut self, stage: Stage, replaced: usize, tokens: i64) {
        self.fired(stage);
        self.reclaimed(stage, tokens);
        self.effects.messages_summarized += replaced as u64;
    }

    /// The counts recorded so far.
    #[cfg(test)]
    pub(crate) fn effects(&self) -> &Effects {
        &self.effects
    }

    /// The compaction that leaves the history as the stages left it in `w`,
    /// from `before` charged tokens.
    pub(crate) fn staged(
        self,
        w: Working,
        budget: &Budget,
        before: i64,
        triggered: bool,
    ) -> Compaction {
        let strategy = if self.stages.is_empty() {
            Strategy::None
        } else {
            Strategy::Truncated
        };
        let after = budget.charged(w.tokens());
        Compaction {
            history_bytes: w.bytes,
            first_changed: w.first_changed,
            messages: w.first_changed.is_some().then_some(w.messages),
            strategy,
            before,
            after,
            stages: self.stages,
            effects: self.effects,
            edits: self.edits,
            cut: None,
            triggered,
            withheld: None,
        }
    }

    /// The compaction that ends in the summary `s`, from `before` charged
    /// tokens: the summary is accounted here.
    pub(crate) fn summarized(
        mut self,
        s: Summarized,
        budget: &Budget,
        before: i64,
        triggered: bool,
    ) -> Compaction {
        let strategy = match s.stage {
            Stage::Drop => Strategy::Dropped,
            _ => Strategy::Summarized,
        };
        self.summary(
            s.stage,
            s.replaced,
            super::reclaimed_charged(budget, s.from, s.to),
        );
        Compaction {
            messages: Some(s.messages),
            history_bytes: s.bytes,
            strategy,
            before,
            after: budget.charged(s.to),
            stages: self.stages,
            effects: self.effects,
            edits: self.edits,
            cut: Some(s.cut),
            first_changed: Some(0),
            triggered,
            withheld: None,
        }
    }

    /// What enters the history on arrival: `message` as rewritten, with what
    /// was recorded cutting it (edits at message 0, placed by the replay).
    pub(crate) fn admitted(self, message: Arc<Message>) -> Admitted {
        Admitted {
            message,
            effects: self.effects,
            edits: self.edits,
        }
    }
}
