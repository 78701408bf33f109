//! The sweep: many sessions × many configs.
//!
//! [`grid`] turns lists and ranges of knob values into configs, [`run`]
//! replays every session under each of them in parallel (each session read
//! once), priced by [`crate::cost`], [`aggregate`] sums it per
//! config against the baseline, [`bootstrap`] says how sure each change is,
//! [`pareto`] finds the honest trade-offs,
//! [`plan`] lays smith's grid and the other policies' configs side by side, and
//! `tables` lays it all out for `export`. [`shard`] splits a sweep over
//! machines, `dist` writes a shard's outputs, `merge` joins the shards'
//! outputs back into one sweep's, and [`journal`] keeps finished sessions
//! on disk for `--resume`. `job` is a whole sweep described without a
//! command line: planned, run, written.

pub(crate) mod account;
pub mod aggregate;
pub mod bootstrap;
pub mod columns;
pub(crate) mod cost_note;
#[cfg(feature = "full")]
pub mod dist;
pub(crate) mod estimators;
pub mod figures;
pub mod grid;
#[cfg(test)]
mod grid_tests;
#[cfg(feature = "full")]
pub(crate) mod job;
pub mod journal;
#[cfg(feature = "full")]
pub mod merge;
pub(crate) mod pareto;
pub mod plan;
pub mod prices_used;
pub mod run;
pub mod shard;
pub mod summary;
#[cfg(feature = "full")]
pub mod tables;
pub mod units;

/// The files of a sweep's output folder: written here (and by `export`),
/// read back by `merge` and the report.
pub(crate) const CONFIGS_FILE: &str = "configs.parquet";
pub(crate) const SESSIONS_FILE: &str = "sessions.parquet";
pub(crate) const SUMMARY_FILE: &str = "summary.json";

pub use aggregate::{summarize, ConfigSummary};
pub use grid::{GridSpec, Knob};
pub use run::{Options, Row, Sweep};
