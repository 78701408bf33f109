//! The `usage` a generated `session.json` records: what smith would have
//! been billed for the session, request by request, so that `calibrate`'s
//! check of smith's recorded usage (`crate::calibrate::usage`) has totals
//! whose ratio and overhead are known.
//!
//! Each request is smith's engine at its defaults, charged at the
//! provider's [`known_ratio`] and [`KNOWN_OVERHEAD`]: what it sends, what a
//! prompt cache serves of it and what is written. The providers split it as
//! smith's clients record it: Anthropic (and OpenRouter to Anthropic's
//! models) report the cache apart and the uncached remainder as prompt
//! tokens; the others report the whole prompt, cached tokens inside it.

use std::sync::Arc;

use super::session::{Profile, Usage};
use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Config, Engine};
use crate::transcript::{Message, Role};

/// Tokens of every generated request that are not history: a system
/// prompt and tool definitions of smith's size.
pub(crate) const KNOWN_OVERHEAD: u64 = 2_400;

/// The provider tokens per bytes / 4 token each generated session is billed
/// at: near what the fits find on real logs (Claude 1.31, GPT 1.21).
pub(crate) fn known_ratio(profile: &Profile) -> f64 {
    known_ratio_of(&profile.provider, &profile.model)
}

/// [`known_ratio`] of a session by what its `session.json` names.
pub(crate) fn known_ratio_of(provider: &str, model: &str) -> f64 {
    match provider {
        "anthropic" => 1.3,
        "openrouter" if model.starts_with("anthropic/") => 1.3,
        "openrouter" => 1.25,
        "openai" => 1.2,
        _ => 1.1,
    }
}

/// Whether the provider's client records the cache apart.
fn splits_cache(profile: &Profile) -> bool {
    profile.provider == "anthropic"
        || (profile.provider == "openrouter" && profile.model.starts_with("anthropic/"))
}

/// The prompt tokens of a request after the last cache breakpoint, which
/// Anthropic reports as input: at most this many of what was written.
const UNCACHED_TAIL: i64 = 400;

/// The usage of `messages` billed as [`known_ratio`] and
/// [`KNOWN_OVERHEAD`] say.
pub(crate) fn replayed(messages: &[Arc<Message>], profile: &Profile) -> Usage {
    let engine = Engine::new(Config {
        ratio: known_ratio(profile),
        overhead_tokens: KNOWN_OVERHEAD,
        ..Config::default()
    });
    let mut usage = Usage::default();
    let split = splits_cache(profile);
    crate::replay::replay_with(messages, &engine, |r, _, _| {
        let (read, write) = (r.cache_read.max(0), r.cache_write.max(0));
        if split {
            let uncached = write.min(UNCACHED_TAIL);
            usage.prompt_tokens += uncached as u64;
            usage.cache_creation_tokens += (write - uncached) as u64;
            usage.cache_read_tokens += read as u64;
        } else {
            usage.prompt_tokens += (read + write) as u64;
        }
        true
    });
    usage.completion_tokens = messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.bytes() / BYTES_PER_TOKEN)
        .sum();
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    usage
}
