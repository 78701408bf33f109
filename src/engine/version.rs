//! Which of smith's compaction engines a config replays (docs/engine.md §4.9).
//!
//! smith's engine changes between releases; a verdict is only worth as much
//! as the engine it was reached under. Each version is a value of the
//! `engine` knob, so it is swept, labelled, exported, journalled and merged
//! like any other knob, and a sweep over two of them shows what a release
//! changes on recorded sessions before it ships.

use clap::{Arg, ArgMatches};
use serde::{Deserialize, Serialize};

use crate::knob::{Field, Holds, Value, ValueError};

/// One of smith's compaction engines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineVersion {
    /// smith 0.3 and 0.4: `context.cr` at the revision [`crate::smith_revision!`]
    /// names, byte for byte.
    #[default]
    V04,
    /// smith after its #118 fix (unreleased after 0.4.0): the pass that
    /// ignores the recency window also runs when no turn boundary helps,
    /// the boundary is chosen again afterwards, a prefix that is only a
    /// summary is refused and a summary longer than what it replaces is
    /// discarded.
    Next,
}

impl EngineVersion {
    /// Every version, oldest first.
    pub const ALL: [EngineVersion; 2] = [EngineVersion::V04, EngineVersion::Next];

    /// The engine of smith's latest release: every default and every parity
    /// test speak for it. Moves to [`EngineVersion::Next`] when smith
    /// releases #118.
    pub const RELEASED: EngineVersion = EngineVersion::V04;

    /// The name the command line takes and every output writes.
    pub const fn as_str(self) -> &'static str {
        match self {
            EngineVersion::V04 => "0.4",
            EngineVersion::Next => "next",
        }
    }

    /// What it is, for people: the outputs that name the engine.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            EngineVersion::V04 => concat!("smith 0.4, context.cr at ", crate::smith_revision!()),
            EngineVersion::Next => "smith after #118, unreleased",
        }
    }

    /// The number that holds it where knobs are numbers (a sweep's grid, a
    /// journal's config): its position in [`EngineVersion::ALL`].
    pub(crate) const fn code(self) -> f64 {
        self as usize as f64
    }

    /// The version a code holds; `None` for a number that holds none.
    pub(crate) fn from_code(v: f64) -> Option<EngineVersion> {
        EngineVersion::ALL.into_iter().find(|e| e.code() == v)
    }

    /// The version named `text` (case-insensitive), or why none is.
    pub fn parse(text: &str) -> Result<EngineVersion, ValueError> {
        EngineVersion::ALL
            .into_iter()
            .find(|e| e.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| unknown(text.trim()))
    }

    /// Whether the #118 rules apply.
    pub(crate) fn fixes_118(self) -> bool {
        self >= EngineVersion::Next
    }
}

impl std::fmt::Display for EngineVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for EngineVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EngineVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        EngineVersion::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Why `text` is no engine: the knob's error for a word it does not take,
/// listing those it does.
fn unknown(text: &str) -> ValueError {
    ValueError::NotNumberOrWord {
        text: text.to_string(),
        words: EngineVersion::ALL.map(EngineVersion::as_str).to_vec(),
    }
}

/// The knob's number check: no number is an engine, only its names are.
pub(crate) fn no_number(v: f64) -> Result<(), ValueError> {
    Err(unknown(&format!("{v}")))
}

impl Field for EngineVersion {
    fn text(&self) -> String {
        self.as_str().to_string()
    }
    fn typed(arg: Arg) -> Arg {
        arg
    }
    fn read(m: &ArgMatches, id: &str) -> Option<EngineVersion> {
        m.get_one::<EngineVersion>(id).copied()
    }
}

impl Holds<f64> for EngineVersion {
    fn value(&self) -> f64 {
        self.code()
    }
    /// Only a code passes the knob's checks, so any other number cannot
    /// reach here; it would leave the version as it was.
    fn put(&mut self, v: f64) {
        if let Some(e) = EngineVersion::from_code(v) {
            *self = e;
        }
    }
}

impl Holds<Value> for EngineVersion {
    fn value(&self) -> Value {
        Value::Number(self.code())
    }
    fn put(&mut self, v: Value) {
        if let Value::Number(v) = v {
            <EngineVersion as Holds<f64>>::put(self, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_round_trips_through_its_name_and_its_code() {
        for e in EngineVersion::ALL {
            assert_eq!(EngineVersion::parse(e.as_str()), Ok(e));
            assert_eq!(EngineVersion::from_code(e.code()), Some(e));
            let json = serde_json::to_string(&e).unwrap();
            assert_eq!(serde_json::from_str::<EngineVersion>(&json).unwrap(), e);
        }
        assert_eq!(EngineVersion::parse("NEXT"), Ok(EngineVersion::Next));
        assert!(EngineVersion::parse("0.5").is_err());
        assert_eq!(EngineVersion::from_code(0.5), None);
        assert_eq!(EngineVersion::default(), EngineVersion::RELEASED);
        // The knob's words are every version, each with its code.
        let words = crate::engine::knobs::Knob::Engine.words();
        assert_eq!(words.len(), EngineVersion::ALL.len());
        for (e, (w, v)) in EngineVersion::ALL.into_iter().zip(words) {
            assert_eq!((e.as_str(), e.code()), (*w, *v));
        }
    }
}
