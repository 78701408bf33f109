//! The knobs of one compaction config and the budget arithmetic derived from
//! them (docs/engine.md §3).

use serde::{Deserialize, Serialize};

use super::constants::{defaults, OLD_RESULT_BYTES, RECENCY_WINDOW_TURNS};
use crate::knob::ValueError;

/// Every knob the replay can turn. [`Config::default`] is smith's own
/// configuration, the baseline of every sweep.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// The context window in tokens: the hard ceiling.
    pub max_tokens: u64,
    /// Fraction of `max_tokens` above which compaction acts.
    pub compact_at: f64,
    /// Fraction of `max_tokens` compaction brings the request down to.
    pub compact_to: f64,
    /// Bytes of a stale tool result kept by truncation.
    pub result_cap: usize,
    /// Real turns the lossy stages leave alone.
    pub window_turns: usize,
    /// Tokens of every request that are not history (system prompt, tools).
    pub overhead_tokens: u64,
    /// Provider tokens over estimated tokens; [`LEARN`] asks the replay to
    /// learn it request by request as smith does (see [`super::learn`]).
    pub ratio: f64,
    /// Size of the offline summary stand-in; 0 means the summarizer fails and
    /// the prefix is dropped instead.
    pub summary_tokens: u64,
    /// Which of smith's engines compacts (docs/engine.md §4.9). Written
    /// data from before it was a knob replayed smith 0.4's.
    #[serde(default)]
    pub engine: super::EngineVersion,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_tokens: defaults::MAX_TOKENS,
            compact_at: defaults::COMPACT_AT,
            compact_to: defaults::COMPACT_TO,
            result_cap: OLD_RESULT_BYTES,
            window_turns: RECENCY_WINDOW_TURNS,
            overhead_tokens: defaults::OVERHEAD_TOKENS,
            ratio: defaults::RATIO,
            summary_tokens: defaults::SUMMARY_TOKENS,
            engine: super::EngineVersion::RELEASED,
        }
    }
}

/// The value of the ratio knob that stands for `learn`: smith's own
/// recalibration, replayed from the session's record. No fixed ratio can be
/// 0, so the number column of every output can hold it beside its
/// `ratio_mode`.
pub(crate) const LEARN: f64 = 0.0;

/// The value of the window knob that stands for `own`: each session's
/// window is its model's (see `calibrate::session::resolve`), which is what
/// the agent that recorded it ran under. No window can be 0, so the number
/// column of every output can hold it beside the `window_used` of each row.
pub(crate) const OWN_WINDOW: u64 = 0;

/// smith's own rule for the window and thresholds it runs under (its
/// `valid_thresholds?` in config.cr): a positive window that fits its
/// Int32, and `0 < compact_to < compact_at < 1`. smith ignores a
/// `[context]` that breaks it, so a config that breaks it is one no user can
/// run.
pub(crate) fn smith_accepts(max_tokens: i64, compact_at: f64, compact_to: f64) -> bool {
    max_tokens > 0
        && max_tokens <= i32::MAX as i64
        && compact_to > 0.0
        && compact_to < compact_at
        && compact_at < 1.0
}

impl Config {
    /// [`smith_accepts`] of this config's window and thresholds, as the
    /// error that names the rule.
    pub(crate) fn check_smith_rule(&self) -> Result<(), ValueError> {
        let max = i64::try_from(self.nominal_window()).unwrap_or(i64::MAX);
        if smith_accepts(max, self.compact_at, self.compact_to) {
            Ok(())
        } else {
            let (at, to) = (self.compact_at, self.compact_to);
            // The knob the user can change: the one out of its own range
            // first, then the pair, then the window.
            let broken = if !(at > 0.0 && at < 1.0) {
                format!("--compact-at {at} is not a fraction of the window above 0 and below 1")
            } else if !(to > 0.0 && to < at) {
                format!("--compact-to {to} is not above 0 and below --compact-at {at}")
            } else {
                format!("--max-tokens {} is out of range", self.max_tokens)
            };
            Err(ValueError::SmithRule { broken })
        }
    }

    /// Whether the ratio is learned rather than fixed.
    pub(crate) fn learns_ratio(&self) -> bool {
        self.ratio == LEARN
    }

    /// Whether the window is each session's own ([`OWN_WINDOW`]).
    pub(crate) fn own_window(&self) -> bool {
        self.max_tokens == OWN_WINDOW
    }

    /// The window the arithmetic of the fractions works with before a
    /// session is known: smith's default for [`OWN_WINDOW`], which every
    /// replay replaces by the session's own.
    pub(crate) fn nominal_window(&self) -> u64 {
        if self.own_window() {
            defaults::MAX_TOKENS
        } else {
            self.max_tokens
        }
    }

    /// Checks what arithmetic alone would reject: a ratio that is not a
    /// positive number, fractions that are not fractions, a window of 0.
    pub(crate) fn validate(&self) -> Result<(), ValueError> {
        let fixed_ratio = self.ratio.is_finite() && self.ratio > 0.0;
        if !(self.learns_ratio() || fixed_ratio) {
            return Err(ValueError::Ratio(self.ratio));
        }
        for (name, v) in [
            ("compact-at", self.compact_at),
            ("compact-to", self.compact_to),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ValueError::Fraction { name, value: v });
            }
        }
        if !self.own_window() && (self.max_tokens == 0 || self.max_tokens > i32::MAX as u64) {
            return Err(ValueError::Window(self.max_tokens));
        }
        Ok(())
    }
}

/// Where the thresholds sit, in charged tokens (smith's `Budget`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    pub(crate) max_tokens: i64,
    /// `trunc(max_tokens * compact_at)`: compaction acts above this.
    pub(crate) trigger_tokens: i64,
    /// `trunc(max_tokens * compact_to)`: compaction aims at this.
    pub(crate) target_tokens: i64,
    pub(crate) overhead_tokens: i64,
    pub(crate) ratio: f64,
}

impl Budget {
    /// The budget of a config. A learned ratio starts where smith's does
    /// without a saved one, at 1.0, until the replay says otherwise
    /// ([`Budget::at_ratio`]).
    pub fn new(config: &Config) -> Budget {
        let max = config.nominal_window() as i64;
        Budget {
            max_tokens: max,
            trigger_tokens: (max as f64 * config.compact_at) as i64,
            target_tokens: (max as f64 * config.compact_to) as i64,
            overhead_tokens: config.overhead_tokens as i64,
            ratio: if config.learns_ratio() {
                super::constants::defaults::RATIO
            } else {
                config.ratio
            },
        }
    }

    /// This budget under another ratio: the thresholds are fractions of the
    /// window and do not move, only what a request is charged.
    pub(crate) fn at_ratio(&self, ratio: f64) -> Budget {
        Budget { ratio, ..*self }
    }

    /// What a request costs given the raw history estimate: overhead added,
    /// ratio applied, rounded half to even as Crystal's `Float#round` does.
    pub fn charged(&self, history_tokens: u64) -> i64 {
        ((history_tokens as i64 + self.overhead_tokens) as f64 * self.ratio).round_ties_even()
            as i64
    }

    /// The largest raw history estimate whose charged cost fits `limit`.
    pub(crate) fn allowance(&self, limit: i64) -> i64 {
        let room = (limit as f64 / self.ratio) as i64 - self.overhead_tokens;
        room.max(0)
    }
}
