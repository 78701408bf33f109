//! How the imported sessions of a run share their account's prompt cache:
//! the flags of `calibrate`'s bill check, `sweep` and `recommend`, which
//! price alike (`crate::cost::unlogged`).

use clap::Args;

use crate::cost::session::Settings;

/// `--per-session-cache` and `--log-alone`.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct AccountArgs {
    /// Price each imported session alone, with a cache of its own, instead
    /// of all of them on one timeline sharing the account's prompt cache (a
    /// new session or subagent reading the system prompt and tools another
    /// one cached). Example: --per-session-cache
    #[arg(long)]
    pub per_session_cache: bool,
    /// Price every request by what the logs show alone, without the
    /// account's cache beyond them: the share of cold requests that find the
    /// fixed prompt cached through work outside the logs, and the share of
    /// warm prefixes lost to early evictions, each session priced by the
    /// shares of the others. Example: --log-alone
    #[arg(long)]
    pub log_alone: bool,
}

impl AccountArgs {
    /// `cost` with these flags.
    pub fn settings(&self, cost: Settings) -> Settings {
        Settings {
            per_session: self.per_session_cache,
            log_alone: self.log_alone,
            ..cost
        }
    }
}
