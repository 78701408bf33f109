//! Showing transcripts to people: the readable rendering of a session or of
//! the working history at one request, its filters, its statistics, the
//! session listing, and the terminal plumbing (colour, pager) they share.
//!
//! Everything here writes to a `Write` given by the caller and never reads
//! the environment except where a file says so (`color`, `pager`), so the
//! commands decide where output goes and the tests read it back.

pub(crate) mod args;
pub(crate) mod calls;
pub(crate) mod color;
pub mod csp;
pub(crate) mod list;
pub(crate) mod marks;
pub(crate) mod pager;
pub(crate) mod render;
pub(crate) mod select;
pub(crate) mod stats;
#[cfg(feature = "full")]
pub(crate) mod sweep_table;
pub(crate) mod text;
pub mod web;
