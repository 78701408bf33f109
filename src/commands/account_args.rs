//! How the imported sessions of a run share their account's prompt cache:
//! the flags of `calibrate`'s bill check, `sweep` and `recommend`, which
//! price alike (`crate::cost::bill::unlogged`).

use clap::Args;

use crate::cost::bill::{Part, PartError, Parts};
use crate::cost::session::Settings;

/// `--per-session-cache`, `--log-alone` and `--part`.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct AccountArgs {
    /// Price each imported session alone, with a cache of its own, instead
    /// of all of them on one timeline sharing the account's prompt cache (a
    /// new session or subagent reading the system prompt and tools another
    /// one cached). Each alone is the default (the shared_cache part is off
    /// unless --part shared_cache=on). Example: --per-session-cache
    #[arg(long, help_heading = "Cost model")]
    pub(crate) per_session_cache: bool,
    /// Price every request by what the logs show alone, without the
    /// account's cache beyond them: the share of cold requests that find the
    /// fixed prompt cached through work outside the logs, and the share of
    /// warm prefixes lost to early evictions, each session priced by the
    /// shares of the others (eviction_share is off by default). Example:
    /// --log-alone
    #[arg(long, help_heading = "Cost model")]
    pub(crate) log_alone: bool,
    /// Switch one optional part of the price model on or off, NAME=on|off
    /// (repeat for several): shared_cache, cold_read_share, eviction_share,
    /// lifetime_tier, fixed_prompt_fit, fixed_prompt_per_model,
    /// compaction_cause, rewrite_cause, parent_links. The defaults are what
    /// `calibrate --validate` supports on sources held out of the fit. The
    /// bill check and every replay are priced by the same meter, so a
    /// switch moves both alike.
    /// Example: --part eviction_share=on
    #[arg(long, value_name = "NAME=on|off", value_parser = part_switch, help_heading = "Cost model")]
    pub(crate) part: Vec<String>,
}

fn part_switch(spec: &str) -> Result<String, PartError> {
    Parts::default().apply(spec).map(|_| spec.to_string())
}

impl AccountArgs {
    /// `cost` with these flags.
    pub(crate) fn settings(&self, cost: Settings) -> Settings {
        let mut parts = cost.parts;
        if self.per_session_cache {
            parts = parts.with(Part::SharedCache, false);
        }
        if self.log_alone {
            parts = parts
                .with(Part::ColdReadShare, false)
                .with(Part::EvictionShare, false);
        }
        for spec in &self.part {
            // Checked by the parser already.
            parts = parts.apply(spec).unwrap_or(parts);
        }
        Settings { parts, ..cost }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    /// `--part`'s help lists the parts by hand; every part is in it.
    #[test]
    fn the_part_flag_names_every_part() {
        let cmd = AccountArgs::augment_args(clap::Command::new("t"));
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == "part")
            .expect("--part");
        let help = arg.get_help().expect("help").to_string();
        for p in Part::ALL {
            assert!(
                help.contains(p.as_str()),
                "--part help misses {}",
                p.as_str()
            );
        }
    }
}
