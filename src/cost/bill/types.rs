//! The check's vocabulary: how it prices, the kinds of session and causes
//! of a miss, and what it reports per request and per session.

use std::sync::Arc;

use serde::Serialize;

use super::parts::{Part, Parts};
use crate::cost::table::ModelPrice;
use crate::cost::{CacheTtl, TOKENS_PER_PRICE_UNIT};
use crate::transcript::session_file::{CopyKind, SessionFile};
use crate::transcript::Message;

/// Sessions with at least this many requests are "long": the done-when
/// bound on the worst session applies to them.
pub(crate) const LONG_SESSION: usize = 50;

/// The error a long session's price should stay within.
pub(crate) const LONG_SESSION_BOUND: f64 = 0.15;

/// How the check prices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Settings {
    /// The cache lifetime; `None`: the tier each request's record shows,
    /// else five minutes.
    pub ttl: Option<CacheTtl>,
    /// The minimum cacheable prefix; `None`: the model's, from the table.
    pub(crate) min_cacheable: Option<u64>,
    /// The optional parts of the model that are on ([`Part`]).
    pub(crate) parts: Parts,
}

impl Settings {
    /// Whether the part `p` is on.
    pub(crate) fn has(&self, p: Part) -> bool {
        self.parts.on(p)
    }

    /// The cache lifetime of a request whose record shows the tier `tier`.
    pub(crate) fn lifetime(&self, tier: CacheTtl) -> CacheTtl {
        match self.ttl {
            Some(t) => t,
            None if self.has(Part::LifetimeTier) => tier,
            None => CacheTtl::FiveMinutes,
        }
    }
}

/// The role of a session, which decides the system prompt and tools it
/// sends: sessions of one kind in one project share them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A session the user started.
    Main,
    /// A subagent a main session started.
    Subagent,
    /// Claude Code's compaction agent.
    Compaction,
}

impl Kind {
    pub(crate) fn of(file: &SessionFile) -> Kind {
        match file.source.agent_id.as_deref() {
            // A side question and a prompt suggestion resend the parent's
            // context as the compaction agent does.
            Some(a) if CopyKind::of_agent(a).is_some() => Kind::Compaction,
            Some(_) => Kind::Subagent,
            None if file.parent_id.is_some() => Kind::Subagent,
            None => Kind::Main,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Subagent => "subagent",
            Kind::Compaction => "compaction",
        }
    }

    /// The kind whose system prompt and tools this kind sends: a
    /// compaction agent resends its parent's context under the parent's.
    pub(crate) fn prompt(self) -> Kind {
        match self {
            Kind::Compaction => Kind::Main,
            k => k,
        }
    }
}

/// Where a request's prompt went, and its answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Tokens {
    pub(crate) input: u64,
    pub(crate) cache_read: u64,
    pub(crate) cache_write_5m: u64,
    pub(crate) cache_write_1h: u64,
    pub(crate) output: u64,
}

impl Tokens {
    pub(crate) fn cache_write(&self) -> u64 {
        self.cache_write_5m + self.cache_write_1h
    }

    /// Dollars at the row's prices.
    pub(crate) fn dollars(&self, p: &ModelPrice) -> f64 {
        (self.input as f64 * p.input
            + self.cache_read as f64 * p.cache_read
            + self.cache_write_5m as f64 * p.cache_write_5m
            + self.cache_write_1h as f64 * p.cache_write_1h
            + self.output as f64 * p.output)
            / TOKENS_PER_PRICE_UNIT
    }

    pub(super) fn add(&mut self, o: &Tokens) {
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
pub(crate) enum Cause {
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
    pub(crate) const ALL: [Cause; 6] = [
        Cause::TtlExpiry,
        Cause::AgentCompaction,
        Cause::ModelSwitch,
        Cause::HarnessRewrite,
        Cause::EarlyEviction,
        Cause::Unexplained,
    ];

    pub(crate) fn as_str(self) -> &'static str {
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
pub(crate) struct RequestCheck {
    pub(crate) message_index: usize,
    pub(crate) model: String,
    /// The row of the price table it was billed at.
    pub(crate) family: &'static str,
    /// Whether it was billed above the row's first tier (a long context,
    /// a Model Studio step: [`crate::cost::table::Tier`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) long_context: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<String>,
    /// Seconds since the previous request of the same model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gap_seconds: Option<i64>,
    pub(crate) recorded: Tokens,
    pub(crate) predicted: Tokens,
    pub(crate) recorded_usd: f64,
    pub(crate) predicted_usd: f64,
    /// What the provider billed for it, when the log says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) billed_usd: Option<f64>,
    /// Why the model expects a cold cache here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cold: Option<Cause>,
    /// The cause of a recorded cache miss here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) miss: Option<Cause>,
    /// What it can show about the account's cache beyond the log.
    #[serde(skip)]
    pub(crate) chance: Option<Chance>,
    /// Whether another session of the check had used the agent's fixed
    /// prompt within the lifetime when this request was sent.
    #[serde(skip)]
    pub(crate) account_warm: bool,
}

/// One session, recorded and predicted.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct SessionCheck {
    pub(crate) session: String,
    /// A compaction agent's session (see [`Kind::Compaction`]).
    pub(crate) compaction_agent: bool,
    pub(crate) kind: Kind,
    pub(crate) format: String,
    pub(crate) requests: usize,
    /// Whether timestamps let the cache lifetime apply.
    pub(crate) ttl_applied: bool,
    /// The agent's fixed prompt assumed, in tokens.
    pub(crate) fixed_prefix: u64,
    /// A compaction agent's first request: what the log shows it can find
    /// cached of its parent's context.
    #[serde(skip)]
    pub(crate) first_read: Option<u64>,
    pub(crate) recorded: Tokens,
    pub(crate) predicted: Tokens,
    /// The recorded usage at the table's prices.
    pub(crate) recorded_usd: f64,
    pub(crate) predicted_usd: f64,
    /// (predicted − recorded) / recorded.
    pub(crate) error: f64,
    /// What the source says was billed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) billed_usd: Option<f64>,
    /// Models the table does not name (priced as the nearest family).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) unpriced_models: Vec<String>,
    /// Requests of this session that found the agent's fixed prompt
    /// cached by another session.
    pub(crate) shared_reads: usize,
    /// What folding its copies did (`SessionFile::side_requests`): the
    /// copies' own requests are checked as sessions of their own, so they
    /// are in neither `recorded` nor `predicted` here.
    #[serde(skip_serializing_if = "SideTotal::is_empty")]
    pub(crate) side_requests: SideTotal,
    pub(crate) detail: Vec<RequestCheck>,
}

/// What folding other logs' copies (`crate::import::copies`) did to a
/// session (or a source): the copies folded into it per kind, their own
/// requests (side requests) summed, the requests copied into it from
/// another log (billed there), and its requests whose final usage a copy
/// held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct SideTotal {
    /// Per [`CopyKind::ALL`]: compaction, side question, prompt suggestion.
    pub(crate) copies: [usize; 3],
    pub(crate) requests: usize,
    pub(crate) tokens: Tokens,
    pub(crate) usd: f64,
    pub(crate) copied_requests: usize,
    pub(crate) completed: usize,
}

impl SideTotal {
    pub(crate) fn is_empty(&self) -> bool {
        *self == SideTotal::default()
    }

    pub(crate) fn add(&mut self, o: &SideTotal) {
        for (a, b) in self.copies.iter_mut().zip(o.copies) {
            *a += b;
        }
        self.requests += o.requests;
        self.tokens.add(&o.tokens);
        self.usd += o.usd;
        self.copied_requests += o.copied_requests;
        self.completed += o.completed;
    }

    /// One line for people, `None` where nothing was folded.
    pub(crate) fn describe(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let kinds: Vec<String> = CopyKind::ALL
            .iter()
            .zip(self.copies)
            .map(|(k, n)| format!("{n} {}", k.as_str()))
            .collect();
        Some(format!(
            "copies of a parent's conversation: {} (checked here by their own {} requests, {}; a sweep replays no copy and bills these to the parent as recorded); {} requests another log also holds, billed there only; {} requests completed from a copy's final usage",
            kinds.join(", "),
            self.requests,
            crate::format::money(self.usd),
            self.copied_requests,
            self.completed
        ))
    }
}

/// One request as the meter priced it (`crate::cost::session::Meter`): the
/// bill check's prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Metered {
    pub(crate) message_index: usize,
    pub(crate) tokens: Tokens,
    /// Its input side and its answer, in dollars.
    pub(crate) usd: f64,
    /// Whether it read the agent's fixed prompt another logged session kept
    /// warm.
    pub(crate) shared: bool,
}

impl SessionCheck {
    /// The check with its prediction: each request as the meter priced it
    /// in `items` (by answering message; a request the replay did not send
    /// is predicted at nothing).
    pub(crate) fn priced(mut self, items: &[Metered]) -> SessionCheck {
        let by: std::collections::HashMap<usize, &Metered> =
            items.iter().map(|m| (m.message_index, m)).collect();
        let mut predicted = Tokens::default();
        let mut usd = 0.0;
        let mut shared = 0;
        for d in &mut self.detail {
            let Some(m) = by.get(&d.message_index) else {
                continue;
            };
            d.predicted = m.tokens;
            d.predicted_usd = m.usd;
            predicted.add(&m.tokens);
            usd += m.usd;
            shared += usize::from(m.shared);
        }
        self.predicted = predicted;
        self.predicted_usd = usd;
        self.error = relative(usd, self.recorded_usd);
        self.shared_reads = shared;
        self
    }
}

/// A session to check: its label, `session.json` and transcript.
#[derive(Clone)]
pub(crate) struct Input<'a> {
    pub(crate) label: String,
    pub(crate) file: &'a SessionFile,
    pub(crate) messages: &'a [Arc<Message>],
    /// The messages in outline: all the account's reading needs of them.
    pub(crate) outline: &'a crate::transcript::outline::Outline,
    /// Tokens of the agent's fixed prompt (system prompt, tools), still
    /// cached after the agent compacts or rewrites its messages; `calibrate`
    /// takes it from its fit of the format (`overhead × ratio`).
    pub(crate) fixed_prefix: u64,
    /// Provider tokens per estimated token (bytes / 4) of the format, for
    /// the size of what a compaction agent adds to its parent's context.
    pub(crate) ratio: f64,
    /// What the log measured of each message, and the agent's own run: what
    /// the `recorded` replay that predicts the session is made of.
    pub(crate) measured: Option<&'a crate::transcript::measured::Measured>,
    pub(crate) run: Option<&'a std::sync::Arc<crate::transcript::measured::AgentRun>>,
}

/// (x − truth) / truth; 0 when both are 0.
pub(crate) fn relative(x: f64, truth: f64) -> f64 {
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

/// What a request can show about the account's unlogged cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Chance {
    /// Its own cache cold, no logged session keeping the fixed prompt warm.
    ColdUnshared,
    /// Warm by the log, after an idle gap of this [`gap_bucket`], with
    /// the tokens of its warm prefix past the fixed prompt.
    Warm { bucket: usize, at_risk: u64 },
}
