//! smith's knobs: one entry each, from which `replay`'s and `transcript
//! show`'s flags, `sweep`'s list flags, the grid-file keys, the config label
//! and the knob columns of the data files are made (see [`crate::knob`]).
//! Their defaults are [`Config::default`]'s.

use super::budget::{LEARN, OWN_WINDOW};
use super::version::no_number;
use super::{Config, EngineVersion};
use crate::knob::{any, knob_table, whole, Kind, Label, ValueError};

/// Whom one of smith's knobs applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// smith's engine only: another policy runs under smith's default.
    Smith,
    /// Every policy: the window and the offline summary all share.
    Every,
    /// Every policy, and the baseline too: a fact about the provider or the
    /// agent's fixed prompt, not policy, so a sweep's baseline is smith's
    /// defaults under its first value.
    Measured,
    /// smith's engine only, and the baseline too: which smith runs is a
    /// fact about the user's install, so a sweep's baseline is smith's
    /// defaults under its first value (`--engine 0.4,next` compares the
    /// fix with the release it fixes).
    Release,
}

/// A ratio given as a number: above 0 (0 is how [`LEARN`] is held).
fn positive(v: f64) -> Result<(), ValueError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ValueError::Ratio(v))
    }
}

/// A window given as a number: whole and above 0 (0 is how [`OWN_WINDOW`]
/// is held).
fn window(v: f64) -> Result<(), ValueError> {
    count(v)?;
    if v == 0.0 {
        return Err(ValueError::Window(0));
    }
    Ok(())
}

/// A count of smith's: whole, and at most what a sweep's grid can hold.
fn count(v: f64) -> Result<(), ValueError> {
    whole(v, 0.0, u32::MAX as f64)
}

knob_table! {
    /// A knob of [`Config`] that a run can turn and a sweep can vary.
    pub enum Knob: Def<Config, Scope, f64>;
    MaxTokens(max_tokens: u64) {
        flag: "max-tokens",
        value_name: "N|own",
        help: "Context window in tokens (smith: {default}), or own: each session's model's window",
        list_help: "Context windows in tokens, or own (each session's model's window)",
        kind: Kind::Count,
        label: Label::Window,
        applies: Scope::Every,
        check: window,
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
        value_name: "F|learn",
        help: "Provider tokens per estimated token, or learn: smith's recalibration replayed from the session's billed prompts",
        list_help: "Provider tokens per estimated token, or learn (smith's recalibration)",
        kind: Kind::Factor,
        label: Label::Changed("r"),
        applies: Scope::Measured,
        check: positive,
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
    Engine(engine: EngineVersion) {
        flag: "engine",
        value_name: "NAME",
        help: "smith's engine: 0.4 (the latest release, e533ff4) or next (after #118)",
        list_help: "smith's engines: 0.4 (the latest release, e533ff4), next (after #118)",
        kind: Kind::Word,
        label: Label::Changed("engine "),
        applies: Scope::Release,
        check: no_number,
    }
}

/// The engine knob's words: each version's name and the code that holds it.
const ENGINE_WORDS: [(&str, f64); EngineVersion::ALL.len()] = [
    (EngineVersion::V04.as_str(), EngineVersion::V04.code()),
    (EngineVersion::Next.as_str(), EngineVersion::Next.code()),
];

/// A value given for a knob that takes words: a word's value, or a number
/// as typed (which may be refused even where it equals a word's value).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Typed {
    Word(f64),
    Number(f64),
}

impl Knob {
    /// The words the knob takes besides numbers, each with the value that
    /// holds it: the ratio's `learn`.
    pub(crate) fn words(self) -> &'static [(&'static str, f64)] {
        match self {
            Knob::Ratio => &[("learn", LEARN)],
            Knob::MaxTokens => &[("own", OWN_WINDOW as f64)],
            Knob::Engine => &ENGINE_WORDS,
            _ => &[],
        }
    }

    /// The word `v` stands for, if it is one of the knob's.
    pub(crate) fn word(self, v: f64) -> Option<&'static str> {
        self.words().iter().find(|(_, x)| *x == v).map(|(w, _)| *w)
    }

    /// `text` as a value of the knob: one of its words, else a number
    /// (checked later, with the config).
    pub(crate) fn parse_one(self, text: &str) -> Result<Typed, ValueError> {
        let text = text.trim();
        if let Some((_, v)) = self
            .words()
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(text))
        {
            return Ok(Typed::Word(*v));
        }
        text.parse()
            .map(Typed::Number)
            .map_err(|_| ValueError::NotNumberOrWord {
                text: text.to_string(),
                words: self.words().iter().map(|(w, _)| *w).collect(),
            })
    }

    /// Its value in `config` as text: its word, or the field's own
    /// `Display`.
    pub(crate) fn text(self, config: &Config) -> String {
        match self.word(self.get(config)) {
            Some(w) => w.to_string(),
            None => (self.def().text)(config),
        }
    }

    /// The command-line flag (without `--`), also a key of a grid file.
    pub(crate) fn flag(self) -> &'static str {
        self.def().flag
    }

    /// The field of [`Config`]: the column name in every output file, and
    /// also accepted as a key of a grid file.
    pub(crate) fn field(self) -> &'static str {
        self.def().field
    }

    /// The knob a grid-file key names: the flag or the field, with `-` or `_`.
    pub(crate) fn from_key(key: &str) -> Option<Knob> {
        let key = key.replace('-', "_");
        Knob::ALL
            .into_iter()
            .find(|k| k.flag().replace('-', "_") == key || k.field() == key)
    }

    /// What values it takes.
    pub(crate) fn kind(self) -> Kind {
        self.def().kind
    }

    /// Whether the knob only takes whole numbers.
    pub(crate) fn is_integer(self) -> bool {
        self.def().kind.is_integer()
    }

    /// Whether every policy runs under it, not only smith.
    pub(crate) fn is_shared(self) -> bool {
        matches!(self.def().applies, Scope::Every | Scope::Measured)
    }

    /// Whether a sweep's baseline takes its first value.
    pub(crate) fn baseline_takes_first(self) -> bool {
        matches!(self.def().applies, Scope::Measured | Scope::Release)
    }

    /// The knob's value in `config`.
    pub(crate) fn get(self, c: &Config) -> f64 {
        (self.def().get)(c)
    }

    /// Sets the knob in `config`; integer knobs take a value already checked
    /// to be a whole, non-negative number.
    pub(crate) fn set(self, c: &mut Config, v: f64) {
        (self.def().set)(c, v)
    }

    /// Rejects a value the knob cannot take, saying what it takes instead:
    /// its own check, then the config's with the value in smith's defaults.
    /// A word's value passes.
    pub(crate) fn check(self, v: f64) -> Result<(), ValueError> {
        if self.word(v).is_some() {
            return Ok(());
        }
        (self.def().check)(v)?;
        let mut c = Config::default();
        self.set(&mut c, v);
        c.validate()
    }
}
