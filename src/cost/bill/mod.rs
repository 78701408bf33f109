//! The bill check's reading of the logs: what each request of an imported
//! session recorded, what made its cache cold, the cause of each recorded
//! miss, and what the account's sessions show of one another's cache. The
//! prediction the check holds against the record is not made here: it is
//! the `recorded` replay's, priced by the same meter as every config of a
//! sweep (`crate::cost::session::Meter`, `crate::calibrate::recorded`),
//! from the views of the account read here ([`read`]).
//!
//! The recorded prompt size of each request (input + cache read + cache
//! write) is the ground truth for the context, the agent's own compactions
//! included; what decides the bill is how that prompt splits between cache
//! reads, cache writes and plain input:
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

mod account;
mod parts;
mod recorded;
mod summary;
mod timeline;
mod types;
pub(crate) mod unlogged;
mod walk;

pub(crate) use account::{accounts, fit, read, read_fitted};
pub(crate) use parts::{Part, PartError, Parts};
pub(crate) use recorded::{own_recorded_dollars, recorded_dollars, rewrites_prompt_at};
pub(crate) use recorded::{request_dollars, side_priced};
pub(crate) use summary::*;
pub(crate) use types::*;
#[cfg(test)]
pub(crate) use walk::fit_fixed_prefix;
