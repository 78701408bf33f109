//! The knobs' flags, made from the knob tables ([`crate::knob`]) rather than
//! declared field by field: `replay`'s and `transcript show`'s one value
//! per smith knob ([`ConfigArgs`]), and the knobs given as text
//! ([`Given`]): `sweep`'s lists of smith's knobs and every command's policy
//! knobs. Each implements `clap::Args` by walking its table, so the
//! commands keep `#[command(flatten)]`.

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::engine::knobs::Knob;
use crate::engine::Config;
use crate::policy::PolicyKnob;

/// smith's knobs, one value each with smith's default: the config they
/// describe, not yet validated.
#[derive(Clone, Debug, Default)]
pub struct ConfigArgs(pub Config);

/// The heading smith's one-value flags are listed under.
const ENGINE: &str = "Engine";

impl FromArgMatches for ConfigArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut config = Config::default();
        for k in Knob::ALL {
            (k.def().read)(m, k.flag(), &mut config);
        }
        Ok(ConfigArgs(config))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = ConfigArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ConfigArgs {
    fn augment_args(cmd: Command) -> Command {
        Knob::ALL
            .into_iter()
            .fold(cmd, |cmd, k| cmd.arg(k.def().one_arg(ENGINE)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        ConfigArgs::augment_args(cmd)
    }
}

/// A table whose knobs are taken as text (a list or a range for `sweep`).
pub trait Textual: Copy + std::fmt::Debug + 'static {
    /// Every knob of the table, in flag order.
    fn every() -> &'static [Self];
    /// Its flag, without `--`.
    fn flag(self) -> &'static str;
    /// Its flag as an argument.
    fn arg(self) -> Arg;
}

impl Textual for Knob {
    fn every() -> &'static [Knob] {
        &Knob::ALL
    }
    fn flag(self) -> &'static str {
        Knob::flag(self)
    }
    fn arg(self) -> Arg {
        self.def().list_arg("Grid")
    }
}

impl Textual for PolicyKnob {
    fn every() -> &'static [PolicyKnob] {
        &PolicyKnob::ALL
    }
    fn flag(self) -> &'static str {
        PolicyKnob::flag(self)
    }
    fn arg(self) -> Arg {
        self.def().text_arg("Policies")
    }
}

/// The knobs of a table given on the command line, as text, in table
/// order.
#[derive(Clone, Debug)]
pub struct Given<K: Textual>(pub Vec<(K, String)>);

impl<K: Textual> Default for Given<K> {
    fn default() -> Self {
        Given(Vec::new())
    }
}

impl<K: Textual> Given<K> {
    /// The text given for `knob`, if any.
    pub fn get(&self, knob: K) -> Option<&str>
    where
        K: PartialEq,
    {
        self.0
            .iter()
            .find(|(k, _)| *k == knob)
            .map(|(_, t)| t.as_str())
    }
}

impl<K: Textual> FromArgMatches for Given<K> {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let given = K::every()
            .iter()
            .filter_map(|&k| m.get_one::<String>(k.flag()).map(|t| (k, t.clone())))
            .collect();
        Ok(Given(given))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Given::from_arg_matches(m)?;
        Ok(())
    }
}

impl<K: Textual> Args for Given<K> {
    fn augment_args(cmd: Command) -> Command {
        K::every().iter().fold(cmd, |cmd, k| cmd.arg(k.arg()))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Given::<K>::augment_args(cmd)
    }
}
