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
//!
//! Which prices: an imported session's requests name their models; smith's
//! own `session.json` names the provider and model of the whole session
//! ([`Recorded::of_smith`]), priced through [`price_for`]: Anthropic's rows
//! with their explicit caching, OpenAI's automatic caching (cached input at
//! the model's discount, no write premium, from the minimum prefix in whole
//! increments), OpenRouter at the routed model's row (smith marks nothing
//! for caching there, [`Recorded::caches_at`]), Ollama free. Only a session
//! that names neither is priced at the default row.

use std::sync::Arc;

use serde::Serialize;

mod recorded;
pub use recorded::Recorded;
pub(crate) use recorded::{prices_named, SmithPrices};

use super::bill::{Metered, Part, Parts, Tokens};
use super::table::{default_model, CacheKind, ModelPrice, WRITE_1H_MULTIPLIER};
use super::{CacheTtl, Prices, TOKENS_PER_PRICE_UNIT};
use crate::engine::constants::BYTES_PER_TOKEN;
use crate::engine::{Budget, Compactor, Stage, Strategy, Withheld};
use crate::replay::{replay_with, ModelCost, Refetch, RequestFacts, SessionFacts};
use crate::transcript::session_file::CopyKind;
use crate::transcript::Message;

/// How to price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Settings {
    /// `None`: the tier the session's records show, else five minutes.
    pub ttl: Option<CacheTtl>,
    /// `None`: the model's, from the table, for an imported session (1024
    /// where the model is unknown); none for smith's own sessions, so that
    /// their price stays the flat price of the sums.
    pub(crate) min_cacheable: Option<u64>,
    /// `--price`: these input, cache-write (five-minute) and cache-read
    /// prices for every request instead of its model's row; the one-hour
    /// write is then [`WRITE_1H_MULTIPLIER`] × input, the output the row's.
    pub prices: Option<Prices>,
    /// The optional parts of the price model that are on
    /// (`--per-session-cache`, `--log-alone` and `--part` switch them).
    pub(crate) parts: Parts,
}

impl Settings {
    /// Each session with a cache of its own.
    fn per_session(&self) -> bool {
        !self.parts.on(Part::SharedCache)
    }

    /// No share of the account's cache beyond the logs.
    fn log_alone(&self) -> bool {
        !self.parts.on(Part::ColdReadShare) && !self.parts.on(Part::EvictionShare)
    }

    /// What of these settings the bill check prices by.
    pub(crate) fn bill(&self) -> crate::cost::bill::Settings {
        crate::cost::bill::Settings {
            ttl: self.ttl,
            min_cacheable: self.min_cacheable,
            parts: self.parts,
        }
    }

    /// The settings as one line, for the sweep's journal and outputs.
    pub(crate) fn describe(&self) -> String {
        format!(
            "cache-ttl {}, cache-min-tokens {}, price {}, per-session-cache {}, log-alone {}{}",
            self.ttl.map_or("auto".into(), |t| t.to_string()),
            self.min_cacheable
                .map_or("per model".into(), |m| m.to_string()),
            self.prices.map_or("per model".into(), |p| format!(
                "{},{},{}",
                p.input, p.cache_write, p.cache_read
            )),
            on_off(self.per_session()),
            on_off(self.log_alone()),
            self.parts_changed(),
        )
    }

    /// How the imported sessions of a run share their account's cache, in
    /// words.
    pub(crate) fn cache_scope(&self) -> &'static str {
        match (self.per_session(), self.log_alone()) {
            (false, false) => {
                "on one account's timeline, with the shares of its cache beyond the logs"
            }
            (false, true) => "on one account's timeline, by the logs alone",
            (true, false) => "each alone, with the shares of the account's cache beyond the logs",
            (true, true) => "each alone, by the logs alone",
        }
    }
}

impl Settings {
    /// The parts `--per-session-cache` and `--log-alone` do not name that
    /// differ from their defaults, as `, parts a=off b=on`.
    fn parts_changed(&self) -> String {
        let named = [Part::SharedCache, Part::ColdReadShare, Part::EvictionShare];
        let others: Vec<String> = Part::ALL
            .into_iter()
            .filter(|p| !named.contains(p) && self.parts.on(*p) != Parts::default_on(*p))
            .map(|p| format!("{}={}", p.as_str(), on_off(self.parts.on(p))))
            .collect();
        if others.is_empty() {
            String::new()
        } else {
            format!(", parts {}", others.join(" "))
        }
    }
}

fn on_off(flag: bool) -> &'static str {
    if flag {
        "on"
    } else {
        "off"
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
    pub(crate) output: f64,
    /// Requests whose cache had expired.
    pub expired: u64,
    /// Whether times were known, so the lifetime could apply.
    pub(crate) ttl_applied: bool,
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
    /// Written in the meter's tier, and in the other one where a request's
    /// record shows its writes going there.
    write: i64,
    write_other: i64,
    /// Below the minimum cacheable prefix: plain input.
    plain: i64,
    sent: i64,
}

/// Prices a replay request by request, as the replay reports them: built
/// per session and engine, fed every [`RequestFacts`], finished into the
/// [`ModelCost`] the sweep stores.
pub(crate) struct Meter<'a> {
    messages: &'a [Arc<Message>],
    recorded: Option<&'a Recorded>,
    budget: Budget,
    summary_tokens: u64,
    settings: Settings,
    /// The tier writes go to, and the lifetime a cache keeps them: the
    /// session's tier unless [`Part::LifetimeTier`] is off.
    tier: CacheTtl,
    lifetime: CacheTtl,
    /// Each request's predicted split and price, when asked for
    /// ([`Meter::itemized`]): the bill check's per-request figures.
    items: Option<Vec<Metered>>,
    /// Per row of the price table and tier of its rates
    /// ([`ModelPrice::tier`]: 0 for the row's own).
    buckets: Vec<(&'static ModelPrice, usize, Bucket)>,
    /// Per model family: when its last request was answered and the real
    /// tokens it sent. Each model has a cache of its own: a request finds
    /// only what the last request of its model left.
    warm: Vec<(&'static str, Option<i64>, i64)>,
    /// Whether a summary the replay wrote is priced as the summarizer's
    /// request: not for the agent's own run, whose summarizer's requests
    /// are sessions of their own in its log.
    summarizer: bool,
    /// The message answering the previous request.
    prev_index: Option<usize>,
    cost: ModelCost,
    /// The model last looked up in the price table, and its row.
    looked_up: Option<(Option<&'a str>, &'static ModelPrice)>,
    /// The row of the last request, which prices the expected re-fetches.
    last_row: Option<&'static ModelPrice>,
}

impl<'a> Meter<'a> {
    /// A meter for one replay of `messages` under an engine of `budget`.
    pub(crate) fn new(
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
        let lifetime = match settings.ttl {
            Some(t) => t,
            None if settings.parts.on(Part::LifetimeTier) => tier,
            None => CacheTtl::FiveMinutes,
        };
        Meter {
            messages,
            recorded,
            budget,
            summary_tokens,
            settings: *settings,
            tier,
            lifetime,
            items: None,
            buckets: Vec::new(),
            warm: Vec::new(),
            summarizer: true,
            prev_index: None,
            cost: ModelCost::default(),
            looked_up: None,
            last_row: None,
        }
    }

    /// The same meter pricing no summarizer: for the agent's own run.
    pub(crate) fn without_summarizer(self) -> Meter<'a> {
        Meter {
            summarizer: false,
            ..self
        }
    }

    /// The same meter keeping each request's split and price
    /// ([`Meter::finish_itemized`]).
    pub(crate) fn itemized(self) -> Meter<'a> {
        Meter {
            items: Some(Vec::new()),
            ..self
        }
    }

    /// The row a request of `model` is billed at ([`Recorded::row_for`]:
    /// through the session's provider, the nearest family's for a model the
    /// table does not name, said once on stderr), looked up again only when
    /// the model changes (a session keeps one for long runs of requests,
    /// and a sweep meters every request once per config).
    fn row_of(&mut self, model: Option<&'a str>) -> &'static ModelPrice {
        match self.looked_up {
            Some((last, row)) if last == model => row,
            _ => {
                let row = self
                    .recorded
                    .map_or_else(default_model, |r| r.row_for(model));
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

    /// The write price of the tier other than the meter's, at `row`.
    fn other_tier_price(&self, row: &ModelPrice) -> f64 {
        match (self.tier, self.settings.prices) {
            (CacheTtl::OneHour, Some(p)) => p.cache_write,
            (CacheTtl::OneHour, None) => row.cache_write_5m,
            (_, Some(p)) => p.input * WRITE_1H_MULTIPLIER,
            (_, None) => row.cache_write_1h,
        }
    }

    /// The budget request `r` was charged at: the engine's, at the ratio
    /// learned by then where it is learned.
    fn budget_of(&self, r: &RequestFacts) -> Budget {
        r.ratio.map_or(self.budget, |x| self.budget.at_ratio(x))
    }

    /// What the account's cache beyond the session changes in a request
    /// that would read `read` and write `write`, its own cache `cold` or
    /// warm after `gap` seconds: the tokens it reads instead of writing
    /// (fewer than none where an early eviction is expected).
    fn found_in_account(
        &self,
        r: &RequestFacts,
        read: i64,
        write: i64,
        cold: bool,
        gap: Option<i64>,
    ) -> i64 {
        let Some(account) = self.recorded.and_then(|x| x.account.as_deref()) else {
            return 0;
        };
        // The fixed prompt the account's sessions share, as the bill check
        // found it: what a cold request can find another session cached.
        let fixed = (account.fixed_prefix() as i64).clamp(0, read + write);
        let found = if cold && self.warm.is_empty() && account.first_read().is_some() {
            // A compaction agent's first request: the parent's context it
            // finds cached, as the bill check found it.
            (account
                .first_read()
                .unwrap_or(0)
                .min((read + write).max(0) as u64) as i64
                - read) as f64
        } else if cold {
            fixed as f64 * account.cold_read(r.message_index)
        } else {
            let at_risk = read - fixed.min(read);
            -(at_risk as f64 * gap.map_or(0.0, |g| account.evicted(g)))
        };
        found.round() as i64
    }

    /// What request `r`, answered at `t` and billed at `base` with the
    /// minimum cacheable prefix `min`, reads from the cache and writes to
    /// it, and of its reads those found in the account's cache beyond the
    /// session.
    fn cached(
        &mut self,
        r: &RequestFacts,
        base: &'static ModelPrice,
        t: Option<i64>,
        min: i64,
    ) -> (i64, i64, i64) {
        let (mut read, mut write) = (r.real_read, r.real_write);
        // After a summary the history is new from its start, and after the
        // harness rewrote the prompt too: what is still cached is the fixed
        // prompt, as the bill check finds it shared among the account's
        // sessions.
        let rewritten = match (self.recorded, self.prev_index) {
            _ if !self.settings.parts.on(Part::RewriteCause) => false,
            (Some(x), Some(p)) => {
                let next = x.rewrites.partition_point(|&i| i <= p);
                x.rewrites.get(next).is_some_and(|&i| i < r.message_index)
            }
            _ => false,
        };
        self.prev_index = Some(r.message_index);
        let compacted = self.settings.parts.on(Part::CompactionCause)
            && matches!(r.strategy, Strategy::Summarized | Strategy::Dropped);
        if rewritten || compacted {
            if let Some(a) = self.recorded.and_then(|x| x.account.as_deref()) {
                let kept = read.min(a.fixed_prefix() as i64);
                write += read - kept;
                read = kept;
            }
        }
        // A request reads at most what it sends: with the compaction's part
        // off, the prefix the replay carried across a summary is taken to
        // be still cached, as far as the request is long.
        let sent = r.real_after.max(0);
        if read > sent {
            write += read - sent;
            read = sent;
        }
        // The first request's cache is cold, and so is a model's whose
        // cache holds nothing yet; a model's cache holds at most what its
        // last request sent.
        let family = base.family;
        let here = self.warm.iter().position(|w| w.0 == family);
        let mut cold = self.warm.is_empty();
        match here {
            Some(i) => {
                let kept = read.min(self.warm[i].2);
                write += read - kept;
                read = kept;
            }
            None if !cold => {
                write += read;
                read = 0;
                cold = true;
            }
            None => {}
        }
        let last = here.and_then(|i| self.warm[i].1);
        if let (Some(s), Some(a), Some(b)) = (self.lifetime.seconds(), last, t) {
            self.cost.ttl_applied = true;
            if b - a > s {
                write += read;
                read = 0;
                self.cost.expired += 1;
                cold = true;
            }
        }
        let gap = last.zip(t).map(|(a, b)| b - a);
        let found = self.found_in_account(r, read, write, cold, gap);
        match here {
            Some(i) => {
                self.warm[i].1 = t.or(self.warm[i].1);
                self.warm[i].2 = r.real_after;
            }
            None => self.warm.push((family, t, r.real_after)),
        }
        read += found;
        write -= found;
        // An imported session's request reads nothing below the model's
        // minimum cacheable prefix (the provider caches no shorter one).
        let imported = self.recorded.is_some_and(|x| x.imported);
        if imported && read < min {
            write += read;
            read = 0;
        }
        if self.settings.prices.is_none() && (base.cache == CacheKind::Automatic || imported) {
            // Automatic caching serves a prefix in whole increments (and
            // an imported session's provider bills hits in its blocks,
            // Gemini's implicit caching too): the rest of it is sent again
            // at the input price.
            let block = base.cache_block.max(1) as i64;
            let served = read / block * block;
            write += read - served;
            read = served;
        }
        (read, write, found)
    }

    /// Folds one request in.
    pub(crate) fn observe(&mut self, r: &RequestFacts) {
        let fallback = self.recorded.and_then(|x| x.model.as_deref());
        let (t, model, output, share_1h) = match self
            .recorded
            .and_then(|x| x.by_message.get(&r.message_index))
        {
            Some((t, m, o, s)) => (*t, m.as_deref().or(fallback), Some(*o), *s),
            None => (None, fallback, None, None),
        };
        let base = self.row_of(model);
        // The rates of the hour it was sent, where the provider's change
        // with it; the cache is the model's whatever the hour.
        let timed = base.at_time(t);
        self.last_row = Some(timed);
        // A request of a session that names its model (imported, or smith's
        // own through `session.json`) is billed at the tier of its prompt's
        // length (a long context, Model Studio's steps); a session that
        // names nothing and `--price` keep the flat price of the sums.
        let band = if self.recorded.is_some() && self.settings.prices.is_none() {
            timed.tier(r.real_after.max(0) as u64)
        } else {
            0
        };
        let row = &timed.at_tier(band);
        // A session that names its model takes the model's minimum (the
        // nearest family's where the table does not know it); one that names
        // nothing has none unless one is given, so that its price stays the
        // flat price of the sums.
        let min = self
            .settings
            .min_cacheable
            .or(self.recorded.map(|_| row.min_cacheable))
            .unwrap_or(0) as i64;
        let (read, write, found) = self.cached(r, base, t, min);
        if self
            .recorded
            .is_some_and(|x| x.copied.contains(&r.message_index))
        {
            // Another log's request copied into this one (a fork's before
            // the fork): it warmed the cache, and is billed there.
            return;
        }
        let caches = self.recorded.is_none_or(|x| x.caches_at(base));
        let at = self
            .buckets
            .iter()
            .position(|(b, t, _)| b.family == timed.family && *t == band);
        let bucket = match at {
            Some(i) => &mut self.buckets[i].2,
            None => {
                self.buckets.push((timed, band, Bucket::default()));
                &mut self.buckets.last_mut().expect("just pushed").2
            }
        };
        bucket.sent += r.real_after;
        // (plain, read, written in the meter's tier, in the other one)
        let split = if r.real_after < min || !caches {
            bucket.plain += r.real_after;
            (r.real_after, 0, 0, 0)
        } else {
            // The writes go to the tier the request's record shows, else
            // the meter's.
            let other = match share_1h {
                Some(s) if self.tier == CacheTtl::OneHour => {
                    (write as f64 * (1.0 - s)).round() as i64
                }
                Some(s) => (write as f64 * s).round() as i64,
                None => 0,
            }
            .clamp(0, write.max(0));
            bucket.read += read;
            bucket.write += write - other;
            bucket.write_other += other;
            if found > 0 {
                self.cost.account_read += found;
            } else {
                self.cost.account_evicted -= found;
            }
            self.cost.cache_write_1h += if self.tier == CacheTtl::OneHour {
                write - other
            } else {
                other
            };
            (0, read, write - other, other)
        };
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
        if self.items.is_some() {
            let shared = found > 0
                && self
                    .recorded
                    .and_then(|x| x.account.as_deref())
                    .is_some_and(|a| a.warm_from_log(r.message_index));
            let item = self.item(r.message_index, row, split, out, shared);
            if let Some(items) = &mut self.items {
                items.push(item);
            }
        }
        self.summarize(r, row.input, output_price);
    }

    /// Folds in the summarizer's own request at request `r`, if it made
    /// one, at `input` (the row's, or `--price`'s) and `output_price`.
    fn summarize(&mut self, r: &RequestFacts, input: f64, output_price: f64) {
        let input = self.settings.prices.map_or(input, |p| p.input);
        if self.summarizer && r.strategy == Strategy::Summarized {
            // The summarizer reads the turns it replaces, uncached, and
            // writes the summary.
            let replaced =
                r.effects.reclaimed[Stage::Summarize.index()] + self.summary_tokens as i64;
            let budget = self.budget_of(r);
            self.cost.price_summarizer += dollars(budget.charged(replaced.max(0) as u64), input)
                + dollars(self.summary_tokens as i64, output_price);
        }
        if let (true, Some(Withheld::Discarded { read })) = (self.summarizer, r.withheld) {
            // A summary thrown away after the call was still written and
            // paid: the summarizer read the turns it would have replaced.
            let budget = self.budget_of(r);
            self.cost.price_summarizer += dollars(budget.charged(read), input)
                + dollars(self.summary_tokens as i64, output_price);
        }
    }

    /// Request `message`'s item: its `split` (plain, read, written in the
    /// meter's tier, in the other) and `out` answer tokens at `row`, priced
    /// as [`Meter::finish`] prices its row's sums.
    fn item(
        &self,
        message: usize,
        row: &ModelPrice,
        (plain, read, write, other): (i64, i64, i64, i64),
        out: i64,
        shared: bool,
    ) -> Metered {
        let (p, output_price) = self.prices_of(row);
        let usd = p.cached(read, write)
            + p.uncached(plain)
            + dollars(other, self.other_tier_price(row))
            + dollars(out, output_price);
        let (w5, w1) = match self.tier {
            CacheTtl::OneHour => (other, write),
            _ => (write, other),
        };
        let n = |x: i64| x.max(0) as u64;
        Metered {
            message_index: message,
            tokens: Tokens {
                input: n(plain),
                cache_read: n(read),
                cache_write_5m: n(w5),
                cache_write_1h: n(w1),
                output: n(out),
            },
            usd,
            shared,
        }
    }

    /// [`Meter::finish`], with each request's item (none unless
    /// [`Meter::itemized`]).
    pub(crate) fn finish_itemized(mut self) -> (ModelCost, Vec<Metered>) {
        let items = self.items.take().unwrap_or_default();
        (self.finish(), items)
    }

    /// The replay's figures, with `refetch` (the loss measure's expected
    /// re-fetches, known once the replay is over) priced at the last
    /// request's row.
    pub(crate) fn finish_with(self, refetch: &Refetch) -> ModelCost {
        let row = self.last_row.unwrap_or_else(default_model);
        let (prices, output) = self.prices_of(row);
        let price_refetch = refetch_dollars(refetch, &prices, Some(output));
        ModelCost {
            price_refetch,
            ..self.finish()
        }
    }

    /// The replay's figures.
    pub(crate) fn finish(mut self) -> ModelCost {
        self.charge_side_requests();
        for (base, band, b) in &self.buckets {
            let row = base.at_tier(*band);
            let (p, _) = self.prices_of(&row);
            self.cost.price += p.cached(b.read, b.write) + p.uncached(b.plain);
            if b.write_other > 0 {
                self.cost.price += dollars(b.write_other, self.other_tier_price(&row));
            }
            self.cost.price_uncached += p.uncached(b.sent);
        }
        self.cost
    }
}

impl Meter<'_> {
    /// Charges the requests the session's copies made on their own, as
    /// recorded: a side question is asked whatever the compaction, while
    /// the compaction agent's summary is the agent's own run's (smith's
    /// summarizer is priced where smith's engine summarizes).
    fn charge_side_requests(&mut self) {
        let Some(recorded) = self.recorded else {
            return;
        };
        for (kind, tokens, price) in &recorded.side {
            if *kind == CopyKind::Compaction && self.summarizer {
                continue;
            }
            let output = dollars(tokens.output as i64, price.output);
            self.cost.price += tokens.dollars(price) - output;
            self.cost.price_output += output;
            self.cost.output_tokens += tokens.output;
            let sent =
                tokens.input + tokens.cache_read + tokens.cache_write_5m + tokens.cache_write_1h;
            self.cost.price_uncached += dollars(sent as i64, price.input);
        }
    }
}

/// What `refetch` costs at `prices` (cache read and write) and `output`
/// per million output tokens (the default model's where not given).
pub(crate) fn refetch_dollars(refetch: &Refetch, prices: &Prices, output: Option<f64>) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::bill::unlogged::{AccountView, Expect};

    /// A request answered by message `index`, sending `after` tokens of
    /// which `read` are the previous request's prefix.
    fn request(index: usize, after: i64, read: i64) -> RequestFacts {
        RequestFacts {
            cache_read: read,
            cache_write: after - read,
            real_read: read,
            real_write: after - read,
            ..crate::replay::sent(index / 2, index, after)
        }
    }

    /// An imported Sonnet 4.5 session whose requests were answered by
    /// messages 1, 3, 5 at seconds 0, 30 and 600, its writes five-minute
    /// ones, priced with `account`.
    fn recorded(account: Option<AccountView>) -> Recorded {
        let by_message = [(1, 0), (3, 30), (5, 600)]
            .into_iter()
            .map(|(i, t)| (i, (Some(t), Some("claude-sonnet-4-5".to_string()), 0, None)))
            .collect();
        Recorded {
            by_message,
            imported: true,
            tier: Some(CacheTtl::FiveMinutes),
            account: account.map(Arc::new),
            ..Recorded::default()
        }
    }

    /// The reads and writes the meter priced, over three requests of
    /// 10,000, 12,000 and 14,000 tokens each reading the previous prompt,
    /// under an overhead (the fixed prompt) of 4,000 tokens.
    fn metered(account: Option<AccountView>) -> (i64, i64, u64) {
        let recorded = recorded(account);
        let config = crate::engine::Config {
            overhead_tokens: 4_000,
            ratio: 1.0,
            ..Default::default()
        };
        let mut meter = Meter::new(
            &[],
            Some(&recorded),
            Budget::new(&config),
            0,
            &Settings::default(),
        );
        for r in [
            request(1, 10_000, 0),
            request(3, 12_000, 10_000),
            request(5, 14_000, 12_000),
        ] {
            meter.observe(&r);
        }
        let b = meter.buckets[0].2;
        (b.read, b.write, meter.cost.expired)
    }

    #[test]
    fn alone_a_session_reads_nothing_cold_and_all_its_prefix_warm() {
        // The third request, ten minutes on, finds the cache expired.
        assert_eq!(metered(None), (10_000, 26_000, 1));
        assert_eq!(metered(Some(AccountView::default())), (10_000, 26_000, 1));
    }

    #[test]
    fn a_cold_request_reads_the_fixed_prompt_another_session_kept_warm() {
        // Message 1 found it warm, message 5 did not and takes no share.
        let view = AccountView::of_main(&[1], Expect::default(), 4_000);
        assert_eq!(metered(Some(view)), (14_000, 22_000, 1));
    }

    #[test]
    fn cold_requests_read_the_accounts_share_and_warm_ones_lose_the_evicted_share() {
        let expect = Expect {
            warm_elsewhere: 0.5,
            evicted: [0.1, 0.5, 0.9],
        };
        let view = AccountView::of_main(&[], expect, 4_000);
        // Cold: half the 4,000-token fixed prompt, at messages 1 and 5
        // (above Sonnet's minimum cacheable prefix of 1,024, below which
        // nothing is read). Warm after 30 s (under a minute): a tenth of
        // the 6,000 read past the fixed prompt is lost.
        let read = 2_000 + (10_000 - 600) + 2_000;
        assert_eq!(metered(Some(view)), (read, 36_000 - read, 1));
    }
}
