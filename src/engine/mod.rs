//! The engine: smith's `Context.compact`, to the byte (docs/engine.md §4).
//!
//! [`Engine::compact`] takes a history and returns what smith would send: the
//! same history untouched below the trigger, otherwise the result of stages
//! 0 (thinking), 0b (attachments), 1 (duplicates), 2 (truncate) and, if still
//! over the target, 3 (summarize, or the desperate pass when there is no turn
//! boundary to cut at). It also reports what each stage did, which smith
//! does not, so a replay can count it.

pub(crate) mod budget;
pub mod constants;
pub(crate) mod knobs;
mod label;
pub mod learn;
pub(crate) mod marks;
#[cfg(test)]
mod next_tests;
#[cfg(test)]
mod properties_tests;
pub(crate) mod record;
#[cfg(test)]
mod rules_tests;
pub(crate) mod stages;
mod version;
pub(crate) mod working;

use std::sync::Arc;

use serde::Serialize;

use crate::estimate::{Measure, BYTES4};
use crate::transcript::Message;

pub use budget::{Budget, Config};
pub(crate) use label::window_label;
use marks::RecordMarks;
use record::{Recorder, Summarized};
use stages::summarize::Summarizer;
pub use version::EngineVersion;
use working::Working;

/// A stage of compaction, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Thinking,
    Attachments,
    Duplicates,
    Truncate,
    Summarize,
    Drop,
}

impl Stage {
    /// Every stage, in order.
    pub(crate) const ALL: [Stage; 6] = [
        Stage::Thinking,
        Stage::Attachments,
        Stage::Duplicates,
        Stage::Truncate,
        Stage::Summarize,
        Stage::Drop,
    ];

    /// The name smith reports.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Stage::Thinking => "thinking",
            Stage::Attachments => "attachments",
            Stage::Duplicates => "duplicates",
            Stage::Truncate => "truncate",
            Stage::Summarize => "summarize",
            Stage::Drop => "drop",
        }
    }

    /// Position in [`Stage::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }
}

/// What compaction did overall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    None,
    Truncated,
    Summarized,
    Dropped,
}

impl Strategy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Strategy::None => "none",
            Strategy::Truncated => "truncated",
            Strategy::Summarized => "summarized",
            Strategy::Dropped => "dropped",
        }
    }
}

/// One rewrite, for showing where compaction acted. Indices are into the
/// history before any summary cut.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Edit {
    pub(crate) message: usize,
    pub(crate) block: Option<usize>,
    pub(crate) kind: EditKind,
    pub(crate) bytes_before: u64,
    pub(crate) bytes_after: u64,
}

/// The kinds of rewrite.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub(crate) enum EditKind {
    ThinkingDropped { blocks: usize },
    AttachmentsRemoved { blocks: usize },
    Superseded,
    HeadKept,
    Stubbed,
}

/// Counts of what one compaction (or a sum of them) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Effects {
    /// Tokens each stage reclaimed, indexed by [`Stage::index`], charged
    /// tokens like `before` and `after` (smith's engine and the policies):
    /// each stage is credited with `charged(history before it) -
    /// charged(history after it)`, so over one compaction they add up to
    /// `before - after` exactly, whatever the ratio and overhead (rounding
    /// each stage's raw tokens separately would not). Summarize can be
    /// negative: a stand-in larger than what it replaced.
    pub reclaimed: [i64; 6],
    pub(crate) thinking_dropped: u64,
    pub(crate) attachments_removed: u64,
    pub reads_superseded: u64,
    /// Tool results cut to their head.
    pub results_truncated: u64,
    /// Tool results collapsed to a one-line stub by truncation.
    pub(crate) results_stubbed: u64,
    /// Messages replaced by a summary or dropped.
    pub(crate) messages_summarized: u64,
}

impl Effects {
    /// Tool results whose content was lost (head kept or stubbed).
    pub fn results_mangled(&self) -> u64 {
        self.results_truncated + self.results_stubbed
    }

    /// Adds another compaction's effects.
    pub fn add(&mut self, other: &Effects) {
        for (a, b) in self.reclaimed.iter_mut().zip(other.reclaimed) {
            *a += b;
        }
        self.thinking_dropped += other.thinking_dropped;
        self.attachments_removed += other.attachments_removed;
        self.reads_superseded += other.reads_superseded;
        self.results_truncated += other.results_truncated;
        self.results_stubbed += other.results_stubbed;
        self.messages_summarized += other.messages_summarized;
    }
}

/// The outcome of one compaction check.
#[derive(Clone, Debug)]
pub struct Compaction {
    /// The new history, or `None` when it is returned untouched.
    pub messages: Option<Vec<Arc<Message>>>,
    /// Bytes of the history as returned (under an estimator other than
    /// bytes4, its size in that estimator's units: what the replay keeps as
    /// its running total).
    pub history_bytes: u64,
    pub strategy: Strategy,
    /// Charged tokens before and after.
    pub before: i64,
    pub after: i64,
    /// Stages that changed something, in the order they ran, each once.
    pub(crate) stages: Vec<Stage>,
    pub(crate) effects: Effects,
    pub(crate) edits: Vec<Edit>,
    /// Where the history was cut for a summary, if it was.
    pub(crate) cut: Option<usize>,
    /// The lowest index whose message differs from the input's (0 after a
    /// summary): everything from there on is new to a prompt cache.
    pub(crate) first_changed: Option<usize>,
    /// Whether `before` was over the trigger, so compaction had to act.
    pub triggered: bool,
    /// A summary the engine chose not to keep, if it chose one: `None`
    /// wherever a summary was kept or never considered, and always under
    /// smith 0.4.
    pub(crate) withheld: Option<Withheld>,
}

/// A summary that the #118 engine did not keep (docs/engine.md §4.9). The
/// history is then returned as the cheaper stages left it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Withheld {
    /// The prefix was only an earlier summary or drop note: refused before
    /// the summarizer was called, so nothing was paid.
    Refused,
    /// The summary came back larger than what it would replace: discarded
    /// after the call, which read `read` raw tokens of history and wrote
    /// the summary, and was paid for.
    Discarded { read: u64 },
}

impl Compaction {
    /// `after <= target_tokens`.
    pub(crate) fn reached_target(&self, budget: &Budget) -> bool {
        self.after <= budget.target_tokens
    }

    /// `after > max_tokens`: over the ceiling with nothing left to reclaim.
    pub(crate) fn exhausted(&self, budget: &Budget) -> bool {
        self.after > budget.max_tokens
    }

    /// The history returned as it was: what every check below its threshold
    /// answers.
    pub(crate) fn untouched(before: i64, bytes: u64, triggered: bool) -> Compaction {
        Compaction {
            messages: None,
            history_bytes: bytes,
            strategy: Strategy::None,
            before,
            after: before,
            stages: Vec::new(),
            effects: Effects::default(),
            edits: Vec::new(),
            cut: None,
            first_changed: None,
            triggered,
            withheld: None,
        }
    }
}

/// A config made ready to compact: its budget and its summary stand-in.
#[derive(Clone, Debug)]
pub struct Engine {
    pub(crate) config: Config,
    pub(crate) budget: Budget,
    summarizer: Summarizer,
    /// How the history is measured: smith's bytes / 4 unless built with
    /// [`Engine::with_measure`].
    measure: Measure,
    /// Which results of the session's record hold a marker, when known
    /// ([`Engine::with_marks`]); else each is searched.
    marks: Option<Arc<RecordMarks>>,
}

impl Engine {
    pub fn new(config: Config) -> Engine {
        Engine::with_measure(config, Measure::bytes())
    }

    /// An engine that estimates with `measure` instead of bytes / 4: the
    /// trigger, the target and every figure are in its tokens.
    pub(crate) fn with_measure(config: Config, measure: Measure) -> Engine {
        Engine {
            budget: Budget::new(&config),
            summarizer: Summarizer::measured(config.summary_tokens, &measure),
            config,
            measure,
            marks: None,
        }
    }

    /// This engine for the replays of one record, whose results' markers
    /// `marks` holds: what it decides is the same, it only searches less.
    pub(crate) fn with_marks(mut self, marks: Arc<RecordMarks>) -> Engine {
        self.marks = Some(marks);
        self
    }

    /// How this engine measures a history.
    pub(crate) fn measure(&self) -> &Measure {
        &self.measure
    }

    /// Compacts `messages` (measuring them first).
    pub fn compact(&self, messages: &[Arc<Message>]) -> Compaction {
        let bytes = self.measure.history(messages);
        self.compact_measured(messages, bytes)
    }

    /// Compacts `messages` whose byte total (units of the engine's measure)
    /// the caller already keeps: below the trigger this is O(1).
    pub(crate) fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let budget = &self.budget;
        let before = budget.charged(self.measure.tokens(bytes));
        if before <= budget.trigger_tokens {
            return Compaction::untouched(before, bytes, false);
        }
        // A large tool set can leave no room under the target: aim at the
        // ceiling instead and let the report say the target was missed.
        let mut target = budget.allowance(budget.target_tokens);
        if target == 0 {
            target = budget.allowance(budget.max_tokens);
        }
        // Not even the ceiling fits: nothing done to the history changes that.
        if target == 0 {
            return Compaction::untouched(before, bytes, true);
        }

        let mut w = Working::measured(messages, bytes, self.measure.clone());
        let mut record = Recorder::default();
        let window = self.config.window_turns;
        let cap = self.config.result_cap;
        let marks = self.marks.as_deref();

        let step = |stage: Stage,
                    w: &mut Working,
                    record: &mut Recorder,
                    f: &mut dyn FnMut(&mut Working, &mut Recorder) -> bool| {
            let tokens = w.tokens();
            if f(w, record) {
                record.fired(stage);
            }
            record.reclaimed(stage, reclaimed_charged(budget, tokens, w.tokens()));
        };
        step(Stage::Thinking, &mut w, &mut record, &mut |w, r| {
            stages::thinking::run(w, target, r)
        });
        step(Stage::Attachments, &mut w, &mut record, &mut |w, r| {
            stages::attachments::run(w, target, window, false, r)
        });
        step(Stage::Duplicates, &mut w, &mut record, &mut |w, r| {
            stages::duplicates::run(w, target, window, r)
        });
        step(Stage::Truncate, &mut w, &mut record, &mut |w, r| {
            stages::truncate::run(w, target, window, cap, marks, r)
        });

        if !w.fits(target) {
            let fixed = self.config.engine.fixes_118();
            let (mut cut, tail_fits) =
                stages::summarize::safe_cut(&w.messages, w.bytes, target, &self.measure);
            // 0.4 gives up the recency window only where there is no turn
            // boundary at all; after #118 also where no boundary helps: the
            // tail that would survive the cut is over the target by itself
            // (one long agentic turn), so a summary could only replace
            // what little precedes it.
            if cut == 0 || (fixed && !tail_fits) {
                // The last thing left to give is the recency window.
                // Attachments first, as everywhere.
                step(Stage::Attachments, &mut w, &mut record, &mut |w, r| {
                    stages::attachments::run(w, target, 0, true, r)
                });
                step(Stage::Truncate, &mut w, &mut record, &mut |w, r| {
                    stages::truncate::run(w, target, 0, cap, marks, r)
                });
                if cut == 0 || w.fits(target) {
                    return record.staged(w, budget, before, true);
                }
                // The turn starts are where they were: only results shrank.
                cut = stages::summarize::safe_cut_index_measured(
                    &w.messages,
                    w.bytes,
                    target,
                    &self.measure,
                );
            }
            let (note, stage) = self.summarizer.note(cut);
            let prefix_bytes = self.measure.history(&w.messages[..cut]);
            if fixed {
                if let Some(withheld) =
                    self.withheld(&w.messages[..cut], &note, stage, prefix_bytes)
                {
                    let mut c = record.staged(w, budget, before, true);
                    c.withheld = Some(withheld);
                    return c;
                }
            }
            return self.summarize(w, cut, (note, stage), prefix_bytes, before, record);
        }
        record.staged(w, budget, before, true)
    }

    /// Why the #118 engine keeps no summary of the messages before `cut`,
    /// if it keeps none (docs/engine.md §4.9): a prefix of nothing but an
    /// earlier summary or drop note is refused before the summarizer is
    /// called; a summary larger than the messages it would replace is
    /// discarded after the call. A failing summarizer's drop note is no
    /// summary that came back, so it is kept as 0.4 keeps it.
    fn withheld(
        &self,
        prefix: &[Arc<Message>],
        note: &Message,
        stage: Stage,
        prefix_bytes: u64,
    ) -> Option<Withheld> {
        if prefix.iter().all(|m| stages::summarize::is_summary_note(m)) {
            return Some(Withheld::Refused);
        }
        (stage == Stage::Summarize && self.measure.message(note) > prefix_bytes).then(|| {
            Withheld::Discarded {
                read: self.measure.tokens(prefix_bytes),
            }
        })
    }

    /// Replaces the messages before `cut`, `prefix_bytes` in all, by the
    /// summary (or drop note) `note`.
    fn summarize(
        &self,
        w: Working,
        cut: usize,
        (note, stage): (Message, Stage),
        prefix_bytes: u64,
        before: i64,
        record: Recorder,
    ) -> Compaction {
        let bytes = w.bytes - prefix_bytes + self.measure.message(&note);
        let mut messages = Vec::with_capacity(w.messages.len() - cut + 1);
        messages.push(Arc::new(note));
        messages.extend_from_slice(&w.messages[cut..]);
        let summary = Summarized {
            stage,
            messages,
            bytes,
            from: w.tokens(),
            to: self.measure.tokens(bytes),
            cut,
            replaced: cut,
        };
        record.summarized(summary, &self.budget, before, true)
    }
}

/// What enters the working history when the record appends a message, and
/// what was cut from it on the way in.
#[derive(Clone, Debug)]
pub struct Admitted {
    /// The message as the history holds it.
    pub(crate) message: Arc<Message>,
    /// Counts of what admission cut (results capped on arrival count as
    /// `results_truncated`, their tokens as reclaimed by truncation).
    pub(crate) effects: Effects,
    /// The rewrites, with `message` left 0: the replay sets it to the
    /// position the message takes in the history.
    pub(crate) edits: Vec<Edit>,
}

impl Admitted {
    /// The message kept as it is.
    pub(crate) fn unchanged(message: &Arc<Message>) -> Admitted {
        Admitted {
            message: message.clone(),
            effects: Effects::default(),
            edits: Vec::new(),
        }
    }
}

/// Anything the replay can run before each request: smith's engine, or
/// another agent's policy modelled on the same estimate (see
/// `crate::policy`). Each returns a [`Compaction`] so every policy's row
/// reads like smith's.
///
/// What the replay, `show --at` and the loss measure rely on: without a
/// `cut`, the history returned has the input's messages at the same
/// positions (rewritten in place at most); with a `cut`, it is some carried
/// messages of the input (Codex keeps recent user messages), then the
/// summary or drop note, then the input's `[cut..]` rewritten in place at
/// most. A tool call and its result are never separated.
pub trait Compactor: Sync {
    /// A short name for tables and files ("smith", "masking", ...).
    fn name(&self) -> &str;

    /// The budget requests are charged under: its `charged` prices every
    /// request and its thresholds draw the charts.
    fn budget(&self) -> &Budget;

    /// Compacts `messages`, whose byte total the caller keeps, before a
    /// request. Below its threshold a policy returns them untouched.
    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction;

    /// What enters the history when the record appends `message`. smith keeps
    /// every message as it is; a policy that caps results on arrival (Codex)
    /// rewrites them here. The replay adds the effects and edits to those of
    /// the next request, the first to send the message.
    fn admit(&self, message: &Arc<Message>) -> Admitted {
        Admitted::unchanged(message)
    }

    /// How the compactor measures a history: the replay keeps its running
    /// total and prices the cached prefix with it. Every policy other than
    /// smith's engine estimates bytes / 4.
    fn measure(&self) -> &Measure {
        &BYTES4
    }

    /// This compactor with every request charged at `ratio` and its
    /// thresholds where they were: what a learned ratio runs each request
    /// under (see [`learn`]).
    fn at_ratio(&self, ratio: f64) -> Box<dyn Compactor + '_>;

    /// [`Compactor::compact_measured`] at request `request` (0-based) of
    /// the replay, which asks once per request in order. A compactor that
    /// acts by request (cold requests, a learned ratio) overrides it.
    fn compact_request(&self, request: usize, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        let _ = request;
        self.compact_measured(messages, bytes)
    }

    /// The ratio in force at request `request` when it is learned, not the
    /// budget's; `None` for a fixed ratio.
    fn ratio_at(&self, request: usize) -> Option<f64> {
        let _ = request;
        None
    }
}

impl Engine {
    /// This engine charging at `ratio`.
    pub(crate) fn with_ratio(&self, ratio: f64) -> Engine {
        let mut e = self.clone();
        e.config.ratio = ratio;
        e.budget = e.budget.at_ratio(ratio);
        e
    }
}

impl Compactor for Engine {
    fn name(&self) -> &str {
        "smith"
    }

    fn budget(&self) -> &Budget {
        &self.budget
    }

    fn compact_measured(&self, messages: &[Arc<Message>], bytes: u64) -> Compaction {
        Engine::compact_measured(self, messages, bytes)
    }

    fn measure(&self) -> &Measure {
        &self.measure
    }

    fn at_ratio(&self, ratio: f64) -> Box<dyn Compactor + '_> {
        Box::new(self.with_ratio(ratio))
    }
}

/// What a stage that took the raw history estimate from `from` to `to`
/// reclaimed, in charged tokens. The differences of consecutive charged
/// figures telescope: their sum over a compaction is `before - after`.
pub(crate) fn reclaimed_charged(budget: &Budget, from: u64, to: u64) -> i64 {
    budget.charged(from) - budget.charged(to)
}
