//! The estimator as a knob of a sweep.
//!
//! smith's configs run once per estimator asked for; the other policies
//! estimate bytes / 4 only and run once. The baseline stays smith's defaults
//! under bytes4, so every figure is compared with what smith does today.
//! Per session, each tokenizer counts the record's texts once and every
//! config with that estimator shares the counts.

use std::sync::Arc;

use crate::engine::marks::RecordMarks;
use crate::engine::Compactor;
use crate::estimate::{Estimator, Measure};
use crate::policy::{Policy, Setup};
use crate::transcript::measured::AgentRun;
use crate::transcript::Message;

/// `setups` (the baseline first) with each of smith's setups repeated under
/// every estimator of `estimators`, estimator by estimator in the order
/// given. A list without bytes4 keeps only the baseline under bytes4; the
/// other policies' setups are kept once as they are.
pub(crate) fn expand(setups: &[Setup], estimators: &[Estimator]) -> Vec<Setup> {
    if estimators == [Estimator::Bytes4] || estimators.is_empty() {
        return setups.to_vec();
    }
    let mut out: Vec<Setup> = Vec::with_capacity(setups.len() * estimators.len());
    let mut push = |s: Setup| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    if let Some(baseline) = setups.first() {
        push(baseline.clone());
    }
    for &e in estimators {
        for s in setups.iter().filter(|s| s.policy == Policy::Smith) {
            push(s.clone().with_estimator(e));
        }
    }
    for s in setups.iter().filter(|s| s.policy != Policy::Smith) {
        push(s.clone());
    }
    out
}

/// For each config, the compactor bound to this session (`None`: the
/// config's shared compactor serves): one whose estimator is not bytes4
/// gets the session's counts, each estimator counting the session once
/// whatever the number of configs; and when the grid replays the session
/// under two or more of smith's configs, each of them is told which of the
/// record's results hold a marker, searched once (`engine::marks`); the
/// `recorded` policy gets the session's own run (`run`).
pub(crate) fn bind(
    configs: &[Setup],
    messages: &[Arc<Message>],
    run: Option<&Arc<AgentRun>>,
) -> Vec<Option<Box<dyn Compactor>>> {
    let smith = configs.iter().filter(|s| s.policy == Policy::Smith).count();
    let marks = (smith >= 2).then(|| Arc::new(RecordMarks::of(messages)));
    let mut measures: Vec<(Estimator, Measure)> = Vec::new();
    configs
        .iter()
        .map(|s| {
            if s.policy == Policy::Recorded {
                return Some(s.compactor_for(messages, run));
            }
            let shared =
                s.estimator == Estimator::Bytes4 && (marks.is_none() || s.policy != Policy::Smith);
            if shared {
                return None;
            }
            let measure = match measures.iter().find(|(e, _)| *e == s.estimator) {
                Some((_, m)) => m.clone(),
                None => {
                    let m = Measure::for_session(s.estimator, messages);
                    measures.push((s.estimator, m.clone()));
                    m
                }
            };
            Some(s.compactor_measured(measure, marks.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Config;

    #[test]
    fn expand_keeps_the_baseline_first_and_other_policies_once() {
        let base = Setup::smith(Config::default());
        let other = Setup::smith(Config {
            compact_at: 0.7,
            ..Config::default()
        });
        let masking = Setup::new(Policy::Masking, Config::default(), Default::default());
        let setups = vec![base.clone(), other.clone(), masking.clone()];
        let out = expand(&setups, &[Estimator::Bytes4, Estimator::O200k]);
        assert_eq!(
            out,
            vec![
                base.clone(),
                other.clone(),
                base.clone().with_estimator(Estimator::O200k),
                other.clone().with_estimator(Estimator::O200k),
                masking.clone(),
            ]
        );
        let only = expand(&setups, &[Estimator::Cl100k]);
        assert_eq!(only[0], base);
        assert_eq!(only.len(), 4);
        assert!(only[1..3].iter().all(|s| s.estimator == Estimator::Cl100k));
        assert_eq!(expand(&setups, &[Estimator::Bytes4]), setups);
    }
}
