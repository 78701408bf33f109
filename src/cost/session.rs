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

use super::table::{
    default_model, default_row, lookup_noted, ModelPrice, MODEL_PRICES, WRITE_1H_MULTIPLIER,
};
use super::{CacheTtl, Prices, TOKENS_PER_PRICE_UNIT};
use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Compactor, Stage, Strategy};
use crate::replay::{replay_with, ModelCost, Refetch, RequestFacts, SessionFacts};
use crate::time::parse_rfc3339;
use crate::transcript::session_file::SessionFile;
use crate::transcript::Message;

/// How to price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Settings {
    /// `None`: the tier the session's records show, else five minutes.
    pub ttl: Option<CacheTtl>,
    /// `None`: the model's, from the table, for an imported session (1024
    /// where the model is unknown); none for smith's own sessions, so that
    /// their price stays the flat price of the sums.
    pub min_cacheable: Option<u64>,
    /// `--price`: these input, cache-write (five-minute) and cache-read
    /// prices for every request instead of its model's row; the one-hour
    /// write is then [`WRITE_1H_MULTIPLIER`] × input, the output the row's.
    pub prices: Option<Prices>,
}

impl Settings {
    /// The settings as one line, for the sweep's journal and outputs.
    pub fn describe(&self) -> String {
        format!(
            "cache-ttl {}, cache-min-tokens {}, price {}",
            self.ttl.map_or("auto".into(), |t| t.to_string()),
            self.min_cacheable
                .map_or("per model".into(), |m| m.to_string()),
            self.prices.map_or("per model".into(), |p| format!(
                "{},{},{}",
                p.input, p.cache_write, p.cache_read
            )),
        )
    }
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
    /// What an imported session's `session.json` records; `None` for a
    /// session without one (smith's own).
    pub fn of_session(session: &crate::transcript::Session) -> Option<Recorded> {
        let raw = session.meta.as_ref()?.raw.as_ref()?;
        SessionFile::from_meta(raw).map(|f| Recorded::from_file(&f))
    }

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
    /// Everything: the requests, their output and the summarizer's.
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

/// Tokens of the requests priced at one model row: summed per row and
/// priced once at the end, so that a session of one model with nothing
/// expired costs exactly [`Prices::cached`] of its sums, as the flat model
/// priced it.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    read: i64,
    write: i64,
    /// Below the minimum cacheable prefix: plain input.
    plain: i64,
    sent: i64,
}

/// Prices a replay request by request, as the replay reports them: built
/// per session and engine, fed every [`RequestFacts`], finished into the
/// [`ModelCost`] the sweep stores.
pub struct Meter<'a> {
    messages: &'a [Arc<Message>],
    recorded: Option<&'a Recorded>,
    budget: Budget,
    summary_tokens: u64,
    settings: Settings,
    tier: CacheTtl,
    /// Per row of [`MODEL_PRICES`] and rate (slot `2 × row`: the row's
    /// own rates, `2 × row + 1`: its long-context rates).
    buckets: Vec<(usize, Bucket)>,
    last: Option<i64>,
    cost: ModelCost,
    /// The model last looked up in the price table, and its row.
    looked_up: Option<(&'a str, usize)>,
    /// The row of the last request, which prices the expected re-fetches.
    last_row: Option<usize>,
}

impl<'a> Meter<'a> {
    /// A meter for one replay of `messages` under an engine of `budget`.
    pub fn new(
        messages: &'a [Arc<Message>],
        recorded: Option<&'a Recorded>,
        budget: Budget,
        summary_tokens: u64,
        settings: &Settings,
    ) -> Meter<'a> {
        let tier = settings
            .ttl
            .or_else(|| recorded.and_then(|r| r.tier))
            .unwrap_or(CacheTtl::FiveMinutes);
        Meter {
            messages,
            recorded,
            budget,
            summary_tokens,
            settings: *settings,
            tier,
            buckets: Vec::new(),
            last: None,
            cost: ModelCost::default(),
            looked_up: None,
            last_row: None,
        }
    }

    /// The row of `model` in [`MODEL_PRICES`] (the nearest family's for
    /// a model the table does not name, said once on stderr), looked up
    /// again only when the model changes (a session keeps one for long
    /// runs of requests, and a sweep meters every request once per config).
    fn row_of(&mut self, model: &'a str) -> usize {
        match self.looked_up {
            Some((last, row)) if last == model => row,
            _ => {
                let row = lookup_noted(model).row;
                self.looked_up = Some((model, row));
                row
            }
        }
    }

    /// The prices of `row` under the settings: `--price` overrides the
    /// input side.
    fn prices_of(&self, row: &ModelPrice) -> (Prices, f64) {
        let base = self.settings.prices.unwrap_or_else(|| row.prices());
        let write_1h = match self.settings.prices {
            Some(p) => p.input * WRITE_1H_MULTIPLIER,
            None => row.cache_write_1h,
        };
        let prices = match self.tier {
            CacheTtl::OneHour => Prices {
                cache_write: write_1h,
                ..base
            },
            _ => base,
        };
        (prices, row.output)
    }

    /// Folds one request in.
    pub fn observe(&mut self, r: &RequestFacts) {
        let fallback = self.recorded.and_then(|x| x.model.as_deref());
        let (t, model, output) = match self
            .recorded
            .and_then(|x| x.by_message.get(&r.message_index))
        {
            Some((t, m, o)) => (*t, m.as_deref().or(fallback), Some(*o)),
            None => (None, fallback, None),
        };
        let row_at = model.map_or_else(default_row, |m| self.row_of(m));
        self.last_row = Some(row_at);
        let base = &MODEL_PRICES[row_at];
        // An imported session's request above the long-context threshold
        // is billed at the higher rates; smith's own sessions and `--price`
        // keep the flat price of the sums.
        let long = self.recorded.is_some()
            && self.settings.prices.is_none()
            && base.is_long(r.after.max(0) as u64);
        let slot = 2 * row_at + usize::from(long);
        let long_row;
        let row = if long {
            long_row = base.at(u64::MAX);
            &long_row
        } else {
            base
        };
        // An imported session takes its model's minimum (1024 where the
        // table does not know the model); smith's own sessions, which record
        // no model, have none unless one is given, so that their price stays
        // the flat price of the sums.
        let min = self
            .settings
            .min_cacheable
            .or(self.recorded.map(|_| row.min_cacheable))
            .unwrap_or(0) as i64;
        let (mut read, mut write) = (r.cache_read, r.cache_write);
        if let (Some(s), Some(a), Some(b)) = (self.tier.seconds(), self.last, t) {
            self.cost.ttl_applied = true;
            if b - a > s {
                write += read;
                read = 0;
                self.cost.expired += 1;
            }
        }
        if t.is_some() {
            self.last = t;
        }
        let bucket = match self.buckets.iter().position(|(s, _)| *s == slot) {
            Some(i) => &mut self.buckets[i].1,
            None => {
                self.buckets.push((slot, Bucket::default()));
                &mut self.buckets.last_mut().expect("just pushed").1
            }
        };
        bucket.sent += r.after;
        if r.after < min {
            bucket.plain += r.after;
        } else {
            bucket.read += read;
            bucket.write += write;
            if self.tier == CacheTtl::OneHour {
                self.cost.cache_write_1h += write;
            }
        }
        let (_, output_price) = self.prices_of(row);
        // The answer: recorded, else the answering message's estimate.
        let out = output.map_or_else(
            || {
                self.messages
                    .get(r.message_index)
                    .map_or(0, |m| m.bytes() / BYTES_PER_TOKEN) as i64
            },
            |o| o as i64,
        );
        self.cost.output_tokens += out.max(0) as u64;
        self.cost.price_output += dollars(out, output_price);
        if r.strategy == Strategy::Summarized {
            // The summarizer reads the turns it replaces, uncached, and
            // writes the summary.
            let input = self.settings.prices.map_or(row.input, |p| p.input);
            let replaced =
                r.effects.reclaimed[Stage::Summarize.index()] + self.summary_tokens as i64;
            let budget = r.ratio.map_or(self.budget, |x| self.budget.at_ratio(x));
            self.cost.price_summarizer += dollars(budget.charged(replaced.max(0) as u64), input)
                + dollars(self.summary_tokens as i64, output_price);
        }
    }

    /// The replay's figures, with `refetch` (the loss measure's expected
    /// re-fetches, known once the replay is over) priced at the last
    /// request's row.
    pub fn finish_with(self, refetch: &Refetch) -> ModelCost {
        let row = self
            .last_row
            .and_then(|i| MODEL_PRICES.get(i))
            .unwrap_or_else(default_model);
        let (prices, output) = self.prices_of(row);
        let price_refetch = refetch_dollars(refetch, &prices, Some(output));
        ModelCost {
            price_refetch,
            ..self.finish()
        }
    }

    /// The replay's figures.
    pub fn finish(mut self) -> ModelCost {
        for (slot, b) in &self.buckets {
            let base = MODEL_PRICES.get(slot / 2).unwrap_or_else(default_model);
            let row = if slot % 2 == 1 {
                base.at(u64::MAX)
            } else {
                *base
            };
            let (p, _) = self.prices_of(&row);
            self.cost.price += p.cached(b.read, b.write) + p.uncached(b.plain);
            self.cost.price_uncached += p.uncached(b.sent);
        }
        self.cost
    }
}

/// What `refetch` costs at `prices` (cache read and write) and `output`
/// per million output tokens (the default model's where not given).
pub fn refetch_dollars(refetch: &Refetch, prices: &Prices, output: Option<f64>) -> f64 {
    let output = output.unwrap_or(default_model().output);
    (refetch.read_tokens * prices.cache_read
        + refetch.write_tokens * prices.cache_write
        + refetch.output_tokens * output)
        / TOKENS_PER_PRICE_UNIT
}

impl Priced {
    fn from_cost(c: &ModelCost) -> Priced {
        Priced {
            price: c.price + c.price_output + c.price_summarizer,
            summarizer: c.price_summarizer,
            output: c.price_output,
            expired: c.expired,
            ttl_applied: c.ttl_applied,
        }
    }
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
    let mut meter = Meter::new(
        messages,
        recorded,
        *engine.budget(),
        summary_tokens,
        settings,
    );
    let facts = replay_with(messages, engine, |r, _, _| {
        meter.observe(r);
        true
    });
    let cost = meter.finish();
    (facts, Priced::from_cost(&cost))
}
