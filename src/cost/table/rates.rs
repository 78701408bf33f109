//! The rates one request is billed at, where a row has more than one: by
//! the length of its prompt (a provider's long-context rates, Alibaba Model
//! Studio's input-length tiers) and by the hour it was sent (DeepSeek's
//! peak and off-peak rates). One definition each: the bill check, the
//! replay's meter and the sweep's header all ask a row here.

use serde::Serialize;

use super::ModelPrice;

/// The rates of a request whose prompt (input, cache reads and writes
/// together) is above `above` tokens: the whole request is billed at them,
/// not only the tokens past the threshold. A row's tiers rise with
/// `above`, and a request is billed at the last one its prompt is above
/// ([`ModelPrice::tier`]): Anthropic's and OpenAI's long context is one
/// tier, Model Studio's steps (above 32k, 128k, 256k) up to three.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Tier {
    pub(crate) above: u64,
    pub(crate) input: f64,
    pub(crate) output: f64,
    pub(crate) cache_write_5m: f64,
    pub(crate) cache_write_1h: f64,
    pub(crate) cache_read: f64,
}

/// A tier of `prices` (input, output, 5-minute and 1-hour writes, read, in
/// the order of an Anthropic row's own) for a prompt above `above` tokens.
pub(super) const fn tier(above: u64, prices: [f64; 5]) -> Tier {
    let [input, output, cache_write_5m, cache_write_1h, cache_read] = prices;
    Tier {
        above,
        input,
        output,
        cache_write_5m,
        cache_write_1h,
        cache_read,
    }
}

/// Rates that change with the time a request is sent: from `from` (UTC,
/// seconds since the epoch) the provider bills at `off_peak`, and at
/// `peak` within its busy hours ([`PEAK_HOURS`], Monday to Friday); before
/// it, at the row's own rates.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Schedule {
    pub(crate) from: i64,
    pub(crate) off_peak: &'static ModelPrice,
    pub(crate) peak: &'static ModelPrice,
}

/// DeepSeek's busy hours, UTC (09:00–12:00 and 14:00–18:00 Beijing time),
/// Monday to Friday: `[start, end)` in seconds of the day.
const PEAK_HOURS: [(i64, i64); 2] = [(3_600, 14_400), (21_600, 36_000)];

/// Whether `t` (UTC seconds) falls in [`PEAK_HOURS`] of a weekday.
fn is_peak(t: i64) -> bool {
    let day = t.div_euclid(86_400);
    // 1970-01-01 was a Thursday: 0 is Sunday.
    let weekday = (day + 4).rem_euclid(7);
    let second = t.rem_euclid(86_400);
    (1..=5).contains(&weekday) && PEAK_HOURS.iter().any(|&(a, b)| (a..b).contains(&second))
}

impl ModelPrice {
    /// The row with `tiers`, in rising order of their thresholds.
    pub(super) const fn tiered(self, tiers: &'static [Tier]) -> ModelPrice {
        ModelPrice { tiers, ..self }
    }

    /// The row whose rates change on `schedule`'s date.
    pub(super) const fn timed(self, schedule: &'static Schedule) -> ModelPrice {
        ModelPrice {
            schedule: Some(schedule),
            ..self
        }
    }

    /// The tier a request of `prompt` tokens is billed at: 0 for the
    /// row's own rates, `i` for the `i`-th of [`ModelPrice::tiers`] (the
    /// last whose threshold the prompt is above).
    pub(crate) fn tier(&self, prompt: u64) -> usize {
        self.tiers.iter().take_while(|t| prompt > t.above).count()
    }

    /// The row at tier `i` ([`ModelPrice::tier`]): its own rates at 0, the
    /// tier's in place of them above.
    pub(crate) fn at_tier(&self, i: usize) -> ModelPrice {
        match i.checked_sub(1).and_then(|k| self.tiers.get(k)) {
            Some(t) => ModelPrice {
                input: t.input,
                output: t.output,
                cache_write_5m: t.cache_write_5m,
                cache_write_1h: t.cache_write_1h,
                cache_read: t.cache_read,
                ..*self
            },
            None => *self,
        }
    }

    /// The rates a request of `prompt` tokens is billed at: its tier's.
    pub(crate) fn at(&self, prompt: u64) -> ModelPrice {
        self.at_tier(self.tier(prompt))
    }

    /// Whether a request of `prompt` tokens is above the row's first
    /// threshold: billed at long-context rates.
    pub(crate) fn is_long(&self, prompt: u64) -> bool {
        self.tier(prompt) > 0
    }

    /// The row a request sent at `t` (UTC seconds; `None`: not known) is
    /// billed at: the schedule's off-peak or peak row from its date, else
    /// this one.
    pub(crate) fn at_time(&'static self, t: Option<i64>) -> &'static ModelPrice {
        match (self.schedule, t) {
            (Some(s), Some(t)) if t >= s.from => {
                if is_peak(t) {
                    s.peak
                } else {
                    s.off_peak
                }
            }
            _ => self,
        }
    }
}
