//! smith-calibrate: replay smith's context compaction over recorded sessions
//! and measure what other thresholds would have done.
//!
//! The modules follow the data: [`transcript`] reads what smith recorded,
//! [`engine`] is smith's compaction to the byte, [`replay`] walks one session
//! through it, and the commands in [`commands`] put them to work.

// `replay --json` writes its summary with one `json!` of some fifty keys,
// in their order; the macro recurses once per key.
#![recursion_limit = "256"]

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
pub mod messages;
pub(crate) mod output;
pub mod policy;
pub mod recommend;
pub mod replay;
#[cfg(feature = "full")]
pub mod report;
pub mod screen;
pub mod stats;
pub mod sweep;
pub mod synth;
pub(crate) mod time;
pub mod transcript;
pub mod view;
