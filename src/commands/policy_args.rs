//! The policy flags shared by `replay`, `transcript show --at` and `sweep`:
//! `--policy` and each policy's own knobs, declared once. `replay` and
//! `show` take one value per flag; `sweep` takes lists and ranges, as for
//! smith's knobs.

use anyhow::Result;
use clap::Args;

use crate::engine::knobs::Knob;
use crate::engine::Config;
use crate::policy::{Knobs, Policy, PolicyKnob, Setup};
use crate::sweep::plan::PolicySpec;

use super::knob_args::Given;
use super::usage;

/// `--policy` and the knobs of the policies other than smith.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct PolicyArgs {
    // Help made by `policy_help`: the policies and the shared knobs it
    // names come from their tables.
    #[arg(long, value_name = "NAME", help_heading = "Policies", help = policy_help())]
    pub(crate) policy: Option<String>,
    /// Each policy's knobs, as text (from the knob table).
    #[command(flatten)]
    pub(crate) knobs: Given<PolicyKnob>,
}

/// `a, b, c or d`.
fn either(items: &[String], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., end] => format!("{} {last} {end}", init.join(", ")),
    }
}

/// Help of `--policy`: every policy, and which of smith's knobs every policy
/// runs under (the table's shared ones).
fn policy_help() -> String {
    let policies: Vec<String> = Policy::ALL.iter().map(|p| p.to_string()).collect();
    let shared: Vec<String> = Knob::ALL
        .into_iter()
        .filter(|k| k.is_shared())
        .map(|k| format!("--{}", k.flag()))
        .collect();
    format!(
        "Compaction policy: {} (sweep: a list) [default: {}]. smith's knobs apply to smith alone; {} to every policy",
        either(&policies, "or"),
        Policy::Smith,
        either(&shared, "and"),
    )
}

impl PolicyArgs {
    /// For `replay` and `show --at`: one policy under `config`, one value
    /// per knob, or a usage error.
    pub(crate) fn setup(&self, config: Config) -> Result<Setup> {
        let policy = match &self.policy {
            None => Policy::Smith,
            Some(text) => {
                let list = Policy::parse_list(text).map_err(|e| usage(format!("--policy: {e}")))?;
                match list.as_slice() {
                    [one] => *one,
                    _ => {
                        return Err(usage(format!(
                            "--policy: give one policy here, not {text:?}; `sweep --policy` compares several"
                        )))
                    }
                }
            }
        };
        let mut knobs = Knobs::default();
        for (knob, text) in &self.knobs.0 {
            let knob = *knob;
            match knob.parse_one(text) {
                Some(Ok(v)) => knob.set(&mut knobs, v),
                Some(Err(e)) => return Err(usage(format!("--{}: {e}", knob.flag()))),
                None => {
                    return Err(usage(format!(
                        "--{}: give one value here, not {text:?}; `sweep` takes lists",
                        knob.flag()
                    )))
                }
            }
        }
        let setup = Setup::new(policy, config, knobs);
        setup.validate().map_err(usage)?;
        Ok(setup)
    }

    /// For `sweep`: the policies and each knob's values, or a usage error.
    pub(crate) fn spec(&self) -> Result<PolicySpec> {
        let mut spec = PolicySpec::default();
        if let Some(text) = &self.policy {
            spec.policies =
                Policy::parse_list(text).map_err(|e| usage(format!("--policy: {e}")))?;
        }
        for (knob, text) in &self.knobs.0 {
            spec.set(*knob, text).map_err(usage)?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knob::Shown;
    use clap::Command;

    #[test]
    fn every_knob_is_a_flag_whose_help_states_its_default() {
        let cmd = PolicyArgs::augment_args(Command::new("t"));
        let defaults = Knobs::default();
        for k in PolicyKnob::ALL {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long() == Some(k.flag()))
                .unwrap_or_else(|| panic!("no --{}", k.flag()));
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            let default = format!("[default: {}]", k.get(&defaults).shown(k.kind()));
            assert!(help.contains(&default), "--{}: {help}", k.flag());
        }
    }

    #[test]
    fn replay_takes_one_policy_and_one_value_per_knob() {
        let args = PolicyArgs {
            policy: Some("masking".into()),
            knobs: Given(vec![(PolicyKnob::MaskWindow, "4".into())]),
        };
        let s = args.setup(Config::default()).unwrap();
        assert_eq!((s.policy, s.knobs.mask_window), (Policy::Masking, 4));
        let two = PolicyArgs {
            policy: Some("masking,codex".into()),
            ..PolicyArgs::default()
        };
        assert!(two.setup(Config::default()).is_err());
        let list = PolicyArgs {
            knobs: Given(vec![(PolicyKnob::MaskWindow, "4,5".into())]),
            ..PolicyArgs::default()
        };
        assert!(list.setup(Config::default()).is_err());
    }
}
