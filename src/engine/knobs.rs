//! smith's knobs: one entry each, from which `replay`'s and `transcript
//! show`'s flags, `sweep`'s list flags, the grid-file keys, the config label
//! and the knob columns of the data files are made (see [`crate::knob`]).
//! Their defaults are [`Config::default`]'s.

use super::Config;
use crate::knob::{any, knob_table, whole, Kind, Label};

/// Whom one of smith's knobs applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// smith's engine only: another policy runs under smith's default.
    Smith,
    /// Every policy: the window and the offline summary all share.
    Every,
    /// Every policy, and the baseline too: a fact about the provider or the
    /// agent's fixed prompt, not policy, so a sweep's baseline is smith's
    /// defaults under its first value (issue 16.5).
    Measured,
}

/// A count of smith's: whole, and at most what a sweep's grid can hold.
fn count(v: f64) -> Result<(), String> {
    whole(v, 0.0, u32::MAX as f64)
}

knob_table! {
    /// A knob of [`Config`] that a run can turn and a sweep can vary.
    pub enum Knob: Def<Config, Scope>;
    MaxTokens(max_tokens: u64) {
        flag: "max-tokens",
        value_name: "N",
        help: "Context window in tokens (smith: {default})",
        list_help: "Context windows in tokens",
        kind: Kind::Count,
        label: Label::Window,
        applies: Scope::Every,
        check: count,
    }
    CompactAt(compact_at: f64) {
        flag: "compact-at",
        value_name: "F",
        help: "Compact when a request would exceed this fraction of the window",
        list_help: "Fractions of the window at which compaction acts",
        kind: Kind::Fraction,
        label: Label::Fraction,
        applies: Scope::Smith,
        check: any,
    }
    CompactTo(compact_to: f64) {
        flag: "compact-to",
        value_name: "F",
        help: "Compact down to this fraction of the window",
        list_help: "Fractions of the window compaction aims at",
        kind: Kind::Fraction,
        label: Label::Fraction,
        applies: Scope::Smith,
        check: any,
    }
    ResultCap(result_cap: usize) {
        flag: "result-cap",
        value_name: "BYTES",
        help: "Bytes of a stale tool result kept by truncation",
        list_help: "",
        kind: Kind::Count,
        label: Label::Always("cap"),
        applies: Scope::Smith,
        check: count,
    }
    Window(window_turns: usize) {
        flag: "window",
        value_name: "TURNS",
        help: "Real turns that the lossy stages never touch",
        list_help: "Real turns the lossy stages leave alone",
        kind: Kind::Count,
        label: Label::Always("w"),
        applies: Scope::Smith,
        check: count,
    }
    Overhead(overhead_tokens: u64) {
        flag: "overhead",
        value_name: "N",
        help: "Tokens of every request that are not history (system prompt, tools)",
        list_help: "Tokens of every request that are not history",
        kind: Kind::Count,
        label: Label::Changed("oh"),
        applies: Scope::Measured,
        check: count,
    }
    Ratio(ratio: f64) {
        flag: "ratio",
        value_name: "F",
        help: "Provider tokens per estimated token",
        list_help: "",
        kind: Kind::Factor,
        label: Label::Changed("r"),
        applies: Scope::Measured,
        check: any,
    }
    SummaryTokens(summary_tokens: u64) {
        flag: "summary-tokens",
        value_name: "N",
        help: "Size of the offline summary stand-in; 0 plays a failing summarizer",
        list_help: "Sizes of the offline summary stand-in; 0 plays a failing summarizer",
        kind: Kind::Count,
        label: Label::Changed("sum"),
        applies: Scope::Every,
        check: count,
    }
}

impl Knob {
    /// The command-line flag (without `--`), also a key of a grid file.
    pub fn flag(self) -> &'static str {
        self.def().flag
    }

    /// The field of [`Config`]: the column name in every output file, and
    /// also accepted as a key of a grid file.
    pub fn field(self) -> &'static str {
        self.def().field
    }

    /// The knob a grid-file key names: the flag or the field, with `-` or `_`.
    pub fn from_key(key: &str) -> Option<Knob> {
        let key = key.replace('-', "_");
        Knob::ALL
            .into_iter()
            .find(|k| k.flag().replace('-', "_") == key || k.field() == key)
    }

    /// Whether the knob only takes whole numbers.
    pub fn is_integer(self) -> bool {
        self.def().kind.is_integer()
    }

    /// Whether every policy runs under it, not only smith.
    pub fn is_shared(self) -> bool {
        self.def().applies != Scope::Smith
    }

    /// Whether a sweep's baseline takes its first value.
    pub fn is_measured(self) -> bool {
        self.def().applies == Scope::Measured
    }

    /// The knob's value in `config`.
    pub fn get(self, c: &Config) -> f64 {
        (self.def().get)(c)
    }

    /// Sets the knob in `config`; integer knobs take a value already checked
    /// to be a whole, non-negative number.
    pub fn set(self, c: &mut Config, v: f64) {
        (self.def().set)(c, v)
    }

    /// Rejects a value the knob cannot take, saying what it takes instead:
    /// its own check, then the config's with the value in smith's defaults.
    pub fn check(self, v: f64) -> Result<(), String> {
        (self.def().check)(v)?;
        let mut c = Config::default();
        self.set(&mut c, v);
        c.validate()
    }
}
