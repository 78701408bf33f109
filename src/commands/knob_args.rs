//! The knobs' flags, made from the knob tables ([`crate::knob`]) rather than
//! declared field by field: `replay`'s and `transcript show`'s one value
//! per smith knob ([`ConfigArgs`]), and the knobs given as text
//! ([`Given`]): `sweep`'s lists of smith's knobs and every command's policy
//! knobs. Each implements `clap::Args` by walking its table, so the
//! commands keep `#[command(flatten)]`.

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::engine::knobs::{Knob, Typed};
use crate::engine::Config;
use crate::knob::ValueError;
use crate::policy::PolicyKnob;

/// smith's knobs, one value each with smith's default: the config they
/// describe, not yet validated, which of them the command line gave, and
/// why a number given for a knob that takes words cannot be (a ratio of 0,
/// which is how `learn` is held).
#[derive(Clone, Debug, Default)]
pub(crate) struct ConfigArgs(
    pub(crate) Config,
    pub(crate) Vec<Knob>,
    pub(crate) Option<ValueError>,
);

impl ConfigArgs {
    /// Which of the knobs a session may choose the command line set.
    pub(crate) fn given(&self) -> crate::calibrate::session::Given {
        crate::calibrate::session::Given {
            ratio: self.1.contains(&Knob::Ratio),
            overhead: self.1.contains(&Knob::Overhead),
        }
    }
}

/// The heading smith's one-value flags are listed under.
const ENGINE: &str = "Engine";

impl FromArgMatches for ConfigArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut config = Config::default();
        let mut given = Vec::new();
        let mut refused = None;
        for k in Knob::ALL {
            if k.words().is_empty() {
                (k.def().read)(m, k.flag(), &mut config);
            } else {
                match m.get_one::<Typed>(k.flag()) {
                    Some(Typed::Word(v)) => k.set(&mut config, *v),
                    Some(Typed::Number(v)) => match (k.def().check)(*v) {
                        Ok(()) => k.set(&mut config, *v),
                        Err(e) => refused = Some(e),
                    },
                    None => {}
                }
            }
            if m.value_source(k.flag()) == Some(clap::parser::ValueSource::CommandLine) {
                given.push(k);
            }
        }
        Ok(ConfigArgs(config, given, refused))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = ConfigArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for ConfigArgs {
    fn augment_args(cmd: Command) -> Command {
        Knob::ALL.into_iter().fold(cmd, |cmd, k| {
            let arg = k.def().one_arg(ENGINE);
            // A knob that takes words parses them with its numbers.
            let arg = if k.words().is_empty() {
                arg
            } else {
                arg.value_parser(move |text: &str| k.parse_one(text))
            };
            cmd.arg(arg)
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        ConfigArgs::augment_args(cmd)
    }
}

/// A table whose knobs are taken as text (a list or a range for `sweep`).
pub(crate) trait Textual: Copy + std::fmt::Debug + 'static {
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
pub(crate) struct Given<K: Textual>(pub(crate) Vec<(K, String)>);

impl<K: Textual> Default for Given<K> {
    fn default() -> Self {
        Given(Vec::new())
    }
}

impl<K: Textual> Given<K> {
    /// The text given for `knob`, if any.
    pub(crate) fn get(&self, knob: K) -> Option<&str>
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::export::{Columns, Values};
    use crate::knob::{Kind, Shown};
    use crate::policy::{Knobs, Setup, Value};
    use crate::sweep::grid::GridSpec;
    use crate::sweep::tables::{knob_columns, policy_columns};

    fn find<'a>(cmd: &'a Command, flag: &str) -> &'a Arg {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(flag))
            .unwrap_or_else(|| panic!("no --{flag}"))
    }

    /// The value `[default: …]` states in a flag's help, as written.
    fn stated_text(arg: &Arg) -> String {
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let (_, tail) = help
            .rsplit_once("[default: ")
            .unwrap_or_else(|| panic!("no default in {help:?}"));
        tail.trim_end_matches(']').to_string()
    }

    /// The number `[default: …]` states in a flag's help.
    fn stated_default(arg: &Arg) -> f64 {
        stated_text(arg).parse().expect("a number")
    }

    /// A value of the knob other than its default that it accepts.
    fn other(integer: bool, default: f64) -> f64 {
        if integer {
            default + 1.0
        } else if default == 0.0 {
            0.5
        } else {
            default / 2.0
        }
    }

    #[test]
    fn every_smith_knob_has_a_flag_a_grid_key_a_column_its_default_and_a_round_trip() {
        let one = ConfigArgs::augment_args(Command::new("t"));
        let lists = Given::<Knob>::augment_args(Command::new("t"));
        let defaults = Config::default();
        for k in Knob::ALL {
            let default = k.get(&defaults);
            let word = k.kind() == Kind::Word;
            // A word knob's values are written as their words everywhere.
            let written = |v: f64| match k.word(v) {
                Some(w) if word => w.to_string(),
                _ => v.to_string(),
            };
            // replay's flag defaults to the config's default, sweep's says so.
            let arg = find(&one, k.flag());
            let shown: Vec<String> = arg
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            assert_eq!(shown.len(), 1, "--{}", k.flag());
            assert_eq!(shown[0], written(default), "--{}", k.flag());
            if word {
                assert_eq!(stated_text(find(&lists, k.flag())), written(default));
            } else {
                assert_eq!(stated_default(find(&lists, k.flag())), default);
            }
            // A grid file takes the flag and the field as keys.
            assert_eq!(Knob::from_key(k.flag()), Some(k));
            assert_eq!(Knob::from_key(k.field()), Some(k));
            let v = if word {
                let (_, v) = k.words().iter().find(|(_, v)| *v != default).unwrap();
                *v
            } else {
                other(k.is_integer(), default)
            };
            k.check(v).unwrap();
            let toml = if word {
                format!("{} = {:?}", k.field(), written(v))
            } else {
                format!("{} = {v:?}", k.field())
            };
            let spec = GridSpec::from_toml(Path::new("g.toml"), &toml).unwrap();
            assert_eq!(spec.get(k), Some(&[v][..]), "{toml}");
            // The flag, the setter and the getter agree on one field.
            let m = one
                .clone()
                .try_get_matches_from(["t", &format!("--{}", k.flag()), &written(v)])
                .unwrap();
            let parsed = ConfigArgs::from_arg_matches(&m).unwrap().0;
            let mut set = Config::default();
            k.set(&mut set, v);
            assert_eq!(parsed, set, "--{}", k.flag());
            assert_eq!(k.get(&set), v);
            // Its column carries it, and the label tells it apart.
            let mut columns = Columns::new();
            knob_columns(&mut columns, &[&set]);
            let column = if word {
                Values::Str(vec![written(v)])
            } else if k.is_integer() {
                Values::Int(vec![v as i64])
            } else {
                Values::Float(vec![v])
            };
            assert_eq!(columns.get(k.field()), Some(&column), "{}", k.field());
            assert_ne!(set.exact_label(), defaults.exact_label(), "{}", k.field());
        }
    }

    /// A value of a policy knob other than its default that it accepts.
    fn other_value(k: PolicyKnob, default: &Value) -> Value {
        match default {
            Value::Number(d) => Value::Number(other(k.is_integer(), *d)),
            Value::Names(_) => Value::Names(vec!["Memory".into(), "todo".into()]),
        }
    }

    #[test]
    fn every_policy_knob_has_a_flag_a_column_its_default_and_a_round_trip() {
        let cmd = Given::<PolicyKnob>::augment_args(Command::new("t"));
        let defaults = Knobs::default();
        for k in PolicyKnob::ALL {
            let default = k.get(&defaults);
            assert_eq!(
                stated_text(find(&cmd, k.flag())),
                default.shown(k.kind()),
                "--{}",
                k.flag()
            );
            let v = other_value(k, &default);
            k.check(&v).unwrap();
            // The flag, as replay reads it, the setter and the getter agree.
            let m = cmd
                .clone()
                .try_get_matches_from(["t", &format!("--{}", k.flag()), &v.to_string()])
                .unwrap();
            let args = crate::commands::policy_args::PolicyArgs {
                policy: Some(k.policy().to_string()),
                knobs: Given::from_arg_matches(&m).unwrap(),
            };
            let setup = args.setup(Config::default()).unwrap();
            let mut set = Knobs::default();
            k.set(&mut set, v.clone());
            assert_eq!(setup.knobs, set, "--{}", k.flag());
            assert_eq!(k.get(&set), v);
            // sweep's list of it gives the value, and the plan puts it in
            // its policy's configs.
            let mut spec = crate::sweep::plan::PolicySpec::default();
            spec.policies = vec![k.policy()];
            spec.set(k, &v.to_string()).unwrap();
            let grid = crate::sweep::grid::build(&GridSpec::default(), 10).unwrap();
            let plan = crate::sweep::plan::build(
                &grid,
                &spec,
                crate::sweep::plan::BaselineKind::Smith,
                10,
            )
            .unwrap();
            assert!(plan.setups.contains(&setup), "--{}", k.flag());
            // Its column carries it, and the label tells it apart.
            let mut columns = Columns::new();
            policy_columns(&mut columns, &[&setup]);
            let column = match (k.kind(), &v) {
                (Kind::Names, v) => Values::Str(vec![v.to_string()]),
                (Kind::Count, Value::Number(x)) => Values::OptInt(vec![Some(*x as i64)]),
                (_, Value::Number(x)) => Values::OptFloat(vec![Some(*x)]),
                (_, v) => panic!("{}: {v:?}", k.field()),
            };
            assert_eq!(columns.get(&k.field()), Some(&column), "{}", k.field());
            let plain = Setup::new(k.policy(), Config::default(), Knobs::default());
            assert_ne!(setup.label(), plain.label(), "{}", k.field());
        }
    }
}
