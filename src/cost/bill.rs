//! The bill check: price the requests of an imported session exactly as the
//! source agent sent them and hold the price against what the provider
//! reported (and, where the log has it, billed).
//!
//! The recorded prompt size of each request (input + cache read + cache
//! write) is the ground truth for the context, the agent's own compactions
//! included; the model predicts only how that prompt splits between cache
//! reads, cache writes and plain input, which is what decides the bill:
//!
//! - a request reads from the cache the prefix the previous request of the
//!   same model left there, unless the cache went cold: the gap since that
//!   request exceeds the cache lifetime ([`Cause::TtlExpiry`]; the lifetime
//!   is the tier the log shows the agent writing, or `--cache-ttl`), the
//!   model changed ([`Cause::ModelSwitch`]: caches are per model), the agent
//!   compacted ([`Cause::AgentCompaction`]), or the agent rewrote its prompt
//!   ([`Cause::HarnessRewrite`]: Claude Code rebuilds the prompt when a
//!   background task's `<task-notification>` arrives). After a compaction or
//!   a rewrite only the agent's fixed prompt (system prompt and tools,
//!   [`Input::fixed_prefix`]) is still cached;
//! - everything past the cached prefix is written to the cache, in the
//!   lifetime tier the agent chose for that request (five minutes at 1.25×
//!   input, one hour at 2×);
//! - below the model's minimum cacheable prefix nothing is cached and the
//!   whole prompt is plain input;
//! - output is priced from the record.
//!
//! One account, one cache: a provider keeps one prompt cache for every
//! request of an account, so the sessions of a check are priced on one
//! timeline. A session's first request (and a request whose own cache went
//! cold) reads the agent's fixed prompt when another session of the same
//! kind ([`Kind`]: the main agent, a subagent) on the same model had a
//! request answered within the lifetime before it was sent: that request
//! used, and so kept warm, the same tools and system prompt.
//! [`Settings::per_session`] prices each session alone instead. A Claude
//! Code compaction agent (`agentId` `acompact-*`) resends its parent's
//! context: it reads the parent's cached prefix, or, when the parent is not
//! among the sessions checked, everything but its own instruction (the
//! compaction runs right after the parent's request that cached the rest).
//!
//! Every recorded miss (a cache read under half the previous request's
//! prompt) is classified by the same causes, [`Cause::Unexplained`] when
//! none applies, with the tokens it wrote.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::table::{lookup, price_for, ModelPrice, MODEL_PRICES};
use super::unlogged::{self, gap_bucket, AccountView, Chance, Expect, Unlogged};
use super::{CacheTtl, TOKENS_PER_PRICE_UNIT};
use crate::stats::{median_of, percentile_of};
use crate::time::parse_rfc3339;
use crate::transcript::session_file::{
    RequestRecord, RequestUsage, SessionFile, FORMAT_CLAUDE_CODE,
};
use crate::transcript::{Message, Role};

/// How a user message Claude Code writes when a background task ends
/// begins; the request after it was seen to lose all but the fixed prompt.
pub const TASK_NOTIFICATION: &str = "<task-notification>";

/// The tag by which newer versions name the task a notification is of.
const TOOL_USE_ID: &str = "<tool-use-id>";

/// The `agentId` prefix of Claude Code's compaction agent.
pub const COMPACTION_AGENT: &str = "acompact";

/// Sessions with at least this many requests are "long": the done-when
/// bound on the worst session applies to them.
pub const LONG_SESSION: usize = 50;

/// The error a long session's price should stay within.
pub const LONG_SESSION_BOUND: f64 = 0.15;

/// How the check prices.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// The cache lifetime; `None`: the tier each request's record shows,
    /// else five minutes.
    pub ttl: Option<CacheTtl>,
    /// The minimum cacheable prefix; `None`: the model's, from the table.
    pub min_cacheable: Option<u64>,
    /// Each session priced alone, with a cache of its own, instead of all
    /// on one timeline sharing the account's cache.
    pub per_session: bool,
    /// Priced by the log alone, without the shares of the account's cache
    /// beyond it ([`unlogged`]).
    pub log_alone: bool,
}

/// The role of a session, which decides the system prompt and tools it
/// sends: sessions of one kind in one project share them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A session the user started.
    Main,
    /// A subagent a main session started.
    Subagent,
    /// Claude Code's compaction agent.
    Compaction,
}

impl Kind {
    pub fn of(file: &SessionFile) -> Kind {
        match file.source.agent_id.as_deref() {
            Some(a) if a.starts_with(COMPACTION_AGENT) => Kind::Compaction,
            Some(_) => Kind::Subagent,
            None if file.parent_id.is_some() => Kind::Subagent,
            None => Kind::Main,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Subagent => "subagent",
            Kind::Compaction => "compaction",
        }
    }

    /// The kind whose system prompt and tools this kind sends: a
    /// compaction agent resends its parent's context under the parent's.
    pub fn prompt(self) -> Kind {
        match self {
            Kind::Compaction => Kind::Main,
            k => k,
        }
    }
}

/// Where a request's prompt went, and its answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub output: u64,
}

impl Tokens {
    pub fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }

    /// Dollars at the row's prices.
    pub fn dollars(&self, p: &ModelPrice) -> f64 {
        (self.input as f64 * p.input
            + self.cache_read as f64 * p.cache_read
            + self.cache_write_5m as f64 * p.cache_write_5m
            + self.cache_write_1h as f64 * p.cache_write_1h
            + self.output as f64 * p.output)
            / TOKENS_PER_PRICE_UNIT
    }

    fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.cache_read += o.cache_read;
        self.cache_write_5m += o.cache_write_5m;
        self.cache_write_1h += o.cache_write_1h;
        self.output += o.output;
    }
}

/// Why the cache was cold at a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The gap since the previous request exceeded the cache lifetime.
    TtlExpiry,
    /// The agent compacted its context since the previous request.
    AgentCompaction,
    /// No earlier request of this session used this model.
    ModelSwitch,
    /// The agent rebuilt its prompt (a background task's notification).
    HarnessRewrite,
    /// Nothing in the log changed and the lifetime had not run out, yet
    /// the provider served only a shorter prefix: one the account's log
    /// shows cached at that exact length (another request read exactly as
    /// many tokens, most often the agent's fixed prompt, which every session
    /// of the account keeps warm). The session's later cache entries were
    /// gone: evicted early, or not held where the request was served.
    EarlyEviction,
    /// None of the above.
    Unexplained,
}

impl Cause {
    pub const ALL: [Cause; 6] = [
        Cause::TtlExpiry,
        Cause::AgentCompaction,
        Cause::ModelSwitch,
        Cause::HarnessRewrite,
        Cause::EarlyEviction,
        Cause::Unexplained,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Cause::TtlExpiry => "ttl_expiry",
            Cause::AgentCompaction => "agent_compaction",
            Cause::ModelSwitch => "model_switch",
            Cause::HarnessRewrite => "harness_rewrite",
            Cause::EarlyEviction => "early_eviction",
            Cause::Unexplained => "unexplained",
        }
    }
}

/// One request, recorded and predicted.
#[derive(Clone, Debug, Serialize)]
pub struct RequestCheck {
    pub message_index: usize,
    pub model: String,
    /// The row of the price table it was billed at.
    pub family: &'static str,
    /// Whether it was billed at the row's long-context rates.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub long_context: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Seconds since the previous request of the same model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_seconds: Option<i64>,
    pub recorded: Tokens,
    pub predicted: Tokens,
    pub recorded_usd: f64,
    pub predicted_usd: f64,
    /// What the provider billed for it, when the log says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billed_usd: Option<f64>,
    /// Why the model expects a cold cache here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold: Option<Cause>,
    /// The cause of a recorded cache miss here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miss: Option<Cause>,
    /// What it can show about the account's cache beyond the log.
    #[serde(skip)]
    pub chance: Option<Chance>,
    /// Whether another session of the check had used the agent's fixed
    /// prompt within the lifetime when this request was sent.
    #[serde(skip)]
    pub account_warm: bool,
}

/// One session, recorded and predicted.
#[derive(Clone, Debug, Serialize)]
pub struct SessionCheck {
    pub session: String,
    /// A compaction agent's session (see [`Kind::Compaction`]).
    pub compaction_agent: bool,
    pub kind: Kind,
    pub format: String,
    pub requests: usize,
    /// Whether timestamps let the cache lifetime apply.
    pub ttl_applied: bool,
    /// The agent's fixed prompt assumed, in tokens.
    pub fixed_prefix: u64,
    pub recorded: Tokens,
    pub predicted: Tokens,
    /// The recorded usage at the table's prices.
    pub recorded_usd: f64,
    pub predicted_usd: f64,
    /// (predicted − recorded) / recorded.
    pub error: f64,
    /// What the source says was billed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billed_usd: Option<f64>,
    /// Models the table does not name (priced as the nearest family).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
    /// Requests of this session that found the agent's fixed prompt
    /// cached by another session.
    pub shared_reads: usize,
    pub detail: Vec<RequestCheck>,
}

/// Recorded misses of one cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MissTotals {
    pub requests: usize,
    pub cache_write: u64,
}

/// A session named with its error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Worst {
    pub session: String,
    pub requests: usize,
    pub error: f64,
}

/// The check's figures for one source format.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub format: String,
    pub sessions: usize,
    pub requests: usize,
    /// Of |per-session error|.
    pub median_error: f64,
    pub p95_error: f64,
    pub worst: Option<Worst>,
    /// The worst of the sessions with [`LONG_SESSION`] requests or more.
    pub worst_long: Option<Worst>,
    /// Sessions with [`LONG_SESSION`] requests or more, and how many of
    /// them are within [`LONG_SESSION_BOUND`] of the recorded usage.
    pub long_sessions: usize,
    pub long_within_bound: usize,
    /// p95 |error| of the shorter sessions.
    pub p95_error_short: Option<f64>,
    /// Median |error| of the shorter sessions.
    pub median_error_short: Option<f64>,
    /// What the shorter sessions at or above their p95 are.
    pub short_tail: Option<ShortTail>,
    pub recorded_usd: f64,
    pub predicted_usd: f64,
    /// Error on the total of all sessions.
    pub total_error: f64,
    pub recorded: Tokens,
    pub predicted: Tokens,
    pub misses: BTreeMap<Cause, MissTotals>,
    /// Tokens recorded misses sent again: their cache writes and plain
    /// input (all of it for a provider that bills no writes).
    pub miss_cache_write: u64,
    /// Share of those attributed to a cause other than `unexplained`.
    pub attributed: f64,
    /// The same, counting only lifetime expiry, compaction and model switch.
    pub attributed_without_rewrite: f64,
    /// Sessions whose timestamps let the lifetime apply.
    pub ttl_applied: usize,
    /// The prices the check used: one entry per row of the price table
    /// some request was billed at.
    pub prices: Vec<PriceUsed>,
    /// Requests that read the fixed prompt another session cached.
    pub shared_reads: usize,
    /// The account's cache beyond the log, per kind of session: what the
    /// shares each session is priced by are fitted on.
    pub unlogged: Vec<UnloggedFit>,
    /// Against what the source says was billed, where it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub billed: Option<Billed>,
}

/// What the requests of one kind of session show of the account's cache
/// beyond the log ([`unlogged`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UnloggedFit {
    pub kind: Kind,
    #[serde(flatten)]
    pub fit: Unlogged,
}

/// A row of the price table and the requests billed at it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PriceUsed {
    pub family: String,
    pub provider: String,
    pub requests: usize,
    /// Of them, billed at the long-context rates.
    pub long_context_requests: usize,
    pub input: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
    pub output: f64,
    /// The models priced at it that the table does not name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nearest_for: Vec<String>,
}

/// Prices held against the recorded bill in dollars.
#[derive(Clone, Debug, Serialize)]
pub struct Billed {
    pub sessions: usize,
    pub billed_usd: f64,
    /// The recorded usage at the table's prices vs the bill: checks the
    /// table itself.
    pub priced_median_error: f64,
    pub priced_worst: Option<Worst>,
    pub priced_total_error: f64,
    /// The model's prediction vs the bill.
    pub predicted_median_error: f64,
    pub predicted_worst: Option<Worst>,
    pub predicted_total_error: f64,
}

/// A session to check: its label, `session.json` and transcript.
pub struct Input<'a> {
    pub label: String,
    pub file: &'a SessionFile,
    pub messages: &'a [Arc<Message>],
    /// Tokens of the agent's fixed prompt (system prompt, tools), still
    /// cached after the agent compacts or rewrites its messages; `calibrate`
    /// takes it from its fit of the format (`overhead × ratio`).
    pub fixed_prefix: u64,
    /// Provider tokens per estimated token (bytes / 4) of the format, for
    /// the size of what a compaction agent adds to its parent's context.
    pub ratio: f64,
}

/// The cache entry a model's last request left.
#[derive(Clone, Copy)]
struct Warm {
    prompt: u64,
    at: Option<i64>,
    ttl: CacheTtl,
}

impl Warm {
    fn expired_at(&self, t: Option<i64>) -> bool {
        match (self.ttl.seconds(), self.at, t) {
            (Some(s), Some(a), Some(b)) => b - a > s,
            _ => false,
        }
    }
}

fn record_of<'a>(file: &'a SessionFile, i: usize, r: &RequestUsage) -> Option<&'a RequestRecord> {
    match file.request_records.get(i) {
        Some(x) if x.message_index == r.message_index => Some(x),
        _ => file
            .request_records
            .iter()
            .find(|x| x.message_index == r.message_index),
    }
}

fn time_of(rec: Option<&RequestRecord>) -> Option<i64> {
    rec.and_then(|x| x.timestamp.as_deref())
        .and_then(parse_rfc3339)
}

fn model_of(r: &RequestUsage, file: &SessionFile) -> String {
    r.model
        .clone()
        .or_else(|| file.model.clone())
        .unwrap_or_default()
}

/// What a session's recorded usage costs at the price table's rows, request
/// by request as the provider billed it: the figure ccusage reports for the
/// same log.
pub fn recorded_dollars(file: &SessionFile) -> f64 {
    (0..file.requests.len())
        .map(|i| request_dollars(file, i))
        .sum()
}

/// The recorded split of a request's cache writes: (5-minute, 1-hour),
/// whatever the split leaves out counted in `tier`.
fn recorded_split(r: &RequestUsage, rec: Option<&RequestRecord>, tier: CacheTtl) -> (u64, u64) {
    let total = r.cache_creation_input_tokens;
    let w5 = rec.and_then(|x| x.cache_write_5m).unwrap_or(0).min(total);
    let w1 = rec
        .and_then(|x| x.cache_write_1h)
        .unwrap_or(0)
        .min(total - w5);
    let rest = total - w5 - w1;
    match tier {
        CacheTtl::OneHour => (w5, w1 + rest),
        _ => (w5 + rest, w1),
    }
}

/// What a request's recorded usage says went where: its writes split by
/// lifetime as its record shows (the rest to five minutes).
pub fn recorded_tokens(r: &RequestUsage, rec: Option<&RequestRecord>) -> Tokens {
    let tier = tier_of(rec).unwrap_or(CacheTtl::FiveMinutes);
    split_tokens(r, recorded_split(r, rec, tier))
}

/// A request's recorded usage with its writes split (5-minute, 1-hour).
fn split_tokens(r: &RequestUsage, (w5, w1): (u64, u64)) -> Tokens {
    Tokens {
        input: r.input_tokens,
        cache_read: r.cache_read_input_tokens,
        cache_write_5m: w5,
        cache_write_1h: w1,
        output: r.output_tokens,
    }
}

/// Dollars of request `i` of `file.requests` as recorded, at its model's
/// prices (the session's model, else the nearest family's row).
pub fn request_dollars(file: &SessionFile, i: usize) -> f64 {
    let Some(u) = file.requests.get(i) else {
        return 0.0;
    };
    // Priced as the bill check prices it: the provider's row of the
    // request's model, at the rates of the prompt's length.
    let price = price_for(file.provider.as_deref(), &model_of(u, file)).at(u.prompt_tokens());
    recorded_tokens(u, file.request_records.get(i)).dollars(&price)
}

/// The lifetime a request's record shows it writing in, if it wrote.
fn tier_of(rec: Option<&RequestRecord>) -> Option<CacheTtl> {
    let rec = rec?;
    let w5 = rec.cache_write_5m.unwrap_or(0);
    let w1 = rec.cache_write_1h.unwrap_or(0);
    if w1 > w5 {
        Some(CacheTtl::OneHour)
    } else if w5 > 0 {
        Some(CacheTtl::FiveMinutes)
    } else {
        None
    }
}

/// Whether a user message between two requests is a background task's
/// notification (in a Claude Code session).
fn rewritten(input: &Input, from: usize, to: usize) -> bool {
    input.file.source.format == FORMAT_CLAUDE_CODE && rewrites_prompt(input.messages, from, to)
}

/// Whether one of Claude Code's `messages[from..to]` is a background
/// task's notification of the kind that rewrites the prompt: the harness
/// then sends the conversation anew after the fixed prompt. Notifications
/// that carry the task's `<tool-use-id>` (newer versions) are appended to
/// the conversation like any message, and the cache reads it in full.
pub fn rewrites_prompt(messages: &[Arc<Message>], from: usize, to: usize) -> bool {
    messages
        .get(from.min(to)..to.min(messages.len()))
        .unwrap_or(&[])
        .iter()
        .any(|m| rewrites_prompt_at(m))
}

/// Whether `m` is a notification that rewrites the prompt
/// ([`rewrites_prompt`]).
pub fn rewrites_prompt_at(m: &Message) -> bool {
    m.role == Role::User
        && m.content.iter().any(|b| {
            let text = b.text_lossy();
            text.trim_start().starts_with(TASK_NOTIFICATION) && !text.contains(TOOL_USE_ID)
        })
}

/// The parent context a compaction agent's first request can read: the
/// prompt of the parent's last request of `model` at or before `t`, if its
/// cache is still warm.
fn parent_prefix(parent: &Input, model: &str, t: Option<i64>, settings: &Settings) -> u64 {
    let Some(t) = t else { return 0 };
    let mut best: Option<(i64, u64, CacheTtl)> = None;
    let mut tier = CacheTtl::FiveMinutes;
    for (i, r) in parent.file.requests.iter().enumerate() {
        let rec = record_of(parent.file, i, r);
        if let Some(x) = tier_of(rec) {
            tier = x;
        }
        let (Some(at), true) = (time_of(rec), model_of(r, parent.file) == model) else {
            continue;
        };
        if at <= t {
            best = Some((at, r.prompt_tokens(), settings.ttl.unwrap_or(tier)));
        }
    }
    match best {
        Some((at, prompt, ttl)) => {
            let warm = Warm {
                prompt,
                at: Some(at),
                ttl,
            };
            if warm.expired_at(Some(t)) {
                0
            } else {
                prompt
            }
        }
        None => 0,
    }
}

/// Which sessions send the same fixed prompt: one kind of agent on one
/// model. (Not one project: the prefix a new session finds cached holds the
/// tools and the static part of the system prompt, the same in every
/// project; keyed by project as well, the check comes out worse on every
/// source.)
pub type PromptKey = (Kind, String);

/// The key of a session's requests of `model`.
fn prompt_key(file: &SessionFile, model: &str) -> PromptKey {
    (Kind::of(file).prompt(), model.to_string())
}

/// The account's timeline: when each session sent a request with each
/// fixed prompt, sorted by time.
#[derive(Default)]
pub struct Timeline {
    times: HashMap<PromptKey, Vec<(i64, usize)>>,
}

impl Timeline {
    /// The requests of `inputs` (session `k` is `inputs[k]`).
    pub fn new(inputs: &[Input]) -> Timeline {
        let mut times: HashMap<PromptKey, Vec<(i64, usize)>> = HashMap::new();
        for (k, i) in inputs.iter().enumerate() {
            for (n, r) in i.file.requests.iter().enumerate() {
                if let Some(t) = time_of(record_of(i.file, n, r)) {
                    times
                        .entry(prompt_key(i.file, &model_of(r, i.file)))
                        .or_default()
                        .push((t, k));
                }
            }
        }
        for v in times.values_mut() {
            v.sort_unstable();
        }
        Timeline { times }
    }

    /// Whether a session other than `me` had a request with the fixed
    /// prompt `key` answered within `ttl` before a request sent at `sent`:
    /// that request used the prompt, so it is still cached. An answer at
    /// the very moment (subagents started together) was not there yet.
    fn warm(&self, key: &PromptKey, me: usize, sent: Option<i64>, ttl: CacheTtl) -> bool {
        let (Some(t), Some(times)) = (sent, self.times.get(key)) else {
            return false;
        };
        let from = t - ttl.seconds().unwrap_or(i64::MAX / 2);
        let i = times.partition_point(|x| x.0 < from);
        times[i..].iter().take_while(|x| x.0 < t).any(|x| x.1 != me)
    }
}

/// What a session can find in the cache from the other sessions of the
/// check.
#[derive(Default)]
pub struct Shared<'a> {
    /// The session's parent, when the check has it.
    pub parent: Option<&'a Input<'a>>,
    /// The account's timeline; `None`: the session is priced alone.
    pub timeline: Option<&'a Timeline>,
    /// The session's position on the timeline.
    pub me: usize,
    /// The agent's fixed prompt in tokens, as fitted from the recorded
    /// reads of sessions of its kind (see [`fit_fixed_prefix`]); `None`:
    /// the input's own.
    pub fixed_prefix: Option<u64>,
    /// How many requests of the account's log read exactly so many tokens
    /// from the cache, per length: the evidence of [`Cause::EarlyEviction`].
    pub cached_lengths: Option<&'a HashMap<u64, usize>>,
    /// The shares of the account's cache beyond the log this session is
    /// priced by; `None`: the log alone.
    pub expect: Option<Expect>,
}

impl Shared<'_> {
    /// Whether a request that read `read` tokens read a prefix the account's
    /// log shows cached at that exact length by another request.
    fn read_a_cached_length(&self, read: u64) -> bool {
        read > 0
            && self
                .cached_lengths
                .and_then(|c| c.get(&read))
                .is_some_and(|n| *n >= 2)
    }

    /// Whether another session kept the fixed prompt of `file`'s requests
    /// of `model` cached at `t`.
    fn fixed_prompt_warm(
        &self,
        file: &SessionFile,
        model: &str,
        t: Option<i64>,
        ttl: CacheTtl,
    ) -> bool {
        self.timeline
            .is_some_and(|tl| tl.warm(&prompt_key(file, model), self.me, t, ttl))
    }
}

/// Estimated tokens (bytes / 4 × `ratio`) of the messages before the first
/// answer: what a compaction agent adds to its parent's context.
fn own_instruction(input: &Input) -> u64 {
    let bytes: u64 = input
        .messages
        .iter()
        .take_while(|m| m.role != Role::Assistant)
        .map(|m| m.bytes())
        .sum();
    let ratio = if input.ratio > 0.0 { input.ratio } else { 1.0 };
    (bytes as f64 / crate::engine::constants::BYTES_PER_TOKEN as f64 * ratio).round() as u64
}

/// The agent's fixed prompt as the recorded usage shows it: the median
/// cache read of requests that read something but less than half the
/// previous prompt (after a compaction or a rewrite only the fixed prompt
/// is still cached) and of first requests that read something (another
/// session cached it). `None` when no request shows it.
pub fn fit_fixed_prefix(files: &[&SessionFile]) -> Option<u64> {
    let mut reads: Vec<f64> = Vec::new();
    for f in files {
        let mut prev: Option<u64> = None;
        for r in f.requests.iter().filter(|r| r.prompt_tokens() > 0) {
            let read = r.cache_read_input_tokens;
            let partial = match prev {
                None => read > 0,
                Some(p) => read > 0 && (read as f64) < p as f64 / 2.0,
            };
            if partial {
                reads.push(read as f64);
            }
            prev = Some(r.prompt_tokens());
        }
    }
    median_of(&mut reads).map(|m| m.round() as u64)
}

/// Why the cache of a request of `model` is cold, as far as the log says
/// before the request is sent: `prev` is the previous request's answering
/// message and prompt, `here` what this model left in the cache.
fn cold_cause(
    input: &Input,
    prev: Option<(usize, u64)>,
    here: Option<Warm>,
    t: Option<i64>,
    r: &RequestUsage,
) -> Option<Cause> {
    let (from, _) = prev?;
    let Some(w) = here else {
        return Some(Cause::ModelSwitch);
    };
    if w.expired_at(t) {
        Some(Cause::TtlExpiry)
    } else if input
        .file
        .full_compactions()
        .any(|b| b.message_index > from && b.message_index <= r.message_index)
    {
        Some(Cause::AgentCompaction)
    } else if rewritten(input, from + 1, r.message_index) {
        Some(Cause::HarnessRewrite)
    } else {
        None
    }
}

/// One request as the check walks a session: what the walk knows before it.
struct Step<'s> {
    prev: Option<(usize, u64)>,
    here: Option<Warm>,
    cold: Option<Cause>,
    /// The fixed prompt another session of the account kept warm, in
    /// tokens, and whether a logged session did; else its expected part
    /// found warm through requests outside the log.
    from_others: &'s dyn Fn() -> (u64, bool),
    /// Of a warm prefix past the fixed prompt, the expected part lost to an
    /// early eviction.
    evicted: f64,
    /// The session's fixed prompt, and its kind.
    fixed_prefix: u64,
    kind: Kind,
}

/// The tokens the model predicts a request reads from the cache, before
/// the minimum prefix and cache blocks; and whether they are the fixed
/// prompt another session kept warm.
fn predicted_read(
    input: &Input,
    shared: &Shared,
    settings: &Settings,
    step: &Step,
    prompt: u64,
    model: &str,
    t: Option<i64>,
) -> (u64, bool) {
    let fixed_prefix = step.fixed_prefix;
    match (step.prev, step.here, step.cold) {
        (None, _, _) if step.kind == Kind::Compaction => {
            let from_parent = match shared.parent {
                Some(p) => parent_prefix(p, model, t, settings),
                None => prompt.saturating_sub(own_instruction(input)),
            };
            let (f, _) = (step.from_others)();
            (from_parent.max(f).min(prompt), f > from_parent)
        }
        (None, _, _) | (_, None, _) | (_, _, Some(Cause::TtlExpiry)) => {
            let (f, logged) = (step.from_others)();
            let f = f.min(prompt);
            (f, logged && f > 0)
        }
        (_, Some(w), None) => {
            let full = w.prompt.min(prompt);
            let lost = (full - fixed_prefix.min(full)) as f64 * step.evicted;
            (full - lost.round() as u64, false)
        }
        (_, Some(w), Some(Cause::AgentCompaction | Cause::HarnessRewrite)) => {
            (fixed_prefix.min(w.prompt).min(prompt), false)
        }
        _ => (0, false),
    }
}

/// The predicted split of a request of `prompt` tokens reading `read`:
/// plain input below the minimum `min`, else the read and the rest
/// written, in the tiers the record shows (`r5`, `r1`) or `tier`.
fn predicted_tokens(
    r: &RequestUsage,
    prompt: u64,
    min: u64,
    read: u64,
    tier: CacheTtl,
    (r5, r1): (u64, u64),
) -> Tokens {
    let mut predicted = Tokens {
        output: r.output_tokens,
        ..Tokens::default()
    };
    if prompt < min {
        predicted.input = prompt;
        return predicted;
    }
    predicted.cache_read = read;
    let write = prompt - read;
    let one_hour = if r5 + r1 > 0 {
        (write as f64 * r1 as f64 / (r5 + r1) as f64).round() as u64
    } else if tier == CacheTtl::OneHour {
        write
    } else {
        0
    };
    predicted.cache_write_1h = one_hour.min(write);
    predicted.cache_write_5m = write - predicted.cache_write_1h;
    predicted
}

/// The cause of a recorded miss (a read under half the previous prompt):
/// what made the cache cold, else the early eviction the recorded read
/// shows, else none known. The read's length is evidence only where the
/// provider reports reads to the token (`row.cache_block` 1): in whole
/// blocks (OpenAI's 128 tokens) many unrelated reads have the same length.
fn miss_cause(
    r: &RequestUsage,
    row: &ModelPrice,
    prev: Option<(usize, u64)>,
    cold: Option<Cause>,
    shared: &Shared,
) -> Option<Cause> {
    let (_, p) = prev?;
    let read = r.cache_read_input_tokens;
    if (read as f64) >= p as f64 / 2.0 {
        return None;
    }
    Some(match cold {
        Some(c) => c,
        None if row.cache_block <= 1 && shared.read_a_cached_length(read) => Cause::EarlyEviction,
        None => Cause::Unexplained,
    })
}

/// Checks one session against what the other sessions left in the cache.
pub fn check_session(input: &Input, shared: &Shared, settings: &Settings) -> SessionCheck {
    let file = input.file;
    let mut warm: HashMap<String, Warm> = HashMap::new();
    let mut tier = settings.ttl.unwrap_or(CacheTtl::FiveMinutes);
    let mut prev: Option<(usize, u64)> = None;
    let mut walk = Walk::default();
    let started = file.created_at.as_deref().and_then(parse_rfc3339);
    let fixed_prefix = shared.fixed_prefix.unwrap_or(input.fixed_prefix);
    let kind = Kind::of(file);
    let expect = shared.expect.unwrap_or_default();
    for (i, r) in file.requests.iter().enumerate() {
        let prompt = r.prompt_tokens();
        if prompt == 0 {
            continue;
        }
        let model = model_of(r, file);
        let row = price_for(file.provider.as_deref(), &model);
        if !lookup(&model).known && !walk.unpriced.contains(&model) {
            walk.unpriced.push(model.clone());
        }
        let rec = record_of(file, i, r);
        let t = time_of(rec);
        if let Some(x) = tier_of(rec) {
            tier = x;
        }
        let ttl = settings.ttl.unwrap_or(tier);
        let min = settings.min_cacheable.unwrap_or(row.min_cacheable);
        let here = warm.get(&model).copied();
        let cold = cold_cause(input, prev, here, t, r);
        if here.is_some() && t.is_some() && here.and_then(|w| w.ttl.seconds()).is_some() {
            walk.ttl_applied = true;
        }
        // A session's first request was sent when the session began (its
        // first line), the others by their answer's time.
        let sent = match prev {
            None => started.filter(|s| t.is_none_or(|t| *s <= t)).or(t),
            Some(_) => t,
        };
        let cold_start = prev.is_none() || here.is_none() || cold == Some(Cause::TtlExpiry);
        // Asked of every request, not only the cold ones: a replay's cache
        // goes cold where its own compactions and gaps say.
        let account_warm = shared.fixed_prompt_warm(file, &model, sent, ttl);
        let logged_warm = cold_start && account_warm;
        let from_others = || {
            if logged_warm {
                (fixed_prefix, true)
            } else if kind == Kind::Compaction {
                (0, false)
            } else {
                let f = fixed_prefix as f64 * expect.warm_elsewhere;
                (f.round() as u64, false)
            }
        };
        let gap = here.and_then(|w| Some(t? - w.at?));
        let chance = match (prompt >= min, cold, gap) {
            (false, _, _) => None,
            _ if cold_start => {
                (kind != Kind::Compaction && !logged_warm).then_some(Chance::ColdUnshared)
            }
            (true, None, Some(g)) => here.map(|w| {
                let full = w.prompt.min(prompt);
                Chance::Warm {
                    bucket: gap_bucket(g),
                    at_risk: full - fixed_prefix.min(full),
                }
            }),
            _ => None,
        };
        let step = Step {
            prev,
            here,
            cold,
            from_others: &from_others,
            evicted: match chance {
                Some(Chance::Warm { bucket, .. }) => expect.evicted[bucket],
                _ => 0.0,
            },
            fixed_prefix,
            kind,
        };
        let (read, shared_read) = predicted_read(input, shared, settings, &step, prompt, &model, t);
        let block = row.cache_block.max(1);
        let read = if read < min { 0 } else { read / block * block };
        if shared_read && read > 0 && prompt >= min {
            walk.shared_reads += 1;
        }
        // The recorded split decides the tier of the predicted writes: the
        // lifetime is the agent's choice, known from its log.
        let split = recorded_split(r, rec, tier);
        let predicted = predicted_tokens(r, prompt, min, read, tier, split);
        let recorded = split_tokens(r, split);
        let price = row.at(prompt);
        walk.detail.push(RequestCheck {
            message_index: r.message_index,
            model: model.clone(),
            family: row.family,
            long_context: row.is_long(prompt),
            timestamp: rec.and_then(|x| x.timestamp.clone()),
            gap_seconds: gap,
            recorded_usd: recorded.dollars(&price),
            predicted_usd: predicted.dollars(&price),
            recorded,
            predicted,
            billed_usd: rec.and_then(|x| x.cost),
            cold,
            miss: miss_cause(r, row, prev, cold, shared),
            chance,
            account_warm,
        });
        if prompt >= min {
            warm.insert(model, Warm { prompt, at: t, ttl });
        }
        prev = Some((r.message_index, prompt));
    }
    walk.finish(input, fixed_prefix)
}

/// What the walk of one session gathers beside the requests' own checks.
#[derive(Default)]
struct Walk {
    detail: Vec<RequestCheck>,
    unpriced: Vec<String>,
    ttl_applied: bool,
    shared_reads: usize,
}

impl Walk {
    /// The session's check: its requests summed.
    fn finish(self, input: &Input, fixed_prefix: u64) -> SessionCheck {
        let file = input.file;
        let mut recorded = Tokens::default();
        let mut predicted = Tokens::default();
        let (mut recorded_usd, mut predicted_usd) = (0.0, 0.0);
        for d in &self.detail {
            recorded.add(&d.recorded);
            predicted.add(&d.predicted);
            recorded_usd += d.recorded_usd;
            predicted_usd += d.predicted_usd;
        }
        let detail = self.detail;
        let billed_usd = file.recorded_cost.or_else(|| {
            (!detail.is_empty() && detail.iter().all(|d| d.billed_usd.is_some()))
                .then(|| detail.iter().filter_map(|d| d.billed_usd).sum())
        });
        SessionCheck {
            session: input.label.clone(),
            compaction_agent: Kind::of(file) == Kind::Compaction,
            kind: Kind::of(file),
            format: file.source.format.clone(),
            requests: detail.len(),
            ttl_applied: self.ttl_applied,
            fixed_prefix,
            recorded,
            predicted,
            recorded_usd,
            predicted_usd,
            error: relative(predicted_usd, recorded_usd),
            billed_usd,
            unpriced_models: self.unpriced,
            shared_reads: self.shared_reads,
            detail,
        }
    }
}

/// (x − truth) / truth; 0 when both are 0.
pub fn relative(x: f64, truth: f64) -> f64 {
    if truth == 0.0 {
        if x == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (x - truth) / truth
    }
}

/// Checks every session that carries usage per request, in parallel, on
/// the account's one timeline (or each alone, [`Settings::per_session`]):
/// a compaction agent finds its parent among `inputs` by `parent_id`, and a
/// request whose own cache is cold finds the agent's fixed prompt cached
/// when another session of the same kind and model used it within the
/// lifetime. The fixed prompt is fitted per format and kind
/// ([`fit_fixed_prefix`]). Then each session is checked again, priced by
/// the account's cache beyond the log as the other sessions show it
/// ([`unlogged`]).
pub fn check(inputs: &[Input], settings: &Settings) -> Vec<SessionCheck> {
    let account = Account::new(inputs, settings);
    let (at, log_alone): (Vec<usize>, Vec<SessionCheck>) = account.check(None).into_iter().unzip();
    if settings.log_alone {
        return log_alone;
    }
    let expect = expect_at(inputs.len(), &at, &log_alone);
    account
        .check(Some(&expect))
        .into_iter()
        .map(|(_, c)| c)
        .collect()
}

/// What a replay's price takes of the account, per input (`None`: an input
/// without usage): the check's first pass, by the log alone, gives where
/// another session kept the fixed prompt warm and the shares the other
/// sessions show, exactly those [`check`] prices its second pass by.
pub fn accounts(inputs: &[Input], settings: &Settings) -> Vec<Option<AccountView>> {
    let account = Account::new(inputs, settings);
    let (at, log_alone): (Vec<usize>, Vec<SessionCheck>) = account.check(None).into_iter().unzip();
    let expect = if settings.log_alone {
        vec![None; inputs.len()]
    } else {
        expect_at(inputs.len(), &at, &log_alone)
    };
    let mut out: Vec<Option<AccountView>> = vec![None; inputs.len()];
    for (k, c) in at.iter().zip(&log_alone) {
        out[*k] = Some(AccountView::of(c, expect[*k].unwrap_or_default()));
    }
    out
}

/// The shares each session is priced by, fitted on the others' checks
/// `log_alone`, of the inputs at positions `at`, among `n` inputs.
fn expect_at(n: usize, at: &[usize], log_alone: &[SessionCheck]) -> Vec<Option<Expect>> {
    let mut expect: Vec<Option<Expect>> = vec![None; n];
    for (k, e) in at.iter().zip(unlogged::leave_one_out(log_alone)) {
        expect[*k] = Some(e);
    }
    expect
}

/// What every session of a check can find of the others.
struct Account<'a> {
    inputs: &'a [Input<'a>],
    settings: &'a Settings,
    by_id: HashMap<&'a str, &'a Input<'a>>,
    fixed: HashMap<(&'a str, Kind), Option<u64>>,
    timeline: Option<Timeline>,
    cached_lengths: HashMap<u64, usize>,
}

impl<'a> Account<'a> {
    fn new(inputs: &'a [Input<'a>], settings: &'a Settings) -> Account<'a> {
        let by_id = inputs.iter().map(|i| (i.file.id.as_str(), i)).collect();
        let mut fixed: HashMap<(&str, Kind), Option<u64>> = HashMap::new();
        for i in inputs {
            let format = i.file.source.format.as_str();
            let kind = Kind::of(i.file).prompt();
            fixed.entry((format, kind)).or_insert_with(|| {
                let of = |want: Option<Kind>| {
                    let files: Vec<&SessionFile> = inputs
                        .iter()
                        .filter(|j| j.file.source.format == format)
                        .filter(|j| want.is_none_or(|k| Kind::of(j.file).prompt() == k))
                        .map(|j| j.file)
                        .collect();
                    fit_fixed_prefix(&files)
                };
                of(Some(kind)).or_else(|| of(None))
            });
        }
        let mut cached_lengths: HashMap<u64, usize> = HashMap::new();
        for r in inputs.iter().flat_map(|i| &i.file.requests) {
            if r.cache_read_input_tokens > 0 {
                *cached_lengths.entry(r.cache_read_input_tokens).or_default() += 1;
            }
        }
        Account {
            inputs,
            settings,
            by_id,
            fixed,
            timeline: (!settings.per_session).then(|| Timeline::new(inputs)),
            cached_lengths,
        }
    }

    /// The sessions with usage, each with its position in the inputs,
    /// priced by `expect[position]` (none: the log alone).
    fn check(&self, expect: Option<&[Option<Expect>]>) -> Vec<(usize, SessionCheck)> {
        use rayon::prelude::*;
        self.inputs
            .par_iter()
            .enumerate()
            .filter(|(_, i)| i.file.requests.iter().any(|r| r.prompt_tokens() > 0))
            .map(|(me, i)| {
                let kind = Kind::of(i.file).prompt();
                let shared = Shared {
                    parent: i
                        .file
                        .parent_id
                        .as_deref()
                        .and_then(|p| self.by_id.get(p).copied()),
                    timeline: self.timeline.as_ref(),
                    me,
                    fixed_prefix: self
                        .fixed
                        .get(&(i.file.source.format.as_str(), kind))
                        .copied()
                        .flatten(),
                    cached_lengths: Some(&self.cached_lengths),
                    expect: expect.and_then(|e| e[me]),
                };
                (me, check_session(i, &shared, self.settings))
            })
            .collect()
    }
}

fn worst<'a>(it: impl Iterator<Item = (&'a SessionCheck, f64)>) -> Option<Worst> {
    it.max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map(|(s, e)| Worst {
            session: s.session.clone(),
            requests: s.requests,
            error: e,
        })
}

/// The figures per source format, formats in name order.
pub fn summarize(checks: &[SessionCheck]) -> Vec<Summary> {
    let mut formats: BTreeMap<&str, Vec<&SessionCheck>> = BTreeMap::new();
    for c in checks {
        formats.entry(c.format.as_str()).or_default().push(c);
    }
    formats
        .into_iter()
        .map(|(format, cs)| summarize_format(format, &cs))
        .collect()
}

fn summarize_format(format: &str, cs: &[&SessionCheck]) -> Summary {
    let mut abs: Vec<f64> = cs.iter().map(|c| c.error.abs()).collect();
    let mut short: Vec<f64> = cs
        .iter()
        .filter(|c| c.requests < LONG_SESSION)
        .map(|c| c.error.abs())
        .collect();
    let mut recorded = Tokens::default();
    let mut predicted = Tokens::default();
    let (mut recorded_usd, mut predicted_usd) = (0.0, 0.0);
    for c in cs {
        recorded.add(&c.recorded);
        predicted.add(&c.predicted);
        recorded_usd += c.recorded_usd;
        predicted_usd += c.predicted_usd;
    }
    let misses = misses_of(cs);
    let miss_cache_write: u64 = misses.values().map(|m| m.cache_write).sum();
    let share = |keep: &dyn Fn(Cause) -> bool| {
        if miss_cache_write == 0 {
            1.0
        } else {
            misses
                .iter()
                .filter(|(c, _)| keep(**c))
                .map(|(_, m)| m.cache_write)
                .sum::<u64>() as f64
                / miss_cache_write as f64
        }
    };
    Summary {
        format: format.to_string(),
        sessions: cs.len(),
        requests: cs.iter().map(|c| c.requests).sum(),
        // `NaN` for no sessions, as every percentile ([`crate::stats`]).
        median_error: percentile_of(&mut abs, 50.0).unwrap_or(f64::NAN),
        p95_error: percentile_of(&mut abs, 95.0).unwrap_or(f64::NAN),
        worst: worst(cs.iter().map(|c| (*c, c.error))),
        worst_long: worst(
            cs.iter()
                .filter(|c| c.requests >= LONG_SESSION)
                .map(|c| (*c, c.error)),
        ),
        median_error_short: percentile_of(&mut short, 50.0),
        p95_error_short: percentile_of(&mut short, 95.0),
        short_tail: ShortTail::of(cs, recorded_usd),
        long_sessions: cs.iter().filter(|c| c.requests >= LONG_SESSION).count(),
        long_within_bound: cs
            .iter()
            .filter(|c| c.requests >= LONG_SESSION && c.error.abs() <= LONG_SESSION_BOUND)
            .count(),
        recorded_usd,
        predicted_usd,
        total_error: relative(predicted_usd, recorded_usd),
        recorded,
        predicted,
        attributed: share(&|c| c != Cause::Unexplained),
        attributed_without_rewrite: share(&|c| {
            matches!(
                c,
                Cause::TtlExpiry
                    | Cause::AgentCompaction
                    | Cause::ModelSwitch
                    | Cause::EarlyEviction
            )
        }),
        misses,
        miss_cache_write,
        ttl_applied: cs.iter().filter(|c| c.ttl_applied).count(),
        prices: prices_used(cs),
        shared_reads: cs.iter().map(|c| c.shared_reads).sum(),
        unlogged: unlogged::totals(cs.iter().copied())
            .into_iter()
            .map(|((_, kind), fit)| UnloggedFit { kind, fit })
            .collect(),
        billed: billed_of(cs),
    }
}

/// The rows of the price table the sessions' requests were billed at,
/// most requests first.
fn prices_used(cs: &[&SessionCheck]) -> Vec<PriceUsed> {
    let mut prices: Vec<PriceUsed> = Vec::new();
    for c in cs {
        for d in &c.detail {
            let at = match prices.iter().position(|p| p.family == d.family) {
                Some(k) => k,
                None => {
                    let row = MODEL_PRICES
                        .iter()
                        .chain(std::iter::once(&super::table::FREE))
                        .find(|p| p.family == d.family)
                        .copied()
                        .unwrap_or(super::table::FREE);
                    prices.push(PriceUsed {
                        family: row.family.to_string(),
                        provider: row.provider.to_string(),
                        requests: 0,
                        long_context_requests: 0,
                        input: row.input,
                        cache_write_5m: row.cache_write_5m,
                        cache_write_1h: row.cache_write_1h,
                        cache_read: row.cache_read,
                        output: row.output,
                        nearest_for: Vec::new(),
                    });
                    prices.len() - 1
                }
            };
            let p = &mut prices[at];
            p.requests += 1;
            p.long_context_requests += usize::from(d.long_context);
            if c.unpriced_models.contains(&d.model) && !p.nearest_for.contains(&d.model) {
                p.nearest_for.push(d.model.clone());
            }
        }
    }
    prices.sort_by(|a, b| b.requests.cmp(&a.requests).then(a.family.cmp(&b.family)));
    prices
}

/// The recorded misses by cause, with what they sent again.
fn misses_of(cs: &[&SessionCheck]) -> BTreeMap<Cause, MissTotals> {
    let mut misses: BTreeMap<Cause, MissTotals> = BTreeMap::new();
    for d in cs.iter().flat_map(|c| &c.detail) {
        if let Some(cause) = d.miss {
            let m = misses.entry(cause).or_default();
            m.requests += 1;
            // Sent again: written to the cache, or plain input where
            // the provider writes nothing (OpenAI, Gemini).
            m.cache_write += d.recorded.cache_write() + d.recorded.input;
        }
    }
    misses
}

/// The recorded and predicted prices against what the log says was
/// billed, where it says so.
fn billed_of(cs: &[&SessionCheck]) -> Option<Billed> {
    let billed: Vec<(&SessionCheck, f64)> = cs
        .iter()
        .filter_map(|c| c.billed_usd.map(|b| (*c, b)))
        .collect();
    if billed.is_empty() {
        return None;
    }
    let total: f64 = billed.iter().map(|(_, b)| b).sum();
    let against = |price: &dyn Fn(&SessionCheck) -> f64| -> Vec<(&SessionCheck, f64)> {
        billed
            .iter()
            .map(|(c, b)| (*c, relative(price(c), *b)))
            .collect()
    };
    let priced = against(&|c| c.recorded_usd);
    let pred = against(&|c| c.predicted_usd);
    let median = |v: &[(&SessionCheck, f64)]| {
        median_of(&mut v.iter().map(|x| x.1.abs()).collect::<Vec<_>>()).unwrap_or(f64::NAN)
    };
    Some(Billed {
        sessions: billed.len(),
        billed_usd: total,
        priced_median_error: median(&priced),
        priced_worst: worst(priced.iter().copied()),
        priced_total_error: relative(billed.iter().map(|(c, _)| c.recorded_usd).sum(), total),
        predicted_median_error: median(&pred),
        predicted_worst: worst(pred.iter().copied()),
        predicted_total_error: relative(billed.iter().map(|(c, _)| c.predicted_usd).sum(), total),
    })
}

/// What the short sessions at or above their p95 |error| are: how much
/// they weigh and how much of their error is their first request, whose
/// read the model can only guess (whether the fixed prompt, or the
/// parent's context for a compaction agent, was still cached when the
/// session opened; requests of the account outside the log keep it warm
/// too).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShortTail {
    /// Sessions under [`LONG_SESSION`] requests at or above the p95 (and
    /// above the median).
    pub sessions: usize,
    /// Their requests, on average.
    pub mean_requests: f64,
    /// Their recorded usage, and its share of the source's.
    pub recorded_usd: f64,
    pub share_of_usd: f64,
    /// Share of their dollar error in their first request: its |error|
    /// against that of the rest of their requests.
    pub first_request_share: f64,
    /// Of them: the first request read from the cache what the model took
    /// to be cold (no session of the log had used the prompt within the
    /// lifetime), or read less than the model expected.
    pub first_read_unforeseen: usize,
    pub first_read_overestimated: usize,
    /// Of them: compaction agents (one request resending the parent's
    /// context).
    pub compaction_agents: usize,
    /// The p95 |error| of the short sessions with each first request
    /// priced as recorded: what the rest of their requests leave.
    pub p95_error_first_as_recorded: f64,
}

impl ShortTail {
    fn of(cs: &[&SessionCheck], source_usd: f64) -> Option<ShortTail> {
        let short: Vec<&SessionCheck> = cs
            .iter()
            .copied()
            .filter(|c| c.requests < LONG_SESSION && !c.detail.is_empty())
            .collect();
        let mut abs: Vec<f64> = short.iter().map(|c| c.error.abs()).collect();
        if abs.is_empty() {
            return None;
        }
        let p95 = percentile_of(&mut abs, 95.0)?;
        let median = median_of(&mut abs)?;
        // Above the median too, so that a bulk of equal errors is no tail.
        let tail: Vec<&SessionCheck> = short
            .iter()
            .copied()
            .filter(|c| c.error.abs() >= p95 && c.error.abs() > median)
            .collect();
        if tail.is_empty() {
            return None;
        }
        let first_off = |c: &SessionCheck| c.detail[0].predicted_usd - c.detail[0].recorded_usd;
        let first: f64 = tail.iter().map(|c| first_off(c).abs()).sum();
        let rest_off: f64 = tail
            .iter()
            .map(|c| (c.predicted_usd - c.recorded_usd - first_off(c)).abs())
            .sum();
        let off = first + rest_off;
        let recorded_usd: f64 = tail.iter().map(|c| c.recorded_usd).sum();
        let mut rest: Vec<f64> = short
            .iter()
            .map(|c| {
                let d = &c.detail[0];
                relative(
                    c.predicted_usd - d.predicted_usd + d.recorded_usd,
                    c.recorded_usd,
                )
                .abs()
            })
            .collect();
        let first_read = |c: &&SessionCheck| {
            let d = &c.detail[0];
            d.recorded.cache_read.cmp(&d.predicted.cache_read)
        };
        Some(ShortTail {
            sessions: tail.len(),
            mean_requests: tail.iter().map(|c| c.requests as f64).sum::<f64>() / tail.len() as f64,
            recorded_usd,
            share_of_usd: if source_usd > 0.0 {
                recorded_usd / source_usd
            } else {
                0.0
            },
            first_request_share: if off > 0.0 { first / off } else { 0.0 },
            first_read_unforeseen: tail
                .iter()
                .filter(|c| first_read(c) == std::cmp::Ordering::Greater)
                .count(),
            first_read_overestimated: tail
                .iter()
                .filter(|c| first_read(c) == std::cmp::Ordering::Less)
                .count(),
            compaction_agents: tail.iter().filter(|c| c.compaction_agent).count(),
            p95_error_first_as_recorded: percentile_of(&mut rest, 95.0).unwrap_or(f64::NAN),
        })
    }

    /// The tail in one sentence, for the printed check.
    pub fn describe(&self) -> String {
        format!(
            "the short sessions at or above the p95: {} session(s) of {:.1} requests on average, ${:.2} of recorded usage ({:.1}% of the source's); {:.0}% of their dollar error is their first request, which read more than the model expected in {} and less in {} ({} compaction agent(s)); with each short session's first request priced as recorded their p95 is {:.1}%",
            self.sessions,
            self.mean_requests,
            self.recorded_usd,
            self.share_of_usd * 100.0,
            self.first_request_share * 100.0,
            self.first_read_unforeseen,
            self.first_read_overestimated,
            self.compaction_agents,
            self.p95_error_first_as_recorded * 100.0,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::session_file::{CompactBoundary, Source};

    const OPUS: &str = "claude-opus-4-6";

    /// A request answered by message `index`, `prompt` tokens of which the
    /// log says `read` came from the cache, sent at `second`,
    /// writing in the `tier` lifetime.
    fn req(
        index: usize,
        model: &str,
        prompt: u64,
        read: u64,
        second: i64,
        tier: CacheTtl,
    ) -> (RequestUsage, RequestRecord) {
        let write = prompt - read - 3;
        (
            RequestUsage {
                message_index: index,
                input_tokens: 3,
                cache_creation_input_tokens: write,
                cache_read_input_tokens: read,
                output_tokens: 100,
                model: Some(model.into()),
            },
            RequestRecord {
                message_index: index,
                timestamp: Some(crate::time::format_rfc3339(1_770_000_000 + second)),
                cache_write_5m: Some(if tier == CacheTtl::OneHour { 0 } else { write }),
                cache_write_1h: Some(if tier == CacheTtl::OneHour { write } else { 0 }),
                cost: None,
            },
        )
    }

    fn file(reqs: Vec<(RequestUsage, RequestRecord)>) -> SessionFile {
        let (requests, request_records) = reqs.into_iter().unzip();
        SessionFile {
            id: "s".into(),
            source: Source {
                format: FORMAT_CLAUDE_CODE.into(),
                ..Source::default()
            },
            requests,
            request_records,
            ..SessionFile::default()
        }
    }

    fn run(f: &SessionFile, settings: Settings) -> SessionCheck {
        let input = Input {
            label: "s".into(),
            file: f,
            messages: &[],
            fixed_prefix: 20_000,
            ratio: 1.0,
        };
        check_session(&input, &Shared::default(), &settings)
    }

    const AUTO: Settings = Settings {
        ttl: None,
        min_cacheable: None,
        per_session: false,
        log_alone: false,
    };

    #[test]
    fn a_warm_cache_serves_the_previous_prompt_and_the_rest_is_written() {
        let f = file(vec![
            req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
            req(3, OPUS, 60_000, 50_000, 30, CacheTtl::FiveMinutes),
        ]);
        let c = run(&f, AUTO);
        let d = &c.detail[1];
        assert_eq!(d.predicted.cache_read, 50_000);
        assert_eq!(d.predicted.cache_write_5m, 10_000);
        assert_eq!((d.cold, d.miss), (None, None));
        assert!(c.ttl_applied);
    }

    #[test]
    fn a_gap_longer_than_the_five_minute_lifetime_reads_nothing() {
        let f = file(vec![
            req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
            req(3, OPUS, 60_000, 0, 301, CacheTtl::FiveMinutes),
        ]);
        let d = &run(&f, AUTO).detail[1];
        assert_eq!(d.predicted.cache_read, 0);
        assert_eq!(d.predicted.cache_write_5m, 60_000);
        assert_eq!(d.cold, Some(Cause::TtlExpiry));
        assert_eq!(d.miss, Some(Cause::TtlExpiry));
    }

    #[test]
    fn the_one_hour_tier_survives_the_same_gap_and_costs_twice_the_input() {
        let f = file(vec![
            req(1, OPUS, 50_000, 0, 0, CacheTtl::OneHour),
            req(3, OPUS, 60_000, 50_000, 301, CacheTtl::OneHour),
        ]);
        let c = run(&f, AUTO);
        let d = &c.detail[1];
        assert_eq!(d.cold, None);
        assert_eq!(d.predicted.cache_write_1h, 10_000);
        let opus = super::super::table::model_price(OPUS).unwrap();
        let write_only = Tokens {
            cache_write_1h: 1_000_000,
            ..Tokens::default()
        };
        assert_eq!(write_only.dollars(opus), 2.0 * opus.input);
        // A fixed lifetime overrides the records, and `none` never expires.
        let d = &run(
            &f,
            Settings {
                ttl: Some(CacheTtl::FiveMinutes),
                ..AUTO
            },
        )
        .detail[1];
        assert_eq!(d.cold, Some(Cause::TtlExpiry));
        let c = run(
            &f,
            Settings {
                ttl: Some(CacheTtl::None),
                ..AUTO
            },
        );
        assert_eq!(c.detail[1].cold, None);
        assert!(!c.ttl_applied);
    }

    #[test]
    fn below_the_minimum_cacheable_prefix_everything_is_plain_input() {
        // Opus 4.6 caches from 4096 tokens on.
        let f = file(vec![
            req(1, OPUS, 4000, 0, 0, CacheTtl::FiveMinutes),
            req(3, OPUS, 4090, 0, 10, CacheTtl::FiveMinutes),
        ]);
        let d = &run(&f, AUTO).detail[1];
        assert_eq!(d.predicted.input, 4090);
        assert_eq!(d.predicted.cache_write(), 0);
        let d = &run(
            &f,
            Settings {
                min_cacheable: Some(1024),
                ..AUTO
            },
        )
        .detail[1];
        assert_eq!(d.predicted.cache_read, 4000);
    }

    #[test]
    fn after_the_agents_compaction_only_the_fixed_prompt_is_read() {
        let mut f = file(vec![
            req(1, OPUS, 150_000, 0, 0, CacheTtl::FiveMinutes),
            req(5, OPUS, 40_000, 21_000, 60, CacheTtl::FiveMinutes),
        ]);
        f.compact_boundaries.push(CompactBoundary {
            message_index: 3,
            ..CompactBoundary::default()
        });
        let d = &run(&f, AUTO).detail[1];
        assert_eq!(d.predicted.cache_read, 20_000);
        assert_eq!(d.cold, Some(Cause::AgentCompaction));
        assert_eq!(d.miss, Some(Cause::AgentCompaction));
    }

    #[test]
    fn a_model_the_session_has_not_used_reads_nothing_and_an_unexplained_miss_is_named() {
        let f = file(vec![
            req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
            req(3, "claude-haiku-4-5", 30_000, 0, 5, CacheTtl::FiveMinutes),
            req(5, OPUS, 60_000, 50_000, 10, CacheTtl::FiveMinutes),
            req(7, OPUS, 70_000, 1000, 15, CacheTtl::FiveMinutes),
        ]);
        let c = run(&f, AUTO);
        assert_eq!(c.detail[1].cold, Some(Cause::ModelSwitch));
        assert_eq!(c.detail[1].miss, Some(Cause::ModelSwitch));
        // Back on Opus, its own cache is still warm.
        assert_eq!(c.detail[2].predicted.cache_read, 50_000);
        assert_eq!(c.detail[2].miss, None);
        assert_eq!(c.detail[3].miss, Some(Cause::Unexplained));
        let s = &summarize(&[c])[0];
        // Its writes and its plain input: all it sent again.
        assert_eq!(s.misses[&Cause::Unexplained].cache_write, 70_000 - 1000);
        assert!(s.attributed < 0.9);
    }

    #[test]
    fn a_miss_that_reads_a_length_another_request_read_is_an_early_eviction() {
        // Session b opens reading the fixed prompt (17 504 tokens) that a
        // kept warm; later, with nothing changed and within the lifetime,
        // a reads only that prefix again, then a length no one else read.
        let files = vec![
            session(
                "a",
                None,
                vec![
                    req(1, OPUS, 50_000, 0, 0, CacheTtl::FiveMinutes),
                    req(3, OPUS, 60_000, 50_000, 30, CacheTtl::FiveMinutes),
                    req(5, OPUS, 70_000, 17_504, 60, CacheTtl::FiveMinutes),
                    req(7, OPUS, 80_000, 70_000, 90, CacheTtl::FiveMinutes),
                    req(9, OPUS, 90_000, 23_456, 120, CacheTtl::FiveMinutes),
                ],
            ),
            session(
                "b",
                None,
                vec![req(1, OPUS, 40_000, 17_504, 10, CacheTtl::FiveMinutes)],
            ),
        ];
        let checks = check(&inputs(&files), &AUTO);
        let a = checks.iter().find(|c| c.session == "a").unwrap();
        assert_eq!(a.detail[2].cold, None, "nothing in the log made it cold");
        assert_eq!(a.detail[2].miss, Some(Cause::EarlyEviction));
        assert_eq!(a.detail[4].miss, Some(Cause::Unexplained));
        // The prediction does not know of it: the full previous prompt.
        assert_eq!(a.detail[2].predicted.cache_read, 60_000);
        let s = &summarize(&checks)[0];
        assert_eq!(s.misses[&Cause::EarlyEviction].cache_write, 70_000 - 17_504);
        // Read lengths in whole blocks (OpenAI's) are no evidence.
        let mut openai = files.clone();
        for f in &mut openai {
            f.provider = Some("openai".into());
            for r in &mut f.requests {
                r.model = Some("gpt-5.4".into());
            }
        }
        let checks = check(&inputs(&openai), &AUTO);
        let a = checks.iter().find(|c| c.session == "a").unwrap();
        assert_eq!(a.detail[2].miss, Some(Cause::Unexplained));
    }

    #[test]
    fn the_short_tail_says_how_much_of_its_error_is_the_first_request() {
        // Short sessions an hour apart: none finds another's prompt warm,
        // yet "late" recorded reading 15 000 tokens at its first request.
        let mut files: Vec<SessionFile> = (0..20)
            .map(|k| {
                session(
                    &format!("s{k}"),
                    None,
                    vec![
                        req(1, OPUS, 30_000, 0, 3600 * k, CacheTtl::FiveMinutes),
                        req(
                            3,
                            OPUS,
                            40_000,
                            30_000,
                            3600 * k + 20,
                            CacheTtl::FiveMinutes,
                        ),
                    ],
                )
            })
            .collect();
        files.push(session(
            "late",
            None,
            vec![
                req(1, OPUS, 30_000, 15_000, 3600 * 30, CacheTtl::FiveMinutes),
                req(
                    3,
                    OPUS,
                    40_000,
                    30_000,
                    3600 * 30 + 20,
                    CacheTtl::FiveMinutes,
                ),
            ],
        ));
        let checks = check(&inputs(&files), &AUTO);
        let s = &summarize(&checks)[0];
        let tail = s.short_tail.as_ref().unwrap();
        let late = checks.iter().find(|c| c.session == "late").unwrap();
        assert!(late.error > 0.1, "{}", late.error);
        assert_eq!(tail.sessions, 1, "{tail:?}");
        assert_eq!(tail.first_read_unforeseen, 1);
        assert_eq!(tail.first_read_overestimated, 0);
        // All but the rest's recorded 3 tokens of plain input per request.
        assert!(tail.first_request_share > 0.999, "{tail:?}");
        assert!((tail.recorded_usd - late.recorded_usd).abs() < 1e-12);
        // The rest of every session is priced right.
        assert!(tail.p95_error_first_as_recorded < 1e-3, "{tail:?}");
        assert!(tail
            .describe()
            .contains("100% of their dollar error is their first request"));
    }

    /// A session `id` of `kind` made of `reqs`.
    fn session(
        id: &str,
        agent: Option<&str>,
        reqs: Vec<(RequestUsage, RequestRecord)>,
    ) -> SessionFile {
        let mut f = file(reqs);
        f.id = id.into();
        f.source.agent_id = agent.map(str::to_string);
        f.created_at = f.request_records.first().and_then(|r| r.timestamp.clone());
        f
    }

    fn inputs<'a>(files: &'a [SessionFile]) -> Vec<Input<'a>> {
        files
            .iter()
            .map(|f| Input {
                label: f.id.clone(),
                file: f,
                messages: &[],
                fixed_prefix: 20_000,
                ratio: 1.0,
            })
            .collect()
    }

    /// A session `id` of a first request at `second` reading `first_read`,
    /// then `warm` requests ten seconds apart each reading the previous
    /// prompt, except those in `evicted`, which read only 20 000 tokens.
    fn run_of(
        id: &str,
        second: i64,
        first_read: u64,
        warm: usize,
        evicted: &[usize],
    ) -> SessionFile {
        let mut reqs = vec![req(
            1,
            OPUS,
            30_000,
            first_read,
            second,
            CacheTtl::FiveMinutes,
        )];
        for k in 1..=warm {
            let prompt = 30_000 + 1_000 * k as u64;
            let read = if evicted.contains(&k) {
                20_000
            } else {
                prompt - 1_000
            };
            let at = second + 10 * k as i64;
            reqs.push(req(
                2 * k + 1,
                OPUS,
                prompt,
                read,
                at,
                CacheTtl::FiveMinutes,
            ));
        }
        session(id, None, reqs)
    }

    #[test]
    fn a_cold_request_reads_the_fixed_prompt_as_often_as_the_other_sessions_did() {
        // 22 sessions an hour apart, so none keeps another's prompt warm;
        // all but s0 found the fixed prompt cached all the same.
        let files: Vec<SessionFile> = (0..22)
            .map(|k| {
                run_of(
                    &format!("s{k}"),
                    3600 * k,
                    if k == 0 { 0 } else { 20_000 },
                    2,
                    &[],
                )
            })
            .collect();
        let checks = check(&inputs(&files), &AUTO);
        let of = |id: &str| checks.iter().find(|c| c.session == id).unwrap();
        // s0 is priced by the 21 others (all read it), not by its own record.
        assert_eq!(of("s0").detail[0].predicted.cache_read, 20_000);
        // s1 by s0's miss and the 20 others' reads.
        assert_eq!(of("s1").detail[0].predicted.cache_read, 19_048);
        assert_eq!(of("s1").detail[0].cold, None);
        // None of it counts as a read another logged session cached.
        assert_eq!(of("s1").shared_reads, 0);
        let s = &summarize(&checks)[0];
        let main = s.unlogged.iter().find(|u| u.kind == Kind::Main).unwrap();
        assert_eq!(
            (main.fit.warm_elsewhere.seen, main.fit.warm_elsewhere.events),
            (22, 21)
        );
        // Alone on the log, the first request reads what the log shows.
        let alone = check(&inputs(&files[..1]), &AUTO);
        assert_eq!(alone[0].detail[0].predicted.cache_read, 0);
        let plain = check(
            &inputs(&files),
            &Settings {
                log_alone: true,
                ..AUTO
            },
        );
        assert_eq!(plain[1].session, "s1");
        assert_eq!(plain[1].detail[0].predicted.cache_read, 0);
    }

    #[test]
    fn early_evictions_are_priced_by_the_share_the_other_sessions_lost() {
        let files = vec![
            run_of("a", 0, 0, 30, &[14, 16, 18, 20, 22]),
            run_of("b", 3600, 0, 30, &[]),
            run_of("c", 7200, 0, 30, &[]),
        ];
        let checks = check(&inputs(&files), &AUTO);
        let of = |id: &str| checks.iter().find(|c| c.session == id).unwrap();
        // a's own evictions do not price a: each warm request reads all
        // of the previous prompt.
        let a = of("a");
        assert_eq!(a.detail[14].miss, Some(Cause::EarlyEviction));
        for k in 1..=30 {
            assert_eq!(a.detail[k].predicted.cache_read, 29_000 + 1_000 * k as u64);
        }
        // b and c are priced by a's: of every warm prefix past the fixed
        // prompt, the share a lost of its own.
        let (b, c) = (of("b"), of("c"));
        for k in 1..=30 {
            let full = 29_000 + 1_000 * k as u64;
            assert!(b.detail[k].predicted.cache_read < full, "{k}");
            assert_eq!(b.detail[k].predicted, c.detail[k].predicted, "{k}");
        }
        // The share is what a lost of what a, b and c held warm, less b's
        // own (none lost): lost / (a's + c's at risk).
        let at_risk: u64 = (1..=30u64).map(|k| 9_000 + 1_000 * k).sum();
        let lost: u64 = [14u64, 16, 18, 20, 22]
            .iter()
            .map(|k| 9_000 + 1_000 * k)
            .sum();
        let share = lost as f64 / (2 * at_risk) as f64;
        let k = 5;
        let full = 29_000 + 1_000 * k as u64;
        let expect = full - ((full - 20_000) as f64 * share).round() as u64;
        assert_eq!(b.detail[k].predicted.cache_read, expect);
        assert!(b.predicted_usd > b.recorded_usd);
    }

    #[test]
    fn a_replay_is_priced_by_the_shares_and_warm_prompts_the_check_priced_by() {
        // As above, and d starts 15 s into a's run, whose prompt is warm.
        let files = vec![
            run_of("a", 0, 0, 30, &[14, 16, 18, 20, 22]),
            run_of("b", 3600, 0, 30, &[]),
            run_of("c", 7200, 0, 30, &[]),
            run_of("d", 15, 20_000, 2, &[]),
        ];
        let inputs = inputs(&files);
        let checks = check(&inputs, &AUTO);
        let views = accounts(&inputs, &AUTO);
        let b = checks.iter().find(|c| c.session == "b").unwrap();
        let view_b = views[1].as_ref().unwrap();
        // The share the check priced b's warm requests by is the view's.
        let k = 5;
        let full = 29_000 + 1_000 * k as u64;
        let lost = ((full - 20_000) as f64 * view_b.evicted(10)).round() as u64;
        assert!(lost > 0);
        assert_eq!(b.detail[k].predicted.cache_read, full - lost);
        // d's first request (message 1) found a's prompt warm; a's did not
        // find another's, nor did b's, and no cold request finds the fixed
        // prompt elsewhere in these logs.
        assert_eq!(views[3].as_ref().unwrap().cold_read(1), 1.0);
        assert_eq!(views[0].as_ref().unwrap().cold_read(1), 0.0);
        assert_eq!(view_b.cold_read(1), 0.0);
        // Each session alone: no warm prompt of another; the logs alone: no
        // shares.
        let alone = accounts(
            &inputs,
            &Settings {
                per_session: true,
                ..AUTO
            },
        );
        assert_eq!(alone[3].as_ref().unwrap().cold_read(1), 0.0);
        assert_eq!(alone[1].as_ref().unwrap().evicted(10), view_b.evicted(10));
        let plain = accounts(
            &inputs,
            &Settings {
                log_alone: true,
                ..AUTO
            },
        );
        assert_eq!(plain[1].as_ref().unwrap().evicted(10), 0.0);
        assert_eq!(plain[3].as_ref().unwrap().cold_read(1), 1.0);
    }

    #[test]
    fn one_account_one_cache_a_new_session_reads_the_fixed_prompt_another_kept_warm() {
        let files = vec![
            session(
                "a",
                None,
                vec![
                    req(1, OPUS, 30_000, 20_000, 0, CacheTtl::FiveMinutes),
                    req(3, OPUS, 40_000, 30_000, 200, CacheTtl::FiveMinutes),
                ],
            ),
            // Within five minutes of a's last request: warm.
            session(
                "b",
                None,
                vec![req(1, OPUS, 25_000, 20_000, 400, CacheTtl::FiveMinutes)],
            ),
            // Long after: cold.
            session(
                "c",
                None,
                vec![req(1, OPUS, 25_000, 0, 2_000, CacheTtl::FiveMinutes)],
            ),
            // A subagent sends other tools and another system prompt.
            session(
                "d",
                Some("a1"),
                vec![req(1, OPUS, 25_000, 0, 410, CacheTtl::FiveMinutes)],
            ),
        ];
        let inputs = inputs(&files);
        let checks = check(&inputs, &AUTO);
        let first = |id: &str| &checks.iter().find(|c| c.session == id).unwrap().detail[0];
        assert_eq!(first("b").predicted.cache_read, 20_000);
        assert_eq!(first("c").predicted.cache_read, 0);
        assert_eq!(first("d").predicted.cache_read, 0);
        assert_eq!(summarize(&checks)[0].shared_reads, 1);
        // Priced alone, nothing is shared.
        let alone = check(
            &inputs,
            &Settings {
                per_session: true,
                ..AUTO
            },
        );
        let b = alone.iter().find(|c| c.session == "b").unwrap();
        assert_eq!(b.detail[0].predicted.cache_read, 0);
        assert_eq!(summarize(&alone)[0].shared_reads, 0);
    }

    #[test]
    fn a_request_answered_at_the_moment_another_was_sent_had_not_cached_anything_yet() {
        // Two subagents started together: neither finds the other's prompt.
        let files = vec![
            session(
                "x",
                Some("a1"),
                vec![req(1, OPUS, 25_000, 0, 100, CacheTtl::FiveMinutes)],
            ),
            session(
                "y",
                Some("a2"),
                vec![req(1, OPUS, 25_000, 0, 100, CacheTtl::FiveMinutes)],
            ),
        ];
        let checks = check(&inputs(&files), &AUTO);
        assert!(checks.iter().all(|c| c.detail[0].predicted.cache_read == 0));
    }

    #[test]
    fn a_compaction_agent_without_its_parent_reads_all_but_its_instruction() {
        let instruction = Arc::new(Message::user("x".repeat(4000).as_bytes()));
        let f = session(
            "cc-p-agent-acompact-1",
            Some("acompact-1"),
            vec![req(1, OPUS, 150_000, 149_000, 0, CacheTtl::FiveMinutes)],
        );
        let messages = [instruction];
        let input = Input {
            label: "c".into(),
            file: &f,
            messages: &messages,
            fixed_prefix: 20_000,
            ratio: 1.5,
        };
        let c = check_session(&input, &Shared::default(), &AUTO);
        // 4000 bytes / 4 × 1.5 = 1500 tokens of instruction.
        assert_eq!(c.detail[0].predicted.cache_read, 148_500);
    }

    #[test]
    fn each_request_is_billed_at_its_families_rates_and_the_check_names_them() {
        let mut f = file(vec![
            req(1, "claude-sonnet-4-5", 150_000, 0, 0, CacheTtl::FiveMinutes),
            req(
                3,
                "claude-sonnet-4-5",
                250_000,
                150_000,
                10,
                CacheTtl::FiveMinutes,
            ),
            req(5, "claude-opus-4-7", 30_000, 0, 20, CacheTtl::FiveMinutes),
        ]);
        f.provider = Some("anthropic".into());
        let c = run(&f, AUTO);
        let sonnet = super::super::table::model_price("claude-sonnet-4-5").unwrap();
        // Above 200k the whole request is at the long-context rates.
        assert!(c.detail[1].long_context && !c.detail[0].long_context);
        let d = &c.detail[1];
        assert_eq!(d.predicted_usd, d.predicted.dollars(&sonnet.at(250_000)));
        assert!(d.predicted_usd > d.predicted.dollars(sonnet));
        // Opus 4.7 at $5 per million input, not Opus 4's $15.
        assert_eq!(c.detail[2].family, "Claude Opus 4.7");
        let s = &summarize(&[c])[0];
        let families: Vec<(&str, usize, usize)> = s
            .prices
            .iter()
            .map(|p| (p.family.as_str(), p.requests, p.long_context_requests))
            .collect();
        assert_eq!(
            families,
            [("Claude Sonnet 4 / 4.5", 2, 1), ("Claude Opus 4.7", 1, 0)]
        );
        assert_eq!(s.prices[1].input, 5.0);
        // Ollama bills nothing.
        let mut local = file(vec![req(
            1,
            "llama3:8b",
            30_000,
            0,
            0,
            CacheTtl::FiveMinutes,
        )]);
        local.provider = Some("ollama".into());
        let c = run(&local, AUTO);
        assert_eq!(c.predicted_usd, 0.0);
        assert_eq!(c.recorded_usd, 0.0);
    }

    #[test]
    fn the_fixed_prompt_is_the_median_partial_read() {
        let f = file(vec![
            req(1, OPUS, 50_000, 18_000, 0, CacheTtl::FiveMinutes),
            req(3, OPUS, 150_000, 50_000, 5, CacheTtl::FiveMinutes),
            req(5, OPUS, 40_000, 21_000, 10, CacheTtl::FiveMinutes),
            req(7, OPUS, 45_000, 19_000, 15, CacheTtl::FiveMinutes),
        ]);
        assert_eq!(fit_fixed_prefix(&[&f]), Some(19_000));
        assert_eq!(fit_fixed_prefix(&[&file(vec![])]), None);
    }
}
