//! The check's figures per source format, and the prose that names its
//! short sessions' tail.

use std::collections::BTreeMap;

use serde::Serialize;

use super::types::{
    relative, Cause, Kind, SessionCheck, SideTotal, Tokens, LONG_SESSION, LONG_SESSION_BOUND,
};
use super::unlogged::{self, Unlogged};
use crate::stats::{median_of, percentile_of};

/// Recorded misses of one cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct MissTotals {
    pub(crate) requests: usize,
    pub(crate) cache_write: u64,
}

/// A session named with its error.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Worst {
    pub(crate) session: String,
    pub(crate) requests: usize,
    pub(crate) error: f64,
}

/// The check's figures for one source format.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Summary {
    pub(crate) format: String,
    pub sessions: usize,
    pub(crate) requests: usize,
    /// Of |per-session error|.
    pub(crate) median_error: f64,
    pub(crate) p95_error: f64,
    pub(crate) worst: Option<Worst>,
    /// The worst of the sessions with [`LONG_SESSION`] requests or more.
    pub(crate) worst_long: Option<Worst>,
    /// Sessions with [`LONG_SESSION`] requests or more, and how many of
    /// them are within [`LONG_SESSION_BOUND`] of the recorded usage.
    pub(crate) long_sessions: usize,
    pub(crate) long_within_bound: usize,
    /// p95 |error| of the shorter sessions.
    pub(crate) p95_error_short: Option<f64>,
    /// Median |error| of the shorter sessions.
    pub(crate) median_error_short: Option<f64>,
    /// What the shorter sessions at or above their p95 are.
    pub(crate) short_tail: Option<ShortTail>,
    pub(crate) recorded_usd: f64,
    pub(crate) predicted_usd: f64,
    /// Error on the total of all sessions.
    pub(crate) total_error: f64,
    pub(crate) recorded: Tokens,
    pub(crate) predicted: Tokens,
    pub(crate) misses: BTreeMap<Cause, MissTotals>,
    /// Tokens recorded misses sent again: their cache writes and plain
    /// input (all of it for a provider that bills no writes).
    pub(crate) miss_cache_write: u64,
    /// Share of those attributed to a cause other than `unexplained`.
    pub(crate) attributed: f64,
    /// The same, counting only lifetime expiry, compaction and model switch.
    pub(crate) attributed_without_rewrite: f64,
    /// Sessions whose timestamps let the lifetime apply.
    pub(crate) ttl_applied: usize,
    /// The prices the check used: one entry per row of the price table
    /// some request was billed at.
    pub(crate) prices: Vec<PriceUsed>,
    /// Requests that read the fixed prompt another session cached.
    pub(crate) shared_reads: usize,
    /// What folding the copies of other logs did (see [`SideTotal`]).
    #[serde(skip_serializing_if = "SideTotal::is_empty")]
    pub(crate) copies: SideTotal,
    /// The account's cache beyond the log, per kind of session: what the
    /// shares each session is priced by are fitted on.
    pub(crate) unlogged: Vec<UnloggedFit>,
    /// Against what the source says was billed, where it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) billed: Option<Billed>,
}

/// What the requests of one kind of session show of the account's cache
/// beyond the log ([`unlogged`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct UnloggedFit {
    pub(crate) kind: Kind,
    #[serde(flatten)]
    pub(crate) fit: Unlogged,
}

/// A row of the price table and the requests billed at it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct PriceUsed {
    pub(crate) family: String,
    pub(crate) provider: String,
    pub(crate) requests: usize,
    /// Of them, billed above the row's first tier (long-context rates).
    pub(crate) long_context_requests: usize,
    pub(crate) input: f64,
    pub(crate) cache_write_5m: f64,
    pub(crate) cache_write_1h: f64,
    pub(crate) cache_read: f64,
    pub(crate) output: f64,
    /// The models billed at it that the table does not name (a row of a
    /// model in no table is its own: unpriced).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) nearest_for: Vec<String>,
}

/// Prices held against the recorded bill in dollars.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Billed {
    pub(crate) sessions: usize,
    pub(crate) billed_usd: f64,
    /// The recorded usage at the table's prices vs the bill: checks the
    /// table itself.
    pub(crate) priced_median_error: f64,
    pub(crate) priced_worst: Option<Worst>,
    pub(crate) priced_total_error: f64,
    /// The model's prediction vs the bill.
    pub(crate) predicted_median_error: f64,
    pub(crate) predicted_worst: Option<Worst>,
    pub(crate) predicted_total_error: f64,
}

fn worst<'a>(it: impl Iterator<Item = (&'a SessionCheck, f64)>) -> Option<Worst> {
    it.filter(|(_, e)| e.is_finite())
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map(|(s, e)| Worst {
            session: s.session.clone(),
            requests: s.requests,
            error: e,
        })
}

/// The figures per source format, formats in name order.
pub(crate) fn summarize(checks: &[SessionCheck]) -> Vec<Summary> {
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
    // A session of a model in no price table has no error (its dollars are
    // unknown): the errors' statistics are over the priced sessions.
    let mut abs: Vec<f64> = cs
        .iter()
        .map(|c| c.error.abs())
        .filter(|e| e.is_finite())
        .collect();
    let mut short: Vec<f64> = cs
        .iter()
        .filter(|c| c.requests < LONG_SESSION)
        .map(|c| c.error.abs())
        .filter(|e| e.is_finite())
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
    let mut copies = SideTotal::default();
    for c in cs {
        copies.add(&c.side_requests);
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
        copies,
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
                    let row = crate::cost::table::by_family(d.family)
                        .copied()
                        .unwrap_or(crate::cost::table::FREE);
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
pub(crate) struct ShortTail {
    /// Sessions under [`LONG_SESSION`] requests at or above the p95 (and
    /// above the median).
    pub(crate) sessions: usize,
    /// Their requests, on average.
    pub(crate) mean_requests: f64,
    /// Their recorded usage, and its share of the source's.
    pub(crate) recorded_usd: f64,
    pub(crate) share_of_usd: f64,
    /// Share of their dollar error in their first request: its |error|
    /// against that of the rest of their requests.
    pub(crate) first_request_share: f64,
    /// Of them: the first request read from the cache what the model took
    /// to be cold (no session of the log had used the prompt within the
    /// lifetime), or read less than the model expected.
    pub(crate) first_read_unforeseen: usize,
    pub(crate) first_read_overestimated: usize,
    /// Of them: compaction agents (one request resending the parent's
    /// context).
    pub(crate) compaction_agents: usize,
    /// The p95 |error| of the short sessions with each first request
    /// priced as recorded: what the rest of their requests leave.
    pub(crate) p95_error_first_as_recorded: f64,
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
    pub(crate) fn describe(&self) -> String {
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
