//! Other agents' compaction policies beside smith's, on the same estimate,
//! the same cost model and the same figures, so a row of any policy reads
//! like a row of smith's.
//!
//! Each policy is modelled from its public description in its own file,
//! whose module doc names the source, the rules modelled, the knobs with
//! their documented defaults, and what is approximated:
//!
//! | policy | file | acts |
//! |---|---|---|
//! | `smith` | [`crate::engine`] | smith's own engine, unchanged |
//! | `masking` | [`masking`] | every request: results older than the last M become a one-line placeholder |
//! | `claude-code` | [`claude_code`] | at the window minus 33000: clear old results of its file/shell/web tools, then summarise |
//! | `codex` | [`codex`] | on arrival: cap each result at 10 KiB / 256 lines; at 90%: summary plus recent user messages |
//! | `opencode` | [`opencode`] | prune old outputs beyond 40000 protected tokens; at the window minus 20000: summarise |
//! | `context-editing` | [`context_editing`] | above 100000 input tokens: clear all but the 3 most recent results |
//! | `recorded` | [`recorded`] | the agent's own compactions, where its log records them |
//!
//! What every policy shares with smith:
//! - the estimate: `Message::bytes`, divided by 4 once over the history;
//! - the cost model: `Budget::charged` (overhead added, ratio applied) prices
//!   every request, and `--max-tokens` is the window every policy works in;
//! - the offline summary: the same stand-in of `summary_tokens` tokens as
//!   smith's (0 plays a failing summarizer: the drop note);
//! - pairing: a result is rewritten in place or summarised away together
//!   with its call, never separated from it.
//!
//! How their actions map onto the stages and counters of a smith row:
//!
//! | action | stage | counters |
//! |---|---|---|
//! | a result replaced by a placeholder (masked, cleared, pruned) | `truncate` | `results_stubbed`, `reclaimed_truncate` |
//! | a result capped to its head and tail on arrival (Codex) | none (not a compaction) | `results_truncated`, `reclaimed_truncate`, at the first request that sends it |
//! | the history replaced by a summary (plus carried user messages) | `summarize` (`drop` when `summary_tokens` is 0) | `summaries`, `messages_summarized`, `reclaimed_summarize` |
//!
//! `triggered` counts requests above the policy's own threshold (for
//! masking, which has none, above the window), and `target_misses` those
//! that ended above it.

/// The `Compactor` methods every policy has alike: its budget, and itself
/// at another ratio (a policy is a struct with a `budget` field).
macro_rules! budget_methods {
    () => {
        fn at_ratio(&self, ratio: f64) -> Box<dyn Compactor + '_> {
            let mut c = self.clone();
            c.budget = c.budget.at_ratio(ratio);
            Box::new(c)
        }

        fn budget(&self) -> &Budget {
            &self.budget
        }
    };
}

pub(crate) mod claude_code;
pub(crate) mod codex;
pub mod cold;
pub(crate) mod context_editing;
pub(crate) mod knobs;
pub(crate) mod masking;
pub(crate) mod opencode;
#[cfg(all(test, feature = "full"))]
pub(crate) mod policy_tests;
pub(crate) mod recorded;

pub(crate) use knobs::Described;
pub use knobs::{Knobs, PolicyKnob, Value};

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::Serialize;

use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::knobs::Knob;
use crate::engine::marks::RecordMarks;
use crate::engine::record::{Recorder, Summarized};
use crate::engine::working::Working;
use crate::engine::{Budget, Compaction, Compactor, Config, EditKind, Engine, Stage};
use crate::estimate::{Estimator, Measure};
use crate::knob::ValueError;
use crate::transcript::measured::AgentRun;
use crate::transcript::{Block, BlockType, Message, Role, Str};

pub(crate) use crate::engine::stages::summarize::Summarizer;

/// Which agent's compaction a replay runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    Smith,
    Masking,
    ClaudeCode,
    Codex,
    Opencode,
    ContextEditing,
    Recorded,
}

impl Policy {
    /// Every policy, in the order tables list them.
    pub(crate) const ALL: [Policy; 7] = [
        Policy::Smith,
        Policy::Masking,
        Policy::ClaudeCode,
        Policy::Codex,
        Policy::Opencode,
        Policy::ContextEditing,
        Policy::Recorded,
    ];

    /// The name on the command line and in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Smith => "smith",
            Policy::Masking => "masking",
            Policy::ClaudeCode => "claude-code",
            Policy::Codex => "codex",
            Policy::Opencode => "opencode",
            Policy::ContextEditing => "context-editing",
            Policy::Recorded => "recorded",
        }
    }

    /// A policy by name: any case, `_` for `-`.
    pub fn parse(name: &str) -> Option<Policy> {
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        Policy::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// A comma-separated list of policies, each kept once in the order given.
    pub(crate) fn parse_list(text: &str) -> Result<Vec<Policy>, PolicyError> {
        let mut out = Vec::new();
        for item in text.split(',') {
            let p =
                Policy::parse(item).ok_or_else(|| PolicyError::Unknown(item.trim().to_string()))?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// Every policy's name, comma-separated.
    pub fn names() -> String {
        Policy::ALL.map(Policy::as_str).join(", ")
    }

    /// One line: what is modelled and what approximated, with the values
    /// its knobs took (`values`: a run's one value of each knob, or the
    /// values a sweep gave it; none: the default).
    pub(crate) fn describe(self, values: &dyn Fn(PolicyKnob) -> Vec<f64>) -> String {
        let v = Described::new(values);
        match self {
            Policy::Smith => "smith's engine to the byte (the reference)".to_string(),
            Policy::Masking => masking::SUMMARY.to_string(),
            Policy::ClaudeCode => claude_code::describe(&v),
            Policy::Codex => codex::describe(&v),
            Policy::Opencode => opencode::describe(&v),
            Policy::ContextEditing => context_editing::describe(&v),
            Policy::Recorded => recorded::SUMMARY.to_string(),
        }
    }

    /// [`Policy::describe`] of a run under `knobs`.
    #[cfg(test)]
    pub(crate) fn describe_knobs(self, knobs: &Knobs) -> String {
        self.describe(&|k| k.get(knobs).number().into_iter().collect())
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Policy {
    type Err = PolicyError;

    fn from_str(s: &str) -> Result<Policy, PolicyError> {
        Policy::parse(s).ok_or_else(|| PolicyError::Unknown(s.to_string()))
    }
}

/// Why a policy's name or setup is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// A name that is no policy, as given.
    #[error("{0:?} is not a policy; the policies are {names}", names = Policy::names())]
    Unknown(String),
    /// smith's knobs refuse the config.
    #[error(transparent)]
    Config(#[from] ValueError),
    /// An estimator other than bytes4 for a policy that estimates bytes / 4.
    #[error("--estimator {estimator} applies to smith's engine only; policy {policy} estimates bytes / 4")]
    Estimator {
        estimator: Estimator,
        policy: Policy,
    },
    /// A policy knob's value refused; `name` is its flag or its column.
    #[error("{name}: {error}")]
    Knob { name: String, error: ValueError },
}

/// One complete thing to replay: a policy, the config it runs under, and
/// its knobs. For policies other than smith only the window, overhead,
/// ratio and summary size of the config apply; its other knobs are smith's
/// defaults, so that equal setups compare equal.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    pub policy: Policy,
    pub(crate) config: Config,
    pub knobs: Knobs,
    /// How smith's engine estimates tokens; bytes4 is smith's.
    /// The other policies estimate bytes / 4 only.
    pub(crate) estimator: Estimator,
}

impl From<Config> for Setup {
    fn from(config: Config) -> Setup {
        Setup::smith(config)
    }
}

impl Setup {
    /// smith under `config`.
    pub fn smith(config: Config) -> Setup {
        Setup {
            policy: Policy::Smith,
            config,
            knobs: Knobs::default(),
            estimator: Estimator::Bytes4,
        }
    }

    /// `policy` under `config` and `knobs`; a policy other than smith takes
    /// only the knobs of `config` it uses.
    pub(crate) fn new(policy: Policy, config: Config, knobs: Knobs) -> Setup {
        let config = if policy == Policy::Smith {
            config
        } else {
            let mut shared = Config::default();
            for k in Knob::ALL.into_iter().filter(|k| k.is_shared()) {
                (k.def().copy)(&mut shared, &config);
            }
            shared
        };
        Setup {
            policy,
            config,
            knobs,
            estimator: Estimator::Bytes4,
        }
    }

    /// A setup read back from a sweep's output files: the `policy` column,
    /// smith's knob columns as `config` and each policy knob's column
    /// ([`PolicyKnob::field`], `None` where null: the default).
    pub(crate) fn from_columns(
        policy: &str,
        config: Config,
        knob: impl Fn(PolicyKnob) -> Option<Value>,
    ) -> Result<Setup, PolicyError> {
        let policy: Policy = policy.parse()?;
        let mut knobs = Knobs::default();
        for k in PolicyKnob::ALL.into_iter().filter(|k| k.policy() == policy) {
            if let Some(v) = knob(k) {
                k.check(&v).map_err(|error| PolicyError::Knob {
                    name: k.field(),
                    error,
                })?;
                k.set(&mut knobs, v);
            }
        }
        let setup = Setup::new(policy, config, knobs);
        setup.validate()?;
        Ok(setup)
    }

    /// The same setup estimating with `estimator`.
    pub fn with_estimator(mut self, estimator: Estimator) -> Setup {
        self.estimator = estimator;
        self
    }

    /// Checks the config and the knobs of its policy.
    pub(crate) fn validate(&self) -> Result<(), PolicyError> {
        self.config.validate()?;
        if self.policy != Policy::Smith && self.estimator != Estimator::Bytes4 {
            return Err(PolicyError::Estimator {
                estimator: self.estimator,
                policy: self.policy,
            });
        }
        for k in self.own_knobs() {
            k.check(&k.get(&self.knobs))
                .map_err(|error| PolicyError::Knob {
                    name: k.flag().to_string(),
                    error,
                })?;
        }
        Ok(())
    }

    /// The knobs of its policy.
    pub(crate) fn own_knobs(&self) -> impl Iterator<Item = PolicyKnob> + '_ {
        PolicyKnob::ALL
            .into_iter()
            .filter(|k| k.policy() == self.policy)
    }

    /// [`Setup::budget`] where it is the same for every session; `None`
    /// where the window is each session's own, so that no surface states
    /// the nominal window's thresholds as the ones replayed.
    pub(crate) fn fixed_budget(&self) -> Option<Budget> {
        (!self.config.own_window()).then(|| self.budget())
    }

    /// The thresholds the policy works with: where it acts
    /// (`trigger_tokens`) and where a request counts as over its aim
    /// (`target_tokens`), in charged tokens, with the config's overhead and
    /// ratio.
    pub(crate) fn budget(&self) -> Budget {
        let c = &self.config;
        let k = &self.knobs;
        let base = Budget::new(c);
        let max = base.max_tokens;
        let below = |reserve: u64| (max - reserve.min(i64::MAX as u64) as i64).max(0);
        let at = |trigger: i64| Budget {
            trigger_tokens: trigger,
            target_tokens: trigger,
            ..base
        };
        match self.policy {
            Policy::Smith => base,
            Policy::Masking => at(max),
            Policy::ClaudeCode => at(below(k.claude_code_reserve)),
            Policy::Codex => at((max as f64 * k.codex_compact_at) as i64),
            Policy::Opencode => at(below(k.opencode_reserve)),
            Policy::ContextEditing => at(k.context_editing_trigger.min(i64::MAX as u64) as i64),
            Policy::Recorded => at(max),
        }
    }

    /// The compactor the replay runs.
    pub fn compactor(&self) -> Box<dyn Compactor> {
        let budget = self.budget();
        let summarizer = Summarizer::new(self.config.summary_tokens);
        let k = self.knobs.clone();
        match self.policy {
            Policy::Smith => Box::new(Engine::with_measure(
                self.config,
                Measure::new(self.estimator),
            )),
            Policy::Masking => Box::new(masking::Masking::new(budget, k.mask_window)),
            Policy::ClaudeCode => Box::new(claude_code::ClaudeCode::new(
                budget,
                k.claude_code_keep,
                summarizer,
            )),
            Policy::Codex => Box::new(codex::Codex::new(
                budget,
                k.codex_cap_bytes,
                k.codex_cap_lines,
                k.codex_user_tokens,
                summarizer,
            )),
            Policy::Opencode => Box::new(opencode::Opencode::new(
                budget,
                k.prune_protect,
                k.prune_minimum,
                k.prune_turns,
                summarizer,
            )),
            Policy::ContextEditing => Box::new(context_editing::ContextEditing::new(
                budget,
                k.clear_keep,
                k.clear_at_least,
                k.exclude_tools,
            )),
            Policy::Recorded => Box::new(recorded::Recorded::new(
                budget,
                Arc::new(AgentRun::default()),
                &[],
            )),
        }
    }

    /// The compactor for replaying `messages`, the transcript of a session
    /// whose agent ran as `run` (`None`: a session smith recorded):
    /// [`Setup::compactor`], with a tokenizer's counts of the session's
    /// texts made once up front, and for `recorded` the session's own run
    /// (smith's engine under this config for smith's own session).
    pub(crate) fn compactor_for(
        &self,
        messages: &[Arc<Message>],
        run: Option<&Arc<AgentRun>>,
    ) -> Box<dyn Compactor> {
        if self.policy == Policy::Recorded {
            return match run {
                Some(run) => Box::new(recorded::Recorded::new(
                    self.budget(),
                    run.clone(),
                    messages,
                )),
                None => Box::new(Engine::new(self.config)),
            };
        }
        if self.policy == Policy::Smith && self.estimator != Estimator::Bytes4 {
            return self.compactor_measured(Measure::for_session(self.estimator, messages), None);
        }
        self.compactor()
    }

    /// smith's engine under this setup's config with `measure` (counts made
    /// for the session being replayed) and, when given, `marks` (which of
    /// the record's results hold a marker, found once for the replays of a
    /// session under many configs); any other policy as
    /// [`Setup::compactor`].
    pub(crate) fn compactor_measured(
        &self,
        measure: Measure,
        marks: Option<Arc<RecordMarks>>,
    ) -> Box<dyn Compactor> {
        if self.policy == Policy::Smith {
            let engine = Engine::with_measure(self.config, measure);
            return Box::new(match marks {
                Some(m) => engine.with_marks(m),
                None => engine,
            });
        }
        self.compactor()
    }

    /// A label that tells setups apart: smith's config label for smith;
    /// `<policy> <window>` and the knobs that differ from their defaults for
    /// the others (`masking 200k M5`).
    pub fn label(&self) -> String {
        match self.policy {
            Policy::Smith => self.knobs_label(),
            p => format!("{p} {}", self.knobs_label()),
        }
    }

    /// Its own knobs that differ from their defaults, each as its tag and
    /// value (` M5`).
    fn own_label(&self) -> String {
        let defaults = Knobs::default();
        let mut s = String::new();
        for k in self.own_knobs() {
            if k.get(&self.knobs) != k.get(&defaults) {
                s.push_str(&format!(" {}{}", k.tag(), (k.def().text)(&self.knobs)));
            }
        }
        s
    }

    /// [`Setup::label`] without the policy's name.
    pub(crate) fn knobs_label(&self) -> String {
        if self.policy == Policy::Smith {
            let mut label = self.config.exact_label() + &self.own_label();
            // bytes4 is smith's estimate and stays unnamed, as every default.
            if self.estimator != Estimator::Bytes4 {
                label = format!("{label} {}", self.estimator);
            }
            return label;
        }
        let shared = self.config.label_parts(Knob::is_shared, false);
        shared.always + &self.own_label() + &shared.changed
    }
}

/// Whether `text` is a placeholder or cap one of these policies wrote, and
/// which rewrite it stands for: `show --at` marks them as it marks smith's.
pub(crate) fn placeholder_kind(text: &[u8]) -> Option<EditKind> {
    if masking::is_placeholder(text)
        || text == claude_code::PLACEHOLDER.as_bytes()
        || text == opencode::PLACEHOLDER.as_bytes()
        || text == context_editing::PLACEHOLDER.as_bytes()
    {
        return Some(EditKind::Stubbed);
    }
    if codex::is_capped(text) {
        return Some(EditKind::HeadKept);
    }
    None
}

pub(crate) use crate::engine::stages::summarize::is_summary_note;

/// The tool each call id names, over `messages`.
pub(crate) fn tool_names(messages: &[Arc<Message>]) -> HashMap<Str, Str> {
    let mut names = HashMap::new();
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        for b in &m.content {
            if let (BlockType::ToolUse, Some(id), Some(name)) =
                (b.kind, &b.tool_call_id, &b.tool_name)
            {
                names.insert(id.clone(), name.clone());
            }
        }
    }
    names
}

/// The tool a result answers, if its call is in `names`.
pub(crate) fn tool_of<'a>(names: &'a HashMap<Str, Str>, result: &Block) -> Option<&'a str> {
    result
        .tool_call_id
        .as_ref()
        .and_then(|id| names.get(id))
        .map(|n| &**n)
}

/// Whether `name` is one of `list`, ignoring case.
pub(crate) fn name_in(name: &str, list: &[&str]) -> bool {
    list.iter().any(|l| l.eq_ignore_ascii_case(name))
}

/// The history untouched.
pub(crate) fn untouched(before: i64, bytes: u64, triggered: bool) -> Compaction {
    Compaction::untouched(before, bytes, triggered)
}

/// One compaction in progress: smith's copy-on-write history with its
/// running byte total, and the record of what is done to it.
pub(crate) struct Pass {
    pub(crate) w: Working,
    record: Recorder,
    /// Each stage run with the raw estimate before and after it: charged
    /// into the record once the budget is known, so the figures are in the
    /// unit of `before` and `after` and add up to their difference (see
    /// `engine::reclaimed_charged`).
    steps: Vec<(Stage, u64, u64)>,
    before: i64,
    triggered: bool,
}

impl Pass {
    pub(crate) fn new(messages: &[Arc<Message>], bytes: u64, before: i64, triggered: bool) -> Pass {
        Pass {
            w: Working::new(messages, bytes),
            record: Recorder::default(),
            steps: Vec::new(),
            before,
            triggered,
        }
    }

    /// Runs one stage: records what it reclaimed and, if it changed
    /// something, that it fired.
    pub(crate) fn stage(&mut self, stage: Stage, f: impl FnOnce(&mut Pass) -> bool) {
        let tokens = self.w.tokens();
        if f(self) {
            self.record.fired(stage);
        }
        self.steps.push((stage, tokens, self.w.tokens()));
    }

    /// Credits each stage run with what it reclaimed, in charged tokens.
    fn charge_steps(&mut self, budget: &Budget) {
        for (stage, from, to) in self.steps.drain(..) {
            self.record
                .reclaimed(stage, crate::engine::reclaimed_charged(budget, from, to));
        }
    }

    /// Replaces the text of result `(index, block)`, keeping its id and
    /// error flag, and records it as `kind` (stubbed or head kept).
    pub(crate) fn rewrite_result(
        &mut self,
        index: usize,
        block: usize,
        text: Vec<u8>,
        kind: EditKind,
    ) {
        let (before, after) = self.w.rewrite_result(index, block, text);
        self.record.edit(index, Some(block), kind, before, after);
    }

    /// Replaces result `(index, block)` by `placeholder` if that is shorter.
    pub(crate) fn clear_result(&mut self, index: usize, block: usize, placeholder: &str) -> bool {
        let text = self.w.messages[index].content[block].text_bytes();
        if text == placeholder.as_bytes() || placeholder.len() >= text.len() {
            return false;
        }
        self.rewrite_result(
            index,
            block,
            placeholder.as_bytes().to_vec(),
            EditKind::Stubbed,
        );
        true
    }

    /// What the history would be charged now.
    pub(crate) fn charged(&self, budget: &Budget) -> i64 {
        budget.charged(self.w.tokens())
    }

    /// The history as it stands.
    pub(crate) fn finish(mut self, budget: &Budget) -> Compaction {
        self.charge_steps(budget);
        self.record
            .staged(self.w, budget, self.before, self.triggered)
    }

    /// Replaces the whole history by `carried` (messages kept beside the
    /// summary, in order) followed by the summary note.
    pub(crate) fn summarize_all(
        mut self,
        carried: Vec<Arc<Message>>,
        summarizer: &Summarizer,
        budget: &Budget,
    ) -> Compaction {
        self.charge_steps(budget);
        let cut = self.w.messages.len();
        let (note, stage) = summarizer.note(cut);
        let kept = carried.len();
        let mut messages = carried;
        messages.push(Arc::new(note));
        let bytes: u64 = messages.iter().map(|m| m.bytes()).sum();
        let summary = Summarized {
            stage,
            messages,
            bytes,
            from: self.w.tokens(),
            to: bytes / BYTES_PER_TOKEN,
            cut,
            replaced: cut.saturating_sub(kept),
        };
        self.record
            .summarized(summary, budget, self.before, self.triggered)
    }
}

/// Lines in `text` as a person counts them: a final line without a newline
/// counts, an empty text has none.
pub(crate) fn line_count(text: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with(b"\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_by_name_in_any_case() {
        assert_eq!(Policy::parse("Claude_Code"), Some(Policy::ClaudeCode));
        assert_eq!(
            Policy::parse_list("smith, masking,smith").unwrap(),
            vec![Policy::Smith, Policy::Masking]
        );
        let err = Policy::parse_list("smith,gpt").unwrap_err();
        assert_eq!(err, PolicyError::Unknown("gpt".to_string()));
        let err = err.to_string();
        assert!(err.contains("\"gpt\" is not a policy"), "{err}");
    }

    #[test]
    fn lines_are_counted_as_a_person_counts_them() {
        assert_eq!(line_count(b""), 0);
        assert_eq!(line_count(b"a"), 1);
        assert_eq!(line_count(b"a\n"), 1);
        assert_eq!(line_count(b"a\nb"), 2);
    }

    #[test]
    fn other_policies_take_only_the_shared_knobs_of_a_config() {
        let c = Config {
            max_tokens: 200_000,
            compact_at: 0.9,
            ..Config::default()
        };
        let s = Setup::new(Policy::Masking, c, Knobs::default());
        assert_eq!(s.config.compact_at, Config::default().compact_at);
        assert_eq!(s.config.max_tokens, 200_000);
        assert_eq!(s.label(), "masking 200k");
        let k = Knobs {
            mask_window: 5,
            ..Knobs::default()
        };
        assert_eq!(Setup::new(Policy::Masking, c, k).label(), "masking 200k M5");
    }

    #[test]
    fn budgets_sit_where_each_policy_acts() {
        let c = Config {
            max_tokens: 200_000,
            ..Config::default()
        };
        let at = |p| Setup::new(p, c, Knobs::default()).budget().trigger_tokens;
        assert_eq!(at(Policy::Smith), 160_000);
        assert_eq!(at(Policy::Masking), 200_000);
        assert_eq!(at(Policy::ClaudeCode), 167_000);
        assert_eq!(at(Policy::Codex), 180_000);
        assert_eq!(at(Policy::Opencode), 180_000);
        assert_eq!(at(Policy::ContextEditing), 100_000);
    }
}
