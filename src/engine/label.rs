//! The label that tells every config of a sweep apart. It lives with
//! [`Config`] rather than with the sweep's grid because the policies name
//! their setups with it too, and the policies come before the sweep in the
//! data flow.

use super::knobs::Knob;
use super::Config;
use crate::knob::Label;

/// A config's label in two parts: the knobs always written (`120k
/// 0.80/0.50 cap512 w3`) and those written because they differ from
/// smith's defaults (` oh17165 r1.515`), each part from the table, of the
/// knobs `keep` takes. A policy's label writes its own knobs between them.
pub(crate) struct LabelParts {
    pub(crate) always: String,
    pub(crate) changed: String,
}

/// A window as labels write it: `120k`, or `own` for each session's own
/// ([`super::budget::OWN_WINDOW`]).
pub(crate) fn window_label(max_tokens: u64) -> String {
    match Knob::MaxTokens.word(max_tokens as f64) {
        Some(word) => word.to_string(),
        None => crate::format::window(max_tokens),
    }
}

impl Config {
    /// A short, stable description for tables: `120k 0.80/0.50 cap512 w3`,
    /// with overhead, ratio and summary size only when not smith's defaults.
    pub fn label(&self) -> String {
        let p = self.label_parts(|_| true, false);
        p.always + &p.changed
    }

    /// [`Config::label`], with the fractions written in full when two
    /// decimals would round them (`0.825/0.5` rather than `0.83/0.50`), so
    /// that no two configs of a grid share a label.
    pub(crate) fn exact_label(&self) -> String {
        let exact = |v: f64| format!("{v:.2}").parse::<f64>() == Ok(v);
        let full = Knob::ALL
            .into_iter()
            .any(|k| k.def().label == Label::Fraction && !exact(k.get(self)));
        let p = self.label_parts(|_| true, full);
        p.always + &p.changed
    }

    /// The label of the knobs `keep` takes; `full` writes fractions in full.
    pub(crate) fn label_parts(&self, keep: impl Fn(Knob) -> bool, full: bool) -> LabelParts {
        let defaults = Config::default();
        let mut always = String::new();
        let mut changed = String::new();
        let mut previous = None;
        for k in Knob::ALL.into_iter().filter(|&k| keep(k)) {
            let d = k.def();
            let text = k.text(self);
            match d.label {
                Label::Window => always.push_str(&window_label(k.get(self) as u64)),
                Label::Fraction => {
                    let v = k.get(self);
                    let sep = if previous == Some(Label::Fraction) {
                        "/"
                    } else {
                        " "
                    };
                    always.push_str(sep);
                    always.push_str(&if full {
                        format!("{v}")
                    } else {
                        format!("{v:.2}")
                    });
                }
                Label::Always(prefix) => {
                    always.push_str(&format!(" {prefix}{text}"));
                }
                Label::Changed(prefix) => {
                    if k.get(self) != k.get(&defaults) {
                        changed.push_str(&format!(" {prefix}{text}"));
                    }
                }
            }
            previous = Some(d.label);
        }
        LabelParts { always, changed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Config labels and the report's window groups write a window alike,
    /// the session's own as `own`, never as the 0 that holds it.
    #[test]
    fn a_window_is_written_in_thousands_or_as_its_word() {
        assert_eq!(window_label(crate::engine::budget::OWN_WINDOW), "own");
        assert_eq!(window_label(120_000), "120k");
        assert_eq!(window_label(1_500), "1500");
        let own = Config {
            max_tokens: crate::engine::budget::OWN_WINDOW,
            ..Config::default()
        };
        assert!(
            own.exact_label().starts_with("own 0.80/0.50"),
            "{}",
            own.exact_label()
        );
    }

    #[test]
    fn fractions_are_written_in_full_only_when_two_decimals_would_round_them() {
        let mut c = Config::default();
        assert_eq!(c.exact_label(), c.label());
        c.compact_at = 0.825;
        c.compact_to = 0.5;
        assert_eq!(c.exact_label(), "120k 0.825/0.5 cap512 w3");
        assert_eq!(c.label(), "120k 0.82/0.50 cap512 w3");
    }
}
