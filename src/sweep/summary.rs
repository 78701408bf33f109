//! `summary.json` as one typed record: [`Summary`] is written by the sweep
//! (and by each shard, and by `merge`) and read back by `merge` and the
//! report through the same definition, as hyperfine's `BenchmarkResult` is
//! the one record every exporter serialises. A field renamed or retyped here
//! changes writer and readers together; no reader looks a field up by a JSON
//! pointer with a fallback of its own.
//!
//! The field order is the file's key order, and whole-number figures are
//! written as integers, so the file is the same byte for byte as when it was
//! built from `json!` objects. Decimals are read with Rust's own exact
//! parser ([`exact`]): serde_json's default one may land one ulp off a long
//! decimal such as `-0.4315801500000001`, and a record read back must write
//! the same bytes. (Its `float_roundtrip` feature would do the same for the
//! whole program, and change what `import` reads from other agents' logs.)

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::engine::Config;
use crate::estimate::Estimator;
use crate::policy::Policy;

use super::aggregate::Delta;
use super::columns::SCHEMA_VERSION;
use super::figures::{Kind, Metric, N};

/// What was swept (paths, sessions read and skipped, the grid's axes,
/// prices), the baseline, the best config by rank, and the Pareto front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`SCHEMA_VERSION`]: a reader refuses a file of another layout with
    /// a message that says so, rather than a missing field's.
    #[serde(deserialize_with = "schema_version")]
    pub schema_version: u32,
    /// The program and version that wrote it; shards of one sweep agree.
    pub(crate) tool: String,
    /// What was asked for: the PATHS, or the sessions directory.
    pub(crate) paths: Vec<String>,
    /// Sessions replayed.
    pub sessions: usize,
    /// Sessions that could not be read: `skipped.len()`.
    pub(crate) sessions_skipped: usize,
    pub(crate) skipped: Vec<super::run::Unreadable>,
    pub(crate) lines_skipped: usize,
    /// Bytes of transcript read.
    pub(crate) bytes: u64,
    /// Timing fields: they say how long and on how many threads, so they
    /// differ between two runs of the same sweep.
    #[serde(deserialize_with = "exact")]
    pub(crate) elapsed_seconds: f64,
    pub(crate) threads: usize,
    /// `--thrash-window`: the misfire figures' window.
    pub(crate) thrash_window: usize,
    pub grid: GridRecord,
    pub(crate) prices: PriceRecord,
    /// The figure configs were ranked by.
    pub rank_by: Metric,
    pub(crate) cost_model: CostModel,
    /// smith's defaults, without deltas (they are all zero).
    pub baseline: Option<ConfigRecord>,
    /// The config ranked first, with its deltas against the baseline.
    pub best: Option<ConfigRecord>,
    /// The Pareto front of price against results mangled, in rank order.
    pub(crate) pareto_front: Vec<FrontPoint>,
    /// How many rows replayed under the session's own ratio or overhead
    /// (`crate::calibrate::session`); null when every row ran at its
    /// config's.
    pub(crate) calibration: Option<CalibrationRecord>,
    /// What the token figures count ([`super::units`]).
    pub(crate) tokens: super::units::TokenUnits,
    /// Only in a shard's own summary (`summaries/shard=K/summary.json`):
    /// which shard, and what `merge` needs to rebuild the sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
}

impl Summary {
    /// The record as a JSON value, for [`crate::export::Export`] (which
    /// cannot name this type without a cycle between `export` and `sweep`).
    pub(crate) fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }
}

/// The text of a `summary.json` without the lines of its timing fields
/// ([`Summary::elapsed_seconds`], [`Summary::threads`]): what two runs of
/// the same sweep (one process or shards, paused or not) write alike, so
/// what they are compared by.
pub fn untimed(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let l = l.trim_start();
            !l.starts_with("\"elapsed_seconds\"") && !l.starts_with("\"threads\"")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rows (session × config) whose ratio or overhead the session chose,
/// by what it chose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CalibrationRecord {
    /// At the `context_ratio` the session saved.
    pub(crate) ratio_saved: usize,
    /// With the ratio learned request by request.
    pub(crate) ratio_learned: usize,
    /// With the overhead fitted on the session's own requests.
    pub(crate) overhead_fitted: usize,
}

impl CalibrationRecord {
    /// The counts of `rows`; `None` when none was chosen.
    pub(crate) fn of<'a>(
        rows: impl Iterator<Item = &'a Option<crate::engine::learn::Calibration>>,
    ) -> Option<CalibrationRecord> {
        use crate::engine::learn::{OverheadMode, RatioMode};
        let mut out = CalibrationRecord::default();
        for c in rows.flatten() {
            out.ratio_saved += (c.ratio_mode == RatioMode::Saved) as usize;
            out.ratio_learned += (c.ratio_mode == RatioMode::Learned) as usize;
            out.overhead_fitted += (c.overhead_mode == OverheadMode::Fitted) as usize;
        }
        (out != CalibrationRecord::default()).then_some(out)
    }

    /// The units of a sweep whose configs used `estimators`, whose rows
    /// chose their ratio and overhead as `calibration` counts.
    pub(crate) fn units(
        calibration: Option<&CalibrationRecord>,
        estimators: impl IntoIterator<Item = crate::estimate::Estimator>,
        baseline: super::plan::BaselineKind,
    ) -> super::units::TokenUnits {
        super::units::TokenUnits::of(
            estimators,
            calibration.is_some_and(|c| c.ratio_learned + c.ratio_saved > 0),
            calibration.is_some_and(|c| c.overhead_fitted > 0),
            baseline,
        )
    }

    /// What the rows ran under, for every output that shows the configs:
    /// a config's label names the ratio and overhead given to it, and these
    /// rows used the session's own instead.
    pub(crate) fn describe(&self, rows: usize) -> String {
        format!(
            "ratio and overhead: each session's own where the grid left them, not the config label's: of {rows} rows, {} at the ratio learned as smith learns it, {} at the ratio the session saved, {} with the overhead fitted on the session's requests",
            self.ratio_learned, self.ratio_saved, self.overhead_fitted
        )
    }

    /// Two counts added (the shards of one sweep).
    pub(crate) fn add(
        a: Option<CalibrationRecord>,
        b: Option<CalibrationRecord>,
    ) -> Option<CalibrationRecord> {
        match (a, b) {
            (Some(a), Some(b)) => Some(CalibrationRecord {
                ratio_saved: a.ratio_saved + b.ratio_saved,
                ratio_learned: a.ratio_learned + b.ratio_learned,
                overhead_fitted: a.overhead_fitted + b.overhead_fitted,
            }),
            (a, b) => a.or(b),
        }
    }
}

/// The grid and the policies swept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridRecord {
    /// The grid file, if one was given.
    pub(crate) file: Option<PathBuf>,
    /// smith's knobs that took more than their default, by field name.
    pub(crate) axes: Ordered<Vec<AxisValue>>,
    /// Configs of the whole sweep, every policy's.
    pub(crate) configs: usize,
    /// Configs of smith's own grid.
    pub(crate) smith_configs: usize,
    /// Combinations left out because their target was at or above their
    /// trigger.
    pub(crate) impossible_left_out: usize,
    /// The policies asked for.
    #[serde(deserialize_with = "parse_all")]
    pub policies: Vec<Policy>,
    /// The asked-for policies' knobs and their values, by field name.
    pub(crate) policy_axes: Ordered<Vec<AxisValue>>,
    /// What config 0 is: `smith` (its defaults or a user's config) or
    /// `recorded` (what the agents did).
    #[serde(default)]
    pub(crate) baseline: super::plan::BaselineKind,
}

/// A knob's value on an axis: integers as integers (`512`), fractions as
/// numbers with a point (`0.8`, `1.0`), as the knob's type says; names as
/// a list of strings.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum AxisValue {
    Int(i64),
    Float(f64),
    Names(Vec<String>),
    /// A word knob's value by name (the engine).
    Word(String),
}

impl AxisValue {
    /// `x` as an integer knob's value when `integer`, else as a fraction.
    pub(crate) fn new(x: f64, integer: bool) -> AxisValue {
        if integer {
            AxisValue::Int(x as i64)
        } else {
            AxisValue::Float(x)
        }
    }
}

impl AxisValue {
    /// The value as people read it: the word `knob` (a field or flag name)
    /// has for it (a window of `own`, a learned ratio), else as the file
    /// writes it.
    pub(crate) fn for_people(&self, knob: &str) -> String {
        let number = match self {
            AxisValue::Int(v) => Some(*v as f64),
            AxisValue::Float(v) => Some(*v),
            AxisValue::Names(_) | AxisValue::Word(_) => None,
        };
        let word = crate::engine::knobs::Knob::from_key(knob)
            .zip(number)
            .and_then(|(k, v)| k.word(v));
        match word {
            Some(w) => w.to_string(),
            None => self.to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for AxisValue {
    /// A number with a point or an exponent is a fraction, read exactly.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AxisValue, D::Error> {
        let raw = <Box<RawValue>>::deserialize(d)?;
        let text = raw.get();
        if text.starts_with('"') {
            serde_json::from_str(text)
                .map(AxisValue::Word)
                .map_err(|e| de::Error::custom(format!("{text} is not a name: {e}")))
        } else if text.starts_with('[') {
            serde_json::from_str(text)
                .map(AxisValue::Names)
                .map_err(|e| de::Error::custom(format!("{text} is not a list of names: {e}")))
        } else if text.contains(['.', 'e', 'E']) || text == "null" {
            number(text).map(AxisValue::Float)
        } else {
            text.parse()
                .map(AxisValue::Int)
                .map_err(|_| de::Error::custom(format!("{text} is not a number")))
        }
    }
}

impl fmt::Display for AxisValue {
    /// As the file writes it (`1.0`, not `1`); names comma-separated,
    /// `none` when there are none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxisValue::Names(n) if n.is_empty() => f.write_str("none"),
            AxisValue::Names(n) => f.write_str(&n.join(", ")),
            AxisValue::Int(v) => write!(f, "{v}"),
            AxisValue::Word(w) => f.write_str(w),
            AxisValue::Float(v) => match serde_json::Number::from_f64(*v) {
                Some(n) => write!(f, "{n}"),
                None => f.write_str("null"),
            },
        }
    }
}

/// The flat prices of the sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PriceRecord {
    #[serde(deserialize_with = "exact")]
    pub(crate) input: f64,
    #[serde(deserialize_with = "exact")]
    pub(crate) cache_write: f64,
    #[serde(deserialize_with = "exact")]
    pub(crate) cache_read: f64,
    /// Always [`PRICE_UNIT`].
    pub(crate) unit: String,
    /// What the prices stood on: `--price`, else each request's model's
    /// row (the three figures above are the flat default of sessions that
    /// name no model).
    #[serde(default)]
    pub(crate) used: super::prices_used::PricesUsed,
}

/// The unit of [`PriceRecord`]'s prices.
pub(crate) const PRICE_UNIT: &str = "USD per million tokens";

/// What the price rests on, from the figures alone so that merged shards
/// write the same (see `cost_note`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CostModel {
    /// The baseline's `ttl_applied`: sessions whose records gave times.
    #[serde(deserialize_with = "exact")]
    pub(crate) sessions_with_lifetime: f64,
    pub(crate) note: String,
}

/// A config's knobs, label, budget and totals: the view of a
/// [`super::aggregate::ConfigSummary`] that `summary.json` records for the
/// baseline and the best config (made by `tables`, from the summary and
/// nothing else). A type of its own because the file's shape is not the
/// summary's: the policy's knobs as the policy module writes them, the
/// budget spelled out, totals keyed by figure name, deltas for the best
/// only, and no statistics or intervals (those are `configs.*` columns);
/// and the record must read back and write the same bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigRecord {
    /// Index into the grid's configs.
    pub(crate) index: usize,
    pub(crate) label: String,
    #[serde(deserialize_with = "parse")]
    pub(crate) policy: Policy,
    /// smith's knobs (for another policy only the window, overhead, ratio
    /// and summary size mean something).
    pub(crate) config: Config,
    /// The policy's own knobs as the policy module serialises them; kept as
    /// written, since nothing reads them back.
    pub(crate) policy_knobs: serde_json::Value,
    /// Where the config's policy acts and what it aims at, in charged
    /// tokens; `null` where each session's own window sets them.
    pub(crate) trigger_tokens: Option<i64>,
    pub(crate) target_tokens: Option<i64>,
    pub rank: usize,
    pub(crate) pareto: bool,
    pub(crate) totals: Totals,
    /// How text became tokens.
    #[serde(deserialize_with = "parse")]
    pub(crate) estimator: Estimator,
    /// Only for `best`: the change of every rankable figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_vs_baseline: Option<Deltas>,
}

/// A point of the Pareto front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct FrontPoint {
    pub(crate) label: String,
    #[serde(deserialize_with = "parse")]
    pub(crate) policy: Policy,
    #[serde(deserialize_with = "exact")]
    pub(crate) price: f64,
    pub(crate) results_mangled: i64,
    pub(crate) needed_again: i64,
}

/// Where a shard stands in the whole sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// `K` of `--shard K/N`.
    pub index: u32,
    /// `N`.
    pub count: u32,
    /// How sessions are given to shards, for people.
    pub(crate) assignment: String,
    /// Sessions the whole sweep lists, over all shards.
    pub(crate) listed: usize,
    /// The position in the whole sweep of each of `skipped`.
    pub(crate) skipped_ordinals: Vec<u64>,
    pub(crate) rebuild: Rebuild,
}

/// The grid, policies and prices as text that parses back to the same
/// values, as the flags would give them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Rebuild {
    /// smith's knobs by flag: `"compact-at": "0.6,0.8"`.
    pub(crate) knobs: Ordered<String>,
    pub(crate) policies: Vec<String>,
    /// The asked-for policies' knobs by flag.
    pub(crate) policy_knobs: Ordered<String>,
    /// `input,cache_write,cache_read`.
    pub(crate) prices: String,
    /// What config 0 is.
    #[serde(default)]
    pub(crate) baseline: super::plan::BaselineKind,
    /// smith's config at the head of the grid where it is not smith's
    /// defaults under the grid's calibration (a user's configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) smith_baseline: Option<crate::engine::Config>,
}

/// Every figure's total, written as an object keyed by figure name in
/// column order: counts as integers, prices as decimals.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Totals(pub [f64; N]);

impl Serialize for Totals {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(N))?;
        for m in Metric::ALL {
            let v = self.0[m.index()];
            match m.kind() {
                Kind::Price | Kind::Expected => map.serialize_entry(m.name(), &v)?,
                Kind::Count | Kind::Peak => map.serialize_entry(m.name(), &(v as i64))?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Totals {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Totals, D::Error> {
        let figures: Vec<(Metric, Box<RawValue>)> = d.deserialize_map(FigureMap::new())?;
        let mut totals = [f64::NAN; N];
        let mut seen = [false; N];
        for (m, v) in figures {
            totals[m.index()] = number(v.get())?;
            seen[m.index()] = true;
        }
        match Metric::ALL.into_iter().find(|m| !seen[m.index()]) {
            Some(m) => Err(de::Error::custom(format!("totals: no {m}"))),
            None => Ok(Totals(totals)),
        }
    }
}

/// The change of every rankable figure ([`Metric::delta`]) against the
/// baseline, keyed by figure name in column order.
#[derive(Clone, Debug, PartialEq)]
pub struct Deltas(pub(crate) Vec<(Metric, Delta)>);

impl Serialize for Deltas {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (m, d) in &self.0 {
            map.serialize_entry(m.name(), d)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Deltas {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Deltas, D::Error> {
        /// [`Delta`] as written, read exactly.
        #[derive(Deserialize)]
        struct Written {
            #[serde(deserialize_with = "exact")]
            abs: f64,
            #[serde(deserialize_with = "exact_or_null")]
            pct: Option<f64>,
        }
        let deltas: Vec<(Metric, Written)> = d.deserialize_map(FigureMap::new())?;
        Ok(Deltas(
            deltas
                .into_iter()
                .map(|(m, w)| {
                    (
                        m,
                        Delta {
                            abs: w.abs,
                            pct: w.pct,
                        },
                    )
                })
                .collect(),
        ))
    }
}

/// Reads an object keyed by figure name, in the file's order; a key that
/// names no figure is an error.
struct FigureMap<V>(std::marker::PhantomData<V>);

impl<V> FigureMap<V> {
    fn new() -> Self {
        FigureMap(std::marker::PhantomData)
    }
}

impl<'de, V: Deserialize<'de>> Visitor<'de> for FigureMap<V> {
    type Value = Vec<(Metric, V)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object keyed by figure name")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((name, v)) = map.next_entry::<String, V>()? {
            let m = Metric::from_name(&name)
                .ok_or_else(|| de::Error::custom(format!("no figure named {name}")))?;
            out.push((m, v));
        }
        Ok(out)
    }
}

/// A figure is written and read by its column name.
impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let name = String::deserialize(d)?;
        Metric::from_name(&name).ok_or_else(|| de::Error::custom(format!("no figure named {name}")))
    }
}

/// An object whose keys keep the order they were written in (the axes, the
/// flags of a rebuild), as a list of pairs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ordered<V>(pub(crate) Vec<(String, V)>);

impl<V> Ordered<V> {
    /// The value under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<V: Serialize> Serialize for Ordered<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Ordered<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Ordered<V>, D::Error> {
        struct Pairs<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for Pairs<V> {
            type Value = Vec<(String, V)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = map.next_entry()? {
                    out.push(pair);
                }
                Ok(out)
            }
        }
        d.deserialize_map(Pairs(std::marker::PhantomData))
            .map(Ordered)
    }
}

/// A JSON number (or `null`, which serde_json writes for a NaN) as the
/// `f64` it was written from, by Rust's exact parser.
fn number<E: de::Error>(text: &str) -> Result<f64, E> {
    if text == "null" {
        return Ok(f64::NAN);
    }
    text.parse()
        .map_err(|_| E::custom(format!("{text} is not a number")))
}

/// A decimal field read exactly (see the module's note).
fn exact<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    number(<Box<RawValue>>::deserialize(d)?.get())
}

/// [`exact`] where `null` means none (a change from nothing has no
/// percentage).
fn exact_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let raw = <Box<RawValue>>::deserialize(d)?;
    match raw.get() {
        "null" => Ok(None),
        text => number(text).map(Some),
    }
}

/// A name (policy, estimator) read back through the type's own parser: the
/// types serialise to their names but the policy and estimator modules
/// give them no `Deserialize`.
fn parse<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: FromStr<Err: fmt::Display>,
    D: Deserializer<'de>,
{
    String::deserialize(d)?.parse().map_err(de::Error::custom)
}

/// The schema version, refused unless it is this version's
/// [`SCHEMA_VERSION`].
fn schema_version<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = u32::deserialize(d)?;
    if v == SCHEMA_VERSION {
        Ok(v)
    } else {
        Err(de::Error::custom(format!(
            "schema_version {v}, but this version of smith-calibrate reads {SCHEMA_VERSION}"
        )))
    }
}

/// [`parse`] for a list.
fn parse_all<'de, T, D>(d: D) -> Result<Vec<T>, D::Error>
where
    T: FromStr<Err: fmt::Display>,
    D: Deserializer<'de>,
{
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|s| s.parse().map_err(de::Error::custom))
        .collect()
}
