//! The ratio smith learns (`Agent#recalibrate`), replayed.
//!
//! smith does not hold its ratio fixed. After every response that carries
//! usage, and before the response joins the history, it divides the prompt
//! tokens the provider billed (input + cache read + cache write) by its own
//! estimate of everything it sent (history, system prompt and tool
//! definitions: in the replay, the history's estimate plus the overhead),
//! moves its ratio [`RATIO_SMOOTHING`] of the way towards that observation
//! and clamps it to [[`RATIO_MIN`], [`RATIO_MAX`]]. The new ratio is in force
//! from the next request on. A session starts from the `context_ratio` its
//! `session.json` saved, or 1.0.
//!
//! [`schedule`] turns a session's observations into the ratio in force at
//! each request. The observation of request `k` divides what was billed for
//! the history the model really saw by smith's estimate of *that* history
//! (see `crate::calibrate::points`), not of the replay's: the provider
//! billed only what was sent, and a replay that compacted elsewhere sent
//! something the bill says nothing about. While the replay's history is the
//! recorded one the two are the same number, so a replay of smith at the
//! config it ran is smith's recalibration to the bit.

use serde::{Deserialize, Serialize};

pub(crate) use super::budget::LEARN;
pub(crate) use super::constants::{RATIO_MAX, RATIO_MIN, RATIO_SMOOTHING};

/// What one request of the record tells the ratio: smith's raw estimate of
/// the history the model saw, and the prompt tokens the provider billed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Observation {
    /// 0-based request.
    pub(crate) request: usize,
    /// `bytes / 4` of the history sent, without the overhead.
    pub(crate) history_tokens: u64,
    /// Input + cache read + cache write, as billed.
    pub(crate) reported: u64,
}

/// smith's step: the ratio after a response that billed `reported` prompt
/// tokens for a request smith estimated at `estimated` tokens. Without
/// either figure the ratio stays as it was, as smith's does.
pub fn recalibrate(ratio: f64, estimated: u64, reported: u64) -> f64 {
    if estimated == 0 || reported == 0 {
        return ratio;
    }
    let observed = reported as f64 / estimated as f64;
    let blended = ratio + (observed - ratio) * RATIO_SMOOTHING;
    blended.clamp(RATIO_MIN, RATIO_MAX)
}

/// The ratio in force at each of `requests` requests: `start` at the first,
/// then after each observed request the ratio [`recalibrate`] makes of it,
/// its estimate being the history's plus `overhead` (the system prompt and
/// tool definitions smith also counts). `observations` are in request order;
/// requests without one leave the ratio as it was.
pub(crate) fn schedule(
    start: f64,
    requests: usize,
    observations: &[Observation],
    overhead: u64,
) -> Vec<f64> {
    let mut out = Vec::with_capacity(requests);
    let mut ratio = start;
    let mut next = observations.iter().peekable();
    for k in 0..requests {
        out.push(ratio);
        while let Some(o) = next.next_if(|o| o.request <= k) {
            if o.request == k {
                ratio = recalibrate(ratio, o.history_tokens + overhead, o.reported);
            }
        }
    }
    out
}

/// How the ratio of a replay was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RatioMode {
    /// The config's number.
    Fixed,
    /// The `context_ratio` the session saved, held for the whole replay.
    Saved,
    /// Learned request by request as smith learns it.
    Learned,
}

impl RatioMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RatioMode::Fixed => "fixed",
            RatioMode::Saved => "saved",
            RatioMode::Learned => "learned",
        }
    }
}

/// Where a replay's overhead came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OverheadMode {
    /// The config's number.
    Config,
    /// The agent's fixed prompt fitted on the session's own requests.
    Fitted,
}

impl OverheadMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OverheadMode::Config => "config",
            OverheadMode::Fitted => "fitted",
        }
    }
}

/// What a replay ran under, when the session chose it: every output that
/// carries one says which ratio and overhead were used.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Calibration {
    pub(crate) ratio_mode: RatioMode,
    /// The ratio of the first request (the one held, when not learned).
    pub(crate) ratio_start: f64,
    /// The ratio in force at the last request.
    pub(crate) ratio_end: f64,
    /// Requests whose billed prompt the ratio learned from.
    pub(crate) observations: usize,
    pub(crate) overhead_mode: OverheadMode,
    pub(crate) overhead_tokens: u64,
    /// The window replayed under: the config's, or the session's own where
    /// the config's is [`super::budget::OWN_WINDOW`] (`own_window`).
    #[serde(default)]
    pub(crate) window_tokens: u64,
    #[serde(default)]
    pub(crate) own_window: bool,
}

impl Calibration {
    /// One line for people: `ratio learned 1.000 → 1.512 from 212 requests,
    /// overhead 17165 (fitted)`.
    pub(crate) fn describe(&self) -> String {
        let ratio = match self.ratio_mode {
            RatioMode::Learned => format!(
                "ratio learned {:.3} → {:.3} from {} request{}",
                self.ratio_start,
                self.ratio_end,
                self.observations,
                if self.observations == 1 { "" } else { "s" }
            ),
            RatioMode::Saved => format!("ratio {} (saved by the session)", self.ratio_start),
            RatioMode::Fixed => format!("ratio {}", self.ratio_start),
        };
        let window = if self.own_window {
            format!(
                "window {} (the session's), ",
                crate::format::window(self.window_tokens)
            )
        } else {
            String::new()
        };
        format!(
            "{window}{ratio}, overhead {} ({})",
            crate::format::whole(self.overhead_tokens),
            self.overhead_mode.as_str()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_moves_thirty_percent_of_the_way_and_stays_within_the_bounds() {
        // Observed 150 / 100 = 1.5 from 1.0: 1.0 + 0.5 × 0.3.
        assert_eq!(recalibrate(1.0, 100, 150), 1.0 + 0.5 * 0.3);
        // Observed 5.0: 1.0 + 4.0 × 0.3 = 2.2, clamped.
        assert_eq!(recalibrate(1.0, 100, 500), 2.0);
        // Observed 0.5 from 1.2: 1.2 − 0.21 = 0.99, clamped.
        assert_eq!(recalibrate(1.2, 100, 50), 1.0);
        // Nothing billed or nothing estimated: no step.
        assert_eq!(recalibrate(1.4, 0, 50), 1.4);
        assert_eq!(recalibrate(1.4, 100, 0), 1.4);
    }

    #[test]
    fn each_ratio_is_in_force_from_the_request_after_its_observation() {
        let obs = |request, history_tokens, reported| Observation {
            request,
            history_tokens,
            reported,
        };
        // Overhead 100: request 0 estimates 100 + 100, billed 400 (2.0);
        // request 2 estimates 300 + 100, billed 600 (1.5).
        let s = schedule(1.0, 4, &[obs(0, 100, 400), obs(2, 300, 600)], 100);
        let r1 = 1.0 + (2.0 - 1.0) * 0.3;
        let r3 = r1 + (1.5 - r1) * 0.3;
        assert_eq!(s, vec![1.0, r1, r1, r3]);
    }
}
