//! What one session can find in the cache from the others: the account's
//! timeline of fixed prompts, and a compaction agent's parent.

use std::collections::HashMap;

use super::recorded::{model_of, record_of, tier_of, time_of};
use super::types::{Input, Kind, Settings};
use crate::cost::CacheTtl;
use crate::transcript::session_file::SessionFile;

/// The cache entry a model's last request left.
#[derive(Clone, Copy)]
pub(super) struct Warm {
    pub(super) prompt: u64,
    pub(super) at: Option<i64>,
    pub(super) ttl: CacheTtl,
}

impl Warm {
    pub(super) fn expired_at(&self, t: Option<i64>) -> bool {
        match (self.ttl.seconds(), self.at, t) {
            (Some(s), Some(a), Some(b)) => b - a > s,
            _ => false,
        }
    }
}

/// The parent context a compaction agent's first request can read: the
/// prompt of the parent's last request of `model` at or before `t`, if its
/// cache is still warm.
pub(super) fn parent_prefix(
    parent: &Input,
    model: &str,
    t: Option<i64>,
    settings: &Settings,
) -> u64 {
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
            best = Some((at, r.prompt_tokens(), settings.lifetime(tier)));
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
pub(crate) type PromptKey = (Kind, String);

/// The key of a session's requests of `model`.
pub(super) fn prompt_key(file: &SessionFile, model: &str) -> PromptKey {
    (Kind::of(file).prompt(), model.to_string())
}

/// The account's timeline: when each session sent a request with each
/// fixed prompt, sorted by time.
#[derive(Default)]
pub(crate) struct Timeline {
    times: HashMap<PromptKey, Vec<(i64, usize)>>,
}

impl Timeline {
    /// The requests of `inputs` (session `k` is `inputs[k]`).
    pub(crate) fn new(inputs: &[Input]) -> Timeline {
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
pub(crate) struct Shared<'a> {
    /// The session's parent, when the check has it.
    pub(crate) parent: Option<&'a Input<'a>>,
    /// The account's timeline; `None`: the session is priced alone.
    pub(crate) timeline: Option<&'a Timeline>,
    /// The session's position on the timeline.
    pub(crate) me: usize,
    /// The agent's fixed prompt in tokens, as fitted from the recorded
    /// reads of sessions of its kind (see [`fit_fixed_prefix`]); `None`:
    /// the input's own.
    pub(crate) fixed_prefix: Option<u64>,
    /// How many requests of the account's log read exactly so many tokens
    /// from the cache, per length: the evidence of [`Cause::EarlyEviction`].
    pub(crate) cached_lengths: Option<&'a HashMap<u64, usize>>,
}

impl Shared<'_> {
    /// Whether a request that read `read` tokens read a prefix the account's
    /// log shows cached at that exact length by another request.
    pub(super) fn read_a_cached_length(&self, read: u64) -> bool {
        read > 0
            && self
                .cached_lengths
                .and_then(|c| c.get(&read))
                .is_some_and(|n| *n >= 2)
    }

    /// Whether another session kept the fixed prompt of `file`'s requests
    /// of `model` cached at `t`.
    pub(super) fn fixed_prompt_warm(
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
