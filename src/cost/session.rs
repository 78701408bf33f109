//! A replayed session priced with the bill check's model rather than the
//! flat price: each request of the replay at its model's prices, the cache
//! going cold when the gap before a request exceeds the lifetime, writes in
//! the session's lifetime tier, nothing cached below the minimum prefix,
//! output tokens, and every `summarize` as a request of its own.
//!
//! Where the times come from: an imported session's `session.json` records
//! when each request was answered (`request_records`), keyed by the index of
//! the answering assistant message, which the replay keeps (a replay sends
//! the same requests, only compacted). smith's own `transcript.jsonl` has no
//! times, so its sessions are priced without expiry and [`Priced::ttl_applied`]
//! says so.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::table::{default_model, model_price, ModelPrice};
use super::{CacheTtl, TOKENS_PER_PRICE_UNIT};
use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Compactor, Stage, Strategy};
use crate::import::SessionFile;
use crate::replay::{replay_with, SessionFacts};
use crate::time::parse_rfc3339;
use crate::transcript::Message;

/// How to price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Settings {
    /// `None`: the tier the session's records show, else five minutes.
    pub ttl: Option<CacheTtl>,
    /// `None`: the model's, from the table.
    pub min_cacheable: Option<u64>,
}

/// What a session's records say about its requests.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// Per answering message: time, model, output tokens.
    by_message: HashMap<usize, (Option<i64>, Option<String>, u64)>,
    model: Option<String>,
    /// The lifetime most cache-write tokens went to.
    tier: Option<CacheTtl>,
}

impl Recorded {
    /// From an imported session's `session.json`.
    pub fn from_file(file: &SessionFile) -> Recorded {
        let mut by_message = HashMap::new();
        let (mut w5, mut w1) = (0u64, 0u64);
        for r in &file.requests {
            let rec = file
                .request_records
                .iter()
                .find(|x| x.message_index == r.message_index);
            let t = rec
                .and_then(|x| x.timestamp.as_deref())
                .and_then(parse_rfc3339);
            w5 += rec.and_then(|x| x.cache_write_5m).unwrap_or(0);
            w1 += rec.and_then(|x| x.cache_write_1h).unwrap_or(0);
            by_message.insert(r.message_index, (t, r.model.clone(), r.output_tokens));
        }
        Recorded {
            by_message,
            model: file.model.clone(),
            tier: if w1 > w5 {
                Some(CacheTtl::OneHour)
            } else if w5 > 0 {
                Some(CacheTtl::FiveMinutes)
            } else {
                None
            },
        }
    }
}

impl Recorded {
    /// When the request answered by message `index` was answered.
    pub fn time_of(&self, index: usize) -> Option<i64> {
        self.by_message.get(&index).and_then(|x| x.0)
    }

    /// The cache lifetime most of the session's writes went to, if the
    /// records say.
    pub fn tier(&self) -> Option<CacheTtl> {
        self.tier
    }
}

/// A replay's price under the model, with its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Priced {
    /// Everything: the requests and the summarizer's.
    pub price: f64,
    /// The summarizer's requests alone.
    pub summarizer: f64,
    /// Output tokens alone.
    pub output: f64,
    /// Requests whose cache had expired.
    pub expired: u64,
    /// Whether times were known, so the lifetime could apply.
    pub ttl_applied: bool,
}

fn dollars(tokens: i64, price: f64) -> f64 {
    tokens.max(0) as f64 * price / TOKENS_PER_PRICE_UNIT
}

/// Replays `messages` under `engine` and prices each request; `recorded` is
/// what the session's records say (`None` for a smith session), and
/// `summary_tokens` the size of the summary a `summarize` asks for.
pub fn price_replay(
    messages: &[Arc<Message>],
    engine: &dyn Compactor,
    recorded: Option<&Recorded>,
    summary_tokens: u64,
    settings: &Settings,
) -> (SessionFacts, Priced) {
    let fallback = recorded.and_then(|r| r.model.clone());
    let tier = settings
        .ttl
        .or_else(|| recorded.and_then(|r| r.tier))
        .unwrap_or(CacheTtl::FiveMinutes);
    let mut priced = Priced::default();
    let mut last: Option<i64> = None;
    let budget = engine.budget();
    let facts = replay_with(messages, engine, |r, _, _| {
        let (t, model, output) = match recorded.and_then(|x| x.by_message.get(&r.message_index)) {
            Some((t, m, o)) => (*t, m.clone().or_else(|| fallback.clone()), Some(*o)),
            None => (None, fallback.clone(), None),
        };
        let row: &ModelPrice = model
            .as_deref()
            .and_then(model_price)
            .unwrap_or_else(default_model);
        let min = settings.min_cacheable.unwrap_or(row.min_cacheable) as i64;
        let (mut read, mut write) = (r.cache_read, r.cache_write);
        if let (Some(s), Some(a), Some(b)) = (tier.seconds(), last, t) {
            priced.ttl_applied = true;
            if b - a > s {
                write += read;
                read = 0;
                priced.expired += 1;
            }
        }
        if t.is_some() {
            last = t;
        }
        let write_price = match tier {
            CacheTtl::OneHour => row.cache_write_1h,
            _ => row.cache_write_5m,
        };
        let mut cost = if r.after < min {
            dollars(r.after, row.input)
        } else {
            dollars(read, row.cache_read) + dollars(write, write_price)
        };
        // The answer: recorded, else the answering message's estimate.
        let out = output.map_or_else(
            || {
                messages
                    .get(r.message_index)
                    .map_or(0, |m| m.bytes() / BYTES_PER_TOKEN) as i64
            },
            |o| o as i64,
        );
        let out_cost = dollars(out, row.output);
        priced.output += out_cost;
        cost += out_cost;
        if r.strategy == Strategy::Summarized {
            // The summarizer reads the turns it replaces, uncached, and
            // writes the summary.
            let replaced = r.effects.reclaimed[Stage::Summarize.index()] + summary_tokens as i64;
            let s = dollars(budget.charged(replaced.max(0) as u64), row.input)
                + dollars(summary_tokens as i64, row.output);
            priced.summarizer += s;
            cost += s;
        }
        priced.price += cost;
        true
    });
    (facts, priced)
}
