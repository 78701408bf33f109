//! The stages of compaction, cheapest and least lossy first. Each walks its
//! candidates in a fixed order, stops as soon as the history fits the raw
//! allowance (checked before each candidate), and returns whether it changed
//! anything. Each records what it rewrote into a
//! [`crate::engine::record::Recorder`].

pub mod attachments;
pub mod duplicates;
pub mod summarize;
pub mod thinking;
pub mod truncate;
