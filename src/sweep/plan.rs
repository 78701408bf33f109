//! The configs of a sweep across policies.
//!
//! smith's knobs vary only for smith: its configs are the grid (see
//! [`super::grid`]), baseline first. Every other policy asked for with
//! `--policy` runs under the product of the knobs every policy shares (the
//! window `--max-tokens`, `--overhead`, `--ratio`, `--summary-tokens`, with
//! the grid's values) and its own knobs (each a list, default its
//! documented default). The baseline is always config 0, whether or not
//! smith is in `--policy`, so every figure has something to be compared
//! with: smith's config at the head of the grid, or the recorded run
//! ([`BaselineKind`]).

use serde::{Deserialize, Serialize};

use crate::engine::budget::OWN_WINDOW;
use crate::engine::Config;
use crate::knob::Kind;
use crate::policy::{Knobs, Policy, PolicyKnob, Setup, Value};

use super::grid::{self, Grid, Knob, SpecError};

/// The policies asked for, and the values asked for each policy's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    pub(crate) policies: Vec<Policy>,
    values: [Option<Vec<Value>>; PolicyKnob::ALL.len()],
}

impl Default for PolicySpec {
    /// smith alone.
    fn default() -> PolicySpec {
        PolicySpec {
            policies: vec![Policy::Smith],
            values: Default::default(),
        }
    }
}

impl PolicySpec {
    /// Parses `text` (a list, a range or both, as for smith's knobs; names
    /// are one value) as the values of `knob`. The error names the flag.
    pub fn set(&mut self, knob: PolicyKnob, text: &str) -> Result<(), SpecError> {
        let values = if knob.kind() == Kind::Names {
            vec![Value::Names(crate::knob::names(text))]
        } else {
            grid::parse_list(text, knob.is_integer(), |v| knob.check(&Value::Number(v)))
                .map_err(|e| SpecError::Flag {
                    flag: knob.flag(),
                    error: Box::new(e),
                })?
                .into_iter()
                .map(Value::Number)
                .collect()
        };
        self.values[knob as usize] = Some(values);
        Ok(())
    }

    /// The values given for `knob`, if any.
    pub(crate) fn get(&self, knob: PolicyKnob) -> Option<&[Value]> {
        self.values[knob as usize].as_deref()
    }

    /// The values of `knob` a sweep runs: those given, else the default.
    pub(crate) fn values(&self, knob: PolicyKnob) -> Vec<Value> {
        self.get(knob)
            .map_or_else(|| vec![knob.get(&Knobs::default())], <[Value]>::to_vec)
    }

    /// Knobs given for policies not in the list: worth a warning, since
    /// they change nothing.
    pub(crate) fn unused(&self) -> Vec<PolicyKnob> {
        PolicyKnob::ALL
            .into_iter()
            .filter(|k| self.get(*k).is_some() && !self.policies.contains(&k.policy()))
            .collect()
    }
}

/// What config 0, the config every other is compared with, is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    /// smith's config at the head of the grid: its defaults, or the
    /// user's own configuration.
    #[default]
    Smith,
    /// What happened: each session's agent's own run as its log recorded
    /// it (the `recorded` policy) at the session's own window. For smith's
    /// own sessions that is smith under its defaults.
    Recorded,
}

/// The setup of the recorded baseline under `grid`'s calibration: the
/// agent's own run at each session's own window.
pub(crate) fn recorded_baseline(grid: &Grid) -> Setup {
    let mut config = grid.configs[Grid::BASELINE];
    config.max_tokens = OWN_WINDOW;
    Setup::new(Policy::Recorded, config, Knobs::default())
}

/// Every config of a sweep, smith's and the other policies'.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Config 0 is the baseline; then smith's grid if smith was asked for;
    /// then each other policy's configs, in the order asked.
    #[serde(skip)]
    pub setups: Vec<Setup>,
    pub(crate) policies: Vec<Policy>,
    /// The values each asked-for policy's knobs took.
    pub(crate) policy_axes: Vec<(PolicyKnob, Vec<Value>)>,
    /// What config 0 is.
    pub(crate) baseline: BaselineKind,
}

impl Plan {
    /// Configs of `policy`.
    #[cfg(test)]
    pub(crate) fn count(&self, policy: Policy) -> usize {
        self.setups.iter().filter(|s| s.policy == policy).count()
    }
}

/// Builds the plan from smith's `grid` and the policies of `spec`, with
/// `baseline` as config 0; refuses one above `limit` configs before
/// building it.
pub fn build(
    grid: &Grid,
    spec: &PolicySpec,
    baseline: BaselineKind,
    limit: usize,
) -> Result<Plan, SpecError> {
    let shared: Vec<(Knob, Vec<f64>)> = grid
        .axes
        .iter()
        .filter(|(k, _)| k.is_shared())
        .cloned()
        .collect();
    let shared_len: usize = shared.iter().map(|(_, v)| v.len()).product();
    let mut total: usize = 0;
    let mut policy_axes = Vec::new();
    for &p in &spec.policies {
        let own: Vec<(PolicyKnob, Vec<Value>)> = PolicyKnob::ALL
            .into_iter()
            .filter(|k| k.policy() == p)
            .map(|k| (k, own_values(spec, k)))
            .collect();
        let n: usize = own.iter().map(|(_, v)| v.len()).product();
        let configs = if p == Policy::Smith {
            grid.configs.len()
        } else {
            shared_len
        };
        total = total.saturating_add(configs.saturating_mul(n));
        policy_axes.extend(own);
    }
    if !spec.policies.contains(&Policy::Smith) {
        total = total.saturating_add(1);
    }
    if baseline == BaselineKind::Recorded {
        total = total.saturating_add(1);
    }
    if total > limit {
        return Err(SpecError::TooManySetups {
            total,
            policies: spec.policies.len(),
            limit,
        });
    }
    let mut setups: Vec<Setup> = if spec.policies.contains(&Policy::Smith) {
        // smith's own knobs (compacting while the cache is cold) vary
        // outermost, smith's grid within.
        let axes = own_axes(&policy_axes, Policy::Smith);
        product(&axes)
            .into_iter()
            .flat_map(|point| {
                let knobs = own_knobs(&axes, &point);
                grid.configs.iter().map(move |c| Setup {
                    knobs: knobs.clone(),
                    ..Setup::smith(*c)
                })
            })
            .collect()
    } else {
        vec![Setup::smith(grid.configs[Grid::BASELINE])]
    };
    for &p in spec.policies.iter().filter(|&&p| p != Policy::Smith) {
        let axes: Vec<Axis> = shared
            .iter()
            .map(|(k, v)| Axis::Shared(*k, v.clone()))
            .chain(own_axes(&policy_axes, p))
            .collect();
        for point in product(&axes) {
            let mut config = Config::default();
            for (axis, &i) in axes.iter().zip(&point) {
                if let Axis::Shared(k, v) = axis {
                    k.set(&mut config, v[i]);
                }
            }
            let setup = Setup::new(p, config, own_knobs(&axes, &point));
            if !setups.contains(&setup) {
                setups.push(setup);
            }
        }
    }
    if baseline == BaselineKind::Recorded {
        let recorded = recorded_baseline(grid);
        setups.retain(|s| *s != recorded);
        setups.insert(0, recorded);
    }
    Ok(Plan {
        setups,
        policies: spec.policies.clone(),
        policy_axes,
        baseline,
    })
}

/// The values a sweep runs of `k`: those given, else its default; for
/// smith's own knobs the default always first, so that the baseline stays
/// smith's defaults.
fn own_values(spec: &PolicySpec, k: PolicyKnob) -> Vec<Value> {
    let values = spec.values(k);
    if k.policy() != Policy::Smith {
        return values;
    }
    let default = k.get(&Knobs::default());
    let mut out = vec![default.clone()];
    out.extend(values.into_iter().filter(|v| *v != default));
    out
}

/// The axes of `policy`'s own knobs.
fn own_axes(policy_axes: &[(PolicyKnob, Vec<Value>)], policy: Policy) -> Vec<Axis> {
    policy_axes
        .iter()
        .filter(|(k, _)| k.policy() == policy)
        .map(|(k, v)| Axis::Own(*k, v.clone()))
        .collect()
}

/// The knobs at `point` of `axes` (its own knobs set, the others default).
fn own_knobs(axes: &[Axis], point: &[usize]) -> Knobs {
    let mut knobs = Knobs::default();
    for (axis, &i) in axes.iter().zip(point) {
        if let Axis::Own(k, v) = axis {
            k.set(&mut knobs, v[i].clone());
        }
    }
    knobs
}

/// One dimension of a policy's product.
enum Axis {
    Shared(Knob, Vec<f64>),
    Own(PolicyKnob, Vec<Value>),
}

impl Axis {
    fn len(&self) -> usize {
        match self {
            Axis::Shared(_, v) => v.len(),
            Axis::Own(_, v) => v.len(),
        }
    }
}

/// Every combination of the axes' values, as the index of each axis's
/// value, the last axis varying fastest.
fn product(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..axis.len()).map(move |i| {
                    let mut p = prefix.clone();
                    p.push(i);
                    p
                })
            })
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::GridSpec;

    #[test]
    fn other_policies_take_the_windows_and_their_own_knobs_only() {
        let mut g = GridSpec::default();
        g.set(Knob::MaxTokens, "100000,200000").unwrap();
        g.set(Knob::CompactAt, "0.7,0.8").unwrap();
        let grid = grid::build(&g, 1000).unwrap();
        let mut spec = PolicySpec {
            policies: vec![Policy::Smith, Policy::Masking],
            ..PolicySpec::default()
        };
        spec.set(PolicyKnob::MaskWindow, "5,10").unwrap();
        let plan = build(&grid, &spec, BaselineKind::Smith, 1000).unwrap();
        assert_eq!(plan.setups[0], Setup::smith(Config::default()));
        assert_eq!(plan.count(Policy::Smith), grid.configs.len());
        let masking: Vec<String> = plan
            .setups
            .iter()
            .filter(|s| s.policy == Policy::Masking)
            .map(Setup::label)
            .collect();
        assert_eq!(
            masking,
            vec![
                "masking 100k M5",
                "masking 100k",
                "masking 200k M5",
                "masking 200k"
            ]
        );
    }

    #[test]
    fn the_baseline_stays_when_smith_is_not_asked_for() {
        let grid = grid::build(&GridSpec::default(), 10).unwrap();
        let spec = PolicySpec {
            policies: vec![Policy::Codex],
            ..PolicySpec::default()
        };
        let plan = build(&grid, &spec, BaselineKind::Smith, 10).unwrap();
        assert_eq!(plan.setups.len(), 2);
        assert!(plan.setups[0].policy == Policy::Smith && plan.setups[1].policy == Policy::Codex);
    }

    #[test]
    fn a_plan_above_the_limit_is_refused() {
        let grid = grid::build(&GridSpec::default(), 10).unwrap();
        let mut spec = PolicySpec {
            policies: vec![Policy::Masking],
            ..PolicySpec::default()
        };
        spec.set(PolicyKnob::MaskWindow, "1..20").unwrap();
        let err = build(&grid, &spec, BaselineKind::Smith, 10).unwrap_err();
        assert!(matches!(err, SpecError::TooManySetups { total: 21, .. }));
        let err = err.to_string();
        assert!(err.contains("21 configs"), "{err}");
    }
}
