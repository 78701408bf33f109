//! The stages of compaction, cheapest and least lossy first. Each walks its
//! candidates in a fixed order, stops as soon as the history fits the raw
//! allowance (checked before each candidate), and returns whether it changed
//! anything.

pub mod attachments;
pub mod duplicates;
pub mod summarize;
pub mod thinking;
pub mod truncate;

use super::{Edit, Effects};

/// What every stage reports into.
pub struct Ledger<'a> {
    pub effects: &'a mut Effects,
    pub edits: &'a mut Vec<Edit>,
}
