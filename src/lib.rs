//! smith-calibrate: replay smith's context compaction over recorded sessions
//! and measure what other thresholds would have done.
//!
//! The modules follow the data: [`transcript`] reads what smith recorded,
//! [`engine`] is smith's compaction to the byte, [`replay`] walks one session
//! through it, and the commands in [`commands`] put them to work.

// `replay --json` writes its summary with one `json!` of some fifty keys,
// in their order; the macro recurses once per key.
#![recursion_limit = "256"]
// Without the command line (`--no-default-features`, what the fuzz targets
// build), the crate is the reader, the engine and the replay they call; the
// rest is reached only from the commands.
#![cfg_attr(not(feature = "full"), allow(dead_code, unused_imports))]

// The tests inside the crate and the integration tests share their helpers
// (`test_support`), written against the crate's own name.
#[cfg(test)]
extern crate self as smith_calibrate;

pub mod calibrate;
pub mod commands;
pub mod cost;
pub mod engine;
#[cfg(test)]
mod error_style;
pub mod estimate;
#[cfg(feature = "full")]
pub mod export;
#[cfg(test)]
mod fn_length;
pub mod format;
pub mod import;
pub(crate) mod interrupt;
pub(crate) mod knob;
#[cfg(test)]
mod layering;
pub mod loss;
pub(crate) mod messages;
pub(crate) mod output;
pub mod policy;
#[cfg(test)]
mod quantile_tests;
pub mod recommend;
pub mod replay;
#[cfg(feature = "full")]
pub mod report;
pub(crate) mod screen;
pub mod stats;
pub mod sweep;
pub mod synth;
#[cfg(test)]
mod test_support;
pub(crate) mod time;
pub mod transcript;
pub mod view;
