//! The knob tables' shape: what one definition of a knob carries, and the
//! macro that turns a table of them into a knob enum.
//!
//! A knob is a value the replay can be run under: one of smith's
//! (`crate::engine::knobs`, numbers) or of a policy (`crate::policy::knobs`,
//! numbers and one list of names, [`Value`]). Each is
//! defined once, in its table, with its flag, field, help, value name, kind,
//! label and accessors; the flags of `replay`, `transcript show` and `sweep`,
//! the help defaults, the grid-file keys, the config labels and the columns
//! of the data files are all made from that entry. The structs the engine
//! and the policies read (`Config`, `Knobs`) stay plain fields: their
//! `Default` is the one definition of each default, which the table reads
//! back through the accessor instead of repeating it.

use clap::{Arg, ArgMatches};

/// What values a knob takes, and how its default is written in help.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Whole numbers (tokens, bytes, turns, results).
    Count,
    /// A fraction of the window; written as Rust writes it (`0.8`, `0`).
    Fraction,
    /// A factor (the ratio); written with its point (`1.0`), so that it
    /// reads as a multiplier and not a count.
    Factor,
    /// A list of names (tools), comma-separated, blanks ignored: one list
    /// in every command, a sweep's axis of one value; text in the data
    /// files, empty where the knob does not apply.
    Names,
    /// One of a few names (the engine), held as a number where knobs are
    /// numbers (the grid, a journal) and written as its name everywhere a
    /// person or another tool reads it (labels, help, the data files).
    Word,
}

impl Kind {
    /// Whether the knob takes only whole numbers (and a range of it may
    /// leave out its step).
    pub(crate) fn is_integer(self) -> bool {
        self == Kind::Count
    }

    /// `v` as `[default: …]` writes it in the list flags' help.
    pub(crate) fn show(self, v: f64) -> String {
        match self {
            Kind::Factor => format!("{v:?}"),
            Kind::Count | Kind::Fraction | Kind::Names | Kind::Word => format!("{v}"),
        }
    }
}

/// A policy knob's value: a number, or the names of a [`Kind::Names`] knob.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Value {
    Number(f64),
    Names(Vec<String>),
}

impl Value {
    /// The number, if it is one.
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Value::Number(v) => Some(*v),
            Value::Names(_) => None,
        }
    }
}

impl std::fmt::Display for Value {
    /// As the command line takes it back: the number as Rust writes it,
    /// the names comma-separated.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Number(v) => write!(f, "{v}"),
            Value::Names(n) => f.write_str(&n.join(",")),
        }
    }
}

/// Names as the command line and the data files write them:
/// comma-separated, blanks ignored.
pub(crate) fn names(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from)
        .collect()
}

/// The value type of a knob table (`f64` for smith's, [`Value`] for the
/// policies'), as help writes a default.
pub(crate) trait Shown: std::fmt::Display + 'static {
    /// As `[default: …]` writes it for a knob of `kind`.
    fn shown(&self, kind: Kind) -> String;
}

impl Shown for f64 {
    fn shown(&self, kind: Kind) -> String {
        kind.show(*self)
    }
}

impl Shown for Value {
    fn shown(&self, kind: Kind) -> String {
        match self {
            Value::Number(v) => kind.show(*v),
            Value::Names(n) if n.is_empty() => "none".to_string(),
            Value::Names(n) => n.join(","),
        }
    }
}

/// How a knob appears in a config's label (`120k 0.80/0.50 cap512 w3`,
/// `masking 200k M5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Label {
    /// Always written, first: the window as `120k` (or the number when it
    /// is not whole thousands).
    Window,
    /// Always written, to two decimals (in full when two would round a
    /// fraction of the config); a fraction right after another is joined to
    /// it by `/`.
    Fraction,
    /// Always written: the prefix, then the value (`cap512`).
    Always(&'static str),
    /// Written only when it differs from the default: the prefix, then the
    /// value (`oh17165`, `M5`).
    Changed(&'static str),
}

/// One knob of a struct `T` that a run reads (`Config`, `Knobs`), with
/// what every part of the tool needs to know about it. `O` says whom it
/// applies to (a scope for smith's knobs, a policy for the policies'), `V`
/// is the value the accessors move (`f64`, or [`Value`]).
pub(crate) struct Def<T: 'static, O: 'static, V: 'static> {
    /// The command-line flag without `--`; also a key of a grid file.
    pub(crate) flag: &'static str,
    /// The field of `T`: the column name in every output file; also a key
    /// of a grid file.
    pub(crate) field: &'static str,
    /// The placeholder of the one-value flag in help (`N`, `F`, `BYTES`).
    pub(crate) value_name: &'static str,
    /// Help of the one-value flag (`replay`, `transcript show --at`);
    /// `{default}` stands for the default. Lists' help where [`Def::list_help`]
    /// is empty.
    pub(crate) help: &'static str,
    /// Help of the list flag (`sweep`), before its `[default: …]`.
    pub(crate) list_help: &'static str,
    pub(crate) kind: Kind,
    pub(crate) label: Label,
    /// Whom it applies to.
    pub(crate) applies: O,
    /// Rejects a number the knob cannot take, saying what it takes
    /// instead (a [`Kind::Names`] knob takes any names).
    pub(crate) check: fn(f64) -> Result<(), ValueError>,
    /// Its value in `T`.
    pub(crate) get: fn(&T) -> V,
    /// Its value in `T` as labels write it: the field's own `Display`, so
    /// that no count passes through a float on its way to a label.
    pub(crate) text: fn(&T) -> String,
    /// Sets it in `T` to a value of its kind that [`Def::check`] accepted.
    pub(crate) set: fn(&mut T, V),
    /// Copies it from one `T` into another, exactly (no float between).
    pub(crate) copy: fn(&mut T, &T),
    /// The one-value flag's parser: the field's own type, so that a bad
    /// value is refused by clap as it always was.
    pub(crate) typed: fn(Arg) -> Arg,
    /// Reads the one-value flag `id` typed by [`Def::typed`] into `T`.
    pub(crate) read: fn(&ArgMatches, &str, &mut T),
}

impl<T: Default + 'static, O: 'static, V: Shown> Def<T, O, V> {
    /// Its default: its value in `T::default()`, the one definition.
    pub(crate) fn default_value(&self) -> V {
        (self.get)(&T::default())
    }

    /// Its default as the command line takes it: the field's own text (a
    /// word knob's name, not the number that holds it).
    pub(crate) fn default_text(&self) -> String {
        (self.text)(&T::default())
    }

    /// Help of the list flag, with the default.
    pub(crate) fn list_help_text(&self) -> String {
        let help = if self.list_help.is_empty() {
            self.help
        } else {
            self.list_help
        };
        let default = match self.kind {
            Kind::Word => self.default_text(),
            kind => self.default_value().shown(kind),
        };
        format!("{help} [default: {default}]")
    }

    /// Help of the one-value flag.
    pub(crate) fn help_text(&self) -> String {
        self.help.replace("{default}", &self.default_text())
    }

    /// The list flag `sweep` takes (a list, a range or both, as text).
    pub(crate) fn list_arg(&self, heading: &'static str) -> Arg {
        Arg::new(self.flag)
            .long(self.flag)
            .value_name("LIST")
            .help(self.list_help_text())
            .help_heading(heading)
            // `-0.2` is a value (which the knob's check then judges), not
            // a flag.
            .allow_hyphen_values(true)
    }

    /// The list flag under its value name: a policy knob takes text in
    /// every command (one value for `replay`, a list for `sweep`).
    pub(crate) fn text_arg(&self, heading: &'static str) -> Arg {
        self.list_arg(heading).value_name(self.value_name)
    }

    /// The one-value flag with its default (`replay`, `show --at`).
    pub(crate) fn one_arg(&self, heading: &'static str) -> Arg {
        let arg = Arg::new(self.flag)
            .long(self.flag)
            .value_name(self.value_name)
            .help(self.help_text())
            .help_heading(heading)
            .allow_hyphen_values(true)
            .default_value(self.default_text());
        (self.typed)(arg)
    }
}

/// A field a knob sets: how a label writes it and how its one-value flag
/// parses it (the field's own type, so that a bad value is refused by clap).
pub(crate) trait Field: Sized + Clone + 'static {
    fn text(&self) -> String;
    fn typed(arg: Arg) -> Arg;
    fn read(m: &ArgMatches, id: &str) -> Option<Self>;
}

/// A field that holds a value of `V`, as the table's accessors move it: a
/// sweep's values are checked to fit the field before they are put.
pub(crate) trait Holds<V>: Field {
    fn value(&self) -> V;
    fn put(&mut self, v: V);
}

macro_rules! number_field {
    ($($ty:ty),*) => {$(
        impl Field for $ty {
            fn text(&self) -> String {
                self.to_string()
            }
            fn typed(arg: Arg) -> Arg {
                arg.value_parser(clap::value_parser!($ty))
            }
            fn read(m: &ArgMatches, id: &str) -> Option<$ty> {
                m.get_one::<$ty>(id).copied()
            }
        }

        impl Holds<f64> for $ty {
            fn value(&self) -> f64 {
                *self as f64
            }
            fn put(&mut self, v: f64) {
                *self = v as $ty;
            }
        }

        impl Holds<Value> for $ty {
            fn value(&self) -> Value {
                Value::Number(*self as f64)
            }
            /// Names never reach a number: the knob's kind says which it takes.
            fn put(&mut self, v: Value) {
                if let Value::Number(v) = v {
                    *self = v as $ty;
                }
            }
        }
    )*};
}

number_field!(f64, u64, usize);

impl Field for Vec<String> {
    fn text(&self) -> String {
        self.join(",")
    }
    fn typed(arg: Arg) -> Arg {
        arg
    }
    fn read(m: &ArgMatches, id: &str) -> Option<Vec<String>> {
        m.get_one::<String>(id).map(|t| names(t))
    }
}

impl Holds<Value> for Vec<String> {
    fn value(&self) -> Value {
        Value::Names(self.clone())
    }
    /// A number never reaches names: the knob's kind says which it takes.
    fn put(&mut self, v: Value) {
        if let Value::Names(n) = v {
            *self = n;
        }
    }
}

/// Why a knob, or a config or policy made of knobs, refuses a value; the
/// message says what it takes instead.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error("{0} is not a whole number of 0 or more")]
    NotWhole(f64),
    #[error("{0} is too large")]
    TooLarge(f64),
    /// A cap below `least`, which would keep no head and tail.
    #[error("{value} is below {least}: a cap must leave a head and a tail")]
    NoHeadAndTail { value: f64, least: f64 },
    #[error("ratio must be a positive number, not {0}")]
    Ratio(f64),
    /// `compact-at` or `compact-to` (`name`) outside the window.
    #[error("{name} must be a fraction of the window such as 0.8, not {value}")]
    Fraction { name: &'static str, value: f64 },
    #[error("max-tokens must be between 1 and {most} (smith keeps it in an Int32), not {0}", most = i32::MAX)]
    Window(u64),
    #[error("{0} is not a fraction of the window above 0 and at most 1")]
    Threshold(f64),
    #[error("{0} is not a fraction of the window of 0 (off) or more and below 1")]
    Cold(f64),
    /// Window and thresholds smith itself refuses; `broken` names the knob
    /// that breaks the rule, with its value.
    #[error(
        "{broken}: smith runs only 0 < compact-to < compact-at < 1 and 1 <= max-tokens <= {most} \
         (config.cr ignores anything else); --beyond-smith replays it anyway",
        most = i32::MAX
    )]
    SmithRule { broken: String },
    /// A value that is no finite number.
    #[error("{0} is not a number")]
    NotFinite(f64),
    /// Text that is no number (trimmed).
    #[error("{0:?} is not a number")]
    NotNumber(String),
    /// A value of the other kind (a number for a list of names, or names
    /// for a number).
    #[error("{value} is not a value of {field}")]
    WrongKind { value: String, field: String },
    /// Text that is neither a number nor one of the knob's `words` (for
    /// a knob of words only, the words it takes, listed).
    #[error("{text:?} is not {}", one_of(words))]
    NotNumberOrWord {
        text: String,
        words: Vec<&'static str>,
    },
}

/// What a knob takes besides numbers, as an error says it: "a number or
/// learn". A knob whose words are 0.4 and next takes no other number,
/// so its words are listed as the choice.
fn one_of(words: &[&str]) -> String {
    if words.iter().any(|w| w.parse::<f64>().is_ok()) {
        format!("one of {}", words.join(", "))
    } else {
        format!("a number or {}", words.join(" or "))
    }
}

/// Accepts any value: the knob's limits are checked with its struct
/// (`Config::validate`).
pub(crate) fn any(_: f64) -> Result<(), ValueError> {
    Ok(())
}

/// Accepts a whole number from `least` to `most`.
pub(crate) fn whole(v: f64, least: f64, most: f64) -> Result<(), ValueError> {
    if v < 0.0 || v.fract() != 0.0 {
        return Err(ValueError::NotWhole(v));
    }
    if v > most {
        return Err(ValueError::TooLarge(v));
    }
    if v < least {
        return Err(ValueError::NoHeadAndTail { value: v, least });
    }
    Ok(())
}

/// Declares a knob table: `pub enum Name: Def<Struct, Scope, Value>;` then one
/// entry per knob, `Variant(field: type) { flag: …, … }` with the other
/// fields of [`Def`]. Generates the enum (its variants in table order, which
/// is the order of flags, columns and grid axes), `Name::ALL` and
/// `Name::def`, whose accessors read and write `Struct.field`.
macro_rules! knob_table {
    (
        $(#[$meta:meta])*
        $vis:vis enum $Name:ident: Def<$T:ty, $O:ty, $V:ty>;
        $(
            $(#[doc = $doc:expr])*
            $Variant:ident($field:ident: $ty:ty) { $($key:ident: $value:expr),* $(,)? }
        )*
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
        #[serde(rename_all = "snake_case")]
        $vis enum $Name {
            $($(#[doc = $doc])* $Variant,)*
        }

        impl $Name {
            /// Every knob, in table order.
            $vis const ALL: [$Name; [$(stringify!($Variant)),*].len()] = [$($Name::$Variant),*];

            /// Its entry in the table.
            pub(crate) fn def(self) -> &'static $crate::knob::Def<$T, $O, $V> {
                static TABLE: [$crate::knob::Def<$T, $O, $V>; [$(stringify!($Variant)),*].len()] = [$(
                    $crate::knob::Def {
                        field: stringify!($field),
                        get: |t: &$T| -> $V { <$ty as $crate::knob::Holds<$V>>::value(&t.$field) },
                        text: |t: &$T| $crate::knob::Field::text(&t.$field),
                        copy: |to: &mut $T, from: &$T| to.$field.clone_from(&from.$field),
                        set: |t: &mut $T, v: $V| <$ty as $crate::knob::Holds<$V>>::put(&mut t.$field, v),
                        typed: <$ty as $crate::knob::Field>::typed,
                        read: |m: &clap::ArgMatches, id: &str, t: &mut $T| {
                            if let Some(v) = <$ty as $crate::knob::Field>::read(m, id) {
                                t.$field = v;
                            }
                        },
                        $($key: $value,)*
                    },
                )*];
                &TABLE[self as usize]
            }
        }
    };
}

pub(crate) use knob_table;
