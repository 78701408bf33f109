//! The optional parts of the price model, each of which can be switched
//! off: what `calibrate --validate` holds against sources it was not fitted
//! on, and what `--part NAME=on|off` changes. A part's default is what that
//! validation supports (docs/cost-model.md gives the table).

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// One optional part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Part {
    /// The account's one cache: a session's cold request reads the fixed
    /// prompt another logged session kept warm (off: each session has a cache of its own).
    SharedCache,
    /// The share of cold requests that find the fixed prompt cached by work
    /// outside the logs, fitted on the other sessions.
    ColdReadShare,
    /// The share of warm prefixes lost to early evictions per idle gap,
    /// fitted on the other sessions.
    EvictionShare,
    /// The cache lifetime read from the tier each request's record shows
    /// (off: five minutes throughout, unless `--cache-ttl` names one).
    LifetimeTier,
    /// The agent's fixed prompt fitted from the recorded cache reads of the
    /// sessions of its format and kind (off: the format's overhead × ratio).
    FixedPromptFit,
    /// That fit made per model as well as per format and kind.
    FixedPromptPerModel,
    /// The agent's own compaction leaves only the fixed prompt cached.
    CompactionCause,
    /// A prompt rewrite (a background task's notification) leaves only the
    /// fixed prompt cached.
    RewriteCause,
    /// A compaction agent reads its parent's cached context (off: a cold
    /// start like any session's).
    ParentLinks,
}

impl Part {
    pub(crate) const ALL: [Part; 9] = [
        Part::SharedCache,
        Part::ColdReadShare,
        Part::EvictionShare,
        Part::LifetimeTier,
        Part::FixedPromptFit,
        Part::FixedPromptPerModel,
        Part::CompactionCause,
        Part::RewriteCause,
        Part::ParentLinks,
    ];

    /// The parts off unless asked for: those the held-out validation found
    /// to make the error on an unseen source worse.
    const OFF_BY_DEFAULT: [Part; 4] = [
        Part::SharedCache,
        Part::EvictionShare,
        Part::FixedPromptFit,
        Part::FixedPromptPerModel,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Part::SharedCache => "shared_cache",
            Part::ColdReadShare => "cold_read_share",
            Part::EvictionShare => "eviction_share",
            Part::LifetimeTier => "lifetime_tier",
            Part::FixedPromptFit => "fixed_prompt_fit",
            Part::FixedPromptPerModel => "fixed_prompt_per_model",
            Part::CompactionCause => "compaction_cause",
            Part::RewriteCause => "rewrite_cause",
            Part::ParentLinks => "parent_links",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// The part named `name`.
    pub(crate) fn named(name: &str) -> Option<Part> {
        Part::ALL.into_iter().find(|p| p.as_str() == name)
    }

    /// Every part's name, for help and errors.
    pub(crate) fn names() -> String {
        Part::ALL.map(Part::as_str).join(", ")
    }
}

/// Which parts are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Parts(u16);

impl Default for Parts {
    fn default() -> Parts {
        let all = Part::ALL.iter().fold(0, |b, p| b | p.bit());
        Parts(Part::OFF_BY_DEFAULT.iter().fold(all, |b, p| b & !p.bit()))
    }
}

impl Parts {
    /// Every part on.
    #[cfg(test)]
    pub(crate) const ALL_ON: Parts = Parts((1 << Part::ALL.len()) - 1);

    pub(crate) fn on(self, p: Part) -> bool {
        self.0 & p.bit() != 0
    }

    /// These parts with `p` off.
    #[cfg(test)]
    pub(crate) const fn without(self, p: Part) -> Parts {
        Parts(self.0 & !(1 << (p as u16)))
    }

    /// These parts with `p` on or off.
    pub(crate) fn with(self, p: Part, on: bool) -> Parts {
        Parts(if on {
            self.0 | p.bit()
        } else {
            self.0 & !p.bit()
        })
    }

    /// Whether `p` is on by default.
    pub(crate) fn default_on(p: Part) -> bool {
        Parts::default().on(p)
    }

    /// `name=on|off`, applied to these parts.
    pub(crate) fn apply(self, spec: &str) -> Result<Parts, PartError> {
        let (name, value) = spec
            .split_once('=')
            .ok_or_else(|| PartError(spec.to_string()))?;
        let part = Part::named(name.trim()).ok_or_else(|| PartError(spec.to_string()))?;
        match value.trim() {
            "on" => Ok(self.with(part, true)),
            "off" => Ok(self.with(part, false)),
            _ => Err(PartError(spec.to_string())),
        }
    }
}

/// A `--part` that is not `NAME=on|off` with a part's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PartError(String);

impl std::fmt::Display for PartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} is not NAME=on|off with NAME one of: {}",
            self.0,
            Part::names()
        )
    }
}

impl std::error::Error for PartError {}

impl Serialize for Parts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(Part::ALL.len()))?;
        for p in Part::ALL {
            m.serialize_entry(p.as_str(), &self.on(p))?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_switch_by_name_and_say_what_differs() {
        let d = Parts::default();
        for part in Part::ALL {
            assert_eq!(
                d.on(part),
                !Part::OFF_BY_DEFAULT.contains(&part),
                "{part:?}"
            );
        }
        assert!(!d.on(Part::SharedCache));
        assert!(d.on(Part::RewriteCause));
        let p = d.apply("shared_cache=on").expect("a part");
        assert!(p.on(Part::SharedCache));
        assert_eq!(p, d.with(Part::SharedCache, true));
        assert_eq!(p.apply("shared_cache=off").expect("a part"), d);
        assert!(d.apply("shared_cache").is_err());
        assert!(d.apply("nothing=on").is_err());
        assert!(d.apply("shared_cache=maybe").is_err());
        for part in Part::ALL {
            assert_eq!(Part::named(part.as_str()), Some(part));
        }
    }
}
