//! One session's log read request by request: the recorded split of each
//! prompt, what made a cache cold, the cause of each recorded miss and what
//! a request shows of the account's cache beyond the log. Nothing here is
//! priced as predicted: the recorded replay's meter predicts every request
//! (`crate::cost::session::Meter`, `crate::calibrate::recorded`), the same
//! meter every config of a sweep is priced by.

use std::collections::HashMap;

use super::parts::Part;
use super::recorded::{
    model_of, record_of, recorded_split, rewritten, split_tokens, tier_of, time_of,
};
use super::timeline::{parent_prefix, Shared, Warm};
use super::types::{
    relative, Cause, Chance, Input, Kind, RequestCheck, SessionCheck, Settings, SideTotal, Tokens,
};
use super::unlogged::gap_bucket;
use crate::cost::table::{lookup, price_for, ModelPrice};
use crate::cost::CacheTtl;
use crate::stats::median_of;
use crate::time::parse_rfc3339;
use crate::transcript::session_file::{RequestUsage, SessionFile};

/// Estimated tokens (bytes / 4 × `ratio`) of the messages before the first
/// answer: what a compaction agent adds to its parent's context.
fn own_instruction(input: &Input) -> u64 {
    let bytes = input.outline.lead_bytes();
    let ratio = if input.ratio > 0.0 { input.ratio } else { 1.0 };
    (bytes as f64 / crate::engine::constants::BYTES_PER_TOKEN as f64 * ratio).round() as u64
}

/// The agent's fixed prompt as the recorded usage shows it: the median
/// cache read of requests that read something but less than half the
/// previous prompt (after a compaction or a rewrite only the fixed prompt
/// is still cached) and of first requests that read something (another
/// session cached it). `None` when no request shows it.
pub(crate) fn fit_fixed_prefix(files: &[&SessionFile]) -> Option<u64> {
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
    settings: &Settings,
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
    } else if settings.has(Part::CompactionCause)
        && input
            .file
            .full_compactions()
            .any(|b| b.message_index > from && b.message_index <= r.message_index)
    {
        Some(Cause::AgentCompaction)
    } else if settings.has(Part::RewriteCause) && rewritten(input, from + 1, r.message_index) {
        Some(Cause::HarnessRewrite)
    } else {
        None
    }
}

/// What a compaction agent's first request finds cached, as the log
/// shows it before the request is sent: the context its parent sent last
/// within the lifetime (else all of its prompt but its own instruction),
/// or the fixed prompt another session kept warm where that is more; in
/// whole cache blocks, nothing below the minimum `min`.
fn first_read(
    input: &Input,
    shared: &Shared,
    settings: &Settings,
    (prompt, min, block): (u64, u64, u64),
    model: &str,
    t: Option<i64>,
    warm_elsewhere: u64,
) -> u64 {
    let read = if settings.has(Part::ParentLinks) {
        let from_parent = match shared.parent {
            Some(p) => parent_prefix(p, model, t, settings),
            None => prompt.saturating_sub(own_instruction(input)),
        };
        from_parent.max(warm_elsewhere).min(prompt)
    } else {
        warm_elsewhere.min(prompt)
    };
    if read < min {
        0
    } else {
        read / block * block
    }
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

/// Reads one session's log against what the other sessions left in the
/// cache: every request's recorded split and causes, its prediction left
/// for the meter ([`SessionCheck::priced`]).
pub(crate) fn check_session(input: &Input, shared: &Shared, settings: &Settings) -> SessionCheck {
    let file = input.file;
    let mut warm: HashMap<String, Warm> = HashMap::new();
    let mut tier = settings.ttl.unwrap_or(CacheTtl::FiveMinutes);
    let mut prev: Option<(usize, u64)> = None;
    let mut walk = Walk::default();
    let started = file.created_at.as_deref().and_then(parse_rfc3339);
    let fixed_prefix = shared.fixed_prefix.unwrap_or(input.fixed_prefix);
    let kind = Kind::of(file);
    for (i, r) in file.requests.iter().enumerate() {
        let prompt = r.prompt_tokens();
        if prompt == 0 {
            continue;
        }
        let model = model_of(r, file);
        let row = price_for(file.provider.as_deref(), &model);
        if !lookup(&model).priced() && !walk.unpriced.contains(&model) {
            walk.unpriced.push(model.clone());
        }
        let rec = record_of(file, i, r);
        let t = time_of(rec);
        if let Some(x) = tier_of(rec) {
            tier = x;
        }
        let ttl = settings.lifetime(tier);
        let min = settings.min_cacheable.unwrap_or(row.min_cacheable);
        let here = warm.get(&model).copied();
        let cold = cold_cause(input, settings, prev, here, t, r);
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
        if prev.is_none() && kind == Kind::Compaction {
            let elsewhere = if logged_warm { fixed_prefix } else { 0 };
            let block = row.cache_block.max(1);
            walk.first_read = Some(first_read(
                input,
                shared,
                settings,
                (prompt, min, block),
                &model,
                t,
                elsewhere,
            ));
        }
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
        let split = recorded_split(r, rec, tier);
        let recorded = split_tokens(r, split);
        let timed = row.at_time(t);
        let price = timed.at(prompt);
        // Another log's request, copied into this one, kept the cache warm
        // but is billed there.
        let own = !rec.is_some_and(|x| x.copied);
        walk.detail.extend(own.then(|| RequestCheck {
            message_index: r.message_index,
            model: model.clone(),
            family: timed.family,
            long_context: timed.is_long(prompt),
            timestamp: rec.and_then(|x| x.timestamp.clone()),
            gap_seconds: gap,
            recorded_usd: recorded.dollars(&price),
            predicted_usd: 0.0,
            recorded,
            predicted: Tokens::default(),
            billed_usd: rec.and_then(|x| x.cost),
            cold,
            miss: miss_cause(r, row, prev, cold, shared),
            chance,
            account_warm,
        }));
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
    first_read: Option<u64>,
}

impl Walk {
    /// The session's check: its requests summed, the prediction left to
    /// the meter.
    fn finish(self, input: &Input, fixed_prefix: u64) -> SessionCheck {
        let file = input.file;
        let mut recorded = Tokens::default();
        let mut recorded_usd = 0.0;
        for d in &self.detail {
            recorded.add(&d.recorded);
            recorded_usd += d.recorded_usd;
        }
        // The requests its copies made on their own, charged as recorded
        // here and by the meter alike.
        let mut side = SideTotal::default();
        let mut copies = std::collections::HashSet::new();
        for s in &file.side_requests {
            let (tokens, price) = super::recorded::side_priced(file, s);
            side.requests += 1;
            side.tokens.add(&tokens);
            side.usd += tokens.dollars(&price);
            if copies.insert(&s.from) {
                side.copies[s.kind as usize] += 1;
            }
        }
        side.copied_requests = file.request_records.iter().filter(|r| r.copied).count();
        side.completed = file.request_records.iter().filter(|r| r.completed).count();

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
            first_read: self.first_read,
            recorded,
            predicted: Tokens::default(),
            recorded_usd,
            predicted_usd: 0.0,
            error: relative(0.0, recorded_usd),
            billed_usd,
            unpriced_models: self.unpriced,
            shared_reads: 0,
            side_requests: side,
            detail,
        }
    }
}
