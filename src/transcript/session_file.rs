//! `session.json` of an imported session: smith's fields plus what smith's
//! own record lacks (where the session came from, what the provider reported
//! for each request, where the source agent compacted by itself). The
//! importers (`crate::import`) write it; the cost model, `calibrate` and the
//! report read it back beside the transcript.

use std::collections::BTreeMap;

use super::model::MessageTokens;
use serde::{Deserialize, Serialize};

/// `source.format` of a session imported from Claude Code.
pub(crate) const FORMAT_CLAUDE_CODE: &str = "claude-code";
/// `source.format` of a session imported from mini-swe-agent.
pub(crate) const FORMAT_MINI_SWE_AGENT: &str = "mini-swe-agent";
/// `source.format` of a session imported from a Codex CLI rollout.
pub(crate) const FORMAT_CODEX: &str = "codex";

/// What the provider reported for one request: the real size of the prompt
/// (`input + cache creation + cache read`) and of the answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestUsage {
    /// Index in the transcript of the assistant message that answered it.
    pub message_index: usize,
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl RequestUsage {
    /// The whole prompt as the provider counted it.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Folds in another report of the same response, keeping the largest of
    /// each figure: Claude Code repeats a response's usage on every line of
    /// it, with the output count still growing on the early lines.
    pub(crate) fn merge_max(&mut self, other: &RequestUsage) {
        self.input_tokens = self.input_tokens.max(other.input_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .max(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .max(other.cache_read_input_tokens);
        self.output_tokens = self.output_tokens.max(other.output_tokens);
    }
}

/// What a log records about one request beyond its token counts: when it
/// was sent, how its cache writes split between the two cache lifetimes,
/// and what the provider billed. The cost model needs these to price a
/// session as it was billed (see `crate::cost`); they sit beside
/// [`RequestUsage`] (same order, same `message_index`) so that older
/// `session.json` files and code that builds a `RequestUsage` keep working.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Index in the transcript of the assistant message that answered it.
    pub message_index: usize,
    /// When the answer began (RFC 3339), as the log recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Cache-write tokens of the five-minute lifetime (Claude Code:
    /// `usage.cache_creation.ephemeral_5m_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<u64>,
    /// Cache-write tokens of the one-hour lifetime
    /// (`ephemeral_1h_input_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
    /// Dollars the provider billed for it (mini-swe-agent: `usage.cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cost: Option<f64>,
}

impl RequestRecord {
    /// Folds in another line of the same response: the first timestamp and
    /// the largest of each figure (as [`RequestUsage::merge_max`]).
    pub(crate) fn merge(&mut self, other: &RequestRecord) {
        if self.timestamp.is_none() {
            self.timestamp.clone_from(&other.timestamp);
        }
        let max = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
        self.cache_write_5m = max(self.cache_write_5m, other.cache_write_5m);
        self.cache_write_1h = max(self.cache_write_1h, other.cache_write_1h);
        self.cost = match (self.cost, other.cost) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        };
    }
}

/// A place where the source agent compacted its own context. The summary it
/// wrote is not history and stays out of the transcript; this mark says where
/// it stood and how large it was, so the real context after it is known.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactBoundary {
    /// Messages of the transcript before the boundary: the context after it
    /// is the summary plus `messages[message_index..]`.
    pub message_index: usize,
    /// Requests (assistant messages) before the boundary.
    pub requests_before: usize,
    /// The agent's own count of the context it compacted, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_tokens: Option<u64>,
    /// `auto` or `manual`, as the agent recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Bytes of the summary that replaced the earlier context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_bytes: Option<u64>,
    /// 1-based line of the boundary in the source file.
    pub line: usize,
    /// `None` for a full compaction (the earlier context replaced by a
    /// summary); `Some("microcompact")` where only old tool results were
    /// cleared and the messages stayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<String>,
    /// The text of the summary the agent carried on under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// A micro-compaction's own count of the tokens it cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tokens_saved: Option<u64>,
    /// The calls whose results a micro-compaction cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cleared_tool_ids: Vec<String>,
    /// The log of the compaction call that wrote the summary (Claude Code's
    /// `agent-acompact-*` file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) compaction_file: Option<String>,
    /// Messages of the transcript the compaction carried on beside its
    /// summary, before it (Codex's `replacement_history` keeps the user's
    /// recent messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) kept: Vec<usize>,
    /// The version of the agent that compacted (Claude Code's `version` on
    /// the boundary line, Codex's `cli_version`): its trigger moved between
    /// versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_version: Option<String>,
}

/// [`CompactBoundary::kind`] of a micro-compaction.
pub(crate) const MICROCOMPACT: &str = "microcompact";

impl CompactBoundary {
    /// Whether the earlier context was replaced by a summary (not only some
    /// results cleared).
    pub(crate) fn is_full(&self) -> bool {
        self.kind.is_none()
    }
}

/// Where an imported session came from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// [`FORMAT_CLAUDE_CODE`], [`FORMAT_MINI_SWE_AGENT`] or
    /// [`FORMAT_CODEX`].
    pub(crate) format: String,
    /// The file it was read from.
    pub(crate) path: String,
    /// Lines (Claude Code) or messages (mini-swe-agent) in the source.
    #[serde(default)]
    pub(crate) lines: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) instance_id: Option<String>,
}

/// Tokens of every request that are not history, as far as the source says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overhead {
    /// Bytes of the system prompt.
    pub system_prompt_bytes: u64,
    /// The same in estimated tokens (bytes / 4): a floor for `--overhead`.
    pub tokens: u64,
}

/// Token totals in the shape of smith's `LLM::Usage`, where `prompt_tokens`
/// is the uncached remainder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SmithUsage {
    pub(crate) prompt_tokens: u64,
    pub completion_tokens: u64,
    pub(crate) total_tokens: u64,
    pub(crate) cache_creation_tokens: u64,
    pub(crate) cache_read_tokens: u64,
}

impl SmithUsage {
    /// The sum over requests.
    pub(crate) fn total(requests: &[RequestUsage]) -> SmithUsage {
        let mut u = SmithUsage::default();
        for r in requests {
            u.prompt_tokens += r.input_tokens;
            u.completion_tokens += r.output_tokens;
            u.cache_creation_tokens += r.cache_creation_input_tokens;
            u.cache_read_tokens += r.cache_read_input_tokens;
        }
        u.total_tokens =
            u.prompt_tokens + u.completion_tokens + u.cache_creation_tokens + u.cache_read_tokens;
        u
    }
}

/// What the import did to a session, for the summary and for tests.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportCounts {
    pub messages: usize,
    pub tool_calls: usize,
    /// User messages marked synthetic (harness-written, not typed).
    pub synthetic_user_messages: usize,
    /// Tool calls given a [`NO_RESULT_TEXT`] error result.
    pub synthetic_results: usize,
    /// Source lines (or messages) that could not be used.
    pub skipped: usize,
    /// Lines the agent writes by design that are no model response
    /// (Claude Code's `<synthetic>` assistant lines): left out, and not
    /// damage.
    #[serde(default)]
    pub agent_written: usize,
    /// Blocks (or items) of the log of a type nothing in smith's history can
    /// hold, by the type the log names: left out on purpose, counted here
    /// and named once in a summary, not reported line by line as damage.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_imported: BTreeMap<String, usize>,
}

/// The `session.json` of an imported session: smith's fields (`id`,
/// `created_at`, `cwd`, `model`, `provider`, `usage`, `name`, `parent_id`)
/// plus what only an import knows. Every field but `id` defaults, so a file
/// written by an older import still reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionFile {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) updated_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The context window the agent ran under, where its log records it
    /// (Codex's `model_context_window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context_window: Option<u64>,
    #[serde(default)]
    pub usage: SmithUsage,
    #[serde(default)]
    pub source: Source,
    /// False when the source says the model saw messages this file does not
    /// hold (a compaction request, a continued conversation): the requests'
    /// real prompts then cannot be matched with an estimate.
    #[serde(default = "yes")]
    pub context_complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_note: Option<String>,
    /// Usage per request, in transcript order, one per answered request.
    #[serde(default)]
    pub requests: Vec<RequestUsage>,
    #[serde(default)]
    pub compact_boundaries: Vec<CompactBoundary>,
    /// Per request: time, cache-write lifetimes, billed cost, where the log
    /// has them; one per entry of `requests`, same order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub request_records: Vec<RequestRecord>,
    /// The dollars the source says the whole session cost
    /// (mini-swe-agent: `info.model_stats.instance_cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recorded_cost: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Overhead>,
    /// Whether the task was solved (mini-swe-agent with a results file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exit_status: Option<String>,
    #[serde(default)]
    pub import: ImportCounts,
    /// The provider's counts of each message, from the requests' prompt
    /// sizes (`transcript::measured` attributes them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measured: Option<Measured>,
}

fn yes() -> bool {
    true
}

impl Default for SessionFile {
    /// An empty session whose context is complete until a converter finds
    /// otherwise (the same default as a `session.json` without the field).
    fn default() -> SessionFile {
        SessionFile {
            id: String::new(),
            name: None,
            created_at: None,
            updated_at: None,
            cwd: None,
            model: None,
            provider: None,
            parent_id: None,
            context_window: None,
            usage: SmithUsage::default(),
            source: Source::default(),
            context_complete: true,
            context_note: None,
            requests: Vec::new(),
            compact_boundaries: Vec::new(),
            request_records: Vec::new(),
            recorded_cost: None,
            overhead: None,
            resolved: None,
            exit_status: None,
            import: ImportCounts::default(),
            measured: None,
        }
    }
}

impl SessionFile {
    /// The full compactions (summaries), in order: where the context the
    /// model saw restarted from a summary.
    pub fn full_compactions(&self) -> impl DoubleEndedIterator<Item = &CompactBoundary> {
        self.compact_boundaries.iter().filter(|b| b.is_full())
    }

    /// Reads the import fields from a loaded session's `session.json`;
    /// `None` for a session that is not an import (smith's own).
    pub fn from_meta(raw: &serde_json::Value) -> Option<SessionFile> {
        let file: SessionFile = serde_json::from_value(raw.clone()).ok()?;
        (!file.source.format.is_empty()).then_some(file)
    }
}

/// The provider's counts of one session's messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Measured {
    /// Tokens of every request that are not messages of the transcript: the
    /// system prompt and tools, and for a session whose transcript lacks
    /// part of its context (a compaction agent's parent conversation) that
    /// part too.
    pub(crate) fixed_prompt: u64,
    /// Tokens per counted byte over the requests where only new messages
    /// changed: what an unmeasured message is counted at.
    pub(crate) density: f64,
    /// Whether the model stopped counting the thinking of earlier turns.
    pub(crate) drops_thinking: bool,
    /// Per message of the transcript: its tokens and the bytes they were
    /// counted at; `None` for a message no request with usage sent.
    pub(crate) tokens: Vec<Option<MessageTokens>>,
    /// Per entry of `compact_boundaries`: the tokens of the summary it left
    /// (`None` for a micro-compaction, or a summary no request sent).
    pub(crate) summaries: Vec<Option<MessageTokens>>,
    /// The check after each of the agent's compactions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) checks: Vec<CompactionCheck>,
    /// Requests whose prompt was smaller than what earlier requests had
    /// measured of it, and by how many tokens in all: the messages they
    /// sent first were counted as nothing.
    #[serde(default)]
    pub(crate) short_requests: usize,
    #[serde(default)]
    pub(crate) short_tokens: u64,
    /// Requests that sent nothing new yet whose prompt differed from what
    /// was measured of it, and the tokens of difference in all.
    #[serde(default)]
    pub(crate) drift_requests: usize,
    #[serde(default)]
    pub(crate) drift_tokens: i64,
}

/// After one of the agent's compactions: the next request's prompt as the
/// measured counts predict it, against the recorded one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CompactionCheck {
    /// The compaction's line in the source log.
    pub(crate) line: usize,
    /// `full` or `microcompact`.
    pub(crate) kind: String,
    /// The request after it (0-based, over the session's requests).
    pub(crate) request: usize,
    /// Tokens of the messages kept, as measured before the compaction.
    pub(crate) kept: u64,
    /// The summary and the messages since, at the session's density.
    pub(crate) estimated: u64,
    pub(crate) fixed_prompt: u64,
    /// `fixed_prompt + kept + estimated`.
    pub(crate) predicted: u64,
    pub(crate) recorded: u64,
}

impl CompactionCheck {
    /// (predicted − recorded) / recorded.
    pub(crate) fn error(&self) -> f64 {
        if self.recorded == 0 {
            return 0.0;
        }
        (self.predicted as f64 - self.recorded as f64) / self.recorded as f64
    }
}
