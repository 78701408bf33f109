//! The policy flags shared by `replay`, `transcript show --at` and `sweep`:
//! `--policy` and each policy's own knobs, declared once. `replay` and
//! `show` take one value per flag; `sweep` takes lists and ranges, as for
//! smith's knobs.

use anyhow::Result;
use clap::Args;

use crate::engine::Config;
use crate::policy::{Knobs, Policy, PolicyKnob, Setup};
use crate::sweep::plan::PolicySpec;

use super::usage;

/// `--policy` and the knobs of the policies other than smith.
#[derive(Args, Clone, Debug, Default)]
pub struct PolicyArgs {
    /// Compaction policy: smith, masking, claude-code, codex, opencode or
    /// context-editing (sweep: a list) [default: smith]. smith's knobs
    /// apply to smith alone; --max-tokens, --overhead, --ratio and
    /// --summary-tokens to every policy
    #[arg(long, value_name = "NAME", help_heading = "Policies")]
    pub policy: Option<String>,
    /// masking: tool results kept whole, the most recent [default: 10]
    #[arg(long, value_name = "M", help_heading = "Policies")]
    pub mask_window: Option<String>,
    /// claude-code: clearable results kept whole, the most recent
    /// [default: 5]
    #[arg(long, value_name = "N", help_heading = "Policies")]
    pub claude_code_keep: Option<String>,
    /// claude-code: compact at the window minus this many tokens (20000
    /// summary output + 13000 buffer) [default: 33000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub claude_code_reserve: Option<String>,
    /// codex: bytes a tool result keeps on arrival [default: 10240]
    #[arg(long, value_name = "BYTES", help_heading = "Policies")]
    pub codex_cap_bytes: Option<String>,
    /// codex: lines a tool result keeps on arrival, half from each end
    /// [default: 256]
    #[arg(long, value_name = "LINES", help_heading = "Policies")]
    pub codex_cap_lines: Option<String>,
    /// codex: compact at this fraction of the window [default: 0.9]
    #[arg(long, value_name = "F", help_heading = "Policies")]
    pub codex_compact_at: Option<String>,
    /// codex: tokens of recent user messages kept beside the summary
    /// [default: 20000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub codex_user_tokens: Option<String>,
    /// opencode: summarise at the window minus this many tokens
    /// [default: 20000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub opencode_reserve: Option<String>,
    /// opencode: tokens of the newest tool output pruning protects
    /// [default: 40000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub prune_protect: Option<String>,
    /// opencode: prune only if that reclaims more than this many tokens
    /// [default: 20000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub prune_minimum: Option<String>,
    /// context-editing: clear above this many input tokens
    /// [default: 100000]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub context_editing_trigger: Option<String>,
    /// context-editing: most recent tool results kept [default: 3]
    #[arg(long, value_name = "N", help_heading = "Policies")]
    pub clear_keep: Option<String>,
    /// context-editing: clear only if that reclaims at least this many
    /// tokens [default: 0]
    #[arg(long, value_name = "TOKENS", help_heading = "Policies")]
    pub clear_at_least: Option<String>,
    /// smith: at a request whose gap since the previous one exceeds the
    /// cache lifetime (the cache is cold, the prompt is written again
    /// anyway), compact from this fraction of the window; needs the
    /// records' times (imported sessions), 0 is off, e.g.
    /// --cold-compact-at 0.55 [default: 0]
    #[arg(long, value_name = "F", help_heading = "Policies")]
    pub cold_compact_at: Option<String>,
    /// context-editing: tools whose results are never cleared,
    /// comma-separated (any case) [default: none]
    #[arg(long, value_name = "TOOLS", help_heading = "Policies")]
    pub exclude_tools: Option<String>,
}

impl PolicyArgs {
    /// Each knob's flag value, if given.
    fn given(&self) -> [(PolicyKnob, &Option<String>); 14] {
        use PolicyKnob::*;
        [
            (MaskWindow, &self.mask_window),
            (ClaudeCodeKeep, &self.claude_code_keep),
            (ClaudeCodeReserve, &self.claude_code_reserve),
            (CodexCapBytes, &self.codex_cap_bytes),
            (CodexCapLines, &self.codex_cap_lines),
            (CodexCompactAt, &self.codex_compact_at),
            (CodexUserTokens, &self.codex_user_tokens),
            (OpencodeReserve, &self.opencode_reserve),
            (PruneProtect, &self.prune_protect),
            (PruneMinimum, &self.prune_minimum),
            (ContextEditingTrigger, &self.context_editing_trigger),
            (ClearKeep, &self.clear_keep),
            (ClearAtLeast, &self.clear_at_least),
            (ColdCompactAt, &self.cold_compact_at),
        ]
    }

    fn exclude_tools(&self) -> Vec<String> {
        self.exclude_tools
            .as_deref()
            .map(|t| {
                t.split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// For `replay` and `show --at`: one policy under `config`, one value
    /// per knob, or a usage error.
    pub fn setup(&self, config: Config) -> Result<Setup> {
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
        let mut knobs = Knobs {
            exclude_tools: self.exclude_tools(),
            ..Knobs::default()
        };
        for (knob, text) in self.given() {
            let Some(text) = text else { continue };
            let mut spec = PolicySpec::default();
            spec.set(knob, text).map_err(usage)?;
            match spec.get(knob) {
                Some([v]) => knob.set(&mut knobs, *v),
                _ => {
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
    pub fn spec(&self) -> Result<PolicySpec> {
        let mut spec = PolicySpec::default();
        if let Some(text) = &self.policy {
            spec.policies =
                Policy::parse_list(text).map_err(|e| usage(format!("--policy: {e}")))?;
        }
        for (knob, text) in self.given() {
            if let Some(text) = text {
                spec.set(knob, text).map_err(usage)?;
            }
        }
        spec.exclude_tools = self.exclude_tools();
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
            let default = format!("[default: {}]", k.get(&defaults));
            assert!(help.contains(&default), "--{}: {help}", k.flag());
        }
    }

    #[test]
    fn replay_takes_one_policy_and_one_value_per_knob() {
        let args = PolicyArgs {
            policy: Some("masking".into()),
            mask_window: Some("4".into()),
            ..PolicyArgs::default()
        };
        let s = args.setup(Config::default()).unwrap();
        assert_eq!((s.policy, s.knobs.mask_window), (Policy::Masking, 4));
        let two = PolicyArgs {
            policy: Some("masking,codex".into()),
            ..PolicyArgs::default()
        };
        assert!(two.setup(Config::default()).is_err());
        let list = PolicyArgs {
            mask_window: Some("4,5".into()),
            ..PolicyArgs::default()
        };
        assert!(list.setup(Config::default()).is_err());
    }
}
