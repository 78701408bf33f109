//! The replay (docs/engine.md §5): walk a recorded session as smith lived it,
//! compacting before every request, and count what compaction did.
//!
//! smith compacts before every provider request, and every recorded assistant
//! message answers one request. So the walk starts from an empty working
//! history; before appending each assistant message it runs the engine and
//! keeps the result; every message is then appended. Summaries and drop notes
//! live only in the working history, never in the record.

pub(crate) mod learn;
pub(crate) mod misfire;
pub(crate) mod real;
pub(crate) mod trace;

pub(crate) use misfire::Misfire;
pub use misfire::{MisfireKind, DEFAULT_THRASH_WINDOW};
pub(crate) use real::Sizes;

use std::sync::Arc;

use serde::Serialize;

use crate::engine::{Compaction, Compactor, Edit, Effects, Stage, Strategy, Withheld};
use crate::transcript::{Message, Role};

/// What happened at one request.
#[derive(Clone, Debug, Serialize)]
pub struct RequestFacts {
    /// 0-based request number.
    pub request: usize,
    /// Index in the transcript of the assistant message answering it.
    pub(crate) message_index: usize,
    /// Charged tokens before and after compaction.
    pub(crate) before: i64,
    pub after: i64,
    pub(crate) strategy: Strategy,
    pub stages: Vec<Stage>,
    /// Messages in the working history after compaction.
    pub(crate) history_len: usize,
    /// Whether `before` was over the trigger.
    pub(crate) triggered: bool,
    pub(crate) target_missed: bool,
    pub(crate) exhausted: bool,
    pub effects: Effects,
    /// Tokens of this request a prompt cache could serve: the prefix that is
    /// unchanged since the previous request (overhead included).
    pub(crate) cache_read: i64,
    /// Tokens written to the cache: everything after that prefix.
    pub(crate) cache_write: i64,
    /// The ratio this request was charged at, when it is learned (see
    /// [`crate::engine::learn`]); `None` under a fixed ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ratio: Option<f64>,
    /// Whether this compaction summarised nothing but the previous
    /// compaction's note, or summarised and reclaimed nothing while no
    /// cheaper stage acted (see [`MisfireKind::Resummarized`]).
    pub(crate) resummarized: bool,
    /// The provider's count of what was sent ([`real`]): the tokens, those
    /// a prompt cache could serve and those written. Where the session
    /// measured nothing they are `after`, `cache_read` and `cache_write`.
    pub(crate) real_after: i64,
    pub(crate) real_read: i64,
    pub(crate) real_write: i64,
    /// Whether the real count is over the window though smith's estimate
    /// was not: smith would have sent more than the model takes.
    pub(crate) overflow: bool,
    /// Whether the real count is the provider's (the session was
    /// measured), not the estimate.
    pub(crate) measured: bool,
    /// A summary the engine refused or discarded (smith after #118 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) withheld: Option<Withheld>,
}

/// A session's replay, summed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SessionFacts {
    pub(crate) messages: usize,
    pub requests: usize,
    /// Requests whose estimate was over the trigger.
    pub(crate) triggered: usize,
    /// Requests whose history compaction changed.
    pub compactions: usize,
    /// How many requests each stage changed something in, by [`Stage::index`].
    pub(crate) stage_fires: [u64; 6],
    pub effects: Effects,
    pub summaries: u64,
    pub(crate) drops: u64,
    /// Triggered requests that ended above the target.
    pub(crate) target_misses: u64,
    /// Requests that ended above `max_tokens`.
    pub(crate) exhausted: u64,
    /// The largest request sent, and the largest before compaction.
    pub peak_tokens: i64,
    pub(crate) peak_before: i64,
    /// Sum of `after` over all requests.
    pub tokens_sent: i64,
    /// The prompt cache's reads and writes of the real count.
    pub cache_read: i64,
    pub cache_write: i64,
    /// The real count ([`real`]): its sum over requests and its largest.
    #[serde(default)]
    pub(crate) real_tokens_sent: i64,
    #[serde(default)]
    pub(crate) real_peak_tokens: i64,
    /// Requests whose real count was over the window while smith's estimate
    /// was not ([`MisfireKind::Overflow`]).
    #[serde(default)]
    pub(crate) misfire_overflow: u64,
    /// Distinct tool results shortened or removed (summaries included), and
    /// of those, how many the rest of the record needed again or fetched
    /// again (see `crate::loss`). Filled by `loss::replay`; the bare
    /// [`replay`] leaves them 0.
    pub(crate) results_lost: u64,
    pub(crate) needed_again: u64,
    pub(crate) refetched: u64,
    /// Lost results still current whose lost tokens a later message used
    /// (see `crate::loss::Loss::still_needed`).
    #[serde(default)]
    pub(crate) still_needed: u64,
    /// The re-fetches the re-fetch model expects of the lost results, and
    /// what they would send (see `crate::loss::refetch`).
    #[serde(default)]
    pub(crate) refetch: Refetch,
    /// Compactions whose result was larger than their input.
    pub misfire_grew: u64,
    /// Compactions within [`SessionFacts::thrash_window`] requests of the
    /// previous one.
    pub misfire_repeated: u64,
    /// Compactions that summarised only the previous summary (or reclaimed
    /// nothing by summarising while every cheaper stage did nothing).
    #[serde(default)]
    pub misfire_resummarized: u64,
    /// Summaries the engine refused before calling the summarizer (the
    /// prefix was only an earlier summary) and summaries it discarded after
    /// the call (larger than what they would replace): smith after #118
    /// only.
    #[serde(default)]
    pub(crate) summaries_refused: u64,
    #[serde(default)]
    pub(crate) summaries_discarded: u64,
    /// Where each misfire happened, in request order (see [`misfire`]).
    /// Repeats are kept up to [`misfire::MAX_THRASH_WINDOW`] apart so that
    /// [`SessionFacts::set_thrash_window`] can widen the window afterwards
    /// (also after a resume: the journal keeps them, as every field).
    pub(crate) misfires: Vec<Misfire>,
    /// The window `misfire_repeated` counts with; 0 reads as
    /// [`DEFAULT_THRASH_WINDOW`].
    pub(crate) thrash_window: usize,
    /// The request of the last compaction, for the next repeat.
    pub(crate) last_compaction: Option<usize>,
    /// How the ratio and overhead were chosen, where the session chose
    /// them (`crate::calibrate::session`); `None` for the config's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) calibration: Option<crate::engine::learn::Calibration>,
    /// The replay priced per request by the cost model (filled by the
    /// sweep through `crate::cost::session::Meter`; `None` where only the
    /// flat price of the sums applies).
    #[serde(default)]
    pub priced: Option<ModelCost>,
}

/// A replay's expected re-fetches of the results it lost and what they
/// would send (filled by `crate::loss`, priced by `crate::cost`): each lost
/// result weighs its probability; a re-fetch reads the context the replay
/// had where it lost the result, writes the result into the cache, and
/// outputs the call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct Refetch {
    // Kept as their bits in the resume journal, as the dollars are.
    #[serde(with = "exact")]
    pub(crate) expected: f64,
    #[serde(with = "exact")]
    pub(crate) read_tokens: f64,
    #[serde(with = "exact")]
    pub(crate) write_tokens: f64,
    #[serde(with = "exact")]
    pub(crate) output_tokens: f64,
}

impl Refetch {
    /// Adds one lost result fetched again with probability `p`.
    pub(crate) fn add(&mut self, p: f64, context: i64, result_tokens: u64, call_tokens: u64) {
        self.expected += p;
        self.read_tokens += p * context.max(0) as f64;
        self.write_tokens += p * result_tokens as f64;
        self.output_tokens += p * call_tokens as f64;
    }
}

/// What a replay cost under the per-request cost model. The replay counts
/// tokens; these figures need the prices, the records' times and the
/// lifetime, which the cost module knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ModelCost {
    /// The requests' input side: cache reads and writes at the session's
    /// model's prices (or `--price`), reads of an expired cache written
    /// again, and requests below the minimum cacheable prefix at plain input.
    /// Without times, a minimum or another model it is the flat price of the
    /// sums, to the bit.
    #[serde(with = "exact")]
    pub(crate) price: f64,
    /// Every token sent at the model's plain input price.
    #[serde(with = "exact")]
    pub(crate) price_uncached: f64,
    /// The answers: output tokens at the model's output price.
    #[serde(with = "exact")]
    pub(crate) price_output: f64,
    /// Output tokens: recorded where the session has them, else estimated.
    pub(crate) output_tokens: u64,
    /// The summarizer's own requests (its input uncached, its output the
    /// summary).
    #[serde(with = "exact")]
    pub(crate) price_summarizer: f64,
    /// Requests whose cache had expired by the time they were sent.
    pub(crate) expired: u64,
    /// Tokens written to the one-hour tier (the rest went to five minutes).
    pub(crate) cache_write_1h: i64,
    /// Whether the records gave times, so the lifetime could apply.
    pub(crate) ttl_applied: bool,
    /// Tokens cold requests read from the account's cache beyond the
    /// session: the fixed prompt another session, or the account's other
    /// work, kept warm (`crate::cost::bill::unlogged::AccountView`).
    #[serde(default)]
    pub(crate) account_read: i64,
    /// Tokens of warm prefixes expected lost to early evictions, written
    /// again.
    #[serde(default)]
    pub(crate) account_evicted: i64,
    /// The expected re-fetches of the lost results (`SessionFacts::refetch`)
    /// at the prices of the session's last request.
    #[serde(default, with = "exact")]
    pub(crate) price_refetch: f64,
}

/// Dollars kept as their bits in the resume journal (JSON), so that a
/// resumed sweep writes the very figures an uninterrupted one does.
mod exact {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.to_bits())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        u64::deserialize(d).map(f64::from_bits)
    }
}

impl SessionFacts {
    /// Folds one request in.
    pub(crate) fn add(&mut self, r: &RequestFacts) {
        self.requests += 1;
        self.triggered += r.triggered as usize;
        if r.strategy != Strategy::None {
            self.compactions += 1;
        }
        for s in &r.stages {
            self.stage_fires[s.index()] += 1;
        }
        self.summaries += (r.strategy == Strategy::Summarized) as u64;
        self.drops += (r.strategy == Strategy::Dropped) as u64;
        self.effects.add(&r.effects);
        self.target_misses += r.target_missed as u64;
        self.exhausted += r.exhausted as u64;
        self.peak_tokens = self.peak_tokens.max(r.after);
        self.peak_before = self.peak_before.max(r.before);
        self.tokens_sent += r.after;
        self.cache_read += r.real_read;
        self.cache_write += r.real_write;
        self.real_tokens_sent += r.real_after;
        self.real_peak_tokens = self.real_peak_tokens.max(r.real_after);
        self.misfire_overflow += r.overflow as u64;
        self.summaries_refused += (r.withheld == Some(Withheld::Refused)) as u64;
        self.summaries_discarded += matches!(r.withheld, Some(Withheld::Discarded { .. })) as u64;
        self.note_misfires(r);
    }

    fn note_misfires(&mut self, r: &RequestFacts) {
        let at = |kind, gap| Misfire {
            kind,
            request: r.request,
            message_index: r.message_index,
            gap,
            before: r.before,
            after: r.after,
        };
        if r.strategy != Strategy::None {
            if r.after > r.before {
                self.misfire_grew += 1;
                self.misfires.push(at(MisfireKind::Grew, None));
            }
            if r.resummarized {
                self.misfire_resummarized += 1;
                self.misfires.push(at(MisfireKind::Resummarized, None));
            }
            if let Some(prev) = self.last_compaction {
                let gap = r.request - prev;
                if gap <= misfire::MAX_THRASH_WINDOW {
                    self.misfires.push(at(MisfireKind::Repeated, Some(gap)));
                }
                if gap <= self.window() {
                    self.misfire_repeated += 1;
                }
            }
            self.last_compaction = Some(r.request);
        }
        if r.target_missed {
            self.misfires.push(at(MisfireKind::TargetMissed, None));
        }
        if r.exhausted {
            self.misfires.push(at(MisfireKind::OverWindow, None));
        }
        if r.overflow {
            self.misfires.push(Misfire {
                before: r.after,
                after: r.real_after,
                ..at(MisfireKind::Overflow, None)
            });
        }
    }

    /// The thrash window in force.
    pub(crate) fn window(&self) -> usize {
        if self.thrash_window == 0 {
            DEFAULT_THRASH_WINDOW
        } else {
            self.thrash_window
        }
    }

    /// Counts repeats under another window (1 to
    /// [`misfire::MAX_THRASH_WINDOW`]), after the replay.
    pub(crate) fn set_thrash_window(&mut self, window: usize) {
        self.thrash_window = window.min(misfire::MAX_THRASH_WINDOW);
        let w = self.window();
        self.misfire_repeated = self
            .misfires
            .iter()
            .filter(|m| m.kind == MisfireKind::Repeated && m.gap.is_some_and(|g| g <= w))
            .count() as u64;
    }

    /// The misfires that count under the thrash window in force.
    pub fn counted_misfires(&self) -> impl Iterator<Item = &Misfire> + '_ {
        let w = self.window();
        self.misfires
            .iter()
            .filter(move |m| m.kind != MisfireKind::Repeated || m.gap.is_some_and(|g| g <= w))
    }
}

/// Replays `messages` under `engine`. `observe` sees each request's facts,
/// the working history as sent, and the compaction that produced it (whose
/// `messages` has been moved into that history, so it reads `None`); return
/// `false` from it to stop early.
pub fn replay_with<C: Compactor + ?Sized>(
    messages: &[Arc<Message>],
    engine: &C,
    observe: impl FnMut(&RequestFacts, &[Arc<Message>], &Compaction) -> bool,
) -> SessionFacts {
    replay_sized(messages, engine, None, observe)
}

/// [`replay_with`], counting what each request sends as the provider would
/// where `sizes` (the session's measurement) is given.
pub(crate) fn replay_sized<C: Compactor + ?Sized>(
    messages: &[Arc<Message>],
    engine: &C,
    sizes: Option<Sizes>,
    mut observe: impl FnMut(&RequestFacts, &[Arc<Message>], &Compaction) -> bool,
) -> SessionFacts {
    let mut real = sizes.map(real::Tracker::new);
    let budget = engine.budget();
    let measure = engine.measure();
    let mut facts = SessionFacts {
        messages: messages.len(),
        ..SessionFacts::default()
    };
    let mut working: Vec<Arc<Message>> = Vec::with_capacity(messages.len());
    let mut bytes: u64 = 0;
    // What was sent at the previous request: its length and bytes.
    let mut sent: Option<(usize, u64)> = None;
    let mut request = 0usize;
    // What admission cut since the last request: it counts at the next one,
    // the first to send those messages.
    let mut admitted_effects = Effects::default();
    let mut admitted_edits: Vec<Edit> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message.role == Role::Assistant {
            let ratio = engine.ratio_at(request);
            let charged = ratio.map_or(*budget, |r| budget.at_ratio(r));
            let mut compaction = engine.compact_request(request, &working, bytes);
            let resummarized = resummarized(&working, &compaction);
            if !admitted_edits.is_empty() {
                compaction.effects.add(&admitted_effects);
                compaction.edits.append(&mut admitted_edits);
                admitted_effects = Effects::default();
            }
            if let Some(new) = compaction.messages.take() {
                working = new;
                bytes = compaction.history_bytes;
                if let Some(real) = &mut real {
                    real.reset(&working);
                }
            }
            let (cache_read, cache_write) = match sent {
                None => (0, compaction.after),
                Some((prev_len, prev_bytes)) => {
                    let prefix_bytes = match compaction.first_changed {
                        None => prev_bytes,
                        Some(f) => measure.history(&working[..f.min(prev_len)]),
                    };
                    let read = charged.charged(measure.tokens(prefix_bytes));
                    (read, compaction.after - read)
                }
            };
            sent = Some((working.len(), bytes));
            let (real_after, real_read) = match &mut real {
                Some(real) => real.request(working.len(), compaction.first_changed),
                None => (compaction.after, cache_read),
            };
            let exhausted = compaction.exhausted(budget);
            let r = RequestFacts {
                request,
                message_index: index,
                before: compaction.before,
                after: compaction.after,
                strategy: compaction.strategy,
                stages: compaction.stages.clone(),
                history_len: working.len(),
                triggered: compaction.triggered,
                target_missed: compaction.triggered && !compaction.reached_target(budget),
                exhausted,
                effects: compaction.effects,
                cache_read,
                cache_write,
                ratio,
                resummarized,
                real_after,
                real_read,
                real_write: real_after - real_read,
                overflow: !exhausted && real_after > budget.max_tokens,
                measured: sizes.is_some(),
                withheld: compaction.withheld,
            };
            facts.add(&r);
            request += 1;
            if !observe(&r, &working, &compaction) {
                return facts;
            }
        }
        let admitted = engine.admit(message);
        if !admitted.edits.is_empty() {
            admitted_effects.add(&admitted.effects);
            admitted_edits.extend(admitted.edits.into_iter().map(|mut e| {
                e.message = working.len();
                e
            }));
        }
        bytes += measure.message(&admitted.message);
        if let Some(real) = &mut real {
            real.push(&working, &admitted.message);
        }
        working.push(admitted.message);
    }
    facts
}

/// Whether `c`, run on `before`, is the dead end of a long agentic turn: a
/// summary (or drop) whose prefix was nothing but the previous compaction's
/// note, or one that reclaimed nothing while every cheaper stage did
/// nothing. In both the recency window held everything the cheap stages
/// could have shortened, and the compaction paid for a summary and a cache
/// write and bought no room.
fn resummarized(before: &[Arc<Message>], c: &Compaction) -> bool {
    if !matches!(c.strategy, Strategy::Summarized | Strategy::Dropped) {
        return false;
    }
    let only_note = c.cut == Some(1)
        && before
            .first()
            .is_some_and(|m| crate::engine::stages::summarize::is_summary_note(m));
    let cheap = c
        .stages
        .iter()
        .any(|s| !matches!(s, Stage::Summarize | Stage::Drop));
    only_note || (!cheap && c.after >= c.before)
}

/// Replays `messages` under `engine` and returns the sums.
pub fn replay<C: Compactor + ?Sized>(messages: &[Arc<Message>], engine: &C) -> SessionFacts {
    replay_with(messages, engine, |_, _, _| true)
}

/// Request `request`, answered by message `message_index`, sending `after`
/// tokens, nothing compacted and nothing read from the cache: what unit
/// tests vary a request from.
#[cfg(test)]
pub(crate) fn sent(request: usize, message_index: usize, after: i64) -> RequestFacts {
    RequestFacts {
        request,
        message_index,
        before: after,
        after,
        strategy: Strategy::None,
        stages: Vec::new(),
        history_len: 0,
        triggered: false,
        target_missed: false,
        exhausted: false,
        effects: Effects::default(),
        cache_read: 0,
        cache_write: after,
        ratio: None,
        resummarized: false,
        real_after: after,
        real_read: 0,
        real_write: after,
        overflow: false,
        measured: false,
        withheld: None,
    }
}

/// A session's facts with every field away from its default, and the fields
/// two facts differ in: for the tests that hold every field through a path
/// that stores facts (the resume journal, the shard merge). Both name every
/// field with no `..`, so a field added to [`SessionFacts`] or
/// [`Effects`] does not compile until it is given a value here and is
/// compared; a path that then drops it fails those tests by its name.
#[cfg(test)]
pub(crate) mod every_field {
    use super::*;

    /// Facts in which every field, and every figure derived from them, is
    /// set and differs from its default; `k` shifts every value so rows
    /// built from different `k` differ everywhere too.
    pub(crate) fn set(k: u64) -> SessionFacts {
        let ku = k as usize;
        let ki = k as i64;
        let misfire = |kind, request: usize, gap| Misfire {
            kind,
            request: request + ku,
            message_index: 2 * request + 1 + ku,
            gap,
            before: 9_000 + ki,
            after: 9_500 + ki,
        };
        SessionFacts {
            messages: 40 + ku,
            requests: 19 + ku,
            triggered: 9 + ku,
            compactions: 8 + ku,
            stage_fires: [1 + k, 2 + k, 3 + k, 4 + k, 5 + k, 6 + k],
            effects: Effects {
                reclaimed: [101 + ki, 102 + ki, 103 + ki, 104 + ki, -105 - ki, 106 + ki],
                thinking_dropped: 7 + k,
                attachments_removed: 8 + k,
                reads_superseded: 9 + k,
                results_truncated: 10 + k,
                results_stubbed: 11 + k,
                messages_summarized: 12 + k,
            },
            summaries: 2 + k,
            drops: 1 + k,
            target_misses: 1 + k,
            exhausted: 1 + k,
            peak_tokens: 120_000 + ki,
            peak_before: 150_000 + ki,
            tokens_sent: 1_000_000 + ki,
            cache_read: 700_000 + ki,
            cache_write: 300_000 + ki,
            real_tokens_sent: 1_100_000 + ki,
            real_peak_tokens: 125_000 + ki,
            misfire_overflow: 1 + k,
            results_lost: 13 + k,
            needed_again: 4 + k,
            refetched: 3 + k,
            still_needed: 2 + k,
            refetch: Refetch {
                expected: 1.5 + k as f64 / 17.0,
                read_tokens: 90_000.5 + k as f64,
                write_tokens: 2_000.25 + k as f64,
                output_tokens: 80.125 + k as f64,
            },
            misfire_grew: 1,
            misfire_repeated: 2,
            misfire_resummarized: 1,
            summaries_refused: 3 + k,
            summaries_discarded: 2 + k,
            misfires: vec![
                misfire(MisfireKind::Grew, 3, None),
                misfire(MisfireKind::Resummarized, 4, None),
                misfire(MisfireKind::Repeated, 5, Some(2)),
                misfire(MisfireKind::Repeated, 8, Some(3)),
                misfire(MisfireKind::Repeated, 20, Some(12)),
                misfire(MisfireKind::TargetMissed, 9, None),
                misfire(MisfireKind::OverWindow, 11, None),
                misfire(MisfireKind::Overflow, 12, None),
            ],
            thrash_window: 5,
            last_compaction: Some(20 + ku),
            calibration: Some(crate::engine::learn::Calibration {
                ratio_mode: crate::engine::learn::RatioMode::Learned,
                ratio_start: 1.0 + k as f64 / 23.0,
                ratio_end: 1.4 + k as f64 / 29.0,
                observations: 17 + ku,
                overhead_mode: crate::engine::learn::OverheadMode::Fitted,
                overhead_tokens: 17_000 + k,
                window_tokens: 200_000 + k,
                own_window: k % 2 == 0,
            }),
            priced: Some(ModelCost {
                price: 1.25 + k as f64 / 3.0,
                price_uncached: 2.5 + k as f64 / 7.0,
                price_output: 0.1 + k as f64 / 11.0,
                output_tokens: 5_000 + k,
                price_summarizer: 0.01 + k as f64 / 13.0,
                expired: 2 + k,
                cache_write_1h: 4_000 + ki,
                ttl_applied: true,
                account_read: 6_000 + ki,
                account_evicted: 700 + ki,
                price_refetch: 0.05 + k as f64 / 19.0,
            }),
        }
    }

    /// Every field of `a` by name, and whether `b` differs there.
    pub(crate) fn compare(a: &SessionFacts, b: &SessionFacts) -> Vec<(&'static str, bool)> {
        let mut out = Vec::new();
        // The destructuring names every field, so a new one does not compile
        // until it is listed here, and each listed field is compared.
        macro_rules! compare_all {
            ($($field:ident),* ; effects: $($effect:ident),*) => {
                let SessionFacts { $($field,)* effects } = a;
                let Effects { $($effect,)* } = effects;
                $(out.push((stringify!($field), *$field != b.$field));)*
                $(out.push((concat!("effects.", stringify!($effect)), *$effect != b.effects.$effect));)*
            };
        }
        compare_all!(
            messages,
            requests,
            triggered,
            compactions,
            stage_fires,
            summaries,
            drops,
            target_misses,
            exhausted,
            peak_tokens,
            peak_before,
            tokens_sent,
            cache_read,
            cache_write,
            real_tokens_sent,
            real_peak_tokens,
            misfire_overflow,
            results_lost,
            needed_again,
            refetched,
            still_needed,
            refetch,
            misfire_grew,
            misfire_repeated,
            misfire_resummarized,
            summaries_refused,
            summaries_discarded,
            misfires,
            thrash_window,
            last_compaction,
            calibration,
            priced;
            effects: reclaimed, thinking_dropped, attachments_removed, reads_superseded, results_truncated, results_stubbed, messages_summarized
        );
        out
    }

    /// The names of the fields in which `a` and `b` differ.
    pub(crate) fn differing(a: &SessionFacts, b: &SessionFacts) -> Vec<&'static str> {
        compare(a, b)
            .into_iter()
            .filter_map(|(name, differs)| differs.then_some(name))
            .collect()
    }

    #[test]
    fn every_field_is_set_away_from_its_default() {
        let same: Vec<&str> = compare(&set(0), &SessionFacts::default())
            .into_iter()
            .filter_map(|(name, differs)| (!differs).then_some(name))
            .collect();
        assert!(same.is_empty(), "left at their default: {same:?}");
        // The set facts count repeats as their own window says.
        let mut f = set(0);
        let repeated = f.misfire_repeated;
        f.set_thrash_window(f.thrash_window);
        assert_eq!(f.misfire_repeated, repeated);
    }
}
