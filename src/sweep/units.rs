//! What a sweep's token figures count, resolved once from what the replay
//! used and read by every surface that states it: `summary.json`, the
//! terminal, the report's charts and footer. A token of a smith config is
//! its estimator's count, scaled where the session's own ratio and
//! overhead were used (an imported log's usage says what its model
//! counted); the recorded run's are what the log measured.

use serde::{Deserialize, Serialize};

use super::plan::BaselineKind;
use crate::estimate::Estimator;

/// How the token figures of a sweep were counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUnits {
    /// The estimators of the configs, in the order first used.
    #[serde(deserialize_with = "names")]
    pub(crate) estimators: Vec<Estimator>,
    /// Some rows ran at a ratio of provider tokens per estimated token
    /// learned or saved per session, not at 1.
    pub(crate) ratio_per_session: bool,
    /// Some rows added an overhead fitted on the session's own requests.
    pub(crate) overhead_fitted: bool,
    /// The baseline is the recorded run: its tokens are the log's counts.
    pub(crate) baseline_measured: bool,
}

impl TokenUnits {
    /// The units of a sweep whose configs used `estimators`, where some
    /// rows ran at each session's own ratio (`ratio_per_session`) or with
    /// an overhead fitted on its requests (`overhead_fitted`; see
    /// `summary::CalibrationRecord`), against `baseline`.
    pub(crate) fn of(
        estimators: impl IntoIterator<Item = Estimator>,
        ratio_per_session: bool,
        overhead_fitted: bool,
        baseline: BaselineKind,
    ) -> TokenUnits {
        let mut seen: Vec<Estimator> = Vec::new();
        for e in estimators {
            if !seen.contains(&e) {
                seen.push(e);
            }
        }
        TokenUnits {
            estimators: seen,
            ratio_per_session,
            overhead_fitted,
            baseline_measured: baseline == BaselineKind::Recorded,
        }
    }

    /// Whether the baseline's tokens are what its logs measured.
    pub fn baseline_measured(&self) -> bool {
        self.baseline_measured
    }

    /// The estimators' counts, as `bytes/4` or `o200k tokens`.
    fn counted(&self) -> String {
        let names: Vec<&str> = self.estimators.iter().map(|e| e.counts()).collect();
        if names.is_empty() {
            Estimator::default().counts().to_string()
        } else {
            names.join(" or ")
        }
    }

    /// A short form for a chart's axis: `estimated: bytes/4`, `estimated:
    /// bytes/4 × each session's ratio; recorded: measured`.
    pub fn axis(&self) -> String {
        let mut out = format!("estimated: {}", self.counted());
        if self.ratio_per_session {
            out.push_str(" × each session's ratio");
        }
        if self.baseline_measured {
            out.push_str("; recorded: measured");
        }
        out
    }

    /// [`TokenUnits::axis`] for tokens of the history itself, before any
    /// ratio or overhead (what a stage reclaims).
    pub(crate) fn history_axis(&self) -> String {
        format!("estimated: {}", self.counted())
    }

    /// The sentence a page or the terminal states.
    pub fn describe(&self) -> String {
        let mut out = format!("tokens are {}", self.counted());
        match (self.ratio_per_session, self.overhead_fitted) {
            (true, true) => out.push_str(
                ", times the ratio each session's log shows of its model's tokens to them, plus the overhead fitted on its requests",
            ),
            (true, false) => {
                out.push_str(", times the ratio each session's log shows of its model's tokens to them")
            }
            (false, true) => out.push_str(", plus the overhead fitted on each session's requests"),
            (false, false) => out.push_str(" as smith counts them"),
        }
        if self.baseline_measured {
            out.push_str("; the recorded run's are the tokens its log measured");
        }
        out
    }
}

/// The estimators read back by their names (the estimator module gives
/// them no `Deserialize`).
fn names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Estimator>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|n| n.parse().map_err(serde::de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_of_the_count_is_named_only_when_used() {
        let smith = TokenUnits::of([Estimator::Bytes4], false, false, BaselineKind::Smith);
        assert_eq!(smith.axis(), "estimated: bytes/4");
        assert_eq!(smith.describe(), "tokens are bytes/4 as smith counts them");
        let recorded = TokenUnits::of(
            [Estimator::Bytes4, Estimator::O200k, Estimator::Bytes4],
            true,
            true,
            BaselineKind::Recorded,
        );
        assert_eq!(
            recorded.axis(),
            "estimated: bytes/4 or o200k tokens × each session's ratio; recorded: measured"
        );
        let text = recorded.describe();
        assert!(
            text.starts_with("tokens are bytes/4 or o200k tokens, times the ratio"),
            "{text}"
        );
        assert!(text.contains("plus the overhead fitted"), "{text}");
        assert!(text.ends_with("the tokens its log measured"), "{text}");
    }
}
