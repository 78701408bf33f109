//! The grid: which configs a sweep runs.
//!
//! In the manner of hyperfine's parameter scans, every knob takes a list
//! (`0.7,0.8,0.9`), an inclusive range with a step (`0.4..0.6:0.05`), or a mix
//! of both (`256,512..2048:512`), on the command line or in a TOML file with
//! the same keys. The sweep runs the cartesian product of the knobs, minus the
//! combinations that cannot work (a target at or above the trigger), plus
//! smith's own defaults, which are always there as the baseline every other
//! config is compared with.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::engine::{Budget, Config};
use crate::knob::ValueError;

/// The largest grid a sweep runs unless told otherwise. Each config replays
/// every session once, so a grid beyond this is hours of work and gigabytes
/// of rows: far more likely a typo in a step than a wish.
pub(crate) const MAX_CONFIGS: usize = 100_000;

/// The most decimals a range may use: ranges are computed on integers scaled
/// by 10^decimals, which must stay exact in an `i64`.
const MAX_DECIMALS: u32 = 9;

pub use crate::engine::knobs::Knob;

/// Why a grid (or a policy's list of values) is refused: where, and what
/// it takes instead.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// A knob's value refused, or an item that is no number.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// An empty item in the list `text`.
    #[error("empty item in {0:?}; write values as 0.7,0.8 or ranges as 0.4..0.6:0.05")]
    EmptyItem(String),
    /// A range of a fractional knob without its step.
    #[error("range {range:?} needs a step for a fractional knob, as in {start}..{end}:0.05")]
    NoStep {
        range: String,
        start: String,
        end: String,
    },
    #[error("range {0:?}: the step must be above 0")]
    StepNotAboveZero(String),
    #[error("range {0:?}: the end is below the start")]
    EndBelowStart(String),
    #[error("range {0:?}: at most {MAX_DECIMALS} decimals")]
    TooManyDecimals(String),
    #[error("range {0:?}: numbers too large for a range")]
    RangeTooLarge(String),
    #[error("range {range:?} has {count} values, more than a sweep runs ({MAX_CONFIGS}); use a larger step")]
    TooManyValues { range: String, count: i64 },
    /// An error in the values of the flag `--flag`.
    #[error("--{flag}: {error}")]
    Flag {
        flag: &'static str,
        error: Box<SpecError>,
    },
    #[error("{}: not a valid TOML grid: {error}", .file.display())]
    NotToml {
        file: PathBuf,
        error: toml::de::Error,
    },
    /// A key of a grid file that names no knob; `keys` are the knobs' flags.
    #[error("{}: unknown key `{key}`; the keys are {}", .file.display(), .keys.join(", "))]
    UnknownKey {
        file: PathBuf,
        key: String,
        keys: Vec<&'static str>,
    },
    /// A value of a grid file that is neither numbers nor a string;
    /// `found` is its TOML type.
    #[error("{}: `{key}`: expected numbers or a string such as \"0.4..0.6:0.05\", found {found}", .file.display())]
    NotNumbers {
        file: PathBuf,
        key: String,
        found: &'static str,
    },
    /// An error in the values of a grid file's `key`.
    #[error("{}: `{key}`: {error}", .file.display())]
    Key {
        file: PathBuf,
        key: String,
        error: Box<SpecError>,
    },
    #[error("{}: `{key}` is an empty list; give at least one value or leave the key out", .file.display())]
    EmptyList { file: PathBuf, key: String },
    /// A product of `total` configs (`None`: beyond counting) above `limit`;
    /// `sizes` says how many values each varied knob has.
    #[error(
        "the grid has {} configs ({sizes}), more than the limit of {limit}; use fewer values or larger steps, or raise --max-configs",
        .total.map_or_else(|| "too many".to_string(), |t| t.to_string())
    )]
    TooManyConfigs {
        total: Option<usize>,
        sizes: String,
        limit: usize,
    },
    /// Every combination asked for compacts to at or above where it starts
    /// (the baseline alone would be left to sweep).
    #[error(
        "every one of the {0} combinations asked for has its target at or above its trigger (compact-to >= \
         compact-at): smith compacts down from where it starts, so none can run; give a compact-to below compact-at"
    )]
    AllImpossible(usize),
    /// A plan of `total` configs across `policies` policies above `limit`.
    #[error("the sweep has {total} configs across {policies} policies, more than the limit of {limit}; use fewer values, or raise --max-configs")]
    TooManySetups {
        total: usize,
        policies: usize,
        limit: usize,
    },
}

/// The values asked for each knob; a knob left unset keeps smith's default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GridSpec {
    values: [Option<Vec<f64>>; Knob::ALL.len()],
}

impl GridSpec {
    /// Parses `text` (a list, a range or both) as the values of `knob`,
    /// replacing any earlier ones. The error names the flag.
    pub fn set(&mut self, knob: Knob, text: &str) -> Result<(), SpecError> {
        let values = parse_values(knob, text).map_err(|e| SpecError::Flag {
            flag: knob.flag(),
            error: Box::new(e),
        })?;
        self.values[knob as usize] = Some(values);
        Ok(())
    }

    /// Sets `knob`'s values as numbers already checked (a grid's axis).
    pub(crate) fn put(&mut self, knob: Knob, values: Vec<f64>) {
        self.values[knob as usize] = Some(values);
    }

    /// The values given for `knob`, if any.
    pub(crate) fn get(&self, knob: Knob) -> Option<&[f64]> {
        self.values[knob as usize].as_deref()
    }

    /// Which of ratio and overhead the flags fix. Where they leave one, each
    /// session replays under its own (its saved ratio, or what its recorded
    /// usage teaches), in every command that sweeps.
    pub(crate) fn given(&self) -> crate::calibrate::session::Given {
        crate::calibrate::session::Given {
            ratio: self.get(Knob::Ratio).is_some(),
            overhead: self.get(Knob::Overhead).is_some(),
        }
    }

    /// Reads a TOML grid file. Each key is a knob (`compact-at` or
    /// `compact_at`); each value a number, an array of numbers, or a string in
    /// the command-line syntax (`"0.4..0.6:0.05"`); arrays may mix both.
    pub(crate) fn from_toml(path: &Path, text: &str) -> Result<GridSpec, SpecError> {
        let file = || path.to_path_buf();
        let table: toml::Table = text.parse().map_err(|error| SpecError::NotToml {
            file: file(),
            error,
        })?;
        let mut spec = GridSpec::default();
        for (key, value) in &table {
            let knob = Knob::from_key(key).ok_or_else(|| SpecError::UnknownKey {
                file: file(),
                key: key.clone(),
                keys: Knob::ALL.iter().map(|k| k.flag()).collect(),
            })?;
            let items = match value {
                toml::Value::Array(items) => items.iter().collect(),
                one => vec![one],
            };
            let mut values = Vec::new();
            for item in items {
                let text = match item {
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => format!("{f}"),
                    toml::Value::String(s) => s.clone(),
                    other => {
                        return Err(SpecError::NotNumbers {
                            file: file(),
                            key: key.clone(),
                            found: other.type_str(),
                        })
                    }
                };
                values.extend(parse_values(knob, &text).map_err(|e| SpecError::Key {
                    file: file(),
                    key: key.clone(),
                    error: Box::new(e),
                })?);
            }
            if values.is_empty() {
                return Err(SpecError::EmptyList {
                    file: file(),
                    key: key.clone(),
                });
            }
            dedup(&mut values);
            spec.values[knob as usize] = Some(values);
        }
        Ok(spec)
    }

    /// This spec with every knob `other` sets taken from `other`: the command
    /// line overrides a grid file.
    pub(crate) fn overridden_by(mut self, other: &GridSpec) -> GridSpec {
        for (mine, theirs) in self.values.iter_mut().zip(&other.values) {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
        self
    }

    /// How many configs the product has (before impossible ones are left
    /// out), saturating.
    pub(crate) fn product_len(&self) -> usize {
        self.values
            .iter()
            .map(|v| v.as_ref().map_or(1, Vec::len))
            .fold(1usize, usize::saturating_mul)
    }
}

/// Parses a comma-separated list whose items are numbers or ranges
/// `start..end:step` (inclusive of `end`; integer knobs may leave out
/// `:step`, meaning 1). Repeated values are kept once, in first-seen order.
/// Every value is checked against what the knob accepts.
/// A knob's words (the ratio's `learn`) are items too, in the order given.
pub(crate) fn parse_values(knob: Knob, text: &str) -> Result<Vec<f64>, SpecError> {
    // A number is checked as a number: 0 is no ratio, even though it is
    // how `learn` is held.
    let check = |v: f64| (knob.def().check)(v).and_then(|()| knob.check(v));
    if knob.words().is_empty() {
        return parse_list(text, knob.is_integer(), check);
    }
    let mut values = Vec::new();
    for item in text.split(',') {
        match knob
            .words()
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(item.trim()))
        {
            Some((_, v)) => values.push(*v),
            // A knob of words only takes no number: say which words.
            None if knob.kind() == crate::knob::Kind::Word => {
                return Err(ValueError::NotNumberOrWord {
                    text: item.trim().to_string(),
                    words: knob.words().iter().map(|(w, _)| *w).collect(),
                }
                .into())
            }
            None => values.extend(parse_list(item, knob.is_integer(), check)?),
        }
    }
    dedup(&mut values);
    Ok(values)
}

/// [`parse_values`] for any knob: `integer` says whether a range may leave
/// out its step, `check` rejects a value the knob cannot take.
pub(crate) fn parse_list(
    text: &str,
    integer: bool,
    check: impl Fn(f64) -> Result<(), ValueError>,
) -> Result<Vec<f64>, SpecError> {
    let mut values = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(SpecError::EmptyItem(text.to_string()));
        }
        if let Some((start, rest)) = item.split_once("..") {
            let (end, step) = match rest.split_once(':') {
                Some((end, step)) => (end, Some(step)),
                None => (rest, None),
            };
            values.extend(range(integer, start, end, step)?);
        } else {
            values.push(number(item)?);
        }
    }
    for &v in &values {
        check(v)?;
    }
    dedup(&mut values);
    Ok(values)
}

fn number(text: &str) -> Result<f64, ValueError> {
    let text = text.trim();
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(ValueError::NotNumber(text.to_string())),
    }
}

/// Digits after the point in the shortest text that reads back as `v`.
fn decimals(v: f64) -> u32 {
    let s = format!("{v}");
    s.split_once('.').map_or(0, |(_, frac)| frac.len() as u32)
}

/// `start..end:step`, computed as `start + i*step` on integers scaled by
/// 10^decimals so that `0.4..0.6:0.05` gives exactly 0.4, 0.45, 0.5, 0.55,
/// 0.6 (adding 0.05 five times in floating point gives 0.6000000000000001,
/// which would miss the end and print as noise).
fn range(integer: bool, start: &str, end: &str, step: Option<&str>) -> Result<Vec<f64>, SpecError> {
    let whole = format!(
        "{start}..{end}{}",
        step.map(|s| format!(":{s}")).unwrap_or_default()
    );
    let a = number(start)?;
    let b = number(end)?;
    let step = match step {
        Some(s) => number(s)?,
        None if integer => 1.0,
        None => {
            return Err(SpecError::NoStep {
                range: whole,
                start: start.to_string(),
                end: end.to_string(),
            })
        }
    };
    if step <= 0.0 {
        return Err(SpecError::StepNotAboveZero(whole));
    }
    if b < a {
        return Err(SpecError::EndBelowStart(whole));
    }
    let d = decimals(a).max(decimals(b)).max(decimals(step));
    if d > MAX_DECIMALS {
        return Err(SpecError::TooManyDecimals(whole));
    }
    let scale = 10f64.powi(d as i32);
    let scaled = |v: f64| -> Result<i64, SpecError> {
        let s = (v * scale).round();
        if s.abs() >= 9.0e15 {
            return Err(SpecError::RangeTooLarge(whole.clone()));
        }
        Ok(s as i64)
    };
    let (ai, bi, si) = (scaled(a)?, scaled(b)?, scaled(step)?);
    let count = (bi - ai) / si + 1;
    if count as u128 > MAX_CONFIGS as u128 {
        return Err(SpecError::TooManyValues {
            range: whole,
            count,
        });
    }
    Ok((0..count).map(|i| (ai + i * si) as f64 / scale).collect())
}

fn dedup(values: &mut Vec<f64>) {
    let mut seen: Vec<f64> = Vec::with_capacity(values.len());
    values.retain(|v| {
        if seen.contains(v) {
            false
        } else {
            seen.push(*v);
            true
        }
    });
}

/// The configs a sweep runs.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Every config, the baseline (smith's defaults) first.
    pub configs: Vec<Config>,
    /// The values each knob took, in [`Knob::ALL`] order.
    pub(crate) axes: Vec<(Knob, Vec<f64>)>,
    /// Combinations of the product left out because their target is at or
    /// above their trigger.
    pub(crate) impossible: usize,
}

impl Grid {
    /// Index of the baseline in [`Grid::configs`]: always the first.
    pub(crate) const BASELINE: usize = 0;

    /// Whether config `i` is the baseline.
    pub(crate) fn is_baseline(i: usize) -> bool {
        i == Grid::BASELINE
    }
}

/// Refuses a grid holding a config smith itself would refuse
/// ([`Config::check_smith_rule`]), naming the rule, unless `beyond` (a
/// maintainer exploring the engine past what smith runs).
pub(crate) fn check_smith_rule(grid: &Grid, beyond: bool) -> Result<(), SpecError> {
    if beyond {
        return Ok(());
    }
    for c in &grid.configs {
        c.check_smith_rule()?;
    }
    Ok(())
}

/// Whether a config can never work: compaction would aim at or above the
/// point where it starts, so every compaction would be a no-op followed by
/// another one at the next request.
pub(crate) fn is_impossible(c: &Config) -> bool {
    let b = Budget::new(c);
    b.target_tokens >= b.trigger_tokens
}

/// Builds the grid: the product of the knobs' values (first knob varying
/// slowest), without impossible combinations, with smith's defaults first
/// whether or not the product contains them. Refuses a product above
/// `limit` configs before building any of it.
pub fn build(spec: &GridSpec, limit: usize) -> Result<Grid, SpecError> {
    build_around(spec, limit, default_baseline(spec))
}

/// The config 0 [`build`] puts at the head of `spec`'s grid.
pub(crate) fn default_baseline(spec: &GridSpec) -> Config {
    // The baseline is smith's defaults under the sweep's calibration: ratio
    // and overhead are facts about the provider and the agent's fixed
    // prompt, not policy, so it takes their (first) values, and its label
    // shows them.
    let mut baseline = Config::default();
    for k in Knob::ALL.into_iter().filter(|k| k.baseline_takes_first()) {
        if let Some(v) = spec.get(k).and_then(<[f64]>::first) {
            k.set(&mut baseline, *v);
        }
    }
    // A grid at each session's own window compares with smith's defaults
    // there, not at a window no session ran under.
    if spec.get(Knob::MaxTokens) == Some(&[crate::engine::budget::OWN_WINDOW as f64][..]) {
        baseline.max_tokens = crate::engine::budget::OWN_WINDOW;
    }
    baseline
}

/// [`build`] with `baseline` as config 0 instead of smith's defaults: a
/// user's own configuration, which every config is then compared with.
pub(crate) fn build_around(
    spec: &GridSpec,
    limit: usize,
    baseline: Config,
) -> Result<Grid, SpecError> {
    let axes: Vec<(Knob, Vec<f64>)> = Knob::ALL
        .into_iter()
        .map(|k| {
            let values = spec
                .get(k)
                .map_or_else(|| vec![k.get(&Config::default())], <[f64]>::to_vec);
            (k, values)
        })
        .collect();
    let total = spec.product_len();
    if total > limit {
        let mut sizes = String::new();
        for (k, v) in axes.iter().filter(|(_, v)| v.len() > 1) {
            let _ = write!(
                sizes,
                "{}{} {}",
                if sizes.is_empty() { "" } else { " × " },
                v.len(),
                k.flag()
            );
        }
        return Err(SpecError::TooManyConfigs {
            total: (total != usize::MAX).then_some(total),
            sizes,
            limit,
        });
    }
    let mut configs = Vec::with_capacity(total + 1);
    configs.push(baseline);
    let mut impossible = 0;
    let mut index = vec![0usize; axes.len()];
    for _ in 0..total {
        let mut c = Config::default();
        for ((k, values), &i) in axes.iter().zip(&index) {
            k.set(&mut c, values[i]);
        }
        if is_impossible(&c) {
            impossible += 1;
        } else if c != baseline {
            configs.push(c);
        }
        // Advance the odometer: the last knob fastest.
        for d in (0..axes.len()).rev() {
            index[d] += 1;
            if index[d] < axes[d].1.len() {
                break;
            }
            index[d] = 0;
        }
    }
    // A grid asked for whose every combination is impossible would run the
    // baseline alone and look like an answer.
    if total > 0 && impossible == total {
        return Err(SpecError::AllImpossible(total));
    }
    Ok(Grid {
        configs,
        axes,
        impossible,
    })
}

/// A label that tells every config of a grid apart: [`Config::label`], with
/// the fractions written in full when two decimals would round them
/// (`0.825/0.5` rather than `0.83/0.50`). Defined with the config
/// ([`Config::exact_label`]), which the policies name their setups by too.
pub fn label(c: &Config) -> String {
    c.exact_label()
}
